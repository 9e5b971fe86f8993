package indexjob

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/pipelines/internal/beamjob/beamtest"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
)

func TestMain(m *testing.M) { beamtest.Main(m) }

// defaults returns the configuration the command line gives by default.
func defaults(t *testing.T, args ...string) Config {
	t.Helper()
	var c Config
	if err := jobrun.ParseArgs(&c, args...); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRunBuildsIndexAndTables(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for i := range 6 {
		lines = append(lines, fmt.Sprintf(`{"doc_id": "d%d", "title": "T", "paragraphs": ["Document %d opens here. It speaks of item %d at length. Then it closes."]}`, i, i, i*3))
	}
	lines = append(lines, `{"doc_id": `) // a broken record
	in := filepath.Join(dir, "c.jsonl")
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "corpus")
	c := defaults(t, "--input="+in, "--output="+out, "--shards=2", "--parquet_shards=2")
	if err := Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sents, err := storage.ReadTable[schemas.Sentence](ctx, filepath.Join(out, "sentences"))
	if err != nil || len(sents) != 18 {
		t.Fatalf("%d sentences (%v), want 18", len(sents), err)
	}
	dead, err := storage.ReadTable[schemas.DeadLetter](ctx, filepath.Join(out, "dead_letters"))
	if err != nil || len(dead) != 1 || dead[0].Line != 7 {
		t.Fatalf("dead letters %+v (%v), want the broken line 7", dead, err)
	}
	ix, err := retrieval.Open(filepath.Join(out, "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.Meta.NumShards != 2 || ix.Meta.Corpus.Count == 0 {
		t.Fatalf("index meta %+v", ix.Meta)
	}
}

func TestRunRefusesBadChunking(t *testing.T) {
	c := defaults(t, "--input=x", "--output="+t.TempDir(), "--chunk_stride=9", "--chunk_size=2")
	if err := Run(context.Background(), c); err == nil || !strings.Contains(err.Error(), "ChunkStride") {
		t.Fatalf("stride over size: %v", err)
	}
}
