// Package evaluation measures label quality directly ("Origin"): for each
// pair of an STS file it builds C_s1 and C_s2 against the corpus index with
// the harvest's own code, labels the pair with Eq. 4 (and the hybrid
// labeler), and reports the Spearman correlation (×100) with the gold
// scores, beside baselines and ablations computed on the same pairs. It is
// the evaluate job's body.
package evaluation

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ctxsim/ctxsim/pipelines/internal/report"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/scoring/stats"
	"github.com/ctxsim/ctxsim/scoring/sts"
	"gonum.org/v1/plot"
)

// VariantHelp describes the variants for a job's usage text.
const VariantHelp = `  origin           the settings given (--preset plus overrides)
  paper            the paper's terms, rerank and similarity (disc + to_s +
                   to_left + to_right, cosine) at the same depth
  no_disc          without the coherence term (its weight set to 0)
  no_left_right    without the left and right context terms
  disc_only        the coherence term alone
  random_contexts  random corpus contexts instead of retrieved ones
  no_diversity     without the one-per-chunk and Jaccard constraints
  set_N            |C_s| = N (R raised to 2N when smaller)
  pearson, cosine,
  zref, zwhite     Eq. 4 with this similarity (variants that change the
                   terms read zwhite as zref: it needs the ctx term alone)
  hybrid, ensemble,
  aligned          the label under this labeler (Eq. 4 is the same as origin's)
  lambda(t:w,...)  Eq. 3 with these weights, e.g. lambda(ctx:1,disc:0.5)
  rerank_by(t)     candidates ranked by term t down to R
  signal_N         S(s1, c) and S(s2, c) on the first N contexts retrieved
                   for s1, without reranking or C_s (an early model check)`

// Variant is a named change of the base settings.
type Variant struct {
	Name     string          `json:"name"`
	Settings method.Settings `json:"settings"`
}

// Result is one row of the table: a baseline or a variant.
type Result struct {
	Name string `json:"name"`
	// Spearman100 is the label's Spearman ×100: Eq. 4 for a variant whose
	// labeler is origin, the hybrid for one whose labeler is hybrid, the
	// similarity itself for a baseline.
	Spearman100 float64 `json:"spearman_x100"`
	Labeler     string  `json:"labeler,omitempty"`
	// Eq4Spearman100 is Eq. 4 alone (pure Origin), and
	// Eq4OtherSpearman100 the same contexts under the other similarity
	// (pearson when the variant uses cosine, and back).
	Eq4Spearman100      *float64 `json:"eq4_spearman_x100,omitempty"`
	Eq4OtherSpearman100 *float64 `json:"eq4_spearman_x100_other_similarity,omitempty"`
	OtherSimilarity     string   `json:"other_similarity,omitempty"`
	Pairs               int      `json:"pairs"`
	MeanContexts        float64  `json:"mean_union_contexts,omitempty"`
	MeanSetSize         float64  `json:"mean_set_size,omitempty"`
	GenEvalsPair        float64  `json:"gen_evals_per_pair,omitempty"`
	CtxPairsPair        float64  `json:"ctx_pairs_per_pair,omitempty"`
	Seconds             float64  `json:"seconds,omitempty"`
	Settings            any      `json:"settings,omitempty"`
	Note                string   `json:"note,omitempty"`
}

// Resources are what an evaluation reads: the chunk store with an engine
// over it, the models, and a search function over the index.
type Resources struct {
	Engine *method.Engine
	Models *method.Models
	Search func(ctx context.Context, text string, k int) ([]schemas.Hit, error)
}

// Config is one evaluation.
type Config struct {
	// Pairs are the STS pairs to label.
	Pairs    []sts.Pair
	Base     method.Settings
	Variants []Variant
	// Workers is the number of pairs labeled at once (0: one per CPU).
	Workers int
	// Seed drives the random-context ablation.
	Seed uint64
	// Progress, when set, receives a line now and then.
	Progress io.Writer
}

