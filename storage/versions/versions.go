// Package versions keeps a sequence of complete versions of a job's output
// under one root, local or gs://:
//
//	<root>/versions/vNNNNNN/...            one version's files
//	<root>/versions/vNNNNNN/MANIFEST.json  what the version holds
//	<root>/CURRENT.json                    the version readers use
//
// A version is written in full under its own directory, then committed:
// its manifest first, then the pointer. Readers that follow CURRENT.json
// never see a partial version; a directory without a manifest is what an
// interrupted run left, and the next run starts it over.
//
// The pointer names the manifest by its path relative to the root, so a
// root can be moved, copied (to another directory or bucket) or restored
// and still reads its own versions.
package versions

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/ctxsim/ctxsim/storage"
)

// CurrentName and ManifestName are the pointer's and a manifest's names.
const (
	CurrentName  = "CURRENT.json"
	ManifestName = "MANIFEST.json"
)

// Current is <root>/CURRENT.json.
type Current struct {
	Version string `json:"version"`
	// Manifest is the path of the version's manifest relative to the root
	// (versions/vNNNNNN/MANIFEST.json); pointers written before paths
	// were relative hold an absolute path, which must lie in the root
	// (see Root.ManifestPath).
	Manifest string `json:"manifest"`
}

// versionName matches the names Next gives versions.
var versionName = regexp.MustCompile(`^v[0-9]+$`)

// manifestRel is the path of version v's manifest relative to the root.
func manifestRel(v string) string { return "versions/" + v + "/" + ManifestName }

// Root is the root of a versioned output.
type Root string

// Dir is the directory of version v.
func (r Root) Dir(v string) string { return storage.Join(string(r), "versions/"+v) }

// Current returns the current version, or nil when there is none yet.
func (r Root) Current(ctx context.Context) (*Current, error) {
	name := storage.Join(string(r), CurrentName)
	ok, err := storage.Exists(ctx, name)
	if err != nil || !ok {
		return nil, err
	}
	b, err := storage.ReadFile(ctx, name)
	if err != nil {
		return nil, err
	}
	var c Current
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: corrupt pointer (%v): fix or remove it", name, err)
	}
	for _, f := range []struct{ name, value string }{{"version", c.Version}, {"manifest", c.Manifest}} {
		if f.value == "" {
			return nil, fmt.Errorf("%s: corrupt pointer (no %q field): fix or remove it", name, f.name)
		}
	}
	if !versionName.MatchString(c.Version) {
		return nil, fmt.Errorf("%s: corrupt pointer (version %q is not a version name like v000001): fix or remove it",
			name, c.Version)
	}
	if _, err := r.ManifestPath(&c); err != nil {
		return nil, err
	}
	return &c, nil
}

// ManifestPath returns the path of the manifest cur points at: its
// Manifest resolved against the root. The manifest must be cur's version's
// (versions/<version>/MANIFEST.json). An absolute path, which pointers
// held before paths were relative, is accepted when it lies in this root;
// one outside it is refused, since it would read another root's version
// (the original of a moved, copied or restored root).
func (r Root) ManifestPath(cur *Current) (string, error) {
	name := storage.Join(string(r), CurrentName)
	want := manifestRel(cur.Version)
	rel := cur.Manifest
	if isAbs(rel) {
		var ok bool
		if rel, ok = r.within(rel); !ok {
			return "", fmt.Errorf("%s: points at %s, outside this root %s (the pointer of a root that was moved or copied?): "+
				"it would read another root's version; set its manifest to %q", name, cur.Manifest, r, want)
		}
	}
	if rel != want {
		return "", fmt.Errorf("%s: corrupt pointer (version %s with manifest %q, want %q): fix or remove it",
			name, cur.Version, cur.Manifest, want)
	}
	return storage.Join(string(r), rel), nil
}

// isAbs reports whether p is an absolute path or a URL rather than a path
// relative to a root.
func isAbs(p string) bool {
	return storage.IsRemote(p) || path.IsAbs(p) || filepath.IsAbs(p)
}

