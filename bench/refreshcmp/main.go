// Command refreshcmp compares a refreshed version with a full run on the
// same final corpus: which context sets were kept from the parent, which
// were computed again, and whether everything computed equals the full
// run's. It prints one summary line.
//
//	go run ./bench/refreshcmp --parent=R/versions/v000001 --refresh=R/versions/v000002 --full=F/versions/v000001
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
)

var (
	parent  = flag.String("parent", "", "The refreshed version's parent version directory.")
	refresh = flag.String("refresh", "", "The refreshed version directory.")
	full    = flag.String("full", "", "The version directory of a full run on the same corpus.")
)

func read[T any](dir, table string) []T {
	files, _ := filepath.Glob(filepath.Join(dir, "harvest", table, "part-*.parquet"))
	var all []T
	for _, f := range files {
		rows, err := storage.ReadParquet[T](context.Background(), f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		all = append(all, rows...)
	}
	return all
}

func sameSet(a, b schemas.ContextSet) bool {
	if len(a.Contexts) != len(b.Contexts) {
		return false
	}
	for i := range a.Contexts {
		x, y := a.Contexts[i], b.Contexts[i]
		if x.ChunkID != y.ChunkID || x.Slot != y.Slot || x.Score != y.Score {
			return false
		}
	}
	return true
}

func main() {
	flag.Parse()
	old := map[string]schemas.ContextSet{}
	for _, cs := range read[schemas.ContextSet](*parent, "context_sets") {
		old[cs.SentenceID] = cs
	}
	fullSets := map[string]schemas.ContextSet{}
	for _, cs := range read[schemas.ContextSet](*full, "context_sets") {
		fullSets[cs.SentenceID] = cs
	}
	var kept, keptSameAsFull, computed, computedSame, onlyRefresh int
	for _, cs := range read[schemas.ContextSet](*refresh, "context_sets") {
		f, inFull := fullSets[cs.SentenceID]
		if !inFull {
			onlyRefresh++
			continue
		}
		if p, ok := old[cs.SentenceID]; ok && sameSet(p, cs) {
			kept++
			if sameSet(cs, f) {
				keptSameAsFull++
			}
			continue
		}
		computed++
		if sameSet(cs, f) {
			computedSame++
		}
	}
	fullPairs := map[string]schemas.LabeledPair{}
	for _, p := range read[schemas.LabeledPair](*full, "pairs") {
		fullPairs[p.PairID] = p
	}
	var pairs, inFull, sameInputs, sameInputsSameLabel, sameLabel int
	for _, p := range read[schemas.LabeledPair](*refresh, "pairs") {
		pairs++
		q, ok := fullPairs[p.PairID]
		if !ok {
			continue
		}
		inFull++
		if p.Label == q.Label {
			sameLabel++
		}
		if p.ContextsDigest == q.ContextsDigest {
			sameInputs++
			if p.Label == q.Label {
				sameInputsSameLabel++
			}
		}
	}
	fmt.Printf("context_sets: refresh %d (kept %d, of which %d equal the full run's; computed %d, of which %d equal the full run's; %d not in the full run), full %d\n",
		kept+computed+onlyRefresh, kept, keptSameAsFull, computed, computedSame, onlyRefresh, len(fullSets))
	fmt.Printf("pairs: refresh %d, full %d, shared %d; labels identical %d; computed from identical context sets %d, of which identical labels %d\n",
		pairs, len(fullPairs), inFull, sameLabel, sameInputs, sameInputsSameLabel)
}
