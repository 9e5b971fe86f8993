package beamjob

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"golang.org/x/oauth2/google"

	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
)

// preflightTimeout bounds each check preflight makes.
const preflightTimeout = 20 * time.Second

// preflight checks, before a job is built and submitted, what the runner
// will need first and could otherwise only report minutes later: a job
// service that answers at --endpoint, or Google credentials for Dataflow.
// Beam's own errors come after a long silence (two minutes of connection
// attempts; a cross-compilation of the worker) and do not always name
// what failed.
func preflight(ctx context.Context) error {
	switch r := strings.ToLower(jobrun.RunnerName()); {
	case r == "dataflow" || r == "dataflowrunner":
		// A dry run and a template build submit nothing: the template is
		// written through the storage client, as every gs:// output is.
		if jobrun.FlagValue("dry_run") != "true" && jobrun.FlagValue("template_location") == "" {
			if err := googleCredentials(ctx); err != nil {
				return err
			}
		}
		if *jobopts.WorkerBinary == "" {
			fmt.Fprintln(os.Stderr, "dataflow: building the worker binary from source (CGO_ENABLED=0; a few minutes; --worker_binary skips this)")
		}
		return nil
	case *jobopts.Endpoint != "" && *jobopts.Endpoint != localService.endpoint:
		// Any portable runner (universal, flink, spark, or prism with the
		// user's own job service).
		return reachable(ctx, *jobopts.Endpoint)
	}
	return nil
}

// reachable checks that something accepts TCP connections at endpoint
// (HOST:PORT).
func reachable(ctx context.Context, endpoint string) error {
	if _, _, err := net.SplitHostPort(endpoint); err != nil {
		return fmt.Errorf("--endpoint=%s is not HOST:PORT: %w", endpoint, err)
	}
	ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", endpoint)
	if err != nil {
		return fmt.Errorf("cannot reach the job service at %s (--endpoint): %w; start it first, or check the address", endpoint, err)
	}
	return c.Close()
}

// googleCredentials checks that Application Default Credentials exist and
// give an access token.
func googleCredentials(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	creds, err := google.FindDefaultCredentials(ctx, "https://www.googleapis.com/auth/cloud-platform")
	if err != nil {
		return fmt.Errorf("dataflow needs Google credentials, and none were found: %w (run `gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS)", err)
	}
	if _, err := creds.TokenSource.Token(); err != nil {
		return fmt.Errorf("dataflow: the Google credentials found give no access token: %w (check the network, and the credentials)", err)
	}
	return nil
}
