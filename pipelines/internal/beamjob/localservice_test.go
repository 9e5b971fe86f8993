package beamjob

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	fnpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/fnexecution_v1"
	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
	pipepb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/pipeline_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/util/grpcx"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/transforms/beamreg"
)

func init() {
	beamreg.DoFn(&holdFn{})
}

// held is closed by holdFn when it holds its first element; release, once
// closed, lets every holdFn return.
var held, release chan struct{}

// holdFn holds the job until release is closed (or a minute passes), so
// that a test can act on a running job.
type holdFn struct{}

func (f *holdFn) ProcessElement(ctx context.Context, _ int) {
	select {
	case <-held:
	default:
		close(held)
	}
	select {
	case <-release:
	case <-time.After(time.Minute):
	}
}

// heldJob starts a job that holds until the returned function is called,
// and waits until it runs. Its result comes on the channel.
func heldJob(t *testing.T) (done <-chan error, unhold func()) {
	t.Helper()
	if !strings.EqualFold(jobrun.RunnerName(), "prism") {
		t.Skipf("runner %s", jobrun.RunnerName())
	}
	held, release = make(chan struct{}), make(chan struct{})
	p, s := beam.NewPipelineWithRoot()
	beam.ParDo0(s, &holdFn{}, beam.CreateList(s, []int{1}))
	errc := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), "beamjob_test", p)
		errc <- err
	}()
	select {
	case <-held:
	case err := <-errc:
		t.Fatalf("the job ended before it held: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the job did not start within two minutes")
	}
	var once bool
	return errc, func() {
		if !once {
			once = true
			close(release)
		}
	}
}

