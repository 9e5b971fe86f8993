package method

import (
	"math"
	"sync/atomic"

	"github.com/ctxsim/ctxsim/scoring/contrast"
	"github.com/ctxsim/ctxsim/scoring/internal/vecmath"
	"github.com/ctxsim/ctxsim/scoring/stats"
)

// boundedScorer is a Scorer that can rank by its first term cheaply: it
// writes into a[i] a value within b[i] of that term's exact value (as
// Score computes it, to the bit), for every candidate. The rerank then
// computes exactly only the candidates whose interval can reach the kept
// ones, and keeps the same candidates in the same order as computing the
// term exactly for all of them (see Engine.rerankBounded).
type boundedScorer interface {
	Scorer
	scoreBounded(s string, cands []Cand, a, b []float32, work *Stats) bool
}

// rerankBounded is rerank through a boundedScorer: the candidates whose
// exact term can be among the n best are those whose interval
// [a-b, a+b] reaches L, the n-th largest lower end (at least n candidates
// are at or above L, so a candidate whose upper end is below L has n
// candidates strictly better). Those few are computed exactly and sorted
// as rerank sorts all of them, so the kept candidates, their order and
// their term values are the same to the bit. It returns false, having
// changed nothing, when the scorer declines or a value is not finite.
func (e *Engine) rerankBounded(bs boundedScorer, s string, cands []Cand, k, n int, work *Stats) ([]Cand, bool) {
	if n >= len(cands) {
		return nil, false
	}
	a := make([]float32, len(cands))
	b := make([]float32, len(cands))
	var w Stats
	if !bs.scoreBounded(s, cands, a, b, &w) {
		return nil, false
	}
	lower := make([]float32, len(cands))
	for i := range a {
		if !isFinite(a[i]) || !isFinite(b[i]) || b[i] < 0 {
			return nil, false
		}
		lower[i] = a[i] - b[i]
	}
	L := stats.KthLargest(lower, n)
	var idx []int32
	for i := range a {
		if a[i]+b[i] >= L {
			idx = append(idx, int32(i))
		}
	}
	sub := make([]Cand, len(idx))
	for j, i := range idx {
		sub[j] = cands[i]
	}
	e.mu.Lock()
	e.stats.add(w)
	e.mu.Unlock()
	work.add(w)
	// idx is increasing, so ties broken by position in sub are broken by
	// retrieval order, as in rerank.
	return e.keepBest(s, sub, k, n, work), true
}

func isFinite(x float32) bool { return !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) }

// dotBoundPerNorm bounds, per unit of Σ‖v_k‖ (the norms of the sentence
// sums a context adds up), how far the two ways of computing f·u can
// differ for a unit f, u = Σ v_k of up to 16 vectors and 256 to 1,024
// dimensions: Dot(f, fl(Σ v_k)) as Score computes it, and fl(Σ_k Dot(f,
// v_k)). Each float32 dot product of n terms is within γ_n·Σ|f_i||x_i| ≤
// γ_n·‖x‖ of the true value (γ_n ≈ n·2⁻²⁴, Cauchy-Schwarz with ‖f‖ = 1),
// the rounded sum u is within γ_K·Σ‖v_k‖ of the true sum, and the sum of
// the K dots within γ_K·Σ|dots|: at n = 1,024 and K = 16 the total is
// under 1.3e-4·Σ‖v_k‖. The two roundings of the scaling by 1/‖u‖ and the
// model's scale add a relative 2⁻²² of a value that is itself at most
// Σ‖v_k‖/‖u‖ times the scale. The constant is taken with room to spare.
const dotBoundPerNorm = 2.5e-4

// scoreBounded implements boundedScorer: a[i] is S(s, c) from the dot
// products of f(s) with each sentence sum of the context, each computed
// once per chunk (a chunk's contexts share most of their sentences), and
// b[i] bounds its distance from Score's value by dotBoundPerNorm times
// Σ‖v_k‖/‖u‖ times the model's scale. A context whose inverse norm is not
// cached yet is scored exactly (b[i] = 0), which caches it.
func (c *CtxScorer) scoreBounded(s string, cands []Cand, a, b []float32, work *Stats) bool {
	d := c.Model.Dim()
	if d > 1024 {
		return false
	}
	f, encoded := c.sentenceVec(s)
	if encoded {
		work.SentencesEncoded++
	}
	scale := c.Model.Scale()
	// The bound is for a unit f; scale it by ‖f‖ should f be longer.
	fNorm := max(math.Sqrt(float64(contrast.Dot(f, f)))*(1+1e-4), 1)
	c.invOnce.Do(func() { c.inv = make([]atomic.Uint32, c.store.Slots()) })
	c.normOnce.Do(func() { c.norms = make([]atomic.Uint32, c.store.Sentences()) })
	buf := make([]float32, d)
	// The dot product and norm of each sentence of the current chunk.
	type seen struct {
		k       int32
		dot, nm float32
	}
	var memo [24]seen
	m := 0
	prevRank, prevID := int32(-1), ""
	for i := range cands {
		if i+prefetchAhead < len(cands) {
			c.prefetchSums(&cands[i+prefetchAhead])
		}
		cd := &cands[i]
		if cd.Rank != prevRank || cd.ChunkID != prevID {
			m, prevRank, prevID = 0, cd.Rank, cd.ChunkID
		}
		inv, ok := c.cachedInv(cd)
		if !ok || len(cd.Left)+len(cd.Right) > 16 {
			u, inv := c.contextSum(buf, cd, work)
			a[i], b[i] = c.Model.ScoreSum(f, u, inv), 0
			continue
		}
		var dot, norms float32
		for _, side := range [2][]int32{cd.Left, cd.Right} {
			for _, k := range side {
				j := 0
				for j < m && memo[j].k != k {
					j++
				}
				if j == m {
					if m == len(memo) {
						m, j = 0, 0
					}
					v := c.sum(k, work)
					memo[m] = seen{k, vecmath.Dot(f, v), c.norm(k, v)}
					m++
				}
				dot += memo[j].dot
				norms += memo[j].nm
			}
		}
		a[i] = dot * inv * scale
		b[i] = float32(dotBoundPerNorm * fNorm * float64(norms) * float64(inv) * float64(scale))
	}
	work.CtxPairs += int64(len(cands))
	return true
}

// prefetchAhead is how many candidates ahead scoreBounded asks for the
// sums it will read: a chunk's contexts are about four candidates, so two
// chunks ahead, while the sums of the chunk at hand are being read.
const prefetchAhead = 8

// cachedInv returns the cached 1/‖u‖ of a stored context, if computed.
func (c *CtxScorer) cachedInv(cd *Cand) (float32, bool) {
	if cd.ctx == 0 || cd.ctx-1 >= uint64(len(c.inv)) {
		return 0, false
	}
	bits := c.inv[cd.ctx-1].Load()
	if bits == 0 {
		return 0, false
	}
	return math.Float32frombits(bits - 1), true
}

// norm returns ‖v‖ for the sum v of stored sentence k, rounded up
// (cached).
func (c *CtxScorer) norm(k int32, v []float32) float32 {
	if int(k) < len(c.norms) {
		if bits := c.norms[k].Load(); bits != 0 {
			return math.Float32frombits(bits - 1)
		}
	}
	nm := float32(math.Sqrt(float64(contrast.Dot(v, v))*(1+1e-4)) * (1 + 1e-6))
	if int(k) < len(c.norms) {
		c.norms[k].Store(math.Float32bits(nm) + 1)
	}
	return nm
}
