package harvest

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/disc"
	"github.com/ctxsim/ctxsim/scoring/examples"
	"github.com/ctxsim/ctxsim/scoring/gen"
	"github.com/ctxsim/ctxsim/scoring/tokenizer"
)

// Terms of Eq. 3, in the order of Settings.Lambda and Components.
const (
	TermDisc    = iota // log p(y=1 | c_<i, s, c_>i), Eq. 1
	TermToS            // (1/|s|) log p(s | c_<i, c_>i)
	TermToLeft         // (1/|c_<i|) log p(c_<i | s, c_>i)
	TermToRight        // (1/|c_>i|) log p(c_>i | c_<i, s)
	NumTerms
)

// TermNames names the terms of Eq. 3 for flags and reports.
var TermNames = [NumTerms]string{"disc", "to_s", "to_left", "to_right"}

// Components are the four terms of Eq. 3 for one (sentence, context).
type Components [NumTerms]float32

// S is Eq. 3: the λ-weighted sum of the terms.
func (c Components) S(lambda [NumTerms]float64) float32 {
	var s float64
	for k, l := range lambda {
		s += l * float64(c[k])
	}
	return float32(s)
}

// Cand is a candidate context for a sentence: slot Slot of chunk ChunkID,
// with the indices (in the Store) of the sentences left and right of it.
type Cand struct {
	ChunkID string
	Slot    int32
	// Rank is the chunk's position in the retrieval results, from 0.
	Rank        int32
	Left, Right []int32
	Comp        Components
	S           float32
}

// Key identifies the context.
func (c *Cand) Key() string { return contextKey(c.ChunkID, c.Slot) }

func contextKey(chunk string, slot int32) string {
	return chunk + "#" + string(rune('0'+slot))
}

// Engine scores sentences against contexts of the corpus. It caches, per
// stored sentence, its tokens and its coherence vector, and per (sentence,
// context) the components of Eq. 3, so nothing is computed twice while the
// cache has room. It is safe for concurrent use.
type Engine struct {
	Tok   *tokenizer.Tokenizer
	Disc  *disc.Model
	Gen   *gen.Model
	Store *Store
	// Window is the most context sentences on each side of a slot.
	Window int

	mu    sync.Mutex
	toks  [][]int32
	vecs  [][]float32
	cache map[string]cached
	// CacheMax bounds the (sentence, context) cache; when full it is
	// emptied. Zero means 4M entries.
	CacheMax int
	seed     maphash.Seed
	stats    Stats
}

type cached struct {
	comp Components
	have uint8 // bit k: term k is computed
}

// Stats counts the work an Engine did, or one call's share of it.
type Stats struct {
	SentencesEncoded int64 // corpus and query sentences through the BiLSTM
	DiscPairs        int64 // (sentence, context) pairs through the head
	GenEvals         int64 // sequence log-likelihoods computed
	CacheHits        int64 // (sentence, context, term) found in the cache
}

// NewEngine returns an engine over the stored chunks.
func NewEngine(tok *tokenizer.Tokenizer, dm *disc.Model, gm *gen.Model, st *Store) *Engine {
	return &Engine{Tok: tok, Disc: dm, Gen: gm, Store: st, Window: dm.Cfg.Window,
		toks: make([][]int32, st.Sentences()), vecs: make([][]float32, st.Sentences()),
		cache: map[string]cached{}, seed: maphash.MakeSeed()}
}

// Stats returns the counts so far.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stats
}

// Candidates expands retrieved chunks, in order, into their contexts: every
// slot with at least one sentence on each side (the models are trained on
// such slots). Chunks missing from the store are counted in missing.
func (e *Engine) Candidates(hits []schemas.Hit) (cands []Cand, missing int) {
	for r, h := range hits {
		c, ok := e.Store.chunk(h.ChunkID)
		if !ok {
			missing++
			continue
		}
		for i := 1; i+1 < len(c.sents); i++ {
			cands = append(cands, e.cand(h.ChunkID, int32(r), c, i))
		}
	}
	return cands, missing
}

func (e *Engine) cand(id string, rank int32, c storedChunk, i int) Cand {
	w := max(e.Window, 1)
	return Cand{ChunkID: id, Slot: int32(i), Rank: rank,
		Left: c.sents[max(0, i-w):i], Right: c.sents[i+1 : min(len(c.sents), i+1+w)]}
}

// Resolve turns context references into candidates.
func (e *Engine) Resolve(refs []schemas.ScoredContext) ([]Cand, error) {
	out := make([]Cand, len(refs))
	for i, r := range refs {
		c, ok := e.Store.chunk(r.ChunkID)
		if !ok {
			return nil, fmt.Errorf("harvest: context chunk %s is not in the chunk store", r.ChunkID)
		}
		if r.Slot < 1 || int(r.Slot)+1 >= len(c.sents) {
			return nil, fmt.Errorf("harvest: chunk %s has no context slot %d", r.ChunkID, r.Slot)
		}
		out[i] = e.cand(r.ChunkID, int32(i), c, int(r.Slot))
		out[i].S, out[i].Comp = r.Score, componentsOf(r)
	}
	return out, nil
}

