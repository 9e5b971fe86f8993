package corpus

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"

	"github.com/ctxsim/ctxsim/schemas"
)

// collect reads one input with ReadInput and returns what it produced.
func collect(t *testing.T, in Input, opts Options) ([]schemas.Document, []schemas.DeadLetter, FileStats) {
	t.Helper()
	var docs []schemas.Document
	var dead []schemas.DeadLetter
	st, err := ReadInput(context.Background(), in, opts,
		func(d schemas.Document) { docs = append(docs, d) },
		func(d schemas.DeadLetter) { dead = append(dead, d) })
	if err != nil {
		t.Fatalf("ReadInput(%+v): %v", in, err)
	}
	return docs, dead, st
}

// writeFile writes data to dir/name, creating directories, and returns
// the path.
func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func docIDs(docs []schemas.Document) []string {
	var ids []string
	for _, d := range docs {
		ids = append(ids, d.DocID)
	}
	return ids
}

// TestReadJSONLWebShape reads records shaped as Dolma, RedPajama and
// FineWeb write them: {"id", "text"} plus metadata fields.
func TestReadJSONLWebShape(t *testing.T) {
	in := strings.Join([]string{
		`{"id": "web-1", "text": "First paragraph.\nSame paragraph.\n\n\nSecond paragraph.", "url": "http://x", "dump": "CC-1"}`,
		`{"text": "Numeric id.", "id": 42, "metadata": {"lang": "en"}}`,
		`{"doc_id": "native", "id": "ignored", "paragraphs": ["Native wins."], "text": "Ignored text."}`,
		`{"id": "no-text", "url": "http://y", "content": "Here."}`,
	}, "\n")
	var docs []schemas.Document
	var dead []schemas.DeadLetter
	st, err := ReadJSONL(strings.NewReader(in), "web.jsonl", Options{},
		func(d schemas.Document) { docs = append(docs, d) },
		func(d schemas.DeadLetter) { dead = append(dead, d) })
	if err != nil {
		t.Fatal(err)
	}
	if got := docIDs(docs); !slices.Equal(got, []string{"web-1", "42", "native"}) {
		t.Fatalf("documents %v", got)
	}
	if want := []string{"First paragraph. Same paragraph.", "Second paragraph."}; !slices.Equal(docs[0].Paragraphs, want) {
		t.Errorf("paragraphs %q, want %q", docs[0].Paragraphs, want)
	}
	if docs[0].Origin != "web.jsonl:1" || docs[0].Source != "" {
		t.Errorf("document fields %+v", docs[0])
	}
	if !slices.Equal(docs[2].Paragraphs, []string{"Native wins."}) {
		t.Errorf("native record read as %q", docs[2].Paragraphs)
	}
	if len(dead) != 1 || dead[0].Reason != ReasonMissingField || dead[0].Line != 4 ||
		!strings.Contains(dead[0].Detail, `the record has fields "id", "url", "content"`) {
		t.Errorf("dead letters %+v", dead)
	}
	// url, dump; metadata; none; url, content (in a dead letter).
	if want := (Stats{Lines: 4, Documents: 3, DeadLetters: 1, UnknownFields: 5}); st != want {
		t.Errorf("stats %+v, want %+v", st, want)
	}
}

