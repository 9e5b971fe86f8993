package examples

import (
	"math/rand"
)

// RankTask asks a scorer to find a sentence's own context among others:
// Contexts[0] is the true context of S, the rest are distractors.
type RankTask struct {
	S        string
	Contexts []Context
	// Kind is SameDoc when the distractors are other slots of S's document
	// (none of which contains S), Random when they come from other
	// documents.
	Kind NegKind
}

// RankTasks draws up to count tasks of n contexts each (the true one and
// n-1 distractors of the given kind) from docs, deterministically under
// seed. Slots are those with at least one sentence on each side. Same-
// document tasks use only documents with n-1 slots whose contexts do not
// contain S.
func RankTasks(docs []Doc, n, count int, kind NegKind, window int, seed int64) []RankTask {
	if window <= 0 {
		window = 2
	}
	type slot struct{ doc, i int }
	var slots []slot
	for di, d := range docs {
		for i := 1; i+1 < len(d.Sentences); i++ {
			slots = append(slots, slot{di, i})
		}
	}
	if len(slots) < n || n < 2 {
		return nil
	}
	r := rand.New(rand.NewSource(seed))
	var out []RankTask
	for tries := 0; len(out) < count && tries < 4*count; tries++ {
		s := slots[r.Intn(len(slots))]
		d := docs[s.doc]
		t := RankTask{S: d.Sentences[s.i], Kind: kind, Contexts: []Context{ContextAt(d, s.i, window)}}
		switch kind {
		case SameDoc:
			// Slots far enough from S that their contexts do not hold it.
			var far []int
			for j := 1; j+1 < len(d.Sentences); j++ {
				if j < s.i-window || j > s.i+window {
					far = append(far, j)
				}
			}
			if len(far) < n-1 {
				continue
			}
			r.Shuffle(len(far), func(a, b int) { far[a], far[b] = far[b], far[a] })
			for _, j := range far[:n-1] {
				t.Contexts = append(t.Contexts, ContextAt(d, j, window))
			}
		default:
			for len(t.Contexts) < n {
				o := slots[r.Intn(len(slots))]
				if o.doc == s.doc {
					continue
				}
				t.Contexts = append(t.Contexts, ContextAt(docs[o.doc], o.i, window))
			}
		}
		out = append(out, t)
	}
	return out
}

// RankResult is how well a scorer found the true contexts.
type RankResult struct {
	N     int     `json:"n"`
	Kind  string  `json:"distractors"`
	Tasks int     `json:"tasks"`
	MRR   float64 `json:"mrr"`
	Hits1 float64 `json:"hits_at_1"`
}

// Rank scores each task with score (which returns one score per context,
// higher meaning a better fit) and returns the mean reciprocal rank of the
// true context and the fraction of tasks where it ranked first. A
// distractor that ties the true context counts as ranked above it, so a
// scorer that cannot tell contexts apart gets MRR 1/n, not 1.
func Rank(tasks []RankTask, score func(RankTask) []float32) RankResult {
	var res RankResult
	if len(tasks) == 0 {
		return res
	}
	res.N, res.Kind, res.Tasks = len(tasks[0].Contexts), tasks[0].Kind.String(), len(tasks)
	for _, t := range tasks {
		sc := score(t)
		rank := 1
		for _, x := range sc[1:] {
			if x >= sc[0] || x != x || sc[0] != sc[0] {
				rank++
			}
		}
		res.MRR += 1 / float64(rank)
		if rank == 1 {
			res.Hits1++
		}
	}
	res.MRR /= float64(len(tasks))
	res.Hits1 /= float64(len(tasks))
	return res
}

// ReferenceContexts draws n contexts uniformly from the slots of docs that
// have at least one sentence on each side, deterministically under seed:
// a fixed sample of "any context" against which a scorer's scores of a
// sentence can be standardised.
func ReferenceContexts(docs []Doc, n, window int, seed int64) []Context {
	if window <= 0 {
		window = 2
	}
	type slot struct{ doc, i int }
	var slots []slot
	for di, d := range docs {
		for i := 1; i+1 < len(d.Sentences); i++ {
			slots = append(slots, slot{di, i})
		}
	}
	if len(slots) == 0 {
		return nil
	}
	r := rand.New(rand.NewSource(seed))
	out := make([]Context, 0, n)
	for range n {
		s := slots[r.Intn(len(slots))]
		out = append(out, ContextAt(docs[s.doc], s.i, window))
	}
	return out
}
