package examples

import (
	"fmt"
	"slices"
	"testing"
)

func rankDocs() []Doc {
	var docs []Doc
	for d := range 6 {
		doc := Doc{ID: fmt.Sprintf("d%d", d)}
		for i := range 12 {
			doc.Sentences = append(doc.Sentences, fmt.Sprintf("doc %d sentence %d", d, i))
		}
		docs = append(docs, doc)
	}
	return docs
}

func TestRankTasks(t *testing.T) {
	docs := rankDocs()
	for _, kind := range []NegKind{Random, SameDoc} {
		tasks := RankTasks(docs, 5, 30, kind, 2, 1)
		if len(tasks) != 30 {
			t.Fatalf("%s: %d tasks", kind, len(tasks))
		}
		for _, task := range tasks {
			if len(task.Contexts) != 5 || task.Kind != kind {
				t.Fatalf("%s: task %+v", kind, task)
			}
			var doc, pos int
			fmt.Sscanf(task.S, "doc %d sentence %d", &doc, &pos)
			truth := task.Contexts[0]
			if truth.Left[len(truth.Left)-1] != fmt.Sprintf("doc %d sentence %d", doc, pos-1) {
				t.Fatalf("true context %+v for %q", truth, task.S)
			}
			for _, c := range task.Contexts[1:] {
				var cd, cp int
				fmt.Sscanf(c.Left[0], "doc %d sentence %d", &cd, &cp)
				if (kind == SameDoc) != (cd == doc) {
					t.Fatalf("%s distractor from doc %d for doc %d", kind, cd, doc)
				}
				if slices.Contains(c.Left, task.S) || slices.Contains(c.Right, task.S) {
					t.Fatalf("a distractor holds the sentence itself: %+v", c)
				}
			}
		}
		again := RankTasks(docs, 5, 30, kind, 2, 1)
		if fmt.Sprint(again) != fmt.Sprint(tasks) {
			t.Fatal("tasks differ under the same seed")
		}
	}
	if RankTasks(docs, 1, 10, Random, 2, 1) != nil {
		t.Fatal("tasks with one context")
	}
}

func TestRank(t *testing.T) {
	tasks := RankTasks(rankDocs(), 4, 10, Random, 2, 1)
	// The true context first: MRR 1.
	if r := Rank(tasks, func(t RankTask) []float32 { return []float32{3, 2, 1, 0} }); r.MRR != 1 || r.Hits1 != 1 || r.N != 4 {
		t.Fatalf("perfect scorer %+v", r)
	}
	// A constant scorer cannot tell contexts apart: rank N, MRR 1/N.
	if r := Rank(tasks, func(t RankTask) []float32 { return []float32{1, 1, 1, 1} }); r.MRR != 0.25 || r.Hits1 != 0 {
		t.Fatalf("constant scorer %+v", r)
	}
	// Second place: MRR 1/2.
	if r := Rank(tasks, func(t RankTask) []float32 { return []float32{2, 3, 1, 0} }); r.MRR != 0.5 || r.Hits1 != 0 {
		t.Fatalf("second-place scorer %+v", r)
	}
}