// within returns p, an absolute path or URL, relative to the root, and
// whether it lies in the root at all.
func (r Root) within(p string) (string, bool) {
	root, file := cleanAbs(string(r)), cleanAbs(p)
	if root == "" || file == "" {
		return "", false
	}
	prefix := strings.TrimSuffix(root, "/") + "/"
	if !strings.HasPrefix(file, prefix) {
		return "", false
	}
	return strings.TrimPrefix(file, prefix), true
}

// cleanAbs cleans an absolute path or URL for comparison: a URL's path is
// cleaned after its scheme and bucket, and a local path made absolute
// ("" when it cannot be).
func cleanAbs(p string) string {
	if scheme, rest, ok := strings.Cut(p, "://"); ok {
		return scheme + "://" + strings.TrimPrefix(path.Clean("/"+rest), "/")
	}
	a, err := filepath.Abs(p)
	if err != nil {
		return ""
	}
	return filepath.ToSlash(a)
}

// Next names the version after cur (v000001 when cur is nil).
func Next(cur *Current) string {
	seq := 1
	if cur != nil {
		fmt.Sscanf(cur.Version, "v%d", &seq)
		seq++
	}
	return fmt.Sprintf("v%06d", seq)
}

// Begin returns the empty directory of version v, removing what an
// interrupted run left there.
func (r Root) Begin(ctx context.Context, v string) (string, error) {
	dir := r.Dir(v)
	return dir, storage.RemoveAll(ctx, dir)
}

// ReadManifest decodes the manifest that cur points at (see ManifestPath)
// into m.
func (r Root) ReadManifest(ctx context.Context, cur *Current, m any) error {
	mpath, err := r.ManifestPath(cur)
	if err != nil {
		return err
	}
	b, err := storage.ReadFile(ctx, mpath)
	if err != nil {
		return fmt.Errorf("current version's manifest: %w", err)
	}
	if err := json.Unmarshal(b, m); err != nil {
		return fmt.Errorf("%s: %w", mpath, err)
	}
	return nil
}

// Commit makes version v current: it writes the version's manifest m,
// then points CURRENT.json at it, by its path relative to the root.
func (r Root) Commit(ctx context.Context, v string, m any) error {
	if !versionName.MatchString(v) {
		return fmt.Errorf("commit version %q: not a version name like v000001", v)
	}
	mpath := storage.Join(string(r), manifestRel(v))
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", mpath, err)
	}
	if err := storage.WriteFile(ctx, mpath, append(b, '\n')); err != nil {
		return fmt.Errorf("write %s: %w", mpath, err)
	}
	cpath := storage.Join(string(r), CurrentName)
	cb, err := json.MarshalIndent(Current{Version: v, Manifest: manifestRel(v)}, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", cpath, err)
	}
	if err := storage.WriteFile(ctx, cpath, append(cb, '\n')); err != nil {
		return fmt.Errorf("write %s: %w", cpath, err)
	}
	return nil
}

// Expire removes the committed versions older than the newest keep, never
// current, and returns those removed. keep 0 keeps every version; a
// negative keep is an error.
func (r Root) Expire(ctx context.Context, keep int, current string) ([]string, error) {
	if keep < 0 {
		return nil, fmt.Errorf("keep %d versions: want 0 (all) or more", keep)
	}
	if keep == 0 {
		return nil, nil
	}
	found, err := storage.Glob(ctx, storage.Join(string(r), "versions/*/"+ManifestName))
	if err != nil {
		return nil, err
	}
	var vs []string
	for _, f := range found {
		v := path.Base(strings.TrimSuffix(strings.TrimSuffix(f, ManifestName), "/"))
		if strings.HasPrefix(v, "v") {
			vs = append(vs, v)
		}
	}
	sort.Strings(vs)
	var removed []string
	for i, v := range vs {
		if i < len(vs)-keep && v != current {
			if err := storage.RemoveAll(ctx, r.Dir(v)); err != nil {
				return removed, err
			}
			removed = append(removed, v)
		}
	}
	return removed, nil
}
