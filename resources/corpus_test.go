package resources

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
)

// corpus writes n chunks whose IDs start with prefix as a chunks table and
// as a one-shard index under dir, and returns the table's glob and the
// index's directory.
func corpus(t *testing.T, dir, prefix string, n int) (chunks, index string) {
	t.Helper()
	return shardedCorpus(t, dir, prefix, n, 1)
}

// shardedCorpus is corpus with an index of the given number of shards.
func shardedCorpus(t *testing.T, dir, prefix string, n, shards int) (chunks, index string) {
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
	ws := make([]*retrieval.ShardWriter, shards)
	for i := range ws {
		w, err := retrieval.CreateShard(index, i, shards, retrieval.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ws[i] = w
	}
	for i := range cs {
		if err := ws[retrieval.ShardOf(cs[i].ID, shards)].Add(&cs[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range ws {
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := retrieval.Finalize(index, shards, retrieval.BuildOptions{}, "test"); err != nil {
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

// TestLoadStoreMapped: a store whose strings are kept in mapped files
// holds the same chunks, sentences and IDs as one on the heap, and its
// texts are in the arena's mapped file, not on the Go heap.
func TestLoadStoreMapped(t *testing.T) {
	t.Setenv("CTXSIM_CACHE_DIR", t.TempDir())
	ctx := context.Background()
	chunks, _ := corpus(t, t.TempDir(), "m", 40)
	heap, err := LoadStoreMapped(ctx, false, chunks)
	if err != nil {
		t.Fatal(err)
	}
	mapped, err := LoadStoreMapped(ctx, true, chunks)
	if err != nil {
		t.Fatal(err)
	}
	if heap.Len() != 40 || mapped.Len() != heap.Len() || mapped.Sentences() != heap.Sentences() || heap.Sentences() != 120 {
		t.Fatalf("heap: %d chunks, %d sentences; mapped: %d, %d", heap.Len(), heap.Sentences(), mapped.Len(), mapped.Sentences())
	}
	for i := range heap.Len() {
		id := heap.ChunkIDAt(i)
		if mapped.ChunkIDAt(i) != id {
			t.Fatalf("chunk %d: %q mapped, %q on the heap", i, mapped.ChunkIDAt(i), id)
		}
		a, b := heap.ChunkSentences(id), mapped.ChunkSentences(id)
		if len(a) != 3 || len(b) != 3 {
			t.Fatalf("chunk %s: sentences %v and %v", id, a, b)
		}
		for j := range a {
			if heap.Text(a[j]) != mapped.Text(b[j]) {
				t.Fatalf("chunk %s sentence %d: %q and %q", id, j, heap.Text(a[j]), mapped.Text(b[j]))
			}
			sid := fmt.Sprintf("m-%d-%d", i, j)
			if k, ok := mapped.SentenceIndex(sid); !ok || k != b[j] {
				t.Fatalf("sentence %s: index %d (%v), want %d", sid, k, ok, b[j])
			}
		}
	}
	// The texts are in the arena's mapped file (Linux says where).
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skipf("no /proc/self/maps: %v", err)
	}
	in := func(p uintptr) string {
		for _, l := range strings.Split(string(maps), "\n") {
			f := strings.Fields(l)
			var lo, hi uintptr
			if len(f) < 6 || !strings.Contains(f[0], "-") {
				continue
			}
			fmt.Sscanf(strings.Replace(f[0], "-", " ", 1), "%x %x", &lo, &hi)
			if lo <= p && p < hi {
				return strings.Join(f[5:], " ")
			}
		}
		return ""
	}
	for _, k := range []int32{0, 1, 119} {
		p := uintptr(unsafe.Pointer(unsafe.StringData(mapped.Text(k))))
		if where := in(p); !strings.Contains(where, "texts-") {
			t.Errorf("mapped text %d at %#x is in %q, not the arena's file", k, p, where)
		}
		if where := in(uintptr(unsafe.Pointer(unsafe.StringData(heap.Text(k))))); strings.Contains(where, "texts-") {
			t.Errorf("heap text %d is in the arena's file %q", k, where)
		}
	}
}

// TestOpenPart: resources of a part of the corpus hold the chunks of the
// part's index shards and open only those shards; the parts together hold
// every chunk once; a part of another corpus's chunks is refused, as are
// more parts than shards, and a part without an index.
func TestOpenPart(t *testing.T) {
	ctx := context.Background()
	chunks, index := shardedCorpus(t, t.TempDir(), "p", 40, 4)
	seen := map[string]int{}
	for p := range 3 {
		paths := Paths{Chunks: chunks, Index: index, Part: Part{Part: p, Parts: 3}}
		r, err := Open(ctx, paths)
		if err != nil {
			t.Fatal(err)
		}
		st := r.Engine.Store
		if st.Len() == 0 || st.Len() == 40 {
			t.Fatalf("part %d holds %d of 40 chunks", p, st.Len())
		}
		for i := range st.Len() {
			id := st.ChunkIDAt(i)
			seen[id]++
			if s := retrieval.ShardOf(id, 4); s%3 != p || !r.Part.Has(id) {
				t.Errorf("part %d holds chunk %s of shard %d", p, id, s)
			}
		}
		hits, _, err := r.Index.Search(ctx, "The p river flows past town", 40, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if !st.Has(h.ChunkID) {
				t.Errorf("part %d's index returned chunk %s of another part", p, h.ChunkID)
			}
		}
		Release(paths)
	}
	if len(seen) != 40 {
		t.Errorf("the parts hold %d distinct chunks of 40", len(seen))
	}
	otherChunks, _ := shardedCorpus(t, t.TempDir(), "q", 40, 4)
	for _, bad := range []Paths{
		{Chunks: otherChunks, Index: index, Part: Part{Part: 1, Parts: 2}},
		{Chunks: chunks, Index: index, Part: Part{Part: 0, Parts: 5}},
		{Chunks: chunks, Part: Part{Part: 0, Parts: 2}},
	} {
		if r, err := Open(ctx, bad); err == nil {
			t.Errorf("%+v opened: %+v", bad, r)
		} else {
			t.Log(err)
		}
	}
}
