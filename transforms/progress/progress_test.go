package progress

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the heartbeat's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// short sets a short Interval and captures the output for one test.
func short(t *testing.T) *syncBuffer {
	t.Helper()
	var buf syncBuffer
	oldI, oldO := Interval, Output
	Interval, Output = 50*time.Millisecond, &buf
	t.Cleanup(func() { Interval, Output = oldI, oldO })
	return &buf
}

func TestHeartbeatPrintsWhenQuiet(t *testing.T) {
	buf := short(t)
	stop := Heartbeat("job", func() string { return "pairs 7" })
	time.Sleep(300 * time.Millisecond)
	stop()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) < 2 || len(lines) > 7 {
		t.Fatalf("%d heartbeat lines in 300ms at a 50ms interval:\n%s", len(lines), buf)
	}
	for _, l := range lines {
		if !strings.Contains(l, "] job: ") || !strings.Contains(l, " elapsed, pairs 7") {
			t.Errorf("heartbeat line %q", l)
		}
	}
	n := len(buf.String())
	time.Sleep(150 * time.Millisecond)
	if len(buf.String()) != n {
		t.Errorf("the heartbeat printed after stop:\n%s", buf)
	}
}

func TestHeartbeatQuietWhileReportersPrint(t *testing.T) {
	buf := short(t)
	// A reporter prints every 4/5 of the Interval, so a heartbeat has a
	// fifth of it to spare: one second leaves 200ms for a loaded machine's
	// scheduling delays (at 100ms, 20ms was too little under a parallel
	// build).
	Interval = time.Second
	stop := Heartbeat("job", nil)
	r := New("stage", "items")
	end := time.Now().Add(2500 * time.Millisecond)
	for time.Now().Before(end) {
		r.Add(1)
		time.Sleep(time.Millisecond)
	}
	stop()
	out := buf.String()
	if strings.Contains(out, "elapsed") {
		t.Errorf("a heartbeat line among a reporter's lines:\n%s", out)
	}
	if !strings.Contains(out, "stage: ") {
		t.Errorf("no reporter line:\n%s", out)
	}
}

func TestHeartbeatInnermostPrints(t *testing.T) {
	buf := short(t)
	outer := Heartbeat("outer", nil)
	inner := Heartbeat("inner", nil)
	time.Sleep(300 * time.Millisecond)
	inner()
	mid := buf.String()
	time.Sleep(200 * time.Millisecond)
	outer()
	if strings.Contains(mid, "outer:") || !strings.Contains(mid, "inner:") {
		t.Errorf("while both ran, not only the inner heartbeat printed:\n%s", mid)
	}
	if !strings.Contains(buf.String()[len(mid):], "outer:") {
		t.Errorf("the outer heartbeat did not resume after the inner one stopped:\n%s", buf)
	}
}
