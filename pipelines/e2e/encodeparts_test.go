package e2e

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
)

// encodeCounter reads one counter from bin/encode's printed counters.
func encodeCounter(t *testing.T, stdout, name string) int64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(name) + `\s+(\d+)\s*$`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no counter %s in:\n%s", name, stdout)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// TestEncodeInPartsEqualsOnePipeline encodes a corpus's sentences in three
// pipelines of two files each (--parts=3) and in one pipeline of six
// files: the tables must be the same file for file (the same sentences
// with the same vectors in each), with one manifest and no part record
// left. A run in parts can reuse a one-pipeline table of as many files,
// and every sentence's vector is then reused.
func TestEncodeInPartsEqualsOnePipeline(t *testing.T) {
	tmp := t.TempDir()
	corpusOut, model := ctxFixture(t, tmp)

	one, inParts := filepath.Join(tmp, "one"), filepath.Join(tmp, "parts")
	run(t, "encode", "--corpus="+corpusOut, "--model="+model, "--output="+one, "--parquet_shards=6")
	stdout := run(t, "encode", "--corpus="+corpusOut, "--model="+model, "--output="+inParts, "--parquet_shards=2", "--parts=3")
	if strings.Count(stdout, "encode: part ") != 3 {
		t.Fatalf("encode --parts=3 did not run three parts:\n%s", stdout)
	}
	sents := readAll[schemas.Sentence](t, corpusOut+"/sentences")
	if n := encodeCounter(t, stdout, "parquetio/rows_read"); n != int64(len(sents)) {
		t.Fatalf("rows_read %d, want the %d sentences once", n, len(sents))
	}
	if n := encodeCounter(t, stdout, "encode/vectors_ctx"); n != int64(len(sents)) {
		t.Fatalf("vectors_ctx %d, want %d", n, len(sents))
	}

	tableOf := func(dir string) string {
		ds, _ := filepath.Glob(dir + "/ctx-*")
		if len(ds) != 1 {
			t.Fatalf("%s: vector tables %v", dir, ds)
		}
		return ds[0]
	}
	a, b := tableOf(one), tableOf(inParts)
	if filepath.Base(a) != filepath.Base(b) {
		t.Fatalf("tables named %s and %s", filepath.Base(a), filepath.Base(b))
	}
	ctx := context.Background()
	ma, err := storage.CheckTable(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := storage.CheckTable(ctx, b)
	if err != nil {
		t.Fatalf("the table written in parts: %v", err)
	}
	if mb.NumShards != 6 || mb.Rows != int64(len(sents)) || ma.Rows != mb.Rows {
		t.Fatalf("manifests: one pipeline %d files %d rows, in parts %d files %d rows (%d sentences)",
			ma.NumShards, ma.Rows, mb.NumShards, mb.Rows, len(sents))
	}
	if left, _ := filepath.Glob(b + "/_part-*"); len(left) > 0 {
		t.Fatalf("part records left: %v", left)
	}
	files := func(dir string) []string {
		fs, _ := filepath.Glob(dir + "/part-*.parquet")
		for i := range fs {
			fs[i] = filepath.Base(fs[i])
		}
		return fs
	}
	if fa, fb := files(a), files(b); len(fa) != 6 || !slices.Equal(fa, fb) {
		t.Fatalf("files: one pipeline %v, in parts %v", fa, fb)
	}
	rowsOf := func(f string) map[string][]float32 {
		rows, err := storage.ReadParquet[schemas.SentenceVector](ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]float32{}
		for _, r := range rows {
			out[r.SentenceID] = r.Vector
		}
		return out
	}
	nonEmpty := 0
	for _, f := range files(a) {
		ra, rb := rowsOf(filepath.Join(a, f)), rowsOf(filepath.Join(b, f))
		if !reflect.DeepEqual(ra, rb) {
			t.Fatalf("%s: %d rows from one pipeline, %d in parts, not the same", f, len(ra), len(rb))
		}
		if len(ra) > 0 {
			nonEmpty++
		}
	}
	if nonEmpty < 4 {
		t.Fatalf("only %d of 6 files hold rows: the comparison says little", nonEmpty)
	}

	// In parts, reusing the one-pipeline table (six files): nothing is
	// encoded again.
	again := filepath.Join(tmp, "again")
	stdout = run(t, "encode", "--corpus="+corpusOut, "--model="+model, "--output="+again, "--parquet_shards=2", "--parts=3",
		"--reuse="+one)
	if n := encodeCounter(t, stdout, "encode/vectors_reused_ctx"); n != int64(len(sents)) {
		t.Fatalf("reused %d vectors of %d sentences:\n%s", n, len(sents), stdout)
	}
	if _, err := os.Stat(filepath.Join(tableOf(again), storage.ManifestName)); err != nil {
		t.Fatal(err)
	}
}