// Output is an evaluation's results and every pair's predictions.
type Output struct {
	Results []Result
	// Columns names the prediction columns: the baselines, then for each
	// variant its label and its Eq. 4 value.
	Columns []string
	// Pred[c][i] is column c's prediction for pair i.
	Pred [][]float64
	Gold []float64
}

// Run labels every pair under every variant and computes the baselines.
func Run(ctx context.Context, cfg Config, res *Resources) (*Output, error) {
	for _, v := range cfg.Variants {
		if err := res.Engine.Check(v.Settings); err != nil {
			return nil, fmt.Errorf("variant %s: %w", v.Name, err)
		}
	}
	out := &Output{Gold: make([]float64, len(cfg.Pairs))}
	for i, p := range cfg.Pairs {
		out.Gold[i] = p.Gold
	}
	out.addBaselines(res, cfg.Pairs)
	l := newLabeling(cfg, res)
	if err := l.run(ctx); err != nil {
		return nil, err
	}
	out.addVariants(cfg.Variants, l)
	return out, nil
}

// addBaselines adds a result and a prediction column for each baseline.
func (o *Output) addBaselines(res *Resources, pairs []sts.Pair) {
	for _, b := range baselines(res.Models, res.Engine) {
		pred := make([]float64, len(pairs))
		for i, p := range pairs {
			pred[i] = b.sim(p.S1, p.S2)
		}
		o.Results = append(o.Results, Result{Name: b.name, Spearman100: 100 * stats.Spearman(pred, o.Gold),
			Pairs: len(pairs), Note: b.note})
		o.Columns = append(o.Columns, b.name)
		o.Pred = append(o.Pred, pred)
	}
}

// addVariants adds each variant's result and its two prediction columns
// (its label and its Eq. 4 value) from a finished labeling.
func (o *Output) addVariants(vs []Variant, l *labeling) {
	np := float64(len(o.Gold))
	for vi, v := range vs {
		a := l.work[vi]
		e4 := 100 * stats.Spearman(l.eq4[vi], o.Gold)
		o4 := 100 * stats.Spearman(l.other[vi], o.Gold)
		o.Results = append(o.Results, Result{Name: v.Name, Spearman100: 100 * stats.Spearman(l.labels[vi], o.Gold),
			Labeler: v.Settings.Labeler, Eq4Spearman100: &e4, Eq4OtherSpearman100: &o4,
			OtherSimilarity: otherSim(v.Settings.Similarity), Pairs: len(o.Gold),
			MeanContexts: a.union / np, MeanSetSize: a.setSize / np,
			GenEvalsPair: float64(a.evals) / np, CtxPairsPair: float64(a.ctxPairs) / np,
			Seconds: a.seconds, Settings: v.Settings})
		o.Columns = append(o.Columns, v.Name, v.Name+":eq4")
		o.Pred = append(o.Pred, l.labels[vi], l.eq4[vi])
	}
}

// labeling holds every variant's values for every pair, indexed
// [variant][pair], and each variant's work summed over the pairs.
type labeling struct {
	cfg                Config
	res                *Resources
	maxK               int
	labels, eq4, other [][]float64

	mu          sync.Mutex // guards work, done and tick
	work        []variantWork
	done        int
	start, tick time.Time
}

// variantWork is what one variant's labels took, summed over pairs.
type variantWork struct {
	union, setSize  float64
	evals, ctxPairs int64
	seconds         float64
}

func newLabeling(cfg Config, res *Resources) *labeling {
	maxK := 0
	for _, v := range cfg.Variants {
		maxK = max(maxK, v.Settings.TopK)
	}
	nv, np := len(cfg.Variants), len(cfg.Pairs)
	return &labeling{cfg: cfg, res: res, maxK: maxK, labels: grid(nv, np), eq4: grid(nv, np), other: grid(nv, np),
		work: make([]variantWork, nv)}
}

// run labels every pair on cfg.Workers goroutines (0: one per CPU).
func (l *labeling) run(ctx context.Context) error {
	n := l.cfg.Workers
	if n <= 0 {
		n = max(1, runtime.NumCPU())
	}
	l.start, l.tick = time.Now(), time.Now()
	return parallel(len(l.cfg.Pairs), n, func(i int) error { return l.pair(ctx, i) })
}

