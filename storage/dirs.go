// Directories that must live on a local filesystem while they are used
// (bleve index shards and model files) move between gs:// and the local
// disk here.
//
// Fetch copies a remote directory into a local cache once per machine and
// reuses it while the remote listing (names and sizes) is unchanged; Publish
// copies a local directory to a remote one, writing the files named last
// after every other file (an index's metadata, which marks it complete) and
// removing remote files the local directory no longer has. Local paths pass
// through both unchanged, so callers need not tell the cases apart.
package storage

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// IsRemote reports whether path names a remote filesystem (scheme://...).
func IsRemote(path string) bool { return strings.Contains(path, "://") }

// Join joins a directory and a relative name, with "/" for remote paths.
func Join(dir, name string) string {
	if IsRemote(dir) {
		return strings.TrimSuffix(dir, "/") + "/" + strings.TrimPrefix(name, "/")
	}
	return filepath.Join(dir, name)
}

// CacheRoot is the local directory under which Fetch keeps its copies:
// $CTXSIM_CACHE_DIR, or ctxsim-cache in the system's temporary directory.
func CacheRoot() string {
	if d := os.Getenv("CTXSIM_CACHE_DIR"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "ctxsim-cache")
}

// file is one entry of a remote listing.
type file struct {
	Name string `json:"name"` // relative to the directory
	Size int64  `json:"size"`
}

// listing returns the files under the remote directory dir, sorted.
func listing(ctx context.Context, fs FS, dir string) ([]file, error) {
	dir = strings.TrimSuffix(dir, "/")
	names, err := fs.List(ctx, dir+"/**")
	if err != nil {
		return nil, withName(err, "list %s", dir)
	}
	var out []file
	for _, n := range names {
		rel := strings.TrimPrefix(n, dir+"/")
		if rel == "" || strings.HasSuffix(rel, "/") {
			continue
		}
		sz, err := fs.Size(ctx, n)
		if err != nil {
			return nil, withName(err, "stat %s", n)
		}
		out = append(out, file{rel, sz})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

const markerName = ".ctxsim-fetched.json"

var fetchMu sync.Mutex

// Fetch returns a local directory holding the files of dir. A local dir is
// returned as it is. A remote one is copied into CacheRoot()/<hash of dir>
// unless a complete copy with the same listing is already there; the copy
// is made in a temporary directory and renamed into place, so concurrent
// callers and interrupted copies never see a partial directory.
func Fetch(ctx context.Context, dir string) (string, error) {
	if !IsRemote(dir) {
		return dir, nil
	}
	fetchMu.Lock()
	defer fetchMu.Unlock()
	fs, err := New(ctx, dir)
	if err != nil {
		return "", err
	}
	defer fs.Close()
	files, err := listing(ctx, fs, dir)
	if err != nil {
		return "", err
	}
	if len(files) == 0 {
		return "", fmt.Errorf("%s: no files there", dir)
	}
	want, err := json.Marshal(files)
	if err != nil {
		return "", fmt.Errorf("%s: encode its listing: %w", dir, err)
	}
	h := sha256.Sum256([]byte(strings.TrimSuffix(dir, "/")))
	root := CacheRoot()
	final := filepath.Join(root, fmt.Sprintf("%x", h[:12]))
	if got, err := os.ReadFile(filepath.Join(final, markerName)); err == nil && string(got) == string(want) {
		return final, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(root, ".fetch-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for _, f := range files {
		if err := copyDown(ctx, fs, Join(dir, f.Name), filepath.Join(tmp, filepath.FromSlash(f.Name)), f.Size); err != nil {
			return "", err
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, markerName), want, 0o644); err != nil {
		return "", err
	}
	if err := os.RemoveAll(final); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		// Another process may have put a complete copy there meanwhile.
		if got, rerr := os.ReadFile(filepath.Join(final, markerName)); rerr == nil && string(got) == string(want) {
			return final, nil
		}
		return "", err
	}
	return final, nil
}

func copyDown(ctx context.Context, fs FS, src, dst string, size int64) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	r, err := fs.OpenRead(ctx, src)
	if err != nil {
		return withName(err, "read %s", src)
	}
	defer r.Close()
	w, err := os.Create(dst)
	if err != nil {
		return err
	}
	n, err := io.Copy(w, r)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return withName(err, "copy %s", src)
	}
	if n != size {
		return fmt.Errorf("copy %s: read %d bytes, the listing says %d (changed while copying?)", src, n, size)
	}
	return nil
}

// Publish copies the files under the local directory local to dst. When dst
// is local too it must be the same directory (nothing is copied). Files
// named in last (relative names) are written after all others; remote files
// under dst that local does not have are removed before them, so a reader
// that waits for a last file sees exactly the local directory.
func Publish(ctx context.Context, local, dst string, last ...string) error {
	return publish(ctx, local, dst, true, last)
}

// Upload copies the files under the local directory local to dst like
// Publish, but leaves other remote files under dst in place (two jobs that
// write different files into one directory).
func Upload(ctx context.Context, local, dst string) error {
	return publish(ctx, local, dst, false, nil)
}

