package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/ctxsim/ctxsim/schemas"
)

// Glob lists the files matching pattern, sorted, skipping the temporary
// files and manifests that Write leaves beside its output. It fails when
// none match, and checks every table the files belong to against its
// manifest (see CheckTable).
func Glob(ctx context.Context, pattern string) ([]string, error) {
	fs, err := New(ctx, pattern)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	all, err := fs.List(ctx, pattern)
	if err != nil {
		return nil, withName(err, "list %s", pattern)
	}
	var files []string
	for _, p := range all {
		base := p[strings.LastIndex(p, "/")+1:]
		if strings.HasPrefix(base, ".tmp-") || strings.HasPrefix(base, "_part-") || base == ManifestName {
			continue
		}
		files = append(files, p)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no files match %s", pattern)
	}
	sort.Strings(files)
	byDir := map[string][]string{}
	for _, p := range files {
		dir := p[:strings.LastIndex(p, "/")+1]
		byDir[dir] = append(byDir[dir], p)
	}
	patternBase := pattern[strings.LastIndex(pattern, "/")+1:]
	for dir, matched := range byDir {
		if err := checkMatched(ctx, fs, strings.TrimSuffix(dir, "/"), patternBase, matched); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// partName matches the names Write gives a table's files.
var partName = regexp.MustCompile(`^part-\d{5}-of-\d{5}\.parquet$`)

func errUnfinished(file string) error {
	return fmt.Errorf("%s: part file of a table with no %s: the run that wrote it did not finish (run it again)",
		file, ManifestName)
}

func errUnlisted(file, dir string) error {
	return fmt.Errorf("%s: not listed in %s (a file from another run?)", file, join(dir, ManifestName))
}

// readManifest reads dir's manifest; ok is false when there is none.
func readManifest(ctx context.Context, fs FS, dir string) (m Manifest, ok bool, err error) {
	return readRecord(ctx, fs, dir, ManifestName)
}

// readRecord reads dir/name, a manifest or a part record (TableSpec.Part);
// ok is false when there is none.
func readRecord(ctx context.Context, fs FS, dir, name string) (m Manifest, ok bool, err error) {
	mp := join(dir, name)
	rc, err := fs.OpenRead(ctx, mp)
	if err != nil {
		// Not every filesystem wraps "not found" as fs.ErrNotExist (GCS
		// does not): an absent manifest is told by listing it, unless
		// storage did not answer.
		if unreachable(err) {
			return m, false, err
		}
		if found, lerr := fs.List(ctx, mp); lerr == nil && len(found) == 0 {
			return m, false, nil
		}
		return m, false, withName(err, "read %s", mp)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return m, false, withName(err, "read %s", mp)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, false, fmt.Errorf("%s: not a valid %s: %w", mp, kindOf(name), err)
	}
	if err := checkRecord(m, name); err != nil {
		return m, false, fmt.Errorf("%s: not a valid %s: %w (corrupt or edited)", mp, kindOf(name), err)
	}
	return m, true, nil
}

// kindOf names what a record file is, for errors.
func kindOf(name string) string {
	if name == ManifestName {
		return "manifest"
	}
	return "part record"
}

// checkRecord checks that m, read from the file name, lists one file per
// shard and each file once; a manifest's files are the shards' in order,
// named as FileName names them (a part record's are numbered among all the
// parts' files, which CommitParts checks).
func checkRecord(m Manifest, name string) error {
	if len(m.Files) != m.NumShards {
		return fmt.Errorf("num_shards is %d and %d files are listed", m.NumShards, len(m.Files))
	}
	seen := make(map[string]bool, len(m.Files))
	for i, e := range m.Files {
		if name == ManifestName && e.Name != FileName(i, m.NumShards) {
			return fmt.Errorf("file %d is %q, want %q", i, e.Name, FileName(i, m.NumShards))
		}
		if seen[e.Name] {
			return fmt.Errorf("%q is listed twice", e.Name)
		}
		seen[e.Name] = true
	}
	return nil
}

// checkMatched checks the files a glob matched in dir (their base names
// matching patternBase) against dir's manifest: every matched part file is
// listed, with its size, and every listed file the glob would match is
// there. Part files without a manifest are a table whose run did not
// finish. Files that are not part files, in a directory with no manifest,
// are read as they are (Parquet written elsewhere).
func checkMatched(ctx context.Context, fs FS, dir, patternBase string, matched []string) error {
	m, ok, err := readManifest(ctx, fs, dir)
	if err != nil {
		return err
	}
	if !ok {
		for _, p := range matched {
			if partName.MatchString(path.Base(p)) {
				return errUnfinished(p)
			}
		}
		return nil
	}
	listed := make(map[string]FileEntry, len(m.Files))
	for _, e := range m.Files {
		listed[e.Name] = e
	}
	have := make(map[string]bool, len(matched))
	for _, p := range matched {
		base := path.Base(p)
		have[base] = true
		e, ok := listed[base]
		if !ok {
			return errUnlisted(p, dir)
		}
		if e.Bytes > 0 {
			size, err := fs.Size(ctx, p)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			if size != e.Bytes {
				return fmt.Errorf("%s: %d bytes, its manifest says %d (truncated or replaced)", p, size, e.Bytes)
			}
		}
	}
	for _, e := range m.Files {
		if match, _ := path.Match(patternBase, e.Name); match && !have[e.Name] {
			return fmt.Errorf("%s: listed in %s but missing", join(dir, e.Name), join(dir, ManifestName))
		}
	}
	return nil
}

// CheckTable checks a table directory written by Write against its
// manifest, without reading rows: every listed file is there with its size,
// and no part file is unlisted. It returns the manifest.
func CheckTable(ctx context.Context, dir string) (Manifest, error) {
	fs, err := New(ctx, dir)
	if err != nil {
		return Manifest{}, err
	}
	defer fs.Close()
	m, ok, err := readManifest(ctx, fs, dir)
	if err != nil {
		return m, err
	}
	if !ok {
		return m, fmt.Errorf("%s: no %s: not a complete table", dir, ManifestName)
	}
	files, err := fs.List(ctx, join(dir, "part-*.parquet"))
	if err != nil {
		return m, withName(err, "list %s", dir)
	}
	return m, checkMatched(ctx, fs, dir, "part-*.parquet", files)
}

// ReadRows reads every row of one Parquet file (local or remote) as values
// of type t and passes them to fn; it is the reader for callers that know
// the record type only at run time (the Beam source). A file whose metadata
// or manifest names another record type than t's is refused (see
// openChecked for every check). See ScanFile.
func ReadRows(ctx context.Context, name string, t reflect.Type, fn func(any) error) (int64, error) {
	f, err := openChecked(ctx, name, t)
	if err != nil {
		return 0, err
	}
	defer f.close()
	r := parquet.NewReader(f.fh, parquet.SchemaOf(reflect.New(t).Interface()))
	defer r.Close()
	var n int64
	for {
		v := reflect.New(t)
		if err := r.Read(v.Interface()); err == io.EOF {
			return n, nil
		} else if err != nil {
			return n, fmt.Errorf("%s: row %d: %w", name, n, err)
		}
		if err := fn(v.Elem().Interface()); err != nil {
			return n, err
		}
		n++
	}
}

// ScanFile passes the rows of one Parquet file (local or remote), read as
// T, to fn until fn returns false. It checks the file as ReadRows does.
func ScanFile[T any](ctx context.Context, name string, fn func(T) bool) (bool, error) {
	f, err := openChecked(ctx, name, reflect.TypeFor[T]())
	if err != nil {
		return false, err
	}
	defer f.close()
	r := parquet.NewGenericReader[T](f.fh)
	defer r.Close()
	buf := make([]T, 256)
	var n int64
	for {
		k, err := r.Read(buf)
		for _, v := range buf[:k] {
			if !fn(v) {
				return false, nil
			}
		}
		n += int64(k)
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			return false, fmt.Errorf("%s: row %d: %w", name, n, err)
		}
	}
}

// checkedFile is an open Parquet file that passed the checks of
// openChecked; remote files are read from a local temporary copy.
type checkedFile struct {
	fh  *os.File
	tmp string
}

func (f *checkedFile) close() {
	f.fh.Close()
	if f.tmp != "" {
		os.Remove(f.tmp)
	}
}

// openChecked opens one Parquet file (remote files are copied to a local
// temporary file first, since Parquet needs random access) to be read as
// records of type t, and checks it: this project's schema version, the
// record type its metadata names (see checkRecordType) and, for a file of a
// table written with a manifest, the manifest's record type and the file's
// size, CRC-32C, row count and run ID.
func openChecked(ctx context.Context, name string, t reflect.Type) (_ *checkedFile, err error) {
	want := recordName(t)
	entry, m, err := manifestEntry(ctx, name)
	if err != nil {
		return nil, err
	}
	if entry != nil && m.Record != want {
		return nil, fmt.Errorf("%s: its manifest %s says it holds %s records; expected %s records",
			name, join(m.dir, ManifestName), quoteRecord(m.Record), want)
	}
	f := &checkedFile{}
	local := name
	if strings.Contains(name, "://") {
		if f.tmp, err = fetch(ctx, name); err != nil {
			return nil, err
		}
		local = f.tmp
	}
	if f.fh, err = os.Open(local); err != nil {
		if f.tmp != "" {
			os.Remove(f.tmp)
		}
		return nil, err
	}
	defer func() {
		if err != nil {
			f.close()
		}
	}()
	st, err := f.fh.Stat()
	if err != nil {
		return nil, err
	}
	if entry != nil {
		if err := checkFile(f.fh, st.Size(), *entry); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	pf, err := parquet.OpenFile(f.fh, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := schemas.CheckVersion(pf); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := checkRecordType(pf, want); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if entry != nil {
		if pf.NumRows() != entry.Rows {
			return nil, fmt.Errorf("%s: %d rows, its manifest says %d", name, pf.NumRows(), entry.Rows)
		}
		if got, _ := pf.Lookup(schemas.MetaRunKey); m.RunID != "" && got != m.RunID {
			return nil, fmt.Errorf("%s: written by run %q, its manifest by run %q", name, got, m.RunID)
		}
	}
	return f, nil
}

// recordName is the name of the record type t as writers record it, in
// the manifest and in each file's metadata (schemas.MetaRecordKey).
func recordName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// quoteRecord is a record name for errors: an empty one is spelled out.
func quoteRecord(r string) string {
	if r == "" {
		return "no named"
	}
	return r
}

// checkRecordType checks that the file's metadata names want as its record
// type. Parquet would read a file of another type as rows of zero values
// (the columns of the same name it shares, none at all) or as the wrong
// records without a word. A file with no record type in its metadata is
// refused too: every writer of this project has recorded it
// (schemas.NewWriter) since the schema version was first written beside
// it, so such a file was written by another program.
func checkRecordType(pf *parquet.File, want string) error {
	got, ok := pf.Lookup(schemas.MetaRecordKey)
	if !ok {
		return fmt.Errorf("no %s metadata naming its record type: not written by ctxsim; expected %s records",
			schemas.MetaRecordKey, want)
	}
	if got != want {
		return fmt.Errorf("holds %s records (its %s metadata); expected %s records", quoteRecord(got), schemas.MetaRecordKey, want)
	}
	return nil
}

// ReadTable reads every row of a Parquet table written by a job
// (dir/part-*.parquet), local or remote.
func ReadTable[T any](ctx context.Context, dir string) ([]T, error) {
	var all []T
	err := ScanTable(ctx, dir, func(v T) bool {
		all = append(all, v)
		return true
	})
	return all, err
}

// ScanTable passes the rows of a table written by a job (dir/part-*.parquet,
// local or remote), file after file, to fn until fn returns false.
func ScanTable[T any](ctx context.Context, dir string, fn func(T) bool) error {
	return ScanGlob(ctx, Join(dir, "part-*.parquet"), fn)
}

// ScanGlob is ScanTable over the Parquet files matching a glob (see Glob).
func ScanGlob[T any](ctx context.Context, pattern string, fn func(T) bool) error {
	files, err := Glob(ctx, pattern)
	if err != nil {
		return err
	}
	for _, f := range files {
		more, err := ScanFile(ctx, f, fn)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// tableManifest is a table's manifest and the directory it was read from.
type tableManifest struct {
	Manifest
	dir string
}

// manifestEntry returns the manifest entry of name and the table's
// manifest when name is a file of a table with a manifest (a nil entry when
// it is not).
func manifestEntry(ctx context.Context, name string) (*FileEntry, tableManifest, error) {
	dir, base := name[:max(strings.LastIndex(name, "/"), 0)], path.Base(name)
	if dir == "" {
		dir = "."
	}
	fs, err := New(ctx, name)
	if err != nil {
		return nil, tableManifest{}, err
	}
	defer fs.Close()
	m, ok, err := readManifest(ctx, fs, dir)
	if err != nil {
		return nil, tableManifest{}, err
	}
	if !ok {
		if partName.MatchString(base) {
			return nil, tableManifest{}, errUnfinished(name)
		}
		return nil, tableManifest{}, nil
	}
	for _, e := range m.Files {
		if e.Name == base {
			return &e, tableManifest{Manifest: m, dir: dir}, nil
		}
	}
	return nil, tableManifest{}, errUnlisted(name, dir)
}

// checkFile compares an open file's size and CRC-32C with its manifest
// entry (entries from before checksums were recorded are not checked).
func checkFile(fh *os.File, size int64, e FileEntry) error {
	if e.CRC32C == "" {
		return nil
	}
	if size != e.Bytes {
		return fmt.Errorf("%d bytes, its manifest says %d (truncated or replaced)", size, e.Bytes)
	}
	h := crc32.New(castagnoli)
	if _, err := io.Copy(h, io.NewSectionReader(fh, 0, size)); err != nil {
		return err
	}
	if got := fmt.Sprintf("%08x", h.Sum32()); got != e.CRC32C {
		return fmt.Errorf("checksum %s, its manifest says %s (corrupt or replaced)", got, e.CRC32C)
	}
	return nil
}

func fetch(ctx context.Context, name string) (string, error) {
	fs, err := New(ctx, name)
	if err != nil {
		return "", err
	}
	defer fs.Close()
	rc, err := fs.OpenRead(ctx, name)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	tmp, err := os.CreateTemp("", "ctxsim-*.parquet")
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(tmp, rc); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", withName(err, "fetch %s", name)
	}
	return tmp.Name(), tmp.Close()
}

// ReadParquet reads every row of one Parquet file (local or remote) as T,
// with ScanFile's checks.
func ReadParquet[T any](ctx context.Context, name string) ([]T, error) {
	var all []T
	_, err := ScanFile(ctx, name, func(v T) bool {
		all = append(all, v)
		return true
	})
	return all, err
}

// ReadMetadata returns the key/value metadata of the Parquet file name
// (local or remote), checked as ReadRows checks a file of records of type
// t: the schema version, the record type and, for a file of a table with a
// manifest, its size, checksum, rows and run.
func ReadMetadata(ctx context.Context, name string, t reflect.Type) (map[string]string, error) {
	f, err := openChecked(ctx, name, t)
	if err != nil {
		return nil, err
	}
	defer f.close()
	st, err := f.fh.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f.fh, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	out := map[string]string{}
	for _, kv := range pf.Metadata().KeyValueMetadata {
		out[kv.Key] = kv.Value
	}
	return out, nil
}
