package jobrun

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/storage/gcstest"
)

// captureStderr sends what is written to os.Stderr, until the returned
// function is called, to the string that function returns.
func captureStderr(t *testing.T) func() string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	var buf bytes.Buffer
	copied := make(chan struct{})
	go func() {
		io.Copy(&buf, r)
		close(copied)
	}()
	return func() string {
		os.Stderr = saved
		w.Close()
		<-copied
		r.Close()
		return buf.String()
	}
}

// When the storage emulator dies mid-run, the failed job's cleanup
// (withdrawing its manifests, giving back its lease) ends within the
// cleanup deadline, however long a single call may wait, and says what it
// could not do.
func TestCleanupWhenStorageDies(t *testing.T) {
	host, stop := gcstest.StartStoppable(t, "bkt")
	const out = "gs://bkt/out"
	Lease("test", out)
	ctx := context.Background()
	if err := storage.WriteTable(ctx, out+"/t", []schemas.Sentence{{}}); err != nil {
		t.Fatal(err)
	}
	stop()
	t.Setenv("CTXSIM_STORAGE_TIMEOUT", "60s")
	t.Setenv("CTXSIM_STORAGE_CLEANUP_TIMEOUT", "1s")
	stderr := captureStderr(t)
	done := make(chan struct{})
	start := time.Now()
	go func() {
		Abandon(ctx, "test")
		Release()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("the cleanup is still waiting on storage after 15s")
	}
	took := time.Since(start)
	said := stderr()
	t.Logf("after %s:\n%s", took.Round(time.Millisecond), said)
	if took > 6*time.Second {
		t.Errorf("the cleanup took %s, with a deadline of 1s for each of its two parts", took.Round(time.Millisecond))
	}
	for _, w := range []string{"could not withdraw", out, "http://" + host, out + "/" + "_lease.json"} {
		if !strings.Contains(said, w) {
			t.Errorf("stderr does not say %q", w)
		}
	}
}
