package lease

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/storage/gcstest"
)

// Taking a lease on storage that is down from the start, or that accepts
// connections and never answers, fails within the set deadline with an
// error naming the operation, the lease file and the endpoint.
func TestGCSThatNeverAnswers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(testing.TB) string
	}{{"down", gcstest.Down}, {"silent", gcstest.Silent}} {
		t.Run(tc.name, func(t *testing.T) {
			endpoint := "http://" + tc.start(t)
			t.Setenv("CTXSIM_STORAGE_TIMEOUT", "500ms")
			done := make(chan error, 1)
			start := time.Now()
			go func() {
				_, err := Acquire(context.Background(), "gs://bucket/out", "index", "run-a", false)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Acquire still waiting on storage after 10s")
			}
			if err == nil {
				t.Fatal("Acquire on storage that never answers: no error")
			}
			first, _, _ := strings.Cut(err.Error(), "\n")
			t.Logf("after %s: %s", time.Since(start).Round(time.Millisecond), first)
			for _, w := range []string{"storage: create gs://bucket/out/_lease.json", endpoint, "within 0.5s"} {
				if !strings.Contains(first, w) {
					t.Errorf("error %q does not say %q", first, w)
				}
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("failed after %s, with a deadline of 0.5s", d.Round(time.Millisecond))
			}
		})
	}
}
