package method

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/ctxsim/ctxsim/schemas"
)

// TestPartsEqualWhole checks the method over a corpus split into parts
// against an engine over the whole corpus: the context sets merged from
// the parts' candidates (PartCandidates, MergeSet) are ContextSet's,
// context for context and score for score; the pairs' sums added over the
// parts (ResolveIn, LabelPart, Sums.Add) give Eq. 4 over the same |C| to
// within the rounding of the order of additions; and the parts' TF-IDF
// counts add up to the whole store's. Three parts, under the paper's
// settings and the defaults with each similarity.
func TestPartsEqualWhole(t *testing.T) {
	useGoBackend(t)
	chunks := testChunks(30)
	whole, m := testEngineModels(t, chunks)
	const P = 3
	partOf := func(id string) int {
		var n int
		fmt.Sscanf(id, "c%d", &n)
		return (n * 7) % P
	}
	engines := make([]*Engine, P)
	for p := range P {
		st := NewStore()
		for _, c := range chunks {
			if partOf(c.ID) == p {
				if err := st.Add(c); err != nil {
					t.Fatal(err)
				}
			}
		}
		e, err := m.Engine(st)
		if err != nil {
			t.Fatal(err)
		}
		engines[p] = e
	}
	// Hits in a retrieval order of their own, not the parts'.
	var hits []schemas.Hit
	for i := range chunks {
		hits = append(hits, schemas.Hit{ChunkID: chunks[(i*11)%len(chunks)].ID})
	}
	sents := []string{"the cat sat on a mat.", "a dog ran in the park.", "the bird sang on a wire.", "rain fell on the town."}
	cases := []Settings{Paper()}
	for _, sim := range []string{SimilarityCosine, SimilarityPearson, SimilarityZRef, SimilarityZWhite, SimilarityOverlap} {
		st := Defaults()
		st.Similarity = sim
		cases = append(cases, st)
	}
	compared := 0
	for _, st := range cases {
		st.Rerank, st.SetSize = 40, 12
		_, rerank := whole.Term(st.RerankBy)
		terms, idx := whole.SetTerms(st)
		refs := make([][]schemas.ScoredContext, len(sents))
		sets := make([][]Cand, len(sents))
		for i, s := range sents {
			sets[i], _ = whole.ContextSet(s, hits[i:], st, uint64(i))
			want := make([]schemas.ScoredContext, len(sets[i]))
			for j := range sets[i] {
				want[j] = sets[i][j].Ref(idx)
			}
			var parts [][]PartCand
			missing := 0
			for _, e := range engines {
				pc, info, err := e.PartCandidates(s, hits[i:], st)
				if err != nil {
					t.Fatal(err)
				}
				parts, missing = append(parts, pc), missing+info.MissingChunks
			}
			if missing != (P-1)*len(hits[i:]) {
				t.Fatalf("%d hits missing from the parts, want %d (each hit is in one part)", missing, (P-1)*len(hits[i:]))
			}
			got := MergeSet(parts, st, rerank)
			// Merged in turn, as the harvest's steps merge them: the same.
			inTurn := parts[0]
			for _, pc := range parts[1:] {
				inTurn = KeepBest([][]PartCand{inTurn, pc}, st, rerank)
			}
			if again := MergeSet([][]PartCand{inTurn}, st, rerank); !slices.EqualFunc(again, got, func(a, b schemas.ScoredContext) bool {
				return a.ChunkID == b.ChunkID && a.Slot == b.Slot && a.Score == b.Score
			}) {
				t.Fatalf("%s/%s sentence %d: the parts merged in turn give another set", st.RerankBy, st.Similarity, i)
			}
			if len(want) < 6 || !slices.EqualFunc(got, want, func(a, b schemas.ScoredContext) bool {
				return a.ChunkID == b.ChunkID && a.Slot == b.Slot && a.Score == b.Score && slices.Equal(a.Terms, b.Terms)
			}) {
				t.Fatalf("%s/%s sentence %d: merged set\n%v\nwhole store's\n%v", st.RerankBy, st.Similarity, i, got, want)
			}
			refs[i] = got
		}
		for _, pr := range [][2]int{{0, 1}, {2, 1}, {3, 0}, {1, 3}} {
			a, b := pr[0], pr[1]
			lab := whole.Label(sents[a], sents[b], sets[a], sets[b], st)
			var sums Sums
			for p, e := range engines {
				has := func(id string) bool { return partOf(id) == p }
				setA, err := e.ResolveIn(refs[a], terms, has)
				if err != nil {
					t.Fatal(err)
				}
				setB, err := e.ResolveIn(refs[b], terms, has)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := e.LabelPart(sents[a], sents[b], setA, setB, st, &sums); err != nil {
					t.Fatal(err)
				}
			}
			got := float64(float32(sums.Similarity(st.Similarity)))
			if int(sums.N) != lab.Contexts || math.Abs(got-lab.Context) > 1e-6 || lab.Context == 0 {
				t.Errorf("%s/%s pair %v: Eq. 4 over the parts %v over %d contexts, whole %v over %d",
					st.RerankBy, st.Similarity, pr, got, sums.N, lab.Context, lab.Contexts)
			}
			compared++
		}
	}
	if compared != 4*len(cases) {
		t.Fatalf("compared %d labels", compared)
	}
	for _, stem := range []bool{false, true} {
		sum := engines[0].Store.TFIDF(stem)
		for _, e := range engines[1:] {
			if err := AddTFIDF(sum, e.Store.TFIDF(stem)); err != nil {
				t.Fatal(err)
			}
		}
		w := whole.Lexical(stem)
		if sum.N != w.N || !maps.Equal(sum.DF, w.DF) {
			t.Errorf("stem %v: the parts' TF-IDF counts %v documents and %d terms, the whole store's %v and %d", stem, sum.N, len(sum.DF), w.N, len(w.DF))
		}
		e, err := m.Engine(engines[0].Store)
		if err != nil {
			t.Fatal(err)
		}
		e.UseLexical(sum)
		if a, b := e.Lexical(stem).Cosine(sents[0], sents[2]), w.Cosine(sents[0], sents[2]); a != b {
			t.Errorf("stem %v: lexical cosine %v with the parts' counts, %v with the whole store's", stem, a, b)
		}
	}
}
