package parquetio

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

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/parquet-go/parquet-go"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/transforms/counter"
)

func init() {
	register.DoFn3x1[context.Context, string, func(string), error](&globFn{})
	register.Emitter1[string]()
	register.DoFn3x1[context.Context, string, func(beam.T), error](&readFn{})
	register.Emitter1[beam.T]()
}

// Read reads the Parquet files matching pattern (a glob, local or gs://) as
// records of type t. Every file must carry this project's schema version.
func Read(s beam.Scope, pattern string, t reflect.Type) beam.PCollection {
	s = s.Scope("parquetio.Read")
	files := beam.Reshuffle(s, MatchFiles(s, []string{pattern}))
	return beam.ParDo(s, &readFn{Type: beam.EncodedType{T: t}}, files, beam.TypeDefinition{Var: beam.TType, T: t})
}

// MatchFiles expands globs (local or gs://) into the file names they match,
// with Glob's rules: a glob that matches no file fails the job.
func MatchFiles(s beam.Scope, patterns []string) beam.PCollection {
	return beam.ParDo(s.Scope("MatchFiles"), &globFn{}, beam.CreateList(s, patterns))
}

// globFn expands a glob into file names, sorted. A glob matching no file is
// an error: a misspelt input must not silently produce an empty result.
type globFn struct{}

func (f *globFn) ProcessElement(ctx context.Context, pattern string, emit func(string)) error {
	files, err := Glob(ctx, pattern)
	if err != nil {
		return err
	}
	for _, p := range files {
		emit(p)
	}
	return nil
}

// Glob lists the files matching pattern, sorted, skipping the temporary
// files and manifests that Write leaves beside its output. It fails when
// none match, and checks every table the files belong to against its
// manifest (see CheckTable).
func Glob(ctx context.Context, pattern string) ([]string, error) {
	fs, err := filesystem.New(ctx, pattern)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	all, err := fs.List(ctx, pattern)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", pattern, err)
	}
	var files []string
	for _, p := range all {
		base := p[strings.LastIndex(p, "/")+1:]
		if strings.HasPrefix(base, ".tmp-") || base == ManifestName {
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
func readManifest(ctx context.Context, fs filesystem.Interface, dir string) (m Manifest, ok bool, err error) {
	mp := join(dir, ManifestName)
	rc, err := fs.OpenRead(ctx, mp)
	if err != nil {
		// Not every filesystem wraps "not found" as fs.ErrNotExist (GCS
		// does not): an absent manifest is told by listing it.
		if found, lerr := fs.List(ctx, mp); lerr == nil && len(found) == 0 {
			return m, false, nil
		}
		return m, false, fmt.Errorf("read %s: %w", mp, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return m, false, fmt.Errorf("read %s: %w", mp, err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, false, fmt.Errorf("%s: not a valid manifest: %w", mp, err)
	}
	return m, true, nil
}

// checkMatched checks the files a glob matched in dir (their base names
// matching patternBase) against dir's manifest: every matched part file is
// listed, with its size, and every listed file the glob would match is
// there. Part files without a manifest are a table whose run did not
// finish. Files that are not part files, in a directory with no manifest,
// are read as they are (Parquet written elsewhere).
func checkMatched(ctx context.Context, fs filesystem.Interface, dir, patternBase string, matched []string) error {
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
	fs, err := filesystem.New(ctx, dir)
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
		return m, fmt.Errorf("list %s: %w", dir, err)
	}
	return m, checkMatched(ctx, fs, dir, "part-*.parquet", files)
}

type readFn struct {
	Type beam.EncodedType

	rows counter.Counter
}

func (f *readFn) Setup() {
	f.rows = counter.New("parquetio", "rows_read")
}

func (f *readFn) ProcessElement(ctx context.Context, name string, emit func(beam.T)) error {
	n, err := ReadFile(ctx, name, f.Type.T, func(v any) error {
		emit(v)
		return nil
	})
	f.rows.Inc(ctx, n)
	return err
}

// ReadFile reads every row of one Parquet file (local or remote) as values
// of type t and passes them to fn. Remote files are copied to a local
// temporary file first, since Parquet needs random access. A file of a
// table written by Write is checked against the table's manifest first:
// size, CRC-32C, row count and run ID.
func ReadFile(ctx context.Context, name string, t reflect.Type, fn func(any) error) (int64, error) {
	entry, run, err := manifestEntry(ctx, name)
	if err != nil {
		return 0, err
	}
	local := name
	if strings.Contains(name, "://") {
		tmp, err := fetch(ctx, name)
		if err != nil {
			return 0, err
		}
		defer os.Remove(tmp)
		local = tmp
	}
	fh, err := os.Open(local)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return 0, err
	}
	if entry != nil {
		if err := checkFile(fh, st.Size(), *entry); err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
	}
	pf, err := parquet.OpenFile(fh, st.Size())
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	if err := schemas.CheckVersion(pf); err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	if entry != nil {
		if pf.NumRows() != entry.Rows {
			return 0, fmt.Errorf("%s: %d rows, its manifest says %d", name, pf.NumRows(), entry.Rows)
		}
		if got, _ := pf.Lookup(schemas.MetaRunKey); run != "" && got != run {
			return 0, fmt.Errorf("%s: written by run %q, its manifest by run %q", name, got, run)
		}
	}
	r := parquet.NewReader(fh, parquet.SchemaOf(reflect.New(t).Interface()))
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

// manifestEntry returns the manifest entry of name and the table's run ID
// when name is a file of a table with a manifest (nil when it is not).
func manifestEntry(ctx context.Context, name string) (*FileEntry, string, error) {
	dir, base := name[:max(strings.LastIndex(name, "/"), 0)], path.Base(name)
	if dir == "" {
		dir = "."
	}
	fs, err := filesystem.New(ctx, name)
	if err != nil {
		return nil, "", err
	}
	defer fs.Close()
	m, ok, err := readManifest(ctx, fs, dir)
	if err != nil {
		return nil, "", err
	}
	if !ok {
		if partName.MatchString(base) {
			return nil, "", errUnfinished(name)
		}
		return nil, "", nil
	}
	for _, e := range m.Files {
		if e.Name == base {
			return &e, m.RunID, nil
		}
	}
	return nil, "", errUnlisted(name, dir)
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
	fs, err := filesystem.New(ctx, name)
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
		return "", fmt.Errorf("fetch %s: %w", name, err)
	}
	return tmp.Name(), tmp.Close()
}
