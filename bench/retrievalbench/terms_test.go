package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
)

func readGzipLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

func TestExportTerms(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	chunks := []schemas.Chunk{
		{ID: "c2", DocID: "d", Sentences: []string{"The cat sat.", "The cat sat again."}},
		{ID: "c1", DocID: "d", Sentences: []string{"A dog ran"}},
	}
	if err := storage.WriteTable(ctx, filepath.Join(dir, "chunks"), chunks); err != nil {
		t.Fatal(err)
	}
	w, err := retrieval.CreateShard(filepath.Join(dir, "index"), 0, 1, retrieval.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range chunks {
		if err := w.Add(&chunks[i]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := retrieval.Finalize(filepath.Join(dir, "index"), 1, retrieval.BuildOptions{}, ""); err != nil {
		t.Fatal(err)
	}
	ix, err := retrieval.Open(filepath.Join(dir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	qpath := filepath.Join(dir, "q.tsv")
	if err := os.WriteFile(qpath, []byte("score\tsentence1\tsentence2\n1\tThe  cat sat, the cat!\tx\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "terms")
	if err := exportTerms(ix, filepath.Join(dir, "chunks"), qpath, 10, out); err != nil {
		t.Fatal(err)
	}
	got := readGzipLines(t, filepath.Join(out, "chunks.tsv.gz"))
	want := []string{
		"c1\ta dog\tdog ran",
		"c2\tthe cat\tcat sat\tsat the\tthe cat\tcat sat\tsat again",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("chunks:\n%q\nwant\n%q", got, want)
	}
	got = readGzipLines(t, filepath.Join(out, "queries.tsv.gz"))
	want = []string{"0\tThe cat sat, the cat!\tthe cat\tcat sat\tsat the"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("queries:\n%q\nwant\n%q", got, want)
	}

	// Chunks that are not the index's are refused.
	if err := storage.WriteTable(ctx, filepath.Join(dir, "other"), chunks[:1]); err != nil {
		t.Fatal(err)
	}
	err = exportTerms(ix, filepath.Join(dir, "other"), qpath, 10, out)
	if err == nil || !strings.Contains(err.Error(), "not the index's") {
		t.Fatalf("other chunks: err %v", err)
	}
}

func TestTopWithTies(t *testing.T) {
	var h []schemas.Hit
	for i, s := range []float32{3, 2, 2, 2, 1} {
		h = append(h, schemas.Hit{ChunkID: string(rune('a' + i)), Score: s})
	}
	ids := func(hs []schemas.Hit) string {
		var s []string
		for _, h := range hs {
			s = append(s, h.ChunkID)
		}
		return strings.Join(s, ",")
	}
	for _, c := range []struct {
		k    int
		want string
	}{{1, "a"}, {2, "a,b,c,d"}, {4, "a,b,c,d"}, {5, "a,b,c,d,e"}, {9, "a,b,c,d,e"}, {0, ""}} {
		if got := ids(topWithTies(h, c.k)); got != c.want {
			t.Errorf("k=%d: %s, want %s", c.k, got, c.want)
		}
	}
}
