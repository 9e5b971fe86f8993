// Package parquetio reads and writes ctxsim records as sharded Parquet files
// in Beam pipelines, on any filesystem Beam knows (local paths, gs://).
//
// Write produces one file per shard with a deterministic name,
// dir/part-SSSSS-of-NNNNN.parquet, plus dir/_manifest.json listing the files
// with their row counts, sizes and CRC-32C checksums, and the ID of the run
// that wrote them (also in each file's metadata). Each file is written under
// a temporary name and renamed when complete; the manifest is written last,
// and only when every shard that was sent rows reported exactly that many
// rows written: a lost shard fails the run instead of becoming an empty
// file. A rerun overwrites the same names and removes files of earlier runs
// that it did not write, so the directory never holds partial or duplicate
// data once the job succeeds.
//
// Readers (Glob, ReadFile, Read) open a table through its manifest: a
// listed file that is missing, a part file that is not listed, a file whose
// size, checksum, row count or run ID differs from the manifest, and part
// files with no manifest at all (an interrupted run) are errors naming the
// file.
package parquetio

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"path"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/transforms/counter"
)

func init() {
	register.DoFn2x1[beam.T, func(int, beam.T), error](&keyByShardFn{})
	register.Emitter2[int, beam.T]()
	register.DoFn3x2[context.Context, int, func(*beam.T) bool, string, error](&writeShardFn{})
	register.Iter1[beam.T]()
	register.DoFn4x2[context.Context, []byte, func(*string) bool, func(*int, *int64) bool, string, error](&finalizeFn{})
	register.Iter1[string]()
	register.Iter2[int, int64]()
	register.DoFn2x2[int, beam.T, int, int64](&shardOneFn{})
	register.Function2x1[int64, int64, int64](sumRows)
}

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

// runID is this process's run ID: Write records it in the tables a job
// builds here, unless Config.RunID names another.
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

// Config configures Write.
type Config struct {
	// Dir is the table's directory (local path or gs:// URL).
	Dir string
	// NumShards is the number of files; 0 means 1.
	NumShards int
	// RowGroupRows bounds the rows per row group and so the memory of each
	// writer; 0 means schemas.DefaultRowGroupRows.
	RowGroupRows int64
	// RunID is recorded in every file and in the manifest; empty means
	// RunID().
	RunID string
}

// Write writes col, a PCollection of a struct type with parquet tags, as a
// sharded Parquet table under cfg.Dir. It returns a PCollection holding the
// manifest's path once the table is complete.
func Write(s beam.Scope, cfg Config, col beam.PCollection) beam.PCollection {
	s = s.Scope("parquetio.Write")
	if cfg.NumShards <= 0 {
		cfg.NumShards = 1
	}
	if cfg.RunID == "" {
		cfg.RunID = runID
	}
	t := col.Type().Type()
	keyed := beam.ParDo(s, &keyByShardFn{NumShards: cfg.NumShards}, col)
	grouped := beam.GroupByKey(s, keyed)
	written := beam.ParDo(s, &writeShardFn{
		Dir: cfg.Dir, NumShards: cfg.NumShards, RowGroupRows: cfg.RowGroupRows, RunID: cfg.RunID,
		Type: beam.EncodedType{T: t},
	}, grouped)
	// What each shard was sent, counted apart from the writers: the
	// manifest is written only if every shard reports exactly that.
	sent := beam.CombinePerKey(s, sumRows, beam.ParDo(s, &shardOneFn{}, keyed))
	return beam.ParDo(s, &finalizeFn{
		Dir: cfg.Dir, NumShards: cfg.NumShards, RunID: cfg.RunID, Type: beam.EncodedType{T: t},
	}, beam.Impulse(s), beam.SideInput{Input: written}, beam.SideInput{Input: sent})
}

// shardOneFn maps a keyed record to (shard, 1).
type shardOneFn struct{}

func (shardOneFn) ProcessElement(shard int, _ beam.T) (int, int64) { return shard, 1 }

func sumRows(a, b int64) int64 { return a + b }

// Keyed is implemented by records with an identity (an ID). Write assigns
// them to files by a hash of Key; other records are hashed whole.
type Keyed interface {
	Key() string
}

// keyByShardFn assigns each record to a shard by a hash of its key (or of
// its JSON form), so a record lands in the same file on every run.
type keyByShardFn struct {
	NumShards int
}

func (f *keyByShardFn) ProcessElement(row beam.T, emit func(int, beam.T)) error {
	h := fnv.New64a()
	if k, ok := row.(Keyed); ok {
		h.Write([]byte(k.Key()))
	} else {
		b, err := json.Marshal(row)
		if err != nil {
			return err
		}
		h.Write(b)
	}
	emit(int(h.Sum64()%uint64(f.NumShards)), row)
	return nil
}

// writeShardFn writes one shard's rows to a temporary file and renames it to
// the shard's final name. It emits the file's FileEntry as JSON.
type writeShardFn struct {
	Dir          string
	NumShards    int
	RowGroupRows int64
	RunID        string
	Type         beam.EncodedType

	rows counter.Counter
}

func (f *writeShardFn) Setup() {
	f.rows = counter.New("parquetio", "rows_written")
}

