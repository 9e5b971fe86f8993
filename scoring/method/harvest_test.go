package method

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/contrast"
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

// testModels returns small untrained coherence and infilling models and a
// briefly trained contrastive model over the chunks' text.
func testModels(t *testing.T, chunks []schemas.Chunk) *Models {
	t.Helper()
	var texts []string
	var docs []examples.Doc
	for _, c := range chunks {
		texts = append(texts, c.Sentences...)
		docs = append(docs, examples.Doc{ID: c.ID, Sentences: c.Sentences})
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
	cc := contrast.DefaultConfig()
	cc.Dim, cc.Vocab, cc.Buckets, cc.MinCount, cc.Batch, cc.Epochs, cc.WarmupSteps = 16, 100, 8, 1, 8, 2, 1
	cm, _, err := contrast.Train(cc, docs, contrast.TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &Models{Tok: tok, Disc: dm, Gen: gm, Ctx: cm, Window: 2,
		Reference: examples.ReferenceContexts(docs, 30, 2, 1), White: examples.ReferenceContexts(docs, 60, 2, 3)}
}

func testEngine(t *testing.T, chunks []schemas.Chunk) *Engine {
	t.Helper()
	e, _ := testEngineModels(t, chunks)
	return e
}

func testEngineModels(t *testing.T, chunks []schemas.Chunk) (*Engine, *Models) {
	t.Helper()
	st := NewStore()
	for _, c := range chunks {
		if err := st.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	m := testModels(t, chunks)
	e, err := m.Engine(st)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(e.Terms(), ","); got != "ctx,disc,to_s,to_left,to_right" {
		t.Fatalf("engine terms %s", got)
	}
	return e, m
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
	refs := []schemas.ScoredContext{{ChunkID: "c001", Slot: 3, Score: 2, Terms: []float32{0.5, -1}}}
	got, err := e.Resolve(refs, []string{"to_s", "ctx"})
	if err != nil || len(got[0].Left) != 2 || e.Store.Text(got[0].Left[1]) != chunks[1].Sentences[2] {
		t.Fatalf("resolve: %v %+v", err, got)
	}
	if got[0].Comp[2] != 0.5 || got[0].Comp[0] != -1 || got[0].S != 2 {
		t.Fatalf("resolved terms %v, S %v", got[0].Comp, got[0].S)
	}
	if r := got[0].Ref([]int{0, 2}); r.Terms[0] != -1 || r.Terms[1] != 0.5 {
		t.Fatalf("Ref terms %v", r.Terms)
	}
	for _, bad := range []schemas.ScoredContext{{ChunkID: "zz", Slot: 1}, {ChunkID: "c001", Slot: 0}, {ChunkID: "c001", Slot: 5},
		{ChunkID: "c001", Slot: 2, Terms: []float32{1}}} {
		if _, err := e.Resolve([]schemas.ScoredContext{bad}, nil); err == nil {
			t.Fatalf("resolve %+v: no error", bad)
		}
	}
	if _, err := e.Resolve(refs, []string{"to_s", "perplexity"}); err == nil {
		t.Fatal("an unknown term resolved")
	}
}

// TestScoreMatchesModels checks each term against a direct model call and
// that the cache returns the same numbers without new model calls.
func TestScoreMatchesModels(t *testing.T) {
	chunks := testChunks(3)
	e, m := testEngineModels(t, chunks)
	cands, _ := e.Candidates([]schemas.Hit{{ChunkID: "c000"}, {ChunkID: "c001"}})
	s := "the red bird sang in the old tree."
	lambda := map[string]float64{TermCtx: 0.7, TermDisc: 1, TermToS: 0.5, TermToLeft: 0.25, TermToRight: 2}
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
	term := func(name string) float32 {
		k, ok := e.Term(name)
		if !ok {
			t.Fatalf("no term %s", name)
		}
		return c.Comp[k]
	}
	ctx := examples.Context{Left: left, Right: right}
	for d, name := range []string{TermToS, TermToLeft, TermToRight} {
		want := m.Gen.Score([]gen.Request{gen.NewRequest(m.Tok, ctx, s, examples.Direction(d))})[0]
		if math.Abs(float64(want-term(name))) > 1e-4 {
			t.Fatalf("term %s: %g, direct %g", name, term(name), want)
		}
	}
	vs := m.Disc.Encode([][]int32{m.Tok.Encode(left[0]), m.Tok.Encode(left[1]), m.Tok.Encode(s),
		m.Tok.Encode(right[0]), m.Tok.Encode(right[1])})
	d := m.Disc.VecDim()
	l, r := make([]float32, d), make([]float32, d)
	disc.MeanVec(l, vs[:2])
	disc.MeanVec(r, vs[3:])
	want := disc.LogSigmoid(m.Disc.Logits(l, vs[2], r)[0])
	if math.Abs(float64(want-term(TermDisc))) > 1e-4 {
		t.Fatalf("disc term %g, direct %g", term(TermDisc), want)
	}
	wantCtx := m.Ctx.Score(m.Ctx.SentenceVec(s), m.Ctx.ContextVec(left, right))
	if math.Abs(float64(wantCtx-term(TermCtx))) > 1e-4 {
		t.Fatalf("ctx term %g, direct %g", term(TermCtx), wantCtx)
	}
	var sum float64
	for name, w := range lambda {
		sum += w * float64(term(name))
	}
	if math.Abs(sum-float64(c.S)) > 1e-5 {
		t.Fatalf("S %g, want %g", c.S, sum)
	}
	before := e.Stats()
	again, _ := e.Candidates([]schemas.Hit{{ChunkID: "c000"}, {ChunkID: "c001"}})
	e.Score(s, again, lambda)
	after := e.Stats()
	if after.GenEvals != before.GenEvals || after.DiscPairs != before.DiscPairs || after.CtxPairs != before.CtxPairs {
		t.Fatalf("cached scores recomputed: %+v then %+v", before, after)
	}
	if after.CacheHits-before.CacheHits != int64(len(again)*len(lambda)) {
		t.Fatalf("cache hits %d, want %d", after.CacheHits-before.CacheHits, len(again)*len(lambda))
	}
	for i := range again {
		if again[i].Comp != cands[i].Comp || again[i].S != cands[i].S {
			t.Fatalf("candidate %d: cached %v, computed %v", i, again[i].Comp, cands[i].Comp)
		}
	}
	// A switched-off term is not computed.
	off, _ := e.Candidates([]schemas.Hit{{ChunkID: "c002"}})
	e.Score(s, off, map[string]float64{TermDisc: 1, TermToS: 0})
	if st := e.Stats(); st.GenEvals != after.GenEvals || st.CtxPairs != after.CtxPairs {
		t.Fatalf("models ran for switched-off terms: %+v", st)
	}
	if k, _ := e.Term(TermToS); off[0].Comp[k] != 0 {
		t.Fatal("switched-off term is not zero")
	}
	if err := e.Check(Paper()); err != nil {
		t.Fatal(err)
	}
	noCtx, err := NewEngine(e.Store, 2, NewDiscScorer(m.Disc, NewTokenCache(m.Tok, e.Store)))
	if err != nil {
		t.Fatal(err)
	}
	zref := Defaults()
	zref.Similarity = SimilarityZRef
	if err := noCtx.Check(zref); err == nil || !strings.Contains(err.Error(), "reference contexts") {
		t.Fatalf("zref without reference contexts: %v", err)
	}
	st := Defaults()
	st.Similarity = SimilarityPearson
	if err := noCtx.Check(st); err == nil || !strings.Contains(err.Error(), `labeler "aligned" needs`) {
		t.Fatalf("the aligned labeler without the contrastive model: %v", err)
	}
	st.Labeler = LabelerHybrid
	if err := noCtx.Check(st); err == nil || !strings.Contains(err.Error(), `"ctx"`) {
		t.Fatalf("settings using a model that is not loaded: %v", err)
	}
	if _, err := NewEngine(e.Store, 2, NewCtxScorer(m.Ctx, e.Store), NewCtxScorer(m.Ctx, e.Store)); err == nil {
		t.Fatal("two scorers of one term accepted")
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
	ensemble := Defaults()
	ensemble.Labeler = LabelerEnsemble
	aligned := Defaults()
	aligned.Labeler = LabelerAligned
	overlap := aligned
	overlap.Similarity = SimilarityOverlap
	for _, st := range []Settings{Paper(), Defaults(), ensemble, aligned, overlap} {
		st.Rerank, st.SetSize = 20, 6
		var hits []schemas.Hit
		for _, c := range chunks {
			hits = append(hits, schemas.Hit{ChunkID: c.ID})
		}
		a, b := "the cat sat on a mat.", "a dog ran in the park."
		setA, info := e.ContextSet(a, hits, st, 1)
		if info.Candidates != 48 || info.Reranked != 20 || len(setA) != 6 {
			t.Fatalf("%s: info %+v, |C| %d", st.RerankBy, info, len(setA))
		}
		for i := 1; i < len(setA); i++ {
			if setA[i].S > setA[i-1].S {
				t.Fatal("context set not sorted by S")
			}
		}
		names, idx := e.SetTerms(st)
		if want := st.TermsUsed(); !slices.Equal(slices.Sorted(slices.Values(names)), want) || len(idx) != len(want) {
			t.Fatalf("set terms %v, want %v", names, want)
		}
		setB, _ := e.ContextSet(b, hits[3:], st, 2)
		before := e.Stats().GenEvals
		lab := e.Label(a, b, setA, setB, st)
		shared := 0
		for _, x := range setA {
			for _, y := range setB {
				if x.Key() == y.Key() {
					shared++
				}
			}
		}
		n := lab.Contexts
		if n != len(setA)+len(setB)-shared {
			t.Fatalf("|C| = %d, want %d", n, len(setA)+len(setB)-shared)
		}
		// Cross scores only: S(a, C_b \ C_a) and S(b, C_a \ C_b), three
		// generative terms each, of which some may already be cached from
		// the context-set stage.
		if evals := e.Stats().GenEvals - before; evals > int64(3*(n-shared)) {
			t.Fatalf("%d generative evaluations for %d cross scores", evals, n-shared)
		}
		if st.Similarity == SimilarityZRef {
			// zref: each score vector standardised by its sentence's
			// statistics over the reference contexts.
			va, vb, _ := e.LabelVectors(a, b, setA, setB, st)
			ma, sa, _ := e.RefStats(a, st.Lambda)
			mb, sb, _ := e.RefStats(b, st.Lambda)
			if sa <= 0 || sb <= 0 {
				t.Fatalf("reference spread %v %v", sa, sb)
			}
			for i := range va {
				va[i], vb[i] = (va[i]-ma)/sa, (vb[i]-mb)/sb
			}
			if want := float64(float32(Similarity(va, vb, SimilarityCosine))); lab.Context != want {
				t.Fatalf("zref Eq. 4 %v, want %v", lab.Context, want)
			}
		}
		rev := e.Label(b, a, setB, setA, st)
		if math.Abs(lab.Label-rev.Label) > 1e-6 || lab.Label < -1 || lab.Label > 1 {
			t.Fatalf("label %g, reversed %g", lab.Label, rev.Label)
		}
		wantLabel := lab.Context
		switch st.Labeler {
		case LabelerHybrid:
			wantLabel = Hybrid(lab.Context, lab.Lexical)
		case LabelerEnsemble:
			wantLabel = Ensemble(lab.Context, lab.Lexical, lab.Embed)
		case LabelerAligned:
			wantLabel = Aligned(st.Similarity, lab.Context, lab.Align, lab.Embed)
			// Under overlap the rule is the mean of the alignment and Eq. 4.
			if st.Similarity == SimilarityOverlap && math.Abs(wantLabel-(lab.Align+lab.Context)/2) > 1e-12 {
				t.Fatalf("overlap: aligned label %v from alignment %v and Eq. 4 %v", wantLabel, lab.Align, lab.Context)
			}
		}
		if emb, ok := e.Embedded(a, b); !ok || lab.Embed != float64(float32(emb)) || lab.Embed == 0 {
			t.Fatalf("sentence similarity %v (%v), label part %v", emb, ok, lab.Embed)
		}
		if al, ok := e.Aligned(a, b); !ok || lab.Align != float64(float32(al)) || lab.Align <= 0 || lab.Align >= 1 {
			t.Fatalf("word alignment %v (%v), label part %v", al, ok, lab.Align)
		}
		if lab.Label != wantLabel || lab.Lexical != float64(float32(e.Lexical(true).Cosine(a, b))) {
			t.Fatalf("%s label %+v", st.Labeler, lab)
		}
		if self := e.Label(a, a, setA, setA, st); math.Abs(self.Context-1) > 1e-6 || math.Abs(self.Lexical-1) > 1e-6 ||
			math.Abs(self.Embed-1) > 1e-6 || math.Abs(self.Align-1) > 1e-6 || math.Abs(self.Label-1) > 1e-6 {
			t.Fatalf("self label %+v", self)
		}
		if err := e.Check(st); err != nil {
			t.Fatal(err)
		}
		st.RandomContexts = true
		r1, _ := e.ContextSet(a, nil, st, 7)
		r2, _ := e.ContextSet(a, nil, st, 7)
		if len(r1) == 0 || r1[0].Key() != r2[0].Key() {
			t.Fatal("random contexts not deterministic under a seed")
		}
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
	ok := Settings{TopK: 1, Rerank: 2, RerankBy: TermCtx, SetSize: 2, MaxJaccard: 0.5, Similarity: "cosine",
		Labeler: LabelerOrigin, Lambda: map[string]float64{TermCtx: 1}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]func(*Settings){
		"rerank < set_size": func(s *Settings) { s.Rerank = 1 },
		"no rerank term":    func(s *Settings) { s.RerankBy = "" },
		"all terms off":     func(s *Settings) { s.Lambda = map[string]float64{TermCtx: 0} },
		"NaN weight":        func(s *Settings) { s.Lambda = map[string]float64{TermCtx: math.NaN()} },
		"labeler":           func(s *Settings) { s.Labeler = "best" },
	} {
		s := ok
		bad(&s)
		if s.Validate() == nil {
			t.Errorf("%s accepted", name)
		}
	}
	for _, s := range []Settings{Defaults(), Paper()} {
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	if got := Paper().TermsUsed(); !slices.Equal(got, []string{"disc", "to_left", "to_right", "to_s"}) {
		t.Fatalf("paper terms %v", got)
	}
}

func TestPresets(t *testing.T) {
	for _, n := range PresetNames() {
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
// useGoBackend runs the test on the pure-Go matrix multiply, whose
// results do not depend on the batch, and restores the backend after it.
func useGoBackend(t *testing.T) {
	t.Helper()
	prev := nn.Backend()
	if err := nn.SetBackend("go"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if strings.HasPrefix(prev, "openblas") {
			nn.SetBackend("openblas")
		}
	})
}

func TestScoresBatchInvariant(t *testing.T) {
	useGoBackend(t)
	chunks := testChunks(40)
	e, m := testEngineModels(t, chunks)
	tc := NewTokenCache(m.Tok, e.Store)
	var hits []schemas.Hit
	for _, c := range chunks {
		hits = append(hits, schemas.Hit{ChunkID: c.ID})
	}
	cands, _ := e.Candidates(hits)
	var reqs []gen.Request
	for i, c := range cands {
		s := chunks[(i*7)%len(chunks)].Sentences[i%6] // varied lengths
		for d := range 3 {
			reqs = append(reqs, gen.Request{Left: tc.Tokens(c.Left), S: m.Tok.Encode(s), Right: tc.Tokens(c.Right),
				Dir: examples.Direction(d)})
		}
	}
	all := m.Gen.Score(reqs)
	for i := 0; i < len(reqs); i += 7 {
		if one := m.Gen.Score(reqs[i : i+1])[0]; one != all[i] {
			t.Fatalf("request %d: %v alone, %v in a batch", i, one, all[i])
		}
	}
	sub := m.Gen.Score(reqs[5:200])
	for i := range sub {
		if sub[i] != all[5+i] {
			t.Fatalf("request %d: %v in one grouping, %v in another", 5+i, sub[i], all[5+i])
		}
	}
	// The coherence vectors too.
	var seqs [][]int32
	for _, c := range chunks[:10] {
		for _, s := range c.Sentences {
			seqs = append(seqs, m.Tok.Encode(s))
		}
	}
	vs := m.Disc.Encode(seqs)
	for i := 0; i < len(seqs); i += 5 {
		one := m.Disc.Encode(seqs[i : i+1])[0]
		if !slices.Equal(one, vs[i]) {
			t.Fatalf("sentence %d: vector depends on its batch", i)
		}
	}
}

func TestOverrides(t *testing.T) {
	o := Overrides{TopK: 7, Rerank: 30, SetSize: 12, RerankBy: "disc", Lambda: "disc:1, to_s:0,to_left:0.5,to_right:2",
		NoDiversity: true, Similarity: "pearson", Labeler: "origin"}
	s, err := o.Apply(Defaults())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"disc": 1, "to_s": 0, "to_left": 0.5, "to_right": 2}
	if s.TopK != 7 || s.Rerank != 30 || s.SetSize != 12 || s.RerankBy != "disc" || !maps.Equal(s.Lambda, want) ||
		s.Diversity || s.Similarity != "pearson" || s.Labeler != "origin" {
		t.Fatalf("%+v", s)
	}
	if got := FormatLambda(s.Lambda); got != "disc:1,to_left:0.5,to_right:2,to_s:0" {
		t.Fatalf("FormatLambda = %s", got)
	}
	if s, _ := (Overrides{}).Apply(Defaults()); s.JSON() != Defaults().JSON() {
		t.Fatal("empty overrides changed the settings")
	}
	// fp32 is stored as the default (the settings, and so the labels'
	// provenance, of earlier harvests); bf16 is stored.
	if s, _ := (Overrides{GenPrecision: "fp32"}).Apply(Paper()); s.JSON() != Paper().JSON() {
		t.Fatalf("fp32 changed the settings: %s", s.JSON())
	}
	if s, err := (Overrides{GenPrecision: "bf16"}).Apply(Paper()); err != nil || s.GenPrecision != "bf16" ||
		!strings.Contains(s.JSON(), `"gen_precision":"bf16"`) {
		t.Fatalf("bf16: %s, %v", s.JSON(), err)
	}
	// The default's zwhite is defined for the contrastive term alone: other
	// weights read it as zref unless zwhite is asked for by name, which the
	// engine then refuses (TestZWhiteNeedsCtxAlone).
	if Defaults().Similarity != SimilarityZWhite {
		t.Fatalf("default similarity %s", Defaults().Similarity)
	}
	for lambda, want := range map[string]string{"ctx:2": SimilarityZWhite, "ctx:1,disc:0": SimilarityZWhite,
		"ctx:1,disc:1": SimilarityZRef, "disc:1,to_s:1": SimilarityZRef} {
		s, err := (Overrides{Lambda: lambda}).Apply(Defaults())
		if err != nil || s.Similarity != want {
			t.Fatalf("lambda %s: similarity %s (%v), want %s", lambda, s.Similarity, err, want)
		}
		if s, _ := (Overrides{Lambda: lambda, Similarity: SimilarityZWhite}).Apply(Defaults()); s.Similarity != SimilarityZWhite {
			t.Fatalf("lambda %s: an explicit zwhite became %s", lambda, s.Similarity)
		}
	}
	if s, _ := (Overrides{Lambda: "disc:1"}).Apply(Paper()); s.Similarity != SimilarityCosine {
		t.Fatalf("the paper's cosine became %s", s.Similarity)
	}
	for _, o := range []Overrides{{Lambda: "1,1"}, {Lambda: "ctx:a"}, {Lambda: "ctx:0"}, {Lambda: "ctx:1,ctx:2"}, {Lambda: ":1"},
		{Lambda: "ctx:NaN"}, {SetSize: 2000}, {Similarity: "dot"}, {Labeler: "x"}, {GenPrecision: "fp16"}} {
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

func TestEnsembleNeedsSentenceVectors(t *testing.T) {
	e := testEngine(t, testChunks(4))
	bare, err := NewEngine(e.Store, 2)
	if err != nil {
		t.Fatal(err)
	}
	st := Paper()
	st.Labeler = LabelerEnsemble
	if err := bare.Check(st); err == nil || !strings.Contains(err.Error(), "ensemble") {
		t.Fatalf("an engine with no sentence vectors accepted the ensemble labeler: %v", err)
	}
	if got := Ensemble(0.3, 0.6, 0.9); math.Abs(got-0.6) > 1e-12 {
		t.Fatalf("Ensemble(0.3, 0.6, 0.9) = %v", got)
	}
	bad := Defaults()
	bad.Labeler = "best"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "labeler") {
		t.Fatalf("an unknown labeler: %v", err)
	}
}

func TestModelsAccessors(t *testing.T) {
	m := testModels(t, testChunks(2))
	a, b := "the cat sat on a mat number 1.", "a dog ran in the park number 2."
	cos := m.SentenceCosine()
	if cos == nil {
		t.Fatal("no sentence cosine with a contrastive model loaded")
	}
	if got, want := cos(a, b), float64(contrast.Dot(m.Ctx.SentenceVec(a), m.Ctx.SentenceVec(b))); got != want {
		t.Fatalf("SentenceCosine = %v, want %v", got, want)
	}
	table, dim := m.SubwordEmbeddings()
	if want, wantDim := m.Disc.SubwordEmbeddings(); &table[0] != &want[0] || dim != wantDim {
		t.Fatal("SubwordEmbeddings is not the coherence model's table")
	}
	if got, want := m.Encode(a), m.Tok.Encode(a); !slices.Equal(got, want) {
		t.Fatalf("Encode = %v, want %v", got, want)
	}
	var none Models
	if none.SentenceCosine() != nil {
		t.Fatal("a sentence cosine without a contrastive model")
	}
	if table, _ := none.SubwordEmbeddings(); table != nil {
		t.Fatal("subword embeddings without a coherence model")
	}
}

// TestLabelManyMatchesLabel checks that labeling pairs together (their
// cross scores in one batched call, a context's encoder pass shared by the
// sentences scored in it) gives every pair the label Label gives it alone,
// bit for bit, with no more model work.
func TestLabelManyMatchesLabel(t *testing.T) {
	useGoBackend(t)
	chunks := testChunks(16)
	e, m := testEngineModels(t, chunks)
	var hits []schemas.Hit
	for _, c := range chunks {
		hits = append(hits, schemas.Hit{ChunkID: c.ID})
	}
	sents := []string{"the cat sat on a mat.", "a dog ran in the park.", "the bird sang on a wire.", "rain fell on the town."}
	for _, st := range []Settings{Paper(), Defaults()} {
		st.Rerank, st.SetSize = 20, 6
		sets := make([][]Cand, len(sents))
		for i, s := range sents {
			sets[i], _ = e.ContextSet(s, hits[i:], st, uint64(i))
		}
		pairs := [][2]int{{0, 1}, {2, 1}, {3, 1}, {0, 2}, {3, 2}}
		var in []PairInput
		for _, p := range pairs {
			in = append(in, PairInput{A: sents[p[0]], B: sents[p[1]], SetA: slices.Clone(sets[p[0]]), SetB: slices.Clone(sets[p[1]])})
		}
		// Two engines over the same models with empty caches: one labels
		// the pairs together, the other one at a time.
		together, err := m.Engine(e.Store)
		if err != nil {
			t.Fatal(err)
		}
		alone, err := m.Engine(e.Store)
		if err != nil {
			t.Fatal(err)
		}
		labs, work := together.LabelMany(in, st)
		for n, p := range in {
			want := alone.Label(p.A, p.B, p.SetA, p.SetB, st)
			got := labs[n]
			if got.Label != want.Label || got.Context != want.Context || got.Contexts != want.Contexts {
				t.Fatalf("%s pair %d: together %+v, alone %+v", st.Labeler, n, got, want)
			}
			work.add(got.Work)
		}
		a := alone.Stats()
		if work.GenEvals > a.GenEvals || work.CtxPairs > a.CtxPairs || work.DiscPairs > a.DiscPairs {
			t.Fatalf("%s: together did more work (%+v) than alone (%+v)", st.Labeler, work, a)
		}
		if st.Labeler == LabelerOrigin && work.GenEvals == 0 {
			t.Fatal("no generative evaluations: the test compares nothing")
		}
	}
}

// TestLabelSidesMatchLabel checks that Eq. 4 made from per-side sums
// (LabelSide on the first sentence's set, then on the second's with the
// first set's hashes to skip) is the value Label computes from the two
// whole sets: bit for bit for the cosine and zref, whose sums are added in
// Label's order, and to rounding for pearson, whose centring becomes
// arithmetic on the sums. Sets overlap, so a context of both is counted
// once or the test fails.
func TestLabelSidesMatchLabel(t *testing.T) {
	useGoBackend(t)
	chunks := testChunks(16)
	e, m := testEngineModels(t, chunks)
	var hits []schemas.Hit
	for _, c := range chunks {
		hits = append(hits, schemas.Hit{ChunkID: c.ID})
	}
	sents := []string{"the cat sat on a mat.", "a dog ran in the park.", "the bird sang on a wire.", "rain fell on the town."}
	paper := Paper()
	cases := []Settings{paper}
	for _, sim := range []string{SimilarityCosine, SimilarityPearson, SimilarityZRef, SimilarityZWhite, SimilarityOverlap} {
		st := Defaults()
		st.Similarity = sim
		cases = append(cases, st)
	}
	eq4 := map[string][]float64{} // Eq. 4 of each pair, by similarity (default settings)
	var bhatt []float64           // the overlap of each pair from zwhite's scores, by its definition
	for _, st := range cases {
		st.Rerank, st.SetSize = 20, 6
		sets := make([][]Cand, len(sents))
		for i, s := range sents {
			sets[i], _ = e.ContextSet(s, hits[i:], st, uint64(i))
		}
		pairs := [][2]int{{0, 1}, {2, 1}, {3, 1}, {0, 2}, {3, 2}, {1, 0}}
		whole, err := m.Engine(e.Store)
		if err != nil {
			t.Fatal(err)
		}
		sides, err := m.Engine(e.Store)
		if err != nil {
			t.Fatal(err)
		}
		overlap := false
		for _, p := range pairs {
			a, b := sents[p[0]], sents[p[1]]
			want := whole.Label(a, b, slices.Clone(sets[p[0]]), slices.Clone(sets[p[1]]), st)
			var sums Sums
			skip, err := sides.SetSkip(sets[p[0]])
			if err != nil {
				t.Fatal(err)
			}
			var refs []schemas.ScoredContext
			for _, c := range sets[p[0]] {
				refs = append(refs, schemas.ScoredContext{ChunkID: c.ChunkID, Slot: c.Slot})
			}
			if stored, err := e.Store.Skip(refs); err != nil || !bytes.Equal(stored, skip) {
				t.Fatalf("Store.Skip %x (%v), Engine.SetSkip %x", stored, err, skip)
			}
			if _, err := sides.LabelSide(sides.NewSide(a, slices.Clone(sets[p[0]])), []SideJob{{Other: b, Sums: &sums}}, true, st); err != nil {
				t.Fatal(err)
			}
			// The second side in two batches, as a harvest labels a set's
			// pairs: the set's context sums are kept between them.
			sd := sides.NewSide(b, slices.Clone(sets[p[1]]))
			var other Sums
			for _, job := range []SideJob{{Other: sents[(p[0]+1)%len(sents)], Sums: &other}, {Other: a, Skip: skip, Sums: &sums}} {
				if _, err := sides.LabelSide(sd, []SideJob{job}, false, st); err != nil {
					t.Fatal(err)
				}
			}
			got := float64(float32(sums.Similarity(st.Similarity)))
			if int(sums.N) != want.Contexts {
				t.Fatalf("%s/%s pair %v: %d contexts from the sides, %d from Label", st.Labeler, st.Similarity, p, sums.N, want.Contexts)
			}
			overlap = overlap || want.Contexts < len(sets[p[0]])+len(sets[p[1]])
			if st.Labeler != paper.Labeler {
				eq4[st.Similarity] = append(eq4[st.Similarity], want.Context)
			}
			if st.Similarity == SimilarityOverlap {
				zw := st
				zw.Similarity = SimilarityZWhite
				va, vb, _ := whole.LabelVectors(a, b, slices.Clone(sets[p[0]]), slices.Clone(sets[p[1]]), zw)
				bhatt = append(bhatt, bhattacharyya(va, vb, OverlapKappa))
			}
			exact := st.Similarity != SimilarityPearson
			if (exact && got != want.Context) || math.Abs(got-want.Context) > 1e-6 {
				t.Fatalf("%s/%s pair %v: Eq. 4 from the sides %v, from Label %v", st.Labeler, st.Similarity, p, got, want.Context)
			}
		}
		if !overlap {
			t.Fatalf("%s/%s: no two sets overlap; the test does not check that a shared context counts once", st.Labeler, st.Similarity)
		}
	}
	// zwhite is its own reading of the scores: not zref's, nor zero.
	white, zref := eq4[SimilarityZWhite], eq4[SimilarityZRef]
	if len(white) != len(zref) || slices.Equal(white, zref) || slices.Max(white) == slices.Min(white) {
		t.Fatalf("Eq. 4 under zwhite %v, under zref %v", white, zref)
	}
	// overlap is the Bhattacharyya coefficient of the softmax distributions
	// of zwhite's scores, and not constant.
	ov := eq4[SimilarityOverlap]
	if len(ov) != len(bhatt) || slices.Max(ov) == slices.Min(ov) {
		t.Fatalf("Eq. 4 under overlap %v", ov)
	}
	for i := range ov {
		if math.Abs(ov[i]-bhatt[i]) > 1e-6 || ov[i] <= 0 || ov[i] > 1 {
			t.Errorf("pair %d: overlap %v, Σ√(p1 p2) of zwhite's scores %v", i, ov[i], bhatt[i])
		}
	}
}

// bhattacharyya is Σ_c √(p_a(c) p_b(c)) for p ∝ e^{κ x} over the entries
// of a and b, from its definition.
func bhattacharyya(a, b []float64, kappa float64) float64 {
	soft := func(x []float64) []float64 {
		var z float64
		p := make([]float64, len(x))
		for i, v := range x {
			p[i] = math.Exp(kappa * v)
			z += p[i]
		}
		for i := range p {
			p[i] /= z
		}
		return p
	}
	pa, pb := soft(a), soft(b)
	var s float64
	for i := range pa {
		s += math.Sqrt(pa[i] * pb[i])
	}
	return s
}

// TestSkipNeedsTheSameStoreLayout checks that the contexts a pair carries
// to its second side, as numbers in the chunk store, are refused by a
// process whose store numbers contexts differently (the same chunks added
// in another order), and that the refusal leaves the sums as they were.
func TestSkipNeedsTheSameStoreLayout(t *testing.T) {
	useGoBackend(t)
	chunks := testChunks(8)
	e, m := testEngineModels(t, chunks)
	st := Defaults()
	st.Rerank, st.SetSize = 20, 6
	var hits []schemas.Hit
	for _, c := range chunks {
		hits = append(hits, schemas.Hit{ChunkID: c.ID})
	}
	set, _ := e.ContextSet("the cat sat on a mat.", hits, st, 1)
	skip, err := e.SetSkip(set)
	if err != nil {
		t.Fatal(err)
	}
	other := NewStore()
	for i := range chunks {
		if err := other.Add(chunks[len(chunks)-1-i]); err != nil {
			t.Fatal(err)
		}
	}
	o, err := m.Engine(other)
	if err != nil {
		t.Fatal(err)
	}
	setB, _ := o.ContextSet("a dog ran in the park.", hits, st, 2)
	sums := Sums{N: 3, A: 1}
	_, err = o.LabelSide(o.NewSide("a dog ran in the park.", setB), []SideJob{{Other: "the cat sat on a mat.", Skip: skip, Sums: &sums}}, false, st)
	if err == nil {
		t.Fatal("a skip numbered by another store layout was accepted")
	}
	if sums != (Sums{N: 3, A: 1}) {
		t.Fatalf("sums changed on a refused skip: %+v", sums)
	}
	ownB, _ := e.ContextSet("a dog ran in the park.", hits, st, 2)
	if _, err := e.LabelSide(e.NewSide("a dog ran in the park.", ownB), []SideJob{{Other: "the cat sat on a mat.", Skip: skip, Sums: &sums}}, false, st); err != nil {
		t.Fatalf("the same store refused its own skip: %v", err)
	}
}

// TestContextCacheKeepsContextsApart checks that the contrastive scorer's
// cache of contexts' inverse norms tells every context apart, the models'
// reference contexts from the corpus's among them: the reference
// statistics of a sentence are the same whether or not corpus contexts
// were scored (and cached) first, and every context scores as it does
// on a fresh scorer.
func TestContextCacheKeepsContextsApart(t *testing.T) {
	useGoBackend(t)
	chunks := testChunks(16)
	_, m := testEngineModels(t, chunks)
	var hits []schemas.Hit
	for _, c := range chunks {
		hits = append(hits, schemas.Hit{ChunkID: c.ID})
	}
	st := Defaults()
	st.Rerank, st.SetSize = 20, 6
	s := "the cat sat on a mat."
	fresh := func() *Engine {
		store := NewStore()
		for _, c := range chunks {
			if err := store.Add(c); err != nil {
				t.Fatal(err)
			}
		}
		e, err := m.Engine(store)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	warm := fresh()
	warm.ContextSet(s, hits, st, 1) // caches the corpus contexts' vectors
	mw, sw, _ := warm.RefStats("a dog ran in the park.", st.Lambda)
	mf, sf, _ := fresh().RefStats("a dog ran in the park.", st.Lambda)
	if mw != mf || sw != sf {
		t.Fatalf("reference statistics %v ± %v after scoring corpus contexts, %v ± %v before", mw, sw, mf, sf)
	}
	cached, _ := warm.ContextSet(s, hits, st, 1)
	uncached, _ := fresh().ContextSet(s, hits, st, 1)
	if len(cached) == 0 || !reflect.DeepEqual(cached, uncached) {
		t.Fatalf("context set on a warm scorer %v, on a fresh one %v", cached, uncached)
	}
	// Every context of the store has its own place in the cache.
	seen := map[uint64]string{}
	for _, c := range chunks {
		cands, _ := warm.Candidates([]schemas.Hit{{ChunkID: c.ID}})
		for _, cd := range cands {
			if cd.ctx == 0 || int(cd.ctx) > warm.Store.Slots() {
				t.Fatalf("context %s has number %d of %d places", cd.Key(), cd.ctx, warm.Store.Slots())
			}
			if other, ok := seen[cd.ctx]; ok {
				t.Fatalf("contexts %s and %s share number %d", other, cd.Key(), cd.ctx)
			}
			seen[cd.ctx] = cd.Key()
		}
	}
}

// TestZWhiteNeedsCtxAlone checks that the engine refuses zwhite asked for
// by name with weights beyond the contrastive term, with an error that
// names the cure, and accepts the defaults.
func TestZWhiteNeedsCtxAlone(t *testing.T) {
	e, _ := testEngineModels(t, testChunks(8))
	if err := e.Check(Defaults()); err != nil {
		t.Fatalf("defaults refused: %v", err)
	}
	st := Defaults()
	st.Lambda = map[string]float64{TermCtx: 1, TermDisc: 1}
	err := e.Check(st)
	if err == nil || !strings.Contains(err.Error(), "--lambda=ctx:1") || !strings.Contains(err.Error(), "zref") {
		t.Fatalf("zwhite with ctx and disc: %v", err)
	}
	if err := e.Check(st.WithTermsSimilarity()); err != nil {
		t.Fatalf("the same weights read as zref: %v", err)
	}
}

// TestZWhiteDependsOnModelsOnly checks that zwhite labels a pair the same
// over stores that hold the same chunks in another order, or more chunks
// (its whitening comes from the models' white.json, not the corpus), and
// that models without whitening contexts are refused with the cure named.
func TestZWhiteDependsOnModelsOnly(t *testing.T) {
	useGoBackend(t)
	chunks := testChunks(16)
	m := testModels(t, chunks)
	label := func(cs []schemas.Chunk) PairLabel {
		st := NewStore()
		for _, c := range cs {
			if err := st.Add(c); err != nil {
				t.Fatal(err)
			}
		}
		e, err := m.Engine(st)
		if err != nil {
			t.Fatal(err)
		}
		s := Defaults()
		s.Rerank, s.SetSize = 20, 6
		if err := e.Check(s); err != nil {
			t.Fatal(err)
		}
		var hits []schemas.Hit
		for _, c := range chunks {
			hits = append(hits, schemas.Hit{ChunkID: c.ID})
		}
		a, b := "the cat sat on a mat.", "a dog ran in the park."
		setA, _ := e.ContextSet(a, hits, s, 1)
		setB, _ := e.ContextSet(b, hits[3:], s, 2)
		return e.Label(a, b, setA, setB, s)
	}
	want := label(chunks)
	rev := slices.Clone(chunks)
	slices.Reverse(rev)
	more := append(slices.Clone(chunks), testChunks(40)[16:]...)
	for name, cs := range map[string][]schemas.Chunk{"reversed": rev, "more chunks": more} {
		if got := label(cs); got.Label != want.Label || got.Context != want.Context {
			t.Errorf("%s: label %v (Eq. 4 %v), want %v (%v)", name, got.Label, got.Context, want.Label, want.Context)
		}
	}
	if want.Context == 0 || want.Contexts == 0 {
		t.Fatalf("nothing compared: %+v", want)
	}
	bare := *m
	bare.White = nil
	e, err := bare.Engine(NewStore())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Check(Defaults()); err == nil || !strings.Contains(err.Error(), WhiteFile) || !strings.Contains(err.Error(), "--contexts_only") {
		t.Fatalf("zwhite without whitening contexts: %v", err)
	}
}
