package lease

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/storage/gcstest"
)

func checkLease(t *testing.T, dir string) {
	ctx := context.Background()
	a, err := Acquire(ctx, dir, "index", "run-a", false)
	if err != nil {
		t.Fatal(err)
	}
	// A second run into the same directory is refused, naming the holder.
	_, err = Acquire(ctx, dir, "index", "run-b", false)
	var held *HeldError
	if !errors.As(err, &held) || held.Holder.RunID != "run-a" || !strings.Contains(err.Error(), "--take_over") {
		t.Fatalf("second run: %v", err)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := Acquire(ctx, dir, "index", "run-b", false)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	// --take_over replaces a live holder; the replaced run cannot then
	// release the new one's lease.
	c, err := Acquire(ctx, dir, "index", "run-c", true)
	if err != nil {
		t.Fatalf("take over: %v", err)
	}
	if err := b.Release(ctx); err == nil || !strings.Contains(err.Error(), "another run") {
		t.Fatalf("release of a lease taken over: %v", err)
	}
	if err := c.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestLocal(t *testing.T) { checkLease(t, filepath.Join(t.TempDir(), "out")) }

func TestGCS(t *testing.T) {
	gcstest.Start(t, "bucket")
	checkLease(t, "gs://bucket/out")
}

// A lease left by a killed process on this host is taken over by itself;
// one held by a process on another host is not.
func TestStale(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	for _, tc := range []struct {
		host string
		pid  int
		ok   bool
	}{{host, cmd.Process.Pid, true}, {"elsewhere", cmd.Process.Pid, false}, {host, os.Getpid(), false}} {
		b, _ := json.Marshal(Holder{RunID: "old", Host: tc.host, PID: tc.pid, Started: time.Now()})
		os.WriteFile(filepath.Join(dir, FileName), b, 0o644)
		l, err := Acquire(context.Background(), dir, "harvest", "new", false)
		if ok := err == nil; ok != tc.ok {
			t.Fatalf("holder on %s pid %d: %v, want taken over = %v", tc.host, tc.pid, err, tc.ok)
		}
		if l != nil {
			l.Release(context.Background())
		}
	}
}

// Of several runs started at once, exactly one gets the lease.
func TestConcurrent(t *testing.T) {
	dir := t.TempDir()
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func() {
			_, err := Acquire(context.Background(), dir, "index", "r"+string(rune('a'+i)), false)
			errs <- err
		}()
	}
	won := 0
	for i := 0; i < 8; i++ {
		if <-errs == nil {
			won++
		}
	}
	if won != 1 {
		t.Fatalf("%d runs got the lease, want 1", won)
	}
}