func (f *writeShardFn) ProcessElement(ctx context.Context, shard int, rows func(*beam.T) bool) (string, error) {
	name := FileName(shard, f.NumShards)
	e, err := writeFile(ctx, f.Dir, name, f.Type.T, f.RowGroupRows, f.RunID, func(w writerFunc) error {
		var row beam.T
		for rows(&row) {
			if err := w(row); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	f.rows.Inc(ctx, e.Rows)
	b, err := json.Marshal(e)
	return string(b), err
}

type writerFunc func(row any) error

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

// writeFile writes dir/name atomically: rows go to a temporary file whose
// name is unique to this attempt, which is renamed when complete. It
// returns the file's entry for the manifest.
func writeFile(ctx context.Context, dir, name string, t reflect.Type, rowGroupRows int64, run string,
	fill func(writerFunc) error) (FileEntry, error) {
	fs, err := filesystem.New(ctx, dir)
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
	pw := schemas.NewWriter(cw, t, schemas.WriterOptions{RowGroupRows: rowGroupRows, RunID: run})
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
	if err := filesystem.Rename(ctx, fs, tmp, final); err != nil {
		removeQuietly(ctx, fs, tmp)
		return FileEntry{}, fmt.Errorf("rename %s to %s: %w", tmp, final, err)
	}
	return FileEntry{Name: name, Rows: n, Bytes: cw.n, CRC32C: fmt.Sprintf("%08x", cw.crc32)}, nil
}

// finalizeFn runs once after every shard is written: it checks that every
// shard that was sent rows reported exactly that many written, writes empty
// files for shards that were sent none, removes files of earlier runs and
// temporary files of failed attempts, and writes the manifest.
type finalizeFn struct {
	Dir       string
	NumShards int
	RunID     string
	Type      beam.EncodedType
}

func (f *finalizeFn) ProcessElement(ctx context.Context, _ []byte, written func(*string) bool,
	sent func(*int, *int64) bool) (string, error) {
	if abandoned.Load() {
		return "", errAbandoned(f.Dir)
	}
	reported := make(map[string]FileEntry, f.NumShards)
	var line string
	for written(&line) {
		var e FileEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			return "", fmt.Errorf("%s: bad shard report %q: %w", f.Dir, line, err)
		}
		reported[e.Name] = e
	}
	want := make(map[string]int64, f.NumShards)
	var shard int
	var n int64
	for sent(&shard, &n) {
		want[FileName(shard, f.NumShards)] = n
	}
	m := Manifest{SchemaVersion: schemas.Version, Record: f.Type.T.Name(), RunID: f.RunID, NumShards: f.NumShards}
	for i := 0; i < f.NumShards; i++ {
		name := FileName(i, f.NumShards)
		e, ok := reported[name]
		switch {
		case !ok && want[name] > 0:
			return "", fmt.Errorf("%s: shard %s was sent %d rows but never reported writing them; no manifest written",
				f.Dir, name, want[name])
		case ok && e.Rows != want[name]:
			return "", fmt.Errorf("%s: shard %s was sent %d rows but wrote %d; no manifest written",
				f.Dir, name, want[name], e.Rows)
		case !ok:
			var err error
			if e, err = writeFile(ctx, f.Dir, name, f.Type.T, 0, f.RunID, func(writerFunc) error { return nil }); err != nil {
				return "", err
			}
		}
		m.Files = append(m.Files, e)
		m.Rows += e.Rows
	}
	fs, err := filesystem.New(ctx, f.Dir)
	if err != nil {
		return "", err
	}
	defer fs.Close()
	if err := removeStale(ctx, fs, f.Dir, f.NumShards); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return "", err
	}
	mp := join(f.Dir, ManifestName)
	tmp := join(f.Dir, ".tmp-"+ManifestName+"-"+randomSuffix())
	if err := filesystem.Write(ctx, fs, tmp, append(b, '\n')); err != nil {
		removeQuietly(ctx, fs, tmp)
		return "", fmt.Errorf("write %s: %w", mp, err)
	}
	if abandoned.Load() {
		removeQuietly(ctx, fs, tmp)
		return "", errAbandoned(f.Dir)
	}
	if err := filesystem.Rename(ctx, fs, tmp, mp); err != nil {
		removeQuietly(ctx, fs, tmp)
		return "", fmt.Errorf("write %s: %w", mp, err)
	}
	return mp, nil
}

// removeStale deletes part files that are not among this run's n shards and
// temporary files left by failed attempts.
func removeStale(ctx context.Context, fs filesystem.Interface, dir string, n int) error {
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
	rm, ok := fs.(filesystem.Remover)
	if !ok {
		return fmt.Errorf("%s: filesystem cannot remove stale files %v", dir, stale)
	}
	sort.Strings(stale)
	for _, p := range stale {
		if err := rm.Remove(ctx, p); err != nil {
			return fmt.Errorf("remove stale %s: %w", p, err)
		}
	}
	return nil
}

func removeQuietly(ctx context.Context, fs filesystem.Interface, p string) {
	if rm, ok := fs.(filesystem.Remover); ok {
		rm.Remove(ctx, p)
	}
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
