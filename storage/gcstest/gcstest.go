// Package gcstest runs an in-memory GCS server (fake-gcs-server) on
// 127.0.0.1 for tests, and points the GCS client library at it; or points
// it at storage that never answers.
package gcstest

import (
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/fsouza/fake-gcs-server/fakestorage"
)

// Start starts a server holding the given empty buckets, sets
// STORAGE_EMULATOR_HOST for the test (child processes inherit it), and
// stops the server when the test ends. It returns the host:port.
func Start(t testing.TB, buckets ...string) string {
	t.Helper()
	host, _ := StartStoppable(t, buckets...)
	return host
}

// StartStoppable is Start, and also returns a function that stops the
// server before the test ends: an emulator that dies mid-run, after which
// its port refuses connections.
func StartStoppable(t testing.TB, buckets ...string) (host string, stop func()) {
	t.Helper()
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{
		Scheme: "http",
		Host:   "127.0.0.1",
		// Without a public host on the same address, object reads are
		// sent to storage.googleapis.com.
		PublicHost: "127.0.0.1",
	})
	if err != nil {
		t.Fatalf("fake GCS server: %v", err)
	}
	stop = sync.OnceFunc(srv.Stop)
	t.Cleanup(stop)
	host = strings.TrimPrefix(srv.URL(), "http://")
	for _, b := range buckets {
		srv.CreateBucket(b)
	}
	t.Setenv("STORAGE_EMULATOR_HOST", host)
	return host, stop
}

// Down points STORAGE_EMULATOR_HOST, for the test, at a 127.0.0.1 port
// where nothing listens (storage down from the start: every connection is
// refused). It returns the host:port.
func Down(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := l.Addr().String()
	l.Close()
	t.Setenv("STORAGE_EMULATOR_HOST", host)
	return host
}

// Silent points STORAGE_EMULATOR_HOST, for the test, at a 127.0.0.1
// listener that accepts connections and never answers on them. It returns
// the host:port.
func Silent(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never read or written
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	host := l.Addr().String()
	t.Setenv("STORAGE_EMULATOR_HOST", host)
	return host
}
