package beamjob

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/pipelines/internal/loopguard"
)

var exposeJobService = jobrun.OwnBool("expose_job_service", false,
	"Let other hosts reach the job service that a local (prism) run starts in this process. "+
		"The service has no authentication, and it runs the command that a submitted pipeline's PROCESS "+
		"environment names: whoever can reach it can run commands as this user. Off: only this host can connect.")

// localService is the job service started for local runs: one per
// process, shared by every job the process runs, as Prism shares its own.
var localService struct {
	once     sync.Once
	endpoint string
	err      error
}

// startLocalService starts Prism's job service in this process before a
// local run, where the prism runner would otherwise start it itself, and
// points the job at it. Prism listens on every interface and Beam offers
// no setting for the address, so the service is then restricted to
// connections from this host (package loopguard) unless
// --expose_job_service is set. A service that cannot be restricted stops
// the job: it never runs with the service open.
//
// It does nothing for other runners, or when --endpoint names a job
// service already.
func startLocalService(name string) error {
	r := jobrun.RunnerName()
	if r != "prism" && r != "PrismRunner" {
		return nil
	}
	localService.once.Do(func() {
		if *jobopts.Endpoint != "" {
			return // the user's own job service
		}
		localService.endpoint, localService.err = serveLocal()
	})
	if localService.err != nil {
		return fmt.Errorf("%s: the local job service: %w", name, localService.err)
	}
	if localService.endpoint != "" {
		*jobopts.Endpoint = localService.endpoint
		if *jobopts.EnvironmentType == "" {
			*jobopts.EnvironmentType = "loopback"
		}
	}
	return nil
}

// errNoFilter explains what to do where the service cannot be restricted.
const errNoFilter = "a local run needs it closed to other hosts; run it on Linux, submit to a job service of your own " +
	"(--runner=universal --endpoint=HOST:PORT), or pass --expose_job_service to accept the risk"

// serveLocal starts the job service and returns its endpoint.
func serveLocal() (endpoint string, err error) {
	if runtime.GOOS != "linux" && !*exposeJobService {
		return "", fmt.Errorf("%w; %s", loopguard.ErrUnsupported, errNoFilter)
	}
	before, err := loopguard.Listeners()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := createJobServer(ctx); err != nil {
		return "", err
	}
	if runtime.GOOS != "linux" {
		// Exposed by request; the port is not known here.
		return "", errors.New("the job service's address cannot be found on " + runtime.GOOS + "; use --runner=universal --endpoint=HOST:PORT")
	}
	added, err := loopguard.NewListeners(before)
	if err != nil {
		return "", err
	}
	if len(added) != 1 {
		return "", fmt.Errorf("found %d new listening sockets after starting it (%v), want 1", len(added), added)
	}
	l := added[0]
	if *exposeJobService {
		fmt.Fprintf(os.Stderr, "warning: the job service at %s accepts connections from every host (--expose_job_service); it has no authentication\n", l.Addr)
	} else if err := loopguard.Restrict(l); err != nil {
		return "", fmt.Errorf("%w; %s", err, errNoFilter)
	}
	return fmt.Sprintf("localhost:%d", l.Addr.Port()), nil
}

// createJobServer starts Prism's job service, turning the panic that
// Prism raises when it cannot listen into an error.
func createJobServer(ctx context.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("start: %v", r)
		}
	}()
	if _, err := prism.CreateJobServer(ctx, prism.Options{}); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	return nil
}
