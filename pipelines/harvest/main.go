// Command harvest labels sentence pairs by the similarity of the contexts
// they fit (Sun et al., TACL 2022): retrieval -> discriminative rerank ->
// Eq. 3 scoring -> diversity-constrained context sets -> pair labels
// (Eq. 4) -> Parquet.
//
//	go run ./pipelines/harvest --corpus=out/corpus --model=out/model --output=out/harvest
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/ctxsim/ctxsim/pipelines/internal/beamjob"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/pipelines/internal/settings"
	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/transforms/harvest"
	"github.com/ctxsim/ctxsim/transforms/index"
	"github.com/ctxsim/ctxsim/transforms/ingest"
	"github.com/ctxsim/ctxsim/transforms/parquetio"
)

const usage = `
harvest: corpus index + models -> labeled sentence pairs (Parquet).

For each sampled corpus sentence: retrieve the top --top_k chunks (its own
chunks excluded), expand them into contexts, keep the --rerank best by the
coherence model, score those with Eq. 3, and select C_s (--set_size, at most
one context per chunk, Jaccard of c_{i-1} < 0.5). Pairs are sampled from the
sentences' retrieval neighbourhoods, stratified by link rank, plus random
pairs; each is labelled with Eq. 4 over C_s1 + C_s2.

Writes under --output:
  pairs/          schemas.LabeledPair, split train/dev/test 98/1/1 by pair hash
  context_sets/   schemas.ContextSet, for audit
  dead_letters/   sentences without contexts, pairs without context sets
  summary.json    counts, label histogram, time and model calls per stage,
                  CPU seconds per labeled pair and the projection to 100M
  report.html     the labels, their parts and strata, context sets with
                  their text, and the cost, for a person to read`

var (
	corpusDir  = flag.String("corpus", "", "Output directory of the index job: sets --index, --chunks and --sentences.")
	indexDir   = flag.String("index", "", "Index directory, local or gs:// (default <corpus>/index).")
	chunks     = flag.String("chunks", "", "Chunks table glob (default <corpus>/chunks/*.parquet).")
	sentences  = flag.String("sentences", "", "Sentences table glob (default <corpus>/sentences/*.parquet).")
	model      = flag.String("model", "", "Model directory from the train job, local or gs:// (required).")
	output     = flag.String("output", "", "Output directory (required).")
	flags      = settings.Register(flag.CommandLine, "default")
	sample     = flag.Float64("sample", 1, "Fraction of corpus sentences to label, chosen by a hash of their IDs.")
	sampleFrom = flag.Float64("sample_from", 0, "Start of the sample's window of ID hashes: the sentences whose hash, as a fraction, lies in [sample_from, sample_from+sample). Runs with windows that do not overlap label disjoint sentences.")
	minWords   = flag.Int("min_words", 4, "Sentences with fewer words are not labelled.")
	quota      = flag.String("pair_quota", "near:1,mid:1,far:1,random:1", "Pairs each sentence owns per stratum.")
	neighbours = flag.Int("pair_neighbours", 200, "Top hits of a sentence that link it to other sentences.")
	seed       = flag.Uint64("seed", 1, "Seed of the pair sampler and the random-context ablation.")
	blas       = flag.String("blas", "go", "Matrix multiply: go (batch-invariant, so runs are reproducible bit for bit) or openblas.")
	shards     = flag.Int("parquet_shards", 4, "Files per Parquet table.")
	show       = flag.Int("print", 5, "Print this many labeled pairs after the run (local output only).")
)

