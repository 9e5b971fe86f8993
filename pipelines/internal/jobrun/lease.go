package jobrun

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/storage/lease"
)

var takeOver = flag.Bool("take_over", false,
	"Take the output's lease from the run that holds it. Use only when that run is dead: two live runs into one output mix their files.")

var (
	leaseMu sync.Mutex
	leases  []*lease.Lease
)

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
		first := len(leases) == 1
		leaseMu.Unlock()
		if first {
			go releaseOnSignal()
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
	dirs := make([]string, 0, len(leases))
	for _, l := range leases {
		dirs = append(dirs, strings.TrimSuffix(l.Path, "/"+lease.FileName))
	}
	leaseMu.Unlock()
	for _, d := range dirs {
		removed, err := storage.RemoveRunManifests(ctx, d, storage.RunID())
		if err != nil {
			fmt.Fprintf(os.Stderr, "warning: %s: could not withdraw the failed run's table manifests under %s, which may still claim complete tables: %v\n",
				job, d, err)
		}
		if len(removed) > 0 {
			fmt.Fprintf(os.Stderr, "%s: the run failed; removed the %d table manifests it had written (%s), so its partial output reads as unfinished\n",
				job, len(removed), strings.Join(removed, ", "))
		}
	}
}

func releaseOnSignal() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	s := <-c
	Release()
	fmt.Fprintf(os.Stderr, "stopped by %s\n", s)
	os.Exit(130)
}
