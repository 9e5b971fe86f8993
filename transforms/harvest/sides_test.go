package harvest

import (
	"context"
	"slices"
	"testing"

	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/method"
)

// iter yields xs, one per call, as Beam's iterables do.
func iter[T any](xs ...T) func(*T) bool {
	return func(x *T) bool {
		if len(xs) == 0 {
			return false
		}
		*x, xs = xs[0], xs[1:]
		return true
	}
}

// TestSidesDeadLetters checks that a pair whose sentence has no context
// set, or whose set does not resolve against the chunk store, goes to the
// dead letters at the side that finds it, naming the sentence, and that
// the other pairs of the group are labeled.
func TestSidesDeadLetters(t *testing.T) {
	st := method.NewStore()
	if err := st.Add(schemas.Chunk{ID: "c1", DocID: "d1", Sentences: []string{"One a.", "Two b.", "Three c.", "Four d."},
		SentenceIDs: []string{"x1", "x2", "x3", "x4"}}); err != nil {
		t.Fatal(err)
	}
	eng, err := (&method.Models{}).Engine(st)
	if err != nil {
		t.Fatal(err)
	}
	cfg := LabelConfig{Config: Config{Settings: method.Settings{Similarity: method.SimilarityCosine, Labeler: method.LabelerHybrid}}}
	res := &resources.Resources{Engine: eng, Models: &method.Models{}}
	ctx := context.Background()
	set := func(id string, chunk string) schemas.ContextSet {
		return schemas.ContextSet{SentenceID: id, Text: "Sentence " + id + ".", Contexts: []schemas.ScoredContext{{ChunkID: chunk, Slot: 1}}}
	}
	p := func(a, b string) Pair { return Pair{ID: a + "-" + b, A: a, B: b, Stratum: StratumRandom} }
	var dead []schemas.DeadLetter
	collect := func(d schemas.DeadLetter) { dead = append(dead, d) }

	// The text join: B without a set.
	var withB []pairText
	(&textJoinFn{}).ProcessElement(ctx, "b0", iter(p("a", "b0")), iter[sentenceText](), func(string, pairText) {}, collect)
	(&textJoinFn{}).ProcessElement(ctx, "b", iter(p("a", "b"), p("gone", "b"), p("bad", "b")), iter(sentenceText{Text: "Sentence b."}),
		func(_ string, x pairText) { withB = append(withB, x) }, collect)
	if len(withB) != 3 || len(dead) != 1 || dead[0].Reason != ReasonMissingContexts || dead[0].Source != "a-b0" {
		t.Fatalf("text join: %d pairs on, dead letters %+v", len(withB), dead)
	}

	// The first side: a has a set, gone has none, bad's set names a chunk
	// the store lacks.
	a := &sideAFn{Cfg: cfg}
	a.res = res
	a.initCounters()
	var halves []halfSums
	emitHalf := func(_ string, h halfSums) { halves = append(halves, h) }
	a.ProcessElement(ctx, "a", iter(withB[0]), iter(set("a", "c1")), emitHalf, collect)
	a.ProcessElement(ctx, "gone", iter(withB[1]), iter[schemas.ContextSet](), emitHalf, collect)
	a.ProcessElement(ctx, "bad", iter(withB[2]), iter(set("bad", "nowhere")), emitHalf, collect)
	if len(halves) != 1 || halves[0].Pair.ID != "a-b" || halves[0].Sums.N != 1 {
		t.Fatalf("first side: %+v", halves)
	}
	reasons := func() []string {
		var r []string
		for _, d := range dead {
			r = append(r, d.Source+" "+d.Reason)
		}
		return r
	}
	if want := []string{"a-b0 " + ReasonMissingContexts, "gone-b " + ReasonMissingContexts, "bad-b unresolved_context"}; !slices.Equal(reasons(), want) {
		t.Fatalf("dead letters %v, want %v", reasons(), want)
	}

	// The second side: without its set the pair is a dead letter naming b;
	// with it, a label over the contexts of both sets, one shared.
	b := &sideBFn{Cfg: cfg}
	b.res = res
	b.initCounters()
	b.settings = cfg.Settings
	b.rows = newRowMaker(cfg)
	defer b.Teardown()
	var rows []schemas.LabeledPair
	b.ProcessElement(ctx, "b", iter(halves[0]), iter[schemas.ContextSet](), func(r schemas.LabeledPair) { rows = append(rows, r) }, collect)
	if len(rows) != 0 || dead[len(dead)-1].Source != "a-b" || dead[len(dead)-1].Reason != ReasonMissingContexts {
		t.Fatalf("second side without a set: rows %v, dead letters %v", rows, reasons())
	}
	shared := set("b", "c1")
	shared.Contexts = append(shared.Contexts, schemas.ScoredContext{ChunkID: "c1", Slot: 2})
	b.ProcessElement(ctx, "b", iter(halves[0]), iter(shared), func(r schemas.LabeledPair) { rows = append(rows, r) }, collect)
	if len(rows) != 1 || rows[0].NumContexts != 2 || rows[0].ContextsDigest != ContextsDigest(set("a", "c1"), shared) ||
		rows[0].Sentence1 != "Sentence a." || rows[0].Sentence2 != "Sentence b." {
		t.Fatalf("second side: %+v", rows)
	}
}
