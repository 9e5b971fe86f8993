package corpus

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
)

// manyDocs returns n JSONL documents, one per line, and their IDs.
func manyDocs(n int) ([]byte, []string) {
	var b bytes.Buffer
	var ids []string
	for i := range n {
		id := fmt.Sprintf("d%04d", i)
		fmt.Fprintf(&b, `{"doc_id": %q, "paragraphs": ["Document %d speaks of the harbour at dawn. The boats leave one by one."]}`+"\n", id, i)
		ids = append(ids, id)
	}
	return b.Bytes(), ids
}

func gzipBytes(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReadInputWithdrawsCorruptCompressedFile: one byte changed inside a
// gzip member or a zstd frame lets the decoder return text (possibly
// garbled) before the checksum at the frame's end fails. None of the
// documents read from such a file may pass; each is dead-lettered as
// corrupt_file, and the counts still reconcile.
func TestReadInputWithdrawsCorruptCompressedFile(t *testing.T) {
	plain, ids := manyDocs(3000)
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"c.jsonl.gz", gzipBytes(t, plain)},
		{"c.jsonl.zst", zstdBytes(t, plain)},
		{"c.txt.gz", gzipBytes(t, []byte(strings.Repeat("A sentence about the harbour. ", 4000)))},
	} {
		clean := writeFile(t, dir, "clean-"+tc.name, tc.data)
		docs, dead, st := collect(t, Input{Path: clean}, Options{})
		if len(docs) == 0 || len(dead) != 0 || st.Failed || st.Corrupt {
			t.Fatalf("%s intact: %d docs, dead %+v, stats %+v", tc.name, len(docs), dead, st)
		}
		if strings.HasPrefix(tc.name, "c.jsonl") && !slices.Equal(docIDs(docs), ids) {
			t.Fatalf("%s intact: %d documents, want %d", tc.name, len(docs), len(ids))
		}
		// Offsets early in the stream: the old reader emitted every line
		// decoded before the check at the end failed.
		for _, off := range []int{len(tc.data) / 10, len(tc.data) / 3, len(tc.data) / 2, len(tc.data) - 5} {
			bad := slices.Clone(tc.data)
			bad[off] ^= 0x5a
			p := writeFile(t, dir, fmt.Sprintf("bad-%d-%s", off, tc.name), bad)
			docs, dead, st := collect(t, Input{Path: p}, Options{})
			if len(docs) != 0 {
				t.Errorf("%s, byte %d of %d changed: %d documents passed (first %q)", tc.name, off, len(tc.data), len(docs), docs[0].DocID)
			}
			reasons := map[string]int64{}
			for _, d := range dead {
				reasons[d.Reason]++
			}
			if !st.Corrupt || !st.Failed || reasons[ReasonReadError] != 1 || reasons[ReasonCorruptFile] != st.Withdrawn {
				t.Errorf("%s, byte %d changed: stats %+v, dead letters by reason %v", tc.name, off, st, reasons)
			}
			if st.Records != st.Documents+st.Dead || int64(len(dead)) != st.Dead+1 {
				t.Errorf("%s, byte %d changed: counts do not reconcile: %+v with %d dead letters", tc.name, off, st, len(dead))
			}
		}
	}
}

// TestReadInputCorruptFileDetail: a withdrawn document's dead letter names
// it, its line and the failed check.
func TestReadInputCorruptFileDetail(t *testing.T) {
	plain, _ := manyDocs(3000)
	data := gzipBytes(t, plain)
	data[len(data)-6] ^= 0xff // inside the CRC-32 at the member's end
	p := writeFile(t, t.TempDir(), "c.jsonl.gz", data)
	docs, dead, st := collect(t, Input{Path: p}, Options{})
	if len(docs) != 0 || st.Withdrawn != 3000 || len(dead) != 3001 {
		t.Fatalf("%d docs, %d dead letters, stats %+v; want 3000 withdrawn", len(docs), len(dead), st)
	}
	d := dead[0]
	if d.Reason != ReasonCorruptFile || d.Line != 1 || d.Record != "d0000" ||
		!strings.Contains(d.Detail, `document "d0000" comes from a gzip stream that fails its check (gzip: invalid checksum`) {
		t.Errorf("first dead letter %+v", d)
	}
	if last := dead[len(dead)-1]; last.Reason != ReasonReadError || !strings.Contains(last.Detail, "invalid checksum") {
		t.Errorf("file dead letter %+v", last)
	}
}