// pair retrieves for both sentences of pair i and labels the pair under
// every variant.
func (l *labeling) pair(ctx context.Context, i int) error {
	p := l.cfg.Pairs[i]
	h1, err1 := l.res.Search(ctx, p.S1, l.maxK)
	h2, err2 := l.res.Search(ctx, p.S2, l.maxK)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	for vi, v := range l.cfg.Variants {
		t0 := time.Now()
		r := labelPair(l.res.Engine, p, h1, h2, v, l.cfg.Seed)
		l.labels[vi][i], l.eq4[vi][i], l.other[vi][i] = r.label, r.eq4, r.other
		l.mu.Lock()
		w := &l.work[vi]
		w.union += r.union
		w.setSize += r.setSize
		w.evals += r.work.GenEvals
		w.ctxPairs += r.work.CtxPairs
		w.seconds += time.Since(t0).Seconds()
		l.mu.Unlock()
	}
	l.progress()
	return nil
}

// progress counts a labeled pair and, at most every 10 seconds, writes a
// line to cfg.Progress.
func (l *labeling) progress() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.done++
	if l.cfg.Progress != nil && time.Since(l.tick) > 10*time.Second {
		l.tick = time.Now()
		fmt.Fprintf(l.cfg.Progress, "evaluate: %d/%d pairs (%.0fs)\n", l.done, len(l.cfg.Pairs), time.Since(l.start).Seconds())
	}
}

// pairLabel is one variant's values for one pair: its label, Eq. 4 under
// the variant's similarity and under the other one, the sizes of the
// contexts compared, and the work computed for it.
type pairLabel struct {
	label, eq4, other float64
	union, setSize    float64
	work              method.Stats
}

// labelPair labels pair p under variant v from the hits h1 and h2 of its
// sentences.
func labelPair(e *method.Engine, p sts.Pair, h1, h2 []schemas.Hit, v Variant, seed uint64) pairLabel {
	st := v.Settings
	var r pairLabel
	var va, vb []float64
	if strings.HasPrefix(v.Name, "signal_") {
		va, vb, r.work = signal(e, p.S1, p.S2, h1, st)
		r.union, r.setSize = float64(len(va)), float64(len(va))
	} else {
		a, ia := e.ContextSet(p.S1, h1[:min(len(h1), st.TopK)], st, pairSeed(seed, p.S1))
		b, ib := e.ContextSet(p.S2, h2[:min(len(h2), st.TopK)], st, pairSeed(seed, p.S2))
		var lw method.Stats
		va, vb, lw = e.LabelVectors(p.S1, p.S2, a, b, st)
		r.union, r.setSize = float64(len(va)), float64(len(a)+len(b))/2
		// Work computed for this variant; what it found cached from
		// earlier variants is not counted.
		r.work = ia.Work
		r.work.GenEvals += ib.Work.GenEvals + lw.GenEvals
		r.work.CtxPairs += ib.Work.CtxPairs + lw.CtxPairs
	}
	var cw method.Stats
	r.eq4, cw = e.Compare(p.S1, p.S2, va, vb, st.Similarity, st.Lambda)
	r.work.GenEvals += cw.GenEvals
	r.work.CtxPairs += cw.CtxPairs
	r.other, _ = e.Compare(p.S1, p.S2, va, vb, otherSim(st.Similarity), st.Lambda)
	parts := e.Parts(p.S1, p.S2)
	parts.Context = float64(float32(r.eq4))
	r.label = method.Combine(st, parts)
	return r
}

func grid(n, m int) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, m)
	}
	return out
}

// baseline is a similarity that needs no contexts.
type baseline struct {
	name, note string
	sim        func(a, b string) float64
}

