// Command evaluate measures label quality directly ("Origin"): for each
// pair of an STS file it builds C_s1 and C_s2 against the corpus index with
// the harvest's stages, labels the pair with Eq. 4, and reports the Spearman
// correlation (×100) with the gold scores, beside baselines and ablations
// computed in the same run on the same pairs.
//
//	go run ./pipelines/evaluate --sts=../shared/data/eval/stsb-dev.tsv \
//	  --index=out/index/index --chunks='out/index/chunks/*.parquet' --model=out/model
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/pipelines/internal/sts"
	"github.com/ctxsim/ctxsim/schemas"
	hv "github.com/ctxsim/ctxsim/scoring/harvest"
	"github.com/ctxsim/ctxsim/scoring/nn"
	"github.com/ctxsim/ctxsim/transforms/harvest"
	"github.com/ctxsim/ctxsim/transforms/remote"
)

const usage = `
evaluate: STS pairs -> Origin labels (Eq. 4) and baselines -> Spearman x100.

Reads a TSV with a header and the columns score, s1, s2 (further columns are
ignored), as in stsb-dev.tsv. Every variant runs on the same pairs and shares
one cache of (sentence, context) scores, so ablations that reuse contexts cost
little. Variants (--variants):

  origin           the settings given (--preset plus overrides)
  no_disc          without the discriminative term (lambda1 = 0)
  no_left_right    without the left and right context terms (lambda3 = lambda4 = 0)
  disc_only        the discriminative term alone
  random_contexts  random corpus contexts instead of retrieved ones
  no_diversity     without the one-per-chunk and Jaccard constraints
  set_N            |C_s| = N (R raised to 2N when smaller)
  pearson          Eq. 4 with centred score vectors
  lambda=a:b:c:d   Eq. 3 with these weights
  signal_N         S(s1, c) and S(s2, c) on the first N contexts retrieved
                   for s1, without reranking or C_s (an early model check)

Baselines, always run: tfidf (unigram TF-IDF cosine, IDF over the corpus
chunks) and mean_word_vectors (cosine of the mean of the coherence model's
subword embeddings, IDF-weighted).

Writes --output/results.json and --output/pairs.tsv (every pair's label
under every variant).`

var (
	stsPath    = flag.String("sts", "", "STS TSV file, local or gs:// (required).")
	indexDir   = flag.String("index", "", "Index directory from the index job (required).")
	chunks     = flag.String("chunks", "", "Chunks table glob from the index job (required).")
	model      = flag.String("model", "", "Model directory from the train job (required).")
	output     = flag.String("output", "", "Directory for results.json and pairs.tsv (required).")
	preset     = flag.String("preset", "small", "Settings preset: paper, small or demo.")
	topK       = flag.Int("top_k", 0, "Override: chunks retrieved per sentence.")
	rerank     = flag.Int("rerank", 0, "Override: contexts kept by the coherence model (R).")
	setSize    = flag.Int("set_size", 0, "Override: |C_s|.")
	lambda     = flag.String("lambda", "", "Override: the four weights of Eq. 3, comma-separated (disc,to_s,to_left,to_right).")
	similarity = flag.String("similarity", "", "Override: Eq. 4 similarity of origin and its ablations, cosine or pearson.")
	variants   = flag.String("variants", "origin,no_disc,no_left_right,disc_only,random_contexts,no_diversity,set_20,set_100,pearson",
		"Comma-separated variants to run (see above).")
	maxPairs = flag.Int("pairs", 0, "Use N pairs spread evenly over the file (every len/N-th; 0: all). STS files are ordered by genre, so a prefix would be one genre.")
	workers  = flag.Int("workers", 0, "Pairs evaluated at once (0: one per CPU).")
	seed     = flag.Uint64("seed", 1, "Seed of the random-context ablation.")
	blas     = flag.String("blas", "go", "Matrix multiply: go (batch-invariant: a score does not depend on its batch) or openblas.")
)

type variant struct {
	Name     string      `json:"name"`
	Settings hv.Settings `json:"settings"`
}

