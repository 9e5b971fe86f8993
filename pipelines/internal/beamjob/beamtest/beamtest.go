// Package beamtest holds what the tests of packages that run Beam
// pipelines share.
package beamtest

import (
	"flag"
	"log/slog"
	"os"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// Main runs a package's tests with Beam initialised (pipelines run in
// the test process, on Prism) and the runner's log quiet.
func Main(m *testing.M) {
	flag.Parse()
	beam.Init()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	os.Exit(m.Run())
}
