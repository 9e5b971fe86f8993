// Package gcstest runs an in-memory GCS server (fake-gcs-server) on
// 127.0.0.1 for tests, and points the GCS client library at it.
package gcstest

import (
	"strings"
	"testing"

	"github.com/fsouza/fake-gcs-server/fakestorage"
)

// Start starts a server holding the given empty buckets, sets
// STORAGE_EMULATOR_HOST for the test (child processes inherit it), and
// stops the server when the test ends. It returns the host:port.
func Start(t testing.TB, buckets ...string) string {
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
	t.Cleanup(srv.Stop)
	host := strings.TrimPrefix(srv.URL(), "http://")
	for _, b := range buckets {
		srv.CreateBucket(b)
	}
	t.Setenv("STORAGE_EMULATOR_HOST", host)
	return host
}