// jobClient connects to the local job service.
func jobClient(t *testing.T) jobpb.JobServiceClient {
	t.Helper()
	if localService.endpoint == "" {
		t.Fatal("no local job service")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cc, err := grpcx.Dial(ctx, localService.endpoint, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return jobpb.NewJobServiceClient(cc)
}

// TestRunCancelled cancels a running job through the job service, as
// another client of the user's would: Run must return ErrCancelled, which
// Beam's runner alone reports as success.
func TestRunCancelled(t *testing.T) {
	done, unhold := heldJob(t)
	defer unhold()
	cl := jobClient(t)
	ctx := context.Background()
	jobs, err := cl.GetJobs(ctx, &jobpb.GetJobsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var running []string
	for _, j := range jobs.GetJobInfo() {
		if j.GetState() == jobpb.JobState_RUNNING {
			running = append(running, j.GetJobId())
		}
	}
	if len(running) != 1 {
		t.Fatalf("running jobs %v, want the held one", running)
	}
	if _, err := cl.Cancel(ctx, &jobpb.CancelJobRequest{JobId: running[0]}); err != nil {
		t.Fatal(err)
	}
	unhold()
	select {
	case err := <-done:
		if !errors.Is(err, ErrCancelled) {
			t.Fatalf("Run of a cancelled job: %v, want ErrCancelled", err)
		}
		if !strings.HasPrefix(err.Error(), "beamjob_test: cancelled") {
			t.Errorf("error %q, want it to start with the job's name and \"cancelled\"", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("Run did not return within two minutes of the cancel")
	}
}

func TestEndState(t *testing.T) {
	if err := endState(jobpb.JobState_DONE); err != nil {
		t.Errorf("DONE: %v", err)
	}
	if err := endState(jobpb.JobState_CANCELLED); !errors.Is(err, ErrCancelled) {
		t.Errorf("CANCELLED: %v", err)
	}
	if err := endState(jobpb.JobState_FAILED); err == nil || errors.Is(err, ErrCancelled) {
		t.Errorf("FAILED: %v", err)
	}
}

// probeEnv makes the test binary, started again with it set to the job
// service's endpoint, act as another user's client (probe): it prints
// one line per attempt and exits.
const probeEnv = "CTXSIM_BEAMJOB_PROBE"

// probe tries, against the job service at endpoint, what the hostile
// probe did: list the jobs, cancel each, and prepare a pipeline whose
// PROCESS environment would run a command. It prints "list ok N" or
// "list error ...", then "cancel ..." and "prepare ..." lines.
func probe(endpoint string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A client that connects on each call, so that every call is tried.
	cc, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Printf("dial error %v\n", err)
		os.Exit(0)
	}
	defer cc.Close()
	cl := jobpb.NewJobServiceClient(cc)
	jobs, err := cl.GetJobs(ctx, &jobpb.GetJobsRequest{})
	if err != nil {
		fmt.Printf("list error %s %v\n", status.Code(err), err)
	} else {
		fmt.Printf("list ok %d\n", len(jobs.GetJobInfo()))
	}
	// A job ID that names no job: a probe let in gets NotFound.
	if _, err := cl.Cancel(ctx, &jobpb.CancelJobRequest{JobId: "no-such-job"}); err != nil {
		fmt.Printf("cancel error %s %v\n", status.Code(err), err)
	} else {
		fmt.Println("cancel ok")
	}
	payload, _ := proto.Marshal(&pipepb.ProcessPayload{Command: "/bin/sh -c 'id > /tmp/ctxsim-probe-ran'"})
	_, err = cl.Prepare(ctx, &jobpb.PrepareJobRequest{
		JobName: "probe",
		Pipeline: &pipepb.Pipeline{Components: &pipepb.Components{Environments: map[string]*pipepb.Environment{
			"env": {Urn: "beam:env:process:v1", Payload: payload},
		}}},
	})
	if err != nil {
		fmt.Printf("prepare error %s %v\n", status.Code(err), err)
	} else {
		fmt.Println("prepare ok")
	}
	os.Exit(0)
}

// TestJobServiceOtherUser runs a job and, while it runs, probes its job
// service from a process of uid 65534 (which needs root to start): the
// probe must list, cancel and prepare nothing, and the job must end well.
// The same probe from a process of this user lists the running job (the
// control: the probe reaches a service that lets it in).
func TestJobServiceOtherUser(t *testing.T) {
	if os.Getuid() != 0 {
		if os.Getenv("CTXSIM_REQUIRE_NETNS") != "" {
			t.Fatal("needs root to start a process as another user")
		}
		t.Skip("needs root to start a process as another user")
	}
	dir, err := os.MkdirTemp("", "beamjob-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "beamjob.test")
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	done, unhold := heldJob(t)
	defer unhold()
	if *jobopts.Endpoint != localService.endpoint || !strings.HasPrefix(*jobopts.Endpoint, "localhost:") {
		t.Fatalf("the job ran at %q, want the local service %q", *jobopts.Endpoint, localService.endpoint)
	}
	run := func(uid uint32) string {
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), probeEnv+"="+localService.endpoint)
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("probe as uid %d: %v\n%s", uid, err, out)
		}
		return string(out)
	}
	other := run(65534)
	t.Logf("as uid 65534:\n%s", other)
	for _, l := range strings.Split(strings.TrimSpace(other), "\n") {
		if strings.Contains(l, " ok") {
			t.Errorf("uid 65534 got through: %s", l)
		}
	}
	// Refused connections fail as unavailable, not as a request the
	// service answered.
	for _, want := range []string{"list error Unavailable", "cancel error Unavailable", "prepare error Unavailable"} {
		if !strings.Contains(other, want) {
			t.Errorf("uid 65534's probe printed no %q", want)
		}
	}
	own := run(0)
	t.Logf("as uid 0:\n%s", own)
	if !strings.Contains(own, "list ok") || strings.Contains(own, "list ok 0") {
		t.Errorf("this user's probe did not list the running job:\n%s", own)
	}
	unhold()
	select {
	case err := <-done:
		// The control cancels no job, so the job ends well unless the
		// other user's probe reached it.
		if err != nil {
			t.Fatalf("the probed job: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the job did not end")
	}
}

// TestWorkerPoolOwnServiceOnly: the pool starts no worker whose endpoints
// are not the local job service's.
func TestWorkerPoolOwnServiceOnly(t *testing.T) {
	p := newWorkerPool(context.Background(), "localhost:1")
	own := &pipepb.ApiServiceDescriptor{Url: "localhost:1"}
	other := &pipepb.ApiServiceDescriptor{Url: "localhost:2"}
	for name, req := range map[string]*fnpb.StartWorkerRequest{
		"control elsewhere":   {WorkerId: "a", ControlEndpoint: other, LoggingEndpoint: own},
		"logging elsewhere":   {WorkerId: "b", ControlEndpoint: own, LoggingEndpoint: other},
		"provision elsewhere": {WorkerId: "c", ControlEndpoint: own, LoggingEndpoint: own, ProvisionEndpoint: other},
		"no control":          {WorkerId: "d", LoggingEndpoint: own},
		"no ID":               {ControlEndpoint: own, LoggingEndpoint: own},
	} {
		resp, err := p.StartWorker(context.Background(), req)
		if err != nil || resp.GetError() == "" {
			t.Errorf("%s: started (%v, %q)", name, err, resp.GetError())
		}
	}
	if len(p.workers) != 0 {
		t.Errorf("workers %v started", p.workers)
	}
}

// TestPreflightEndpoint: an --endpoint where nothing listens fails at once,
// naming the endpoint; one that listens passes.
func TestPreflightEndpoint(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	open := ln.Addr().String()
	ln.Close() // nothing listens there now
	start := time.Now()
	err = reachable(context.Background(), open)
	if err == nil || !strings.Contains(err.Error(), open) || !strings.Contains(err.Error(), "--endpoint") {
		t.Errorf("reachable(%s) with nothing there: %v, want an error naming it", open, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s to fail", d)
	}
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := reachable(context.Background(), ln.Addr().String()); err != nil {
		t.Errorf("reachable(%s) with a listener: %v", ln.Addr(), err)
	}
	if err := reachable(context.Background(), "no-port"); err == nil {
		t.Error("an endpoint without a port: no error")
	}
}

// TestPreflightCredentials: with no Google credentials to be found,
// Dataflow's check fails at once and says what is missing.
func TestPreflightCredentials(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
	t.Setenv("HOME", dir)
	t.Setenv("CLOUDSDK_CONFIG", dir)
	t.Setenv("GCE_METADATA_HOST", "127.0.0.1:1") // no metadata server either
	err := googleCredentials(context.Background())
	if err == nil || !strings.Contains(err.Error(), "credentials") {
		t.Fatalf("googleCredentials with none: %v", err)
	}
}
