package corpus

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/ctxsim/ctxsim/storage"
)

// Files that mark a directory as the output of a ctxsim job, not corpus: a
// committed table, an index, a job's leased output directory.
var outputMarkers = map[string]bool{
	storage.ManifestName: true,
	"ctxsim-index.json":  true, // retrieval.MetaFile
	"_lease.json":        true, // storage/lease.FileName
}

// Names a job gives its output files and index shards.
var (
	outputPartName  = regexp.MustCompile(`^part-\d{5}-of-\d{5}\.parquet$`)
	outputShardName = regexp.MustCompile(`^shard-\d{5}-of-\d{5}$`)
)

// hasGlobMeta reports whether p holds a wildcard.
func hasGlobMeta(p string) bool { return strings.ContainsAny(p, "*?[") }

// ExpandInput lists the corpus files one element of --input names, sorted,
// each with the input root its document IDs are relative to (Input.Root):
//
//   - a glob (local or gs://): the files it matches, as storage.Glob lists
//     them, but for hidden names (unless the pattern's last element is one);
//     the root is the directory part before the first wildcard
//     ("corpus/2024/" for "corpus/2024/*/part-*.txt"). A local directory it
//     matches is expanded as below, with the glob's root, unless it is a
//     ctxsim output.
//   - a directory (local, or a gs:// prefix followed by "/"): every file
//     under it, recursively; the root is the directory.
//   - a file: the file; the root is its directory.
//
// Expanding a directory skips hidden files and directories (a name
// starting with "." or "_"), and the outputs of ctxsim jobs: directories
// holding a table manifest, an index or a job's lease, index shard
// directories and table part files (part-NNNNN-of-NNNNN.parquet), so that
// an --output inside the input directory is not read back as corpus.
//
// Symbolic links under a local directory, or matched by a local glob, are
// read when they lead to a file under the input root. The others are
// listed with a SkipReason, so that ReadInput dead-letters them: a link
// that leads nowhere (broken_link), a link that leads outside the root
// unless opts.FollowLinks is set (link_outside_input), and links to
// directories, which are not followed, sockets, FIFOs and devices
// (not_regular_file). A file named by --input itself is read wherever a
// link leads.
//
// It fails when nothing matches, and when a directory holds no file once
// these are skipped.
func ExpandInput(ctx context.Context, pattern string, opts Options) ([]Input, error) {
	remote := storage.IsRemote(pattern)
	if hasGlobMeta(pattern) {
		root := globRoot(pattern)
		files, err := storage.Glob(ctx, pattern)
		if err != nil {
			return nil, err
		}
		// As in a shell, a wildcard does not match hidden names unless
		// the pattern's last element starts like one.
		explicitHidden := hiddenName(path.Base(filepath.ToSlash(pattern)))
		var out []Input
		for _, f := range files {
			if !explicitHidden && hiddenName(path.Base(filepath.ToSlash(f))) {
				continue
			}
			if remote {
				out = append(out, Input{Path: f, Root: root})
				continue
			}
			if fi, err := os.Lstat(f); err == nil && fi.IsDir() {
				if isOutputDir(f) {
					continue
				}
				under, err := walkLocal(f, root, opts)
				if err != nil {
					return nil, err
				}
				out = append(out, under...)
				continue
			}
			out = append(out, localInput(f, root, opts))
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("no corpus files match %s (hidden files and ctxsim outputs are skipped)", pattern)
		}
		return out, nil
	}
	if !remote {
		fi, err := os.Stat(pattern)
		switch {
		case err == nil && fi.IsDir():
			files, err := walkLocal(pattern, pattern, opts)
			if err != nil {
				return nil, err
			}
			if len(files) == 0 {
				return nil, fmt.Errorf("no corpus files under directory %s (hidden files and ctxsim outputs are skipped)", pattern)
			}
			return files, nil
		case err == nil:
			return []Input{{Path: pattern, Root: filepath.Dir(pattern)}}, nil
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("no files match %s", pattern)
		default:
			return nil, err
		}
	}
	return expandRemote(ctx, pattern)
}

// globRoot returns the directory part of a glob before its first wildcard,
// ending in "/" (or "." for a local glob without one).
func globRoot(pattern string) string {
	prefix := pattern[:strings.IndexAny(pattern, "*?[")]
	i := strings.LastIndex(prefix, "/")
	if !storage.IsRemote(pattern) {
		i = strings.LastIndexAny(prefix, "/"+string(filepath.Separator))
	}
	if i < 0 {
		return "."
	}
	return prefix[:i+1]
}

