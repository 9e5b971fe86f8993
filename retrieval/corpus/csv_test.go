package corpus

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/schemas"
)

// readCSV reads data with ReadCSV and returns what it produced.
func readCSV(t *testing.T, data, source string, opts Options) ([]schemas.Document, []schemas.DeadLetter, Stats) {
	t.Helper()
	var docs []schemas.Document
	var dead []schemas.DeadLetter
	st, err := ReadCSV(strings.NewReader(data), source, "stem", opts,
		func(d schemas.Document) { docs = append(docs, d) },
		func(d schemas.DeadLetter) { dead = append(dead, d) })
	if err != nil {
		t.Fatalf("ReadCSV: %v", err)
	}
	return docs, dead, st
}

// deadAt lists dead letters as "reason@line".
func deadAt(dead []schemas.DeadLetter) []string {
	var out []string
	for _, d := range dead {
		out = append(out, fmt.Sprintf("%s@%d", d.Reason, d.Line))
	}
	return out
}

func TestReadCSV(t *testing.T) {
	data := "\ufeffid,title,text\r\n" + // line 1, with a byte order mark
		`a1,First,"One paragraph, with a comma.` + "\r\n\r\n" + `A second one, ""quoted""."` + "\r\n" + // lines 2-4
		"\r\n" + // line 5: blank
		"42,Second,Plain text here.\r\n" + // 6
		",No ID,Some text.\n" + // 7
		"a3,Empty,\n" + // 8
		"a4,Ragged\n" + // 9
		`a5,Bad,"closed" then more` + "\n" + // 10
		"a6,Good again,Text \"with\" inner quotes.\n" + // 11
		"a7,Extra,Text.,surplus\n" + // 12
		`a8,Open,"never closed` + "\nstill open" // 13-14, no final newline
	docs, dead, st := readCSV(t, data, "c.csv", Options{})
	if got := docIDs(docs); !slices.Equal(got, []string{"a1", "42", "a6"}) {
		t.Fatalf("documents %q", got)
	}
	if want := []string{"One paragraph, with a comma.", `A second one, "quoted".`}; !slices.Equal(docs[0].Paragraphs, want) {
		t.Errorf("paragraphs %q, want %q", docs[0].Paragraphs, want)
	}
	if docs[0].Origin != "c.csv:2" || docs[1].Origin != "c.csv:6" || docs[2].Origin != "c.csv:11" {
		t.Errorf("origins %q %q %q", docs[0].Origin, docs[1].Origin, docs[2].Origin)
	}
	if docs[2].Paragraphs[0] != `Text "with" inner quotes.` {
		t.Errorf("inner quotes: %q", docs[2].Paragraphs)
	}
	want := []string{"missing_field@7", "empty_document@8", "invalid_csv@9", "invalid_csv@10", "invalid_csv@12", "invalid_csv@13"}
	if got := deadAt(dead); !slices.Equal(got, want) {
		t.Errorf("dead letters %q, want %q", got, want)
	}
	for _, d := range dead {
		if d.Source != "c.csv" || d.Stage != Stage || d.Detail == "" || d.Record == "" {
			t.Errorf("dead letter %+v", d)
		}
	}
	for i, detail := range map[int]string{
		2: "record has 2 fields where the header has 3",
		3: `line 10: ' ' after the closing quote of a field`,
		5: "the quoted field opened on line 13 is not closed at the end of the file",
	} {
		if !strings.Contains(dead[i].Detail, detail) {
			t.Errorf("dead letter %d: %q, want %q", i, dead[i].Detail, detail)
		}
	}
	if st.Documents != 3 || st.DeadLetters != 6 || st.Lines != 14 || st.BlankLines != 1 || st.Refused {
		t.Errorf("stats %+v", st)
	}
}

