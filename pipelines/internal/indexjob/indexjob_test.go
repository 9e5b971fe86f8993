package indexjob

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/pipelines/internal/beamjob/beamtest"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/storage/gcstest"
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

// TestRunDirectoryInput indexes a directory holding {"id","text"} JSONL,
// zstd JSONL and text files in subdirectories, with the output inside it:
// text files are named by their path under the directory, and a second run
// does not read the first one's output back.
func TestRunDirectoryInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var web []string
	for i := range 4 {
		web = append(web, fmt.Sprintf(`{"id": "web-%d", "text": "Web page %d opens.\n\nIt ends here.", "url": "http://x/%d"}`, i, i, i))
	}
	write("web.jsonl", strings.Join(web, "\n")+"\n")
	write("essays/one.txt", "The first essay has a sentence. And another.\n")
	write("essays/more/two.txt", "The second essay.\n\nIts last paragraph.\n")
	write(".hidden/three.txt", "Hidden, never read.\n")

	out := filepath.Join(dir, "out")
	for run := range 2 {
		// The second run finds the first one's output in the input
		// directory, and skips it.
		c := defaults(t, "--input="+dir, "--output="+out, "--shards=1", "--parquet_shards=1")
		if err := Run(context.Background(), c); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		sents, err := storage.ReadTable[schemas.Sentence](context.Background(), filepath.Join(out, "sentences"))
		if err != nil {
			t.Fatal(err)
		}
		docs := map[string]bool{}
		for _, s := range sents {
			docs[s.DocID] = true
		}
		want := map[string]bool{"web-0": true, "web-1": true, "web-2": true, "web-3": true, "essays/one.txt": true, "essays/more/two.txt": true}
		if len(docs) != len(want) {
			t.Errorf("run %d: documents %v, want %v", run, docs, want)
		}
		for id := range want {
			if !docs[id] {
				t.Errorf("run %d: document %q not indexed (have %v)", run, id, docs)
			}
		}
	}
}

