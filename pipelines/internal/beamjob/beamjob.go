// Package beamjob runs a job's Beam pipeline on the runner named by
// --runner (prism by default) and reads back its counters.
package beamjob

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/transforms/counter"
	"github.com/ctxsim/ctxsim/transforms/progress"
)

// Init parses the command line (jobrun.Init) and initialises Beam, which
// a binary started as a Beam worker needs before anything else. Beam's
// initialisation sets up its own logger, which logs the runner's messages
// (a failed bundle's plan, several times over); the job's (only with
// --verbose, jobrun.SetupLogging) replaces it.
func Init(usage string) {
	jobrun.Init(usage)
	beam.Init()
	jobrun.SetupLogging()
}

// Beam's packages, which this package imports (beam, beamx and through
// it every runner), have registered their flags when this package
// initialises, and a job's main has not yet registered its own: the flags
// registered by now, less ctxsim's own, are the runner flags that -help
// lists apart from the job's.
var _ = jobrun.MarkRunnerFlags()

// running is set while Run runs a job: the in-process tally of counters
// (package counter) is only a job's own when one job runs at a time.
var running atomic.Int32

// Run runs p and returns its counters. Runners that report no metrics
// (a Dataflow dry run) give an empty map. While p runs, a heartbeat
// (package progress) prints the time elapsed and the counters that
// changed whenever no progress line has been printed for a while.
//
// When the workers ran in this process (the loopback environment, Prism's
// default), the counters are the process's own tally (package counter),
// which is exact there, and not the runner's report, which Prism can
// undercount; with --verbose, a counter the runner reported differently
// is named on stderr.
func Run(ctx context.Context, name string, p *beam.Pipeline) (jobrun.Counters, error) {
	start := time.Now()
	fmt.Fprintf(os.Stderr, "%s: running on %s\n", name, jobrun.RunnerName())
	if err := startLocalService(name); err != nil {
		return nil, err
	}
	if bin, err := defaultWorkerBinary(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	} else if bin != "" && jobrun.Verbose() {
		fmt.Fprintf(os.Stderr, "%s: workers run this program (%s)\n", name, bin)
	}
	if err := preflight(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	alone := running.Add(1) == 1
	defer running.Add(-1)
	if alone {
		counter.Reset()
	}
	stop, err := startProfile()
	if err != nil {
		return nil, err
	}
	stopHeap, err := startHeapProfile()
	if err != nil {
		stop()
		return nil, err
	}
	var status func() string
	if alone {
		status = changedCounters()
	}
	stopBeat := progress.Heartbeat(name, status)
	res, err := beamx.RunWithMetrics(ctx, p)
	if err == nil {
		// Beam's portable runners return success for a cancelled job.
		err = checkEnded(ctx, res)
	}
	stopBeat()
	stop()
	stopHeap()
	if errors.Is(err, ErrCancelled) {
		if !jobrun.NotRun() {
			jobrun.Abandon(ctx, name)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err != nil {
		if !jobrun.NotRun() {
			jobrun.Abandon(ctx, name)
		}
		return nil, jobrun.NewPipelineError(name, err)
	}
	c := jobrun.Counters{}
	// A Dataflow dry run, template build or asynchronous submission
	// returns no result (sometimes as a typed nil pointer).
	if v := reflect.ValueOf(res); res != nil && !(v.Kind() == reflect.Pointer && v.IsNil()) {
		for _, r := range res.Metrics().AllMetrics().Counters() {
			c[r.Key.Namespace+"/"+r.Key.Name] += r.Result()
		}
		if alone && loopback() {
			if diff := c.Replace(counter.Tally()); diff != "" && jobrun.Verbose() {
				fmt.Fprintf(os.Stderr, "%s: note: the counts are this process's workers' own, which are exact; the runner's metrics differ (%s), as Prism's often do\n", name, diff)
			}
		}
	}
	fmt.Fprintf(os.Stderr, "%s: finished in %s\n", name, time.Since(start).Round(time.Millisecond))
	return c, nil
}

// changedCounters returns a heartbeat's status: the in-process counters
// (package counter) that changed since its last call, a few of them, as
// "name total".
func changedCounters() func() string {
	prev := map[string]int64{}
	return func() string {
		now := counter.Tally()
		var changed []string
		for k, v := range now {
			if v != prev[k] {
				changed = append(changed, k)
			}
		}
		prev = now
		sort.Strings(changed)
		const most = 4
		parts := make([]string, 0, most+1)
		for i, k := range changed {
			if i == most {
				parts = append(parts, fmt.Sprintf("%d more", len(changed)-most))
				break
			}
			parts = append(parts, fmt.Sprintf("%s %d", k[strings.LastIndexByte(k, '/')+1:], now[k]))
		}
		return strings.Join(parts, ", ")
	}
}

// ProfileEnv names the environment variable that, when set to a file
// path, makes Run write a CPU profile of the job to it (runtime/pprof).
// With the loopback environment (Prism's default) the workers run in this
// process, so the profile covers the whole job.
const ProfileEnv = "CTXSIM_CPUPROFILE"

// startProfile starts the CPU profile ProfileEnv asks for and returns the
// function that stops it.
func startProfile() (stop func(), err error) {
	path := os.Getenv(ProfileEnv)
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ProfileEnv, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", ProfileEnv, err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// HeapProfileEnv names the environment variable that, when set to a file
// path, makes Run write a heap profile (runtime/pprof) to it each time the
// heap in use reaches a new high, checked every second: the file ends
// holding the heap near the job's peak. With Prism in this process it
// covers the runner's memory as well as the workers'.
const HeapProfileEnv = "CTXSIM_HEAPPROFILE"

// startHeapProfile starts the watch HeapProfileEnv asks for and returns
// the function that stops it.
func startHeapProfile() (stop func(), err error) {
	path := os.Getenv(HeapProfileEnv)
	if path == "" {
		return func() {}, nil
	}
	write := func() error {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	if err := write(); err != nil {
		return nil, fmt.Errorf("%s: %w", HeapProfileEnv, err)
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var high uint64
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > high+high/20 { // 5% above the last high
				high = m.HeapInuse
				if err := write(); err != nil {
					fmt.Fprintf(os.Stderr, "%s: %v\n", HeapProfileEnv, err)
					return
				}
			}
		}
	}()
	return func() { close(done); <-finished }, nil
}

// loopback reports whether the job's workers run in this process: Beam's
// loopback environment, or the local worker pool (startLocalService).
func loopback() bool {
	return jobrun.InProcessPool() || strings.EqualFold(jobrun.FlagValue("environment_type"), "loopback")
}
