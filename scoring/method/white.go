package method

import (
	"fmt"
	"math"

	"github.com/ctxsim/ctxsim/scoring/internal/vecmath"
	"github.com/ctxsim/ctxsim/scoring/stats"
)

// Eq. 4 in whitened coordinates ("zwhite"). For the contrastive scorer
// S(s, c) = f(s)·g(c)/τ, Eq. 4 is a cosine of f(s1) and f(s2) under the
// metric Σ_c g(c)g(c)ᵀ of the contexts compared: the few directions in
// which all contexts' vectors vary most dominate it. zwhite first maps the
// context vectors by W = Σ^(-1/2), Σ their covariance over the models'
// whitening contexts (white.json: a fixed random sample of training
// contexts, so that the labels depend on the models alone; shrunk a little
// towards its mean eigenvalue), after removing the sample's mean μ, so
// that over contexts drawn like the sample Eq. 4 is the cosine of f(s1)
// and f(s2) itself, and
// over retrieved contexts it weighs the directions in which those
// contexts differ more than contexts at large. A score is
// x(s, c) = (W f(s))·(g(c) - μ) (W is symmetric); with f(s) of unit
// length its spread over the sample is 1, so this is also zref's
// standardisation, over the sample instead of the reference contexts.

// Eq. 4 as an overlap of distributions ("overlap"). zwhite's Eq. 4 is a
// cosine of the whitened scores, so for the bilinear scorer it is still a
// bilinear form in f(s1) and f(s2): the contexts can only re-weight f's
// directions. "overlap" reads each sentence's scores over C as a
// distribution, p(c|s) = e^{κ x(s,c)} / Σ_{c'∈C} e^{κ x(s,c')}, and takes
// the overlap (Bhattacharyya coefficient) of the two sentences'
// distributions, Σ_c √(p_1(c) p_2(c)). It rewards two sentences that fit
// the same few contexts best, which is not a function of f(s1)·M·f(s2)
// for any M. The overlap is exactly the cosine of the vectors e^{κx/2}
// (the normalisers cancel), so the sides, the sums and Compare are
// zwhite's, on transformed scores. κ was chosen on the train files
// (bench/results.txt, the 2026-11-28T20:17Z block): 0.5, for whitened scores of
// unit spread, among 0.5, 1, 2 and 4.
const OverlapKappa = 0.5

// Whitened reports whether the Eq. 4 measure kind reads the contrastive
// model's whitened scores: zwhite and overlap.
func Whitened(kind string) bool { return kind == SimilarityZWhite || kind == SimilarityOverlap }

// reading maps a whitened score to the value Eq. 4's cosine reads under
// kind: itself under zwhite, e^{κx/2} under overlap.
func reading(kind string) func(float64) float64 {
	if kind == SimilarityOverlap {
		return func(x float64) float64 { return math.Exp(OverlapKappa / 2 * x) }
	}
	return func(x float64) float64 { return x }
}

// whiteShrink pulls Σ towards its mean eigenvalue: (1-a)Σ + a·tr(Σ)/d·I.
const whiteShrink = 0.05

// whitening is W (row-major) and μ of one engine's store and model.
type whitening struct {
	w, mu []float32
}

// whiteVec is W f(s) of a sentence and its offset (W f(s))·μ.
type whiteVec struct {
	f []float32
	m float64
}

// whitened returns the engine's whitening for the contrastive scorer c,
// built on first use from the models' whitening contexts.
func (e *Engine) whitened(c *CtxScorer, work *Stats) *whitening {
	e.whiteOnce.Do(func() {
		cands := e.whiteSample // read only: contextSum does not change a candidate
		d := c.Model.Dim()
		gs := make([][]float32, 0, len(cands))
		buf := make([]float32, d)
		for i := range cands {
			u, inv := c.contextSum(buf, &cands[i], work)
			g := make([]float32, d)
			for j := range g {
				g[j] = u[j] * inv
			}
			gs = append(gs, g)
		}
		wh := &whitening{w: make([]float32, d*d), mu: make([]float32, d)}
		if len(gs) > 1 {
			mu, w := stats.Whitening(gs, 1, whiteShrink)
			for i := range w {
				wh.w[i] = float32(w[i])
			}
			for i := range mu {
				wh.mu[i] = float32(mu[i])
			}
		} else {
			for i := range d {
				wh.w[i*d+i] = 1
			}
		}
		e.white = wh
	})
	return e.white
}

