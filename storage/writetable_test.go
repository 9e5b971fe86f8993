package storage

import (
	"context"
	"path/filepath"
	"reflect"
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
