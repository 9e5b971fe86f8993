package evaluation

import "sync"

// parallel calls fn(i) for every i in [0, n) on up to workers goroutines
// (at least one) and returns the first error fn returns. Once fn has
// failed no further i is started; calls already running finish.
func parallel(n, workers int, fn func(i int) error) error {
	var (
		mu    sync.Mutex
		next  int
		first error
		wg    sync.WaitGroup
	)
	// take hands out the next index, or false when all are taken or fn
	// has failed.
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if first != nil || next >= n {
			return 0, false
		}
		next++
		return next - 1, true
	}
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = err
		}
	}
	for range min(max(workers, 1), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, ok := take(); ok; i, ok = take() {
				if err := fn(i); err != nil {
					fail(err)
				}
			}
		}()
	}
	wg.Wait()
	return first
}
