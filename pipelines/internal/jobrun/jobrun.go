// Package jobrun is what every ctxsim job shares, with no Beam in it: the
// command line (usage, required flags, ranges, failing with a clear
// message), the output lease, the commit of a harvest directory, and the
// counters a job reads back. Jobs that build pipelines run them with
// package beamjob.
package jobrun

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync/atomic"
)

// Counters maps "namespace/name" to a counter's value, summed over steps.
type Counters map[string]int64

// Replace sets c to the tally t. Counters that only the runner reported (a
// DoFn counting with beam.NewCounter directly) keep the runner's value. It
// returns the counters whose values differed, as "name runner→tally".
func (c Counters) Replace(t map[string]int64) string {
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
	return FlagValue("dry_run") == "true" || FlagValue("template_location") != "" || FlagValue("async") == "true"
}

// RunnerName returns the runner the job will use.
func RunnerName() string {
	if f := FlagValue("runner"); f != "" {
		return f
	}
	return "prism"
}

// LocalWorkers reports whether the job's workers run on this machine: the
// Prism or direct runner with the loopback environment (the default), or
// with the worker pool a local run serves in this process (LocalPool).
// Checks of the CPU (such as gen.CheckPrecision) can then be made before
// the job starts, instead of failing in every worker.
func LocalWorkers() bool {
	r := RunnerName()
	env := strings.ToUpper(FlagValue("environment_type"))
	return (r == "prism" || r == "direct") && (env == "" || env == "LOOPBACK" || InProcessPool())
}

// localPool is the endpoint of the worker pool this process serves for
// local runs, once it serves.
var localPool atomic.Value

// SetLocalPool records the endpoint of the worker pool that runs a local
// run's workers in this process.
func SetLocalPool(endpoint string) { localPool.Store(endpoint) }

// InProcessPool reports whether the job's environment is the worker pool
// this process serves (SetLocalPool): its workers run in this process.
func InProcessPool() bool {
	p, _ := localPool.Load().(string)
	return p != "" && strings.EqualFold(FlagValue("environment_type"), "external") && FlagValue("environment_config") == p
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
