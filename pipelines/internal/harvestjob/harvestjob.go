// Package harvestjob is bin/harvest: corpus index + models -> labeled
// sentence pairs (Sun et al., TACL 2022): retrieval -> rerank -> Eq. 3
// scoring -> diversity-constrained context sets -> pair labels -> Parquet.
package harvestjob

import (
	"context"
	"flag"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/ctxsim/ctxsim/pipelines/internal/beamjob"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/pipelines/internal/nanjson"
	"github.com/ctxsim/ctxsim/pipelines/internal/settings"
	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/gen"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/transforms/harvest"
	"github.com/ctxsim/ctxsim/transforms/parquetio"
)

const Usage = `
harvest: corpus index + models -> labeled sentence pairs (Parquet).

For each sampled corpus sentence (--sample; default all of them): retrieve
the top --top_k chunks (its own chunks excluded), expand them into contexts,
keep the --rerank best by --rerank_by (by default ctx, the contrastive
context model; disc, the coherence model, in the paper presets), score those
with Eq. 3 (--lambda), and select C_s (--set_size, at most one context per
chunk, Jaccard of c_{i-1} < 0.5). Pairs are sampled from the sentences'
retrieval neighbourhoods, stratified by link rank, plus random pairs; each
is labelled by --labeler over C_s1 + C_s2: by default aligned, (8 x the
word alignment of the two sentences + Eq. 4 read as zwhite + the context
model's sentence cosine)/10; origin, Eq. 4 alone, is the paper's. The
default, --preset=default, works at the paper's depth (top_k 20000);
--preset=small or demo is faster.

Writes under --output:
  pairs/          schemas.LabeledPair, split train/dev/test 98/1/1 by pair hash
  export/train/, export/dev/, export/test/
                  the pairs for training, one table per split, with exactly
                  the columns sentence1, sentence2 and score (float32 in
                  [0, 1]): score = the label clipped to [0, 1] (the labels
                  are cosines; a negative one, contexts that disagree, is
                  0). Load with Hugging Face datasets:
                  load_dataset("parquet", data_files={
                    "train": "OUT/export/train/*.parquet",
                    "validation": "OUT/export/dev/*.parquet",
                    "test": "OUT/export/test/*.parquet"})
  context_sets/   schemas.ContextSet, for audit
  dead_letters/   sentences without contexts, pairs without context sets
  summary.json    counts, label histogram, time and model calls per stage,
                  CPU seconds per labeled pair and the projection to 100M,
                  the export's pairs per split, and the provenance: inputs
                  and model as given, preset, settings, sample, seed,
                  --min_words, labeler, the tool's build, the command line
                  and the run ID (every Parquet file carries it too, in
                  its key/value metadata as ctxsim.provenance)
  report.html     the labels, their parts and strata, context sets with
                  their text, and the cost, for a person to read`

// Config is the harvest job's command line.
type Config struct {
	// Corpus is the index job's output directory: it sets Index, Chunks
	// and Sentences where they are empty.
	Corpus, Index, Chunks, Sentences string
	Model, Output                    string
	// Vectors is a directory of stored sentence vectors (bin/encode):
	// empty means <corpus>/vectors if it holds the models' vectors, "none"
	// means none.
	Vectors string
	// MapCorpus has the workers keep the corpus in memory maps
	// (--map_corpus, resources.Paths.Mapped).
	MapCorpus bool
	// Method is the harvest's method, sampling and seed (settings.Harvest).
	Method settings.Harvest
	// Shards is the files per Parquet table; Print the labeled pairs
	// printed after the run (local output only).
	Shards, Print int
	// Waves is the number of pipelines the harvest labels in, one after
	// another, each labeling the pairs owned by about 1/Waves of the
	// sentences (harvest.Wave), after one pipeline that retrieves them
	// all: a runner that holds every element in memory (Prism) then holds
	// one wave's pairs.
	Waves int
	// CorpusParts splits the corpus into this many parts by index shard,
	// each loaded by its own pipelines in turn (see parts.go).
	CorpusParts int

	flags *settings.HarvestFlags
}

