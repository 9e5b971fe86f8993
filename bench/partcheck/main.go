// Command partcheck runs the method over a corpus split into parts by
// index shard, one part loaded at a time, and compares it with the method
// over the whole corpus: the retrievals, the context sets and the labels of
// STS pairs, and what a worker holds for the whole corpus and for each
// part (the Go heap in use after loading, after a collection).
//
//	go run ./bench/partcheck -corpus out/corpus -model out/models -sts ../shared/data/eval/stsb-dev.tsv -n 100 -parts 2
//
// The parts' steps are those of resources.Part's design: the query terms'
// document frequencies counted on every part and added, each part
// searched with them and the hits merged (retrieval.MergeHits); each part's
// candidates ranked and scored (method.Engine.PartCandidates) and merged
// into C_s (method.MergeSet); each pair's sums of Eq. 4 added over the
// parts (method.Engine.LabelPart), and the lexical part's TF-IDF counts
// added over them; then the label made by an engine that holds no corpus.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"syscall"
	"time"

	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/lexical"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/scoring/sts"
	"github.com/ctxsim/ctxsim/storage"
)

func main() {
	corpus := flag.String("corpus", "", "A bin/index output directory (chunks/, index/, and vectors/ from bin/encode).")
	models := flag.String("model", "", "The model directory.")
	stsFile := flag.String("sts", "", "STS pairs to label (their sentences are the sampled sentences).")
	n := flag.Int("n", 100, "Pairs, spread over the file.")
	parts := flag.Int("parts", 2, "Parts of the corpus (at most the index's shards).")
	preset := flag.String("preset", "default", "Method settings (method.Preset).")
	mapped := flag.Bool("mapped", false, "Load the store and vectors as bin/harvest --map_corpus does.")
	flag.Parse()
	if *corpus == "" || *models == "" || *stsFile == "" {
		fmt.Fprintln(os.Stderr, "usage: partcheck -corpus DIR -model DIR -sts FILE [-n N -parts P]")
		os.Exit(2)
	}
	ctx := context.Background()
	fail := func(err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, "partcheck:", err)
			os.Exit(1)
		}
	}
	st, err := method.Preset(*preset)
	fail(err)
	all, err := sts.Read(ctx, *stsFile)
	fail(err)
	pairs := sts.Spread(all, *n)
	var sents []string
	for _, p := range pairs {
		sents = append(sents, p.S1, p.S2)
	}
	paths := resources.Paths{Chunks: storage.Join(storage.Join(*corpus, "chunks"), "*.parquet"), Models: *models,
		Index: storage.Join(*corpus, "index"), Vectors: storage.Join(*corpus, "vectors"), Mapped: *mapped}
	fmt.Printf("corpus %s, %d pairs (%d sentences) of %s, preset %s, %d parts, GOMAXPROCS %d\n",
		*corpus, len(pairs), len(sents), *stsFile, *preset, *parts, runtime.GOMAXPROCS(0))

	// The whole corpus.
	t0, c0 := time.Now(), cpu()
	h0 := heapInUse()
	res, err := resources.Open(ctx, paths)
	fail(err)
	heap("whole corpus loaded", h0, res.Engine.Store, t0, c0)
	t0, c0 = time.Now(), cpu()
	wholeHits := make([][]schemas.Hit, len(sents))
	wholeSets := make([][]schemas.ScoredContext, len(sents))
	setCands := make([][]method.Cand, len(sents))
	terms, idx := res.Engine.SetTerms(st)
	_, rerank := res.Engine.Term(st.RerankBy)
	fail(parallel(len(sents), func(i int) error {
		h, _, err := res.Index.Search(ctx, sents[i], st.TopK, nil)
		if err != nil {
			return err
		}
		wholeHits[i] = h
		setCands[i], _ = res.Engine.ContextSet(sents[i], h, st, 0)
		for j := range setCands[i] {
			wholeSets[i] = append(wholeSets[i], setCands[i][j].Ref(idx))
		}
		return nil
	}))
	wholeLabels := make([]method.PairLabel, len(pairs))
	for k := range pairs {
		wholeLabels[k] = res.Engine.Label(sents[2*k], sents[2*k+1], setCands[2*k], setCands[2*k+1], st)
	}
	step("whole corpus: retrieval, sets, labels", t0, c0)
	resources.Release(paths)
	res, setCands = nil, nil

	// The parts: the query terms' frequencies, then the search.
	t0, c0 = time.Now(), cpu()
	meta, err := retrieval.ReadMeta(paths.Index)
	fail(err)
	part := func(p int) resources.Part { return resources.Part{Part: p, Parts: *parts, Shards: meta.NumShards} }
	queries := make([]retrieval.QueryTerms, len(sents))
	lists := make([][][]schemas.Hit, len(sents))
	for phase := range 2 {
		for p := range *parts {
			ix, err := retrieval.OpenShards(paths.Index, part(p).HasShard)
			fail(err)
			fail(parallel(len(sents), func(i int) error {
				if phase == 0 {
					q, err := ix.QueryTerms(ctx, sents[i])
					if err != nil {
						return err
					}
					if p == 0 {
						queries[i] = q
						return nil
					}
					return queries[i].AddDF(q)
				}
				h, _, err := ix.SearchTerms(ctx, queries[i], st.TopK, nil)
				lists[i] = append(lists[i], h)
				return err
			}))
			ix.Close()
		}
	}
	hits := make([][]schemas.Hit, len(sents))
	hitsDiffer := 0
	for i := range sents {
		hits[i] = retrieval.MergeHits(lists[i], st.TopK)
		if !slices.Equal(hits[i], wholeHits[i]) {
			hitsDiffer++
		}
	}
	step("parts: retrieval", t0, c0)
	fmt.Printf("retrievals differing from the whole index's: %d of %d\n", hitsDiffer, len(sents))

	// The parts: candidates, merged into sets.
	cands := make([][][]method.PartCand, len(sents))
	lex := &lexical.TFIDF{DF: map[string]int{}, Stem: true}
	for p := range *parts {
		t0, c0 = time.Now(), cpu()
		pp := paths
		pp.Part = resources.Part{Part: p, Parts: *parts}
		h0 := heapInUse()
		r, err := resources.Open(ctx, pp)
		fail(err)
		heap(fmt.Sprintf("part %d of %d loaded", p, *parts), h0, r.Engine.Store, t0, c0)
		t0, c0 = time.Now(), cpu()
		missing := make([]int, len(sents))
		fail(parallel(len(sents), func(i int) error {
			pc, info, err := r.Engine.PartCandidates(sents[i], hits[i], st)
			cands[i] = append(cands[i], pc)
			missing[i] = info.MissingChunks
			return err
		}))
		for i := range sents {
			in := 0
			for _, h := range hits[i] {
				if r.Part.Has(h.ChunkID) {
					in++
				}
			}
			if missing[i] != len(hits[i])-in {
				fail(fmt.Errorf("sentence %d: %d hits missing from part %d, %d are in other parts", i, missing[i], p, len(hits[i])-in))
			}
		}
		fail(method.AddTFIDF(lex, r.Engine.Store.TFIDF(true)))
		step(fmt.Sprintf("part %d: candidates, TF-IDF counts", p), t0, c0)
		resources.Release(pp)
	}
	sets := make([][]schemas.ScoredContext, len(sents))
	setsDiffer := 0
	for i := range sents {
		sets[i] = method.MergeSet(cands[i], st, rerank)
		if !slices.EqualFunc(sets[i], wholeSets[i], func(a, b schemas.ScoredContext) bool {
			return a.ChunkID == b.ChunkID && a.Slot == b.Slot && a.Score == b.Score && slices.Equal(a.Terms, b.Terms)
		}) {
			setsDiffer++
		}
	}
	fmt.Printf("context sets differing from the whole corpus's: %d of %d\n", setsDiffer, len(sents))

	// The parts: the pairs' sums.
	sums := make([]method.Sums, len(pairs))
	for p := range *parts {
		t0, c0 = time.Now(), cpu()
		pp := paths
		pp.Part = resources.Part{Part: p, Parts: *parts}
		r, err := resources.Open(ctx, pp)
		fail(err)
		for k := range pairs {
			a, err := r.Engine.ResolveIn(sets[2*k], terms, r.Part.Has)
			fail(err)
			b, err := r.Engine.ResolveIn(sets[2*k+1], terms, r.Part.Has)
			fail(err)
			_, err = r.Engine.LabelPart(sents[2*k], sents[2*k+1], a, b, st, &sums[k])
			fail(err)
		}
		step(fmt.Sprintf("part %d: load and the pairs' sums", p), t0, c0)
		resources.Release(pp)
	}
	// The labels, by an engine without the corpus.
	m, err := resources.LoadModels(ctx, *models)
	fail(err)
	e, err := m.Engine(method.NewStore())
	fail(err)
	e.UseLexical(lex)
	differ, maxDiff, maxEq4 := 0, 0.0, 0.0
	for k := range pairs {
		l := e.Parts(sents[2*k], sents[2*k+1])
		l.Context, l.Contexts = float64(float32(sums[k].Similarity(st.Similarity))), int(sums[k].N)
		l.Label = method.Combine(st, l)
		w := wholeLabels[k]
		if float32(l.Label) != float32(w.Label) || l.Lexical != w.Lexical || l.Contexts != w.Contexts {
			differ++
		}
		maxDiff = max(maxDiff, math.Abs(l.Label-w.Label))
		maxEq4 = max(maxEq4, math.Abs(l.Context-w.Context))
		if l.Contexts != w.Contexts || l.Lexical != w.Lexical {
			fmt.Printf("pair %d: |C| %d (whole %d), lexical %v (whole %v)\n", k, l.Contexts, w.Contexts, l.Lexical, w.Lexical)
		}
	}
	fmt.Printf("labels differing from the whole corpus's (as float32): %d of %d; largest difference %.3g (Eq. 4: %.3g)\n",
		differ, len(pairs), maxDiff, maxEq4)
	if hitsDiffer+setsDiffer > 0 || maxDiff > 1e-6 {
		os.Exit(1)
	}
}