func TestReadCSVTabsAndRowNumbers(t *testing.T) {
	// TSV without an ID column: the IDs are the stem and the record number.
	data := "lang\ttext\nen\tFirst, with a comma.\n\nen\t\"Quoted\ttab.\"\n"
	docs, dead, _ := readCSV(t, data, "dir/c.tsv.zst", Options{})
	if got := docIDs(docs); len(dead) != 0 || !slices.Equal(got, []string{"stem#1", "stem#2"}) {
		t.Fatalf("documents %q, dead %+v", got, dead)
	}
	if docs[0].Paragraphs[0] != "First, with a comma." || docs[1].Paragraphs[0] != "Quoted\ttab." || docs[1].Origin != "dir/c.tsv.zst:4" {
		t.Errorf("documents %+v", docs)
	}
	// Other field names.
	docs, _, _ = readCSV(t, "key,body\nk1,Body text.\n", "x.csv", Options{TextField: "body", IDField: "key"})
	if got := docIDs(docs); !slices.Equal(got, []string{"k1"}) {
		t.Errorf("custom fields: %q", got)
	}
}

func TestReadCSVRefusesHeader(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{"id,body\na,Text.\n", `no text column "text"; the header has columns "id", "body"`},
		{"id,text,text\na,b,c\n", `the header names the text column "text" twice`},
		{"id,text,id\na,b,c\n", `the header names the ID column "id" twice`},
		{`"id"x,text` + "\n", "the header is not valid CSV"},
	} {
		docs, dead, st := readCSV(t, tc.data, "h.csv", Options{})
		if len(docs) != 0 || len(dead) != 1 || !st.Refused || st.DeadLetters != 0 || dead[0].Line != 0 ||
			dead[0].Reason != ReasonMissingField || !strings.Contains(dead[0].Detail, tc.want) {
			t.Errorf("%q: docs %q, dead %+v, stats %+v; want %q", tc.data, docIDs(docs), dead, st, tc.want)
		}
	}
	// An empty file, or blank lines only: nothing, and no complaint.
	for _, data := range []string{"", "\n\n"} {
		docs, dead, st := readCSV(t, data, "e.csv", Options{})
		if len(docs) != 0 || len(dead) != 0 || st.Refused {
			t.Errorf("%q: docs %q, dead %+v, stats %+v", data, docIDs(docs), dead, st)
		}
	}
}

// TestReadCSVBoundedWhileReading: a record over MaxLineBytes, even one
// quoted field spanning many lines, is skipped without being held, and the
// records after it are read.
func TestReadCSVBoundedWhileReading(t *testing.T) {
	const size = 64 << 20
	in := io.MultiReader(
		strings.NewReader("id,text\nbig,\""),
		io.LimitReader(repeatReader('y'), size/2),
		strings.NewReader("\n\"\"\n"), // a newline and a quote, inside the field
		io.LimitReader(repeatReader('y'), size/2),
		strings.NewReader("\"\nafter,The record after it.\n"))
	var docs []schemas.Document
	var dead []schemas.DeadLetter
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	st, err := ReadCSV(in, "big.csv", "big.csv", Options{MaxLineBytes: 1 << 20},
		func(d schemas.Document) { docs = append(docs, d) },
		func(d schemas.DeadLetter) { dead = append(dead, d) })
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if got := docIDs(docs); !slices.Equal(got, []string{"after"}) || docs[0].Origin != "big.csv:5" {
		t.Errorf("documents %q (%+v)", got, docs)
	}
	wantSize := fmt.Sprintf("record is %d bytes, more than MaxLineBytes=%d", size+len(`big,"`)+len("\n\"\"\n")+len(`"`), 1<<20)
	if len(dead) != 1 || dead[0].Reason != ReasonLineTooLong || dead[0].Line != 2 || !strings.Contains(dead[0].Detail, wantSize) ||
		!strings.HasPrefix(dead[0].Record, `big,"yyy`) || len(dead[0].Record) > MaxRecordBytes {
		t.Errorf("dead letters %+v, want %q", dead, wantSize)
	}
	if st.Lines != 5 {
		t.Errorf("stats %+v", st)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("reading a %d-byte record allocated %d bytes; want about MaxLineBytes", size, alloc)
	}
}

