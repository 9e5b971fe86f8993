// Package jobrun is what every ctxsim job's main shares: Beam
// initialisation, running on the runner named by --runner (prism by
// default), and reading back the job's counters.
package jobrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/ctxsim/ctxsim/transforms/counter"
	"github.com/ctxsim/ctxsim/transforms/parquetio"
	"github.com/ctxsim/ctxsim/transforms/remote"
)

// Counters maps "namespace/name" to a counter's value, summed over steps.
type Counters map[string]int64

// running is set while Run runs a job: the in-process tally of counters
// (package counter) is only a job's own when one job runs at a time.
var running atomic.Int32

// Run runs p and returns its counters. Runners that report no metrics
// (a Dataflow dry run) give an empty map.
//
// When the workers ran in this process (the loopback environment, Prism's
// default), the counters are the process's own tally (package counter),
// which is exact there, and not the runner's report, which Prism can
// undercount; a counter the runner reported differently is named on
// stderr.
func Run(ctx context.Context, name string, p *beam.Pipeline) (Counters, error) {
	start := time.Now()
	fmt.Fprintf(os.Stderr, "%s: running on %s\n", name, RunnerName())
	alone := running.Add(1) == 1
	defer running.Add(-1)
	if alone {
		counter.Reset()
	}
	res, err := beamx.RunWithMetrics(ctx, p)
	if err != nil {
		if !NotRun() {
			abandon(ctx, name)
		}
		return nil, pipelineError(name, err)
	}
	c := Counters{}
	// A Dataflow dry run, template build or asynchronous submission
	// returns no result (sometimes as a typed nil pointer).
	if v := reflect.ValueOf(res); res != nil && !(v.Kind() == reflect.Pointer && v.IsNil()) {
		for _, r := range res.Metrics().AllMetrics().Counters() {
			c[r.Key.Namespace+"/"+r.Key.Name] += r.Result()
		}
		if alone && loopback() {
			if diff := c.replace(counter.Tally()); diff != "" {
				fmt.Fprintf(os.Stderr, "%s: the runner reported other counts than the workers in this process; using this process's counts (%s)\n", name, diff)
			}
		}
	}
	fmt.Fprintf(os.Stderr, "%s: finished in %s\n", name, time.Since(start).Round(time.Millisecond))
	return c, nil
}

// loopback reports whether the job's workers run in this process.
func loopback() bool {
	return strings.EqualFold(flagValue("environment_type"), "loopback")
}

// replace sets c to the tally t. Counters that only the runner reported (a
// DoFn counting with beam.NewCounter directly) keep the runner's value. It
// returns the counters whose values differed, as "name runner→tally".
func (c Counters) replace(t map[string]int64) string {
	var diff []string
	for k, v := range t {
		if r := c[k]; r != v {
			diff = append(diff, fmt.Sprintf("%s %d→%d", k, r, v))
		}
		c[k] = v
	}
	sort.Strings(diff)
	return strings.Join(diff, ", ")
}

// NotRun reports whether the runner only built or submitted the job without
// running it to completion here (--dry_run, --template_location or
// --async): there are then no results to read back or summarise.
func NotRun() bool {
	return flagValue("dry_run") == "true" || flagValue("template_location") != "" || flagValue("async") == "true"
}

// RunnerName returns the runner the job will use.
func RunnerName() string {
	if f := flagValue("runner"); f != "" {
		return f
	}
	return "prism"
}

// Print writes the counters of the given namespaces, sorted.
func (c Counters) Print(w io.Writer, namespaces ...string) {
	var keys []string
	for k := range c {
		for _, ns := range namespaces {
			if strings.HasPrefix(k, ns+"/") {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  %-40s %12d\n", k, c[k])
	}
}

// Reconcile checks that counter total equals the sum of counters parts,
// and returns a descriptive error when it does not. It is skipped (nil) when
// the runner reported no counters at all.
func (c Counters) Reconcile(total string, parts ...string) error {
	if len(c) == 0 {
		return nil
	}
	var sum int64
	for _, p := range parts {
		sum += c[p]
	}
	if c[total] != sum {
		return fmt.Errorf("counts do not reconcile: %s = %d, but %s = %d",
			total, c[total], strings.Join(parts, " + "), sum)
	}
	return nil
}

// ReadTable reads every row of a Parquet table written by a job
// (dir/part-*.parquet), local or remote.
func ReadTable[T any](ctx context.Context, dir string) ([]T, error) {
	var all []T
	err := ScanTable(ctx, dir, func(v T) bool {
		all = append(all, v)
		return true
	})
	return all, err
}

// ScanTable passes the rows of a table written by a job (dir/part-*.parquet,
// local or remote), file after file, to fn until fn returns false.
func ScanTable[T any](ctx context.Context, dir string, fn func(T) bool) error {
	return ScanGlob(ctx, remote.Join(dir, "part-*.parquet"), fn)
}

// ScanGlob is ScanTable over the Parquet files matching a glob.
func ScanGlob[T any](ctx context.Context, pattern string, fn func(T) bool) error {
	files, err := parquetio.Glob(ctx, pattern)
	if err != nil {
		return err
	}
	stop := errors.New("stop")
	for _, f := range files {
		_, err := parquetio.ReadFile(ctx, f, reflect.TypeOf(*new(T)), func(v any) error {
			if !fn(v.(T)) {
				return stop
			}
			return nil
		})
		if err == stop {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}