func TestReadJSONLCustomFields(t *testing.T) {
	in := strings.Join([]string{
		`{"url": "http://a", "content": "Body of a.\n\nMore of a.", "text": "not read"}`,
		`{"id": "i", "text": "Default names are not read now."}`,
	}, "\n")
	for _, strict := range []bool{false, true} {
		opts := Options{TextField: "content", IDField: "url", StrictFields: strict}
		var docs []schemas.Document
		var dead []schemas.DeadLetter
		st, err := ReadJSONL(strings.NewReader(in), "c.jsonl", opts,
			func(d schemas.Document) { docs = append(docs, d) },
			func(d schemas.DeadLetter) { dead = append(dead, d) })
		if err != nil {
			t.Fatal(err)
		}
		if strict {
			if len(docs) != 0 || len(dead) != 2 || dead[0].Reason != ReasonUnknownField || !strings.Contains(dead[0].Detail, `"text"`) {
				t.Errorf("strict: docs %v, dead %+v", docIDs(docs), dead)
			}
			continue
		}
		if len(docs) != 1 || docs[0].DocID != "http://a" || !slices.Equal(docs[0].Paragraphs, []string{"Body of a.", "More of a."}) {
			t.Errorf("documents %+v", docs)
		}
		if len(dead) != 1 || dead[0].Reason != ReasonMissingField ||
			!strings.Contains(dead[0].Detail, `missing fields "doc_id" (or "url") and "paragraphs" (or "content")`) {
			t.Errorf("dead letters %+v", dead)
		}
		if st.UnknownFields != 3 {
			t.Errorf("UnknownFields = %d, want 3 (text; id, text)", st.UnknownFields)
		}
	}
}

// zstdBytes compresses data with zstd.
func zstdBytes(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadInputZstd(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for i := range 500 {
		lines = append(lines, fmt.Sprintf(`{"id": "z%d", "text": "Sentence one of %d. Sentence two."}`, i, i))
	}
	full := zstdBytes(t, []byte(strings.Join(lines, "\n")+"\n"))
	path := writeFile(t, dir, "web.jsonl.zst", full)
	docs, dead, st := collect(t, Input{Path: path}, Options{})
	if len(docs) != 500 || len(dead) != 0 || st.Records != 500 || st.Failed {
		t.Fatalf("%d docs, dead %+v, stats %+v", len(docs), dead, st)
	}

	// Text files are sniffed too, whatever their name.
	txt := writeFile(t, dir, "essay.txt.zst", zstdBytes(t, []byte("A zstd essay.\n\nIts second paragraph.")))
	docs, _, _ = collect(t, Input{Path: txt}, Options{})
	if len(docs) != 1 || docs[0].DocID != "essay.txt.zst" || len(docs[0].Paragraphs) != 2 {
		t.Errorf("zstd text file: %+v", docs)
	}

	// A truncated stream is a read_error, never a silent short read.
	trunc := writeFile(t, dir, "trunc.jsonl.zst", full[:len(full)/2])
	docs, dead, st = collect(t, Input{Path: trunc}, Options{})
	if !st.Failed || len(dead) != 1 || dead[0].Reason != ReasonReadError || len(docs) >= 500 {
		t.Errorf("truncated zstd: %d docs, dead %+v, stats %+v", len(docs), dead, st)
	}
}

func TestDecompressZstd(t *testing.T) {
	z := zstdBytes(t, []byte("hello\n"))
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"zstd", z, "hello\n"},
		{"two zstd frames", append(slices.Clone(z), z...), "hello\nhello\n"},
		{"zstd magic prefix only in plain text", []byte{0x28, 0xb5, 'x'}, "\x28\xb5x"},
	} {
		r, err := Decompress(bytes.NewReader(tc.in))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := io.ReadAll(r)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: read %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	r, err := Decompress(bytes.NewReader(z[:len(z)-3]))
	if err == nil {
		_, err = io.ReadAll(r)
	}
	if err == nil {
		t.Error("truncated zstd stream: no error")
	}
}

func TestFormatByName(t *testing.T) {
	for name, want := range map[string][2]bool{
		"a.jsonl": {true, false}, "a.JSONL.GZ": {true, false}, "a.jsonl.zst": {true, false},
		"a.ndjson.zstd": {true, false}, "a.json.gz": {true, false}, "a.txt.zst": {false, false},
		"a.zst": {false, false}, "a.parquet": {false, true}, "b/A.Parquet": {false, true},
		"a.jsonl.parquet": {false, true}, "a.txt": {false, false},
	} {
		if got := [2]bool{IsJSONL(name) && !IsParquet(name), IsParquet(name)}; got != want {
			t.Errorf("%s: JSONL, Parquet = %v, want %v", name, got, want)
		}
	}
}