// Register adds the job's flags to fs, bound to c; Resolve reads the
// method flags after parsing.
func (c *Config) Register(fs *flag.FlagSet) {
	fs.StringVar(&c.Corpus, "corpus", "", "Output directory of the index job: sets --index, --chunks and --sentences.")
	fs.StringVar(&c.Index, "index", "", "Index directory, local or gs:// (default <corpus>/index).")
	fs.StringVar(&c.Chunks, "chunks", "", "Chunks table glob (default <corpus>/chunks/*.parquet).")
	fs.StringVar(&c.Sentences, "sentences", "", "Sentences table glob (default <corpus>/sentences/*.parquet).")
	fs.StringVar(&c.Model, "model", "", "Model directory from the train job, local or gs:// (required, except with --labeler=lexical).")
	fs.StringVar(&c.Output, "output", "", "Output directory (required).")
	fs.BoolVar(&c.MapCorpus, "map_corpus", false, "Workers keep the stored sentence vectors and the chunk store's texts and IDs in memory maps of local files (under $CTXSIM_CACHE_DIR, on disk, not tmpfs) instead of the heap: "+
		"page cache the kernel fills as they are read and can drop, so a worker's own memory grows far less with the corpus (at 91M words, 1.5 GiB of heap instead of 5.7). The labels are the same.")
	fs.StringVar(&c.Vectors, "vectors", "", "Stored sentence vectors from bin/encode, local or gs:// (default <corpus>/vectors when it holds the models' vectors; none: compute them all in the workers).")
	c.flags = settings.RegisterHarvest(fs)
	fs.IntVar(&c.Shards, "parquet_shards", 4, "Files per Parquet table.")
	fs.IntVar(&c.Print, "print", 5, "Print this many labeled pairs after the run (local output only).")
	fs.IntVar(&c.CorpusParts, "corpus_parts", 1, "Split the corpus into this many parts by index shard (at most the index's shards) and run the context sets and the labels as pipelines that each load one part (its chunks, their vectors and its shards), one after another, so that a worker holds about 1/parts of the corpus (a sentence whose chunks lie in several parts is held by each). "+
		"The context sets are those of one pipeline over the whole corpus, and the labels too but for the order Eq. 4's sums are added in. Runs in waves (--waves, default 1), under <output>/_waves; a run stopped midway is resumed by the same command. Labelers that build context sets only; not with --map_corpus.")
	fs.IntVar(&c.Waves, "waves", 1, "Label in this many pipelines in turn, each labeling the pairs owned by about 1/waves of the sentences, so that Prism holds one wave's pairs in memory rather than all; the sentences are retrieved, and their context sets built, once, before the first wave, into <output>/_waves (removed at the end); a run stopped midway is resumed by the same command.")
}

// Resolve parses the method flags into c.Method and fills the corpus
// paths from Corpus.
func (c *Config) Resolve() error {
	if c.flags != nil {
		h, err := c.flags.Harvest()
		if err != nil {
			return err
		}
		c.Method = h
	}
	if c.Corpus != "" {
		setDefault(&c.Index, storage.Join(c.Corpus, "index"))
		setDefault(&c.Chunks, storage.Join(c.Corpus, "chunks/*.parquet"))
		setDefault(&c.Sentences, storage.Join(c.Corpus, "sentences/*.parquet"))
	}
	if c.Index == "" || c.Chunks == "" || c.Sentences == "" {
		return fmt.Errorf("give --corpus, or all of --index, --chunks and --sentences")
	}
	if c.Model == "" && c.Method.Method.NeedsContexts() {
		return fmt.Errorf("--model is required (only --labeler=%s labels without models)", method.LabelerLexical)
	}
	if c.Waves > 1 || c.CorpusParts > 1 {
		if jobrun.NotRun() {
			return fmt.Errorf("--waves runs its pipelines one after another from this process: it cannot be only submitted or built (--dry_run, --template_location, --async); neither can --corpus_parts")
		}
	}
	return nil
}

