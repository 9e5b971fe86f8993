// Command setstep times the harvest's set step on one worker: it loads
// what a harvest worker loads (chunk store, index, models, stored sentence
// vectors), then for n sentences of the corpus retrieves the top K chunks
// and builds the context set at a preset (method.Engine.ContextSet), and
// prints the CPU seconds per sentence of retrieval and of the set, with a
// checksum of every set built (chunk, slot, S and term values, to the
// bit). With -compare it builds each set a second time with the exact
// rerank (method.Engine.ExactRerank) and reports whether every set is the
// same to the bit, and the two CPU figures side by side:
//
//	go run ./bench/setstep -corpus out/corpus -model out/models -n 200 -compare
package main

import (
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/storage"
)

func main() {
	corpus := flag.String("corpus", "", "A bin/index output directory (chunks/, index/, and vectors/ from bin/encode).")
	models := flag.String("model", "", "The model directory the harvest uses.")
	n := flag.Int("n", 100, "Sentences to build sets for (every k-th sentence of the store with at least -min_words words).")
	minWords := flag.Int("min_words", 6, "The fewest words a chosen sentence has.")
	preset := flag.String("preset", "default", "The method preset.")
	compare := flag.Bool("compare", false, "Also build every set with the exact rerank and compare.")
	threads := flag.Int("threads", 1, "Sets built at once (a harvest worker builds as many as it has cores).")
	profile := flag.String("cpuprofile", "", "Write a CPU profile of the timed pass with the bounded rerank to this file.")
	flag.Parse()
	if *corpus == "" || *models == "" {
		fmt.Fprintln(os.Stderr, "usage: setstep -corpus DIR -model DIR [-n N] [-compare]")
		os.Exit(2)
	}
	ctx := context.Background()
	fail := func(err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, "setstep:", err)
			os.Exit(1)
		}
	}
	st, err := method.Preset(*preset)
	fail(err)
	r, err := resources.Open(ctx, resources.Paths{
		Chunks: storage.Join(storage.Join(*corpus, "chunks"), "*.parquet"), Models: *models,
		Index: storage.Join(*corpus, "index"), Vectors: storage.Join(*corpus, "vectors")})
	fail(err)
	defer r.Index.Close()
	ix, e, store := r.Index, r.Engine, r.Engine.Store
	fmt.Printf("cpu: %s, GOMAXPROCS %d, %d set(s) at once; corpus %s: %d chunks, %d sentences; preset %s (K %d, R %d, |C_s| %d)\n",
		cpuName(), runtime.GOMAXPROCS(0), *threads, *corpus, store.Len(), store.Sentences(), *preset, st.TopK, st.Rerank, st.SetSize)

	var texts []string
	step := max(store.Sentences()/max(*n, 1), 1)
	for k := 0; k < store.Sentences() && len(texts) < *n; k += step {
		for j := k; j < min(k+step, store.Sentences()); j++ {
			if t := store.Text(int32(j)); words(t) >= *minWords {
				texts = append(texts, t)
				break
			}
		}
	}
	hits := make([][]schemas.Hit, len(texts))
	t0 := cpu()
	for i, t := range texts {
		hits[i], _, err = ix.Search(ctx, t, st.TopK, nil)
		fail(err)
	}
	fmt.Printf("retrieval: %d queries, %.4f CPU s per sentence\n", len(texts), (cpu()-t0)/float64(len(texts)))

	build := func(exact bool) (sum uint64, cpuPer float64, ctxs int) {
		e.ExactRerank = exact
		e.DropScoreCache()
		runtime.GC()
		sets := make([][]method.Cand, len(texts))
		var wg sync.WaitGroup
		next := atomic.Int64{}
		t := cpu()
		for range *threads {
			wg.Go(func() {
				for i := int(next.Add(1) - 1); i < len(texts); i = int(next.Add(1) - 1) {
					sets[i], _ = e.ContextSet(texts[i], hits[i], st, uint64(i))
				}
			})
		}
		wg.Wait()
		cpuPer = (cpu() - t) / float64(len(texts))
		h := fnv.New64a()
		for _, set := range sets {
			ctxs += len(set)
			for _, c := range set {
				fmt.Fprintf(h, "%s#%d:%08x", c.ChunkID, c.Slot, math.Float32bits(c.S))
				for _, v := range c.Comp {
					fmt.Fprintf(h, ",%08x", math.Float32bits(v))
				}
				h.Write([]byte{'\n'})
			}
			h.Write([]byte{'|'})
		}
		return h.Sum64(), cpuPer, ctxs
	}
	// A first pass warms what every later set shares (the inverse norms of
	// the contexts' sums, the sentence sums not stored); both timed passes
	// run warm.
	build(false)
	if *profile != "" {
		pf, err := os.Create(*profile)
		fail(err)
		fail(pprof.StartCPUProfile(pf))
	}
	fast, fastCPU, n1 := build(false)
	if *profile != "" {
		pprof.StopCPUProfile()
	}
	fmt.Printf("sets (rerank by per-sentence dots): %d contexts, %.4f CPU s per sentence, checksum %016x\n", n1, fastCPU, fast)
	if *compare {
		exact, exactCPU, n2 := build(true)
		fmt.Printf("sets (exact rerank):               %d contexts, %.4f CPU s per sentence, checksum %016x\n", n2, exactCPU, exact)
		same := "identical"
		if exact != fast || n1 != n2 {
			same = "DIFFERENT"
		}
		fmt.Printf("sets %s; CPU ratio exact/fast %.2f\n", same, exactCPU/fastCPU)
		if exact != fast {
			os.Exit(1)
		}
	}
}

func words(s string) int { return len(strings.Fields(s)) }

// cpu is the process's user plus system CPU seconds.
func cpu() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func cpuName() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if name, ok := strings.CutPrefix(line, "model name"); ok {
			if _, v, ok := strings.Cut(name, ":"); ok {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
}