func componentsOf(r schemas.ScoredContext) Components {
	return Components{r.Disc, r.ToS, r.ToLeft, r.ToRight}
}

// Ref is the record form of a scored candidate.
func (c *Cand) Ref() schemas.ScoredContext {
	return schemas.ScoredContext{ChunkID: c.ChunkID, Slot: c.Slot, Score: c.S,
		Disc: c.Comp[TermDisc], ToS: c.Comp[TermToS], ToLeft: c.Comp[TermToLeft], ToRight: c.Comp[TermToRight]}
}

// tokens returns the token ids of stored sentences, tokenizing once.
func (e *Engine) tokens(ks []int32) [][]int32 {
	out := make([][]int32, len(ks))
	var miss []int
	e.mu.Lock()
	for i, k := range ks {
		if out[i] = e.toks[k]; out[i] == nil {
			miss = append(miss, i)
		}
	}
	e.mu.Unlock()
	if len(miss) == 0 {
		return out
	}
	for _, i := range miss {
		out[i] = e.Tok.Encode(e.Store.Text(ks[i]))
	}
	e.mu.Lock()
	for _, i := range miss {
		e.toks[ks[i]] = out[i]
	}
	e.mu.Unlock()
	return out
}

// vectors returns the coherence vectors of stored sentences, encoding the
// missing ones in batches.
func (e *Engine) vectors(ks []int32, work *Stats) [][]float32 {
	out := make([][]float32, len(ks))
	var miss []int32
	seen := map[int32]bool{}
	e.mu.Lock()
	for i, k := range ks {
		if out[i] = e.vecs[k]; out[i] == nil && !seen[k] {
			seen[k] = true
			miss = append(miss, k)
		}
	}
	e.mu.Unlock()
	if len(miss) == 0 {
		return out
	}
	const batch = 256
	for b := 0; b < len(miss); b += batch {
		part := miss[b:min(b+batch, len(miss))]
		vs := e.Disc.Encode(e.tokens(part))
		e.mu.Lock()
		for j, k := range part {
			e.vecs[k] = vs[j]
		}
		e.stats.SentencesEncoded += int64(len(part))
		e.mu.Unlock()
		work.SentencesEncoded += int64(len(part))
	}
	e.mu.Lock()
	for i, k := range ks {
		out[i] = e.vecs[k]
	}
	e.mu.Unlock()
	return out
}

// cacheKey identifies (sentence, context) in the cache.
func (e *Engine) cacheKey(sHash uint64, c *Cand) string {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], sHash)
	return string(b[:]) + c.Key()
}

// Score fills the components of Eq. 3 for sentence s and each candidate,
// for the terms whose λ is not zero (the others are left at zero), taking
// what it can from the cache and computing the rest in batches.
//
// It returns the work done by this call.
func (e *Engine) Score(s string, cands []Cand, lambda [NumTerms]float64) Stats {
	var work Stats
	if len(cands) == 0 {
		return work
	}
	sHash := maphash.String(e.seed, s)
	var want uint8
	for k, l := range lambda {
		if l != 0 {
			want |= 1 << k
		}
	}
	keys := make([]string, len(cands))
	need := make([]uint8, len(cands))
	e.mu.Lock()
	for i := range cands {
		keys[i] = e.cacheKey(sHash, &cands[i])
		got := e.cache[keys[i]]
		for k := range NumTerms {
			if got.have&(1<<k) != 0 {
				cands[i].Comp[k] = got.comp[k]
				if want&(1<<k) != 0 {
					work.CacheHits++
				}
			}
		}
		need[i] = want &^ got.have
	}
	e.mu.Unlock()

	sTok := e.Tok.Encode(s)
	// Coherence term: the sentence vector against each context's sides.
	var discIdx []int
	for i := range cands {
		if need[i]&(1<<TermDisc) != 0 {
			discIdx = append(discIdx, i)
		}
	}
	var encodedHere int64
	if len(discIdx) > 0 {
		e.discTerm(sTok, cands, discIdx, &work) // counts corpus encodes in e.stats too
		encodedHere = 1
	}
	// Generative terms: one request per (candidate, direction).
	var reqs []gen.Request
	type slot struct{ cand, term int }
	var slots []slot
	for i := range cands {
		if need[i]>>TermToS == 0 {
			continue
		}
		left, right := e.tokens(cands[i].Left), e.tokens(cands[i].Right)
		for k := TermToS; k < NumTerms; k++ {
			if need[i]&(1<<k) != 0 {
				reqs = append(reqs, gen.Request{Left: left, S: sTok, Right: right, Dir: examples.Direction(k - TermToS)})
				slots = append(slots, slot{i, k})
			}
		}
	}
	if len(reqs) > 0 {
		lp := e.Gen.Score(reqs)
		for j, sl := range slots {
			cands[sl.cand].Comp[sl.term] = lp[j]
		}
	}
	work.GenEvals = int64(len(reqs))
	work.DiscPairs = int64(len(discIdx))
	work.SentencesEncoded += encodedHere
	e.mu.Lock()
	e.stats.add(Stats{GenEvals: work.GenEvals, DiscPairs: work.DiscPairs, CacheHits: work.CacheHits,
		SentencesEncoded: encodedHere})
	limit := e.CacheMax
	if limit <= 0 {
		limit = 4 << 20
	}
	if len(e.cache) > limit {
		clear(e.cache)
	}
	for i := range cands {
		if need[i] == 0 {
			continue
		}
		got := e.cache[keys[i]]
		for k := range NumTerms {
			if need[i]&(1<<k) != 0 {
				got.comp[k] = cands[i].Comp[k]
			}
		}
		got.have |= need[i]
		e.cache[keys[i]] = got
	}
	e.mu.Unlock()
	for i := range cands {
		cands[i].S = cands[i].Comp.S(lambda)
	}
	return work
}

