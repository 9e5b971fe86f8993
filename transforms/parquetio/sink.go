// Package parquetio is the Beam adapter of package storage's sharded
// Parquet tables: Write groups a PCollection into shards, writes each as one
// file (storage.TableSpec.WriteShard) and commits the table with its
// manifest once every shard reported what it was sent
// (storage.TableSpec.Commit); Read expands a glob (storage.Glob, which
// checks each table against its manifest) and reads the files in parallel
// (storage.ReadRows). The file protocol itself (names, manifests,
// checksums, run IDs, atomic renames) is storage's.
package parquetio

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/transforms/beamreg"
	"github.com/ctxsim/ctxsim/transforms/counter"
)

func init() {
	beamreg.DoFn(&keyByShardFn{})
	beamreg.DoFn(&keyPartFn{})
	register.Emitter2[int, beam.T]()
	beamreg.DoFn(&writeShardFn{})
	register.Iter1[beam.T]()
	beamreg.DoFn(&finalizeFn{})
	register.Iter1[string]()
	register.Iter2[int, int64]()
	beamreg.DoFn(&shardOneFn{})
	register.Function2x1[int64, int64, int64](sumRows)
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
	// storage.RunID().
	RunID string
	// Metadata is more key/value metadata written into every file
	// (storage.TableSpec.Metadata).
	Metadata map[string]string
	// Part and Parts make this pipeline write part Part of a table written
	// by Parts pipelines in turn (storage.TableSpec.Part): it writes the
	// part's NumShards files and commits the part, and the table is
	// complete once storage.TableSpec.CommitParts runs after the last.
	Part, Parts int
}

// table is the storage.TableSpec of cfg's table, of records of type t.
func (cfg Config) table(t reflect.Type) storage.TableSpec {
	return storage.TableSpec{Dir: cfg.Dir, NumShards: max(cfg.NumShards, 1), Type: t, RunID: cfg.RunID,
		RowGroupRows: cfg.RowGroupRows, Metadata: cfg.Metadata, Part: cfg.Part, Parts: cfg.Parts}
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
		cfg.RunID = storage.RunID()
	}
	t := col.Type().Type()
	keyed := KeyByShard(s, cfg.NumShards, col)
	grouped := beam.GroupByKey(s, keyed)
	written := beam.ParDo(s, &writeShardFn{Table: tableOf(cfg.table(t))}, grouped)
	return Commit(s, cfg, t, keyed, written)
}

// KeyByShard keys each record of col by the shard Write would put it in:
// a hash of its Key (see Keyed) modulo numShards.
func KeyByShard(s beam.Scope, numShards int, col beam.PCollection) beam.PCollection {
	return beam.ParDo(s, &keyByShardFn{NumShards: numShards}, col)
}

// KeyByShardPart is KeyByShard for part part of a table written in parts
// pipelines (Config.Part): it keeps only the records of col whose file
// belongs to that part and keys each by its shard within the part. A
// record's file is a hash of its Key modulo parts*numShards, as
// KeyByShard puts it in a table of parts*numShards shards, so the parts'
// files together are that table's, file for file. The records dropped
// are counted as parquetio/rows_other_part.
func KeyByShardPart(s beam.Scope, numShards, part, parts int, col beam.PCollection) beam.PCollection {
	if parts <= 1 {
		return KeyByShard(s, numShards, col)
	}
	return beam.ParDo(s, &keyPartFn{NumShards: numShards, Part: part, Parts: parts}, col)
}

// Commit is the end of a table whose shards a caller's DoFn writes (with
// storage.TableSpec.WriteShard, in cfg.Dir, with cfg.RunID, which must be
// set) instead of Write's: written holds each shard's storage.FileEntry as
// JSON, keyed the rows (as KeyByShard gives them) from which each shard's
// expected row count is taken. It commits the table (rows of type t) once
// every shard is written, and returns a PCollection holding the manifest's
// path.
func Commit(s beam.Scope, cfg Config, t reflect.Type, keyed, written beam.PCollection) beam.PCollection {
	// What each shard was sent, counted apart from the writers: the
	// manifest is written only if every shard reports exactly that.
	sent := beam.CombinePerKey(s, sumRows, beam.ParDo(s, &shardOneFn{}, keyed))
	return beam.ParDo(s, &finalizeFn{Table: tableOf(cfg.table(t))},
		beam.Impulse(s), beam.SideInput{Input: written}, beam.SideInput{Input: sent})
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
	h, err := rowHash(row)
	if err != nil {
		return err
	}
	emit(int(h%uint64(f.NumShards)), row)
	return nil
}

