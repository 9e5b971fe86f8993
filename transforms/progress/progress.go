// Package progress prints a progress line for long-running DoFns: how many
// items a stage has processed and at what rate, at most every Interval;
// and, through a Heartbeat, a line for a job whenever nothing else has
// printed one for Interval, so a phase that reports nothing of its own
// still shows it is alive.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Output receives the progress lines; nil means os.Stderr (as it is when
// the line is printed).
var Output io.Writer

func output() io.Writer {
	if Output == nil {
		return os.Stderr
	}
	return Output
}

// lastLine is when a progress line was last printed (Unix nanoseconds),
// by a Reporter or a Heartbeat: a heartbeat prints only after a quiet
// Interval.
var lastLine atomic.Int64

// Interval is the longest a running job goes without a progress line: a
// Reporter prints every four fifths of it (8 s) while its stage is busy,
// and a Heartbeat prints when no line has been printed for Interval.
var Interval = 10 * time.Second

// reporterEvery is the least time between two lines of one Reporter:
// short enough that a busy stage's lines come before a heartbeat's.
func reporterEvery() time.Duration { return Interval * 4 / 5 }

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

// Add counts n more items, printing a line if reporterEvery has passed.
func (r *Reporter) Add(n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n += n
	if now := time.Now(); now.Sub(r.last) >= reporterEvery() {
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
	lastLine.Store(now.UnixNano())
	fmt.Fprintf(output(), "[%s] %s: %d %s in %.0fs (%.0f/s)\n",
		now.Format("15:04:05"), r.stage, r.n, r.unit, el, float64(r.n)/max(el, 1e-9))
}

// heartbeats are the running heartbeats, innermost last: only that one
// prints, so a job's heartbeat gives way to the heartbeat of a pipeline
// it runs, which says more.
var heartbeats struct {
	sync.Mutex
	ids  []int64
	next int64
}

// Heartbeat prints "[time] name: 1m20s elapsed, <status()>" whenever no
// progress line (of a Reporter or a heartbeat) has been printed for
// Interval (10 s), checked every twentieth of it, until stop is called.
// A busy Reporter prints more often than that, so its lines are the ones
// seen while it runs. status may be nil, and may return "".
// A heartbeat started inside another's lifetime replaces it until it
// stops.
func Heartbeat(name string, status func() string) (stop func()) {
	heartbeats.Lock()
	heartbeats.next++
	id := heartbeats.next
	heartbeats.ids = append(heartbeats.ids, id)
	heartbeats.Unlock()
	start := time.Now()
	if lastLine.Load() < start.UnixNano() {
		lastLine.Store(start.UnixNano()) // a quiet Interval from now
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		check := min(Interval/20, time.Second/2)
		tick := time.NewTicker(max(check, time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if !innermost(id) {
				continue
			}
			now := time.Now()
			last := lastLine.Load()
			if now.UnixNano()-last < int64(Interval-check) || !lastLine.CompareAndSwap(last, now.UnixNano()) {
				continue
			}
			line := fmt.Sprintf("[%s] %s: %s elapsed", now.Format("15:04:05"), name, now.Sub(start).Round(time.Second))
			if status != nil {
				if st := status(); st != "" {
					line += ", " + st
				}
			}
			fmt.Fprintln(output(), line)
		}
	}()
	return func() {
		close(done)
		<-finished
		heartbeats.Lock()
		defer heartbeats.Unlock()
		for i, h := range heartbeats.ids {
			if h == id {
				heartbeats.ids = append(heartbeats.ids[:i], heartbeats.ids[i+1:]...)
				break
			}
		}
	}
}

func innermost(id int64) bool {
	heartbeats.Lock()
	defer heartbeats.Unlock()
	return len(heartbeats.ids) > 0 && heartbeats.ids[len(heartbeats.ids)-1] == id
}
