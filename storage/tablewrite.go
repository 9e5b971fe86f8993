package storage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"path"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/schemas"
)

// ManifestName is the name of the manifest written into a table directory.
const ManifestName = "_manifest.json"

// Manifest lists the files of a complete table.
type Manifest struct {
	SchemaVersion string `json:"schema_version"`
	Record        string `json:"record"`
	// RunID names the run that wrote every file of the table.
	RunID     string      `json:"run_id,omitempty"`
	NumShards int         `json:"num_shards"`
	Rows      int64       `json:"rows"`
	Files     []FileEntry `json:"files"`
}

// FileEntry is one file of a table: its rows, size in bytes and CRC-32C
// (Castagnoli, as GCS reports it) in hex.
type FileEntry struct {
	Name   string `json:"name"`
	Rows   int64  `json:"rows"`
	Bytes  int64  `json:"bytes"`
	CRC32C string `json:"crc32c"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// runID is this process's run ID: the tables a job builds here record it
// unless their writer names another.
var runID = newRunID()

// RunID returns the ID this process gives the tables it writes.
func RunID() string { return runID }

func newRunID() string {
	return time.Now().UTC().Format("20060102T150405Z") + "-" + randomSuffix()
}

// FileName returns the name of shard i of n.
func FileName(i, n int) string {
	return fmt.Sprintf("part-%05d-of-%05d.parquet", i, n)
}

// countingWriter counts and checksums the bytes written through it.
type countingWriter struct {
	w     io.Writer
	n     int64
	crc32 uint32
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.crc32 = crc32.Update(c.crc32, castagnoli, p[:n])
	return n, err
}

// writeParquet writes dir/name atomically: rows go to a temporary file whose
// name is unique to this attempt, which is renamed when complete. It
// returns the file's entry for the manifest.
func writeParquet(ctx context.Context, dir, name string, t reflect.Type, rowGroupRows int64, run string,
	meta map[string]string, fill func(write func(row any) error) error) (FileEntry, error) {
	fs, err := New(ctx, dir)
	if err != nil {
		return FileEntry{}, err
	}
	defer fs.Close()
	final := join(dir, name)
	tmp := join(dir, ".tmp-"+name+"-"+randomSuffix())
	wc, err := fs.OpenWrite(ctx, tmp)
	if err != nil {
		return FileEntry{}, fmt.Errorf("create %s: %w", tmp, err)
	}
	cw := &countingWriter{w: wc}
	pw := schemas.NewWriter(cw, t, schemas.WriterOptions{RowGroupRows: rowGroupRows, RunID: run, Metadata: meta})
	var n int64
	ferr := fill(func(row any) error {
		if err := pw.Write(row); err != nil {
			return fmt.Errorf("write %s: %w", final, err)
		}
		n++
		return nil
	})
	if ferr == nil {
		if err := pw.Close(); err != nil {
			ferr = fmt.Errorf("write %s: %w", final, err)
		}
	}
	if cerr := wc.Close(); ferr == nil && cerr != nil {
		ferr = fmt.Errorf("write %s: %w", final, cerr)
	}
	if ferr != nil {
		removeQuietly(ctx, fs, tmp)
		return FileEntry{}, ferr
	}
	// What reached the filesystem must be what was written (a full disk can
	// cut a file short without an error from every layer).
	if size, err := fs.Size(ctx, tmp); err != nil || size != cw.n {
		removeQuietly(ctx, fs, tmp)
		return FileEntry{}, fmt.Errorf("write %s: %d bytes written, %d on disk (%v)", final, cw.n, size, err)
	}
	if err := fs.Rename(ctx, tmp, final); err != nil {
		removeQuietly(ctx, fs, tmp)
		return FileEntry{}, fmt.Errorf("rename %s to %s: %w", tmp, final, err)
	}
	return FileEntry{Name: name, Rows: n, Bytes: cw.n, CRC32C: fmt.Sprintf("%08x", cw.crc32)}, nil
}

// TableSpec names a sharded table: its directory, number of files, the
// record type and the run that writes it.
type TableSpec struct {
	Dir       string
	NumShards int
	Type      reflect.Type
	RunID     string
	// RowGroupRows bounds the rows per row group; 0 means
	// schemas.DefaultRowGroupRows.
	RowGroupRows int64
	// Metadata is more key/value metadata written into every file of the
	// table (schemas.WriterOptions.Metadata), empty shards' included.
	Metadata map[string]string
	// Part and Parts split the table among Parts writers that run one
	// after another (a harvest in waves): part p writes the table's files
	// p*NumShards to (p+1)*NumShards-1 of Parts*NumShards, and its Commit
	// records them in a part record rather than the manifest; CommitParts
	// writes the manifest once every part is recorded. Parts 0 means 1.
	Part, Parts int
}

// ShardName is the name of the part's shard i among all the table's files.
func (t TableSpec) ShardName(i int) string {
	return FileName(t.Part*t.NumShards+i, max(t.Parts, 1)*t.NumShards)
}

// WriteShard writes shard i of the table (of the part) atomically (see
// writeParquet), with the rows fill passes to its writer, and returns the
// file's entry.
func (t TableSpec) WriteShard(ctx context.Context, i int, fill func(write func(row any) error) error) (FileEntry, error) {
	return writeParquet(ctx, t.Dir, t.ShardName(i), t.Type, t.RowGroupRows, t.RunID, t.Metadata, fill)
}

// Commit completes the table once every shard is written: it checks that
// each shard that was sent rows (sent, by shard) reported exactly that
// many written (reported, by file name), writes empty files for shards
// sent none, removes files of earlier runs and temporary files of failed
// attempts, and writes the manifest last. It returns the manifest's path.
// Of a table in parts (Parts > 1) it writes the part's record instead, and
// returns that record's path. After Abandon it commits nothing.
func (t TableSpec) Commit(ctx context.Context, reported map[string]FileEntry, sent map[int]int64) (string, error) {
	if abandoned.Load() {
		return "", errAbandoned(t.Dir)
	}
	m := Manifest{SchemaVersion: schemas.Version, Record: t.Type.Name(), RunID: t.RunID, NumShards: t.NumShards}
	for i := 0; i < t.NumShards; i++ {
		name := t.ShardName(i)
		e, ok := reported[name]
		switch {
		case !ok && sent[i] > 0:
			return "", fmt.Errorf("%s: shard %s was sent %d rows but never reported writing them; no manifest written",
				t.Dir, name, sent[i])
		case ok && e.Rows != sent[i]:
			return "", fmt.Errorf("%s: shard %s was sent %d rows but wrote %d; no manifest written",
				t.Dir, name, sent[i], e.Rows)
		case !ok:
			var err error
			if e, err = t.WriteShard(ctx, i, func(func(any) error) error { return nil }); err != nil {
				return "", err
			}
		}
		m.Files = append(m.Files, e)
		m.Rows += e.Rows
	}
	fs, err := New(ctx, t.Dir)
	if err != nil {
		return "", err
	}
	defer fs.Close()
	if t.Parts > 1 {
		return writeRecord(ctx, fs, t.Dir, partRecordName(t.Part, t.Parts), m)
	}
	if err := removeStale(ctx, fs, t.Dir, t.NumShards); err != nil {
		return "", err
	}
	mp, err := writeRecord(ctx, fs, t.Dir, ManifestName, m)
	if err != nil {
		return "", err
	}
	return mp, removePartRecords(ctx, fs, t.Dir)
}

// writeRecord writes m as dir/name atomically, unless the run has been
// abandoned meanwhile, and returns its path.
func writeRecord(ctx context.Context, fs FS, dir, name string, m Manifest) (string, error) {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return "", err
	}
	return commitBytes(ctx, fs, dir, name, append(b, '\n'))
}

// CommitFile writes data as dir/name, a file that marks a run's output
// complete (a chunk index's metadata), the way a table's manifest is
// written: atomically, and not at all once the run has been abandoned
// (Abandon). A finalize step that a runner still drives after the job has
// failed, and after the failed run's marks were withdrawn, then leaves
// none behind.
func CommitFile(ctx context.Context, dir, name string, data []byte) error {
	if abandoned.Load() {
		return errAbandoned(dir)
	}
	fs, err := New(ctx, dir)
	if err != nil {
		return err
	}
	defer fs.Close()
	_, err = commitBytes(ctx, fs, dir, name, data)
	return err
}

// commitBytes writes data as dir/name through a temporary file renamed
// into place, unless the run has been abandoned by then, and returns its
// path.
func commitBytes(ctx context.Context, fs FS, dir, name string, b []byte) (string, error) {
	mp := join(dir, name)
	tmp := join(dir, ".tmp-"+name+"-"+randomSuffix())
	if err := Write(ctx, fs, tmp, b); err != nil {
		removeQuietly(ctx, fs, tmp)
		return "", fmt.Errorf("write %s: %w", mp, err)
	}
	if abandoned.Load() {
		removeQuietly(ctx, fs, tmp)
		return "", errAbandoned(dir)
	}
	if err := fs.Rename(ctx, tmp, mp); err != nil {
		removeQuietly(ctx, fs, tmp)
		return "", fmt.Errorf("write %s: %w", mp, err)
	}
	return mp, nil
}

// partRecordName is the name of the record of part p of n (see
// TableSpec.Part): a manifest of the part's files alone.
func partRecordName(p, n int) string {
	return fmt.Sprintf("_part-%05d-of-%05d.json", p, n)
}

// CommitParts completes a table written in t.Parts parts (see
// TableSpec.Part) once each has committed: every part's record must be
// there and name t.RunID, and list exactly the part's files. It removes
// files of earlier runs and temporary files, writes the manifest of all
// the parts' files, and then removes the part records. It returns the
// manifest's path. After Abandon it commits nothing. A table this run has
// already committed (its manifest names t.RunID and has every part's
// files, and no part record is left) is left as it is, so that a harvest
// stopped between committing its tables can commit the rest.
func (t TableSpec) CommitParts(ctx context.Context) (string, error) {
	if abandoned.Load() {
		return "", errAbandoned(t.Dir)
	}
	parts := max(t.Parts, 1)
	fs, err := New(ctx, t.Dir)
	if err != nil {
		return "", err
	}
	defer fs.Close()
	if done, err := t.committed(ctx, fs, parts); err != nil {
		return "", err
	} else if done {
		return join(t.Dir, ManifestName), nil
	}
	total := Manifest{SchemaVersion: schemas.Version, Record: t.Type.Name(), RunID: t.RunID, NumShards: parts * t.NumShards}
	for p := range parts {
		rp := join(t.Dir, partRecordName(p, parts))
		m, ok, err := readRecord(ctx, fs, t.Dir, partRecordName(p, parts))
		if err != nil {
			return "", err
		}
		if !ok {
			return "", fmt.Errorf("%s: part %d of %d has no record; no manifest written", t.Dir, p, parts)
		}
		part := t
		part.Part = p
		if m.RunID != t.RunID || m.Record != total.Record || len(m.Files) != t.NumShards {
			return "", fmt.Errorf("%s: a record of run %s with %d %s files, want run %s with %d; no manifest written",
				rp, m.RunID, len(m.Files), m.Record, t.RunID, t.NumShards)
		}
		for i, e := range m.Files {
			if e.Name != part.ShardName(i) {
				return "", fmt.Errorf("%s: lists %s where %s belongs; no manifest written", rp, e.Name, part.ShardName(i))
			}
		}
		total.Files = append(total.Files, m.Files...)
		total.Rows += m.Rows
	}
	if err := removeStale(ctx, fs, t.Dir, total.NumShards); err != nil {
		return "", err
	}
	mp, err := writeRecord(ctx, fs, t.Dir, ManifestName, total)
	if err != nil {
		return "", err
	}
	return mp, removePartRecords(ctx, fs, t.Dir)
}

// committed reports whether CommitParts has already completed the table
// for t.RunID: no part record left, and a manifest of this run and record
// type listing every part's files.
func (t TableSpec) committed(ctx context.Context, fs FS, parts int) (bool, error) {
	records, err := fs.List(ctx, join(t.Dir, "_part-*.json"))
	if err != nil || len(records) > 0 {
		return false, err
	}
	m, ok, err := readRecord(ctx, fs, t.Dir, ManifestName)
	if err != nil || !ok {
		return false, err
	}
	return m.RunID == t.RunID && m.Record == t.Type.Name() && m.NumShards == parts*t.NumShards &&
		len(m.Files) == m.NumShards, nil
}

// removePartRecords removes the part records in dir: once a table has its
// manifest, they are this run's, already merged into it, or an unfinished
// earlier run's.
func removePartRecords(ctx context.Context, fs FS, dir string) error {
	records, err := fs.List(ctx, join(dir, "_part-*.json"))
	if err != nil {
		return err
	}
	for _, rp := range records {
		if err := fs.Remove(ctx, rp); err != nil {
			return fmt.Errorf("remove %s: %w", rp, err)
		}
	}
	return nil
}

// WriteTable writes rows as a complete one-file table under dir, with its
// manifest, as this process's run.
func WriteTable[T any](ctx context.Context, dir string, rows []T) error {
	t := TableSpec{Dir: dir, NumShards: 1, Type: reflect.TypeOf(*new(T)), RunID: RunID()}
	e, err := t.WriteShard(ctx, 0, func(write func(any) error) error {
		for _, r := range rows {
			if err := write(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	_, err = t.Commit(ctx, map[string]FileEntry{e.Name: e}, map[int]int64{0: e.Rows})
	return err
}

// removeStale deletes part files that are not among this run's n shards and
// temporary files left by failed attempts.
func removeStale(ctx context.Context, fs FS, dir string, n int) error {
	keep := make(map[string]bool, n)
	for i := 0; i < n; i++ {
		keep[FileName(i, n)] = true
	}
	var stale []string
	for _, pattern := range []string{join(dir, "part-*.parquet"), join(dir, ".tmp-*")} {
		files, err := fs.List(ctx, pattern)
		if err != nil {
			return err
		}
		for _, p := range files {
			if !keep[path.Base(p)] {
				stale = append(stale, p)
			}
		}
	}
	if len(stale) == 0 {
		return nil
	}
	sort.Strings(stale)
	for _, p := range stale {
		if err := fs.Remove(ctx, p); err != nil {
			return fmt.Errorf("remove stale %s: %w", p, err)
		}
	}
	return nil
}

func removeQuietly(ctx context.Context, fs FS, p string) {
	fs.Remove(ctx, p)
}

// join joins a directory (path or URL) and a file name.
func join(dir, name string) string {
	return strings.TrimSuffix(dir, "/") + "/" + name
}

func randomSuffix() string {
	var b [8]byte
	if _, err := io.ReadFull(rand.Reader, b[:]); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b[:])
}
