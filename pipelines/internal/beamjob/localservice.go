package beamjob

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"

	fnpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/fnexecution_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism/ctxsimsvc"
	"google.golang.org/grpc"

	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/pipelines/internal/peerguard"
)

var exposeJobService = jobrun.OwnBool("expose_job_service", false,
	"Let every host and every local user reach the job service that a local (prism) run starts in this process, as Beam "+
		"itself would. The service has no authentication, and it runs the command that a submitted pipeline's PROCESS "+
		"environment names: whoever can reach it can run commands as this user. Off: only this user, on this host, can connect.")

// localService is the job service and worker pool started for local runs:
// one per process, shared by every job the process runs, as Prism shares
// its own.
var localService struct {
	once     sync.Once
	endpoint string // the job service, "localhost:PORT"
	pool     string // the worker pool, "localhost:PORT"
	err      error
}

// startLocalService starts Prism's job service and a worker pool in this
// process before a local run, where the prism runner would otherwise
// start Prism's service itself (on every interface, open to every user)
// and Beam's loopback worker pool (open to every local user), and points
// the job at them: both listen on the loopback addresses and accept only
// this user's connections (package peerguard). With
// --expose_job_service, Beam's own behaviour is kept.
//
// It does nothing for other runners, or when --endpoint names a job
// service already. A service that cannot be restricted stops the job: it
// never runs with the service open.
func startLocalService(name string) error {
	r := jobrun.RunnerName()
	if r != "prism" && r != "PrismRunner" {
		return nil
	}
	localService.once.Do(func() {
		if *jobopts.Endpoint != "" {
			return // the user's own job service
		}
		if *exposeJobService {
			fmt.Fprintf(os.Stderr, "warning: the job service of this local run accepts connections from every host and user (--expose_job_service); it has no authentication\n")
			return // prism.Execute starts Beam's own
		}
		localService.endpoint, localService.pool, localService.err = serveLocal()
	})
	if localService.err != nil {
		return fmt.Errorf("%s: the local job service: %w", name, localService.err)
	}
	if localService.endpoint == "" {
		return nil
	}
	*jobopts.Endpoint = localService.endpoint
	switch *jobopts.EnvironmentType {
	case "", "loopback", "LOOPBACK":
		// An external environment served by this process's own pool: what
		// Beam's loopback environment is, with the pool restricted.
		*jobopts.EnvironmentType = "external"
		*jobopts.EnvironmentConfig = localService.pool
		if *jobopts.WorkerBinary == "" {
			// The workers are this process, so no worker binary is built or
			// staged: the runner gets an empty one, as with loopback.
			*jobopts.WorkerBinary = os.DevNull
		}
	}
	return nil
}

// serveLocal starts the job service and the worker pool, each on its own
// peerguard listener, and returns their endpoints.
func serveLocal() (endpoint, pool string, err error) {
	if runtime.GOOS != "linux" {
		return "", "", fmt.Errorf("%w; a local run needs its job service closed to other users: submit to a job service of your own "+
			"(--runner=universal --endpoint=HOST:PORT), or pass --expose_job_service to accept the risk", peerguard.ErrUnsupported)
	}
	jobLis, err := peerguard.Listen()
	if err != nil {
		return "", "", err
	}
	jobLis.OnRefuse = warnRefused("job service")
	if _, err := ctxsimsvc.Serve(jobLis); err != nil {
		jobLis.Close()
		return "", "", err
	}
	endpoint = fmt.Sprintf("localhost:%d", jobLis.Port())
	poolLis, err := peerguard.Listen()
	if err != nil {
		return "", "", err
	}
	poolLis.OnRefuse = warnRefused("worker pool")
	g := grpc.NewServer()
	fnpb.RegisterBeamFnExternalWorkerPoolServer(g, newWorkerPool(context.Background(), endpoint))
	go g.Serve(poolLis)
	pool = fmt.Sprintf("localhost:%d", poolLis.Port())
	jobrun.SetLocalPool(pool)
	return endpoint, pool, nil
}

// warnRefused reports on stderr the first connection from each uid that a
// listener of service refused (a client that retries would repeat it).
func warnRefused(service string) func(peerguard.Refusal) {
	var mu sync.Mutex
	seen := map[int]bool{}
	return func(r peerguard.Refusal) {
		mu.Lock()
		defer mu.Unlock()
		if seen[r.UID] {
			return
		}
		seen[r.UID] = true
		fmt.Fprintf(os.Stderr, "warning: the local %s refused %s: only this user (uid %d) may connect\n", service, r, os.Getuid())
	}
}
