// Command retrievalbench measures an index: query latency over a query file,
// and near-duplicate recall (corpus sentences with two words replaced must
// find their original chunk in the top 10). It also exports an index's
// chunks and a query file as the exact terms the index's analyzer produces,
// so that another engine (bench/xapian.py) can index and query the same
// terms.
//
//	retrievalbench latency -index DIR -queries stsb-dev.tsv -n 1000 -k 20000 [-ids FILE -ids_k 1000] [-cpuprofile FILE] [-bleve_collector]
//	retrievalbench neardup -index DIR -sentences 'out/sentences/*.parquet' -n 1000 [-bleve_collector]
//	retrievalbench terms -index DIR -queries stsb-dev.tsv -n 1000 -out DIR [-chunks DIR]
//	retrievalbench build -chunks 'out/corpus/chunks/*.parquet' -repeat 3 -out DIR
//
// build writes a one-shard index of a chunks table repeated -repeat times
// (each copy's chunk IDs suffixed "~rN"), for latency at a shard size the
// corpora at hand do not reach in one index job: the copies tie in score,
// and each bigram's postings grow -repeat times.
//
// -bleve_collector searches through bleve's own (-_score, _id) top-N
// collector (retrieval.Index.BleveCollector) instead of the default one,
// which returns the same hits faster; with -ids the two can be compared.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/retrieval/corpus"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: retrievalbench latency|neardup|terms|build [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	indexDir := fs.String("index", "", "index directory")
	queries := fs.String("queries", "", "query file (text or STS TSV)")
	sentences := fs.String("sentences", "", "glob of the sentences table")
	n := fs.Int("n", 1000, "number of queries")
	k := fs.Int("k", retrieval.DefaultK, "hits per query")
	minBigrams := fs.Int("min_bigrams", retrieval.DefaultMinBigrams, "queries with fewer bigrams also use unigrams (if indexed)")
	minWords := fs.Int("min_words", 4, "neardup: shortest sentence (words) to use")
	seed := fs.Int64("seed", 1, "neardup: random seed")
	failures := fs.Int("failures", 0, "neardup: print this many failed queries")
	idsPath := fs.String("ids", "", "latency: write each query's top ids_k chunk IDs and scores, and the hits tied with the last, to this gzip TSV")
	idsK := fs.Int("ids_k", 1000, "latency: chunk IDs per query written to -ids")
	cpuProfile := fs.String("cpuprofile", "", "latency: write a CPU profile of the timed queries to this file")
	chunks := fs.String("chunks", "", "terms: the index job's chunks table (default: DIR/../chunks for -index DIR); build: a glob of its files")
	repeat := fs.Int("repeat", 1, "build: copies of the chunks table to index")
	outDir := fs.String("out", "", "terms: output directory")
	bleveCollector := fs.Bool("bleve_collector", false, "latency, neardup: use bleve's (-_score, _id) top-N collector instead of the default one (same hits, slower)")
	fs.Parse(os.Args[2:])

	if os.Args[1] == "build" {
		if err := build(*chunks, *repeat, *outDir); err != nil {
			fail(err)
		}
		return
	}
	ix, err := retrieval.Open(*indexDir)
	if err != nil {
		fail(err)
	}
	defer ix.Close()
	ix.MinBigrams = *minBigrams
	ix.BleveCollector = *bleveCollector
	switch os.Args[1] {
	case "latency":
		latency(ix, *queries, *n, *k, *idsPath, *idsK, *cpuProfile)
	case "neardup":
		neardup(ix, *sentences, *n, *minWords, *seed, *failures)
	case "terms":
		dir := *chunks
		if dir == "" {
			dir = filepath.Join(filepath.Dir(filepath.Clean(*indexDir)), "chunks")
		}
		if err := exportTerms(ix, dir, *queries, *n, *outDir); err != nil {
			fail(err)
		}
	default:
		fail(fmt.Errorf("unknown mode %q", os.Args[1]))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "error:", err)
	os.Exit(1)
}