// Ranges are the bounds of the job's numeric flags.
func (c *Config) Ranges() []jobrun.Range {
	return append(c.flags.Ranges(), jobrun.Range{Name: "parquet_shards", Lo: 1, Hi: 1000}, jobrun.Range{Name: "waves", Lo: 1, Hi: 1000}, jobrun.Range{Name: "corpus_parts", Lo: 1, Hi: 1000})
}

// Run runs the harvest: it checks that the index and the models open,
// runs the pipeline, and writes the summary and the report (the summary
// last: it commits the output).
func Run(ctx context.Context, c Config) error {
	// The summary commits the run's tables: an earlier run's must not stay
	// beside tables this run rewrites, should it stop midway.
	if err := jobrun.Uncommit(ctx, c.Output); err != nil {
		return err
	}
	c.warnBefore(ctx)
	spec, err := Prepare(ctx, c.Method, c.Model, c.Index, c.Chunks, c.vectorsRoot())
	if err != nil {
		return err
	}
	spec.Paths.Mapped = c.MapCorpus
	parts := max(c.CorpusParts, 1)
	if parts > 1 {
		if err := checkParts(ctx, spec, parts); err != nil {
			return err
		}
	}
	start, cpu0 := time.Now(), harvest.ProcessCPUSeconds()
	waves := max(c.Waves, 1)
	counters := jobrun.Counters{}
	run := resumed{runID: storage.RunID()}
	prov := c.provenance(spec)
	if waves == 1 && parts == 1 {
		prov.RunID = run.runID
		meta, err := prov.Metadata()
		if err != nil {
			return err
		}
		p, s := beam.NewPipelineWithRoot()
		sents := parquetio.Read(s, absGlob(c.Sentences), reflect.TypeOf(schemas.Sentence{}))
		harvest.Harvest(s, spec, sents, nil).Write(s, c.Output, c.Shards, meta)
		if counters, err = beamjob.Run(ctx, "harvest", p); err != nil || jobrun.NotRun() {
			return err
		}
	} else if run, err = c.runWaves(ctx, spec, waves, parts, counters, start, prov); err != nil {
		return err
	}
	fmt.Println("counters:")
	counters.Print(os.Stdout, "harvest", "retrieve", "parquetio")
	if err := jobrun.NotEmpty(counters, "harvest/pairs_labeled", "no pair was labeled (see dead_letters and the counters above)"); err != nil {
		return err
	}
	sum := harvest.Summarize(counters, spec.Settings, spec.Pairs, spec.ModelFingerprint, spec.IndexFingerprint, jobrun.RunnerName(),
		time.Since(start).Seconds()+run.seconds, harvest.ProcessCPUSeconds()-cpu0+run.cpu)
	sum.RunID = run.runID
	prov.RunID = run.runID
	sum.Provenance = &prov
	sum.Waves = waves
	sum.WavesResumed = run.waves
	sum.CorpusParts = parts
	b, err := WriteSummary(ctx, c.Output, sum)
	if err != nil {
		return err
	}
	if waves > 1 || parts > 1 {
		if err := storage.RemoveAll(ctx, storage.Join(c.Output, wavesDir)); err != nil {
			return err
		}
	}
	fmt.Printf("harvest: %d pairs labeled (%s) in %s; %.3g CPU seconds and %.0f generative evaluations per pair\n",
		sum.Labeled, sum.StrataLine(), time.Since(start).Round(time.Second), sum.CPUSecondsPerPair, sum.GenEvalsPerPair)
	fmt.Printf("harvest: pairs in %s/pairs, context sets in %s/context_sets, summary in %s/summary.json\n",
		c.Output, c.Output, c.Output)
	printExport(c.Output, sum.Export)
	reportPath, err := jobrun.WriteHarvestReportOf(ctx, "ctxsim harvest: "+c.Output, c.Output,
		jobrun.HarvestInputs{Index: c.Index, Chunks: c.Chunks, Model: c.Model}, b, nil)
	if err != nil {
		return err
	}
	fmt.Printf("harvest: report in %s\n", reportPath)
	c.warnAfter(sum)
	if c.Print > 0 && !storage.IsRemote(c.Output) {
		return printPairs(ctx, storage.Join(c.Output, "pairs"), c.Print)
	}
	return nil
}

