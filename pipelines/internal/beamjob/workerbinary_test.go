package beamjob

import (
	"flag"
	"os"
	"runtime"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
)

// TestDefaultWorkerBinary checks that a job submitted to worker pools
// (the Flink cluster's EXTERNAL environment) stages its own binary, and
// that every other combination of runner, environment and flag is left as
// given.
func TestDefaultWorkerBinary(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the running binary is a worker only on linux/amd64")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		runner, env, given, want string
	}{
		{"universal", "EXTERNAL", "", self},
		{"flink", "external", "", self},
		{"universal", "EXTERNAL", "/opt/worker", "/opt/worker"},
		{"universal", "LOOPBACK", "", ""},
		{"universal", "DOCKER", "", ""},
		{"dataflow", "EXTERNAL", "", ""},
		{"prism", "", "", ""},
	} {
		setFlag(t, "runner", tc.runner)
		setFlag(t, "environment_type", tc.env)
		setFlag(t, "worker_binary", tc.given)
		if _, err := defaultWorkerBinary(); err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		if got := *jobopts.WorkerBinary; got != tc.want {
			t.Errorf("runner %s, environment %q, --worker_binary=%q: worker binary %q, want %q",
				tc.runner, tc.env, tc.given, got, tc.want)
		}
	}
}

// setFlag sets a command-line flag for the rest of the test.
func setFlag(t *testing.T, name, value string) {
	t.Helper()
	f := flag.Lookup(name)
	if f == nil {
		t.Fatalf("no flag %s", name)
	}
	old := f.Value.String()
	if err := flag.Set(name, value); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { flag.Set(name, old) })
}
