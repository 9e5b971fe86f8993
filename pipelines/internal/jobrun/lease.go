package jobrun

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/ctxsim/ctxsim/transforms/lease"
	"github.com/ctxsim/ctxsim/transforms/parquetio"
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
		l, err := lease.Acquire(ctx, d, job, parquetio.RunID(), *takeOver)
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

// Release gives back the leases this run holds.
func Release() {
	leaseMu.Lock()
	defer leaseMu.Unlock()
	for _, l := range leases {
		if err := l.Release(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "warning:", err)
		}
	}
	leases = nil
}

func releaseOnSignal() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	s := <-c
	Release()
	fmt.Fprintf(os.Stderr, "stopped by %s\n", s)
	os.Exit(130)
}