// baselines are the unigram TF-IDF cosine (IDF over the corpus chunks), its
// stemmed variant, the contrastive model's own sentence-vector cosine when
// that model is loaded, and the IDF-weighted mean of the coherence model's
// subword embeddings when that model is loaded.
func baselines(m *method.Models, e *method.Engine) []baseline {
	tf, stem := e.Lexical(false), e.Lexical(true)
	out := []baseline{
		{"tfidf", "unigram TF-IDF cosine, IDF over the corpus chunks", tf.Cosine},
		{"tfidf_stem", "the same over Porter stems", stem.Cosine},
	}
	if cos := m.SentenceCosine(); cos != nil {
		out = append(out, baseline{"ctx_cosine", "cosine of the contrastive model's sentence vectors f(s1), f(s2) (no contexts)", cos},
			baseline{"ctx_cosine+tfidf_stem", "the hybrid rule over ctx_cosine instead of Eq. 4",
				func(a, b string) float64 { return method.Hybrid(cos(a, b), stem.Cosine(a, b)) }})
	}
	if al := m.AlignSimilarity(); al != nil {
		out = append(out, baseline{"ctx_align", "word alignment over the contrastive model's word vectors (F1 of IDF-weighted best matches)", al})
	}
	if emb, dim := m.SubwordEmbeddings(); emb != nil {
		out = append(out, baseline{"mean_word_vectors", "IDF-weighted mean of the coherence model's subword embeddings",
			func(a, b string) float64 {
				return method.Similarity(tf.MeanWordVector(emb, dim, m.Encode, a), tf.MeanWordVector(emb, dim, m.Encode, b), "cosine")
			}})
	}
	return out
}

// signal scores both sentences on the first st.SetSize contexts of s1's
// retrieved chunks and compares the score vectors.
func signal(e *method.Engine, s1, s2 string, h1 []schemas.Hit, st method.Settings) (va, vb []float64, w method.Stats) {
	cands, _ := e.Candidates(h1)
	cands = cands[:min(len(cands), st.SetSize)]
	other := append([]method.Cand(nil), cands...)
	w = e.Score(s1, cands, st.Lambda)
	w2 := e.Score(s2, other, st.Lambda)
	w.GenEvals += w2.GenEvals
	w.CtxPairs += w2.CtxPairs
	va, vb = make([]float64, len(cands)), make([]float64, len(cands))
	for i := range cands {
		va[i], vb[i] = float64(cands[i].S), float64(other[i].S)
	}
	return va, vb, w
}

// otherSim is the similarity a variant's contexts are also compared with:
// pearson for zref and cosine, cosine for pearson.
func otherSim(s string) string {
	if s == method.SimilarityPearson {
		return method.SimilarityCosine
	}
	return method.SimilarityPearson
}

func pairSeed(seed uint64, s string) uint64 {
	h := fnv.New64a()
	io.WriteString(h, s)
	return seed ^ h.Sum64()
}

