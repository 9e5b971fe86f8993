package method

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/ctxsim/ctxsim/schemas"
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

// A pair carries to its second side the contexts of its first sentence's
// set that it has counted (SideJob.Skip), so that a context of both sets
// is counted once. They go as the contexts' numbers in the chunk store
// (contextID), which every process that loads the same chunks gives alike:
// the store's layout hash (8 bytes, little-endian), then the sorted
// numbers as unsigned varints, each after the first as its gap from the
// one before. About 2 bytes a context at 20M words (a 64-bit hash of chunk
// and slot took 8); LabelSide refuses numbers from a store laid out
// differently.

// SetSkip packs the contexts of a resolved set (Engine.Resolve or
// ContextSet) as SideJob.Skip for the other side of its pairs.
func (e *Engine) SetSkip(set []Cand) ([]byte, error) {
	ids := make([]uint64, len(set))
	for i := range set {
		if set[i].ctx == 0 {
			return nil, fmt.Errorf("harvest: context %s#%d has no number in the chunk store", set[i].ChunkID, set[i].Slot)
		}
		ids[i] = set[i].ctx
	}
	return packSkip(e.Store.layout, ids), nil
}

// Skip is SetSkip of a stored context set's contexts.
func (st *Store) Skip(refs []schemas.ScoredContext) ([]byte, error) {
	ids := make([]uint64, len(refs))
	for i, r := range refs {
		c, ok := st.chunk(r.ChunkID)
		if !ok || r.Slot < 0 || int(r.Slot) >= len(c.sents) {
			return nil, fmt.Errorf("harvest: context %s#%d is not in the chunk store", r.ChunkID, r.Slot)
		}
		ids[i] = contextID(c, int(r.Slot))
	}
	return packSkip(st.layout, ids), nil
}

// packSkip is the Skip form of context numbers ids (sorted in place).
func packSkip(layout uint64, ids []uint64) []byte {
	slices.Sort(ids)
	out := binary.LittleEndian.AppendUint64(make([]byte, 0, 8+2*len(ids)+4), layout)
	var prev uint64
	for _, id := range ids {
		out = binary.AppendUvarint(out, id-prev)
		prev = id
	}
	return out
}

// Side is one sentence's context set made ready for the batches of pairs
// that meet it (LabelSide): what every batch needs is found once per set.
type Side struct {
	own string
	set []Cand
	// order lists the set's indices by context number (for Skip).
	order []int
	// The contrastive scorer's sums of the set's contexts, filled as
	// first needed: u[i] (in buf) and inv[i] of set[i].
	buf []float32
	u   [][]float32
	inv []float32
	// skipped marks, for one job at a time, the contexts it skips.
	skipped []bool
	ref     bool // mOwn, sOwn computed
	mOwn    float64
	sOwn    float64
}

// NewSide readies the context set of sentence own, scored for own and
// resolved, for LabelSide.
func (e *Engine) NewSide(own string, set []Cand) *Side {
	return &Side{own: own, set: set}
}

// SideJob is one pair's share of a side: the pair's other sentence, the
// contexts of the other side's set it has already counted (from SetSkip,
// nil for none) and its running sums.
type SideJob struct {
	Other string
	Skip  []byte
	Sums  *Sums
}

// skips marks in sd.skipped the contexts of sd.set that skip names: a merge
// of the set in context order with skip's sorted numbers.
func (e *Engine) skips(sd *Side, skip []byte) error {
	if len(skip) < 8 || binary.LittleEndian.Uint64(skip) != e.Store.layout {
		return fmt.Errorf("harvest: a pair's first context set was numbered by a different chunk store")
	}
	if sd.order == nil {
		sd.order = make([]int, len(sd.set))
		for i := range sd.order {
			sd.order[i] = i
		}
		slices.SortFunc(sd.order, func(x, y int) int { return cmp.Compare(sd.set[x].ctx, sd.set[y].ctx) })
		sd.skipped = make([]bool, len(sd.set))
	}
	clear(sd.skipped)
	rest := skip[8:]
	var id uint64
	k := 0
	for len(rest) > 0 && k < len(sd.order) {
		gap, n := binary.Uvarint(rest)
		if n <= 0 {
			return fmt.Errorf("harvest: a pair's skipped contexts are corrupt")
		}
		rest, id = rest[n:], id+gap
		for k < len(sd.order) && sd.set[sd.order[k]].ctx < id {
			k++
		}
		for k < len(sd.order) && sd.set[sd.order[k]].ctx == id {
			sd.skipped[sd.order[k]] = true
			k++
		}
	}
	return nil
}

