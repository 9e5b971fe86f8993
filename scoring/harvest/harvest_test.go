package harvest

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/disc"
	"github.com/ctxsim/ctxsim/scoring/examples"
	"github.com/ctxsim/ctxsim/scoring/gen"
	"github.com/ctxsim/ctxsim/scoring/nn"
	"github.com/ctxsim/ctxsim/scoring/tokenizer"
)

var words = []string{"the", "cat", "sat", "on", "a", "mat", "dog", "ran", "in", "park", "bird", "sang", "tree", "red", "blue", "old", "house", "river", "flows", "north"}

// testChunks returns n chunks of 6 sentences from 2-chunk documents; each
// sentence is distinct.
func testChunks(n int) []schemas.Chunk {
	var out []schemas.Chunk
	for c := range n {
		ch := schemas.Chunk{ID: fmt.Sprintf("c%03d", c), DocID: fmt.Sprintf("d%d", c/2)}
		for i := range 6 {
			s := fmt.Sprintf("%s %s %s %s number %d.", words[(c+i)%len(words)], words[(3*c+i+1)%len(words)],
				words[(5*c+2*i+2)%len(words)], words[(7*c+i+5)%len(words)], c*6+i)
			ch.Sentences = append(ch.Sentences, s)
			ch.SentenceIDs = append(ch.SentenceIDs, fmt.Sprintf("s%d", c*6+i))
		}
		out = append(out, ch)
	}
	return out
}

