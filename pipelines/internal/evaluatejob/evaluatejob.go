// Package evaluatejob is the evaluate job (bin/evaluate): it measures
// label quality directly ("Origin"). For each pair of an STS file it
// builds C_s1 and C_s2 against the corpus index with the harvest's stages,
// labels the pair with Eq. 4 (alone, and with the hybrid labeler), and
// reports the Spearman correlation (×100) with the gold scores, beside
// baselines and ablations computed in the same run on the same pairs
// (package evaluation).
package evaluatejob

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/pipelines/internal/evaluation"
	"github.com/ctxsim/ctxsim/pipelines/internal/nanjson"
	"github.com/ctxsim/ctxsim/pipelines/internal/settings"
	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/scoring/nn"
	"github.com/ctxsim/ctxsim/scoring/sts"
	"github.com/ctxsim/ctxsim/storage"
)

// Usage is the job's description, printed by -help above the flags.
const Usage = `
evaluate: STS pairs -> Origin labels (Eq. 4), the labeler's, and baselines -> Spearman x100.

The settings are --preset plus overrides, as in bin/harvest, but --preset
defaults to small here: the harvest's default method (the contrastive
context model, Eq. 4 as zwhite, the aligned labeler) at top_k 2000, rerank 200,
set_size 100, a tenth of the depth of the harvest's default (--preset=default).

--sts reads an STS file in any of these layouts: ` + sts.Formats + `.
STS files are not shipped with ctxsim: the STS Benchmark's come from the
STS wiki (ixa2.si.ehu.eus/stswiki, Stsbenchmark.tar.gz) or the
sentence-transformers/stsb dataset; SICK's SICK.txt from its authors. Every
variant runs on the same pairs and shares
one cache of (sentence, context) scores, so ablations that reuse contexts cost
little. Each variant reports the label under its labeler, Eq. 4 alone (pure
Origin) and Eq. 4 under the other similarity. Variants (--variants):

` + evaluation.VariantHelp + `

Baselines, always run: tfidf (unigram TF-IDF cosine, IDF over the corpus
chunks), tfidf_stem (the same over Porter stems), ctx_cosine (the
contrastive model's sentence vectors, when it is loaded), ctx_align (the
same model's word alignment of the two sentences: each word's best match
in the other sentence, IDF-weighted, both ways) and mean_word_vectors (the coherence model's subword embeddings, IDF-weighted,
when it is loaded).

Writes --output/results.json, --output/pairs.tsv (every pair's prediction
under every baseline and variant) and --output/report.html (the table and
the labels plotted against the gold scores).`

// Config is one run of the job. Each field holds the flag named beside
// it; Method holds the method flags (--preset and its overrides).
type Config struct {
	STS      string          // --sts
	Index    string          // --index
	Chunks   string          // --chunks
	Model    string          // --model
	Output   string          // --output
	Vectors  string          // --vectors
	Mapped   bool            // --map_corpus
	Method   *settings.Flags // --preset, --top_k, --rerank, ... (package settings)
	Variants string          // --variants
	Pairs    int             // --pairs
	Workers  int             // --workers
	Seed     uint64          // --seed
	BLAS     string          // --blas
}

// Register defines the job's flags on fs, each bound to its field of c and
// setting it to the flag's default, and the method flags with the preset
// small as default.
func (c *Config) Register(fs *flag.FlagSet) {
	fs.StringVar(&c.STS, "sts", "", "STS file with gold scores, local or gs:// (required): "+sts.Formats+".")
	fs.StringVar(&c.Index, "index", "", "Index directory from the index job (required).")
	fs.StringVar(&c.Chunks, "chunks", "", "Chunks table glob from the index job (required).")
	fs.StringVar(&c.Model, "model", "", "Model directory from the train job (required).")
	fs.StringVar(&c.Output, "output", "", "Directory for results.json and pairs.tsv (required).")
	fs.StringVar(&c.Vectors, "vectors", "", "Stored sentence vectors from bin/encode for these models and the corpus of --chunks, local or gs:// (default: none; computed as needed). The results are the same either way.")
	fs.BoolVar(&c.Mapped, "map_corpus", false, "Keep the chunk store's texts and IDs, and the --vectors, in memory maps of local files (under $CTXSIM_CACHE_DIR, on disk, not tmpfs) instead of the heap, as bin/harvest --map_corpus does: the page cache holds them and the kernel can drop it. The results are the same.")
	c.Method = settings.Register(fs, "small")
	fs.StringVar(&c.Variants, "variants", "origin,random_contexts,no_diversity,set_20,set_100,cosine",
		"Comma-separated variants to run (see above).")
	fs.IntVar(&c.Pairs, "pairs", 0, "Use N pairs spread evenly over the file (every len/N-th; 0: all). STS files are ordered by genre, so a prefix would be one genre.")
	fs.IntVar(&c.Workers, "workers", 0, "Pairs evaluated at once (0: one per CPU).")
	fs.Uint64Var(&c.Seed, "seed", 1, "Seed of the random-context ablation.")
	fs.StringVar(&c.BLAS, "blas", "go", "Matrix multiply: go (batch-invariant: a score does not depend on its batch) or openblas.")
}

