package storage_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/storage/gcstest"
)

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if d.IsDir() || d.Name() == ".ctxsim-fetched.json" {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		b, _ := os.ReadFile(p)
		got[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	return got
}

func equalTrees(t *testing.T, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d files %v, want %d %v", len(got), got, len(want), want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("file %s = %q, want %q", k, got[k], v)
		}
	}
}

func TestPublishFetchRoundTrip(t *testing.T) {
	gcstest.Start(t, "bkt")
	t.Setenv("CTXSIM_CACHE_DIR", t.TempDir())
	ctx := context.Background()
	src := t.TempDir()
	v1 := map[string]string{
		"meta.json":         `{"v":1}`,
		"shard-0/root.bolt": "bolt bytes",
		"shard-0/a/b.zap":   "segment",
		"old.txt":           "goes away in v2",
	}
	writeTree(t, src, v1)
	if err := storage.Publish(ctx, src, "gs://bkt/ix", "meta.json"); err != nil {
		t.Fatal(err)
	}
	local, err := storage.Fetch(ctx, "gs://bkt/ix")
	if err != nil {
		t.Fatal(err)
	}
	equalTrees(t, readTree(t, local), v1)

	// A second fetch of an unchanged directory reuses the copy.
	os.WriteFile(filepath.Join(local, "shard-0", "root.bolt"), []byte("touched"), 0o644)
	again, err := storage.Fetch(ctx, "gs://bkt/ix")
	if err != nil || again != local {
		t.Fatalf("refetch: %v, %s vs %s", err, again, local)
	}
	if b, _ := os.ReadFile(filepath.Join(again, "shard-0", "root.bolt")); string(b) != "touched" {
		t.Fatalf("unchanged listing was copied again")
	}

	// Republishing replaces the remote directory exactly: stale files go.
	os.Remove(filepath.Join(src, "old.txt"))
	v2 := map[string]string{
		"meta.json":         `{"v":2}`,
		"shard-0/root.bolt": "bolt bytes, longer now",
		"shard-0/a/b.zap":   "segment",
	}
	writeTree(t, src, v2)
	if err := storage.Publish(ctx, src, "gs://bkt/ix", "meta.json"); err != nil {
		t.Fatal(err)
	}
	local, err = storage.Fetch(ctx, "gs://bkt/ix")
	if err != nil {
		t.Fatal(err)
	}
	equalTrees(t, readTree(t, local), v2)
}

func TestFetchErrors(t *testing.T) {
	gcstest.Start(t, "bkt")
	t.Setenv("CTXSIM_CACHE_DIR", t.TempDir())
	if _, err := storage.Fetch(context.Background(), "gs://bkt/nothing-here"); err == nil {
		t.Fatal("fetching an empty remote directory succeeded")
	}
	// Local paths pass through.
	if got, err := storage.Fetch(context.Background(), "/some/local/dir"); err != nil || got != "/some/local/dir" {
		t.Fatalf("local fetch = %q, %v", got, err)
	}
}

func TestSmallFiles(t *testing.T) {
	gcstest.Start(t, "bkt")
	ctx := context.Background()
	for _, name := range []string{"gs://bkt/a/CURRENT.json", filepath.Join(t.TempDir(), "x", "CURRENT.json")} {
		if ok, err := storage.Exists(ctx, name); err != nil || ok {
			t.Fatalf("%s exists before writing: %v %v", name, ok, err)
		}
		if err := storage.WriteFile(ctx, name, []byte("hello")); err != nil {
			t.Fatal(err)
		}
		b, err := storage.ReadFile(ctx, name)
		if err != nil || string(b) != "hello" {
			t.Fatalf("%s: read %q, %v", name, b, err)
		}
		if ok, err := storage.Exists(ctx, name); err != nil || !ok {
			t.Fatalf("%s missing after writing: %v %v", name, ok, err)
		}
	}
	if err := storage.RemoveAll(ctx, "gs://bkt/a"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := storage.Exists(ctx, "gs://bkt/a/CURRENT.json"); ok {
		t.Fatal("RemoveAll left a file")
	}
}