// LabelSide adds to each job's sums the contexts of the side's set that
// the job has not counted yet (Skip): own's score is the set's, the other
// sentence's is computed (the cross score, as Label computes it, without
// the cache). ownFirst says whether own is the pair's first sentence (a);
// the sums are kept as (a, b). Across the two sides of a pair (first with
// ownFirst and no Skip, then the other with the first set's SetSkip as
// Skip), the sums are those of Eq. 4 over C = C_a + C_b, a context of both
// counted once, and added in the order Label adds them. A Skip that does
// not decode against this engine's store is an error, and no sums change.
func (e *Engine) LabelSide(sd *Side, jobs []SideJob, ownFirst bool, st Settings) (Stats, error) {
	var work Stats
	set := sd.set
	if len(set) == 0 || len(jobs) == 0 {
		return work, nil
	}
	zref := st.Similarity == SimilarityZRef
	if zref && !sd.ref {
		var w Stats
		sd.mOwn, sd.sOwn, w = e.RefStats(sd.own, st.Lambda)
		work.add(w)
		sd.ref = true
	}
	keep := make([][]int, len(jobs)) // indices into set of each job's contexts
	for n, j := range jobs {
		idx := make([]int, 0, len(set))
		if len(j.Skip) > 0 {
			if err := e.skips(sd, j.Skip); err != nil {
				return work, err
			}
			for i := range set {
				if !sd.skipped[i] {
					idx = append(idx, i)
				}
			}
		} else {
			for i := range set {
				idx = append(idx, i)
			}
		}
		keep[n] = idx
	}
	if Whitened(st.Similarity) {
		c, err := e.whiteScorer(st)
		if err != nil {
			return work, err
		}
		e.labelSideWhite(c, st.Similarity, sd, jobs, keep, ownFirst, &work)
		return work, nil
	}
	// cross[n][k] is S(other sentence of job n, set[keep[n][k]]).
	cross := make([][]float32, len(jobs))
	if cs, w, ok := e.ctxOnly(st.Lambda); ok {
		others := make([]string, len(jobs))
		for n, j := range jobs {
			others[n] = j.Other
		}
		cs.crossScores(sd, others, keep, w, cross, &work)
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
				o, x = standardOne(o, sd.mOwn, sd.sOwn), standardOne(x, mOther, sOther)
			}
			if ownFirst {
				j.Sums.add(o, x)
			} else {
				j.Sums.add(x, o)
			}
		}
	}
	return work, nil
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
// sd.set[i] of keep[n], the score S Engine.Score gives it when the
// contrastive term, weighted w, is the only one: each context's sum once
// per side (kept in sd for its later batches), each sentence's f(s) from
// the scorer's cache, and no cache of scores.
func (c *CtxScorer) crossScores(sd *Side, others []string, keep [][]int, w float64, out [][]float32, work *Stats) {
	for n, s := range others {
		out[n] = make([]float32, len(keep[n]))
		if len(keep[n]) == 0 {
			continue
		}
		f, encoded := c.sentenceVec(s)
		if encoded {
			work.SentencesEncoded++
		}
		for k, i := range keep[n] {
			u, inv := c.sideSum(sd, i, work)
			out[n][k] = float32(w * float64(c.Model.ScoreSum(f, u, inv)))
		}
		work.CtxPairs += int64(len(keep[n]))
	}
}

// sideSum returns the vector sum of context i of the side's set and its
// inverse norm (contextSum), computed once per side and kept in sd for the
// side's later batches.
func (c *CtxScorer) sideSum(sd *Side, i int, work *Stats) ([]float32, float32) {
	dim := c.Model.Dim()
	if sd.u == nil {
		sd.buf = make([]float32, len(sd.set)*dim)
		sd.u = make([][]float32, len(sd.set))
		sd.inv = make([]float32, len(sd.set))
	}
	if sd.u[i] == nil {
		sd.u[i], sd.inv[i] = c.contextSum(sd.buf[i*dim:(i+1)*dim], &sd.set[i], work)
	}
	return sd.u[i], sd.inv[i]
}