func readQueries(path string, n int) []string {
	f, err := os.Open(path)
	if err != nil {
		fail(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var out []string
	for sc.Scan() && len(out) < n {
		line := sc.Text()
		if strings.HasPrefix(line, "score\t") {
			continue
		}
		if cols := strings.Split(line, "\t"); len(cols) >= 3 {
			line = cols[1]
		}
		out = append(out, corpus.Normalize(line))
	}
	return out
}

// latency times the top-k search of each query, one after the other. With
// idsPath it also writes each query's top idsK hits (see writeTop), and with
// profile a CPU profile of the timed loop; neither is timed.
func latency(ix *retrieval.Index, path string, n, k int, idsPath string, idsK int, profile string) {
	qs := readQueries(path, n)
	ctx := context.Background()
	// Warm up the OS page cache and bleve's segment caches (and read each
	// shard's chunk ID table, at the first search).
	warm := time.Now()
	for _, q := range qs[:min(20, len(qs))] {
		ix.Search(ctx, q, k, nil)
	}
	warmup := time.Since(warm)
	var tops [][]schemas.Hit
	if idsPath != "" {
		tops = make([][]schemas.Hit, len(qs))
	}
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer f.Close()
	}
	lat := make([]time.Duration, len(qs))
	var hits, empty int
	start := time.Now()
	for i, q := range qs {
		t := time.Now()
		h, _, err := ix.Search(ctx, q, k, nil)
		if err != nil {
			fail(err)
		}
		lat[i] = time.Since(t)
		hits += len(h)
		if len(h) == 0 {
			empty++
		}
		if tops != nil {
			tops[i] = topWithTies(h, idsK)
		}
	}
	total := time.Since(start)
	if profile != "" {
		pprof.StopCPUProfile()
	}
	if idsPath != "" {
		if err := writeTop(idsPath, tops); err != nil {
			fail(err)
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))] }
	fmt.Printf("latency shards=%d unigrams=%t collector=%s k=%d queries=%d p50=%.1fms p95=%.1fms max=%.1fms mean=%.1fms qps=%.1f mean_hits=%.0f no_hits=%d warmup_20_queries=%.2fs\n",
		ix.Meta.NumShards, ix.Meta.Unigrams, collector(ix), k, len(qs),
		ms(pct(0.5)), ms(pct(0.95)), ms(lat[len(lat)-1]), ms(total)/float64(len(qs)),
		float64(len(qs))/total.Seconds(), float64(hits)/float64(len(qs)), empty, warmup.Seconds())
}