// provenance is the harvest's provenance but for its run ID: spec's, with
// the inputs as given on the command line (local paths made absolute).
func (c *Config) provenance(spec harvest.Spec) harvest.Provenance {
	p := harvest.NewProvenance(spec, c.Method.Preset)
	p.Command = os.Args
	if c.Corpus != "" {
		p.Corpus = absGlob(c.Corpus)
	}
	if c.Model != "" {
		p.Model = absGlob(c.Model)
	}
	p.Sentences, p.Index, p.Chunks, p.Output = absGlob(c.Sentences), absGlob(c.Index), absGlob(c.Chunks), absGlob(c.Output)
	return p
}

// printExport says where the export for training is and how to load it.
func printExport(out string, e harvest.ExportSummary) {
	fmt.Printf("harvest: for training, %s/%s/{train,dev,test}/*.parquet (%d, %d and %d pairs; columns %s; %s)\n",
		out, harvest.ExportDir, e.Pairs["train"], e.Pairs["dev"], e.Pairs["test"], strings.Join(e.Columns, ", "), e.Score)
}

// vectorsRoot is where the harvest looks for stored sentence vectors, and
// whether it must find them there.
func (c *Config) vectorsRoot() Vectors {
	switch c.Vectors {
	case "none":
		return Vectors{}
	case "":
		if c.Corpus == "" {
			return Vectors{}
		}
		return Vectors{Root: storage.Join(c.Corpus, "vectors")}
	}
	return Vectors{Root: c.Vectors, Required: true}
}

// CheckPrecision refuses, before the job starts, a generative precision
// this machine's CPU cannot run when the workers run here
// (jobrun.LocalWorkers); remote workers check their own CPU.
func CheckPrecision(st method.Settings) error {
	if st.GenPrecision == "" || !jobrun.LocalWorkers() {
		return nil
	}
	if err := gen.CheckPrecision(st.GenPrecision); err != nil {
		return fmt.Errorf("--gen_precision: %w", err)
	}
	return nil
}

// Vectors is where a harvest's workers load stored sentence vectors from.
type Vectors struct {
	// Root is the encode job's output directory; empty for none.
	Root string
	// Required makes it an error to find none of the models' vectors
	// there; otherwise the workers then compute them all.
	Required bool
}

// Prepare checks, before a job starts, that the index and the models
// open and suit the method (a remote index is checked by its metadata,
// not fetched), and which of the models' sentence vectors are stored
// under vecs, and returns the harvest's spec.
func Prepare(ctx context.Context, h settings.Harvest, model, indexDir, chunks string, vecs Vectors) (harvest.Spec, error) {
	pc, err := PairConfig(h)
	if err != nil {
		return harvest.Spec{}, err
	}
	indexFP, err := checkIndex(ctx, indexDir)
	if err != nil {
		return harvest.Spec{}, err
	}
	if !h.Method.NeedsContexts() {
		// The lexical labeler reads no model: none is loaded, by the
		// workers either, and the labels carry no model fingerprint.
		paths := resources.Paths{Chunks: absGlob(chunks), Index: absGlob(indexDir)}
		return NewSpec(h, pc, paths, "", indexFP), nil
	}
	models, err := resources.LoadModels(ctx, model)
	if err != nil {
		return harvest.Spec{}, err
	}
	if err := models.Check(h.Method); err != nil {
		return harvest.Spec{}, err
	}
	if err := CheckPrecision(h.Method); err != nil {
		return harvest.Spec{}, err
	}
	paths := resources.Paths{Chunks: absGlob(chunks), Models: absGlob(model), Index: absGlob(indexDir)}
	if vecs.Root != "" {
		if paths.Vectors, err = storedVectors(ctx, models, model, vecs); err != nil {
			return harvest.Spec{}, err
		}
	}
	return NewSpec(h, pc, paths, models.Fingerprint, indexFP), nil
}