func main() {
	beamjob.Init(usage)
	jobrun.Require("model", "output")
	jobrun.CheckRanges(jobrun.Range{Name: "sample", Lo: 0, Hi: 1, Open: true}, jobrun.Range{Name: "sample_from", Lo: 0, Hi: 1 - *sample},
		jobrun.Range{Name: "parquet_shards", Lo: 1, Hi: 1000},
		jobrun.Range{Name: "min_words", Lo: 0, Hi: 1000}, jobrun.Range{Name: "pair_neighbours", Lo: 1, Hi: 1e6})
	jobrun.Lease("harvest", *output)
	defer jobrun.Release()
	// The summary commits the run's tables: an earlier run's must not stay
	// beside tables this run rewrites, should it stop midway.
	if err := jobrun.Uncommit(context.Background(), *output); err != nil {
		jobrun.Fail(err)
	}
	if *corpusDir != "" {
		setDefault(indexDir, storage.Join(*corpusDir, "index"))
		setDefault(chunks, storage.Join(*corpusDir, "chunks/*.parquet"))
		setDefault(sentences, storage.Join(*corpusDir, "sentences/*.parquet"))
	}
	if *indexDir == "" || *chunks == "" || *sentences == "" {
		jobrun.Fail(fmt.Errorf("give --corpus, or all of --index, --chunks and --sentences"))
	}
	st, err := flags.Settings()
	if err != nil {
		jobrun.Fail(err)
	}
	q, err := harvest.ParseQuota(*quota)
	if err != nil {
		jobrun.Fail(err)
	}
	pc := harvest.DefaultPairConfig()
	pc.Seed, pc.Quota, pc.Neighbours = *seed, q, *neighbours
	// Fail before the job starts if the index or the models cannot be
	// opened (a remote index is checked by its metadata, not fetched).
	ctx := context.Background()
	indexFP, err := checkIndex(ctx, *indexDir)
	if err != nil {
		jobrun.Fail(err)
	}
	models, err := resources.LoadModels(ctx, *model)
	if err != nil {
		jobrun.Fail(err)
	}
	if err := models.Check(st); err != nil {
		jobrun.Fail(err)
	}
	absIndex, absModel := absGlob(*indexDir), absGlob(*model)
	cfg := harvest.Config{Paths: resources.Paths{Chunks: absGlob(*chunks), Models: absModel, Index: absIndex},
		Settings: st, Seed: *seed, BLAS: *blas}
	lcfg := harvest.LabelConfig{Config: cfg, ModelFingerprint: models.Fingerprint, IndexFingerprint: indexFP}

	start, cpu0 := time.Now(), harvest.ProcessCPUSeconds()
	p, s := beam.NewPipelineWithRoot()
	sents := parquetio.Read(s, absGlob(*sentences), reflect.TypeOf(schemas.Sentence{}))
	sents = ingest.SampleWindow(s, *sampleFrom, *sample, harvest.FilterSentences(s, *minWords, sents))
	hits, rdead := index.Retrieve(s, index.RetrieveConfig{IndexDir: absIndex, K: st.TopK}, sents)
	sets, cdead := harvest.ContextSets(s, cfg, hits)
	pairs := harvest.SamplePairs(s, pc, sents, hits)
	labeled, ldead := harvest.Label(s, lcfg, pairs, sets)
	parquetio.Write(s, parquetio.Config{Dir: *output + "/pairs", NumShards: *shards}, labeled)
	parquetio.Write(s, parquetio.Config{Dir: *output + "/context_sets", NumShards: *shards}, sets)
	parquetio.Write(s, parquetio.Config{Dir: *output + "/dead_letters", NumShards: 1}, beam.Flatten(s, rdead, cdead, ldead))

	c, err := beamjob.Run(ctx, "harvest", p)
	if err != nil {
		jobrun.Fail(err)
	}
	if jobrun.NotRun() {
		return
	}
	fmt.Println("counters:")
	c.Print(os.Stdout, "harvest", "retrieve", "parquetio")
	jobrun.CheckNotEmpty(c, "harvest/pairs_labeled", "no pair was labeled (see dead_letters and the counters above)")
	sum := harvest.Summarize(c, st, pc, models.Fingerprint, indexFP, jobrun.RunnerName(),
		time.Since(start).Seconds(), harvest.ProcessCPUSeconds()-cpu0)
	sum.RunID = storage.RunID()
	b, _ := json.MarshalIndent(sum, "", "  ")
	if err := storage.WriteFile(ctx, storage.Join(*output, "summary.json"), append(b, '\n')); err != nil {
		jobrun.Fail(err)
	}
	fmt.Printf("harvest: %d pairs labeled (%s) in %s; %.3f CPU seconds and %.0f generative evaluations per pair\n",
		sum.Labeled, sum.StrataLine(), time.Since(start).Round(time.Second), sum.CPUSecondsPerPair, sum.GenEvalsPerPair)
	fmt.Printf("harvest: pairs in %s/pairs, context sets in %s/context_sets, summary in %s/summary.json\n",
		*output, *output, *output)
	reportPath, err := jobrun.WriteHarvestReport(ctx, "ctxsim harvest: "+*output, *output, *chunks, b, nil)
	if err != nil {
		jobrun.Fail(err)
	}
	fmt.Printf("harvest: report in %s\n", reportPath)
	if *show > 0 && !storage.IsRemote(*output) {
		if err := printPairs(*output+"/pairs", *show); err != nil {
			jobrun.Fail(err)
		}
	}
}

// printPairs prints n labeled pairs spread over the range of labels: the
// highest, the lowest, and the quantiles between (with 5, the quartiles).
func printPairs(dir string, n int) error {
	ps, err := storage.ReadTable[schemas.LabeledPair](context.Background(), dir)
	if err != nil {
		return err
	}
	if len(ps) == 0 {
		fmt.Println("no pairs were labeled")
		return nil
	}
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].Label != ps[j].Label {
			return ps[i].Label > ps[j].Label
		}
		return ps[i].PairID < ps[j].PairID
	})
	n = min(n, len(ps))
	fmt.Printf("\n%d labeled pairs; %d examples from the highest label to the lowest (quantiles of the label):\n", len(ps), n)
	for k := range n {
		i := 0
		if n > 1 {
			i = k * (len(ps) - 1) / (n - 1)
		}
		p := ps[i]
		q := 100 * (1 - float64(i)/float64(max(len(ps)-1, 1)))
		fmt.Printf("\n  label %+.4f  (quantile %.0f%%; Eq. 4 %+.3f, TF-IDF %.3f, f(s1)·f(s2) %+.3f; %s, %s, |C| = %d)\n    1: %s\n    2: %s\n",
			p.Label, q, p.LabelContext, p.LabelLexical, p.LabelEmbed, p.Stratum, p.Split,
			p.NumContexts, clip(p.Sentence1, 200), clip(p.Sentence2, 200))
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + " …"
}

// checkIndex returns the fingerprint of the index in dir after checking
// that it opens; a remote index is checked by its metadata only, so that
// submitting a job does not copy the index to the submitting machine.
func checkIndex(ctx context.Context, dir string) (string, error) {
	if storage.IsRemote(dir) {
		m, err := retrieval.ReadMetaAt(ctx, dir)
		if err != nil {
			return "", err
		}
		return m.ID(), nil
	}
	ix, err := retrieval.Open(dir)
	if err != nil {
		return "", err
	}
	defer ix.Close()
	return ix.Meta.ID(), nil
}

func setDefault(p *string, v string) {
	if *p == "" {
		*p = v
	}
}

// absGlob makes a local glob absolute, so workers started elsewhere find
// it; remote globs are returned as they are.
func absGlob(g string) string {
	if strings.Contains(g, "://") {
		return g
	}
	a, err := filepath.Abs(g)
	if err != nil {
		return g
	}
	return a
}
