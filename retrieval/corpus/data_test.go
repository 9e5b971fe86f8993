package corpus

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/ctxsim/ctxsim/schemas"
)

// Shared corpus files, relative to this package's directory. They are not
// part of the repository; tests and benchmarks that need them skip or fall
// back when they are absent.
const (
	mixed2MPath  = "../../../shared/data/corpus/mixed-2m.jsonl.gz"
	mixed20MPath = "../../../shared/data/corpus/mixed-20m.jsonl.gz"
)

// TestMixed2M reads the shared 2 MB sample fully. It holds 932 clean
// documents (12 sources: kernel, PostgreSQL, Rust, JDK, Python, Django and
// Git docs, State of the Union speeches, Gutenberg, WikiText-2, the Debian
// handbook); no line and no paragraph is dead-lettered.
func TestMixed2M(t *testing.T) {
	f, err := os.Open(mixed2MPath)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("shared corpus %s not present; skipping", mixed2MPath)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := Decompress(f)
	if err != nil {
		t.Fatal(err)
	}
	var docs []schemas.Document
	st, err := ReadJSONL(r, "mixed-2m.jsonl.gz", Defaults(),
		func(d schemas.Document) { docs = append(docs, d) },
		func(d schemas.DeadLetter) { t.Errorf("unexpected dead letter %+v", d) })
	if err != nil {
		t.Fatalf("ReadJSONL: %v", err)
	}
	if want := (Stats{Lines: 932, Documents: 932}); st != want {
		t.Errorf("stats = %+v, want %+v", st, want)
	}
	var sentences, chunks, paragraphs int
	sources := map[string]bool{}
	for _, d := range docs {
		sources[d.Source] = true
		paragraphs += len(d.Paragraphs)
		s, c, dead := Split(d, Defaults())
		for _, dl := range dead {
			t.Errorf("doc %s: unexpected dead letter %+v", d.DocID, dl)
		}
		for _, x := range s {
			if x.Text == "" || strings.TrimSpace(x.Text) != x.Text {
				t.Errorf("doc %s: bad sentence %q", d.DocID, x.Text)
			}
		}
		sentences += len(s)
		chunks += len(c)
	}
	t.Logf("%d documents, %d sources, %d paragraphs, %d sentences, %d chunks", len(docs), len(sources), paragraphs, sentences, chunks)
	if len(sources) != 12 || paragraphs != 35970 {
		t.Errorf("got %d sources and %d paragraphs, want 12 and 35970", len(sources), paragraphs)
	}
	// Loose bounds: the splitter may improve, but not collapse.
	if sentences < 80_000 || sentences > 140_000 {
		t.Errorf("%d sentences, want 80k to 140k", sentences)
	}
}

// benchDocs holds the documents the benchmarks split, loaded once.
var benchDocs struct {
	once   sync.Once
	docs   []schemas.Document
	origin string
}

// benchTextBytes is how much paragraph text the benchmarks use.
const benchTextBytes = 20 << 20

// loadBenchDocs returns documents holding about benchTextBytes of
// paragraph text: the start of the shared 20 MB corpus when present, else
// synthetic text.
func loadBenchDocs(b *testing.B) []schemas.Document {
	b.Helper()
	benchDocs.once.Do(func() {
		benchDocs.docs, benchDocs.origin = readBenchCorpus()
		if benchDocs.docs == nil {
			benchDocs.docs, benchDocs.origin = syntheticDocs(), "synthetic text"
		}
	})
	b.Logf("benchmark text: %s", benchDocs.origin)
	return benchDocs.docs
}

// readBenchCorpus reads documents from the start of mixed20MPath until
// they hold benchTextBytes of text, or returns nil.
func readBenchCorpus() ([]schemas.Document, string) {
	f, err := os.Open(mixed20MPath)
	if err != nil {
		return nil, ""
	}
	defer f.Close()
	r, err := Decompress(f)
	if err != nil {
		return nil, ""
	}
	var docs []schemas.Document
	total := 0
	// The JSON is a little larger than its text; the last line of the
	// limited stream is cut and dead-lettered, which is fine here.
	_, err = ReadJSONL(io.LimitReader(r, benchTextBytes*11/10), "bench", Defaults(),
		func(d schemas.Document) {
			if total >= benchTextBytes {
				return
			}
			docs = append(docs, d)
			for _, p := range d.Paragraphs {
				total += len(p)
			}
		},
		func(schemas.DeadLetter) {})
	if err != nil || total < benchTextBytes/2 {
		return nil, ""
	}
	return docs, mixed20MPath
}

// syntheticDocs returns documents of made-up text that exercises the
// splitter's rules.
func syntheticDocs() []schemas.Document {
	const para = `Mr. J. R. R. Tolkien met Dr. Smith at 5 p.m. on Jan. 3 in the U.S. capital. ` +
		`The cost was $1.5 million, i.e. more than 3.14 times the budget! Was it worth it?! ` +
		`He said "Stop." Then he left (see Fig. 2.) Nobody knew why... Wait... what? ` +
		`Acme Inc. The company, etc. grew.  It   rained\tall day. `
	var docs []schemas.Document
	total := 0
	for i := 0; total < benchTextBytes; i++ {
		d := schemas.Document{DocID: fmt.Sprintf("synthetic-%d", i)}
		for range 20 {
			p := strings.Repeat(para, 1+i%5)
			d.Paragraphs = append(d.Paragraphs, p)
			total += len(p)
		}
		docs = append(docs, d)
	}
	return docs
}

func BenchmarkSplitSentences(b *testing.B) {
	var paragraphs []string
	var size int64
	for _, d := range loadBenchDocs(b) {
		for _, p := range d.Paragraphs {
			p = Normalize(p)
			paragraphs = append(paragraphs, p)
			size += int64(len(p))
		}
	}
	b.SetBytes(size)
	sentences := 0
	for b.Loop() {
		sentences = 0
		for _, p := range paragraphs {
			sentences += len(SplitSentences(p))
		}
	}
	b.ReportMetric(float64(sentences), "sentences/op")
}

func BenchmarkSplitDocument(b *testing.B) {
	docs := loadBenchDocs(b)
	var size int64
	for _, d := range docs {
		for _, p := range d.Paragraphs {
			size += int64(len(p))
		}
	}
	opts := Defaults()
	b.SetBytes(size)
	for b.Loop() {
		for _, d := range docs {
			Split(d, opts)
		}
	}
}
