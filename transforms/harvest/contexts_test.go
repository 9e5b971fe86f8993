package harvest

import (
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/method"
)

// TestHitMissingFromChunkStoreFails checks that a context set with a hit
// the chunk store lacks fails, naming the chunk, the table and the index,
// instead of being built from the hits that are left (issue 36: it was
// counted as hits_missing_from_chunk_store, and the job succeeded).
func TestHitMissingFromChunkStoreFails(t *testing.T) {
	st := method.NewStore()
	if err := st.Add(schemas.Chunk{ID: "c1", DocID: "d1", Sentences: []string{"One a.", "Two b.", "Three c.", "Four d."},
		SentenceIDs: []string{"s1", "s2", "s3", "s4"}}); err != nil {
		t.Fatal(err)
	}
	m := &method.Models{}
	eng, err := m.Engine(st)
	if err != nil {
		t.Fatal(err)
	}
	f := &contextSetFn{Cfg: Config{Paths: resources.Paths{Chunks: "b/chunks/*.parquet", Index: "a/index"},
		Settings: method.Settings{TopK: 10, Rerank: 10, SetSize: 4}},
		res: &resources.Resources{Engine: eng, Models: m}}
	build := func(hits ...string) *setJob {
		j := &setJob{r: schemas.Retrieval{SentenceID: "q1", Text: "A query sentence."}, done: make(chan struct{})}
		for _, id := range hits {
			j.hits = append(j.hits, schemas.Hit{ChunkID: id})
		}
		f.build(j)
		<-j.done
		return j
	}
	if j := build("c1"); j.err != nil || len(j.set) == 0 {
		t.Fatalf("stored hits: set %v, err %v", j.set, j.err)
	}
	j := build("c1", "gone")
	if j.err == nil {
		t.Fatalf("a hit missing from the chunk store built a set of %d contexts", len(j.set))
	}
	for _, want := range []string{"q1", "gone", "b/chunks/*.parquet", "a/index", "not of one corpus"} {
		if !strings.Contains(j.err.Error(), want) {
			t.Errorf("error %q does not say %q", j.err, want)
		}
	}
}
