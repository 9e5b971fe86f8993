package retrieval

import (
	"slices"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/schemas"
)

// fingerprint fingerprints the distinct IDs of chunks.
func fingerprint(chunks []schemas.Chunk) Fingerprint {
	var f Fingerprint
	seen := map[string]bool{}
	for _, c := range chunks {
		if !seen[c.ID] {
			seen[c.ID] = true
			f.AddID(c.ID)
		}
	}
	return f
}

// TestCheckChunks checks that an index accepts the chunk IDs it was built
// from, in any order, and refuses those of another corpus, or one chunk
// more or fewer, naming the index and the table.
func TestCheckChunks(t *testing.T) {
	chunks := synthChunks(50, 3)
	dir := t.TempDir()
	ix := buildIndex(t, dir, chunks, 2, BuildOptions{})

	mixed := append(slices.Clone(chunks[25:]), chunks[:25]...)
	mixed = append(mixed, chunks[7]) // a repeated ID, as a chunks table may hold
	if err := ix.Meta.CheckChunks(dir, "same/*.parquet", fingerprint(mixed)); err != nil {
		t.Fatalf("the index's own chunks: %v", err)
	}
	for name, other := range map[string][]schemas.Chunk{
		"another corpus":  synthChunks(50, 4)[:40],
		"one chunk fewer": chunks[1:],
		"one chunk more":  append(slices.Clone(chunks), schemas.Chunk{ID: "extra"}),
	} {
		for i := range other {
			if name == "another corpus" {
				other[i].ID = "other-" + other[i].ID
			}
		}
		err := ix.Meta.CheckChunks(dir, "other/*.parquet", fingerprint(other))
		if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "other/*.parquet") ||
			!strings.Contains(err.Error(), "not of one corpus") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
