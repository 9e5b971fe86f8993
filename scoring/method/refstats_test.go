package method

import (
	"sync"
	"testing"
)

// Callers asking at once for the same sentence's reference statistics
// get the same numbers, and the work is done and counted once.
func TestRefStatsComputedOnceForConcurrentCallers(t *testing.T) {
	e := testEngine(t, testChunks(12))
	if len(e.reference) == 0 {
		t.Fatal("the test engine has no reference contexts")
	}
	lambda := map[string]float64{TermCtx: 1}
	for round := range 20 {
		s := "the cat sat on a mat number " + string(rune('a'+round))
		const callers = 8
		var wg sync.WaitGroup
		start := make(chan struct{})
		means := make([]float64, callers)
		pairs := make([]int64, callers)
		for i := range callers {
			wg.Go(func() {
				<-start
				m, _, w := e.RefStats(s, lambda)
				means[i], pairs[i] = m, w.CtxPairs
			})
		}
		close(start)
		wg.Wait()
		var total int64
		for i := range callers {
			total += pairs[i]
			if means[i] != means[0] {
				t.Fatalf("round %d: caller %d got mean %v, caller 0 %v", round, i, means[i], means[0])
			}
		}
		if total != int64(len(e.reference)) {
			t.Fatalf("round %d: %d context scores counted for %d reference contexts", round, total, len(e.reference))
		}
	}
}