// TestReadTextBoundedWhileReading: a plain-text file longer than
// MaxLineBytes is dead-lettered with its size, and reading it holds about
// MaxLineBytes, not the file.
func TestReadTextBoundedWhileReading(t *testing.T) {
	const size = 64 << 20
	opts := Options{MaxLineBytes: 1 << 20}.withDefaults()
	var dead []schemas.DeadLetter
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	st, err := readText(io.LimitReader(repeatReader('x'), size), "big.txt", "big.txt", opts,
		func(schemas.Document) { t.Error("a document passed") },
		func(d schemas.DeadLetter) { dead = append(dead, d) })
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if st != (Stats{Lines: 1, DeadLetters: 1}) || len(dead) != 1 || dead[0].Reason != ReasonLineTooLong ||
		!strings.Contains(dead[0].Detail, fmt.Sprintf("text file is %d bytes, more than MaxLineBytes=%d", size, 1<<20)) {
		t.Fatalf("stats %+v, dead letters %+v", st, dead)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("reading a %d-byte text allocated %d bytes; want about MaxLineBytes", size, alloc)
	}

	// Through ReadInput: at the bound a file is a document, past it a dead
	// letter.
	dir := t.TempDir()
	text := strings.Repeat("Words of a sentence. ", 50)
	p := writeFile(t, dir, "t.txt", []byte(text))
	docs, dead, fst := collect(t, Input{Path: p}, Options{MaxLineBytes: len(text)})
	if len(docs) != 1 || len(dead) != 0 || fst.Records != 1 {
		t.Errorf("text at the bound: %d docs, dead %+v", len(docs), dead)
	}
	docs, dead, fst = collect(t, Input{Path: p}, Options{MaxLineBytes: len(text) - 1})
	if len(docs) != 0 || len(dead) != 1 || dead[0].Reason != ReasonLineTooLong || fst != (FileStats{Records: 1, Dead: 1}) {
		t.Errorf("text past the bound: %d docs, dead %+v, stats %+v", len(docs), dead, fst)
	}
}

// repeatReader yields the byte c forever.
type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// TestReadJSONLLoneSurrogate: encoding/json reads an escaped lone
// surrogate as U+FFFD; such a record is dead-lettered when the escape is
// in a field the document is made of.
func TestReadJSONLLoneSurrogate(t *testing.T) {
	for _, tc := range []struct {
		line   string
		reason string // "" for a document
		offset int    // of the escape, for a dead letter
	}{
		{`{"id": "a", "text": "A lone \ud800 here."}`, ReasonInvalidUTF8, 28},
		{`{"id": "a", "text": "A lone low \udc00 here."}`, ReasonInvalidUTF8, 32},
		{`{"id": "a", "text": "Upper case \uD83D too."}`, ReasonInvalidUTF8, 32},
		{`{"id": "a", "text": "Two highs \ud83d\ud83d."}`, ReasonInvalidUTF8, 31},
		{`{"id": "a", "text": "At the end \ud83d"}`, ReasonInvalidUTF8, 32},
		{`{"id": "\udfff", "text": "In the ID."}`, ReasonInvalidUTF8, 8},
		{`{"doc_id": "a", "title": "\ud800", "paragraphs": ["Title."]}`, ReasonInvalidUTF8, 26},
		{`{"doc_id": "a", "paragraphs": ["Fine.", "x \ud800"]}`, ReasonInvalidUTF8, 43},
		{`{"id": "a", "text": "A pair \ud83d\ude00 is a character."}`, "", 0},
		{`{"id": "a", "text": "An escaped backslash \\ud800 is text."}`, "", 0},
		{`{"id": "a", "text": "Quotes \"\\\" then \u00e9."}`, "", 0},
		{`{"id": "a", "text": "Not read.", "meta": "\ud800"}`, "", 0},
	} {
		var docs []schemas.Document
		var dead []schemas.DeadLetter
		_, err := ReadJSONL(strings.NewReader(tc.line), "s.jsonl", Options{},
			func(d schemas.Document) { docs = append(docs, d) },
			func(d schemas.DeadLetter) { dead = append(dead, d) })
		if err != nil {
			t.Fatal(err)
		}
		if tc.reason == "" {
			if len(docs) != 1 || len(dead) != 0 || strings.ContainsRune(strings.Join(docs[0].Paragraphs, ""), '\uFFFD') {
				t.Errorf("%s: docs %+v, dead %+v; want one document without U+FFFD", tc.line, docs, dead)
			}
			continue
		}
		want := fmt.Sprintf("at byte offset %d of the line is a lone UTF-16 surrogate", tc.offset)
		if len(docs) != 0 || len(dead) != 1 || dead[0].Reason != tc.reason || !strings.Contains(dead[0].Detail, want) {
			t.Errorf("%s: docs %+v, dead %+v; want %s %q", tc.line, docs, dead, tc.reason, want)
		} else if got := tc.line[tc.offset : tc.offset+2]; got != `\u` {
			t.Errorf("%s: the offset points at %q", tc.line, got)
		}
	}
}

