// Command workermem measures what one harvest worker holds for a corpus:
// it loads what a worker loads (resources.Open's parts, one at a time:
// the chunk store, the open index, the models and engine, the stored
// sentence vectors) and prints, after each, the Go heap in use after a
// collection and the process's resident memory, with the corpus's counts.
// Run it once per corpus to see how a worker grows with the corpus:
//
//	go run ./bench/workermem -corpus out/corpus -model out/models
//
// -corpus may name several bin/index outputs, comma-separated: the worker
// of a corpus made of all of them, loaded into one store (with one index
// open per part, since each part has its own), measures what a worker of
// the whole would hold when the whole cannot be indexed in one process.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/storage"
)

func main() {
	corpus := flag.String("corpus", "", "A bin/index output directory (chunks/, index/, and vectors/ from bin/encode), or several, comma-separated.")
	models := flag.String("model", "", "The model directory the harvest uses.")
	mapped := flag.Bool("mapped", false, "Load the chunk store and the stored vectors as bin/harvest --map_corpus does: their strings and vectors in memory maps of local files, not the heap.")
	memprofile := flag.String("memprofile", "", "Write a heap profile here after loading (go tool pprof -sample_index=inuse_space).")
	flag.Parse()
	if *corpus == "" || *models == "" {
		fmt.Fprintln(os.Stderr, "usage: workermem -corpus DIR -model DIR")
		os.Exit(2)
	}
	ctx := context.Background()
	fail := func(err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, "workermem:", err)
			os.Exit(1)
		}
	}
	t0 := time.Now()
	report := func(what string) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		fmt.Printf("%-34s heap_in_use_mib=%7.0f rss_mib=%7.0f (anon %7.0f, file %7.0f) seconds=%6.1f\n", what,
			float64(m.HeapInuse)/(1<<20), float64(status("VmRSS:"))/1024, float64(status("RssAnon:"))/1024,
			float64(status("RssFile:"))/1024, time.Since(t0).Seconds())
	}
	report("start")
	parts := strings.Split(*corpus, ",")
	var chunks []string
	for _, c := range parts {
		chunks = append(chunks, storage.Join(storage.Join(c, "chunks"), "*.parquet"))
	}
	st, err := resources.LoadStoreMapped(ctx, *mapped, chunks...)
	fail(err)
	fmt.Printf("corpus %s: %d chunks, %d distinct sentences, %d contexts (sentence places)\n", *corpus, st.Len(), st.Sentences(), st.Slots())
	report("+ chunk store")
	for _, c := range parts {
		ix, err := retrieval.OpenAt(ctx, storage.Join(c, "index"))
		fail(err)
		defer ix.Close()
		if len(parts) == 1 {
			fail(resources.CheckCorpus(ix, storage.Join(c, "index"), st, chunks[0]))
		}
	}
	report(fmt.Sprintf("+ index opened (%d)", len(parts)))
	m, err := resources.LoadModels(ctx, *models)
	fail(err)
	e, err := m.Engine(st)
	fail(err)
	report("+ models and engine")
	for _, c := range parts {
		n, err := resources.LoadVectors(ctx, storage.Join(c, "vectors"), e, *mapped)
		fail(err)
		fmt.Printf("stored vectors of %s: %+v\n", c, n)
	}
	report("+ stored sentence vectors")
	if *memprofile != "" {
		f, err := os.Create(*memprofile)
		fail(err)
		fail(pprof.WriteHeapProfile(f))
		fail(f.Close())
	}
	runtime.KeepAlive(st)
	runtime.KeepAlive(e)
}

// status is a size in KiB from /proc/self/status (VmRSS: the resident set;
// RssAnon: its anonymous memory, heap and stacks; RssFile: its pages of
// mapped files), or -1 when it does not say.
func status(field string) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			if f := strings.Fields(v); len(f) > 0 {
				if kib, err := strconv.Atoi(f[0]); err == nil {
					return kib
				}
			}
			return -1
		}
	}
	return -1
}
