package method

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ctxsim/ctxsim/scoring/contrast"
	"github.com/ctxsim/ctxsim/scoring/disc"
	"github.com/ctxsim/ctxsim/scoring/examples"
	"github.com/ctxsim/ctxsim/scoring/gen"
	"github.com/ctxsim/ctxsim/scoring/internal/vecmath"
	"github.com/ctxsim/ctxsim/scoring/tokenizer"
)

// Names of the terms of Eq. 3 that the project's scorers compute.
const (
	// TermCtx is the contrastive context model's score f(s)·g(c)/τ, an
	// estimate of log p(s | c) − log p(s) up to a constant per sentence.
	TermCtx = "ctx"
	// TermDisc is log p(y=1 | c_<i, s, c_>i), Eq. 1.
	TermDisc = "disc"
	// TermToS is (1/|s|) log p(s | c_<i, c_>i).
	TermToS = "to_s"
	// TermToLeft is (1/|c_<i|) log p(c_<i | s, c_>i).
	TermToLeft = "to_left"
	// TermToRight is (1/|c_>i|) log p(c_>i | c_<i, s).
	TermToRight = "to_right"
)

// A Scorer computes terms of Eq. 3: how well a sentence fits contexts of
// the corpus. The engine asks it only for what its cache lacks, and knows
// nothing of its model; a new scorer plugs in by implementing this.
type Scorer interface {
	// Terms names the terms the scorer computes, in a fixed order.
	Terms() []string
	// Score computes, for sentence s and each candidate cands[i], the terms
	// whose bit is set in want[i] (bit k for Terms()[k]), writing term k of
	// candidate i into out[k][i] (out[k] has len(cands) entries), and adds
	// the work it did to work. It is called from several goroutines at once.
	Score(s string, cands []Cand, want []uint64, out [][]float32, work *Stats)
}

// ScoreItem is one sentence's share of a BatchScorer call: the arguments
// of Scorer.Score.
type ScoreItem struct {
	S     string
	Cands []Cand
	Want  []uint64
	Out   [][]float32
}

// A BatchScorer is a scorer that also scores several sentences in one
// call, so that their work fills the same batches and is shared where it
// can be (the generative model encodes a context once for all the
// sentences scored in it). Each item's results are those Score gives it.
type BatchScorer interface {
	Scorer
	ScoreBatch(items []ScoreItem, work *Stats)
}

// An Embedder is a scorer whose model also compares two sentences on their
// own, without contexts. The contrastive model's f(a)·f(b) is one: f is
// learnt only from which contexts a sentence fits, so two sentences whose
// vectors agree are expected to fit the same contexts.
type Embedder interface {
	// SentenceSimilarity is the cosine of the two sentences' vectors.
	SentenceSimilarity(a, b string) float64
}

// An Aligner is a scorer whose model also compares two sentences word by
// word (contrast.Model.AlignSimilarity).
type Aligner interface {
	// AlignSimilarity is the F1 of the two sentences' best word matches.
	AlignSimilarity(a, b string) float64
}

// TokenCache tokenizes the stored sentences once, for the scorers that read
// subword tokens.
type TokenCache struct {
	Tok   *tokenizer.Tokenizer
	store *Store

	mu   sync.Mutex
	toks [][]int32
}

// NewTokenCache returns an empty cache over the store's sentences.
func NewTokenCache(tok *tokenizer.Tokenizer, st *Store) *TokenCache {
	return &TokenCache{Tok: tok, store: st, toks: make([][]int32, st.Sentences())}
}

// Tokens returns the token IDs of stored sentences.
func (c *TokenCache) Tokens(ks []int32) [][]int32 {
	out := make([][]int32, len(ks))
	var miss []int
	c.mu.Lock()
	for i, k := range ks {
		if out[i] = c.toks[k]; out[i] == nil {
			miss = append(miss, i)
		}
	}
	c.mu.Unlock()
	if len(miss) == 0 {
		return out
	}
	for _, i := range miss {
		out[i] = c.Tok.Encode(c.store.Text(ks[i]))
	}
	c.mu.Lock()
	for _, i := range miss {
		c.toks[ks[i]] = out[i]
	}
	c.mu.Unlock()
	return out
}