// heapInUse is the heap in use after a collection, in MiB.
func heapInUse() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapInuse) / (1 << 20)
}

// heap prints what loading added to the heap in use (after a collection:
// the resources loaded, not what this tool keeps of earlier steps), the
// heap in use, and the store's counts.
func heap(what string, before float64, st *method.Store, t0 time.Time, c0 float64) {
	h := heapInUse()
	fmt.Printf("%-36s loaded_mib=%6.0f heap_in_use_mib=%6.0f chunks=%d sentences=%d wall_s=%.1f cpu_s=%.1f\n", what,
		h-before, h, st.Len(), st.Sentences(), time.Since(t0).Seconds(), cpu()-c0)
}

func step(what string, t0 time.Time, c0 float64) {
	fmt.Printf("%-36s wall_s=%.1f cpu_s=%.1f\n", what, time.Since(t0).Seconds(), cpu()-c0)
}

// parallel runs fn(0..n-1) on GOMAXPROCS goroutines and returns the first
// error.
func parallel(n int, fn func(i int) error) error {
	w := runtime.GOMAXPROCS(0)
	errs := make(chan error, w)
	next := make(chan int)
	go func() {
		for i := range n {
			next <- i
		}
		close(next)
	}()
	for range w {
		go func() {
			var first error
			for i := range next {
				if err := fn(i); err != nil && first == nil {
					first = err
				}
			}
			errs <- first
		}()
	}
	var first error
	for range w {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// cpu is the process's user plus system CPU seconds.
func cpu() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