// rowHash is the hash that places a record in a shard: FNV-1a of its Key,
// or of its JSON form.
func rowHash(row any) (uint64, error) {
	h := fnv.New64a()
	if k, ok := row.(Keyed); ok {
		h.Write([]byte(k.Key()))
	} else {
		b, err := json.Marshal(row)
		if err != nil {
			return 0, err
		}
		h.Write(b)
	}
	return h.Sum64(), nil
}

// keyPartFn is keyByShardFn for one part of a table in parts (see
// KeyByShardPart).
type keyPartFn struct {
	NumShards, Part, Parts int

	other counter.Counter
}

func (f *keyPartFn) Setup() { f.other = counter.New("parquetio", "rows_other_part") }

func (f *keyPartFn) ProcessElement(ctx context.Context, row beam.T, emit func(int, beam.T)) error {
	h, err := rowHash(row)
	if err != nil {
		return err
	}
	g := int(h % uint64(f.Parts*f.NumShards))
	if g/f.NumShards != f.Part {
		f.other.Inc(ctx, 1)
		return nil
	}
	emit(g%f.NumShards, row)
	return nil
}

// table is a storage.TableSpec as a DoFn carries it (the record type
// encoded).
type table struct {
	Dir          string
	NumShards    int
	RowGroupRows int64
	RunID        string
	Metadata     map[string]string
	Type         beam.EncodedType
	Part, Parts  int
}

func tableOf(t storage.TableSpec) table {
	return table{Dir: t.Dir, NumShards: t.NumShards, RowGroupRows: t.RowGroupRows, RunID: t.RunID,
		Metadata: t.Metadata, Type: beam.EncodedType{T: t.Type}, Part: t.Part, Parts: t.Parts}
}

func (t table) spec() storage.TableSpec {
	return storage.TableSpec{Dir: t.Dir, NumShards: t.NumShards, Type: t.Type.T, RunID: t.RunID,
		RowGroupRows: t.RowGroupRows, Metadata: t.Metadata, Part: t.Part, Parts: t.Parts}
}

// writeShardFn writes one shard's file (storage.TableSpec.WriteShard) and
// emits its storage.FileEntry as JSON.
type writeShardFn struct {
	Table table

	rows counter.Counter
}

func (f *writeShardFn) Setup() {
	f.rows = counter.New("parquetio", "rows_written")
}

func (f *writeShardFn) ProcessElement(ctx context.Context, shard int, rows func(*beam.T) bool) (string, error) {
	e, err := f.Table.spec().WriteShard(ctx, shard, func(write func(any) error) error {
		var row beam.T
		for rows(&row) {
			if err := write(row); err != nil {
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

// finalizeFn runs once after every shard is written and commits the table
// (storage.TableSpec.Commit) from what the shards reported and were sent.
type finalizeFn struct {
	Table table
}

func (f *finalizeFn) ProcessElement(ctx context.Context, _ []byte, written func(*string) bool,
	sent func(*int, *int64) bool) (string, error) {
	reported := make(map[string]storage.FileEntry, f.Table.NumShards)
	var line string
	for written(&line) {
		var e storage.FileEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			return "", fmt.Errorf("%s: bad shard report %q: %w", f.Table.Dir, line, err)
		}
		reported[e.Name] = e
	}
	want := make(map[int]int64, f.Table.NumShards)
	var shard int
	var n int64
	for sent(&shard, &n) {
		want[shard] = n
	}
	return f.Table.spec().Commit(ctx, reported, want)
}