type result struct {
	Name        string  `json:"name"`
	Spearman100 float64 `json:"spearman_x100"`
	// Spearman100Other is the same contexts compared with the other Eq. 4
	// similarity (pearson when the variant uses cosine, and back).
	Spearman100Other float64 `json:"spearman_x100_other_similarity,omitempty"`
	OtherSimilarity  string  `json:"other_similarity,omitempty"`
	Pairs            int     `json:"pairs"`
	MeanContexts     float64 `json:"mean_union_contexts,omitempty"`
	MeanSetSize      float64 `json:"mean_set_size,omitempty"`
	GenEvalsPair     float64 `json:"gen_evals_per_pair,omitempty"`
	Seconds          float64 `json:"seconds,omitempty"`
	Settings         any     `json:"settings,omitempty"`
	Note             string  `json:"note,omitempty"`
}

func main() {
	jobrun.Init(usage)
	jobrun.Require("sts", "index", "chunks", "model", "output")
	ctx := context.Background()
	if err := nn.SetBackend(*blas); err != nil {
		jobrun.Fail(err)
	}
	base, err := hv.Preset(*preset)
	if err != nil {
		jobrun.Fail(err)
	}
	if base, err = (hv.Overrides{TopK: *topK, Rerank: *rerank, SetSize: *setSize, Lambda: *lambda,
		Similarity: *similarity}).Apply(base); err != nil {
		jobrun.Fail(err)
	}
	vs, err := makeVariants(base, jobrun.SplitList(*variants))
	if err != nil {
		jobrun.Fail(err)
	}
	all, err := sts.Read(ctx, *stsPath)
	if err != nil {
		jobrun.Fail(err)
	}
	pairs := sts.Spread(all, *maxPairs)
	start := time.Now()
	res, err := harvest.Open(ctx, harvest.Paths{Chunks: *chunks, Models: *model, Index: *indexDir})
	if err != nil {
		jobrun.Fail(err)
	}
	e := res.Engine
	fmt.Printf("evaluate: %d pairs, %d chunks (%d sentences), models %s, index %s, %s, loaded in %.1fs\n",
		len(pairs), e.Store.Len(), e.Store.Sentences(), res.Models.Fingerprint, res.Index.Meta.ID(),
		nn.Backend(), time.Since(start).Seconds())

	// Baselines.
	tf := newTFIDF(e.Store)
	var results []result
	gold := make([]float64, len(pairs))
	tfPred := make([]float64, len(pairs))
	mwvPred := make([]float64, len(pairs))
	for i, p := range pairs {
		gold[i] = p.Gold
		tfPred[i] = tf.Cosine(p.S1, p.S2)
		mwvPred[i] = meanWordVectors(res.Models, tf, p.S1, p.S2)
	}
	results = append(results,
		result{Name: "tfidf", Spearman100: 100 * hv.Spearman(tfPred, gold), Pairs: len(pairs)},
		result{Name: "mean_word_vectors", Spearman100: 100 * hv.Spearman(mwvPred, gold), Pairs: len(pairs),
			Note: "IDF-weighted mean of the coherence model's subword embeddings"})

	maxK := 0
	for _, v := range vs {
		maxK = max(maxK, v.Settings.TopK)
	}
	preds := make([][]float64, len(vs))
	other := make([][]float64, len(vs))
	for i := range preds {
		preds[i] = make([]float64, len(pairs))
		other[i] = make([]float64, len(pairs))
	}
	type acc struct {
		union, setSize float64
		evals          int64
		seconds        float64
	}
	accs := make([]acc, len(vs))
	var accMu sync.Mutex
	n := *workers
	if n <= 0 {
		n = max(1, runtime.NumCPU())
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	var firstErr error
	var done int
	tick := time.Now()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				p := pairs[i]
				h1, _, err1 := res.Index.Search(ctx, p.S1, maxK, nil)
				h2, _, err2 := res.Index.Search(ctx, p.S2, maxK, nil)
				if err := errors.Join(err1, err2); err != nil {
					accMu.Lock()
					firstErr = errors.Join(firstErr, err)
					accMu.Unlock()
					continue
				}
				for vi, v := range vs {
					t0 := time.Now()
					st := v.Settings
					if strings.HasPrefix(v.Name, "signal_") {
						va, vb, w := signal(e, p.S1, p.S2, h1, st)
						nc := len(va)
						preds[vi][i] = hv.Similarity(va, vb, st.Similarity)
						other[vi][i] = hv.Similarity(va, vb, otherSim(st.Similarity))
						accMu.Lock()
						accs[vi].union += float64(nc)
						accs[vi].setSize += float64(nc)
						accs[vi].evals += w.GenEvals
						accs[vi].seconds += time.Since(t0).Seconds()
						accMu.Unlock()
						continue
					}
					a, ia := e.ContextSet(p.S1, h1[:min(len(h1), st.TopK)], st, pairSeed(*seed, p.S1))
					b, ib := e.ContextSet(p.S2, h2[:min(len(h2), st.TopK)], st, pairSeed(*seed, p.S2))
					va, vb, lw := e.LabelVectors(p.S1, p.S2, a, b, st)
					nc := len(va)
					preds[vi][i] = hv.Similarity(va, vb, st.Similarity)
					other[vi][i] = hv.Similarity(va, vb, otherSim(st.Similarity))
					accMu.Lock()
					accs[vi].union += float64(nc)
					accs[vi].setSize += float64(len(a)+len(b)) / 2
					// Evaluations computed for this variant; those it
					// found cached from earlier variants are not counted.
					accs[vi].evals += ia.Work.GenEvals + ib.Work.GenEvals + lw.GenEvals
					accs[vi].seconds += time.Since(t0).Seconds()
					accMu.Unlock()
				}
				accMu.Lock()
				done++
				if time.Since(tick) > 10*time.Second {
					tick = time.Now()
					fmt.Printf("evaluate: %d/%d pairs (%.0fs)\n", done, len(pairs), time.Since(start).Seconds())
				}
				accMu.Unlock()
			}
		}()
	}
	for i := range pairs {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		jobrun.Fail(firstErr)
	}
	np := float64(len(pairs))
	for vi, v := range vs {
		results = append(results, result{Name: v.Name, Spearman100: 100 * hv.Spearman(preds[vi], gold),
			Spearman100Other: 100 * hv.Spearman(other[vi], gold), OtherSimilarity: otherSim(v.Settings.Similarity),
			Pairs: len(pairs), MeanContexts: accs[vi].union / np, MeanSetSize: accs[vi].setSize / np,
			GenEvalsPair: float64(accs[vi].evals) / np, Seconds: accs[vi].seconds, Settings: v.Settings})
	}
	report(os.Stdout, results)
	if err := write(results, pairs, vs, preds, tfPred, mwvPred, res, start); err != nil {
		jobrun.Fail(err)
	}
	fmt.Printf("evaluate: done in %s; results in %s\n", time.Since(start).Round(time.Second), *output)
}