// storedVectors returns the vectors root the workers load from (empty when
// it holds none of the models' vectors and they need not be there), and
// says which models' vectors are stored and which the workers compute.
func storedVectors(ctx context.Context, models *method.Models, model string, vecs Vectors) (string, error) {
	scorers, err := models.VectorScorers()
	if err != nil || len(scorers) == 0 {
		return "", err
	}
	found, missing, err := resources.StoredVectors(ctx, vecs.Root, scorers)
	if err != nil {
		return "", fmt.Errorf("--vectors: %w", err)
	}
	if len(found) == 0 {
		if vecs.Required {
			return "", fmt.Errorf("--vectors: %s holds none of these models' sentence vectors (looked for %v); store them with bin/encode --model=%s --output=%s",
				vecs.Root, missing, model, vecs.Root)
		}
		fmt.Printf("harvest: no stored sentence vectors in %s; every worker computes those it needs (bin/encode --model=%s --output=%s stores them once)\n",
			vecs.Root, model, vecs.Root)
		return "", nil
	}
	for _, dir := range found {
		fmt.Printf("harvest: sentence vectors loaded from %s\n", dir)
	}
	for _, dir := range missing {
		fmt.Printf("harvest: no %s; the workers compute those vectors\n", dir)
	}
	return absGlob(vecs.Root), nil
}

// NewSpec is the harvest of settings h, with pair sampler pc, over the
// resources at paths, labeling with the models and index of the given
// fingerprints.
func NewSpec(h settings.Harvest, pc harvest.PairConfig, paths resources.Paths, modelFP, indexFP string) harvest.Spec {
	cfg := harvest.Config{Paths: paths, Settings: h.Method, Seed: h.Seed, BLAS: h.BLAS}
	return harvest.Spec{
		LabelConfig: harvest.LabelConfig{Config: cfg, ModelFingerprint: modelFP, IndexFingerprint: indexFP},
		Pairs:       pc, MinWords: h.MinWords, Sample: h.Sample, SampleFrom: h.SampleFrom,
	}
}

// PairConfig is the pair sampler of the harvest settings h.
func PairConfig(h settings.Harvest) (harvest.PairConfig, error) {
	q, err := harvest.ParseQuota(h.Quota)
	if err != nil {
		return harvest.PairConfig{}, err
	}
	pc := harvest.DefaultPairConfig()
	pc.Seed, pc.Quota, pc.Neighbours = h.Seed, q, h.Neighbours
	return pc, nil
}

// WriteSummary writes dir/summary.json and returns its bytes. A figure that
// is NaN or infinite is written as null, with a warning on stderr.
func WriteSummary(ctx context.Context, dir string, sum harvest.Summary) ([]byte, error) {
	b, err := nanjson.Document(os.Stderr, "harvest", jobrun.SummaryName, sum)
	if err != nil {
		return nil, err
	}
	path := storage.Join(dir, jobrun.SummaryName)
	if err := storage.WriteFile(ctx, path, b); err != nil {
		return nil, fmt.Errorf("harvest: write %s: %w", path, err)
	}
	return b, nil
}

// printPairs prints n labeled pairs spread over the range of labels: the
// highest, the lowest, and the quantiles between (with 5, the quartiles).
func printPairs(ctx context.Context, dir string, n int) error {
	ps, err := storage.ReadTable[schemas.LabeledPair](ctx, dir)
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
		fmt.Printf("\n  label %+.4f  (quantile %.0f%%; Eq. 4 %+.3f, TF-IDF %.3f, f(s1)·f(s2) %+.3f, alignment %.3f; %s, %s, |C| = %d)\n    1: %s\n    2: %s\n",
			p.Label, q, p.LabelContext, p.LabelLexical, p.LabelEmbed, p.LabelAlign, p.Stratum, p.Split,
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
func absGlob(g string) string { return jobrun.AbsPath(g) }
