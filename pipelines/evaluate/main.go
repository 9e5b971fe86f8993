// Command evaluate measures label quality directly ("Origin"): for each
// pair of an STS file it builds C_s1 and C_s2 against the corpus index with
// the harvest's stages, labels the pair with Eq. 4 (alone, and with the
// hybrid labeler), and reports the Spearman correlation (×100) with the
// gold scores, beside baselines and ablations computed in the same run on
// the same pairs.
//
//	go run ./pipelines/evaluate --sts=../shared/data/eval/stsb-dev.tsv \
//	  --index=out/index/index --chunks='out/index/chunks/*.parquet' --model=out/model
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/pipelines/internal/evaluation"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/pipelines/internal/settings"
	"github.com/ctxsim/ctxsim/pipelines/internal/sts"
	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/nn"
	"github.com/ctxsim/ctxsim/storage"
)

const usage = `
evaluate: STS pairs -> Origin labels (Eq. 4), the hybrid, and baselines -> Spearman x100.

Reads a TSV with a header and the columns score, s1, s2 (further columns are
ignored), as in stsb-dev.tsv. Every variant runs on the same pairs and shares
one cache of (sentence, context) scores, so ablations that reuse contexts cost
little. Each variant reports the label under its labeler, Eq. 4 alone (pure
Origin) and Eq. 4 under the other similarity. Variants (--variants):

` + evaluation.VariantHelp + `

Baselines, always run: tfidf (unigram TF-IDF cosine, IDF over the corpus
chunks), tfidf_stem (the same over Porter stems), ctx_cosine (the
contrastive model's sentence vectors, when it is loaded) and
mean_word_vectors (the coherence model's subword embeddings, IDF-weighted,
when it is loaded).

Writes --output/results.json, --output/pairs.tsv (every pair's prediction
under every baseline and variant) and --output/report.html (the table and
the labels plotted against the gold scores).`

var (
	stsPath  = flag.String("sts", "", "STS TSV file, local or gs:// (required).")
	indexDir = flag.String("index", "", "Index directory from the index job (required).")
	chunks   = flag.String("chunks", "", "Chunks table glob from the index job (required).")
	model    = flag.String("model", "", "Model directory from the train job (required).")
	output   = flag.String("output", "", "Directory for results.json and pairs.tsv (required).")
	method   = settings.Register(flag.CommandLine, "small")
	variants = flag.String("variants", "origin,random_contexts,no_diversity,set_20,set_100,cosine",
		"Comma-separated variants to run (see above).")
	maxPairs = flag.Int("pairs", 0, "Use N pairs spread evenly over the file (every len/N-th; 0: all). STS files are ordered by genre, so a prefix would be one genre.")
	workers  = flag.Int("workers", 0, "Pairs evaluated at once (0: one per CPU).")
	seed     = flag.Uint64("seed", 1, "Seed of the random-context ablation.")
	blas     = flag.String("blas", "go", "Matrix multiply: go (batch-invariant: a score does not depend on its batch) or openblas.")
)

func main() {
	jobrun.Init(usage)
	jobrun.Require("sts", "index", "chunks", "model", "output")
	jobrun.Lease("evaluate", *output)
	defer jobrun.Release()
	ctx := context.Background()
	if err := nn.SetBackend(*blas); err != nil {
		jobrun.Fail(err)
	}
	base, err := method.Settings()
	if err != nil {
		jobrun.Fail(err)
	}
	vs, err := evaluation.MakeVariants(base, evaluation.SplitVariants(*variants))
	if err != nil {
		jobrun.Fail(err)
	}
	all, err := sts.Read(ctx, *stsPath)
	if err != nil {
		jobrun.Fail(err)
	}
	pairs := sts.Spread(all, *maxPairs)
	start := time.Now()
	res, err := resources.Open(ctx, resources.Paths{Chunks: *chunks, Models: *model, Index: *indexDir})
	if err != nil {
		jobrun.Fail(err)
	}
	e := res.Engine
	fmt.Printf("evaluate: %d pairs, %d chunks (%d sentences), models %s (terms %s), index %s, %s, loaded in %.1fs\n",
		len(pairs), e.Store.Len(), e.Store.Sentences(), res.Models.Fingerprint, strings.Join(e.Terms(), ","),
		res.Index.Meta.ID(), nn.Backend(), time.Since(start).Seconds())
	out, err := evaluation.Run(ctx, evaluation.Config{Pairs: pairs, Base: base, Variants: vs, Workers: *workers,
		Seed: *seed, Progress: os.Stdout}, &evaluation.Resources{Engine: e, Models: res.Models,
		Search: func(ctx context.Context, text string, k int) ([]schemas.Hit, error) {
			h, _, err := res.Index.Search(ctx, text, k, nil)
			return h, err
		}})
	if err != nil {
		jobrun.Fail(err)
	}
	evaluation.Table(os.Stdout, out.Results)
	if err := write(ctx, out, pairs, res, start); err != nil {
		jobrun.Fail(err)
	}
	rep, err := out.Report("ctxsim evaluation: "+*stsPath, *stsPath)
	if err != nil {
		jobrun.Fail(err)
	}
	reportPath := storage.Join(*output, "report.html")
	if err := storage.WriteFile(ctx, reportPath, rep.HTML()); err != nil {
		jobrun.Fail(err)
	}
	fmt.Printf("evaluate: done in %s; results in %s\n", time.Since(start).Round(time.Second), *output)
	fmt.Printf("evaluate: report in %s\n", reportPath)
}

func write(ctx context.Context, out *evaluation.Output, pairs []sts.Pair, res *resources.Resources, start time.Time) error {
	doc := map[string]any{
		"sts": *stsPath, "pairs": len(pairs), "preset": method.Preset(), "results": out.Results,
		"model_fingerprint": res.Models.Fingerprint, "index_fingerprint": res.Index.Meta.ID(),
		"chunks": res.Engine.Store.Len(), "seconds": time.Since(start).Seconds(), "engine": res.Engine.Stats(),
		"schema_version": schemas.Version,
	}
	b, _ := json.MarshalIndent(doc, "", "  ")
	if err := storage.WriteFile(ctx, storage.Join(*output, "results.json"), append(b, '\n')); err != nil {
		return err
	}
	var sb strings.Builder
	sb.WriteString("gold\t" + strings.Join(out.Columns, "\t") + "\ts1\ts2\n")
	for i, p := range pairs {
		fmt.Fprintf(&sb, "%g", p.Gold)
		for c := range out.Columns {
			fmt.Fprintf(&sb, "\t%.5f", out.Pred[c][i])
		}
		fmt.Fprintf(&sb, "\t%s\t%s\n", p.S1, p.S2)
	}
	return storage.WriteFile(ctx, storage.Join(*output, "pairs.tsv"), []byte(sb.String()))
}