func publish(ctx context.Context, local, dst string, prune bool, last []string) error {
	if !IsRemote(dst) {
		a, _ := filepath.Abs(local)
		b, _ := filepath.Abs(dst)
		if a != b {
			return fmt.Errorf("publish %s: local destination %s differs from the source", local, dst)
		}
		return nil
	}
	var names []string
	err := filepath.WalkDir(local, func(p string, d os.DirEntry, err error) error {
		// A fetched copy's marker is this machine's, not the directory's.
		if err != nil || d.IsDir() || d.Name() == markerName {
			return err
		}
		rel, err := filepath.Rel(local, p)
		if err != nil {
			return err
		}
		names = append(names, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return err
	}
	isLast := map[string]bool{}
	for _, n := range last {
		isLast[n] = true
	}
	sort.SliceStable(names, func(i, j int) bool { return !isLast[names[i]] && isLast[names[j]] })
	fs, err := New(ctx, dst)
	if err != nil {
		return err
	}
	defer fs.Close()
	keep := map[string]bool{}
	for _, n := range names {
		keep[n] = true
	}
	removed := false
	for _, n := range names {
		if prune && isLast[n] && !removed {
			if err := removeOthers(ctx, fs, dst, keep); err != nil {
				return err
			}
			removed = true
		}
		if err := copyUp(ctx, fs, filepath.Join(local, filepath.FromSlash(n)), Join(dst, n)); err != nil {
			return err
		}
	}
	if prune && !removed {
		return removeOthers(ctx, fs, dst, keep)
	}
	return nil
}

func removeOthers(ctx context.Context, fs FS, dst string, keep map[string]bool) error {
	have, err := listing(ctx, fs, dst)
	if err != nil {
		return err
	}
	for _, f := range have {
		if keep[f.Name] {
			continue
		}
		if err := fs.Remove(ctx, Join(dst, f.Name)); err != nil {
			return fmt.Errorf("remove stale %s: %w", Join(dst, f.Name), err)
		}
	}
	return nil
}

func copyUp(ctx context.Context, fs FS, src, dst string) error {
	r, err := os.Open(src)
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := fs.OpenWrite(ctx, dst)
	if err != nil {
		return withName(err, "write %s", dst)
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return withName(err, "write %s", dst)
	}
	if err := w.Close(); err != nil {
		return withName(err, "write %s", dst)
	}
	return nil
}

// ReadFile reads a whole file, local or remote.
func ReadFile(ctx context.Context, name string) ([]byte, error) {
	if !IsRemote(name) {
		return os.ReadFile(name)
	}
	fs, err := New(ctx, name)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	return readAll(ctx, fs, name)
}

// readAll reads the whole file name of fs.
func readAll(ctx context.Context, fs FS, name string) ([]byte, error) {
	r, err := fs.OpenRead(ctx, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// WriteFile writes a whole file, local or remote. A local file is written to
// a temporary name and renamed; a remote object appears whole when its
// upload completes.
func WriteFile(ctx context.Context, name string, data []byte) error {
	if !IsRemote(name) {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return err
		}
		tmp := filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".tmp")
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return err
		}
		return os.Rename(tmp, name)
	}
	fs, err := New(ctx, name)
	if err != nil {
		return err
	}
	defer fs.Close()
	return Write(ctx, fs, name, data)
}

// Exists reports whether the file name exists, local or remote.
func Exists(ctx context.Context, name string) (bool, error) {
	if !IsRemote(name) {
		_, err := os.Stat(name)
		if os.IsNotExist(err) {
			return false, nil
		}
		return err == nil, err
	}
	fs, err := New(ctx, name)
	if err != nil {
		return false, err
	}
	defer fs.Close()
	got, err := fs.List(ctx, name)
	if err != nil {
		return false, err
	}
	return len(got) > 0, nil
}

// RemoveAll removes the directory dir and everything under it, local or
// remote.
func RemoveAll(ctx context.Context, dir string) error {
	if !IsRemote(dir) {
		return os.RemoveAll(dir)
	}
	fs, err := New(ctx, dir)
	if err != nil {
		return err
	}
	defer fs.Close()
	return removeOthers(ctx, fs, dir, nil)
}

// RemoveExcept removes the files under dir whose relative names neither
// equal an entry of keep nor start with one ending in "/", local or remote.
func RemoveExcept(ctx context.Context, dir string, keep []string) error {
	kept := func(rel string) bool {
		for _, k := range keep {
			if rel == k || (strings.HasSuffix(k, "/") && strings.HasPrefix(rel, k)) {
				return true
			}
		}
		return false
	}
	if !IsRemote(dir) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range ents {
			name := e.Name()
			if e.IsDir() {
				name += "/"
			}
			if !kept(name) {
				if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
					return err
				}
			}
		}
		return nil
	}
	fs, err := New(ctx, dir)
	if err != nil {
		return err
	}
	defer fs.Close()
	have, err := listing(ctx, fs, dir)
	if err != nil {
		return err
	}
	k := map[string]bool{}
	for _, f := range have {
		if kept(f.Name) {
			k[f.Name] = true
		}
	}
	return removeOthers(ctx, fs, dir, k)
}
