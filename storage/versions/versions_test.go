package versions

import (
	"context"
	"encoding/json"
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
		if err := root.ReadManifest(ctx, cur, &m); err != nil || m.N != i {
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

// commitTwo commits versions v000001 and v000002 (n 1 and 2) under root.
func commitTwo(t *testing.T, root Root) {
	t.Helper()
	for i, v := range []string{"v000001", "v000002"} {
		if err := root.Commit(context.Background(), v, manifest{Version: v, N: i + 1}); err != nil {
			t.Fatal(err)
		}
	}
}

// readPointer returns the CURRENT.json of root as stored.
func readPointer(t *testing.T, root Root) Current {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(string(root), CurrentName))
	if err != nil {
		t.Fatal(err)
	}
	var c Current
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// writePointer writes c as root's CURRENT.json.
func writePointer(t *testing.T, root Root, c Current) {
	t.Helper()
	b, _ := json.Marshal(c)
	if err := os.WriteFile(filepath.Join(string(root), CurrentName), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// currentManifest reads root's current version's manifest.
func currentManifest(root Root) (manifest, error) {
	var m manifest
	cur, err := root.Current(context.Background())
	if err != nil {
		return m, err
	}
	return m, root.ReadManifest(context.Background(), cur, &m)
}

// The pointer names its manifest relative to the root, so a root that is
// moved reads its own versions, and a copy reads the copy's, not the
// original's (which has moved on meanwhile).
func TestMovedAndCopiedRoots(t *testing.T) {
	orig := Root(filepath.Join(t.TempDir(), "labels"))
	commitTwo(t, orig)
	if got := readPointer(t, orig).Manifest; got != "versions/v000002/MANIFEST.json" {
		t.Fatalf("CURRENT.json names its manifest %q, want versions/v000002/MANIFEST.json", got)
	}
	copied := Root(filepath.Join(t.TempDir(), "copy"))
	if err := os.CopyFS(string(copied), os.DirFS(string(orig))); err != nil {
		t.Fatal(err)
	}
	// The original goes on: its v000002 manifest now says n 20.
	if err := orig.Commit(context.Background(), "v000002", manifest{Version: "v000002", N: 20}); err != nil {
		t.Fatal(err)
	}
	if m, err := currentManifest(copied); err != nil || m.N != 2 {
		t.Errorf("the copy's current manifest: %+v, %v; want n 2, the copy's own", m, err)
	}
	moved := Root(filepath.Join(t.TempDir(), "moved"))
	if err := os.Rename(string(orig), string(moved)); err != nil {
		t.Fatal(err)
	}
	if m, err := currentManifest(moved); err != nil || m.N != 20 {
		t.Errorf("the moved root's current manifest: %+v, %v; want n 20", m, err)
	}
}

// A pointer written before paths were relative holds an absolute path: one
// inside the root still reads, one outside it (a root moved or copied
// before this change) is refused, naming the pointer and the path, as is
// a manifest that is not its version's or leaves the root.
func TestAbsolutePointers(t *testing.T) {
	root := Root(filepath.Join(t.TempDir(), "labels"))
	commitTwo(t, root)
	inside := filepath.Join(string(root), "versions", "v000002", ManifestName)
	writePointer(t, root, Current{Version: "v000002", Manifest: inside})
	if m, err := currentManifest(root); err != nil || m.N != 2 {
		t.Errorf("absolute path inside the root: %+v, %v; want n 2", m, err)
	}
	// The same root reached through a path that is not clean.
	if m, err := currentManifest(Root(string(root) + "/./")); err != nil || m.N != 2 {
		t.Errorf("absolute path inside the root %s/./: %+v, %v; want n 2", root, m, err)
	}

	other := Root(filepath.Join(t.TempDir(), "other"))
	commitTwo(t, other)
	pointer := filepath.Join(string(root), CurrentName)
	for _, tc := range []struct {
		cur   Current
		wants []string
	}{
		{Current{Version: "v000002", Manifest: filepath.Join(string(other), "versions", "v000002", ManifestName)},
			[]string{"outside this root", string(other)}},
		{Current{Version: "v000002", Manifest: "gs://elsewhere/labels/versions/v000002/" + ManifestName},
			[]string{"outside this root", "gs://elsewhere/labels"}},
		{Current{Version: "v000002", Manifest: string(root) + "x/versions/v000002/" + ManifestName},
			[]string{"outside this root"}},
		{Current{Version: "v000002", Manifest: "versions/v000001/" + ManifestName}, []string{"v000001", "v000002"}},
		{Current{Version: "v000002", Manifest: "../other/versions/v000002/" + ManifestName}, []string{"../other"}},
		{Current{Version: "../other", Manifest: "versions/../other/" + ManifestName}, []string{"../other"}},
	} {
		writePointer(t, root, tc.cur)
		m, err := currentManifest(root)
		if err == nil {
			t.Errorf("pointer %+v: read %+v; want an error", tc.cur, m)
			continue
		}
		for _, want := range append(tc.wants, pointer) {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("pointer %+v: error %q does not name %q", tc.cur, err, want)
			}
		}
	}
}

// Paths in and out of a gs:// root resolve as local ones do.
func TestManifestPathRemote(t *testing.T) {
	root := Root("gs://bucket/labels")
	for manifest, want := range map[string]string{
		"versions/v000003/MANIFEST.json":                             "gs://bucket/labels/versions/v000003/MANIFEST.json",
		"gs://bucket/labels/versions/v000003/MANIFEST.json":          "gs://bucket/labels/versions/v000003/MANIFEST.json",
		"gs://bucket/labels//versions/v000003/MANIFEST.json":         "gs://bucket/labels/versions/v000003/MANIFEST.json",
		"gs://backup/labels/versions/v000003/MANIFEST.json":          "",
		"gs://bucket/labels-old/versions/v000003/MANIFEST.json":      "",
		"gs://bucket/labels/../other/versions/v000003/MANIFEST.json": "",
		"/labels/versions/v000003/MANIFEST.json":                     "",
	} {
		got, err := root.ManifestPath(&Current{Version: "v000003", Manifest: manifest})
		if want == "" {
			if err == nil {
				t.Errorf("%s: resolved to %s; want an error", manifest, got)
			}
		} else if err != nil || got != want {
			t.Errorf("%s: %s, %v; want %s", manifest, got, err, want)
		}
	}
}
