package corpus

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/ctxsim/ctxsim/schemas"
)

// badLine is one line of the malformed corpus with what ReadJSONL must make
// of it.
type badLine struct {
	text string
	// reason is the expected ingest dead letter; "" for a blank line or a
	// document.
	reason string
	// strictReason replaces reason when StrictFields is set.
	strictReason string
	// docID is the expected document, if any.
	docID string
	// splitReasons are the dead letters Split must add for the document.
	splitReasons []string
	// unknown is the number of unknown fields of a line that is a whole
	// JSON object (a document or a missing_field dead letter).
	unknown int
}

const (
	testMaxLine      = 4096
	testMaxParagraph = 200
)

// malformedCorpus returns the lines of a JSONL corpus with every kind of
// bad input, mixed with good documents. Line i+1 of the file is element i.
func malformedCorpus() []badLine {
	longParagraph := strings.Repeat("word ", 60) // 300 bytes
	// Longer than the bufio buffer, so the skip runs over several reads.
	longLine := `{"doc_id": "too-long", "paragraphs": ["` + strings.Repeat("z", 150_000) + `"]}`
	return []badLine{
		{text: `{"doc_id": "good-a", "source": "s", "title": "A", "paragraphs": ["First. Second.", "", "Third one."]}`, docID: "good-a"},
		{text: ``},
		{text: `{"doc_id": "x", "paragraphs": [}`, reason: ReasonInvalidJSON},
		{text: `{"doc_id": "trunc", "paragraphs": ["abc"`, reason: ReasonInvalidJSON},
		{text: `{"doc_id": 5, "paragraphs": ["a"]}`, reason: ReasonInvalidJSON},
		{text: `{"doc_id": "w", "paragraphs": "not a list"}`, reason: ReasonInvalidJSON},
		{text: `{"doc_id": "w2", "paragraphs": ["ok", 7]}`, reason: ReasonInvalidJSON},
		{text: "{\"doc_id\": \"u\", \"paragraphs\": [\"bad \xff byte\"]}", reason: ReasonInvalidUTF8},
		{text: `{"paragraphs": ["no id"]}`, reason: ReasonMissingField},
		{text: `{"doc_id": "", "paragraphs": ["empty id"]}`, reason: ReasonMissingField},
		{text: `{"doc_id": "no-paragraphs", "title": "T"}`, reason: ReasonMissingField},
		{text: `{"doc_id": "null-paragraphs", "paragraphs": null}`, reason: ReasonMissingField},
		{text: `{"doc_id": "empty-list", "paragraphs": []}`, reason: ReasonEmptyDocument},
		{text: `{"doc_id": "blank-paragraphs", "paragraphs": ["  ", "\t\n", "\u00a0", "\u0001"]}`, reason: ReasonEmptyDocument},
		{
			text:         `{"doc_id": "good-b", "paragraphs": ["Before the long one.", "` + longParagraph + `", "After it."]}`,
			docID:        "good-b",
			splitReasons: []string{ReasonParagraphTooLong},
		},
		{text: longLine, reason: ReasonLineTooLong},
		{text: " \t \r"},
		{
			text:         `{"doc_id": "unknown", "paragraphs": ["Known text."], "extra": 1, "more": {"a": [1, "}"]}}`,
			docID:        "unknown",
			unknown:      2,
			strictReason: ReasonUnknownField,
		},
		{text: `["not", "an", "object"]`, reason: ReasonInvalidJSON},
		{text: `{"doc_id": "dup", "doc_id": "dup2", "paragraphs": ["x"]}`, reason: ReasonInvalidJSON},
		{text: `{"doc_id": "a"} {"doc_id": "b"}`, reason: ReasonInvalidJSON},
		{
			text:         `{"doc_id": "all-long", "paragraphs": ["` + longParagraph + `", "` + longParagraph + `"]}`,
			docID:        "all-long",
			splitReasons: []string{ReasonParagraphTooLong, ReasonParagraphTooLong, ReasonEmptyDocument},
		},
		{text: `{"DOC_ID": "case", "paragraphs": ["Case matters."]}`, reason: ReasonMissingField, strictReason: ReasonUnknownField, unknown: 1},
		// The last line has no final newline.
		{text: `{"doc_id": "good-d", "paragraphs": ["The end."]}`, docID: "good-d"},
	}
}

