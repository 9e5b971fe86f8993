// Package encodejob is bin/encode: a corpus's sentences + models -> the
// sentence vectors the harvest's scorers cache (the coherence model's
// BiLSTM vectors, the contrastive model's context-table sums), computed once
// and stored beside the index, so that harvest workers load them instead of
// computing them again in every worker.
package encodejob

import (
	"context"
	"flag"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/ctxsim/ctxsim/pipelines/internal/beamjob"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/scoring/nn"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/transforms/parquetio"
	"github.com/ctxsim/ctxsim/transforms/vectors"
)

const Usage = `
encode: corpus sentences + models -> stored sentence vectors (Parquet).

Computes, for every sentence of the corpus, the vector each model's scorer
caches per sentence: the coherence model's BiLSTM vector (disc) and the
contrastive model's context-table sum (ctx). A harvest over the corpus
loads them (bin/harvest --vectors, default <corpus>/vectors) instead of
computing them in each worker; its labels are the same.

Writes one table per model under --output (default <corpus>/vectors), named
by the model's vector key: the term and a hash of the model's weights (and
tokenizer), so any model directory holding the same model finds them. A
table already complete there is kept unless --overwrite. With --reuse, the
vectors an earlier version of the corpus stored for the same sentences are
copied instead of computed.`

// Config is the encode job's command line.
type Config struct {
	// Corpus is the index job's output directory: it sets Sentences and
	// Output where they are empty.
	Corpus, Sentences, Model, Output string
	// Terms limits the models encoded ("disc", "ctx"); empty means every
	// loaded model that caches sentence vectors.
	Terms string
	// Overwrite recomputes tables that are already complete.
	Overwrite bool
	// Reuse is another vectors directory (an earlier corpus version's):
	// the vectors of sentences it holds under the same model are copied
	// instead of computed (vectors.Config.Reuse). Empty for none.
	Reuse  string
	Shards int
	BLAS   string
}

// Register adds the job's flags to fs, bound to c.
func (c *Config) Register(fs *flag.FlagSet) {
	fs.StringVar(&c.Corpus, "corpus", "", "Output directory of the index job: sets --sentences and --output.")
	fs.StringVar(&c.Sentences, "sentences", "", "Sentences table glob (default <corpus>/sentences/*.parquet).")
	fs.StringVar(&c.Model, "model", "", "Model directory from the train job, local or gs:// (required).")
	fs.StringVar(&c.Output, "output", "", "Vectors directory (default <corpus>/vectors).")
	fs.StringVar(&c.Terms, "terms", "", "Comma-separated models to encode, of "+method.TermDisc+" and "+method.TermCtx+" (default: every one the model directory holds).")
	fs.BoolVar(&c.Overwrite, "overwrite", false, "Recompute tables that are already complete.")
	fs.StringVar(&c.Reuse, "reuse", "", "Another vectors directory, local or gs:// (an earlier version of the corpus, encoded with the same --parquet_shards): "+
		"the vectors it holds of the same sentences under the same model are copied instead of computed (default: none).")
	fs.IntVar(&c.Shards, "parquet_shards", 4, "Files per Parquet table.")
	fs.StringVar(&c.BLAS, "blas", "go", "Matrix multiply: go, or openblas in a build with -tags openblas. Use the harvest's: stored vectors are then bit for bit those it would compute.")
}

// Ranges are the bounds of the job's numeric flags.
func Ranges() []jobrun.Range {
	return []jobrun.Range{{Name: "parquet_shards", Lo: 1, Hi: 1000}}
}

// Resolve fills the paths from Corpus.
func (c *Config) Resolve() error {
	if c.Corpus != "" {
		if c.Sentences == "" {
			c.Sentences = storage.Join(c.Corpus, "sentences/*.parquet")
		}
		if c.Output == "" {
			c.Output = storage.Join(c.Corpus, "vectors")
		}
	}
	if c.Sentences == "" || c.Output == "" {
		return fmt.Errorf("give --corpus, or both --sentences and --output")
	}
	if c.Model == "" {
		return fmt.Errorf("--model is required")
	}
	return nil
}

// Plan returns the vector scorers of the models in dir that terms names
// (all of them when terms is empty).
func Plan(ctx context.Context, dir, terms string) ([]method.VectorScorer, error) {
	m, err := resources.LoadModels(ctx, dir)
	if err != nil {
		return nil, err
	}
	all, err := m.VectorScorers()
	if err != nil {
		return nil, err
	}
	var have []string
	for _, v := range all {
		have = append(have, v.Terms()[0])
	}
	if terms == "" {
		if len(all) == 0 {
			return nil, fmt.Errorf("models %s hold no model with sentence vectors (%s or %s)", dir, method.TermDisc, method.TermCtx)
		}
		return all, nil
	}
	var out []method.VectorScorer
	for _, t := range jobrun.SplitList(terms) {
		i := slices.Index(have, t)
		if i < 0 {
			return nil, fmt.Errorf("--terms: models %s have no sentence vectors %q (they have %s)", dir, t, strings.Join(have, ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}

// Run computes and writes the vectors.
func Run(ctx context.Context, c Config) error {
	if err := nn.CheckBackend(c.BLAS); err != nil {
		return err
	}
	plan, err := Plan(ctx, c.Model, c.Terms)
	if err != nil {
		return err
	}
	model := jobrun.AbsPath(c.Model)
	p, s := beam.NewPipelineWithRoot()
	var sents beam.PCollection
	var tables []string
	for _, v := range plan {
		dir := resources.VectorTable(c.Output, v)
		if !c.Overwrite {
			if _, err := storage.CheckTable(ctx, dir); err == nil {
				fmt.Printf("encode: %s is complete; kept (--overwrite recomputes it)\n", dir)
				continue
			}
		}
		if len(tables) == 0 {
			sents = parquetio.Read(s, jobrun.AbsPath(c.Sentences), reflect.TypeOf(schemas.Sentence{}))
		}
		tables = append(tables, dir)
		reuse := ""
		if c.Reuse != "" {
			prev := resources.VectorTable(c.Reuse, v)
			ok, err := storage.Exists(ctx, storage.Join(prev, storage.ManifestName))
			if err != nil {
				return err
			}
			if ok {
				reuse = prev
			}
		}
		vectors.Write(s, vectors.Config{Models: model, Key: v.VectorKey(), BLAS: c.BLAS, Reuse: reuse},
			parquetio.Config{Dir: dir, NumShards: c.Shards}, sents)
	}
	if len(tables) == 0 {
		return nil
	}
	counters, err := beamjob.Run(ctx, "encode", p)
	if err != nil || jobrun.NotRun() {
		return err
	}
	fmt.Println("counters:")
	counters.Print(os.Stdout, "encode", "parquetio")
	if err := jobrun.NotEmpty(counters, "parquetio/rows_read", "the sentences table holds no sentence"); err != nil {
		return err
	}
	for _, dir := range tables {
		fmt.Printf("encode: vectors in %s\n", dir)
	}
	return nil
}
