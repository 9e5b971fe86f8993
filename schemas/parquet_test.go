package schemas

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/parquet-go/parquet-go"
)

func retrievals(n, hits int) []Retrieval {
	out := make([]Retrieval, n)
	for i := range out {
		r := Retrieval{SentenceID: fmt.Sprintf("s%d", i), Text: "a sentence", IndexFingerprint: "f"}
		for h := 0; h < hits; h++ {
			r.Hits = append(r.Hits, Hit{ChunkID: fmt.Sprintf("c_%022d", i*hits+h), Score: float32(h)})
		}
		out[i] = r
	}
	return out
}

func writeRows[T any](t *testing.T, path string, rows []T, opts WriterOptions) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(f, reflect.TypeOf(rows).Elem(), opts)
	for _, r := range rows {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestRoundTripAndRowGroupBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.parquet")
	want := retrievals(200, 1000) // 6 MB of hits, ~2 MB compressed
	writeRows(t, path, want, WriterOptions{RowGroupBytes: 64 << 10})
	got, err := readRows[Retrieval](path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip: %d rows back, want %d equal rows", len(got), len(want))
	}
	f, _ := os.Open(path)
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(pf.RowGroups()); n < 3 {
		t.Fatalf("%d row groups: the byte bound did not cut row groups", n)
	}
	if v, _ := pf.Lookup(MetaRecordKey); v != "Retrieval" {
		t.Fatalf("record metadata %q", v)
	}
}

// A writer's extra metadata is in the file's footer beside the version,
// the record and the run, and the file holds exactly the record's columns.
func TestWriterMetadata(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.parquet")
	rows := []TrainingPair{{Sentence1: "a", Sentence2: "b", Score: 0.5}}
	writeRows(t, path, rows, WriterOptions{RunID: "r1", Metadata: map[string]string{
		MetaProvenanceKey: `{"model":"m"}`, MetaScoreKey: "clip"}})
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{MetaVersionKey: Version, MetaRecordKey: "TrainingPair", MetaRunKey: "r1",
		MetaProvenanceKey: `{"model":"m"}`, MetaScoreKey: "clip"} {
		if v, _ := pf.Lookup(k); v != want {
			t.Errorf("metadata %s = %q, want %q", k, v, want)
		}
	}
	var cols []string
	for _, c := range pf.Schema().Fields() {
		cols = append(cols, c.Name())
	}
	if fmt.Sprint(cols) != "[sentence1 sentence2 score]" {
		t.Fatalf("columns %v", cols)
	}
	got, err := readRows[TrainingPair](path)
	if err != nil || !reflect.DeepEqual(got, rows) {
		t.Fatalf("read back %v (%v)", got, err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a metadata key NewWriter writes itself was accepted")
		}
	}()
	NewWriter(io.Discard, reflect.TypeOf(TrainingPair{}), WriterOptions{Metadata: map[string]string{MetaRunKey: "x"}})
}

func TestChunkText(t *testing.T) {
	c := Chunk{Sentences: []string{"One.", "Two three.", "Four."}}
	if got := c.Text(); got != "One. Two three. Four." {
		t.Fatalf("%q", got)
	}
}

// readRows reads every row of the Parquet file at path as T.
func readRows[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := parquet.NewGenericReader[T](f)
	defer r.Close()
	out := make([]T, r.NumRows())
	n, err := r.Read(out)
	if err == io.EOF {
		err = nil
	}
	return out[:n], err
}