// remember caches the terms in mask of sentence s for cands, as computed
// outside Score.
func (e *Engine) remember(s string, cands []Cand, mask uint8) {
	sHash := maphash.String(e.seed, s)
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range cands {
		key := e.cacheKey(sHash, &cands[i])
		got := e.cache[key]
		for k := range NumTerms {
			if mask&(1<<k) != 0 {
				got.comp[k] = cands[i].Comp[k]
			}
		}
		got.have |= mask
		e.cache[key] = got
	}
}

func (s *Stats) add(o Stats) {
	s.SentencesEncoded += o.SentencesEncoded
	s.DiscPairs += o.DiscPairs
	s.GenEvals += o.GenEvals
	s.CacheHits += o.CacheHits
}

// discTerm sets the coherence term of the candidates at idx.
func (e *Engine) discTerm(sTok []int32, cands []Cand, idx []int, work *Stats) {
	d := e.Disc.VecDim()
	sv := e.Disc.Encode([][]int32{sTok})[0]
	const batch = 4096
	l := make([]float32, 0, batch*d)
	r := make([]float32, 0, batch*d)
	sRep := make([]float32, 0, batch*d)
	side := make([]float32, d)
	for b := 0; b < len(idx); b += batch {
		part := idx[b:min(b+batch, len(idx))]
		var ks []int32
		for _, i := range part {
			ks = append(ks, cands[i].Left...)
			ks = append(ks, cands[i].Right...)
		}
		vs := e.vectors(ks, work)
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
		logits := e.Disc.Logits(l, sRep, r)
		for j, i := range part {
			cands[i].Comp[TermDisc] = disc.LogSigmoid(logits[j])
		}
	}
}

// Rerank keeps the n candidates with the highest coherence term (ties
// broken by retrieval order), in that order.
func Rerank(cands []Cand, n int) []Cand {
	slices.SortStableFunc(cands, func(a, b Cand) int { return cmp.Compare(b.Comp[TermDisc], a.Comp[TermDisc]) })
	return cands[:min(n, len(cands))]
}

// SortByS orders candidates by S, best first; ties keep their order.
func SortByS(cands []Cand) {
	slices.SortStableFunc(cands, func(a, b Cand) int { return cmp.Compare(b.S, a.S) })
}

// BuildSet selects C_s from candidates sorted by S: it adds them one at a
// time, up to size; with diversity on, each chunk contributes at most one
// context and a candidate whose sentence c_{i-1} has Jaccard similarity
// >= maxJaccard with that of an already selected context is skipped.
func (e *Engine) BuildSet(sorted []Cand, size int, diversity bool, maxJaccard float64) []Cand {
	out := make([]Cand, 0, min(size, len(sorted)))
	if !diversity {
		return append(out, sorted[:min(size, len(sorted))]...)
	}
	chunks := map[string]bool{}
	var prev [][]uint32
	for _, c := range sorted {
		if len(out) >= size {
			break
		}
		if chunks[c.ChunkID] {
			continue
		}
		w := e.Store.wordIDs(c.Left[len(c.Left)-1])
		ok := true
		for _, p := range prev {
			if jaccardAtLeast(w, p, maxJaccard) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		chunks[c.ChunkID] = true
		prev = append(prev, w)
		out = append(out, c)
	}
	return out
}

// wordSet splits s into its distinct lowercased runs of letters and
// digits.
func wordSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		out[w] = true
	}
	return out
}

// jaccardAtLeast reports whether the Jaccard similarity of the sorted,
// distinct word IDs a and b is at least t (two empty sets have similarity
// 1). Sets whose sizes alone bound the similarity below t are not merged.
func jaccardAtLeast(a, b []uint32, t float64) bool {
	if len(a) == 0 && len(b) == 0 {
		return 1 >= t
	}
	lo, hi := min(len(a), len(b)), max(len(a), len(b))
	// |a∩b| <= lo and |a∪b| >= hi, so the similarity is at most lo/hi.
	if float64(lo)/float64(hi) < t {
		return false
	}
	inter, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			inter++
			i++
			j++
		}
	}
	return float64(inter)/float64(len(a)+len(b)-inter) >= t
}
