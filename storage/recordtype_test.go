package storage

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ctxsim/ctxsim/schemas"
)

// readAsChunks reads the table or file at p with every typed reader asking
// for schemas.Chunk, and returns each reader's error by name.
func readAsChunks(ctx context.Context, p string, table bool) map[string]error {
	errs := map[string]error{}
	file := p
	if table {
		_, errs["ReadTable"] = ReadTable[schemas.Chunk](ctx, p)
		errs["ScanTable"] = ScanTable(ctx, p, func(schemas.Chunk) bool { return true })
		errs["ScanGlob"] = ScanGlob(ctx, Join(p, "*.parquet"), func(schemas.Chunk) bool { return true })
		file = Join(p, FileName(0, 1))
	}
	_, errs["ReadParquet"] = ReadParquet[schemas.Chunk](ctx, file)
	_, errs["ScanFile"] = ScanFile(ctx, file, func(schemas.Chunk) bool { return true })
	_, errs["ReadRows"] = ReadRows(ctx, file, reflect.TypeOf(schemas.Chunk{}), func(any) error { return nil })
	return errs
}

// A table or file of one record type is refused by every reader asking for
// another, naming the file, the record it holds and the one expected:
// whether its manifest names its record (a sentences table copied under
// chunks/ with its manifest), the manifest was edited to name the one asked
// for (then the file's metadata tells), or there is no manifest at all (a
// single file).
func TestReadersRefuseAnotherRecordType(t *testing.T) {
	ctx := context.Background()
	sents := []schemas.Sentence{{ID: "s1", DocID: "d1", Text: "One."}, {ID: "s2", DocID: "d1", Pos: 1, Text: "Two."}}
	writeSentences := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "chunks")
		if err := WriteTable(ctx, dir, sents); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadTable[schemas.Sentence](ctx, dir); err != nil {
			t.Fatalf("read as sentences: %v", err)
		}
		return dir
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) string
		table bool
		wants []string
	}{
		{"manifest names its record", func(t *testing.T) string {
			return writeSentences(t)
		}, true, []string{"manifest", "Sentence", "Chunk"}},
		{"manifest edited to the record asked for", func(t *testing.T) string {
			dir := writeSentences(t)
			mp := filepath.Join(dir, ManifestName)
			b, err := os.ReadFile(mp)
			if err != nil {
				t.Fatal(err)
			}
			var m Manifest
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			m.Record = "Chunk"
			b, _ = json.Marshal(m)
			if err := os.WriteFile(mp, b, 0o644); err != nil {
				t.Fatal(err)
			}
			return dir
		}, true, []string{"holds Sentence records", "Chunk"}},
		{"single file", func(t *testing.T) string {
			dir := writeSentences(t)
			p := filepath.Join(t.TempDir(), "sentences.parquet")
			b, err := os.ReadFile(filepath.Join(dir, FileName(0, 1)))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}, false, []string{"holds Sentence records", "Chunk"}},
		{"no record in the metadata", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "unnamed.parquet")
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			w := parquet.NewGenericWriter[schemas.Chunk](f, parquet.KeyValueMetadata(schemas.MetaVersionKey, schemas.Version))
			w.Write([]schemas.Chunk{{ID: "c1"}})
			w.Close()
			f.Close()
			return p
		}, false, []string{schemas.MetaRecordKey, "Chunk"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.setup(t)
			file := p
			if tc.table {
				file = filepath.Join(p, FileName(0, 1))
			}
			for reader, err := range readAsChunks(ctx, p, tc.table) {
				if err == nil {
					t.Errorf("%s: read %s as chunks; want an error", reader, p)
					continue
				}
				for _, want := range append([]string{file}, tc.wants...) {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("%s: error %q does not name %q", reader, err, want)
					}
				}
			}
		})
	}
}

// A context-set table read as pairs is refused instead of decoding to rows
// of empty fields.
func TestPairsReaderRefusesContextSets(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "pairs")
	if err := WriteTable(ctx, dir, []schemas.ContextSet{{SentenceID: "s1"}}); err != nil {
		t.Fatal(err)
	}
	rows, err := ReadTable[schemas.LabeledPair](ctx, dir)
	if err == nil || !strings.Contains(err.Error(), "ContextSet") || !strings.Contains(err.Error(), "LabeledPair") {
		t.Fatalf("read %d pairs, %v; want an error naming ContextSet and LabeledPair", len(rows), err)
	}
	// A reader of the right type reads it.
	if sets, err := ReadTable[schemas.ContextSet](ctx, dir); err != nil || len(sets) != 1 {
		t.Fatalf("read %d context sets, %v", len(sets), err)
	}
	// A pointer type reads the records it points to.
	if sets, err := ReadTable[*schemas.ContextSet](ctx, dir); err != nil || len(sets) != 1 {
		t.Fatalf("read %d context sets through pointers, %v", len(sets), err)
	}
}