// writeGzip writes data gzipped to a new file in a temporary directory and
// returns its path.
func writeGzip(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "corpus.jsonl.gz")
	if err := os.WriteFile(path, gzipBytes(t, data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readFile reads a (possibly gzipped) JSONL file with ReadJSONL.
func readFile(t *testing.T, path string, opts Options) ([]schemas.Document, []schemas.DeadLetter, Stats, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := Decompress(f)
	if err != nil {
		t.Fatal(err)
	}
	var docs []schemas.Document
	var dead []schemas.DeadLetter
	st, err := ReadJSONL(r, path, opts,
		func(d schemas.Document) { docs = append(docs, d) },
		func(d schemas.DeadLetter) { dead = append(dead, d) })
	return docs, dead, st, err
}

func TestReadJSONLMalformedCorpus(t *testing.T) {
	lines := malformedCorpus()
	var texts []string
	for _, l := range lines {
		texts = append(texts, l.text)
	}
	path := writeGzip(t, []byte(strings.Join(texts, "\n")))

	for _, strict := range []bool{false, true} {
		t.Run(fmt.Sprintf("strict=%v", strict), func(t *testing.T) {
			opts := Options{MaxLineBytes: testMaxLine, MaxParagraphBytes: testMaxParagraph, StrictFields: strict}
			docs, dead, st, err := readFile(t, path, opts)
			if err != nil {
				t.Fatalf("ReadJSONL: %v", err)
			}

			// Expected outcome of every line.
			wantDead := map[int64]string{}
			var wantDocs []string
			var wantBlank, wantUnknown int64
			for i, l := range lines {
				reason := l.reason
				if strict && l.strictReason != "" {
					reason = l.strictReason
				}
				switch {
				case reason != "":
					wantDead[int64(i+1)] = reason
				case l.docID != "":
					wantDocs = append(wantDocs, l.docID)
				default:
					wantBlank++
				}
				if !strict {
					wantUnknown += int64(l.unknown)
				}
			}

			gotDead := map[int64]string{}
			for _, d := range dead {
				if _, dup := gotDead[d.Line]; dup {
					t.Errorf("two dead letters for line %d", d.Line)
				}
				gotDead[d.Line] = d.Reason
				checkDeadLetter(t, d, path)
			}
			for line, reason := range wantDead {
				if gotDead[line] != reason {
					t.Errorf("line %d: dead letter reason %q, want %q", line, gotDead[line], reason)
				}
			}
			for line, reason := range gotDead {
				if _, ok := wantDead[line]; !ok {
					t.Errorf("line %d: unexpected dead letter %q", line, reason)
				}
			}

			var gotDocs []string
			for _, d := range docs {
				gotDocs = append(gotDocs, d.DocID)
				line := slices.IndexFunc(lines, func(l badLine) bool { return l.docID == d.DocID }) + 1
				if want := fmt.Sprintf("%s:%d", path, line); d.Origin != want {
					t.Errorf("doc %s: Origin %q, want %q", d.DocID, d.Origin, want)
				}
			}
			if !slices.Equal(gotDocs, wantDocs) {
				t.Errorf("documents = %v, want %v", gotDocs, wantDocs)
			}

			wantStats := Stats{
				Lines:         int64(len(lines)),
				BlankLines:    wantBlank,
				Documents:     int64(len(wantDocs)),
				DeadLetters:   int64(len(wantDead)),
				UnknownFields: wantUnknown,
			}
			if st != wantStats {
				t.Errorf("stats = %+v, want %+v", st, wantStats)
			}
			if st.Lines != st.BlankLines+st.Documents+st.DeadLetters {
				t.Errorf("stats do not reconcile: %+v", st)
			}
			if int64(len(docs)) != st.Documents || int64(len(dead)) != st.DeadLetters {
				t.Errorf("callbacks saw %d docs and %d dead letters, stats say %+v", len(docs), len(dead), st)
			}

			checkSplitOfCorpus(t, lines, docs, opts)
		})
	}
}

// checkSplitOfCorpus splits the documents of the malformed corpus and checks
// the dead letters of Split and that every paragraph is accounted for.
func checkSplitOfCorpus(t *testing.T, lines []badLine, docs []schemas.Document, opts Options) {
	t.Helper()
	for _, doc := range docs {
		line := slices.IndexFunc(lines, func(l badLine) bool { return l.docID == doc.DocID })
		want := lines[line]
		sents, chunks, dead := Split(doc, opts)
		var reasons []string
		tooLong := map[int]bool{}
		for _, d := range dead {
			reasons = append(reasons, d.Reason)
			if d.Line != int64(line+1) {
				t.Errorf("doc %s: Split dead letter on line %d, want %d", doc.DocID, d.Line, line+1)
			}
			if d.Reason == ReasonParagraphTooLong {
				var p int
				if _, err := fmt.Sscanf(d.Detail[strings.Index(d.Detail, "paragraph "):], "paragraph %d", &p); err != nil {
					t.Errorf("detail %q names no paragraph: %v", d.Detail, err)
				}
				tooLong[p] = true
			}
		}
		if !slices.Equal(reasons, want.splitReasons) {
			t.Errorf("doc %s: Split dead letters %v, want %v", doc.DocID, reasons, want.splitReasons)
		}
		// Paragraphs: each one gave sentences, was too long, or was empty.
		withSentences := map[int]bool{}
		for _, s := range sents {
			withSentences[int(s.Paragraph)] = true
		}
		empty := 0
		for i, p := range doc.Paragraphs {
			if Normalize(p) == "" {
				empty++
				if withSentences[i] || tooLong[i] {
					t.Errorf("doc %s: empty paragraph %d counted twice", doc.DocID, i)
				}
			}
		}
		if got := len(withSentences) + len(tooLong) + empty; got != len(doc.Paragraphs) {
			t.Errorf("doc %s: %d paragraphs with sentences + %d too long + %d empty = %d, want %d",
				doc.DocID, len(withSentences), len(tooLong), empty, got, len(doc.Paragraphs))
		}
		if len(sents) > 0 {
			checkChunkConsistency(t, sents, chunks)
		}
	}
}

// checkDeadLetter checks the fields every ingest dead letter must have.
func checkDeadLetter(t *testing.T, d schemas.DeadLetter, source string) {
	t.Helper()
	if d.Stage != Stage || d.Source != source || d.Detail == "" {
		t.Errorf("dead letter %+v: want stage %q, source %q and a detail", d, Stage, source)
	}
	if len(d.Record) > MaxRecordBytes+len("\ufffd") || !utf8.ValidString(d.Record) || d.Record == "" {
		t.Errorf("line %d: record of %d bytes, valid UTF-8 %v", d.Line, len(d.Record), utf8.ValidString(d.Record))
	}
}

func TestReadJSONLDetails(t *testing.T) {
	tests := []struct {
		name, line, reason, detail string
	}{
		{"invalid UTF-8 offset", "{\"doc_id\": \"\xc3(\"}", ReasonInvalidUTF8, "byte offset 12"},
		{"syntax offset", `{"doc_id" "x"}`, ReasonInvalidJSON, "syntax error at byte offset"},
		{"truncated", `{"doc_id": "x", "paragraphs": [`, ReasonInvalidJSON, "unexpected end of JSON input"},
		{"wrong type names field", `{"doc_id": "x", "paragraphs": {"a": 1}}`, ReasonInvalidJSON, `field "paragraphs": wrong type: JSON object`},
		{"missing doc_id", `{"paragraphs": ["x"]}`, ReasonMissingField, `missing field "doc_id"`},
		{"missing both", `{"title": "x"}`, ReasonMissingField, `missing fields "doc_id" (or "id") and "paragraphs" (or "text"); the record has fields "title"`},
		{"missing text", `{"id": "x", "content": "y"}`, ReasonMissingField, `missing field "paragraphs" (or "text") (or null); the record has fields "id", "content"`},
		{"null text", `{"id": "x", "text": null}`, ReasonMissingField, `missing field "paragraphs" (or "text")`},
		{"blank id", `{"id": " ", "text": "y"}`, ReasonMissingField, `field "id" is empty`},
		{"id of wrong type", `{"id": ["x"], "text": "y"}`, ReasonInvalidJSON, `field "id": wrong type: JSON array where a string or a number`},
		{"text of wrong type", `{"id": "x", "text": ["y"]}`, ReasonInvalidJSON, `field "text": wrong type: JSON array`},
		{"duplicate text", `{"id": "x", "text": "a", "text": "b"}`, ReasonInvalidJSON, `duplicate field "text"`},
		{"blank text", `{"id": "x", "text": " \n\n "}`, ReasonEmptyDocument, `document "x" has 0 paragraphs and no text`},
		{"blank doc_id", `{"doc_id": "  ", "paragraphs": ["x"]}`, ReasonMissingField, `field "doc_id" is empty`},
		{"duplicate", `{"doc_id": "x", "paragraphs": [], "paragraphs": ["y"]}`, ReasonInvalidJSON, `duplicate field "paragraphs"`},
		{"not an object", `"just a string"`, ReasonInvalidJSON, "not a JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var dead []schemas.DeadLetter
			st, err := ReadJSONL(strings.NewReader(tc.line+"\n"), "src", Options{},
				func(d schemas.Document) { t.Errorf("unexpected document %+v", d) },
				func(d schemas.DeadLetter) { dead = append(dead, d) })
			if err != nil {
				t.Fatal(err)
			}
			if len(dead) != 1 || st.DeadLetters != 1 {
				t.Fatalf("got dead letters %v, stats %+v, want one", dead, st)
			}
			d := dead[0]
			if d.Reason != tc.reason || !strings.Contains(d.Detail, tc.detail) || d.Line != 1 || d.Source != "src" {
				t.Errorf("dead letter %+v, want reason %q, detail containing %q, src:1", d, tc.reason, tc.detail)
			}
		})
	}
}

func TestReadJSONLDocumentFields(t *testing.T) {
	in := "\n" + `{"title": "T", "paragraphs": ["p1", null], "source": "wiki", "doc_id": "id1"}` + "\r\n"
	var docs []schemas.Document
	st, err := ReadJSONL(strings.NewReader(in), "f.jsonl", Options{},
		func(d schemas.Document) { docs = append(docs, d) },
		func(d schemas.DeadLetter) { t.Errorf("unexpected dead letter %+v", d) })
	if err != nil {
		t.Fatal(err)
	}
	want := schemas.Document{DocID: "id1", Source: "wiki", Title: "T", Paragraphs: []string{"p1", ""}, Origin: "f.jsonl:2"}
	if len(docs) != 1 || docs[0].DocID != want.DocID || docs[0].Source != want.Source || docs[0].Title != want.Title ||
		!slices.Equal(docs[0].Paragraphs, want.Paragraphs) || docs[0].Origin != want.Origin {
		t.Errorf("documents = %+v, want [%+v]", docs, want)
	}
	if st != (Stats{Lines: 2, BlankLines: 1, Documents: 1}) {
		t.Errorf("stats = %+v", st)
	}
}

func TestReadJSONLLineLengths(t *testing.T) {
	const max = 100
	doc := func(n int) string { // a valid line of exactly n bytes
		head := `{"doc_id": "d", "paragraphs": ["`
		tail := `"]}`
		return head + strings.Repeat("a", n-len(head)-len(tail)) + tail
	}
	in := doc(max) + "\n" + doc(max+1) + "\n" + doc(max-1) + "\n" + doc(max+1)
	var dead []schemas.DeadLetter
	docs := 0
	// One byte at a time: every fragment boundary is exercised.
	st, err := ReadJSONL(iotest.OneByteReader(strings.NewReader(in)), "s", Options{MaxLineBytes: max},
		func(schemas.Document) { docs++ },
		func(d schemas.DeadLetter) { dead = append(dead, d) })
	if err != nil {
		t.Fatal(err)
	}
	if docs != 2 || len(dead) != 2 || dead[0].Line != 2 || dead[1].Line != 4 {
		t.Fatalf("docs %d, dead letters %+v; want 2 docs and lines 2 and 4 too long", docs, dead)
	}
	for _, d := range dead {
		if d.Reason != ReasonLineTooLong || !strings.Contains(d.Detail, "101 bytes") || d.Record != doc(max+1) {
			t.Errorf("dead letter %+v", d)
		}
	}
	if st.Lines != 4 {
		t.Errorf("stats %+v", st)
	}
}

func TestReadJSONLReadError(t *testing.T) {
	boom := errors.New("boom")
	in := io.MultiReader(strings.NewReader(`{"doc_id": "a", "paragraphs": ["x"]}`+"\n"+`{"doc_id": "b", "par`), iotest.ErrReader(boom))
	docs := 0
	st, err := ReadJSONL(in, "s", Options{}, func(schemas.Document) { docs++ }, func(d schemas.DeadLetter) { t.Errorf("dead letter %+v", d) })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	if docs != 1 || st != (Stats{Lines: 1, Documents: 1}) {
		t.Errorf("docs %d, stats %+v; want the first document only", docs, st)
	}
	dl := ReadErrorDeadLetter("s", st.Lines, err)
	if dl.Reason != ReasonReadError || dl.Line != 2 || !strings.Contains(dl.Detail, "boom") {
		t.Errorf("ReadErrorDeadLetter = %+v", dl)
	}
}

func TestReadJSONLInvalidOptions(t *testing.T) {
	_, err := ReadJSONL(strings.NewReader(""), "s", Options{ChunkSize: 1, ChunkStride: 2}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "ChunkStride") {
		t.Errorf("err = %v, want an options error", err)
	}
}

func TestTruncatedGzip(t *testing.T) {
	var lines []string
	for i := range 2000 {
		lines = append(lines, fmt.Sprintf(`{"doc_id": "d%d", "paragraphs": ["Sentence %d of many. Another one."]}`, i, i))
	}
	path := writeGzip(t, []byte(strings.Join(lines, "\n")+"\n"))
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{len(full) / 2, len(full) - 4, len(full) - 1} {
		t.Run(fmt.Sprintf("cut at %d of %d", cut, len(full)), func(t *testing.T) {
			if err := os.WriteFile(path, full[:cut], 0o644); err != nil {
				t.Fatal(err)
			}
			docs, _, st, err := readFile(t, path, Options{})
			if err == nil {
				t.Fatalf("no error reading a truncated gzip file (%d docs, %+v)", len(docs), st)
			}
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("err = %v, want io.ErrUnexpectedEOF", err)
			}
		})
	}
	if err := os.WriteFile(path, full, 0o644); err != nil {
		t.Fatal(err)
	}
	docs, dead, st, err := readFile(t, path, Options{})
	if err != nil || len(docs) != 2000 || len(dead) != 0 || st.Lines != 2000 {
		t.Errorf("full file: err %v, %d docs, %d dead, %+v", err, len(docs), len(dead), st)
	}
}

