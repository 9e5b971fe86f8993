// Command shufflebytes measures the bytes each labeled pair puts on the
// shuffles of the labeling plane, as Beam encodes them, from a harvest's
// own pairs and context sets: the plane that carries a whole context set
// with each pair against the plane of per-side sums that Label runs.
//
//	go run ./bench/shufflebytes -harvest out/harvest -corpus out/corpus
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/transforms/harvest"
)

func main() {
	dir := flag.String("harvest", "", "A harvest output directory (with pairs/ and context_sets/).")
	corpus := flag.String("corpus", "", "The harvest's corpus (bin/index output, with chunks/): pairs carry their first set's contexts as numbers in its chunk store.")
	limit := flag.Int("pairs", 20000, "Pairs to measure (the first ones read).")
	flag.Parse()
	ctx := context.Background()
	pairs, err := storage.ReadTable[schemas.LabeledPair](ctx, storage.Join(*dir, "pairs"))
	if err == nil && len(pairs) == 0 {
		err = fmt.Errorf("no labeled pairs under %s", *dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "shufflebytes:", err)
		os.Exit(1)
	}
	pairs = pairs[:min(*limit, len(pairs))]
	sets, err := storage.ReadTable[schemas.ContextSet](ctx, storage.Join(*dir, "context_sets"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "shufflebytes:", err)
		os.Exit(1)
	}
	byID := map[string]schemas.ContextSet{}
	var contexts int
	for _, s := range sets {
		byID[s.SentenceID] = s
		contexts += len(s.Contexts)
	}
	st, err := resources.LoadStore(ctx, storage.Join(storage.Join(*corpus, "chunks"), "*.parquet"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "shufflebytes:", err)
		os.Exit(1)
	}
	whole, sides, skipA := harvest.ShuffleBytes(pairs, byID, st)
	if whole == nil {
		fmt.Fprintln(os.Stderr, "shufflebytes: no pair has both context sets")
		os.Exit(1)
	}
	fmt.Printf("%d pairs, %d context sets (mean |C_s| %.1f)\n", len(pairs), len(sets), float64(contexts)/float64(max(len(sets), 1)))
	for _, plane := range []struct {
		name  string
		sizes []harvest.ShuffleSize
	}{{"whole sets with each pair (before)", whole}, {"per-side sums (Label)", sides}} {
		var pairBytes float64
		fmt.Printf("%s:\n", plane.name)
		for i, s := range plane.sizes {
			fmt.Printf("  %-52s %10.0f bytes per pair\n", s.Shuffle, s.Bytes)
			if i < len(plane.sizes)-1 {
				pairBytes += s.Bytes
			}
		}
		fmt.Printf("  %-52s %10.0f bytes per pair\n", "all the pairs' shuffles", pairBytes)
	}
	// What the third shuffle's pairs carry of C_a: the contexts as store
	// numbers (method.Engine.SetSkip), against the 8-byte hash of each
	// context that pairs carried before 2026-11-28.
	fmt.Printf("C_a's contexts in the third shuffle: %.0f bytes per pair as store numbers (%.2f per context), %.0f as 64-bit hashes\n",
		skipA.Numbers, skipA.Numbers/skipA.Hashes*8, skipA.Hashes)
}
