package examples

import (
	"fmt"
	"reflect"
	"testing"
)

func docs(n, sents int) []Doc {
	out := make([]Doc, n)
	for i := range out {
		out[i].ID = fmt.Sprintf("d%d", i)
		for j := 0; j < sents; j++ {
			out[i].Sentences = append(out[i].Sentences, fmt.Sprintf("d%d s%d", i, j))
		}
	}
	return out
}

func docOf(s string) string {
	var d, j int
	fmt.Sscanf(s, "d%d s%d", &d, &j)
	return fmt.Sprintf("d%d", d)
}

func TestCoherenceExamples(t *testing.T) {
	ds := docs(20, 8)
	ex := CoherenceExamples(ds, Config{Seed: 7})
	if len(ex) != 20*6*2 {
		t.Fatalf("%d examples, want %d", len(ex), 20*6*2)
	}
	counts := map[NegKind]int{}
	for i, e := range ex {
		counts[e.Kind]++
		if len(e.Left) == 0 || len(e.Right) == 0 || len(e.Left) > 2 || len(e.Right) > 2 {
			t.Fatalf("example %d: context %d|%d sentences", i, len(e.Left), len(e.Right))
		}
		ctxDoc := docOf(e.Left[0])
		switch e.Kind {
		case Positive:
			if e.Label != 1 || docOf(e.S) != ctxDoc {
				t.Fatalf("positive %d: %+v", i, e)
			}
		case SameDoc:
			if e.Label != 0 || docOf(e.S) != ctxDoc || e.S == ex[i-1].S {
				t.Fatalf("same-doc negative %d: %+v", i, e)
			}
			for _, c := range append(append([]string{}, e.Left[len(e.Left)-1:]...), e.Right[:1]...) {
				if c == e.S {
					t.Fatalf("same-doc negative %d uses a neighbour of the slot", i)
				}
			}
		case Random:
			if e.Label != 0 || docOf(e.S) == ctxDoc {
				t.Fatalf("random negative %d from the same document: %+v", i, e)
			}
		}
	}
	if counts[Positive] != 120 || counts[SameDoc] != 60 || counts[Random] != 60 {
		t.Fatalf("kinds %v", counts)
	}
	if again := CoherenceExamples(ds, Config{Seed: 7}); !reflect.DeepEqual(again, ex) {
		t.Fatal("not deterministic under a seed")
	}
	if other := CoherenceExamples(ds, Config{Seed: 8}); reflect.DeepEqual(other, ex) {
		t.Fatal("seed has no effect")
	}
}

func TestShortDocuments(t *testing.T) {
	ds := []Doc{{ID: "a", Sentences: []string{"x", "y"}}, {ID: "b", Sentences: []string{"p", "q", "r"}}, {ID: "c", Sentences: []string{"u"}}}
	ex := CoherenceExamples(ds, Config{Seed: 1})
	if len(ex) != 2 || ex[1].Kind != Random {
		t.Fatalf("%+v", ex)
	}
}

func TestHeldOutIsByDocument(t *testing.T) {
	ds := docs(5000, 3)
	train, held := Split(ds, Config{HeldOut: 0.1})
	if len(train)+len(held) != 5000 || len(held) < 400 || len(held) > 600 {
		t.Fatalf("%d train, %d held out", len(train), len(held))
	}
	for _, d := range held {
		if !IsHeldOut(d.ID, 0.1) || IsHeldOut(d.ID, 0) {
			t.Fatalf("held-out choice of %s unstable", d.ID)
		}
	}
}

func TestInfillExamples(t *testing.T) {
	ex := InfillExamples(docs(2, 5), Config{Window: 3})
	if len(ex) != 2*3*3 {
		t.Fatalf("%d examples", len(ex))
	}
	e := ex[3*2] // doc 0, slot 3
	if e.S != "d0 s3" || !reflect.DeepEqual(e.Left, []string{"d0 s0", "d0 s1", "d0 s2"}) ||
		!reflect.DeepEqual(e.Right, []string{"d0 s4"}) || e.Dir != ToSentence {
		t.Fatalf("%+v", e)
	}
	if ex[1].Dir.String() != "to_left" || ex[2].Dir.String() != "to_right" {
		t.Fatal("directions out of order")
	}
}
