package method

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"slices"
)

// Sums are the running sums of Eq. 4 for one pair over the contexts of C
// seen so far: a = S(s1, c) and b = S(s2, c), after the similarity's
// change of variables (none for "cosine" and "pearson"; for "zref" each
// sentence's scores standardised by its reference statistics). Every
// similarity Eq. 4 offers is a function of these six numbers, and the sums
// over C_s1 and over C_s2 \ C_s1 add, so a pair's label needs only a few
// numbers from each side, never a whole context set.
type Sums struct {
	N                int32
	A, B, AA, BB, AB float64
}

// add adds one context's (a, b) in the order Similarity sums them, so that
// sums carried from one side to the other give the same bits as the
// cosine over the two whole score vectors.
func (s *Sums) add(a, b float64) {
	s.AB += a * b
	s.AA += a * a
	s.BB += b * b
	s.A += a
	s.B += b
	s.N++
}

// Similarity is Eq. 4 under the similarity kind from the sums: the cosine
// ("cosine", and "zref", whose change of variables is already in the sums)
// or the Pearson correlation ("pearson"). It is 0 when either side is
// constant (zero for the cosine).
func (s Sums) Similarity(kind string) float64 {
	ab, aa, bb := s.AB, s.AA, s.BB
	if kind == SimilarityPearson && s.N > 0 {
		n := float64(s.N)
		ab -= s.A * s.B / n
		aa -= s.A * s.A / n
		bb -= s.B * s.B / n
		// Rounding can leave a tiny negative variance where it is zero.
		aa, bb = max(aa, 0), max(bb, 0)
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

// ContextHash is a stable 64-bit identity of a context (chunk and slot),
// the same in every process: what a pair carries of its first sentence's
// context set so that the other side counts a context of both sets once.
func ContextHash(chunkID string, slot int32) uint64 {
	h := fnv.New64a()
	h.Write([]byte(chunkID))
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(slot))
	h.Write(b[:])
	return h.Sum64()
}

// SetHashes returns the sorted ContextHash of every context of a set,
// packed little-endian, eight bytes each.
func SetHashes(set []Cand) []byte {
	hs := make([]uint64, len(set))
	for i := range set {
		hs[i] = ContextHash(set[i].ChunkID, set[i].Slot)
	}
	slices.Sort(hs)
	out := make([]byte, 8*len(hs))
	for i, h := range hs {
		binary.LittleEndian.PutUint64(out[8*i:], h)
	}
	return out
}

// hasHash reports whether packed (from SetHashes) holds h.
func hasHash(packed []byte, h uint64) bool {
	lo, hi := 0, len(packed)/8
	for lo < hi {
		m := (lo + hi) / 2
		v := binary.LittleEndian.Uint64(packed[8*m:])
		switch {
		case v == h:
			return true
		case v < h:
			lo = m + 1
		default:
			hi = m
		}
	}
	return false
}

// SideJob is one pair's share of a side: the pair's other sentence, the
// contexts of this side's set it has already counted (packed ContextHash
// values, nil for none) and its running sums.
type SideJob struct {
	Other string
	Skip  []byte
	Sums  *Sums
}

// LabelSide adds to each job's sums the contexts of set, the context set
// of sentence own (scored for own and resolved), that the job has not
// counted yet (Skip): own's score is the set's, the other sentence's is
// computed (the cross score, as Label computes it, without the cache).
// ownFirst says whether own is the pair's first sentence (a); the sums are
// kept as (a, b). Across the two sides of a pair (first with ownFirst and
// no Skip, then the other with the first set's hashes as Skip), the sums
// are those of Eq. 4 over C = C_a + C_b, a context of both counted once,
// and added in the order Label adds them.
func (e *Engine) LabelSide(own string, set []Cand, jobs []SideJob, ownFirst bool, st Settings) Stats {
	var work Stats
	if len(set) == 0 || len(jobs) == 0 {
		return work
	}
	zref := st.Similarity == SimilarityZRef
	var mOwn, sOwn float64
	if zref {
		var w Stats
		mOwn, sOwn, w = e.RefStats(own, st.Lambda)
		work.add(w)
	}
	var hashes []uint64
	if slices.ContainsFunc(jobs, func(j SideJob) bool { return len(j.Skip) > 0 }) {
		hashes = make([]uint64, len(set))
		for i := range set {
			hashes[i] = ContextHash(set[i].ChunkID, set[i].Slot)
		}
	}
	keep := make([][]int, len(jobs)) // indices into set of each job's contexts
	for n, j := range jobs {
		idx := make([]int, 0, len(set))
		for i := range set {
			if len(j.Skip) > 0 && hasHash(j.Skip, hashes[i]) {
				continue
			}
			idx = append(idx, i)
		}
		keep[n] = idx
	}
	// cross[n][k] is S(other sentence of job n, set[keep[n][k]]).
	cross := make([][]float32, len(jobs))
	if cs, w, ok := e.ctxOnly(st.Lambda); ok {
		others := make([]string, len(jobs))
		for n, j := range jobs {
			others[n] = j.Other
		}
		cs.crossScores(set, others, keep, w, cross, &work)
	} else {
		score := make([]ScoreJob, len(jobs))
		for n, j := range jobs {
			cands := make([]Cand, len(keep[n]))
			for k, i := range keep[n] {
				cands[k] = set[i]
				cands[k].Comp, cands[k].S = Components{}, 0
			}
			score[n] = ScoreJob{S: j.Other, Cands: cands}
		}
		work.add(e.ScoreMany(score, st.Lambda))
		for n := range jobs {
			cross[n] = make([]float32, len(keep[n]))
			for k := range keep[n] {
				cross[n][k] = score[n].Cands[k].S
			}
		}
	}
	for n, j := range jobs {
		var mOther, sOther float64
		if zref {
			var w Stats
			mOther, sOther, w = e.RefStats(j.Other, st.Lambda)
			work.add(w)
		}
		for k, i := range keep[n] {
			o, x := float64(set[i].S), float64(cross[n][k])
			if zref {
				o, x = standardOne(o, mOwn, sOwn), standardOne(x, mOther, sOther)
			}
			if ownFirst {
				j.Sums.add(o, x)
			} else {
				j.Sums.add(x, o)
			}
		}
	}
	return work
}

// standardOne is standardise for one value.
func standardOne(x, mean, std float64) float64 {
	if std == 0 {
		std = 1
	}
	return (x - mean) / std
}

// ctxOnly returns the contrastive scorer and its weight when it computes
// the only term the weights use.
func (e *Engine) ctxOnly(lambda map[string]float64) (*CtxScorer, float64, bool) {
	w, want := e.weights(lambda)
	k, ok := e.index[TermCtx]
	if !ok || want != 1<<k {
		return nil, 0, false
	}
	cs, ok := e.scorers[e.refs[k].s].(*CtxScorer)
	return cs, w[k], ok
}

// crossScores computes, for each sentence others[n] and each context
// set[i] of keep[n], the score S Engine.Score gives it when the contrastive
// term, weighted w, is the only one: each context's g(c) once for all the
// sentences, and no cache.
func (c *CtxScorer) crossScores(set []Cand, others []string, keep [][]int, w float64, out [][]float32, work *Stats) {
	dim := c.Model.Dim()
	buf := make([]float32, len(set)*dim)
	u := make([][]float32, len(set))
	inv := make([]float32, len(set))
	for n, s := range others {
		out[n] = make([]float32, len(keep[n]))
		if len(keep[n]) == 0 {
			continue
		}
		f := c.Model.SentenceVec(s)
		work.SentencesEncoded++
		for k, i := range keep[n] {
			if u[i] == nil {
				u[i], inv[i] = c.contextSum(buf[i*dim:(i+1)*dim], &set[i], work)
			}
			out[n][k] = float32(w * float64(c.Model.ScoreSum(f, u[i], inv[i])))
		}
		work.CtxPairs += int64(len(keep[n]))
	}
}
