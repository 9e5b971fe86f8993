package versions

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

type manifest struct {
	Version string `json:"version"`
	N       int    `json:"n"`
}

func TestCommitAndExpire(t *testing.T) {
	ctx := context.Background()
	root := Root(t.TempDir())
	cur, err := root.Current(ctx)
	if err != nil || cur != nil {
		t.Fatalf("empty root: current %v, %v", cur, err)
	}
	for i := 1; i <= 4; i++ {
		v := Next(cur)
		if want := "v00000" + string(rune('0'+i)); v != want {
			t.Fatalf("next version %s, want %s", v, want)
		}
		dir, err := root.Begin(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := root.Commit(ctx, v, manifest{Version: v, N: i}); err != nil {
			t.Fatal(err)
		}
		if cur, err = root.Current(ctx); err != nil || cur.Version != v {
			t.Fatalf("after committing %s: current %+v, %v", v, cur, err)
		}
		var m manifest
		if err := ReadManifest(ctx, cur, &m); err != nil || m.N != i {
			t.Fatalf("manifest of %s: %+v, %v", v, m, err)
		}
	}
	// An interrupted fifth version (no manifest) is neither current nor
	// counted; Begin starts it over.
	dir, _ := root.Begin(ctx, Next(cur))
	os.MkdirAll(filepath.Join(dir, "partial"), 0o755)
	removed, err := root.Expire(ctx, 2, cur.Version)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []string{"v000001", "v000002"}) {
		t.Fatalf("expired %v, want v000001 and v000002", removed)
	}
	for v, want := range map[string]bool{"v000001": false, "v000002": false, "v000003": true, "v000004": true} {
		if _, err := os.Stat(root.Dir(v)); (err == nil) != want {
			t.Errorf("%s present = %v, want %v", v, err == nil, want)
		}
	}
	if dir, _ = root.Begin(ctx, "v000005"); dirExists(dir) {
		t.Error("Begin left the interrupted version's files")
	}
	os.WriteFile(filepath.Join(string(root), CurrentName), []byte("{"), 0o644)
	if _, err := root.Current(ctx); err == nil {
		t.Error("a corrupt pointer was accepted")
	}
}

func dirExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// A pointer without its version or manifest is refused, naming the file
// and the missing field.
func TestCurrentMissingField(t *testing.T) {
	root := Root(t.TempDir())
	name := filepath.Join(string(root), CurrentName)
	for body, field := range map[string]string{
		`{"version": "v000001"}`:                                  `"manifest"`,
		`{"manifest": "/x/versions/v000001/MANIFEST.json"}`:       `"version"`,
		`{"version": "v000001", "manifest": ""}`:                  `"manifest"`,
		`{"version": "", "manifest": "/x/v000001/MANIFEST.json"}`: `"version"`,
	} {
		os.WriteFile(name, []byte(body), 0o644)
		cur, err := root.Current(context.Background())
		if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: current %+v, error %v; want one naming %s and %s", body, cur, err, name, field)
		}
	}
}

// A negative number of versions to keep is refused, and nothing removed.
func TestExpireNegative(t *testing.T) {
	ctx := context.Background()
	root := Root(t.TempDir())
	for _, v := range []string{"v000001", "v000002"} {
		if err := root.Commit(ctx, v, manifest{Version: v}); err != nil {
			t.Fatal(err)
		}
	}
	if removed, err := root.Expire(ctx, -7, "v000002"); err == nil || len(removed) > 0 {
		t.Errorf("Expire(-7) = %v, %v; want an error", removed, err)
	}
	if removed, err := root.Expire(ctx, 0, "v000002"); err != nil || len(removed) > 0 {
		t.Errorf("Expire(0) = %v, %v; want every version kept", removed, err)
	}
	if !dirExists(root.Dir("v000001")) {
		t.Error("v000001 was removed")
	}
}