// TestReadParquetRefusesMisshapenColumns: an ID or text column that is a
// group or repeated, or of a type that is no ID, refuses the file instead
// of being passed over.
func TestReadParquetRefusesMisshapenColumns(t *testing.T) {
	dir := t.TempDir()
	type structID struct {
		Source string `parquet:"source"`
		Num    int64  `parquet:"num"`
	}
	type withStructID struct {
		ID   structID `parquet:"id"`
		Text string   `parquet:"text"`
	}
	type withListID struct {
		ID   []string `parquet:"id,list"`
		Text string   `parquet:"text"`
	}
	type withRepeatedID struct {
		ID   []string `parquet:"id"`
		Text string   `parquet:"text"`
	}
	type withFloatID struct {
		ID   float64 `parquet:"id"`
		Text string  `parquet:"text"`
	}
	type withStructText struct {
		ID   string   `parquet:"id"`
		Text structID `parquet:"text"`
	}
	for _, tc := range []struct {
		path, want string
	}{
		{writeParquet(t, dir, "struct.parquet", []withStructID{{structID{"web", 1}, "One."}}),
			`ID column "id" is a group (a STRUCT, LIST or MAP) of the columns "id.source", "id.num", not strings or integers`},
		{writeParquet(t, dir, "list.parquet", []withListID{{[]string{"a"}, "One."}}),
			`ID column "id" is a group (a STRUCT, LIST or MAP) of the columns "id.list.element"`},
		{writeParquet(t, dir, "repeated.parquet", []withRepeatedID{{[]string{"a"}, "One."}}),
			`ID column "id" is repeated (a list of values in each row)`},
		{writeParquet(t, dir, "float.parquet", []withFloatID{{1.5, "One."}}),
			`ID column "id" holds DOUBLE values, not strings or integers`},
		{writeParquet(t, dir, "text.parquet", []withStructText{{"a", structID{"web", 1}}}),
			`text column "text" is a group (a STRUCT, LIST or MAP) of the columns "text.source", "text.num", not strings`},
	} {
		docs, dead, st := collect(t, Input{Path: tc.path}, Options{})
		if len(docs) != 0 || len(dead) != 1 || !st.Failed || st.Records != 0 || dead[0].Reason != ReasonMissingField ||
			dead[0].Line != 0 || !strings.Contains(dead[0].Detail, tc.want) {
			t.Errorf("%s: docs %q, dead %+v, stats %+v; want one dead letter %q", filepath.Base(tc.path), docIDs(docs), dead, st, tc.want)
		}
	}
}