// signal scores both sentences on the first st.SetSize contexts of s1's
// retrieved chunks and compares the score vectors.
func signal(e *hv.Engine, s1, s2 string, h1 []schemas.Hit, st hv.Settings) (va, vb []float64, w hv.Stats) {
	cands, _ := e.Candidates(h1)
	cands = cands[:min(len(cands), st.SetSize)]
	other := append([]hv.Cand(nil), cands...)
	w = e.Score(s1, cands, st.Lambda)
	w2 := e.Score(s2, other, st.Lambda)
	w.GenEvals += w2.GenEvals
	va, vb = make([]float64, len(cands)), make([]float64, len(cands))
	for i := range cands {
		va[i], vb[i] = float64(cands[i].S), float64(other[i].S)
	}
	return va, vb, w
}

func otherSim(s string) string {
	if s == "pearson" {
		return "cosine"
	}
	return "pearson"
}

func pairSeed(seed uint64, s string) uint64 {
	h := fnv.New64a()
	io.WriteString(h, s)
	return seed ^ h.Sum64()
}

func makeVariants(base hv.Settings, names []string) ([]variant, error) {
	var out []variant
	for _, n := range names {
		s := base
		switch {
		case n == "origin":
		case n == "no_disc":
			s.Lambda[hv.TermDisc] = 0
		case n == "no_left_right":
			s.Lambda[hv.TermToLeft], s.Lambda[hv.TermToRight] = 0, 0
		case n == "disc_only":
			s.Lambda = [hv.NumTerms]float64{1, 0, 0, 0}
		case n == "random_contexts":
			s.RandomContexts = true
		case n == "no_diversity":
			s.Diversity = false
		case n == "pearson":
			s.Similarity = "pearson"
		case strings.HasPrefix(n, "lambda="):
			ls := strings.Split(strings.TrimPrefix(n, "lambda="), ":")
			if len(ls) != hv.NumTerms {
				return nil, fmt.Errorf("--variants: %q: want lambda=a:b:c:d", n)
			}
			for i, x := range ls {
				v, err := strconv.ParseFloat(x, 64)
				if err != nil {
					return nil, fmt.Errorf("--variants: %q: %w", n, err)
				}
				s.Lambda[i] = v
			}
		case strings.HasPrefix(n, "signal_"):
			// The early check of the models: S(s1, c) and S(s2, c) over
			// the first N contexts retrieved for s1, no reranking.
			k, err := strconv.Atoi(strings.TrimPrefix(n, "signal_"))
			if err != nil || k < 1 {
				return nil, fmt.Errorf("--variants: bad context count in %q", n)
			}
			s.SetSize, s.Rerank = k, max(k, s.Rerank)
		case strings.HasPrefix(n, "set_"):
			k, err := strconv.Atoi(strings.TrimPrefix(n, "set_"))
			if err != nil || k < 1 {
				return nil, fmt.Errorf("--variants: bad set size in %q", n)
			}
			s.SetSize = k
			s.Rerank = max(s.Rerank, 2*k)
		default:
			return nil, fmt.Errorf("--variants: unknown variant %q", n)
		}
		if err := s.Validate(); err != nil {
			return nil, fmt.Errorf("variant %s: %w", n, err)
		}
		out = append(out, variant{n, s})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--variants: none given")
	}
	return out, nil
}

