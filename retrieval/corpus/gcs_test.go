package corpus

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/storage/gcstest"
)

// TestExpandInputGCS expands gs:// directories, files and globs on an
// in-memory GCS server and reads what they list.
func TestExpandInputGCS(t *testing.T) {
	gcstest.Start(t, "bucket")
	ctx := context.Background()
	var pq bytes.Buffer
	if err := parquet.Write(&pq, []webRow{{Text: ptr("A row of text."), ID: "r1"}}); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"corpus/a.txt":                              []byte("Text file a.\n"),
		"corpus/sub/b.jsonl":                        []byte(`{"id": "b1", "text": "Line b."}` + "\n"),
		"corpus/sub/web.parquet":                    pq.Bytes(),
		"corpus/.hidden/c.txt":                      []byte("Hidden.\n"),
		"corpus/out/sentences/_manifest.json":       []byte("{}"),
		"corpus/out/sentences/x.txt":                []byte("Output.\n"),
		"corpus/tables/part-00000-of-00001.parquet": []byte("PAR1"),
		"corpusx/d.txt":                             []byte("Another prefix.\n"),
	} {
		if err := storage.WriteFile(ctx, "gs://bucket/"+name, data); err != nil {
			t.Fatal(err)
		}
	}
	rels := func(arg string) []string {
		t.Helper()
		ins, err := ExpandInput(ctx, arg, Options{})
		if err != nil {
			t.Fatalf("ExpandInput(%s): %v", arg, err)
		}
		var out []string
		for _, in := range ins {
			out = append(out, in.RelPath())
		}
		return out
	}
	want := []string{"a.txt", "sub/b.jsonl", "sub/web.parquet"}
	for _, arg := range []string{"gs://bucket/corpus", "gs://bucket/corpus/"} {
		if got := rels(arg); !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", arg, got, want)
		}
	}
	if got := rels("gs://bucket/corpus/a.txt"); !slices.Equal(got, []string{"a.txt"}) {
		t.Errorf("single file: %q", got)
	}
	if got := rels("gs://bucket/corpus/*/*.jsonl"); !slices.Equal(got, []string{"sub/b.jsonl"}) {
		t.Errorf("glob: %q", got)
	}
	if _, err := ExpandInput(ctx, "gs://bucket/missing", Options{}); err == nil || !strings.Contains(err.Error(), "no files match") {
		t.Errorf("missing prefix: %v", err)
	}

	ins, err := ExpandInput(ctx, "gs://bucket/corpus", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, in := range ins {
		docs, dead, _ := collect(t, in, Options{})
		if len(dead) != 0 {
			t.Errorf("%s: dead letters %+v", in.Path, dead)
		}
		ids = append(ids, docIDs(docs)...)
	}
	if want := []string{"a.txt", "b1", "r1"}; !slices.Equal(ids, want) {
		t.Errorf("documents %q, want %q", ids, want)
	}
}
