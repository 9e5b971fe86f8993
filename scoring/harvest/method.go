package harvest

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ctxsim/ctxsim/schemas"
)

// Settings are the knobs of the method. Defaults gives the paper's.
type Settings struct {
	// TopK is the number of chunks retrieved per sentence.
	TopK int `json:"top_k"`
	// Rerank is R, the contexts kept by the coherence model for Eq. 3.
	Rerank int `json:"rerank"`
	// SetSize is |C_s|.
	SetSize int `json:"set_size"`
	// Lambda weighs the terms of Eq. 3 (disc, to_s, to_left, to_right); a
	// zero switches a term off, and its model is not run for it.
	Lambda [NumTerms]float64 `json:"lambda"`
	// Diversity applies the one-context-per-chunk and Jaccard constraints.
	Diversity bool `json:"diversity"`
	// MaxJaccard bounds the Jaccard similarity of c_{i-1} between a new
	// context and the selected ones.
	MaxJaccard float64 `json:"max_jaccard"`
	// Similarity is the Eq. 4 measure: "cosine" (the paper's) or
	// "pearson" (cosine of the score vectors after removing each vector's
	// mean, which discounts how likely a sentence is in any context).
	Similarity string `json:"similarity"`
	// RandomContexts replaces retrieval with contexts drawn at random from
	// the corpus (an ablation); the seed is derived from the sentence.
	RandomContexts bool `json:"random_contexts,omitempty"`
}

// Defaults are the paper's settings: 20,000 chunks, |C_s| = 500, all four
// terms with weight 1, the diversity constraints with Jaccard < 0.5. The
// paper does not fix R; 1,000 leaves room for the constraints to reject
// half of the candidates.
func Defaults() Settings {
	return Settings{TopK: 20000, Rerank: 1000, SetSize: 500, Lambda: [NumTerms]float64{1, 1, 1, 1},
		Diversity: true, MaxJaccard: 0.5, Similarity: "cosine"}
}

// Validate checks the settings.
func (s Settings) Validate() error {
	switch {
	case s.TopK < 1:
		return fmt.Errorf("harvest: top_k must be at least 1, got %d", s.TopK)
	case s.SetSize < 1:
		return fmt.Errorf("harvest: set_size must be at least 1, got %d", s.SetSize)
	case s.Rerank < s.SetSize:
		return fmt.Errorf("harvest: rerank (%d) must be at least set_size (%d)", s.Rerank, s.SetSize)
	case s.MaxJaccard <= 0 || s.MaxJaccard > 1:
		return fmt.Errorf("harvest: max_jaccard must be in (0, 1], got %g", s.MaxJaccard)
	case s.Similarity != "cosine" && s.Similarity != "pearson":
		return fmt.Errorf("harvest: similarity must be cosine or pearson, got %q", s.Similarity)
	}
	for _, l := range s.Lambda {
		if l != 0 {
			return nil
		}
	}
	return fmt.Errorf("harvest: every term of Eq. 3 is switched off")
}

// JSON is the settings as recorded with every label.
func (s Settings) JSON() string {
	b, _ := json.Marshal(s)
	return string(b)
}

// SetInfo describes how a context set was built.
type SetInfo struct {
	Hits, MissingChunks, Candidates, Reranked int
	// Work is what the call computed (cache hits are not computed).
	Work Stats
}

// ContextSet builds C_s for sentence s from its retrieved chunks (or, with
// RandomContexts, from random corpus contexts drawn with seed): candidates
// are reranked by the coherence model, the top R are scored with Eq. 3, and
// C_s is selected under the diversity constraints. The result is sorted by
// S, best first.
func (e *Engine) ContextSet(s string, hits []schemas.Hit, st Settings, seed uint64) ([]Cand, SetInfo) {
	var cands []Cand
	info := SetInfo{Hits: len(hits)}
	if st.RandomContexts {
		cands = e.RandomCandidates(st.Rerank, seed)
	} else {
		cands, info.MissingChunks = e.Candidates(hits)
	}
	info.Candidates = len(cands)
	if len(cands) > st.Rerank {
		all := make([]int, len(cands))
		for i := range all {
			all[i] = i
		}
		// discTerm counts the corpus sentences it encodes in both the
		// engine's totals and rw; the rest is counted here.
		var rw Stats
		e.discTerm(e.Tok.Encode(s), cands, all, &rw)
		extra := Stats{DiscPairs: int64(len(cands)), SentencesEncoded: 1}
		e.mu.Lock()
		e.stats.add(extra)
		e.mu.Unlock()
		rw.add(extra)
		info.Work.add(rw)
		cands = Rerank(cands, st.Rerank)
		// The coherence term of the kept candidates is known: cache it so
		// Score does not compute it again.
		e.remember(s, cands, 1<<TermDisc)
	}
	info.Reranked = len(cands)
	info.Work.add(e.Score(s, cands, st.Lambda))
	SortByS(cands)
	return e.BuildSet(cands, st.SetSize, st.Diversity, st.MaxJaccard), info
}

