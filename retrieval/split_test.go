package retrieval

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ctxsim/ctxsim/schemas"
)

// TestSplitSearchEqualsWhole checks that a search split over workers that
// each open some shards (QueryTerms on each, AddDF, SearchTerms on each,
// MergeHits) returns Search's hits over the whole index, chunk for chunk
// and score for score, for long queries, for short ones that fall back on
// unigrams, and with excluded chunks, under two ways of splitting.
func TestSplitSearchEqualsWhole(t *testing.T) {
	ctx := context.Background()
	chunks := synthChunks(2000, 3)
	dir := filepath.Join(t.TempDir(), "ix")
	whole := buildIndex(t, dir, chunks, 4, BuildOptions{Unigrams: true})
	for _, split := range [][][]int{{{0, 2}, {1, 3}}, {{0}, {1}, {2}, {3}}} {
		parts := make([]*Index, len(split))
		for p, shards := range split {
			ix, err := OpenShards(dir, func(s int) bool {
				for _, x := range shards {
					if x == s {
						return true
					}
				}
				return false
			})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			parts[p] = ix
		}
		unigram := 0
		for qn := 0; qn < 30; qn++ {
			text := chunks[qn*61].Sentences[qn%2]
			if qn%5 == 0 {
				// A short query: too few bigrams, so the unigrams join.
				text = firstWords(text, 3)
			}
			exclude := []string{chunks[qn*61].ID}
			want, wantEx, err := whole.Search(ctx, text, 150, exclude)
			if err != nil {
				t.Fatal(err)
			}
			var q QueryTerms
			for p, ix := range parts {
				qp, err := ix.QueryTerms(ctx, text)
				if err != nil {
					t.Fatal(err)
				}
				if p == 0 {
					q = qp
				} else if err := q.AddDF(qp); err != nil {
					t.Fatal(err)
				}
			}
			found := 0
			for _, n := range q.BigramDF {
				if n > 0 {
					found++
				}
			}
			if found < whole.MinBigrams {
				unigram++
			}
			lists := make([][]schemas.Hit, len(parts))
			ex := 0
			for p, ix := range parts {
				hits, n, err := ix.SearchTerms(ctx, q, 150, exclude)
				if err != nil {
					t.Fatal(err)
				}
				lists[p], ex = hits, ex+n
			}
			got := MergeHits(lists, 150)
			if ex != wantEx {
				t.Errorf("split %v query %d: %d excluded, whole %d", split, qn, ex, wantEx)
			}
			if len(got) == 0 || len(got) != len(want) {
				t.Fatalf("split %v query %d: %d hits, whole index %d", split, qn, len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("split %v query %d rank %d: %v, whole index %v", split, qn, i, got[i], want[i])
				}
			}
		}
		if unigram == 0 {
			t.Fatalf("no query fell back on unigrams")
		}
	}
	if _, err := parts0Other(dir); err == nil {
		t.Fatal("AddDF of two different queries should fail")
	}
}

// parts0Other adds the frequencies of two different queries.
func parts0Other(dir string) (QueryTerms, error) {
	ix, err := OpenShards(dir, func(s int) bool { return s == 0 })
	if err != nil {
		return QueryTerms{}, err
	}
	defer ix.Close()
	a, _ := ix.QueryTerms(context.Background(), "the cat sat on the mat")
	b, _ := ix.QueryTerms(context.Background(), "a dog ran in the park")
	return a, a.AddDF(b)
}

func firstWords(s string, n int) string {
	out, words := "", 0
	for i, r := range s {
		if r == ' ' {
			words++
			if words == n {
				return s[:i]
			}
		}
		out = s[:i+1]
	}
	return out
}
