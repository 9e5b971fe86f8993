package jobrun

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/storage/lease"
)

var takeOver = OwnBool("take_over", false,
	"Take the output's lease from the run that holds it. Use only when that run is dead: two live runs into one output mix their files.")

var (
	leaseMu sync.Mutex
	leases  []*lease.Lease
	// leaseJob is the job that took the leases: Fail and a signal withdraw
	// its output in its name.
	leaseJob string
	// abandonedRun is set once Abandon has run: the run's output is
	// withdrawn once.
	abandonedRun bool
	// committed is set by Committed.
	committed bool
	// kept are the directories whose tables a failed run leaves
	// (KeepOnFailure).
	kept []string
)

// KeepOnFailure names directories under this run's outputs whose tables a
// failed or stopped run must leave committed, because a later run resumes
// from them (a harvest's _waves/: its stored retrievals and context sets).
func KeepOnFailure(dirs ...string) {
	leaseMu.Lock()
	kept = append(kept, dirs...)
	leaseMu.Unlock()
}

// Lease takes the lease (package lease) on each output directory of this
// run, under the run ID its tables record, or fails the job naming the run
// that holds one. The leases are given back by Release, by Fail, and when
// the process is interrupted. A job that is only built or submitted here
// (NotRun: a dry run, a template, an asynchronous submission) writes
// nothing from this process and takes no lease.
func Lease(job string, dirs ...string) {
	if NotRun() {
		return
	}
	ctx := context.Background()
	for _, d := range dirs {
		l, err := lease.Acquire(ctx, d, job, storage.RunID(), *takeOver)
		if err != nil {
			Fail(err)
		}
		leaseMu.Lock()
		leases = append(leases, l)
		leaseJob = job
		first := len(leases) == 1
		leaseMu.Unlock()
		if first {
			// Notify before the lease is used, so that no signal finds
			// the run without its handler.
			c := make(chan os.Signal, 1)
			signal.Notify(c, os.Interrupt, syscall.SIGTERM)
			go releaseOnSignal(c)
		}
	}
}

// Release gives back the leases this run holds. It waits on storage for
// at most storage.CleanupTimeout() in all, so that a job whose storage
// has gone away still ends; a lease it could not give back is named on
// stderr.
func Release() {
	leaseMu.Lock()
	defer leaseMu.Unlock()
	ctx, cancel := storage.CleanupContext(context.Background())
	defer cancel()
	for _, l := range leases {
		if err := l.Release(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "warning: could not give back the lease %s: %v\n", l.Path, err)
		}
	}
	leases = nil
}

// Abandon makes a failed run commit nothing: no table of the run is
// committed from this process from now on, and the manifests it committed
// before the failure, under every directory it leased, are removed, so
// that no table it left claims to be complete. The removal waits on
// storage for at most storage.CleanupTimeout() in all: when storage does
// not answer, the job says which manifests may remain and goes on to fail.
func Abandon(ctx context.Context, job string) {
	storage.Abandon()
	ctx, cancel := storage.CleanupContext(ctx)
	defer cancel()
	leaseMu.Lock()
	if abandonedRun {
		leaseMu.Unlock()
		return
	}
	abandonedRun = true
	dirs := make([]string, 0, len(leases))
	for _, l := range leases {
		dirs = append(dirs, strings.TrimSuffix(l.Path, "/"+lease.FileName))
	}
	keep := slices.Clone(kept)
	leaseMu.Unlock()
	for _, d := range dirs {
		removed, err := storage.RemoveRunManifests(ctx, d, storage.RunID(), keep...)
		if err != nil {
			fmt.Fprintf(os.Stderr, "warning: %s: could not withdraw the failed run's table manifests under %s, which may still claim complete tables: %v\n",
				job, d, err)
		}
		if len(removed) > 0 {
			fmt.Fprintf(os.Stderr, "%s: the run failed; removed the %d table manifests and index metadata files it had written (%s), so its partial output reads as unfinished\n",
				job, len(removed), strings.Join(removed, ", "))
		}
		if err := removeRunSummary(ctx, d); err != nil {
			fmt.Fprintf(os.Stderr, "warning: %s: could not withdraw the failed run's %s: %v\n", job, storage.Join(d, SummaryName), err)
		}
	}
}

// removeRunSummary removes dir's summary.json (and the report beside it)
// when this run wrote it: a run that fails after its summary committed the
// output must not leave the output committed.
func removeRunSummary(ctx context.Context, dir string) error {
	p := storage.Join(dir, SummaryName)
	b, err := storage.ReadFile(ctx, p)
	if err != nil {
		if ok, xerr := storage.Exists(ctx, p); xerr == nil && !ok {
			return nil
		}
		return err
	}
	var sum struct {
		RunID string `json:"run_id"`
	}
	if json.Unmarshal(b, &sum) != nil || sum.RunID != storage.RunID() {
		return nil // another run's, or not a summary of ours
	}
	for _, name := range []string{SummaryName, "report.html"} {
		if err := storage.RemoveAll(ctx, storage.Join(dir, name)); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "the run failed; removed the %s it had written, so its output reads as unfinished\n", p)
	return nil
}

// Committed records that the run has committed its output for good (a
// refresh whose CURRENT.json names its version): a failure after that, in
// cleanup, leaves the output as it is.
func Committed() {
	leaseMu.Lock()
	committed = true
	leaseMu.Unlock()
}

// abandonOnFailure withdraws the output of a run that is failing (Fail,
// or a signal): every table manifest and summary it committed under the
// directories it leased. It does nothing before a lease was taken.
func abandonOnFailure() {
	leaseMu.Lock()
	job, n, done := leaseJob, len(leases), committed
	leaseMu.Unlock()
	if n > 0 && !done && !NotRun() {
		Abandon(context.Background(), job)
	}
}

// releaseOnSignal waits for a signal on c, then withdraws the run's
// output (a stopped run commits nothing), gives back its leases and exits.
func releaseOnSignal(c <-chan os.Signal) {
	s := <-c
	abandonOnFailure()
	Release()
	fmt.Fprintf(os.Stderr, "stopped by %s\n", s)
	os.Exit(130)
}
