package gcscall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	gcs "cloud.google.com/go/storage"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"

	"github.com/ctxsim/ctxsim/storage/gcstest"
)

func TestEnvDuration(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want time.Duration
	}{{"", time.Minute}, {"2s", 2 * time.Second}, {"1m30s", 90 * time.Second}, {"soon", time.Minute}, {"-1s", time.Minute}} {
		t.Setenv("CTXSIM_TEST_TIMEOUT", tc.v)
		if got := EnvDuration("CTXSIM_TEST_TIMEOUT", time.Minute); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.v, got, tc.want)
		}
	}
}

// A step that outlives the deadline is canceled and reported; answers of
// the endpoint and the ends of streams pass through as they are.
func TestCall(t *testing.T) {
	t.Setenv(TimeoutEnv, "50ms")
	t.Setenv("STORAGE_EMULATOR_HOST", "127.0.0.1:9")
	c := Start(context.Background(), "list", "gs://b/p*")
	defer c.End()
	err := c.Do(func() error {
		<-c.Context().Done()
		return c.Context().Err()
	})
	var e *Error
	if !errors.As(err, &e) || e.Limit != 50*time.Millisecond ||
		err.Error() != "storage: list gs://b/p*: no answer from http://127.0.0.1:9 within 0.05s (no response)" {
		t.Errorf("a step past the deadline: %v", err)
	}

	c = Start(context.Background(), "read", "gs://b/o")
	defer c.End()
	for _, answer := range []error{io.EOF, iterator.Done, gcs.ErrObjectNotExist, &googleapi.Error{Code: 412}} {
		if err := c.Do(func() error { return answer }); err != answer {
			t.Errorf("%v came back as %v", answer, err)
		}
	}
	err = c.Do(func() error { return &googleapi.Error{Code: 503} })
	if !errors.As(err, &e) || !strings.HasPrefix(err.Error(), "storage: read gs://b/o at http://127.0.0.1:9: googleapi: got HTTP response code 503") {
		t.Errorf("a 503: %v", err)
	}

	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("enough"))
	c = Start(ctx, "remove", "gs://b/o")
	defer c.End()
	err = c.Do(func() error { return c.Context().Err() })
	if !errors.As(err, &e) || !strings.Contains(err.Error(), "stopped waiting for http://127.0.0.1:9: enough") {
		t.Errorf("a call whose caller gave up: %v", err)
	}
}

// A request that keeps failing is given up after MaxAttempts.
func TestMaxAttempts(t *testing.T) {
	host := gcstest.Down(t)
	saved := Backoff
	Backoff = gax.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond, Multiplier: 2}
	t.Cleanup(func() { Backoff = saved })
	ctx := context.Background()
	client, err := NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	c := Start(ctx, "stat", "gs://b/o")
	defer c.End()
	err = c.Do(func() error {
		_, err := client.Bucket("b").Object("o").Retryer(c.Retry()).Attrs(c.Context())
		return err
	})
	want := fmt.Sprintf("storage: stat gs://b/o at http://%s: retry failed after %d attempts; last error: dial tcp %s: connect: connection refused",
		host, MaxAttempts, host)
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}
