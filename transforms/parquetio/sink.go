// Package parquetio reads and writes ctxsim records as sharded Parquet files
// in Beam pipelines, on any filesystem Beam knows (local paths, gs://).
//
// Write produces one file per shard with a deterministic name,
// dir/part-SSSSS-of-NNNNN.parquet, plus dir/_manifest.json listing the files
// and their row counts. Each file is written under a temporary name and
// renamed when complete; the manifest is written last. A rerun overwrites the
// same names and removes files of earlier runs that it did not write, so the
// directory never holds partial or duplicate data once the job succeeds.
package parquetio

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"path"
	"reflect"
	"sort"
	"strings"

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
	register.DoFn3x2[context.Context, []byte, func(*string) bool, string, error](&finalizeFn{})
	register.Iter1[string]()
}

// ManifestName is the name of the manifest written into a table directory.
const ManifestName = "_manifest.json"

// Manifest lists the files of a complete table.
type Manifest struct {
	SchemaVersion string      `json:"schema_version"`
	Record        string      `json:"record"`
	NumShards     int         `json:"num_shards"`
	Rows          int64       `json:"rows"`
	Files         []FileEntry `json:"files"`
}

// FileEntry is one file of a table.
type FileEntry struct {
	Name string `json:"name"`
	Rows int64  `json:"rows"`
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
}

// Write writes col, a PCollection of a struct type with parquet tags, as a
// sharded Parquet table under cfg.Dir. It returns a PCollection holding the
// manifest's path once the table is complete.
func Write(s beam.Scope, cfg Config, col beam.PCollection) beam.PCollection {
	s = s.Scope("parquetio.Write")
	if cfg.NumShards <= 0 {
		cfg.NumShards = 1
	}
	t := col.Type().Type()
	keyed := beam.ParDo(s, &keyByShardFn{NumShards: cfg.NumShards}, col)
	grouped := beam.GroupByKey(s, keyed)
	written := beam.ParDo(s, &writeShardFn{
		Dir: cfg.Dir, NumShards: cfg.NumShards, RowGroupRows: cfg.RowGroupRows,
		Type: beam.EncodedType{T: t},
	}, grouped)
	return beam.ParDo(s, &finalizeFn{
		Dir: cfg.Dir, NumShards: cfg.NumShards, Type: beam.EncodedType{T: t},
	}, beam.Impulse(s), beam.SideInput{Input: written})
}

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
// the shard's final name. It emits "name\trows".
type writeShardFn struct {
	Dir          string
	NumShards    int
	RowGroupRows int64
	Type         beam.EncodedType

	rows counter.Counter
}

func (f *writeShardFn) Setup() {
	f.rows = counter.New("parquetio", "rows_written")
}

func (f *writeShardFn) ProcessElement(ctx context.Context, shard int, rows func(*beam.T) bool) (string, error) {
	name := FileName(shard, f.NumShards)
	n, err := writeFile(ctx, f.Dir, name, f.Type.T, f.RowGroupRows, func(w writerFunc) error {
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
	f.rows.Inc(ctx, n)
	return fmt.Sprintf("%s\t%d", name, n), nil
}

type writerFunc func(row any) error

// writeFile writes dir/name atomically: rows go to a temporary file whose
// name is unique to this attempt, which is renamed when complete.
func writeFile(ctx context.Context, dir, name string, t reflect.Type, rowGroupRows int64,
	fill func(writerFunc) error) (int64, error) {
	fs, err := filesystem.New(ctx, dir)
	if err != nil {
		return 0, err
	}
	defer fs.Close()
	final := join(dir, name)
	tmp := join(dir, ".tmp-"+name+"-"+randomSuffix())
	wc, err := fs.OpenWrite(ctx, tmp)
	if err != nil {
		return 0, fmt.Errorf("create %s: %w", tmp, err)
	}
	pw := schemas.NewWriter(wc, t, schemas.WriterOptions{RowGroupRows: rowGroupRows})
	var n int64
	ferr := fill(func(row any) error {
		if err := pw.Write(row); err != nil {
			return fmt.Errorf("write %s: %w", final, err)
		}
		n++
		return nil
	})
	if ferr == nil {
		ferr = pw.Close()
	}
	cerr := wc.Close()
	if ferr == nil {
		ferr = cerr
	}
	if ferr != nil {
		removeQuietly(ctx, fs, tmp)
		return 0, ferr
	}
	if err := filesystem.Rename(ctx, fs, tmp, final); err != nil {
		return 0, fmt.Errorf("rename %s to %s: %w", tmp, final, err)
	}
	return n, nil
}

// finalizeFn runs once after every shard is written: it writes empty files
// for shards that got no rows, removes files of earlier runs and temporary
// files of failed attempts, and writes the manifest.
type finalizeFn struct {
	Dir       string
	NumShards int
	Type      beam.EncodedType
}

func (f *finalizeFn) ProcessElement(ctx context.Context, _ []byte, written func(*string) bool) (string, error) {
	rows := make(map[string]int64, f.NumShards)
	var line string
	for written(&line) {
		name, n, ok := strings.Cut(line, "\t")
		if !ok {
			return "", fmt.Errorf("bad shard record %q", line)
		}
		var c int64
		fmt.Sscan(n, &c)
		rows[name] = c
	}
	m := Manifest{SchemaVersion: schemas.Version, Record: f.Type.T.Name(), NumShards: f.NumShards}
	for i := 0; i < f.NumShards; i++ {
		name := FileName(i, f.NumShards)
		c, ok := rows[name]
		if !ok {
			if _, err := writeFile(ctx, f.Dir, name, f.Type.T, 0, func(writerFunc) error { return nil }); err != nil {
				return "", err
			}
		}
		m.Files = append(m.Files, FileEntry{Name: name, Rows: c})
		m.Rows += c
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
		return "", err
	}
	if err := filesystem.Rename(ctx, fs, tmp, mp); err != nil {
		return "", err
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
