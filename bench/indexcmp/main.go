// Command indexcmp compares two outputs of the index job: the sentences,
// chunks and dead-letter tables row by row (by key, every field), the
// index metadata's corpus fingerprints, and the top hits the two indexes
// return for a sample of the corpus's sentences used as queries (chunk IDs
// in order and scores to the bit). It prints one line and exits 1 when
// they differ, so an index built on another runner can be checked against
// one built on Prism.
//
//	go run ./bench/indexcmp -a out/corpus-prism -b out/corpus-flink
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"reflect"
	"sort"

	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
)

var (
	dirA    = flag.String("a", "", "An index job's output directory.")
	dirB    = flag.String("b", "", "Another index job's output directory.")
	queries = flag.Int("queries", 200, "Sentences (every n-th by ID) to search both indexes with.")
	topK    = flag.Int("k", 100, "Hits per query to compare.")
)

func main() {
	flag.Parse()
	if *dirA == "" || *dirB == "" {
		fmt.Fprintln(os.Stderr, "usage: indexcmp -a DIR -b DIR")
		os.Exit(2)
	}
	var diffs []string
	sa := compare[schemas.Sentence](&diffs, "sentences", func(s schemas.Sentence) string { return s.ID })
	compare[schemas.Chunk](&diffs, "chunks", func(c schemas.Chunk) string { return c.ID })
	compare[schemas.DeadLetter](&diffs, "dead_letters", func(d schemas.DeadLetter) string {
		return fmt.Sprintf("%s\x00%s\x00%d\x00%s\x00%s", d.Stage, d.Source, d.Line, d.Reason, d.Detail)
	})
	queried, hits := compareSearch(&diffs, sa)
	if len(diffs) > 0 {
		fmt.Printf("differ: %v\n", diffs)
		os.Exit(1)
	}
	fmt.Printf("identical: %d sentences, %d queries, %d hits compared\n", len(sa), queried, hits)
}

// compare reads table from both outputs and notes what differs; it
// returns a's rows by key.
func compare[T any](diffs *[]string, table string, key func(T) string) map[string]T {
	a, b := read(*dirA, table, key), read(*dirB, table, key)
	only, changed := 0, 0
	for k, va := range a {
		vb, ok := b[k]
		switch {
		case !ok:
			only++
		case !reflect.DeepEqual(va, vb):
			changed++
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			only++
		}
	}
	if only > 0 || changed > 0 || len(a) != len(b) {
		*diffs = append(*diffs, fmt.Sprintf("%s: %d and %d rows, %d in one only, %d changed", table, len(a), len(b), only, changed))
	}
	return a
}

func read[T any](dir, table string, key func(T) string) map[string]T {
	rows, err := storage.ReadTable[T](context.Background(), storage.Join(dir, table))
	if err != nil {
		fmt.Fprintf(os.Stderr, "indexcmp: %s: %v\n", table, err)
		os.Exit(2)
	}
	m := make(map[string]T, len(rows))
	for _, r := range rows {
		k := key(r)
		if _, dup := m[k]; dup {
			fmt.Fprintf(os.Stderr, "indexcmp: %s/%s: key %q twice\n", dir, table, k)
			os.Exit(2)
		}
		m[k] = r
	}
	return m
}

// compareSearch searches both indexes with a sample of the sentences and
// notes queries whose hits differ; it returns the queries and the hits
// compared.
func compareSearch(diffs *[]string, sentences map[string]schemas.Sentence) (int, int) {
	ctx := context.Background()
	ia, err := retrieval.Open(storage.Join(*dirA, "index"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "indexcmp: %v\n", err)
		os.Exit(2)
	}
	defer ia.Close()
	ib, err := retrieval.Open(storage.Join(*dirB, "index"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "indexcmp: %v\n", err)
		os.Exit(2)
	}
	defer ib.Close()
	ma, _ := retrieval.ReadMeta(storage.Join(*dirA, "index"))
	mb, _ := retrieval.ReadMeta(storage.Join(*dirB, "index"))
	if !reflect.DeepEqual(ma.Corpus, mb.Corpus) || !reflect.DeepEqual(ma.Shards, mb.Shards) {
		*diffs = append(*diffs, "index metadata: the corpus or shard fingerprints differ")
	}
	ids := make([]string, 0, len(sentences))
	for id := range sentences {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	step := max(1, len(ids)/max(1, *queries))
	queried, compared, differing := 0, 0, 0
	maxDelta := 0.0
	for i := 0; i < len(ids); i += step {
		queried++
		text := sentences[ids[i]].Text
		ha, _, err := ia.Search(ctx, text, *topK, nil)
		if err != nil {
			fmt.Fprintf(os.Stderr, "indexcmp: search a: %v\n", err)
			os.Exit(2)
		}
		hb, _, err := ib.Search(ctx, text, *topK, nil)
		if err != nil {
			fmt.Fprintf(os.Stderr, "indexcmp: search b: %v\n", err)
			os.Exit(2)
		}
		compared += len(ha)
		if !reflect.DeepEqual(ha, hb) {
			differing++
			for j := range min(len(ha), len(hb)) {
				maxDelta = math.Max(maxDelta, math.Abs(float64(ha[j].Score-hb[j].Score)))
			}
		}
	}
	if differing > 0 {
		*diffs = append(*diffs, fmt.Sprintf("search: %d queries return other hits (max |Δscore| at equal ranks %.3g)", differing, maxDelta))
	}
	return queried, compared
}
