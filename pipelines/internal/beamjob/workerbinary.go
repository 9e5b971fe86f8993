package beamjob

import (
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
)

// defaultWorkerBinary makes a portable job whose SDK workers a worker
// pool starts (--runner=universal or flink with --environment_type=
// EXTERNAL, as on the Flink cluster of deploy/flink) stage this program as
// its worker binary when --worker_binary names none. Beam's Go SDK would
// otherwise compile the job again from source (it never reuses the running
// binary), which needs a Go toolchain and the checkout and takes minutes.
// The running program is a worker of the same job for a Linux amd64 host
// such as the pools of that cluster. It returns the binary chosen, or ""
// when it left the flags as they were.
func defaultWorkerBinary() (string, error) {
	if *jobopts.WorkerBinary != "" || runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return "", nil
	}
	switch strings.ToLower(jobrun.RunnerName()) {
	case "universal", "flink":
	default:
		return "", nil
	}
	if !strings.EqualFold(jobrun.FlagValue("environment_type"), "external") {
		return "", nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("the worker binary (--worker_binary): %w", err)
	}
	*jobopts.WorkerBinary = self
	return self, nil
}
