package parquetio

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*schemas.Sentence)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*schemas.Chunk)(nil)).Elem())
}

func sentences(n int) []schemas.Sentence {
	out := make([]schemas.Sentence, n)
	for i := range out {
		out[i] = schemas.Sentence{
			ID: fmt.Sprintf("s%05d", i), DocID: fmt.Sprintf("d%d", i/7), Pos: int32(i % 7),
			Text: fmt.Sprintf("Sentence number %d.", i), ChunkIDs: []string{fmt.Sprintf("c%d", i/3)},
		}
	}
	return out
}

func writeTable(t *testing.T, dir string, shards int, rows []schemas.Sentence) {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	Write(s, Config{Dir: dir, NumShards: shards, RowGroupRows: 100}, beam.CreateList(s, rows))
	if _, err := prism.Execute(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

func readTable(t *testing.T, dir string) []schemas.Sentence {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "part-*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	var all []schemas.Sentence
	for _, f := range files {
		rows, err := storage.ReadParquet[schemas.Sentence](context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, rows...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	return all
}

func TestWriteShardedTable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sentences")
	want := sentences(1000)
	writeTable(t, dir, 4, want)

	got := readTable(t, dir)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %d rows, want %d equal rows", len(got), len(want))
	}
	var m storage.Manifest
	b, err := os.ReadFile(filepath.Join(dir, storage.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Rows != 1000 || len(m.Files) != 4 || m.Record != "Sentence" || m.SchemaVersion != schemas.Version {
		t.Fatalf("manifest %+v", m)
	}
	for i, f := range m.Files {
		if f.Name != storage.FileName(i, 4) || f.Rows == 0 {
			t.Fatalf("manifest file %d: %+v", i, f)
		}
	}

	// A rerun with fewer shards replaces the table: no stale or duplicate
	// rows, no temporaries.
	if err := os.WriteFile(filepath.Join(dir, ".tmp-part-00000-of-00002.parquet-dead"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeTable(t, dir, 2, want)
	if got := readTable(t, dir); !reflect.DeepEqual(got, want) {
		t.Fatalf("after rerun: %d rows", len(got))
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	wantNames := []string{storage.ManifestName, storage.FileName(0, 2), storage.FileName(1, 2)}
	if !reflect.DeepEqual(names, wantNames) {
		t.Fatalf("directory holds %v, want %v", names, wantNames)
	}
}

func TestWriteDeterministicFiles(t *testing.T) {
	tmp := t.TempDir()
	rows := sentences(300)
	writeTable(t, filepath.Join(tmp, "a"), 3, rows)
	writeTable(t, filepath.Join(tmp, "b"), 3, rows)
	for i := 0; i < 3; i++ {
		a, err := storage.ReadParquet[schemas.Sentence](context.Background(), filepath.Join(tmp, "a", storage.FileName(i, 3)))
		if err != nil {
			t.Fatal(err)
		}
		b, err := storage.ReadParquet[schemas.Sentence](context.Background(), filepath.Join(tmp, "b", storage.FileName(i, 3)))
		if err != nil {
			t.Fatal(err)
		}
		sort.Slice(a, func(i, j int) bool { return a[i].ID < a[j].ID })
		sort.Slice(b, func(i, j int) bool { return b[i].ID < b[j].ID })
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("shard %d differs between runs", i)
		}
	}
}

func TestEmptyInputWritesEmptyShards(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "empty")
	writeTable(t, dir, 2, nil)
	for i := 0; i < 2; i++ {
		rows, err := storage.ReadParquet[schemas.Sentence](context.Background(), filepath.Join(dir, storage.FileName(i, 2)))
		if err != nil || len(rows) != 0 {
			t.Fatalf("shard %d: %d rows, %v", i, len(rows), err)
		}
	}
}

func TestReadRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	want := sentences(250)
	writeTable(t, dir, 3, want)

	out := filepath.Join(t.TempDir(), "copy")
	p, s := beam.NewPipelineWithRoot()
	rows := Read(s, filepath.Join(dir, "*.parquet"), reflect.TypeOf(schemas.Sentence{}))
	Write(s, Config{Dir: out, NumShards: 1}, rows)
	if _, err := prism.Execute(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if got := readTable(t, out); !reflect.DeepEqual(got, want) {
		t.Fatalf("copied %d rows, want %d", len(got), len(want))
	}

	p, s = beam.NewPipelineWithRoot()
	Read(s, filepath.Join(dir, "nothing-*.parquet"), reflect.TypeOf(schemas.Sentence{}))
	if _, err := prism.Execute(context.Background(), p); err == nil {
		t.Fatal("reading a glob that matches nothing must fail")
	}
}

// TestDuckDBReadsOutput checks interoperability with another Parquet engine.
// It needs `npm ci --prefix tools/duckdb`; CI sets CTXSIM_REQUIRE_DUCKDB=1 so
// a missing install fails instead of skipping.
func TestDuckDBReadsOutput(t *testing.T) {
	script, _ := filepath.Abs("../../tools/duckdb/read.mjs")
	mods, _ := filepath.Abs("../../tools/duckdb/node_modules/@duckdb/node-api")
	if _, err := os.Stat(mods); err != nil {
		if os.Getenv("CTXSIM_REQUIRE_DUCKDB") != "" {
			t.Fatalf("DuckDB not installed (%v): run npm ci --prefix tools/duckdb", err)
		}
		t.Skip("DuckDB not installed: npm ci --prefix tools/duckdb")
	}
	dir := filepath.Join(t.TempDir(), "sentences")
	writeTable(t, dir, 3, sentences(500))
	out, err := exec.Command("node", script, filepath.Join(dir, "*.parquet")).Output()
	if err != nil {
		t.Fatalf("duckdb: %v", err)
	}
	var res struct {
		Files    int `json:"files"`
		Rows     int `json:"rows"`
		Columns  []struct{ Name, Type string }
		Sample   []map[string]any  `json:"sample"`
		Metadata map[string]string `json:"metadata"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Files != 3 || res.Rows != 500 {
		t.Fatalf("duckdb saw %d files, %d rows", res.Files, res.Rows)
	}
	if res.Metadata[schemas.MetaVersionKey] != schemas.Version {
		t.Fatalf("duckdb metadata %v", res.Metadata)
	}
	types := map[string]string{}
	for _, c := range res.Columns {
		types[c.Name] = c.Type
	}
	if types["sentence_id"] != "VARCHAR" || types["pos"] != "INTEGER" || types["chunk_ids"] != "VARCHAR[]" {
		t.Fatalf("duckdb column types %v", types)
	}
}

func TestMain(m *testing.M) {
	beam.Init()
	os.Exit(m.Run())
}

// A table's metadata is in every file's footer, the empty shards' too.
func TestWriteMetadata(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sentences")
	p, s := beam.NewPipelineWithRoot()
	meta := map[string]string{schemas.MetaProvenanceKey: `{"command":["x"]}`}
	Write(s, Config{Dir: dir, NumShards: 6, Metadata: meta}, beam.CreateList(s, sentences(2)))
	if _, err := prism.Execute(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	files, err := storage.Glob(context.Background(), filepath.Join(dir, "*.parquet"))
	if err != nil || len(files) != 6 {
		t.Fatalf("%d files (%v), want 6", len(files), err)
	}
	for _, f := range files {
		got, err := storage.ReadMetadata(context.Background(), f, reflect.TypeOf(schemas.Sentence{}))
		if err != nil {
			t.Fatal(err)
		}
		if got[schemas.MetaProvenanceKey] != meta[schemas.MetaProvenanceKey] || got[schemas.MetaRunKey] != storage.RunID() {
			t.Fatalf("%s: metadata %v", f, got)
		}
	}
}
