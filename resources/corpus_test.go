package resources

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
)

// corpus writes n chunks whose IDs start with prefix as a chunks table and
// as a one-shard index under dir, and returns the table's glob and the
// index's directory.
func corpus(t *testing.T, dir, prefix string, n int) (chunks, index string) {
	t.Helper()
	var cs []schemas.Chunk
	for i := range n {
		c := schemas.Chunk{ID: fmt.Sprintf("%s-%d", prefix, i), DocID: fmt.Sprintf("%s-doc%d", prefix, i/2)}
		for s := range 3 {
			c.Sentences = append(c.Sentences, fmt.Sprintf("The %s river flows past town %d in year %d.", prefix, i, s))
			c.SentenceIDs = append(c.SentenceIDs, fmt.Sprintf("%s-%d-%d", prefix, i, s))
		}
		cs = append(cs, c)
	}
	table := filepath.Join(dir, "chunks")
	if err := storage.WriteTable(context.Background(), table, cs); err != nil {
		t.Fatal(err)
	}
	index = filepath.Join(dir, "index")
	w, err := retrieval.CreateShard(index, 0, 1, retrieval.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range cs {
		if err := w.Add(&cs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := retrieval.Finalize(index, 1, retrieval.BuildOptions{}, "test"); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(table, "*.parquet"), index
}

// TestOpenRefusesIndexOfAnotherCorpus is issue 36's index and chunks table
// from different corpora (bin/evaluate --index=A --chunks=B, a harvest
// over a corpus whose index/ came from another): Open refuses them, naming
// both, and opens either corpus's own pair.
func TestOpenRefusesIndexOfAnotherCorpus(t *testing.T) {
	ctx := context.Background()
	chunksA, indexA := corpus(t, t.TempDir(), "a", 12)
	chunksB, indexB := corpus(t, t.TempDir(), "b", 10)
	for _, p := range []Paths{{Chunks: chunksA, Index: indexA}, {Chunks: chunksB, Index: indexB}} {
		r, err := Open(ctx, p)
		if err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
		if r.Index == nil || r.Engine.Store.Len() == 0 {
			t.Fatalf("%+v: opened %+v", p, r)
		}
	}
	for _, p := range []Paths{{Chunks: chunksB, Index: indexA}, {Chunks: chunksA, Index: indexB}} {
		r, err := Open(ctx, p)
		if err == nil || !strings.Contains(err.Error(), p.Index) || !strings.Contains(err.Error(), p.Chunks) ||
			!strings.Contains(err.Error(), "not of one corpus") {
			t.Errorf("index %s with chunks %s: %+v, %v; want an error naming both", p.Index, p.Chunks, r, err)
		}
	}
}