// RandomCandidates draws n contexts uniformly from the stored chunks'
// two-sided slots, deterministically from seed.
func (e *Engine) RandomCandidates(n int, seed uint64) []Cand {
	r := rand.New(rand.NewPCG(seed, 0x72616e64))
	var out []Cand
	for tries := 0; len(out) < n && tries < 20*n && e.Store.Len() > 0; tries++ {
		id := e.Store.ChunkIDAt(r.IntN(e.Store.Len()))
		c, _ := e.Store.chunk(id)
		if len(c.sents) < 3 {
			continue
		}
		i := 1 + r.IntN(len(c.sents)-2)
		out = append(out, e.cand(id, int32(len(out)), c, i))
	}
	return out
}

// Label is Eq. 4 for sentences a and b with context sets setA and setB
// (scored for their own sentence): over C = C_a + C_b (a context in both
// counted once), v_a = [S(a, c)], v_b = [S(b, c)], and the label is their
// similarity. Only the cross scores S(a, c ∈ C_b) and S(b, c ∈ C_a) are
// computed, through the engine's cache. It returns the label, |C| and the
// work done.
func (e *Engine) Label(a, b string, setA, setB []Cand, st Settings) (float64, int, Stats) {
	va, vb, work := e.LabelVectors(a, b, setA, setB, st)
	return Similarity(va, vb, st.Similarity), len(va), work
}

// LabelVectors returns the two score vectors of Eq. 4 over C = C_a + C_b,
// and the work done; Label compares them.
func (e *Engine) LabelVectors(a, b string, setA, setB []Cand, st Settings) (va, vb []float64, work Stats) {
	// Candidates of the other set, for the cross scores.
	crossA := cloneNew(setB, setA) // contexts of C_b that a still needs
	crossB := cloneNew(setA, setB)
	work = e.Score(a, crossA, st.Lambda)
	work.add(e.Score(b, crossB, st.Lambda))
	sa := map[string]float32{}
	sb := map[string]float32{}
	for _, c := range setA {
		sa[c.Key()] = c.S
	}
	for _, c := range setB {
		sb[c.Key()] = c.S
	}
	for _, c := range crossA {
		sa[c.Key()] = c.S
	}
	for _, c := range crossB {
		sb[c.Key()] = c.S
	}
	// The union, in a fixed order: C_a then the rest of C_b.
	seen := map[string]bool{}
	for _, set := range [][]Cand{setA, setB} {
		for _, c := range set {
			k := c.Key()
			if seen[k] {
				continue
			}
			seen[k] = true
			va = append(va, float64(sa[k]))
			vb = append(vb, float64(sb[k]))
		}
	}
	return va, vb, work
}

// cloneNew returns fresh copies (scores cleared) of the contexts of from
// that are not in have.
func cloneNew(from, have []Cand) []Cand {
	in := map[string]bool{}
	for _, c := range have {
		in[c.Key()] = true
	}
	var out []Cand
	for _, c := range from {
		if !in[c.Key()] {
			c.Comp, c.S = Components{}, 0
			out = append(out, c)
		}
	}
	return out
}

// Similarity compares two score vectors: "cosine" or "pearson" (cosine
// after centring each vector). It is 0 when either vector is constant zero.
func Similarity(a, b []float64, kind string) float64 {
	if kind == "pearson" {
		a, b = centred(a), centred(b)
	}
	var ab, aa, bb float64
	for i := range a {
		ab += a[i] * b[i]
		aa += a[i] * a[i]
		bb += b[i] * b[i]
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

func centred(x []float64) []float64 {
	var m float64
	for _, v := range x {
		m += v
	}
	m /= float64(max(len(x), 1))
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = v - m
	}
	return out
}
