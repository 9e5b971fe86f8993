package storage_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/storage/gcstest"
)

// within runs f and fails the test when f has not returned after limit:
// the storage call it makes waits without end.
func within(t *testing.T, limit time.Duration, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("%s: still waiting on storage after %s", what, limit)
		return nil
	}
}

// checkFirstLine checks that err's first line names what failed and the
// endpoint that did not answer.
func checkFirstLine(t *testing.T, what string, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	first, _, _ := strings.Cut(err.Error(), "\n")
	t.Logf("%s: %s", what, first)
	for _, w := range wants {
		if !strings.Contains(first, w) {
			t.Errorf("%s: error %q does not say %q", what, first, w)
		}
	}
}

// Storage that is down from the start, or accepts connections and never
// answers, fails each call within the set deadline with an error naming
// the operation, the object and the endpoint.
func TestGCSThatNeverAnswers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(testing.TB) string
	}{{"down", gcstest.Down}, {"silent", gcstest.Silent}} {
		t.Run(tc.name, func(t *testing.T) {
			endpoint := "http://" + tc.start(t)
			t.Setenv("CTXSIM_STORAGE_TIMEOUT", "500ms")
			ctx := context.Background()
			for _, op := range []struct {
				name, want string
				f          func() error
			}{
				{"table listing", "storage: list gs://bkt/t/part-*.parquet", func() error {
					_, err := storage.Glob(ctx, "gs://bkt/t/part-*.parquet")
					return err
				}},
				{"read", "storage: read gs://bkt/t/_manifest.json", func() error {
					_, err := storage.ReadFile(ctx, "gs://bkt/t/_manifest.json")
					return err
				}},
				{"write", "storage: write gs://bkt/t/x.json", func() error {
					return storage.WriteFile(ctx, "gs://bkt/t/x.json", []byte("{}\n"))
				}},
			} {
				start := time.Now()
				err := within(t, 10*time.Second, op.name, op.f)
				wants := []string{op.want, endpoint}
				if tc.name == "silent" {
					wants = append(wants, "no answer", "within 0.5s")
				}
				checkFirstLine(t, op.name, err, wants...)
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("%s: failed after %s, with a deadline of 0.5s", op.name, d.Round(time.Millisecond))
				}
			}
		})
	}
}

// When the emulator dies mid-run, withdrawing the run's manifests fails
// within the deadline instead of retrying a listing without end.
func TestRemoveRunManifestsWhenStorageDies(t *testing.T) {
	host, stop := gcstest.StartStoppable(t, "bkt")
	ctx := context.Background()
	if err := storage.WriteTable(ctx, "gs://bkt/out/t", []schemas.Sentence{{}}); err != nil {
		t.Fatal(err)
	}
	stop()
	t.Setenv("CTXSIM_STORAGE_TIMEOUT", "500ms")
	err := within(t, 10*time.Second, "RemoveRunManifests", func() error {
		_, err := storage.RemoveRunManifests(ctx, "gs://bkt/out", storage.RunID())
		return err
	})
	checkFirstLine(t, "RemoveRunManifests", err, "storage: list gs://bkt/out/_manifest.json", "http://"+host)
}
