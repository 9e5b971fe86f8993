// Package counter is how ctxsim's DoFns count: each Counter is a Beam
// counter, reported to the runner as usual, that is also tallied in the
// process that runs the DoFn.
//
// The tally exists for jobs whose workers run inside the launching process
// (the loopback environment, which is how Prism runs a job by default).
// Prism (Beam v2.77.0) can drop counter updates: the first time a counter
// is reported, by bundles that finish at about the same time, all but one
// of those bundles' values are lost, because the runner parks them under
// the counter's not-yet-resolved short ID, one slot per ID. An index job of
// two shards then reported 33 of its 80 chunks indexed, with all 80 in the
// index. Prism never retries a bundle, so in that environment the tally is
// the exact count; pipelines/internal/jobrun reads it back.
package counter

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// Counter counts events of one kind in a DoFn. The zero Counter is not
// usable; make one with New, typically in the DoFn's Setup.
type Counter struct {
	beam beam.Counter
	cell *cell
}

type cell struct {
	n       atomic.Int64
	touched atomic.Bool
}

var (
	mu    sync.Mutex
	cells = map[string]*cell{}
)

// New returns the counter namespace/name.
func New(namespace, name string) Counter {
	key := namespace + "/" + name
	mu.Lock()
	defer mu.Unlock()
	c, ok := cells[key]
	if !ok {
		c = &cell{}
		cells[key] = c
	}
	return Counter{beam: beam.NewCounter(namespace, name), cell: c}
}

// Inc adds n to the counter, in the runner's metrics and in this process's
// tally. ctx must be the context the runner passed to the DoFn.
func (c Counter) Inc(ctx context.Context, n int64) {
	c.beam.Inc(ctx, n)
	if !c.cell.touched.Load() { // a shared write only on first use
		c.cell.touched.Store(true)
	}
	c.cell.n.Add(n)
}

// Reset zeroes this process's tally, before a job starts.
func Reset() {
	mu.Lock()
	defer mu.Unlock()
	for _, c := range cells {
		c.n.Store(0)
		c.touched.Store(false)
	}
}

// Tally returns this process's count of every counter incremented since
// the last Reset (an increment by 0 counts as use), keyed "namespace/name".
func Tally() map[string]int64 {
	mu.Lock()
	defer mu.Unlock()
	t := map[string]int64{}
	for k, c := range cells {
		if c.touched.Load() {
			t[k] = c.n.Load()
		}
	}
	return t
}
