package beamjob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/transforms/beamreg"
)

func init() {
	beamreg.DoFn(&failFn{})
}

// failFn fails on element 7, as a job's DoFn fails on bad input.
type failFn struct{}

func (f *failFn) ProcessElement(v int) error {
	if v == 7 {
		return fmt.Errorf("element %d is bad", v)
	}
	return nil
}

// failingJobEnv, set in a child process of the test binary, makes it a
// job's main whose pipeline fails (failingJob) instead of a test run.
const failingJobEnv = "CTXSIM_BEAMJOB_FAILING_JOB"

// failingJob is the main of a job whose pipeline fails inside the runner:
// it starts as every job does (Init), runs the pipeline and fails with its
// error (jobrun.Fail), which exits.
func failingJob() {
	Init("failing job")
	log.Print("a line of the log package") // as the SDK harness writes

	p, s := beam.NewPipelineWithRoot()
	beam.ParDo0(s, &failFn{}, beam.CreateList(s, []int{1, 3, 7, 9}))
	_, err := Run(context.Background(), "failing", p)
	if err == nil {
		err = errors.New("the pipeline did not fail")
	}
	jobrun.Fail(err)
}

// A job whose pipeline fails inside Prism prints its cause, and the
// runner's log (an ERROR with the plan per failed bundle, several times
// over) only with --verbose, and so what is written to the log package
// (where Beam's SDK harness writes its log once the runner stops
// listening).
func TestRunnerLogOnlyVerbose(t *testing.T) {
	if !strings.EqualFold(jobrun.RunnerName(), "prism") {
		t.Skipf("runner %s", jobrun.RunnerName())
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$"}, args...)...)
		cmd.Env = append(os.Environ(), failingJobEnv+"=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("%v: %v, want exit status 1; stderr:\n%s", args, err, stderr.String())
		}
		if !strings.Contains(stderr.String(), "error: ") || !strings.Contains(stderr.String(), "element 7 is bad") {
			t.Fatalf("%v: stderr does not give the cause (element 7 is bad):\n%s", args, stderr.String())
		}
		return stderr.String()
	}
	quiet := run()
	if strings.Contains(quiet, "level=") {
		t.Errorf("without --verbose, stderr (%d bytes) holds the runner's log:\n%s", len(quiet), quiet)
	}
	if strings.Contains(quiet, "a line of the log package") {
		t.Errorf("without --verbose, stderr holds what the SDK harness writes to the log package:\n%s", quiet)
	}
	verbose := run("--verbose")
	for _, want := range []string{"level=ERROR", "a line of the log package"} {
		if !strings.Contains(verbose, want) {
			t.Errorf("with --verbose, stderr does not hold %q:\n%s", want, verbose)
		}
	}
}