// corpusTree writes a directory of corpus files and ctxsim outputs and
// returns it with the files ExpandInput must list, relative to it.
func corpusTree(t *testing.T) (string, []string) {
	dir := t.TempDir()
	for _, name := range []string{
		"a.txt", "sub/b.txt", "sub/deeper/c.jsonl", "notes.md",
		".hidden.txt", ".git/config", "_SUCCESS", "_drafts/d.txt",
		"out/_lease.json", "out/summary.json",
		"tables/sentences/_manifest.json", "tables/sentences/x.txt",
		"idx/ctxsim-index.json", "idx/meta.txt",
		"idx2/shard-00000-of-00002/seg.zap", "parts/part-00000-of-00004.parquet",
		"sub/.tmp-part-00001", "web.parquet",
	} {
		writeFile(t, dir, name, []byte("Some text.\n"))
	}
	return dir, []string{"a.txt", "notes.md", "sub/b.txt", "sub/deeper/c.jsonl", "web.parquet"}
}

func TestExpandInputDirectory(t *testing.T) {
	dir, want := corpusTree(t)
	ctx := context.Background()
	for _, arg := range []string{dir, dir + "/"} {
		ins, err := ExpandInput(ctx, arg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var rels []string
		for _, in := range ins {
			if in.Root != arg {
				t.Errorf("%s: root %q, want %q", in.Path, in.Root, arg)
			}
			rels = append(rels, in.RelPath())
		}
		if !slices.Equal(rels, want) {
			t.Errorf("ExpandInput(%s) = %q, want %q", arg, rels, want)
		}
	}

	// A glob matching directories expands them, relative to its root.
	ins, err := ExpandInput(ctx, filepath.Join(dir, "su*"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var rels []string
	for _, in := range ins {
		rels = append(rels, in.RelPath())
	}
	if want := []string{"sub/b.txt", "sub/deeper/c.jsonl"}; !slices.Equal(rels, want) {
		t.Errorf("glob of directories: %q, want %q", rels, want)
	}

	// A glob skips hidden names and outputs as a directory does.
	ins, err = ExpandInput(ctx, filepath.Join(dir, "*"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	rels = rels[:0]
	for _, in := range ins {
		rels = append(rels, in.RelPath())
	}
	if !slices.Equal(rels, want) {
		t.Errorf("glob of everything: %q, want %q", rels, want)
	}
	ins, err = ExpandInput(ctx, filepath.Join(dir, ".hid*"), Options{})
	if err != nil || len(ins) != 1 || ins[0].RelPath() != ".hidden.txt" {
		t.Errorf("glob naming a hidden file: %+v, %v", ins, err)
	}

	// A table directory holds nothing to read; an empty one either.
	if _, err := ExpandInput(ctx, filepath.Join(dir, "parts"), Options{}); err == nil || !strings.Contains(err.Error(), "no corpus files under directory") {
		t.Errorf("directory of part files: %v", err)
	}
	if _, err := ExpandInput(ctx, filepath.Join(dir, "missing"), Options{}); err == nil || !strings.Contains(err.Error(), "no files match") {
		t.Errorf("missing path: %v", err)
	}
}

// TestTextIDsRelativeToRoot: a text file's ID is its path under the input
// root, the same from any working directory and for a directory, a glob
// or the file itself.
func TestTextIDsRelativeToRoot(t *testing.T) {
	base := t.TempDir()
	writeFile(t, base, "data/essays/one.txt", []byte("Essay one.\n\nIts end."))
	writeFile(t, base, "data/essays/more/two.txt", []byte("Essay two."))
	ctx := context.Background()
	ids := func(arg string) []string {
		t.Helper()
		ins, err := ExpandInput(ctx, arg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, in := range ins {
			docs, dead, _ := collect(t, in, Options{})
			if len(docs) != 1 || len(dead) != 0 {
				t.Fatalf("%+v: docs %+v, dead %+v", in, docs, dead)
			}
			if docs[0].Origin != in.Path {
				t.Errorf("Origin %q, want the path %q", docs[0].Origin, in.Path)
			}
			out = append(out, docs[0].DocID)
		}
		return out
	}
	want := []string{"more/two.txt", "one.txt"}
	t.Chdir(base)
	fromBase := ids("data/essays")
	if !slices.Equal(fromBase, want) {
		t.Errorf("from %s: %q, want %q", base, fromBase, want)
	}
	t.Chdir(filepath.Join(base, "data"))
	for _, arg := range []string{"essays", "./essays/", filepath.Join(base, "data/essays"), "essays/*", "../data/essays/*"} {
		if got := ids(arg); !slices.Equal(got, want) {
			t.Errorf("--input=%s from %s/data: %q, want %q", arg, base, got, want)
		}
	}
	if got := ids("essays/*.txt"); !slices.Equal(got, []string{"one.txt"}) {
		t.Errorf("glob: %q", got)
	}
	if got := ids("essays/more/two.txt"); !slices.Equal(got, []string{"two.txt"}) {
		t.Errorf("single file: %q", got)
	}
	if got := ids("*/more/*.txt"); !slices.Equal(got, []string{"essays/more/two.txt"}) {
		t.Errorf("glob with a wildcard directory: %q", got)
	}
}

func TestRelPathRemote(t *testing.T) {
	for _, tc := range []struct {
		in   Input
		want string
	}{
		{Input{Path: "gs://b/corpus/x/a.txt", Root: "gs://b/corpus/"}, "x/a.txt"},
		{Input{Path: "gs://b/corpus/x/a.txt", Root: "gs://b/corpus"}, "x/a.txt"},
		{Input{Path: "gs://b/corpus/x/a.txt"}, "a.txt"},
		{Input{Path: "gs://b/other/a.txt", Root: "gs://b/corpus/"}, "gs://b/other/a.txt"},
	} {
		if got := tc.in.RelPath(); got != tc.want {
			t.Errorf("%+v.RelPath() = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// webRow is a FineWeb-like row: text and ID columns among others.
type webRow struct {
	Text  *string `parquet:"text,optional"`
	ID    string  `parquet:"id"`
	URL   string  `parquet:"url"`
	Score float64 `parquet:"score"`
}

// writeParquet writes rows to dir/name as Parquet in row groups of 2.
func writeParquet[T any](t *testing.T, dir, name string, rows []T) string {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf, parquet.MaxRowsPerRowGroup(2))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return writeFile(t, dir, name, buf.Bytes())
}

func ptr(s string) *string { return &s }

func TestReadParquet(t *testing.T) {
	dir := t.TempDir()
	rows := []webRow{
		{Text: ptr("First page.\n\nIts second paragraph."), ID: "<urn:1>", URL: "http://a"},
		{Text: ptr("Second page."), ID: "<urn:2>"},
		{Text: nil, ID: "<urn:3>"},
		{Text: ptr("  \n "), ID: "<urn:4>"},
		{Text: ptr("Fifth page."), ID: ""},
	}
	path := writeParquet(t, dir, "web/part-a.parquet", rows)
	docs, dead, st := collect(t, Input{Path: path, Root: dir}, Options{})
	if got := docIDs(docs); !slices.Equal(got, []string{"<urn:1>", "<urn:2>"}) {
		t.Errorf("documents %q", got)
	}
	if !slices.Equal(docs[0].Paragraphs, []string{"First page.", "Its second paragraph."}) || docs[1].Origin != path+":2" {
		t.Errorf("document %+v", docs[0])
	}
	var reasons []string
	for _, d := range dead {
		reasons = append(reasons, fmt.Sprintf("%s@%d", d.Reason, d.Line))
	}
	if want := []string{"missing_field@3", "empty_document@4", "missing_field@5"}; !slices.Equal(reasons, want) {
		t.Errorf("dead letters %q, want %q", reasons, want)
	}
	if st != (FileStats{Records: 5, Documents: 2, Dead: 3}) {
		t.Errorf("stats %+v", st)
	}

	// Without the ID column, IDs are the path under the root and the row.
	type textOnly struct {
		Content string `parquet:"content"`
		Lang    string `parquet:"lang"`
	}
	p2 := writeParquet(t, dir, "c4/en.parquet", []textOnly{{"One.", "en"}, {"Two.", "en"}, {"Three.", "en"}})
	docs, dead, _ = collect(t, Input{Path: p2, Root: dir}, Options{TextField: "content"})
	if got := docIDs(docs); len(dead) != 0 || !slices.Equal(got, []string{"c4/en.parquet#1", "c4/en.parquet#2", "c4/en.parquet#3"}) {
		t.Errorf("row IDs %q, dead %+v", got, dead)
	}

	// An integer ID column.
	type intID struct {
		ID   int64  `parquet:"doc"`
		Text string `parquet:"text"`
	}
	p3 := writeParquet(t, dir, "ints.parquet", []intID{{7, "Seven."}})
	docs, _, _ = collect(t, Input{Path: p3}, Options{IDField: "doc"})
	if got := docIDs(docs); !slices.Equal(got, []string{"7"}) {
		t.Errorf("integer IDs %q", got)
	}

	// A file without the text column: one dead letter naming its columns.
	docs, dead, st = collect(t, Input{Path: p2}, Options{})
	if len(docs) != 0 || len(dead) != 1 || !st.Failed || st.Records != 0 || dead[0].Reason != ReasonMissingField ||
		!strings.Contains(dead[0].Detail, `no text column "text"; the file has columns "content", "lang"`) {
		t.Errorf("no text column: docs %v, dead %+v, stats %+v", docIDs(docs), dead, st)
	}

	// Not Parquet at all: a read error.
	bad := writeFile(t, dir, "bad.parquet", []byte("not parquet"))
	_, dead, st = collect(t, Input{Path: bad}, Options{})
	if !st.Failed || len(dead) != 1 || dead[0].Reason != ReasonReadError {
		t.Errorf("corrupt file: dead %+v, stats %+v", dead, st)
	}
}

func TestReadParquetTextTooLong(t *testing.T) {
	dir := t.TempDir()
	p := writeParquet(t, dir, "long.parquet", []webRow{{Text: ptr(strings.Repeat("x", 100)), ID: "a"}, {Text: ptr("Short."), ID: "b"}})
	docs, dead, _ := collect(t, Input{Path: p}, Options{MaxLineBytes: 50})
	if got := docIDs(docs); !slices.Equal(got, []string{"b"}) || len(dead) != 1 || dead[0].Reason != ReasonLineTooLong {
		t.Errorf("docs %q, dead %+v", got, dead)
	}
}

func TestDeadLetterTally(t *testing.T) {
	var tally DeadLetterTally
	add := func(reason, src string, line int64) {
		tally.Add(schemas.DeadLetter{Stage: Stage, Reason: reason, Source: src, Line: line, Detail: reason + " at " + src})
	}
	add(ReasonMissingField, "b.jsonl", 3)
	add(ReasonMissingField, "a.jsonl", 9)
	add(ReasonMissingField, "a.jsonl", 2)
	add(ReasonInvalidJSON, "c.jsonl", 1)
	add(ReasonEmptyDocument, "d.txt", 0)
	tally.Add(schemas.DeadLetter{Stage: "index", Reason: "duplicate_chunk", Source: "x"})
	top := tally.Top(2)
	if tally.Total != 6 || len(top) != 2 || top[0].Reason != ReasonMissingField || top[0].Count != 3 ||
		top[0].Example.Source != "a.jsonl" || top[0].Example.Line != 2 || top[1].Reason != ReasonEmptyDocument {
		t.Fatalf("Top(2) = %+v (total %d)", top, tally.Total)
	}
	if all := tally.Top(0); len(all) != 4 || all[2].Reason != "index/duplicate_chunk" {
		t.Errorf("Top(0) = %+v", all)
	}
	var buf bytes.Buffer
	tally.Print(&buf, 2, "  ")
	want := "         3  missing_field   e.g. a.jsonl:2: missing_field at a.jsonl\n" +
		"         1  empty_document  e.g. d.txt: empty_document at d.txt\n" +
		"  (and 2 more reasons)\n"
	if got := buf.String(); got != want {
		t.Errorf("Print:\n%s\nwant:\n%s", got, want)
	}
}
