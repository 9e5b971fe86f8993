package method

import (
	"slices"
	"testing"

	"github.com/ctxsim/ctxsim/schemas"
)

// keyed gives the engine's vector scorers keys, as LoadModels does for
// models read from files.
func keyed(e *Engine) {
	for _, s := range e.scorers {
		switch s := s.(type) {
		case *DiscScorer:
			s.Key = "disc-test"
		case *CtxScorer:
			s.Key = "ctx-test"
		}
	}
}

// TestStoredVectorsChangeNothing computes every stored sentence's vectors
// apart (as the encode job does), installs them into a fresh engine, and
// checks that context sets and labels are those of an engine that computes
// its vectors as it needs them, bit for bit, with no corpus sentence
// encoded.
func TestStoredVectorsChangeNothing(t *testing.T) {
	useGoBackend(t)
	chunks := testChunks(24)
	lazy, m := testEngineModels(t, chunks)
	stored, err := m.Engine(lazy.Store)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored.VectorScorers()) != 0 {
		t.Fatal("models built in memory have no vector keys, so no stored vectors")
	}
	keyed(stored)
	vs := stored.VectorScorers()
	if len(vs) != 2 || vs[0].Terms()[0] != TermCtx || vs[1].Terms()[0] != TermDisc {
		t.Fatalf("vector scorers %v", vs)
	}
	// The corpus sentences, in an order and batches unlike the lazy
	// engine's.
	var ks []int32
	var texts []string
	for _, c := range slices.Backward(chunks) {
		for i, id := range c.SentenceIDs {
			k, ok := stored.Store.SentenceIndex(id)
			if !ok {
				t.Fatalf("sentence %s not in the store", id)
			}
			if !slices.Contains(ks, k) {
				ks, texts = append(ks, k), append(texts, c.Sentences[i])
			}
		}
	}
	for _, v := range vs {
		got := v.SentenceVectors(texts)
		if len(got) != len(texts) || len(got[0]) != v.VectorDim() {
			t.Fatalf("%s: %d vectors of %d for %d sentences", v.VectorKey(), len(got), len(got[0]), len(texts))
		}
		v.SetVectors(ks, got)
	}

	var hits []schemas.Hit
	for _, c := range chunks {
		hits = append(hits, schemas.Hit{ChunkID: c.ID})
	}
	pairs := [][2]string{{"the cat sat on a mat.", "a dog ran in the park."},
		{"old house by the river.", "the bird sang in a red tree."}}
	st := Paper()
	st.Rerank, st.SetSize = 30, 8
	for _, p := range pairs {
		var labels [2]PairLabel
		var sets [2][2][]Cand
		var work [2]Stats
		for j, e := range []*Engine{lazy, stored} {
			before := e.Stats()
			a, _ := e.ContextSet(p[0], hits, st, 1)
			b, _ := e.ContextSet(p[1], hits[5:], st, 2)
			sets[j] = [2][]Cand{a, b}
			labels[j] = e.Label(p[0], p[1], a, b, st)
			work[j] = e.Stats()
			work[j].SentencesEncoded -= before.SentencesEncoded
		}
		for side := range 2 {
			x, y := sets[0][side], sets[1][side]
			if len(x) != len(y) || len(x) == 0 {
				t.Fatalf("set sizes %d and %d", len(x), len(y))
			}
			for i := range x {
				if x[i].Key() != y[i].Key() || x[i].S != y[i].S || x[i].Comp != y[i].Comp {
					t.Fatalf("%q context %d: %s %v %v computed, %s %v %v stored", p[side], i,
						x[i].Key(), x[i].S, x[i].Comp, y[i].Key(), y[i].S, y[i].Comp)
				}
			}
		}
		if labels[0] != labels[1] {
			t.Fatalf("label %+v computed, %+v stored", labels[0], labels[1])
		}
		// The stored engine encodes only the two sentences being scored
		// (once per call that scores them, by each of the two models),
		// never a corpus sentence.
		if work[1].SentencesEncoded > 8 {
			t.Fatalf("%d sentences encoded with stored vectors", work[1].SentencesEncoded)
		}
	}
	if n := lazy.Stats().SentencesEncoded; n < int64(len(ks)) {
		t.Fatalf("the computing engine encoded %d sentences, fewer than the %d corpus sentences", n, len(ks))
	}
}