// whiteOf returns W f(s) and its offset for sentence s, from the engine's
// cache or computed now.
func (e *Engine) whiteOf(c *CtxScorer, s string, work *Stats) whiteVec {
	wh := e.whitened(c, work)
	e.whiteMu.Lock()
	v, ok := e.whiteVecs[s]
	e.whiteMu.Unlock()
	if ok {
		return v
	}
	f, encoded := c.sentenceVec(s)
	if encoded {
		work.SentencesEncoded++
	}
	d := len(f)
	v.f = make([]float32, d)
	for i := range d {
		var t float64
		row := wh.w[i*d : i*d+d]
		for j := range d {
			t += float64(row[j]) * float64(f[j])
		}
		v.f[i] = float32(t)
	}
	for i := range d {
		v.m += float64(v.f[i]) * float64(wh.mu[i])
	}
	e.whiteMu.Lock()
	if e.whiteVecs == nil || len(e.whiteVecs) >= maxSentenceVecs {
		e.whiteVecs = map[string]whiteVec{}
	}
	e.whiteVecs[s] = v
	e.whiteMu.Unlock()
	return v
}

// score is x(s, c) for the context whose unnormalised vector sum is u,
// with 1/‖u‖ = inv.
func (v whiteVec) score(u []float32, inv float32) float64 {
	return float64(vecmath.Dot(v.f, u))*float64(inv) - v.m
}

// whiteScorer returns the contrastive scorer when the settings' weights
// use it alone, as zwhite requires.
func (e *Engine) whiteScorer(st Settings) (*CtxScorer, error) {
	cs, _, ok := e.ctxOnly(st.Lambda)
	if !ok {
		return nil, fmt.Errorf("harvest: similarity %q needs the contrastive model's term alone (--lambda=%s:1), got lambda %s; "+
			"for other terms choose --similarity=%s", st.Similarity, TermCtx, FormatLambda(st.Lambda), SimilarityZRef)
	}
	return cs, nil
}

// whiteVectors returns Eq. 4's two score vectors under zwhite or overlap
// (kind) over C = C_a + C_b (C_a, then the contexts of C_b not in C_a, in
// the order of vectors).
func (e *Engine) whiteVectors(c *CtxScorer, kind, a, b string, setA, setB []Cand, work *Stats) (va, vb []float64) {
	fa, fb := e.whiteOf(c, a, work), e.whiteOf(c, b, work)
	r := reading(kind)
	buf := make([]float32, c.Model.Dim())
	seen := map[string]bool{}
	for _, set := range [][]Cand{setA, setB} {
		for i := range set {
			k := set[i].Key()
			if seen[k] {
				continue
			}
			seen[k] = true
			u, inv := c.contextSum(buf, &set[i], work)
			va = append(va, r(fa.score(u, inv)))
			vb = append(vb, r(fb.score(u, inv)))
		}
	}
	work.CtxPairs += 2 * int64(len(va))
	return va, vb
}

// mustWhiteScorer is whiteScorer for callers that cannot return an error:
// Engine.Check refuses such settings before any label is made, so reaching
// here with them is a caller's bug, not bad input, and no label is made
// from scores zwhite does not define.
func (e *Engine) mustWhiteScorer(st Settings) *CtxScorer {
	c, err := e.whiteScorer(st)
	if err != nil {
		panic(fmt.Sprintf("%v (Engine.Check was not called)", err))
	}
	return c
}

// labelSideWhite is LabelSide under zwhite: both sentences' scores of each
// context are computed from its vector sum, kept in sd for the side's
// later batches.
func (e *Engine) labelSideWhite(c *CtxScorer, kind string, sd *Side, jobs []SideJob, keep [][]int, ownFirst bool, work *Stats) {
	own := e.whiteOf(c, sd.own, work)
	r := reading(kind)
	for n, j := range jobs {
		other := e.whiteOf(c, j.Other, work)
		for _, i := range keep[n] {
			u, inv := c.sideSum(sd, i, work)
			o, x := r(own.score(u, inv)), r(other.score(u, inv))
			if ownFirst {
				j.Sums.add(o, x)
			} else {
				j.Sums.add(x, o)
			}
		}
		work.CtxPairs += 2 * int64(len(keep[n])) // the own score too: the set's is not zwhite's
	}
}

// labelManyWhite is LabelMany under zwhite: each pair's Eq. 4 is the cosine
// of its whitened score vectors, summed in the order the sides add them.
func (e *Engine) labelManyWhite(pairs []PairInput, st Settings) ([]PairLabel, Stats) {
	out := make([]PairLabel, len(pairs))
	c := e.mustWhiteScorer(st)
	var all Stats
	for n, p := range pairs {
		var w Stats
		va, vb := e.whiteVectors(c, st.Similarity, p.A, p.B, p.SetA, p.SetB, &w)
		l := e.Parts(p.A, p.B)
		l.Context, l.Contexts, l.Work = float64(float32(Similarity(va, vb, SimilarityCosine))), len(va), w
		l.Label = Combine(st, l)
		out[n] = l
		all.add(w)
	}
	// The engine's counts include this work, as ScoreMany's do under the
	// other similarities.
	e.mu.Lock()
	e.stats.add(all)
	e.mu.Unlock()
	return out, Stats{}
}