// linkTree writes an input directory with symbolic links of every kind
// and a file outside it, and returns the directory and the outside file.
func linkTree(t *testing.T) (string, string) {
	base := t.TempDir()
	outside := writeFile(t, base, "elsewhere/secret.txt", []byte("A secret outside the input.\n"))
	dir := filepath.Join(base, "input")
	writeFile(t, dir, "a.txt", []byte("The first document.\n"))
	writeFile(t, dir, "sub/b.txt", []byte("The second document.\n"))
	for link, target := range map[string]string{
		"inside.txt":     "sub/b.txt",
		"dangling.txt":   "missing.txt",
		"outside.txt":    outside,
		"up.txt":         "../elsewhere/secret.txt",
		"dirlink":        "sub",
		"loop.txt":       "loop.txt",
		"sub/hidden/.x":  "nowhere", // hidden: skipped without a word
		"sub/to-a.txt":   "../a.txt",
		"sub/escape.txt": "../../elsewhere/secret.txt",
	} {
		p := filepath.Join(dir, filepath.FromSlash(link))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, outside
}

// TestExpandInputSymlinks: under a directory or a glob, links to files
// inside the input are read; a dangling link, a link leading outside (but
// with FollowLinks), a link to a directory and a FIFO are each listed to
// be dead-lettered with their reason, never dropped or followed out.
func TestExpandInputSymlinks(t *testing.T) {
	dir, _ := linkTree(t)
	ctx := context.Background()
	describe := func(ins []Input) []string {
		var out []string
		for _, in := range ins {
			s := in.RelPath()
			if in.SkipReason != "" {
				s += " " + in.SkipReason
			}
			out = append(out, s)
		}
		return out
	}
	want := []string{
		"a.txt", "dangling.txt broken_link", "dirlink not_regular_file", "fifo.txt not_regular_file",
		"inside.txt", "loop.txt broken_link", "outside.txt link_outside_input",
		"sub/b.txt", "sub/escape.txt link_outside_input", "sub/to-a.txt", "up.txt link_outside_input",
	}
	ins, err := ExpandInput(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := describe(ins); !slices.Equal(got, want) {
		// Fatal: reading the FIFO below would block.
		t.Fatalf("directory:\n got %q\nwant %q", got, want)
	}
	ins, err = ExpandInput(ctx, filepath.Join(dir, "*"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := describe(ins); !slices.Equal(got, want) {
		t.Errorf("glob:\n got %q\nwant %q", got, want)
	}

	ins, err = ExpandInput(ctx, dir, Options{FollowLinks: true})
	if err != nil {
		t.Fatal(err)
	}
	wantFollow := []string{
		"a.txt", "dangling.txt broken_link", "dirlink not_regular_file", "fifo.txt not_regular_file",
		"inside.txt", "loop.txt broken_link", "outside.txt",
		"sub/b.txt", "sub/escape.txt", "sub/to-a.txt", "up.txt",
	}
	if got := describe(ins); !slices.Equal(got, wantFollow) {
		t.Errorf("FollowLinks:\n got %q\nwant %q", got, wantFollow)
	}

	// Reading the inputs: every skipped one is a dead letter with its
	// reason, and the outside file is not read.
	ins, _ = ExpandInput(ctx, dir, Options{})
	var docs []string
	reasons := map[string]int{}
	failed := 0
	for _, in := range ins {
		st, err := ReadInput(ctx, in, Options{},
			func(d schemas.Document) { docs = append(docs, d.DocID+": "+strings.Join(d.Paragraphs, " ")) },
			func(d schemas.DeadLetter) {
				reasons[d.Reason]++
				if d.Source != in.Path || d.Detail == "" {
					t.Errorf("dead letter %+v for %s", d, in.Path)
				}
			})
		if err != nil {
			t.Fatal(err)
		}
		if st.Failed {
			failed++
		}
	}
	wantDocs := []string{"a.txt: The first document.", "inside.txt: The second document.",
		"sub/b.txt: The second document.", "sub/to-a.txt: The first document."}
	if !slices.Equal(docs, wantDocs) {
		t.Errorf("documents %q, want %q", docs, wantDocs)
	}
	wantReasons := map[string]int{ReasonBrokenLink: 2, ReasonNotRegularFile: 2, ReasonLinkOutside: 3}
	if fmt.Sprint(reasons) != fmt.Sprint(wantReasons) || failed != 7 {
		t.Errorf("dead letters by reason %v (%d files failed), want %v", reasons, failed, wantReasons)
	}
}

// TestExpandInputNamedLink: a file named as the input itself is read
// wherever its link leads; the user named it.
func TestExpandInputNamedLink(t *testing.T) {
	dir, outside := linkTree(t)
	ins, err := ExpandInput(context.Background(), filepath.Join(dir, "outside.txt"), Options{})
	if err != nil || len(ins) != 1 || ins[0].SkipReason != "" {
		t.Fatalf("ExpandInput of a link named as input: %+v, %v", ins, err)
	}
	docs, _, _ := collect(t, ins[0], Options{})
	if len(docs) != 1 || docs[0].Paragraphs[0] != "A secret outside the input." {
		t.Errorf("documents %+v (link to %s)", docs, outside)
	}
}

// BenchmarkReadInputCompressed compares reading a compressed JSONL file
// with ReadInput, which decompresses it once to check it before parsing,
// against one pass of Decompress and ReadJSONL, which emits documents
// before the check at the end of the stream, and against the check alone.
// Besides wall time it reports the process's CPU time per file
// (cpu-ms/op), steadier on a busy machine.
//
// It reads the shared mixed-2m corpus when it is there, else 20,000
// made-up documents (which compress far better than prose).
func BenchmarkReadInputCompressed(b *testing.B) {
	var plain bytes.Buffer
	if f, err := os.Open(mixed2MPath); err == nil {
		r, err := Decompress(f)
		if err == nil {
			_, err = io.Copy(&plain, r)
		}
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%s: %d bytes", mixed2MPath, plain.Len())
	} else {
		for i := range 20000 {
			fmt.Fprintf(&plain, `{"id": "d%d", "text": "Paragraph %d of a web page speaks of the harbour at dawn, when the boats leave one by one. `+
				`It goes on about the weather in %d and the price of fish.\n\nA second paragraph, with a list: one, two, three. The end of page %d."}`+"\n", i, i, 1900+i%100, i)
		}
	}
	docs := bytes.Count(plain.Bytes(), []byte{'\n'})
	dir := b.TempDir()
	var zb bytes.Buffer
	zw, err := zstd.NewWriter(&zb)
	if err != nil {
		b.Fatal(err)
	}
	zw.Write(plain.Bytes())
	zw.Close()
	for _, f := range []struct {
		name string
		data []byte
	}{{"c.jsonl.gz", gzipBytes(b, plain.Bytes())}, {"c.jsonl.zst", zb.Bytes()}} {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, f.data, 0o644); err != nil {
			b.Fatal(err)
		}
		for _, way := range []struct {
			name string
			read func() (int, error)
		}{
			{"check", func() (int, error) {
				_, bad, err := checkCompressed(context.Background(), localFS(b), p)
				return docs, errors.Join(bad, err)
			}},
			{"one-pass", func() (int, error) {
				fh, err := os.Open(p)
				if err != nil {
					return 0, err
				}
				defer fh.Close()
				r, err := Decompress(fh)
				if err != nil {
					return 0, err
				}
				n := 0
				_, err = ReadJSONL(r, p, Options{}, func(schemas.Document) { n++ }, func(schemas.DeadLetter) {})
				return n, err
			}},
			{"ReadInput", func() (int, error) {
				n := 0
				_, err := ReadInput(context.Background(), Input{Path: p}, Options{}, func(schemas.Document) { n++ }, func(schemas.DeadLetter) {})
				return n, err
			}},
		} {
			b.Run(f.name+"/"+way.name, func(b *testing.B) {
				b.SetBytes(int64(plain.Len()))
				start := cpuTime()
				for b.Loop() {
					if n, err := way.read(); err != nil || n != docs {
						b.Fatal(err, n)
					}
				}
				b.ReportMetric(float64((cpuTime()-start).Milliseconds())/float64(b.N), "cpu-ms/op")
			})
		}
	}
}

// cpuTime returns the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// localFS returns the local filesystem of storage.
func localFS(b *testing.B) storage.FS {
	fs, err := storage.New(context.Background(), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	return fs
}