// DiscScorer computes the coherence term (TermDisc) with the BiLSTM model
// of Eq. 1: each stored sentence is encoded once and cached, a context is
// the mean of its sentences' vectors, and a pair costs only the head.
type DiscScorer struct {
	Model *disc.Model
	// Key names the model's sentence vectors (see VectorScorer).
	Key    string
	tokens *TokenCache

	mu   sync.Mutex
	vecs [][]float32
}

// NewDiscScorer returns the coherence scorer over the cache's store.
func NewDiscScorer(m *disc.Model, tokens *TokenCache) *DiscScorer {
	return &DiscScorer{Model: m, tokens: tokens, vecs: make([][]float32, len(tokens.toks))}
}

// Terms implements Scorer.
func (d *DiscScorer) Terms() []string { return []string{TermDisc} }

// vectors returns the coherence vectors of stored sentences, encoding the
// missing ones in batches.
func (d *DiscScorer) vectors(ks []int32, work *Stats) [][]float32 {
	out := make([][]float32, len(ks))
	var miss []int32
	seen := map[int32]bool{}
	d.mu.Lock()
	for i, k := range ks {
		if out[i] = d.vecs[k]; out[i] == nil && !seen[k] {
			seen[k] = true
			miss = append(miss, k)
		}
	}
	d.mu.Unlock()
	if len(miss) == 0 {
		return out
	}
	for b := 0; b < len(miss); b += discBatch {
		part := miss[b:min(b+discBatch, len(miss))]
		vs := d.Model.Encode(d.tokens.Tokens(part))
		d.mu.Lock()
		for j, k := range part {
			d.vecs[k] = vs[j]
		}
		d.mu.Unlock()
		work.SentencesEncoded += int64(len(part))
	}
	d.mu.Lock()
	for i, k := range ks {
		out[i] = d.vecs[k]
	}
	d.mu.Unlock()
	return out
}