// expandRemote expands a gs:// name without wildcards: the object itself
// when there is one, else every object under the name as a directory.
func expandRemote(ctx context.Context, name string) ([]Input, error) {
	fsys, err := storage.New(ctx, name)
	if err != nil {
		return nil, err
	}
	defer fsys.Close()
	if !strings.HasSuffix(name, "/") {
		exact, err := fsys.List(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", name, err)
		}
		if len(exact) > 0 {
			return []Input{{Path: name, Root: name[:strings.LastIndex(name, "/")+1]}}, nil
		}
	}
	dir := strings.TrimSuffix(name, "/") + "/"
	all, err := fsys.List(ctx, dir+"**")
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no files match %s", name)
	}
	var rels []string
	for _, p := range all {
		if rel := strings.TrimPrefix(p, dir); rel != "" && !strings.HasSuffix(rel, "/") {
			rels = append(rels, rel)
		}
	}
	var files []string
	for _, rel := range corpusFiles(rels) {
		files = append(files, dir+rel)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no corpus files under directory %s (hidden files and ctxsim outputs are skipped)", dir)
	}
	out := make([]Input, len(files))
	for i, f := range files {
		out[i] = Input{Path: f, Root: dir}
	}
	return out, nil
}

// walkLocal lists the corpus files under the local directory dir, sorted
// (see ExpandInput for what is skipped), as inputs with the given root.
// Entries that are not regular files are classified by localInput.
func walkLocal(dir, root string, opts Options) ([]Input, error) {
	var rels []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		if d.IsDir() {
			if hiddenName(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rels = append(rels, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	keep := corpusFiles(rels)
	out := make([]Input, len(keep))
	for i, rel := range keep {
		out[i] = localInput(filepath.Join(dir, filepath.FromSlash(rel)), root, opts)
	}
	return out, nil
}

// localInput returns the input of the local path p, not a directory, under
// root: with a SkipReason when p is not a regular file and is not a
// symbolic link to one under root (or anywhere, with opts.FollowLinks).
func localInput(p, root string, opts Options) Input {
	in := Input{Path: p, Root: root}
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode().IsRegular() {
		return in // ReadInput dead-letters what cannot be opened.
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		in.SkipReason = ReasonNotRegularFile
		in.SkipDetail = fmt.Sprintf("%s is not a regular file (mode %s); not read", p, fi.Mode().Type())
		return in
	}
	target, _ := os.Readlink(p)
	real, err := filepath.EvalSymlinks(p)
	if err == nil {
		fi, err = os.Stat(real)
	}
	switch {
	case err != nil:
		in.SkipReason = ReasonBrokenLink
		in.SkipDetail = fmt.Sprintf("symbolic link %s to %q leads nowhere (%v); not read", p, target, err)
	case !opts.FollowLinks && !within(real, root):
		in.SkipReason = ReasonLinkOutside
		in.SkipDetail = fmt.Sprintf("symbolic link %s leads to %s, outside the input %s; not read (--follow_links reads it)", p, real, root)
	case fi.IsDir():
		in.SkipReason = ReasonNotRegularFile
		in.SkipDetail = fmt.Sprintf("symbolic link %s leads to the directory %s, which is not followed; give it as an input of its own", p, real)
	case !fi.Mode().IsRegular():
		in.SkipReason = ReasonNotRegularFile
		in.SkipDetail = fmt.Sprintf("symbolic link %s leads to %s, which is not a regular file (mode %s); not read", p, real, fi.Mode().Type())
	}
	return in
}

// within reports whether the resolved path p lies under the directory
// root once root's own links are resolved.
func within(p, root string) bool {
	r, err := filepath.EvalSymlinks(root)
	if err != nil {
		return false
	}
	if r, err = filepath.Abs(r); err != nil {
		return false
	}
	if p, err = filepath.Abs(p); err != nil {
		return false
	}
	rel, err := filepath.Rel(r, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// isOutputDir reports whether the local directory dir holds a file that
// marks a ctxsim output.
func isOutputDir(dir string) bool {
	for m := range outputMarkers {
		if _, err := os.Stat(filepath.Join(dir, m)); err == nil {
			return true
		}
	}
	return outputShardName.MatchString(filepath.Base(dir))
}

// hiddenName reports whether a file or directory name is hidden: it starts
// with "." (dot files, .tmp- files of jobs) or "_" (manifests, leases,
// _SUCCESS markers).
func hiddenName(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// corpusFiles filters the "/"-separated paths of every file under a
// directory down to the corpus files, sorted: it drops hidden files and
// files under hidden directories, and ctxsim outputs (see ExpandInput).
// The directory itself may be an output: only what is under it is judged.
func corpusFiles(rels []string) []string {
	outputDirs := map[string]bool{}
	for _, rel := range rels {
		dir, base := path.Split(rel)
		if outputMarkers[base] && dir != "" {
			outputDirs[strings.TrimSuffix(dir, "/")] = true
		}
	}
	var out []string
	for _, rel := range rels {
		if !skipped(rel, outputDirs) {
			out = append(out, rel)
		}
	}
	sort.Strings(out)
	return out
}

// skipped reports whether the file rel is hidden, under a hidden
// directory, or a ctxsim output.
func skipped(rel string, outputDirs map[string]bool) bool {
	parts := strings.Split(rel, "/")
	for i, part := range parts {
		if hiddenName(part) {
			return true
		}
		if i < len(parts)-1 && (outputShardName.MatchString(part) || outputDirs[strings.Join(parts[:i+1], "/")]) {
			return true
		}
	}
	return outputPartName.MatchString(parts[len(parts)-1])
}