// TestReadInputCSV reads CSV through ReadInput, compressed, with the row
// IDs relative to the input root.
func TestReadInputCSV(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "sub/c.csv.gz", gzipBytes(t, []byte("text\nOne.\n\"Two.\"\nThree,\n")))
	docs, dead, st := collect(t, Input{Path: p, Root: dir}, Options{})
	if got := docIDs(docs); !slices.Equal(got, []string{"sub/c.csv.gz#1", "sub/c.csv.gz#2"}) {
		t.Errorf("documents %q", got)
	}
	if got := deadAt(dead); !slices.Equal(got, []string{"invalid_csv@4"}) || st != (FileStats{Records: 3, Documents: 2, Dead: 1}) {
		t.Errorf("dead %q, stats %+v", got, st)
	}
	// A file without the text column fails as a whole.
	q := writeFile(t, dir, "q.tsv", []byte("id\tbody\na\tb\n"))
	_, dead, st = collect(t, Input{Path: q}, Options{})
	if len(dead) != 1 || !st.Failed || st.Records != 0 {
		t.Errorf("no text column: dead %+v, stats %+v", dead, st)
	}
	for name, want := range map[string]bool{"a.csv": true, "a.TSV.gz": true, "a.tab.zst": true, "a.csv.parquet": false, "a.txt": false} {
		if IsCSV(name) != want {
			t.Errorf("IsCSV(%q) = %v", name, !want)
		}
	}
}

// csvRecords reads every record of data with csvReader.
func csvRecords(data string, delim byte) ([][]string, []string) {
	cr := newCSVReader(strings.NewReader(data), delim, 1<<20)
	var recs [][]string
	var problems []string
	for {
		rec, err := cr.next()
		if err != nil {
			return recs, problems
		}
		if rec.problem != "" {
			problems = append(problems, rec.problem)
			continue
		}
		recs = append(recs, rec.strings())
	}
}

// FuzzCSVMatchesEncodingCSV: on every input encoding/csv reads without
// error, csvReader reads the same records.
func FuzzCSVMatchesEncodingCSV(f *testing.F) {
	for _, s := range []string{
		"a,b\n1,2\n", "a,\"b\nc\"\r\n\"\"\"\",x\n", "\n\na\r\n\r\nb\n", "a,b,c", `"x""y",z`,
		"\"a\r\nb\"\r\n", "a\rb,c\r", "\"\"\n,\n", "\t\"x\"\n", "a;b\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		r := csv.NewReader(strings.NewReader(data))
		r.FieldsPerRecord = -1
		want, err := r.ReadAll()
		if err != nil {
			var perr *csv.ParseError
			if !errors.As(err, &perr) {
				t.Fatalf("encoding/csv: %v", err)
			}
			return // we are laxer about quotes in unquoted fields
		}
		got, problems := csvRecords(data, ',')
		if len(problems) != 0 || !slices.EqualFunc(got, want, slices.Equal[[]string]) {
			t.Errorf("%q:\n got %q (problems %q)\nwant %q", data, got, problems, want)
		}
	})
}

// BenchmarkReadCSV reads a CSV of 2,000 three-paragraph articles.
func BenchmarkReadCSV(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("id,text,url\n")
	for i := range 2000 {
		fmt.Fprintf(&buf, "doc%d,\"Article %d opens here, as articles do. It says a thing.\n\nIts second paragraph, \"\"quoted\"\".\n\nThe end.\",http://x/%d\n", i, i, i)
	}
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		n := 0
		if _, err := ReadCSV(bytes.NewReader(buf.Bytes()), "b.csv", "b.csv", Options{}, func(schemas.Document) { n++ }, func(schemas.DeadLetter) {}); err != nil || n != 2000 {
			b.Fatal(err, n)
		}
	}
}