func testEngine(t *testing.T, chunks []schemas.Chunk) *Engine {
	t.Helper()
	st := NewStore()
	var texts []string
	for _, c := range chunks {
		if err := st.Add(c); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, c.Sentences...)
	}
	tok, err := tokenizer.Train(slices.Values(texts), tokenizer.TrainConfig{VocabSize: 400})
	if err != nil {
		t.Fatal(err)
	}
	dm, err := disc.New(disc.Config{Vocab: tok.VocabSize(), EmbedDim: 8, Hidden: 8, HeadHidden: 8,
		Head: disc.HeadInteraction, MaxTokens: 32, Window: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	gm, err := gen.New(gen.Config{Vocab: tok.VocabSize(), Dim: 16, Heads: 2, FF: 32, EncLayers: 1, DecLayers: 1,
		MaxSrc: 64, MaxTgt: 32, MaxSegments: 11}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return NewEngine(tok, dm, gm, st)
}

func TestCandidates(t *testing.T) {
	chunks := testChunks(4)
	e := testEngine(t, chunks)
	cands, missing := e.Candidates([]schemas.Hit{{ChunkID: "c002"}, {ChunkID: "nope"}, {ChunkID: "c000"}})
	if missing != 1 || len(cands) != 8 {
		t.Fatalf("missing %d, %d candidates; want 1 and 2 chunks x 4 two-sided slots", missing, len(cands))
	}
	c := cands[0]
	if c.ChunkID != "c002" || c.Slot != 1 || c.Rank != 0 || len(c.Left) != 1 || len(c.Right) != 2 {
		t.Fatalf("first candidate %+v", c)
	}
	if e.Store.Text(c.Left[0]) != chunks[2].Sentences[0] || e.Store.Text(c.Right[1]) != chunks[2].Sentences[3] {
		t.Fatal("context sentences do not match the chunk")
	}
	last := cands[7]
	if last.ChunkID != "c000" || last.Slot != 4 || last.Rank != 2 || len(last.Left) != 2 || len(last.Right) != 1 {
		t.Fatalf("last candidate %+v", last)
	}
	refs := []schemas.ScoredContext{{ChunkID: "c001", Slot: 3}}
	got, err := e.Resolve(refs)
	if err != nil || len(got[0].Left) != 2 || e.Store.Text(got[0].Left[1]) != chunks[1].Sentences[2] {
		t.Fatalf("resolve: %v %+v", err, got)
	}
	for _, bad := range []schemas.ScoredContext{{ChunkID: "zz", Slot: 1}, {ChunkID: "c001", Slot: 0}, {ChunkID: "c001", Slot: 5}} {
		if _, err := e.Resolve([]schemas.ScoredContext{bad}); err == nil {
			t.Fatalf("resolve %+v: no error", bad)
		}
	}
}

// TestScoreMatchesModels checks each term against a direct model call and
// that the cache returns the same numbers without new model calls.
func TestScoreMatchesModels(t *testing.T) {
	chunks := testChunks(3)
	e := testEngine(t, chunks)
	cands, _ := e.Candidates([]schemas.Hit{{ChunkID: "c000"}, {ChunkID: "c001"}})
	s := "the red bird sang in the old tree."
	lambda := [NumTerms]float64{1, 0.5, 0.25, 2}
	e.Score(s, cands, lambda)
	c := cands[5]
	var left, right []string
	for _, k := range c.Left {
		left = append(left, e.Store.Text(k))
	}
	for _, k := range c.Right {
		right = append(right, e.Store.Text(k))
	}
	if len(left) != 2 || len(right) != 2 {
		t.Fatalf("candidate 5 has %d+%d context sentences, want 2+2", len(left), len(right))
	}
	ctx := examples.Context{Left: left, Right: right}
	for k := TermToS; k < NumTerms; k++ {
		want := e.Gen.Score([]gen.Request{gen.NewRequest(e.Tok, ctx, s, examples.Direction(k-TermToS))})[0]
		if math.Abs(float64(want-c.Comp[k])) > 1e-4 {
			t.Fatalf("term %s: %g, direct %g", TermNames[k], c.Comp[k], want)
		}
	}
	vs := e.Disc.Encode([][]int32{e.Tok.Encode(left[0]), e.Tok.Encode(left[1]), e.Tok.Encode(s),
		e.Tok.Encode(right[0]), e.Tok.Encode(right[1])})
	d := e.Disc.VecDim()
	l, r := make([]float32, d), make([]float32, d)
	disc.MeanVec(l, vs[:2])
	disc.MeanVec(r, vs[3:])
	want := disc.LogSigmoid(e.Disc.Logits(l, vs[2], r)[0])
	if math.Abs(float64(want-c.Comp[TermDisc])) > 1e-4 {
		t.Fatalf("disc term %g, direct %g", c.Comp[TermDisc], want)
	}
	if got := c.Comp.S(lambda); math.Abs(float64(got-c.S)) > 1e-5 {
		t.Fatalf("S %g, want %g", c.S, got)
	}
	before := e.Stats()
	again, _ := e.Candidates([]schemas.Hit{{ChunkID: "c000"}, {ChunkID: "c001"}})
	e.Score(s, again, lambda)
	after := e.Stats()
	if after.GenEvals != before.GenEvals || after.DiscPairs != before.DiscPairs {
		t.Fatalf("cached scores recomputed: %+v then %+v", before, after)
	}
	if after.CacheHits-before.CacheHits != int64(len(again)*NumTerms) {
		t.Fatalf("cache hits %d, want %d", after.CacheHits-before.CacheHits, len(again)*NumTerms)
	}
	for i := range again {
		if again[i].Comp != cands[i].Comp {
			t.Fatalf("candidate %d: cached %v, computed %v", i, again[i].Comp, cands[i].Comp)
		}
	}
	// A switched-off term is not computed.
	off, _ := e.Candidates([]schemas.Hit{{ChunkID: "c002"}})
	e.Score(s, off, [NumTerms]float64{1, 0, 0, 0})
	if st := e.Stats(); st.GenEvals != after.GenEvals {
		t.Fatalf("generative model ran for switched-off terms: %d evals", st.GenEvals-after.GenEvals)
	}
	if off[0].Comp[TermToS] != 0 {
		t.Fatal("switched-off term is not zero")
	}
}

func TestBuildSetDiversity(t *testing.T) {
	chunks := testChunks(6)
	// Chunk c005 repeats c004's sentences: its contexts collide on Jaccard.
	chunks[5].Sentences = slices.Clone(chunks[4].Sentences)
	for i := range chunks[5].SentenceIDs {
		chunks[5].SentenceIDs[i] += "x"
	}
	e := testEngine(t, chunks)
	var hits []schemas.Hit
	for _, c := range chunks {
		hits = append(hits, schemas.Hit{ChunkID: c.ID})
	}
	cands, _ := e.Candidates(hits)
	for i := range cands {
		cands[i].S = float32(-i) // retrieval order
	}
	set := e.BuildSet(cands, 100, true, 0.5)
	seen := map[string]int32{}
	for _, c := range set {
		if _, ok := seen[c.ChunkID]; ok {
			t.Fatalf("chunk %s twice", c.ChunkID)
		}
		seen[c.ChunkID] = c.Slot
	}
	// c004 gives its slot 1; c005's slot 1 has the same c_{i-1} (Jaccard 1)
	// and is skipped, its slot 2 is not.
	if len(set) != 6 || seen["c004"] != 1 || seen["c005"] != 2 {
		t.Fatalf("%d contexts (%v); want one per chunk, c005 from slot 2", len(set), seen)
	}
	if got := e.BuildSet(cands, 7, false, 0.5); len(got) != 7 || got[1].ChunkID != "c000" {
		t.Fatalf("without diversity: %d contexts", len(got))
	}
	if got := e.BuildSet(cands, 2, true, 0.5); len(got) != 2 {
		t.Fatalf("size bound: %d", len(got))
	}
}

func TestContextSetAndLabel(t *testing.T) {
	chunks := testChunks(12)
	e := testEngine(t, chunks)
	st := Defaults()
	st.Rerank, st.SetSize = 20, 6
	var hits []schemas.Hit
	for _, c := range chunks {
		hits = append(hits, schemas.Hit{ChunkID: c.ID})
	}
	a, b := "the cat sat on a mat.", "a dog ran in the park."
	setA, info := e.ContextSet(a, hits, st, 1)
	if info.Candidates != 48 || info.Reranked != 20 || len(setA) != 6 {
		t.Fatalf("info %+v, |C| %d", info, len(setA))
	}
	for i := 1; i < len(setA); i++ {
		if setA[i].S > setA[i-1].S {
			t.Fatal("context set not sorted by S")
		}
	}
	setB, _ := e.ContextSet(b, hits[3:], st, 2)
	before := e.Stats().GenEvals
	lab, n, _ := e.Label(a, b, setA, setB, st)
	shared := 0
	for _, x := range setA {
		for _, y := range setB {
			if x.Key() == y.Key() {
				shared++
			}
		}
	}
	if n != len(setA)+len(setB)-shared {
		t.Fatalf("|C| = %d, want %d", n, len(setA)+len(setB)-shared)
	}
	// Cross scores only: S(a, C_b \ C_a) and S(b, C_a \ C_b), three terms each,
	// of which some may already be cached from the context-set stage.
	if evals := e.Stats().GenEvals - before; evals > int64(3*(n-shared)) {
		t.Fatalf("%d generative evaluations for %d cross scores", evals, n-shared)
	}
	rev, _, _ := e.Label(b, a, setB, setA, st)
	if math.Abs(lab-rev) > 1e-6 || lab < -1 || lab > 1 {
		t.Fatalf("label %g, reversed %g", lab, rev)
	}
	if self, _, _ := e.Label(a, a, setA, setA, st); math.Abs(self-1) > 1e-6 {
		t.Fatalf("self label %g", self)
	}
	st.RandomContexts = true
	r1, _ := e.ContextSet(a, nil, st, 7)
	r2, _ := e.ContextSet(a, nil, st, 7)
	if len(r1) == 0 || r1[0].Key() != r2[0].Key() {
		t.Fatal("random contexts not deterministic under a seed")
	}
}

func TestSimilarity(t *testing.T) {
	a := []float64{-1, -2, -3}
	if got := Similarity(a, []float64{-2, -4, -6}, "cosine"); math.Abs(got-1) > 1e-12 {
		t.Fatal(got)
	}
	// Shifted vectors: cosine stays high, pearson sees the opposite order.
	if got := Similarity(a, []float64{-3, -2, -1}, "pearson"); math.Abs(got+1) > 1e-12 {
		t.Fatal(got)
	}
	if got := Similarity(a, []float64{0, 0, 0}, "cosine"); got != 0 {
		t.Fatal(got)
	}
	if err := (Settings{TopK: 1, Rerank: 1, SetSize: 2, MaxJaccard: 0.5, Similarity: "cosine", Lambda: [4]float64{1}}).Validate(); err == nil {
		t.Fatal("rerank < set_size accepted")
	}
	if err := Defaults().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestSpearman(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5}
	if got := Spearman(x, []float64{10, 20, 30, 40, 1000}); math.Abs(got-1) > 1e-12 {
		t.Fatal(got)
	}
	if got := Spearman(x, []float64{5, 4, 3, 2, 1}); math.Abs(got+1) > 1e-12 {
		t.Fatal(got)
	}
	// Ties: ranks 1.5, 1.5, 3 against 1, 2, 3 → r = 0.866.
	if got := Spearman([]float64{1, 1, 2}, []float64{1, 2, 3}); math.Abs(got-math.Sqrt(3)/2) > 1e-12 {
		t.Fatal(got)
	}
	if !math.IsNaN(Spearman([]float64{1, 1}, []float64{1, 2})) {
		t.Fatal("constant input")
	}
}

func TestPresets(t *testing.T) {
	for _, n := range []string{"paper", "small", "demo"} {
		s, err := Preset(n)
		if err != nil || s.Validate() != nil {
			t.Fatalf("%s: %v %v", n, err, s.Validate())
		}
	}
	if _, err := Preset("huge"); err == nil {
		t.Fatal("unknown preset accepted")
	}
}

// TestScoresBatchInvariant checks that, with the pure-Go matrix multiply,
// a score does not depend on which other requests share its batch, so a
// cached score equals a fresh one bit for bit and harvests are
// reproducible.
func TestScoresBatchInvariant(t *testing.T) {
	prev := nn.Backend()
	if err := nn.SetBackend("go"); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if strings.HasPrefix(prev, "openblas") {
			nn.SetBackend("openblas")
		}
	}()
	chunks := testChunks(40)
	e := testEngine(t, chunks)
	var hits []schemas.Hit
	for _, c := range chunks {
		hits = append(hits, schemas.Hit{ChunkID: c.ID})
	}
	cands, _ := e.Candidates(hits)
	var reqs []gen.Request
	for i, c := range cands {
		s := chunks[(i*7)%len(chunks)].Sentences[i%6] // varied lengths
		for d := range 3 {
			reqs = append(reqs, gen.Request{Left: e.tokens(c.Left), S: e.Tok.Encode(s), Right: e.tokens(c.Right),
				Dir: examples.Direction(d)})
		}
	}
	all := e.Gen.Score(reqs)
	for i := 0; i < len(reqs); i += 7 {
		if one := e.Gen.Score(reqs[i : i+1])[0]; one != all[i] {
			t.Fatalf("request %d: %v alone, %v in a batch", i, one, all[i])
		}
	}
	sub := e.Gen.Score(reqs[5:200])
	for i := range sub {
		if sub[i] != all[5+i] {
			t.Fatalf("request %d: %v in one grouping, %v in another", 5+i, sub[i], all[5+i])
		}
	}
	// The coherence vectors too.
	var seqs [][]int32
	for _, c := range chunks[:10] {
		for _, s := range c.Sentences {
			seqs = append(seqs, e.Tok.Encode(s))
		}
	}
	vs := e.Disc.Encode(seqs)
	for i := 0; i < len(seqs); i += 5 {
		one := e.Disc.Encode(seqs[i : i+1])[0]
		if !slices.Equal(one, vs[i]) {
			t.Fatalf("sentence %d: vector depends on its batch", i)
		}
	}
}

func TestOverrides(t *testing.T) {
	s, err := Overrides{TopK: 7, Rerank: 30, SetSize: 12, Lambda: "1, 0,0.5,2", NoDiversity: true, Similarity: "pearson"}.Apply(Defaults())
	if err != nil {
		t.Fatal(err)
	}
	if s.TopK != 7 || s.Rerank != 30 || s.SetSize != 12 || s.Lambda != [NumTerms]float64{1, 0, 0.5, 2} || s.Diversity || s.Similarity != "pearson" {
		t.Fatalf("%+v", s)
	}
	if s, _ := (Overrides{}).Apply(Defaults()); s != Defaults() {
		t.Fatal("empty overrides changed the settings")
	}
	for _, o := range []Overrides{{Lambda: "1,1"}, {Lambda: "a,b,c,d"}, {Lambda: "0,0,0,0"}, {SetSize: 2000}, {Similarity: "dot"}} {
		if _, err := o.Apply(Defaults()); err == nil {
			t.Fatalf("%+v accepted", o)
		}
	}
}

// TestJaccardAtLeast checks the merge over sorted word IDs, with its size
// bound, against the plain set computation on random word sets.
func TestJaccardAtLeast(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		a, b := map[uint32]bool{}, map[uint32]bool{}
		for range r.IntN(8) {
			a[uint32(r.IntN(10))] = true
		}
		for range r.IntN(8) {
			b[uint32(r.IntN(10))] = true
		}
		inter := 0
		for w := range a {
			if b[w] {
				inter++
			}
		}
		want := 1.0
		if len(a)+len(b) > 0 {
			want = float64(inter) / float64(len(a)+len(b)-inter)
		}
		sa, sb := slices.Sorted(maps.Keys(a)), slices.Sorted(maps.Keys(b))
		for _, th := range []float64{0.25, 0.5, 1.0 / 3, 1} {
			if got := jaccardAtLeast(sa, sb, th); got != (want >= th) {
				t.Fatalf("%v %v t=%v: got %v, Jaccard %v", sa, sb, th, got, want)
			}
		}
	}
}