// SplitVariants splits a comma-separated list of variants, keeping the
// commas inside parentheses (lambda(ctx:1,disc:1)).
func SplitVariants(v string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range v {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				if s := strings.TrimSpace(v[start:i]); s != "" {
					out = append(out, s)
				}
				start = i + 1
			}
		}
	}
	if s := strings.TrimSpace(v[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// argOf returns the argument of name(arg), or false.
func argOf(v, name string) (string, bool) {
	if !strings.HasPrefix(v, name+"(") || !strings.HasSuffix(v, ")") {
		return "", false
	}
	return v[len(name)+1 : len(v)-1], true
}

// MakeVariants turns variant names into settings derived from base.
func MakeVariants(base method.Settings, names []string) ([]Variant, error) {
	var out []Variant
	for _, n := range names {
		s := base
		s.Lambda = copyLambda(base.Lambda)
		if arg, ok := argOf(n, "lambda"); ok {
			l, err := method.ParseLambda(arg)
			if err != nil {
				return nil, fmt.Errorf("--variants: %q: %w", n, err)
			}
			s.Lambda = l
		} else if arg, ok := argOf(n, "rerank_by"); ok {
			s.RerankBy = strings.TrimSpace(arg)
		} else {
			switch {
			case n == "origin":
			case n == "paper":
				p := method.Paper()
				s.Lambda, s.RerankBy, s.Similarity, s.Labeler = p.Lambda, p.RerankBy, p.Similarity, p.Labeler
			case n == "no_disc":
				delete(s.Lambda, method.TermDisc)
			case n == "no_left_right":
				delete(s.Lambda, method.TermToLeft)
				delete(s.Lambda, method.TermToRight)
			case n == "disc_only":
				s.Lambda = map[string]float64{method.TermDisc: 1}
			case n == "random_contexts":
				s.RandomContexts = true
			case n == "no_diversity":
				s.Diversity = false
			case n == method.SimilarityPearson || n == method.SimilarityCosine || n == method.SimilarityZRef ||
				method.Whitened(n):
				s.Similarity = n
			case n == method.LabelerHybrid || n == method.LabelerEnsemble || n == method.LabelerAligned:
				s.Labeler = n
			case strings.HasPrefix(n, "signal_"):
				// The early check of the models: S(s1, c) and S(s2, c)
				// over the first N contexts retrieved for s1, no reranking.
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
		}
		// A variant that changes the terms reads the base's zwhite as zref
		// (zwhite is defined for the contrastive term alone); the zwhite
		// variant asks for it by name, and the engine refuses it where the
		// terms are others.
		if !method.Whitened(n) {
			s = s.WithTermsSimilarity()
		}
		if err := s.Validate(); err != nil {
			return nil, fmt.Errorf("variant %s: %w", n, err)
		}
		out = append(out, Variant{n, s})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--variants: none given")
	}
	return out, nil
}

func copyLambda(l map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(l))
	for k, v := range l {
		out[k] = v
	}
	return out
}

// DisplayName is how tables and reports name a result: the variant key
// "origin" (the settings given, as --variants names it) reads "configured",
// so that "origin" names only the labeler (Eq. 4 alone, the paper's).
func DisplayName(name string) string {
	if name == "origin" {
		return "configured"
	}
	return name
}

// LabelerName is how tables and reports name a labeler.
func LabelerName(labeler string) string {
	switch labeler {
	case method.LabelerOrigin:
		return "Eq. 4 alone"
	case method.LabelerHybrid:
		return "hybrid"
	case method.LabelerEnsemble:
		return "ensemble"
	case method.LabelerAligned:
		return "aligned"
	case method.LabelerLexical:
		return "lexical"
	}
	return labeler
}

// rowName is a result's name with its labeler, "configured (hybrid)".
func rowName(r Result) string {
	if r.Labeler == "" {
		return DisplayName(r.Name)
	}
	return DisplayName(r.Name) + " (" + LabelerName(r.Labeler) + ")"
}

// Table writes the results as a table.
func Table(w io.Writer, rs []Result) {
	fmt.Fprintf(w, "%-28s %14s %12s %18s %6s %9s %9s %14s %12s %8s\n", "variant", "Spearman x100", "Eq. 4 alone",
		"Eq. 4, other sim.", "pairs", "mean |C_s|", "mean |C|", "gen evals/pair", "ctx pairs/pair", "seconds")
	for _, r := range rs {
		if r.Eq4Spearman100 == nil {
			fmt.Fprintf(w, "%-28s %14.2f %12s %18s %6d\n", r.Name, r.Spearman100, "-", "-", r.Pairs)
			continue
		}
		fmt.Fprintf(w, "%-28s %14.2f %12.2f %12.2f (%s) %6d %9.1f %9.1f %14.0f %12.0f %8.0f\n", rowName(r), r.Spearman100,
			*r.Eq4Spearman100, *r.Eq4OtherSpearman100, r.OtherSimilarity[:3], r.Pairs, r.MeanSetSize, r.MeanContexts,
			r.GenEvalsPair, r.CtxPairsPair, r.Seconds)
	}
}

// baselineNames are how a verdict's sentence names the baselines it knows;
// any other baseline is named by its key.
var baselineNames = map[string]string{
	"tfidf_stem":            "the stemmed TF-IDF baseline",
	"tfidf":                 "the unigram TF-IDF baseline",
	"ctx_cosine":            "the context model's own cosine",
	"ctx_cosine+tfidf_stem": "the hybrid rule over the context model's cosine",
	"ctx_align":             "the context model's word alignment",
	"mean_word_vectors":     "the mean of the coherence model's word vectors",
}

// Verdict says in words how the first variant's label, and its Eq. 4
// alone, compare with every baseline that was run (below the strongest of
// them is a warning: a label that a baseline beats is not worth its
// cost), and how far a Spearman on this many pairs can be trusted. It is
// empty without a variant.
func (o *Output) Verdict() []report.Finding {
	var first *Result
	var base []Result // the baselines, in the order they ran
	for i, r := range o.Results {
		if r.Eq4Spearman100 == nil {
			base = append(base, r)
		} else if first == nil {
			first = &o.Results[i]
		}
	}
	if first == nil {
		return nil
	}
	// Strongest first, so that each clause names the bar to clear first.
	sort.SliceStable(base, func(i, j int) bool { return base[i].Spearman100 > base[j].Spearman100 })
	compare := func(subject string, v float64, isLabel bool) report.Finding {
		level := report.Good
		rel := map[string][]string{}
		var best *Result
		for i, b := range base {
			name := baselineNames[b.Name]
			if name == "" {
				name = b.Name
			}
			k := "above"
			switch {
			case v < b.Spearman100:
				k = "below"
				level = report.Warn
			case v == b.Spearman100:
				k = "level with"
			}
			rel[k] = append(rel[k], fmt.Sprintf("%s (%.1f)", name, b.Spearman100))
			if best == nil || b.Spearman100 > best.Spearman100 {
				best = &base[i]
			}
		}
		var parts []string
		for _, k := range []string{"below", "level with", "above"} {
			if len(rel[k]) > 0 {
				parts = append(parts, k+" "+joinAnd(rel[k]))
			}
		}
		text := fmt.Sprintf("%s scores %.1f Spearman ×100 on these %d pairs", subject, v, len(o.Gold))
		if len(parts) > 0 {
			text += ": " + strings.Join(parts, "; ")
		}
		text += "."
		if level == report.Warn && isLabel {
			text += fmt.Sprintf(" It does not clear the bar: %s scores higher without contexts, so the labels are not worth their cost.", best.Name)
		}
		return report.Finding{Level: level, Text: text}
	}
	var out []report.Finding
	name := DisplayName(first.Name)
	if name == "configured" {
		name = "the configured settings"
	}
	if first.Labeler != method.LabelerOrigin {
		out = append(out, compare(fmt.Sprintf("The harvested label (%s, %s labeler)", name, first.Labeler), first.Spearman100, true))
		out = append(out, compare(fmt.Sprintf("Eq. 4 alone (%s, the context signal without the %s rule)", name, first.Labeler), *first.Eq4Spearman100, false))
	} else {
		out = append(out, compare(fmt.Sprintf("The harvested label (%s: Eq. 4 alone)", name), first.Spearman100, true))
	}
	if n := len(o.Gold); n > 3 {
		r := math.Max(-0.999, math.Min(0.999, first.Spearman100/100))
		z, se := math.Atanh(r), 1.06/math.Sqrt(float64(n-3))
		half := 100 * (math.Tanh(z+1.96*se) - math.Tanh(z-1.96*se)) / 2
		out = append(out, report.Finding{Level: report.Info, Text: fmt.Sprintf("On %d pairs a Spearman ×100 of %.1f is known to about ±%.1f "+
			"(95%%, Fisher z): differences between rows smaller than that may not hold on other pairs; use more pairs (--pairs=0: "+
			"the whole file) before drawing conclusions.", n, first.Spearman100, half)})
	}
	return out
}

// joinAnd joins parts as "a, b and c".
func joinAnd(parts []string) string {
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// Report builds the evaluation's report: the verdict in words, the table
// of baselines and variants, and the first variant's Eq. 4 alone, its
// label under its labeler when that differs, and the TF-IDF baselines
// plotted against the gold score.
func (o *Output) Report(title, source string) (*report.Report, error) {
	r := report.New(title)
	if v := o.Verdict(); len(v) > 0 {
		r.Callout("Verdict", v)
	}
	r.Text("STS file: %s, %d pairs. Spearman ×100 against the gold scores; each variant's label under its labeler, "+
		"Eq. 4 alone and Eq. 4 under the other similarity. Rows without contexts are baselines. “configured” is the "+
		"variant --variants calls origin: the settings given (--preset plus overrides). Labelers: Eq. 4 alone (labeler "+
		"origin, the paper's), hybrid ((Eq. 4 + stemmed TF-IDF cosine)/2), ensemble (the mean of Eq. 4, that cosine and "+
		"the context model's sentence-vector cosine), aligned ((8 × the context model's word alignment "+
		"+ Eq. 4 + its sentence-vector cosine)/10; under the overlap similarity, (alignment + Eq. 4)/2).", source, len(o.Gold))
	var rows [][]string
	for _, x := range o.Results {
		row := []string{DisplayName(x.Name), "baseline", fmt.Sprintf("%.2f", x.Spearman100), "-", "-", "-", "-", "-", "-"}
		if x.Eq4Spearman100 != nil {
			row = []string{DisplayName(x.Name), LabelerName(x.Labeler), fmt.Sprintf("%.2f", x.Spearman100),
				fmt.Sprintf("%.2f", *x.Eq4Spearman100), fmt.Sprintf("%.2f (%s)", *x.Eq4OtherSpearman100, x.OtherSimilarity),
				fmt.Sprintf("%.1f", x.MeanContexts), fmt.Sprintf("%.0f", x.GenEvalsPair), fmt.Sprintf("%.0f", x.CtxPairsPair),
				fmt.Sprintf("%.0f", x.Seconds)}
		}
		rows = append(rows, row)
	}
	r.Table([]string{"row", "labeler", "Spearman ×100", "Eq. 4 alone", "Eq. 4, other similarity", "mean |C|", "gen. evals/pair",
		"ctx scores/pair", "seconds"}, rows)
	col := func(name string) []float64 {
		for i, c := range o.Columns {
			if c == name {
				return o.Pred[i]
			}
		}
		return nil
	}
	var first *Result
	for i := range o.Results {
		if o.Results[i].Eq4Spearman100 != nil {
			first = &o.Results[i]
			break
		}
	}
	type panel struct {
		name, column string
		sp           float64
	}
	var panels []panel
	if first != nil {
		name := DisplayName(first.Name)
		panels = append(panels, panel{"Eq. 4 alone (" + name + ")", first.Name + ":eq4", *first.Eq4Spearman100})
		if first.Labeler != method.LabelerOrigin {
			panels = append(panels, panel{"Label, " + LabelerName(first.Labeler) + " (" + name + ")", first.Name, first.Spearman100})
		}
	}
	for _, x := range o.Results {
		switch x.Name {
		case "tfidf_stem":
			panels = append(panels, panel{"Stemmed TF-IDF cosine", x.Name, x.Spearman100})
		case "ctx_cosine":
			panels = append(panels, panel{"Context model's cosine", x.Name, x.Spearman100})
		}
	}
	r.Heading("Labels against gold scores")
	for i := 0; i < len(panels); i += 2 {
		var plots []*plot.Plot
		var alts []string
		for _, p := range panels[i:min(i+2, len(panels))] {
			pl, err := report.Scatter(fmt.Sprintf("%s: Spearman ×100 = %.2f", p.name, p.sp), "gold score", "prediction", o.Gold, col(p.column))
			if err != nil {
				return nil, err
			}
			plots, alts = append(plots, pl), append(alts, p.name+" against the gold score")
		}
		if err := r.PlotRow(plots, 2, 5.4, 4.2, alts); err != nil {
			return nil, err
		}
	}
	return r, nil
}