// TestRunAllDeadLetters: when nothing is indexed, the job says why: the
// dead-letter reasons with an example each, and the input it reads.
func TestRunAllDeadLetters(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for i := range 5 {
		lines = append(lines, fmt.Sprintf(`{"url": "http://x/%d", "body": "Some text."}`, i))
	}
	lines = append(lines, `{"broken`)
	in := filepath.Join(dir, "c.jsonl")
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	old := stdout
	stdout = &buf
	defer func() { stdout = old }()
	c := defaults(t, "--input="+in, "--output="+filepath.Join(dir, "out"), "--shards=1", "--parquet_shards=1")
	err := Run(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "nothing was indexed") {
		t.Fatalf("Run = %v, want the no-documents error", err)
	}
	got := buf.String()
	for _, want := range []string{
		"nothing was indexed: 6 of 6 records read from 1 file were rejected",
		"       5  missing_field",
		`e.g. ` + in + `:1: missing fields "doc_id" (or "id") and "paragraphs" (or "text"); the record has fields "url", "body"`,
		"       1  invalid_json",
		`--id_field="id" and --text_field="text"`,
		`or {"id": "...", "text": "..."}`,
		"a directory: every file under it",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
}

func TestMostlyDead(t *testing.T) {
	for _, tc := range []struct {
		c    jobrun.Counters
		want bool
	}{
		{jobrun.Counters{"ingest/records_read": 10, "ingest/documents_ingested": 10}, false},
		{jobrun.Counters{"ingest/records_read": 10, "ingest/documents_ingested": 5, "ingest/records_dead": 5}, false},
		{jobrun.Counters{"ingest/records_read": 10, "ingest/documents_ingested": 4, "ingest/records_dead": 3, "ingest/documents_duplicate": 3}, true},
		{jobrun.Counters{"ingest/records_read": 10, "ingest/records_dead": 10}, true},
		{jobrun.Counters{"ingest/files": 2}, true},
	} {
		if got := mostlyDead(tc.c); got != tc.want {
			t.Errorf("mostlyDead(%v) = %v, want %v", tc.c, got, tc.want)
		}
	}
}

// partsCorpus writes a corpus of 40 documents, a duplicate document ID
// and a broken line, and returns its path.
func partsCorpus(t *testing.T, dir string) string {
	t.Helper()
	words := []string{"river", "stone", "market", "winter", "engine", "garden", "letter", "harbour", "violin", "orchard"}
	var lines []string
	for i := range 40 {
		a, b, c := words[i%10], words[(i*3+1)%10], words[(i*7+2)%10]
		lines = append(lines, fmt.Sprintf(`{"doc_id": "doc-%d", "paragraphs": ["The %s was near the %s. A %s stood by the %s for %d days. Nobody spoke of the %s again. The end came in %d."]}`,
			i, a, b, c, a, i, b, 1900+i))
	}
	lines = append(lines, `{"doc_id": "doc-3", "paragraphs": ["A second document with the same ID."]}`, `{"doc_id": `)
	in := filepath.Join(dir, "c.jsonl")
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return in
}

// indexed is what a test compares of an index job's output.
type indexed struct {
	sents, chunks, dead []string
	meta                retrieval.Meta
	hits                [][]schemas.Hit
}

// readIndexed reads the tables and the index under out (local or remote)
// and runs four queries.
func readIndexed(t *testing.T, out string) indexed {
	t.Helper()
	ctx := context.Background()
	var r indexed
	sents, err := storage.ReadTable[schemas.Sentence](ctx, storage.Join(out, "sentences"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sents {
		r.sents = append(r.sents, s.ID+" "+s.Text)
	}
	chunks, err := storage.ReadTable[schemas.Chunk](ctx, storage.Join(out, "chunks"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range chunks {
		r.chunks = append(r.chunks, c.ID)
	}
	dead, err := storage.ReadTable[schemas.DeadLetter](ctx, storage.Join(out, "dead_letters"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dead {
		r.dead = append(r.dead, fmt.Sprintf("%s:%d %s", path.Base(d.Source), d.Line, d.Reason))
	}
	for _, l := range [][]string{r.sents, r.chunks, r.dead} {
		slices.Sort(l)
	}
	ix, err := retrieval.OpenAt(ctx, storage.Join(out, "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	r.meta = ix.Meta
	for _, q := range []string{"the river was near the stone", "a violin stood by the orchard", "the end came in 1917", "nobody spoke of the market again"} {
		hits, _, err := ix.Search(ctx, q, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		r.hits = append(r.hits, hits)
	}
	return r
}

// sameIndexed fails the test unless a and b hold the same rows, dead
// letters, corpus and search results.
func sameIndexed(t *testing.T, a, b indexed) {
	t.Helper()
	if len(a.sents) != 160 || len(a.chunks) != 40 {
		t.Fatalf("%d sentences, %d chunks; want 160 and 40", len(a.sents), len(a.chunks))
	}
	if !slices.Equal(a.sents, b.sents) || !slices.Equal(a.chunks, b.chunks) {
		t.Errorf("tables differ: %d/%d sentences, %d/%d chunks", len(a.sents), len(b.sents), len(a.chunks), len(b.chunks))
	}
	if want := []string{"c.jsonl:41 duplicate_doc_id", "c.jsonl:42 invalid_json"}; !slices.Equal(a.dead, want) || !slices.Equal(b.dead, want) {
		t.Errorf("dead letters: %v and %v; want %v", a.dead, b.dead, want)
	}
	if a.meta.Corpus != b.meta.Corpus || a.meta.NumShards != b.meta.NumShards {
		t.Errorf("index metadata: %+v and %+v", a.meta.Corpus, b.meta.Corpus)
	}
	for i := range a.hits {
		if len(a.hits[i]) == 0 || !slices.Equal(a.hits[i], b.hits[i]) {
			t.Errorf("query %d: %v and %v", i, a.hits[i], b.hits[i])
		}
	}
}

// TestRunInPartsEqualsOnePipeline indexes one corpus in one pipeline and
// in three parts (--parts=3): the tables hold the same rows, the dead
// letters are the same (a broken line once, a duplicate document once),
// and every query finds the same chunks with the same scores.
func TestRunInPartsEqualsOnePipeline(t *testing.T) {
	dir := t.TempDir()
	in := partsCorpus(t, dir)
	build := func(parts int) indexed {
		t.Helper()
		out := filepath.Join(dir, fmt.Sprintf("parts-%d", parts))
		c := defaults(t, "--input="+in, "--output="+out, "--shards=3", "--parquet_shards=2", fmt.Sprintf("--parts=%d", parts))
		if err := Run(context.Background(), c); err != nil {
			t.Fatalf("parts=%d: %v", parts, err)
		}
		return readIndexed(t, out)
	}
	sameIndexed(t, build(1), build(3))
}

// TestRunInPartsOnGCS: the parts after the first fetch the shards from a
// bucket (a fake GCS server), add to them and publish them again, and a
// shard a part leaves alone keeps its metadata.
func TestRunInPartsOnGCS(t *testing.T) {
	gcstest.Start(t, "ctxsim-parts")
	t.Setenv("CTXSIM_CACHE_DIR", t.TempDir())
	dir := t.TempDir()
	in := partsCorpus(t, dir)
	local := filepath.Join(dir, "local")
	if err := Run(context.Background(), defaults(t, "--input="+in, "--output="+local, "--shards=3", "--parquet_shards=2")); err != nil {
		t.Fatal(err)
	}
	// Seven shards for 40 chunks in four parts: some part leaves some
	// shard alone.
	remote := "gs://ctxsim-parts/corpus"
	local7 := filepath.Join(dir, "local7")
	for _, out := range []string{remote, local7} {
		if err := Run(context.Background(), defaults(t, "--input="+in, "--output="+out, "--shards=7", "--parquet_shards=2", "--parts=4")); err != nil {
			t.Fatal(err)
		}
	}
	a, b, c := readIndexed(t, local), readIndexed(t, remote), readIndexed(t, local7)
	a.meta.NumShards = 7
	sameIndexed(t, a, b)
	sameIndexed(t, c, b)
}

// TestRunInputEdgeCases indexes a directory holding a gzip file that fails
// its checksum, a CSV file with a ragged row, a JSONL record with a lone
// surrogate, a broken symbolic link and one leading outside the directory,
// in one pipeline and in two parts: nothing of the corrupt file or the
// outside file is indexed, each problem is one dead letter with its reason
// (in either case), the console warns, and the counters reconcile.
func TestRunInputEdgeCases(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	write := func(name string, data []byte) {
		t.Helper()
		p := filepath.Join(in, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("good.jsonl", []byte(`{"id": "g1", "text": "The first good document. It has two sentences."}`+"\n"+
		`{"id": "g2", "text": "A lone \ud800 surrogate."}`+"\n"))
	write("table.csv", []byte("id,text\nc1,\"A CSV document, quoted. It ends.\"\nc2,Ragged,row\nc3,Another CSV document.\n"))
	var lines bytes.Buffer
	for i := range 200 {
		fmt.Fprintf(&lines, `{"id": "z%d", "text": "Corrupt file document %d. Its text may be garbled."}`+"\n", i, i)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(lines.Bytes())
	zw.Close()
	bad := gz.Bytes()
	bad[len(bad)-6] ^= 0xff // the CRC-32: every line decodes intact, and fails the check
	write("corrupt.jsonl.gz", bad)
	outside := filepath.Join(dir, "secret.txt")
	if err := os.WriteFile(outside, []byte("A file outside the input directory.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"dangling.txt": "missing.txt", "outside.txt": outside} {
		if err := os.Symlink(target, filepath.Join(in, link)); err != nil {
			t.Fatal(err)
		}
	}

	for _, parts := range []int{1, 2} {
		var buf strings.Builder
		old := stdout
		stdout = &buf
		out := filepath.Join(dir, fmt.Sprintf("out-%d", parts))
		err := Run(context.Background(), defaults(t, "--input="+in, "--output="+out, "--shards=1", "--parquet_shards=1", fmt.Sprintf("--parts=%d", parts)))
		stdout = old
		if err != nil {
			t.Fatalf("parts=%d: %v", parts, err)
		}
		ctx := context.Background()
		sents, err := storage.ReadTable[schemas.Sentence](ctx, filepath.Join(out, "sentences"))
		if err != nil {
			t.Fatal(err)
		}
		docs := map[string]bool{}
		for _, s := range sents {
			docs[s.DocID] = true
		}
		if got, want := slices.Sorted(maps.Keys(docs)), []string{"c1", "c3", "g1"}; !slices.Equal(got, want) {
			t.Errorf("parts=%d: documents %q, want %q", parts, got, want)
		}
		dead, err := storage.ReadTable[schemas.DeadLetter](ctx, filepath.Join(out, "dead_letters"))
		if err != nil {
			t.Fatal(err)
		}
		reasons := map[string]int{}
		for _, d := range dead {
			reasons[d.Reason]++
		}
		want := map[string]int{"corrupt_file": 200, "read_error": 1, "invalid_csv": 1, "invalid_utf8": 1, "broken_link": 1, "link_outside_input": 1}
		if !maps.Equal(reasons, want) {
			t.Errorf("parts=%d: dead letters by reason %v, want %v", parts, reasons, want)
		}
		for _, w := range []string{
			"warning: 1 of 5 input files failed their gzip or zstd checks (a checksum, a format error, a truncation): the 200 documents read from them were withdrawn",
			"warning: 2 of 5 input files were not read in full",
		} {
			if !strings.Contains(buf.String(), w) {
				t.Errorf("parts=%d: the console lacks %q:\n%s", parts, w, buf.String())
			}
		}
	}
}
