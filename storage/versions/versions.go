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
package versions

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
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
	Version  string `json:"version"`
	Manifest string `json:"manifest"`
}

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
	return &c, nil
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

// ReadManifest decodes the manifest that cur points at into m.
func ReadManifest(ctx context.Context, cur *Current, m any) error {
	b, err := storage.ReadFile(ctx, cur.Manifest)
	if err != nil {
		return fmt.Errorf("current version's manifest: %w", err)
	}
	if err := json.Unmarshal(b, m); err != nil {
		return fmt.Errorf("%s: %w", cur.Manifest, err)
	}
	return nil
}

// Commit makes version v current: it writes the version's manifest m,
// then points CURRENT.json at it.
func (r Root) Commit(ctx context.Context, v string, m any) error {
	mpath := storage.Join(r.Dir(v), ManifestName)
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", mpath, err)
	}
	if err := storage.WriteFile(ctx, mpath, append(b, '\n')); err != nil {
		return fmt.Errorf("write %s: %w", mpath, err)
	}
	cpath := storage.Join(string(r), CurrentName)
	cb, err := json.MarshalIndent(Current{Version: v, Manifest: mpath}, "", "  ")
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
