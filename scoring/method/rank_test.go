package method

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ctxsim/ctxsim/schemas"
)

// The bounded rerank keeps the same candidates, in the same order and with
// the same term values, as computing the term for every candidate; and its
// bounds hold: every approximate score lies within its bound of the exact
// one.
func TestBoundedRerankMatchesExact(t *testing.T) {
	chunks := testChunks(60)
	e := testEngine(t, chunks)
	var hits []schemas.Hit
	for _, c := range chunks {
		hits = append(hits, schemas.Hit{ChunkID: c.ID})
	}
	k, _ := e.Term(TermCtx)
	cs := e.scorers[e.refs[k].s].(*CtxScorer)
	sentences := []string{"the cat sat on a mat.", "a dog ran in the park.", "old river flows north number 7.", "red"}
	for pass := range 2 { // cold inverse norms, then warm
		for _, s := range sentences {
			for _, n := range []int{1, 7, 50, 239} {
				cands, _ := e.Candidates(hits)
				var w Stats
				e.ExactRerank = true
				want := e.rerank(s, slices.Clone(cands), k, n, &w)
				e.ExactRerank = false
				got, ok := e.rerankBounded(cs, s, slices.Clone(cands), k, n, &w)
				if !ok {
					t.Fatalf("pass %d, %q, n %d: the bounded rerank declined", pass, s, n)
				}
				if len(got) != len(want) {
					t.Fatalf("pass %d, %q, n %d: kept %d, want %d", pass, s, n, len(got), len(want))
				}
				for i := range want {
					if got[i].Key() != want[i].Key() || got[i].Comp[k] != want[i].Comp[k] {
						t.Fatalf("pass %d, %q, n %d: kept[%d] = %s %v, want %s %v", pass, s, n, i,
							got[i].Key(), got[i].Comp[k], want[i].Key(), want[i].Comp[k])
					}
				}
			}
		}
	}
	// Warm now: every context's inverse norm is cached, so the scores are
	// approximations with bounds; check each against the exact value.
	cands, _ := e.Candidates(hits)
	a, b := make([]float32, len(cands)), make([]float32, len(cands))
	var w Stats
	if !cs.scoreBounded(sentences[0], cands, a, b, &w) {
		t.Fatal("scoreBounded declined")
	}
	need := make([]uint64, len(cands))
	for i := range need {
		need[i] = 1 << k
	}
	e.compute(sentences[0], cands, need, &w)
	approx := 0
	for i := range cands {
		if b[i] > 0 {
			approx++
		}
		if d := a[i] - cands[i].Comp[k]; d > b[i] || -d > b[i] {
			t.Fatalf("context %s: approximate %v, exact %v, bound %v", cands[i].Key(), a[i], cands[i].Comp[k], b[i])
		}
	}
	if approx != len(cands) {
		t.Fatalf("%d of %d warm contexts approximated", approx, len(cands))
	}
}

// diverseSets decides as checking jaccardAtLeast against every accepted
// set does.
func TestDiverseSetsMatchPairwiseJaccard(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		th := []float64{0.2, 0.5, 0.8, 1}[trial%4]
		vocab := 3 + r.IntN(40)
		var d diverseSets
		var accepted [][]uint32
		for range 150 {
			n := r.IntN(min(vocab, 12) + 1)
			set := map[uint32]bool{}
			for len(set) < n {
				set[uint32(r.IntN(vocab))] = true
			}
			var w []uint32
			for x := range set {
				w = append(w, x)
			}
			slices.Sort(w)
			want := true
			for _, p := range accepted {
				if jaccardAtLeast(w, p, th) {
					want = false
					break
				}
			}
			if got := d.add(w, th); got != want {
				t.Fatalf("trial %d: set %v after %d accepted: add %v, pairwise %v", trial, w, len(accepted), got, want)
			}
			if want {
				accepted = append(accepted, w)
			}
		}
	}
}
