package beamjob

import (
	"context"
	"fmt"
	"sync"

	"github.com/apache/beam/sdks/v2/go/container/tools"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/harness"
	fnpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/fnexecution_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/util/grpcx"
)

// workerPool is Beam's external worker pool service for a local run: the
// runner asks it to start an SDK worker (the Go harness) for each of the
// job's environments, and the worker runs in this process, as Beam's
// loopback environment runs it. Unlike the loopback pool Beam starts for
// itself (on a port any local user may reach), it is served on a
// peerguard listener, and it starts only workers whose control and
// logging endpoints are the local job service's own.
type workerPool struct {
	fnpb.UnimplementedBeamFnExternalWorkerPoolServer

	root     context.Context
	endpoint string // the local job service's FnAPI endpoint

	mu      sync.Mutex
	workers map[string]context.CancelFunc
}

func newWorkerPool(root context.Context, endpoint string) *workerPool {
	return &workerPool{root: root, endpoint: endpoint, workers: map[string]context.CancelFunc{}}
}

// StartWorker starts the worker req names, in this process.
func (p *workerPool) StartWorker(_ context.Context, req *fnpb.StartWorkerRequest) (*fnpb.StartWorkerResponse, error) {
	id := req.GetWorkerId()
	fail := func(format string, args ...any) (*fnpb.StartWorkerResponse, error) {
		return &fnpb.StartWorkerResponse{Error: fmt.Sprintf("worker %q: ", id) + fmt.Sprintf(format, args...)}, nil
	}
	logging, control := req.GetLoggingEndpoint(), req.GetControlEndpoint()
	switch {
	case id == "":
		return fail("no worker ID")
	case control.GetUrl() == "" || logging.GetUrl() == "":
		return fail("no control or logging endpoint")
	case control.GetAuthentication() != nil || logging.GetAuthentication() != nil:
		return fail("authenticated endpoints are not supported")
	case control.GetUrl() != p.endpoint || logging.GetUrl() != p.endpoint:
		return fail("endpoints %s and %s are not this process's job service (%s)", control.GetUrl(), logging.GetUrl(), p.endpoint)
	}
	if u := req.GetProvisionEndpoint().GetUrl(); u != "" && u != p.endpoint {
		return fail("provision endpoint %s is not this process's job service (%s)", u, p.endpoint)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.workers == nil {
		return fail("the worker pool is stopping")
	}
	if _, ok := p.workers[id]; ok {
		return fail("already running")
	}
	ctx, cancel := context.WithCancel(grpcx.WriteWorkerID(p.root, id))
	p.workers[id] = cancel
	var opts harness.Options
	if u := req.GetProvisionEndpoint().GetUrl(); u != "" {
		// The runner's capabilities and status endpoint; a worker runs
		// without them, as Beam's loopback pool's workers do.
		if info, err := tools.ProvisionInfo(ctx, u); err == nil {
			opts.RunnerCapabilities = info.GetRunnerCapabilities()
			opts.StatusEndpoint = info.GetStatusEndpoint().GetUrl()
		}
	}
	go func() {
		harness.MainWithOptions(ctx, logging.GetUrl(), control.GetUrl(), opts)
		p.remove(id)
		cancel()
	}()
	return &fnpb.StartWorkerResponse{}, nil
}

// StopWorker stops the worker req names.
func (p *workerPool) StopWorker(_ context.Context, req *fnpb.StopWorkerRequest) (*fnpb.StopWorkerResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cancel, ok := p.workers[req.GetWorkerId()]; ok {
		cancel()
		delete(p.workers, req.GetWorkerId())
	}
	return &fnpb.StopWorkerResponse{}, nil
}

func (p *workerPool) remove(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.workers, id)
}
