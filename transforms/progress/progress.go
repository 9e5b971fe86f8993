// Package progress prints a progress line for long-running DoFns: how many
// items a stage has processed and at what rate, at most every Interval.
package progress

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// Interval is the least time between two progress lines of one Reporter.
var Interval = 10 * time.Second

// Reporter counts items of one stage in one worker and prints a line to
// stderr now and then. It is safe for concurrent use.
type Reporter struct {
	stage, unit string

	mu      sync.Mutex
	n       int64
	start   time.Time
	last    time.Time
	printed bool
}

// New returns a Reporter for stage counting unit ("documents", "chunks").
func New(stage, unit string) *Reporter {
	now := time.Now()
	return &Reporter{stage: stage, unit: unit, start: now, last: now}
}

// Add counts n more items, printing a line if Interval has passed.
func (r *Reporter) Add(n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n += n
	if now := time.Now(); now.Sub(r.last) >= Interval {
		r.last = now
		r.print(now)
	}
}

// Done prints a final line if any progress line was printed.
func (r *Reporter) Done() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.printed {
		r.print(time.Now())
	}
}

func (r *Reporter) print(now time.Time) {
	r.printed = true
	el := now.Sub(r.start).Seconds()
	fmt.Fprintf(os.Stderr, "[%s] %s: %d %s in %.0fs (%.0f/s)\n",
		now.Format("15:04:05"), r.stage, r.n, r.unit, el, float64(r.n)/max(el, 1e-9))
}