// Run evaluates the variants c names on the pairs of c.STS, prints the
// table on stdout, and writes results.json, pairs.tsv and report.html
// into c.Output.
func Run(ctx context.Context, c Config) error {
	if c.Method == nil {
		return errors.New("evaluate: no method settings (Config.Method is nil; see Register)")
	}
	if err := resources.UseBackend(c.BLAS); err != nil {
		return err
	}
	base, vs, err := c.variants()
	if err != nil {
		return err
	}
	all, err := sts.Read(ctx, c.STS)
	if err != nil {
		return err
	}
	pairs := sts.Spread(all, c.Pairs)
	start := time.Now()
	res, err := c.open(ctx, base.GenPrecision, len(pairs), start)
	if err != nil {
		return err
	}
	out, err := evaluation.Run(ctx, evaluation.Config{Pairs: pairs, Base: base, Variants: vs, Workers: c.Workers,
		Seed: c.Seed, Progress: os.Stdout}, &evaluation.Resources{Engine: res.Engine, Models: res.Models,
		Search: func(ctx context.Context, text string, k int) ([]schemas.Hit, error) {
			h, _, err := res.Index.Search(ctx, text, k, nil)
			return h, err
		}})
	if err != nil {
		return err
	}
	evaluation.Table(os.Stdout, out.Results)
	for _, f := range out.Verdict() {
		fmt.Printf("evaluate: %s\n", f.Text)
	}
	if err := c.writeResults(ctx, out, pairs, res, start); err != nil {
		return err
	}
	if err := storage.WriteFile(ctx, storage.Join(c.Output, "pairs.tsv"), pairsTSV(out, pairs)); err != nil {
		return err
	}
	reportPath, err := c.writeReport(ctx, out)
	if err != nil {
		return err
	}
	fmt.Printf("evaluate: done in %s; results in %s\n", time.Since(start).Round(time.Second), c.Output)
	fmt.Printf("evaluate: report in %s\n", reportPath)
	return nil
}

// variants returns the method settings the flags give and the variants
// of them that --variants names.
func (c Config) variants() (method.Settings, []evaluation.Variant, error) {
	base, err := c.Method.Settings()
	if err != nil {
		return base, nil, err
	}
	vs, err := evaluation.MakeVariants(base, evaluation.SplitVariants(c.Variants))
	return base, vs, err
}

// open loads the chunks, the models (the generative one in precision
// genPrecision) and the index, and prints what it loaded for the
// evaluation of n pairs begun at start.
func (c Config) open(ctx context.Context, genPrecision string, n int, start time.Time) (*resources.Resources, error) {
	res, err := resources.Open(ctx, resources.Paths{Chunks: c.Chunks, Models: c.Model, Index: c.Index, Vectors: c.Vectors,
		Mapped: c.Mapped, GenPrecision: genPrecision})
	if err != nil {
		return nil, err
	}
	e := res.Engine
	if c.Vectors != "" {
		found, missing, err := resources.StoredVectors(ctx, c.Vectors, e.VectorScorers())
		if err != nil {
			return nil, fmt.Errorf("--vectors: %w", err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("--vectors: %s holds none of these models' sentence vectors (looked for %v); store them with bin/encode --model=%s --output=%s",
				c.Vectors, missing, c.Model, c.Vectors)
		}
		for _, dir := range found {
			fmt.Printf("evaluate: sentence vectors loaded from %s\n", dir)
		}
	}
	if c.Mapped {
		fmt.Printf("evaluate: the chunk store's strings and the stored vectors are in memory maps under %s\n", storage.CacheRoot())
	}
	fmt.Printf("evaluate: %d pairs, %d chunks (%d sentences), models %s (terms %s), index %s, %s, loaded in %.1fs\n",
		n, e.Store.Len(), e.Store.Sentences(), res.Models.Fingerprint, strings.Join(e.Terms(), ","),
		res.Index.Meta.ID(), nn.Backend(), time.Since(start).Seconds())
	return res, nil
}

// writeResults writes results.json: the results with what they were
// computed from. A result that is NaN or infinite (the Spearman
// correlation of constant scores) is written as null, with a warning on
// stderr.
func (c Config) writeResults(ctx context.Context, out *evaluation.Output, pairs []sts.Pair, res *resources.Resources,
	start time.Time) error {
	doc := map[string]any{
		"sts": c.STS, "pairs": len(pairs), "preset": c.Method.Preset(), "results": out.Results,
		"model_fingerprint": res.Models.Fingerprint, "index_fingerprint": res.Index.Meta.ID(),
		"chunks": res.Engine.Store.Len(), "seconds": time.Since(start).Seconds(), "engine": res.Engine.Stats(),
		"schema_version": schemas.Version,
	}
	b, err := nanjson.Document(os.Stderr, "evaluate", "results.json", doc)
	if err != nil {
		return err
	}
	path := storage.Join(c.Output, "results.json")
	if err := storage.WriteFile(ctx, path, b); err != nil {
		return fmt.Errorf("evaluate: write %s: %w", path, err)
	}
	return nil
}

// pairsTSV is pairs.tsv: a header, then for each pair its gold score, its
// prediction in every column of out, and its two sentences.
func pairsTSV(out *evaluation.Output, pairs []sts.Pair) []byte {
	var sb strings.Builder
	sb.WriteString("gold\t" + strings.Join(out.Columns, "\t") + "\ts1\ts2\n")
	for i, p := range pairs {
		fmt.Fprintf(&sb, "%g", p.Gold)
		for col := range out.Columns {
			fmt.Fprintf(&sb, "\t%.5f", out.Pred[col][i])
		}
		fmt.Fprintf(&sb, "\t%s\t%s\n", p.S1, p.S2)
	}
	return []byte(sb.String())
}

// writeReport writes report.html and returns its path.
func (c Config) writeReport(ctx context.Context, out *evaluation.Output) (string, error) {
	rep, err := out.Report("ctxsim evaluation: "+c.STS, c.STS)
	if err != nil {
		return "", fmt.Errorf("report: %w", err)
	}
	path := storage.Join(c.Output, "report.html")
	if err := storage.WriteFile(ctx, path, rep.HTML()); err != nil {
		return "", err
	}
	return path, nil
}