func TestDecompress(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("hello\n"))
	zw.Close()
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, ""},
		{"one byte", []byte{0x1f}, "\x1f"},
		{"plain", []byte("hello\n"), "hello\n"},
		{"gzip", gz.Bytes(), "hello\n"},
		{"two gzip members", append(slices.Clone(gz.Bytes()), gz.Bytes()...), "hello\nhello\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Decompress(bytes.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			if err != nil || string(got) != tc.want {
				t.Errorf("read %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := Decompress(bytes.NewReader([]byte{0x1f, 0x8b, 0x00})); err == nil {
		t.Error("Decompress of a broken gzip header: no error")
	}
}

func TestLineReaderSkipsWithoutBuffering(t *testing.T) {
	const size = 8 << 20
	in := io.MultiReader(strings.NewReader("x"), strings.NewReader(strings.Repeat("y", size)), strings.NewReader("\nnext"))
	lr := newLineReader(in, 1000)
	l, err := lr.next()
	if err != nil || !l.tooLong || l.size != size+1 {
		t.Fatalf("first line: %+v, %v; want too long, %d bytes", l, err, size+1)
	}
	if cap(lr.buf) > 256<<10 {
		t.Errorf("line buffer grew to %d bytes for a too-long line", cap(lr.buf))
	}
	if l, err = lr.next(); err != nil || string(l.text) != "next" || l.tooLong {
		t.Fatalf("second line: %+v, %v", l, err)
	}
	if _, err = lr.next(); err != io.EOF {
		t.Fatalf("after the last line: %v, want io.EOF", err)
	}
}

func TestReadJSONLByteOrderMark(t *testing.T) {
	in := "\ufeff" + `{"doc_id": "a", "paragraphs": ["x"]}` + "\n\ufeff" + `{"doc_id": "b", "paragraphs": ["x"]}`
	var ids []string
	var reasons []string
	_, err := ReadJSONL(strings.NewReader(in), "s", Options{},
		func(d schemas.Document) { ids = append(ids, d.DocID) },
		func(d schemas.DeadLetter) { reasons = append(reasons, d.Reason) })
	if err != nil {
		t.Fatal(err)
	}
	// Only a mark opening the file is ignored.
	if !slices.Equal(ids, []string{"a"}) || !slices.Equal(reasons, []string{ReasonInvalidJSON}) {
		t.Errorf("documents %v, dead letters %v; want [a] and [invalid_json]", ids, reasons)
	}
}
