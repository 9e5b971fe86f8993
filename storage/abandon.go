package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
)

// abandoned is set once this process's run has failed: a finalize step
// that runs after that (a runner may still drive stages while it cancels a
// failed job) commits nothing.
var abandoned atomic.Bool

// Abandon marks this process's run as failed. From then on no table of
// the run is committed from this process; RemoveRunManifests removes those
// committed before.
func Abandon() { abandoned.Store(true) }

// errAbandoned is what a finalize step returns after Abandon.
func errAbandoned(dir string) error {
	return fmt.Errorf("%s: the run has failed; the table is not committed", dir)
}

// indexMetaName is the file that completes a chunk index
// (retrieval.MetaFile), naming the run that wrote it.
const indexMetaName = "ctxsim-index.json"

// maxManifestDepth bounds how deep under an output directory
// RemoveRunManifests looks (a refresh root holds
// versions/vNNNNNN/corpus/sentences/_manifest.json).
const maxManifestDepth = 5

// RemoveRunManifests removes, under dir (local or gs://), every table
// manifest that names run as its writer, and every chunk index's metadata
// file that does, so that a failed run leaves no
// table that claims to be complete: its part files, with no manifest, are
// refused by every reader as the remains of a run that did not finish.
// Tables of other runs are left alone, and so are the tables under keep
// (directories under dir whose tables a later run resumes from, such as a
// harvest's _waves). It returns the manifests removed.
func RemoveRunManifests(ctx context.Context, dir, run string, keep ...string) ([]string, error) {
	fs, err := New(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	var removed []string
	pattern := strings.TrimSuffix(dir, "/")
	for range maxManifestDepth + 1 {
		paths, err := fs.List(ctx, join(pattern, ManifestName))
		if err != nil {
			return removed, err
		}
		for _, p := range paths {
			table := p[:strings.LastIndex(p, "/")]
			if under(table, keep) {
				continue
			}
			m, ok, err := readManifest(ctx, fs, table)
			if err != nil && (ctx.Err() != nil || unreachable(err)) {
				return removed, err
			}
			if err != nil || !ok || m.RunID != run {
				continue // not a manifest of run's (or not one at all)
			}
			if err := fs.Remove(ctx, p); err != nil {
				return removed, fmt.Errorf("remove %s: %w", p, err)
			}
			removed = append(removed, p)
		}
		metas, err := fs.List(ctx, join(pattern, indexMetaName))
		if err != nil {
			return removed, err
		}
		for _, p := range metas {
			if under(p[:strings.LastIndex(p, "/")], keep) {
				continue
			}
			b, err := readAll(ctx, fs, p)
			if err != nil {
				if ctx.Err() != nil || unreachable(err) {
					return removed, err
				}
				continue
			}
			var m struct {
				RunID string `json:"run_id"`
			}
			if json.Unmarshal(b, &m) != nil || m.RunID != run {
				continue // another run's index (or one that names none)
			}
			if err := fs.Remove(ctx, p); err != nil {
				return removed, fmt.Errorf("remove %s: %w", p, err)
			}
			removed = append(removed, p)
		}
		pattern = join(pattern, "*")
	}
	return removed, nil
}

// under reports whether path is one of dirs or lies under one.
func under(path string, dirs []string) bool {
	for _, d := range dirs {
		d = strings.TrimSuffix(d, "/")
		if path == d || strings.HasPrefix(path, d+"/") {
			return true
		}
	}
	return false
}
