// Command harvestcmp compares two harvest outputs row by row: the labeled
// pairs (by pair ID) and the context sets (by sentence ID), every field. It
// prints one line and exits 1 when they differ, so a change meant to keep
// the labels can be checked on a real harvest.
//
//	go run ./bench/harvestcmp -a out/harvest-before -b out/harvest-after
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"reflect"
	"sort"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
)

var (
	dirA = flag.String("a", "", "A harvest output directory.")
	dirB = flag.String("b", "", "Another harvest output directory.")
)

func read[T any](dir, table string, key func(T) string) map[string]T {
	rows, err := storage.ReadTable[T](context.Background(), storage.Join(dir, table))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	m := make(map[string]T, len(rows))
	for _, r := range rows {
		m[key(r)] = r
	}
	return m
}

// diff counts the keys of a that b lacks or holds with other values, and
// the keys of b that a lacks; first names one of them.
func diff[T any](a, b map[string]T) (n int, first string) {
	var keys []string
	for k, x := range a {
		if y, ok := b[k]; !ok || !reflect.DeepEqual(x, y) {
			keys = append(keys, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) > 0 {
		first = keys[0]
	}
	return len(keys), first
}

func main() {
	flag.Parse()
	if *dirA == "" || *dirB == "" {
		fmt.Fprintln(os.Stderr, "usage: harvestcmp -a DIR -b DIR")
		os.Exit(2)
	}
	pa := read(*dirA, "pairs", func(p schemas.LabeledPair) string { return p.PairID })
	pb := read(*dirB, "pairs", func(p schemas.LabeledPair) string { return p.PairID })
	sa := read(*dirA, "context_sets", func(c schemas.ContextSet) string { return c.SentenceID })
	sb := read(*dirB, "context_sets", func(c schemas.ContextSet) string { return c.SentenceID })
	np, fp := diff(pa, pb)
	ns, fs := diff(sa, sb)
	fmt.Printf("harvestcmp pairs=%d/%d context_sets=%d/%d pairs_differing=%d context_sets_differing=%d", len(pa), len(pb), len(sa), len(sb), np, ns)
	if np+ns > 0 {
		fmt.Printf(" first_pair=%q first_set=%q\n", fp, fs)
		os.Exit(1)
	}
	fmt.Println(" identical")
}
