package disc

import (
	"math/rand/v2"

	"github.com/ctxsim/ctxsim/scoring/examples"
)

// Ranking measures what reranking needs: for a sentence, is its true
// context ranked above other contexts? Each positive example's sentence is
// scored against its own context and candidates-1 contexts of other
// positives; MRR and Hits@1 of the true context are returned. A separable
// (linear) head ranks contexts the same way for every sentence, so it can
// only win here through a context prior.
func (m *Model) Ranking(tok Tokenizer, exs []examples.Coherence, candidates int, seed uint64) (mrr, hits1 float64) {
	var pos []examples.Coherence
	for _, e := range exs {
		if e.Kind == examples.Positive {
			pos = append(pos, e)
		}
	}
	if len(pos) < candidates {
		return 0, 0
	}
	// Encode every distinct sentence once, then score from vectors.
	b := m.newBatch(tok, pos)
	vecs := make([][]float32, 0, len(b.seqs))
	for i := 0; i < len(b.seqs); i += 256 {
		vecs = append(vecs, m.Encode(b.seqs[i:min(i+256, len(b.seqs))])...)
	}
	d := m.VecDim()
	side := func(idx []int) []float32 {
		out := make([]float32, d)
		vs := make([][]float32, len(idx))
		for i, k := range idx {
			vs[i] = vecs[k]
		}
		MeanVec(out, vs)
		return out
	}
	lefts := make([][]float32, len(pos))
	rights := make([][]float32, len(pos))
	for i := range pos {
		lefts[i], rights[i] = side(b.left[i]), side(b.right[i])
	}
	r := rand.New(rand.NewPCG(seed, 0x72616e6b))
	l := make([]float32, 0, candidates*d)
	s := make([]float32, 0, candidates*d)
	rr := make([]float32, 0, candidates*d)
	for i := range pos {
		l, s, rr = l[:0], s[:0], rr[:0]
		sv := vecs[b.sent[i][0]]
		ctx := []int{i}
		for len(ctx) < candidates {
			if j := r.IntN(len(pos)); j != i {
				ctx = append(ctx, j)
			}
		}
		for _, j := range ctx {
			l = append(l, lefts[j]...)
			s = append(s, sv...)
			rr = append(rr, rights[j]...)
		}
		logits := m.Logits(l, s, rr)
		rank := 1
		for _, x := range logits[1:] {
			if x > logits[0] {
				rank++
			}
		}
		mrr += 1 / float64(rank)
		if rank == 1 {
			hits1++
		}
	}
	n := float64(len(pos))
	return mrr / n, hits1 / n
}
