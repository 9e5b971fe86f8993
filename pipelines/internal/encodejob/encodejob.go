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
	// Parts encodes the sentences in this many pipelines run in turn, each
	// over the sentences whose ID hashes to it (parquetio.KeyByShardPart);
	// 0 means 1. The table is the one a single pipeline writes with
	// Parts*Shards files.
	Parts int
}

// Register adds the job's flags to fs, bound to c.
func (c *Config) Register(fs *flag.FlagSet) {
	fs.StringVar(&c.Corpus, "corpus", "", "Output directory of the index job: sets --sentences and --output.")
	fs.StringVar(&c.Sentences, "sentences", "", "Sentences table glob (default <corpus>/sentences/*.parquet).")
	fs.StringVar(&c.Model, "model", "", "Model directory from the train job, local or gs:// (required).")
	fs.StringVar(&c.Output, "output", "", "Vectors directory (default <corpus>/vectors).")
	fs.StringVar(&c.Terms, "terms", "", "Comma-separated models to encode, of "+method.TermDisc+" and "+method.TermCtx+" (default: every one the model directory holds).")
	fs.BoolVar(&c.Overwrite, "overwrite", false, "Recompute tables that are already complete.")
	fs.StringVar(&c.Reuse, "reuse", "", "Another vectors directory, local or gs:// (an earlier version of the corpus, encoded into as many files: --parquet_shards times --parts): "+
		"the vectors it holds of the same sentences under the same model are copied instead of computed (default: none).")
	fs.IntVar(&c.Shards, "parquet_shards", 4, "Files per Parquet table.")
	fs.IntVar(&c.Parts, "parts", 1, "Encode in this many pipelines run in turn, each over the sentences whose ID hashes to it: "+
		"a local run holds about 1/parts of the sentences. Each table then has parts x parquet_shards files, the same files one pipeline writes with that many shards.")
	fs.StringVar(&c.BLAS, "blas", "go", "Matrix multiply: go, or openblas in a build with -tags openblas. Use the harvest's: stored vectors are then bit for bit those it would compute.")
}

// Ranges are the bounds of the job's numeric flags.
func Ranges() []jobrun.Range {
	return []jobrun.Range{{Name: "parquet_shards", Lo: 1, Hi: 1000}, {Name: "parts", Lo: 1, Hi: 1000}}
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
	// The tables still to write, and what each may reuse.
	var todo []method.VectorScorer
	var tables, reuses []string
	for _, v := range plan {
		dir := resources.VectorTable(c.Output, v)
		if !c.Overwrite {
			if _, err := storage.CheckTable(ctx, dir); err == nil {
				fmt.Printf("encode: %s is complete; kept (--overwrite recomputes it)\n", dir)
				continue
			}
		}
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
		todo, tables, reuses = append(todo, v), append(tables, dir), append(reuses, reuse)
	}
	if len(tables) == 0 {
		return nil
	}
	parts := max(c.Parts, 1)
	run := storage.RunID()
	var total jobrun.Counters
	for part := range parts {
		if parts > 1 {
			fmt.Printf("encode: part %d of %d (the sentences whose ID hashes to it)\n", part+1, parts)
		}
		p, s := beam.NewPipelineWithRoot()
		sents := parquetio.Read(s, jobrun.AbsPath(c.Sentences), reflect.TypeOf(schemas.Sentence{}))
		for i, v := range todo {
			table := parquetio.Config{Dir: tables[i], NumShards: c.Shards, RunID: run}
			if parts > 1 {
				table.Part, table.Parts = part, parts
			}
			vectors.Write(s, vectors.Config{Models: model, Key: v.VectorKey(), BLAS: c.BLAS, Reuse: reuses[i]}, table, sents)
		}
		counters, err := beamjob.Run(ctx, "encode", p)
		if err != nil {
			if parts > 1 {
				return fmt.Errorf("part %d of %d: %w", part+1, parts, err)
			}
			return err
		}
		if jobrun.NotRun() {
			return nil
		}
		if total, err = addPart(total, counters, part, len(todo)); err != nil {
			return err
		}
	}
	if parts > 1 {
		for _, dir := range tables {
			spec := storage.TableSpec{Dir: dir, NumShards: c.Shards, Type: reflect.TypeOf(schemas.SentenceVector{}),
				RunID: run, Part: 0, Parts: parts}
			if _, err := spec.CommitParts(ctx); err != nil {
				return err
			}
		}
	}
	fmt.Println("counters:")
	total.Print(os.Stdout, "encode", "parquetio")
	if err := jobrun.NotEmpty(total, "parquetio/rows_read", "the sentences table holds no sentence"); err != nil {
		return err
	}
	for _, dir := range tables {
		fmt.Printf("encode: vectors in %s\n", dir)
	}
	return nil
}

// addPart adds a part's counters to the job's total. Every part reads the
// whole sentences table, so parquetio/rows_read is part 0's, and each
// later part must have read as many rows: a table that changed between
// parts would leave sentences without vectors. Every row read is either
// one of this part's (written once per table) or another part's.
func addPart(total, got jobrun.Counters, part, tables int) (jobrun.Counters, error) {
	read := got["parquetio/rows_read"]
	mine := read - got["parquetio/rows_other_part"]/int64(max(tables, 1))
	var written int64
	for k, v := range got {
		if strings.HasPrefix(k, "encode/vectors_") {
			written += v
		}
	}
	if written != mine*int64(tables) {
		return nil, fmt.Errorf("part %d: %d sentences of the part read for %d tables, but %d vectors written or reused; nothing is committed",
			part+1, mine, tables, written)
	}
	if part == 0 {
		out := jobrun.Counters{}
		for k, v := range got {
			out[k] = v
		}
		delete(out, "parquetio/rows_other_part")
		return out, nil
	}
	if read != total["parquetio/rows_read"] {
		return nil, fmt.Errorf("part %d read %d sentences where part 1 read %d: the sentences table changed between parts; nothing is committed",
			part+1, read, total["parquetio/rows_read"])
	}
	for k, v := range got {
		if k != "parquetio/rows_read" && k != "parquetio/rows_other_part" {
			total[k] += v
		}
	}
	return total, nil
}