// collector names the top-K collector ix searches with.
func collector(ix *retrieval.Index) string {
	if ix.BleveCollector {
		return "bleve"
	}
	return "accumulate"
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// neardup replaces two words of n random corpus sentences with words drawn
// from other sentences, and counts how often one of the original's chunks is
// in the top 10.
func neardup(ix *retrieval.Index, glob string, n, minWords int, seed int64, failures int) {
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		fail(fmt.Errorf("no sentence files match %q", glob))
	}
	var all []schemas.Sentence
	for _, f := range files {
		s, err := storage.ReadParquet[schemas.Sentence](context.Background(), f)
		if err != nil {
			fail(err)
		}
		all = append(all, s...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	r := rand.New(rand.NewSource(seed))
	var vocab []string
	for i := 0; i < 2000; i++ {
		vocab = append(vocab, strings.Fields(all[r.Intn(len(all))].Text)...)
	}
	// Corpus text repeats (licence footers, refrains): any chunk holding an
	// identical sentence also counts in the lenient figure.
	sameText := map[string][]string{}
	for _, s := range all {
		sameText[s.Text] = append(sameText[s.Text], s.ChunkIDs...)
	}
	lenient := 0
	type bucket struct{ n, ok int }
	buckets := map[string]*bucket{}
	var tot bucket
	ctx := context.Background()
	for tot.n < n {
		s := all[r.Intn(len(all))]
		words := strings.Fields(s.Text)
		if len(words) < minWords {
			continue
		}
		i := r.Intn(len(words))
		j := (i + 1 + r.Intn(len(words)-1)) % len(words)
		for _, p := range []int{i, j} {
			w := vocab[r.Intn(len(vocab))]
			for strings.EqualFold(w, words[p]) {
				w = vocab[r.Intn(len(vocab))]
			}
			words[p] = w
		}
		hits, _, err := ix.Search(ctx, strings.Join(words, " "), 10, nil)
		if err != nil {
			fail(err)
		}
		own := map[string]bool{}
		for _, c := range s.ChunkIDs {
			own[c] = true
		}
		found := false
		for _, h := range hits {
			if own[h.ChunkID] {
				found = true
				break
			}
		}
		same := map[string]bool{}
		for _, c := range sameText[s.Text] {
			same[c] = true
		}
		for _, h := range hits {
			if same[h.ChunkID] {
				lenient++
				break
			}
		}
		if !found && failures > 0 {
			failures--
			fmt.Printf("miss: %q -> %q\n", s.Text, strings.Join(words, " "))
		}
		name := lengthBucket(len(words))
		b := buckets[name]
		if b == nil {
			b = &bucket{}
			buckets[name] = b
		}
		b.n++
		tot.n++
		if found {
			b.ok++
			tot.ok++
		}
	}
	fmt.Printf("neardup shards=%d unigrams=%t collector=%s min_bigrams=%d min_words=%d sentences=%d top10=%.1f%% top10_any_identical=%.1f%%",
		ix.Meta.NumShards, ix.Meta.Unigrams, collector(ix), ix.MinBigrams, minWords, tot.n,
		100*float64(tot.ok)/float64(tot.n), 100*float64(lenient)/float64(tot.n))
	var names []string
	for k := range buckets {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		b := buckets[k]
		fmt.Printf(" [%s words: %d/%d=%.1f%%]", k, b.ok, b.n, 100*float64(b.ok)/float64(b.n))
	}
	fmt.Println()
}

func lengthBucket(n int) string {
	switch {
	case n < 8:
		return "04-07"
	case n < 16:
		return "08-15"
	case n < 32:
		return "16-31"
	default:
		return "32+"
	}
}

// build indexes repeat copies of the chunks matching glob into a one-shard
// index in out.
func build(glob string, repeat int, out string) error {
	if glob == "" || out == "" || repeat < 1 {
		return fmt.Errorf("build needs -chunks, -out and -repeat >= 1")
	}
	opts := retrieval.BuildOptions{}
	w, err := retrieval.CreateShard(out, 0, 1, opts)
	if err != nil {
		return err
	}
	t0 := time.Now()
	for r := range repeat {
		var addErr error
		err := storage.ScanGlob(context.Background(), glob, func(c schemas.Chunk) bool {
			if r > 0 {
				c.ID = fmt.Sprintf("%s~r%d", c.ID, r)
			}
			addErr = w.Add(&c)
			return addErr == nil
		})
		if err == nil {
			err = addErr
		}
		if err != nil {
			w.Abort()
			return err
		}
		fmt.Fprintf(os.Stderr, "build: copy %d of %d done, %d chunks, %.0f s\n", r+1, repeat, w.Count(), time.Since(t0).Seconds())
	}
	if _, err := w.Close(); err != nil {
		return err
	}
	meta, err := retrieval.Finalize(out, 1, opts, fmt.Sprintf("%s repeated %d times", glob, repeat))
	if err != nil {
		return err
	}
	fmt.Printf("build chunks=%d repeat=%d seconds=%.0f chunks_per_s=%.0f\n", meta.Shards[0].Count, repeat,
		time.Since(t0).Seconds(), float64(meta.Shards[0].Count)/time.Since(t0).Seconds())
	return nil
}
