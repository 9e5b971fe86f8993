package storage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/schemas"
)

func TestWriteTableRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "sentences")
	want := []schemas.Sentence{{ID: "a", Text: "One.", ChunkIDs: []string{"c1"}}, {ID: "b", Text: "Two three.", ChunkIDs: []string{"c1", "c2"}}}
	if err := WriteTable(ctx, dir, want); err != nil {
		t.Fatal(err)
	}
	m, err := CheckTable(ctx, dir)
	if err != nil || m.Rows != 2 || m.RunID != RunID() || m.Record != "Sentence" {
		t.Fatalf("manifest %+v, %v", m, err)
	}
	got, err := ReadTable[schemas.Sentence](ctx, dir)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %+v (%v), want %+v", got, err, want)
	}
}

// writePart writes part p of a table in parts, one sentence per shard
// (IDs "p<p>s<i>"), and commits the part.
func writePart(t *testing.T, ctx context.Context, spec TableSpec, p int) []schemas.Sentence {
	t.Helper()
	spec.Part = p
	var rows []schemas.Sentence
	reported, sent := map[string]FileEntry{}, map[int]int64{}
	for i := range spec.NumShards {
		row := schemas.Sentence{ID: fmt.Sprintf("p%ds%d", p, i), Text: "Some words.", ChunkIDs: []string{"c1"}}
		e, err := spec.WriteShard(ctx, i, func(write func(any) error) error { return write(row) })
		if err != nil {
			t.Fatal(err)
		}
		reported[e.Name], sent[i] = e, 1
		rows = append(rows, row)
	}
	if _, err := spec.Commit(ctx, reported, sent); err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestTableInParts(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "pairs")
	// An earlier run's complete table, and a record an unfinished run left.
	if err := WriteTable(ctx, dir, []schemas.Sentence{{ID: "old"}}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, partRecordName(7, 9)), []byte("{}"), 0o644)
	spec := TableSpec{Dir: dir, NumShards: 2, Parts: 3, Type: reflect.TypeOf(schemas.Sentence{}), RunID: "r2"}
	var want []schemas.Sentence
	for p := range 2 {
		want = append(want, writePart(t, ctx, spec, p)...)
	}
	if _, err := spec.CommitParts(ctx); err == nil || !strings.Contains(err.Error(), "part 2 of 3 has no record") {
		t.Fatalf("CommitParts with part 2 missing: %v", err)
	}
	// Until the last part, the table is no table: its manifest is the
	// earlier run's, which does not list the new files.
	if _, err := ReadTable[schemas.Sentence](ctx, dir); err == nil {
		t.Fatal("read a table whose parts are not all committed")
	}
	want = append(want, writePart(t, ctx, spec, 2)...)
	other := spec
	other.RunID = "r3"
	if _, err := other.CommitParts(ctx); err == nil || !strings.Contains(err.Error(), "want run r3") {
		t.Fatalf("CommitParts of another run: %v", err)
	}
	if _, err := spec.CommitParts(ctx); err != nil {
		t.Fatal(err)
	}
	m, err := CheckTable(ctx, dir)
	if err != nil || m.NumShards != 6 || m.Rows != 6 || m.RunID != "r2" || len(m.Files) != 6 {
		t.Fatalf("manifest %+v, %v", m, err)
	}
	// Committing again (a harvest resumed after it had committed some of
	// its tables) keeps the table; another run still may not.
	if _, err := spec.CommitParts(ctx); err != nil {
		t.Fatalf("CommitParts again: %v", err)
	}
	if _, err := other.CommitParts(ctx); err == nil {
		t.Fatal("another run committed over a committed table with no part record")
	}
	if m2, err := CheckTable(ctx, dir); err != nil || !reflect.DeepEqual(m2, m) {
		t.Fatalf("after committing again: manifest %+v (%v), want %+v", m2, err, m)
	}
	got, err := ReadTable[schemas.Sentence](ctx, dir)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %+v (%v), want %+v", got, err, want)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range left {
		if b := filepath.Base(f); b != ManifestName && !strings.HasSuffix(b, "-of-00006.parquet") {
			t.Errorf("%s left beside the table", b)
		}
	}
}