// Score implements Scorer.
func (d *DiscScorer) Score(s string, cands []Cand, want []uint64, out [][]float32, work *Stats) {
	var idx []int
	for i := range cands {
		if want[i]&1 != 0 {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return
	}
	m := d.Model
	dim := m.VecDim()
	sv := m.Encode([][]int32{d.tokens.Tok.Encode(s)})[0]
	work.SentencesEncoded++
	const batch = 4096
	l := make([]float32, 0, batch*dim)
	r := make([]float32, 0, batch*dim)
	sRep := make([]float32, 0, batch*dim)
	side := make([]float32, dim)
	for b := 0; b < len(idx); b += batch {
		part := idx[b:min(b+batch, len(idx))]
		var ks []int32
		for _, i := range part {
			ks = append(ks, cands[i].Left...)
			ks = append(ks, cands[i].Right...)
		}
		vs := d.vectors(ks, work)
		l, r, sRep = l[:0], r[:0], sRep[:0]
		p := 0
		for _, i := range part {
			nl, nr := len(cands[i].Left), len(cands[i].Right)
			disc.MeanVec(side, vs[p:p+nl])
			l = append(l, side...)
			disc.MeanVec(side, vs[p+nl:p+nl+nr])
			r = append(r, side...)
			p += nl + nr
			sRep = append(sRep, sv...)
		}
		logits := m.Logits(l, sRep, r)
		for j, i := range part {
			out[0][i] = disc.LogSigmoid(logits[j])
		}
	}
	work.DiscPairs += int64(len(idx))
}

// GenScorer computes the three generative terms (TermToS, TermToLeft,
// TermToRight) with the infilling model, batching every requested
// (candidate, direction) of a call together.
type GenScorer struct {
	Model  *gen.Model
	tokens *TokenCache
}

// NewGenScorer returns the generative scorer.
func NewGenScorer(m *gen.Model, tokens *TokenCache) *GenScorer {
	return &GenScorer{Model: m, tokens: tokens}
}

// Terms implements Scorer; term k is examples.Direction(k).
func (g *GenScorer) Terms() []string { return []string{TermToS, TermToLeft, TermToRight} }

// Score implements Scorer.
func (g *GenScorer) Score(s string, cands []Cand, want []uint64, out [][]float32, work *Stats) {
	g.ScoreBatch([]ScoreItem{{S: s, Cands: cands, Want: want, Out: out}}, work)
}

// ScoreBatch implements BatchScorer: every requested (sentence, candidate,
// direction) goes through the model in one call, which encodes a source
// shared by several requests (a context scored for several sentences in
// the direction TermToS) once.
func (g *GenScorer) ScoreBatch(items []ScoreItem, work *Stats) {
	var reqs []gen.Request
	type slot struct{ item, cand, term int }
	var slots []slot
	for n, it := range items {
		var sTok []int32
		for i := range it.Cands {
			if it.Want[i] == 0 {
				continue
			}
			if sTok == nil {
				sTok = g.tokens.Tok.Encode(it.S)
			}
			left, right := g.tokens.Tokens(it.Cands[i].Left), g.tokens.Tokens(it.Cands[i].Right)
			for k := range 3 {
				if it.Want[i]&(1<<k) != 0 {
					reqs = append(reqs, gen.Request{Left: left, S: sTok, Right: right, Dir: examples.Direction(k)})
					slots = append(slots, slot{n, i, k})
				}
			}
		}
	}
	if len(reqs) == 0 {
		return
	}
	if len(items) > 1 {
		// The model sorts requests by source within windows of a few
		// thousand; ordering them by context first puts the requests that
		// share a source (one context, direction TermToS, several
		// sentences) in the same window.
		order := make([]int, len(reqs))
		for j := range order {
			order[j] = j
		}
		key := func(j int) string {
			sl := slots[j]
			return items[sl.item].Cands[sl.cand].Key()
		}
		slices.SortStableFunc(order, func(a, b int) int {
			if c := cmp.Compare(slots[a].term, slots[b].term); c != 0 {
				return c
			}
			return strings.Compare(key(a), key(b))
		})
		r2, s2 := make([]gen.Request, len(reqs)), make([]slot, len(reqs))
		for j, o := range order {
			r2[j], s2[j] = reqs[o], slots[o]
		}
		reqs, slots = r2, s2
	}
	lp := g.Model.Score(reqs)
	for j, sl := range slots {
		items[sl.item].Out[sl.term][sl.cand] = lp[j]
	}
	work.GenEvals += int64(len(reqs))
}

// CtxScorer computes TermCtx with the contrastive context model: the
// context-table sum of each stored sentence is computed once and cached, so
// a context's score is one dot product with the sum of two to four cached
// vectors, scaled by the inverse of that sum's norm (cached per context).
type CtxScorer struct {
	Model *contrast.Model
	// Key names the model's sentence vectors (see VectorScorer).
	Key   string
	store *Store

	// sums holds each stored sentence's context-table sum (Model.Dim
	// values) by store index, nil until computed or loaded; set once.
	sums []atomic.Pointer[float32]

	// inv caches each stored context's inverse norm 1/‖u‖ (see
	// contextSum) by its dense number (Cand.ctx - 1), as its float32 bits
	// plus one: 0 is not yet computed. Four bytes per context of the store
	// (about 8.6 MB for the 2.1M contexts of 20M words), sized when first used.
	invOnce sync.Once
	inv     []atomic.Uint32

	// norms caches ‖v‖ of each stored sentence's sum, rounded up, as
	// float32 bits plus one (0: not yet computed), for the bounded rerank
	// (scoreBounded). Four bytes per stored sentence.
	normOnce sync.Once
	norms    []atomic.Uint32

	// vecs caches f(s) by sentence text: a pair's two sentences are
	// encoded for its cross scores on each side and for its parts, and a
	// sentence meets many pairs. At most maxSentenceVecs entries (about 1 KB
	// each at 256 dimensions); when full it starts over.
	vecMu sync.Mutex
	vecs  map[string][]float32
}

// maxSentenceVecs bounds CtxScorer's cache of sentence vectors.
const maxSentenceVecs = 1 << 16

// sentenceVec returns f(s), normalised, from the cache or the model, and
// whether it was encoded now. The slice is shared: callers must not
// change it.
func (c *CtxScorer) sentenceVec(s string) ([]float32, bool) {
	c.vecMu.Lock()
	v, ok := c.vecs[s]
	c.vecMu.Unlock()
	if ok {
		return v, false
	}
	v = c.Model.SentenceVec(s)
	c.vecMu.Lock()
	if c.vecs == nil || len(c.vecs) >= maxSentenceVecs {
		c.vecs = make(map[string][]float32)
	}
	c.vecs[s] = v
	c.vecMu.Unlock()
	return v, true
}

// NewCtxScorer returns the contrastive scorer over the store's sentences.
func NewCtxScorer(m *contrast.Model, st *Store) *CtxScorer {
	return &CtxScorer{Model: m, store: st, sums: make([]atomic.Pointer[float32], st.Sentences())}
}

// contextSum writes into buf (of the model's width) u, the sum of the
// context-table sums of a candidate's sentences (left, then right), and
// returns it with 1/‖u‖ (0 when u is zero): S(s, c) is then
// Model.ScoreSum(f(s), u, inv), the same as Model.Score(f(s), g(c)) with
// g(c) = u/‖u‖ up to rounding. The inverse norm of a stored context is
// computed once.
func (c *CtxScorer) contextSum(buf []float32, cand *Cand, work *Stats) ([]float32, float32) {
	clear(buf)
	for _, side := range [][]int32{cand.Left, cand.Right} {
		for _, k := range side {
			vecmath.AddTo(buf, c.sum(k, work))
		}
	}
	c.invOnce.Do(func() { c.inv = make([]atomic.Uint32, c.store.Slots()) })
	if inv, ok := c.cachedInv(cand); ok {
		return buf, inv
	}
	inv := contrast.InvNorm(buf)
	if n := cand.ctx - 1; cand.ctx != 0 && n < uint64(len(c.inv)) {
		c.inv[n].Store(math.Float32bits(inv) + 1)
	}
	return buf, inv
}

// Terms implements Scorer.
func (c *CtxScorer) Terms() []string { return []string{TermCtx} }

// sum returns the cached context-table sum of stored sentence k.
func (c *CtxScorer) sum(k int32, work *Stats) []float32 {
	if p := c.sums[k].Load(); p != nil {
		return unsafe.Slice(p, c.Model.Dim())
	}
	v := c.Model.ContextSum(c.store.Text(k))
	work.SentencesEncoded++
	c.setSum(k, v)
	return v
}

// setSum caches v as the sum of stored sentence k (a sum already there is
// kept: both are the same values).
func (c *CtxScorer) setSum(k int32, v []float32) {
	if len(v) != c.Model.Dim() {
		panic(fmt.Sprintf("harvest: a context-table sum of %d values for a model of width %d", len(v), c.Model.Dim()))
	}
	c.sums[k].CompareAndSwap(nil, &v[0])
}

// prefetchSums asks the CPU to start reading the stored sums of the
// sentences of cd, those already computed, and its cached inverse norm.
func (c *CtxScorer) prefetchSums(cd *Cand) {
	if n := cd.ctx - 1; cd.ctx != 0 && n < uint64(len(c.inv)) {
		vecmath.Prefetch(unsafe.Slice((*float32)(unsafe.Pointer(&c.inv[n])), 1))
	}
	for _, side := range [2][]int32{cd.Left, cd.Right} {
		for _, k := range side {
			if int(k) < len(c.norms) {
				vecmath.Prefetch(unsafe.Slice((*float32)(unsafe.Pointer(&c.norms[k])), 1))
			}
			if p := c.sums[k].Load(); p != nil {
				vecmath.Prefetch(unsafe.Slice(p, c.Model.Dim()))
			}
		}
	}
}

// SentenceSimilarity implements Embedder: f(a)·f(b), both normalised.
func (c *CtxScorer) SentenceSimilarity(a, b string) float64 {
	fa, _ := c.sentenceVec(a)
	fb, _ := c.sentenceVec(b)
	return float64(contrast.Dot(fa, fb))
}

// AlignSimilarity implements Aligner.
func (c *CtxScorer) AlignSimilarity(a, b string) float64 { return c.Model.AlignSimilarity(a, b) }

// Score implements Scorer.
func (c *CtxScorer) Score(s string, cands []Cand, want []uint64, out [][]float32, work *Stats) {
	var f []float32
	buf := make([]float32, c.Model.Dim())
	n := int64(0)
	for i := range cands {
		if want[i]&1 == 0 {
			continue
		}
		if f == nil {
			var encoded bool
			if f, encoded = c.sentenceVec(s); encoded {
				work.SentencesEncoded++
			}
		}
		u, inv := c.contextSum(buf, &cands[i], work)
		out[0][i] = c.Model.ScoreSum(f, u, inv)
		n++
	}
	work.CtxPairs += n
}