func report(w io.Writer, rs []result) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "variant\tSpearman x100\tother similarity\tpairs\tmean |C_s|\tmean |C|\tgen evals/pair\tseconds")
	for _, r := range rs {
		if r.MeanContexts == 0 && r.Seconds == 0 {
			fmt.Fprintf(tw, "%s\t%.2f\t-\t%d\t-\t-\t-\t-\n", r.Name, r.Spearman100, r.Pairs)
			continue
		}
		fmt.Fprintf(tw, "%s (%s)\t%.2f\t%.2f (%s)\t%d\t%.1f\t%.1f\t%.0f\t%.0f\n", r.Name, r.similarity(), r.Spearman100,
			r.Spearman100Other, r.OtherSimilarity, r.Pairs,
			r.MeanSetSize, r.MeanContexts, r.GenEvalsPair, r.Seconds)
	}
	tw.Flush()
}

func (r result) similarity() string { return otherSim(r.OtherSimilarity) }

func write(rs []result, pairs []sts.Pair, vs []variant, preds [][]float64, tf, mwv []float64,
	res *harvest.Resources, start time.Time) error {
	ctx := context.Background()
	out := map[string]any{
		"sts": *stsPath, "pairs": len(pairs), "preset": *preset, "results": rs,
		"model_fingerprint": res.Models.Fingerprint, "index_fingerprint": res.Index.Meta.ID(),
		"chunks": res.Engine.Store.Len(), "seconds": time.Since(start).Seconds(), "engine": res.Engine.Stats(),
		"schema_version": schemas.Version,
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	if err := remote.WriteFile(ctx, remote.Join(*output, "results.json"), append(b, '\n')); err != nil {
		return err
	}
	var sb strings.Builder
	sb.WriteString("gold\ttfidf\tmean_word_vectors")
	for _, v := range vs {
		sb.WriteString("\t" + v.Name)
	}
	sb.WriteString("\ts1\ts2\n")
	for i, p := range pairs {
		fmt.Fprintf(&sb, "%g\t%.5f\t%.5f", p.Gold, tf[i], mwv[i])
		for vi := range vs {
			fmt.Fprintf(&sb, "\t%.5f", preds[vi][i])
		}
		fmt.Fprintf(&sb, "\t%s\t%s\n", p.S1, p.S2)
	}
	return remote.WriteFile(ctx, remote.Join(*output, "pairs.tsv"), []byte(sb.String()))
}
