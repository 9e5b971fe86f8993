package harvestjob

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/transforms/harvest"
)

// A harvest writes its pairs for training under export/: one table per
// split, of exactly sentence1, sentence2 and score, each pair in the table
// of its split with its label clipped to [0, 1], and the globs a trainer
// loads (export/<split>/*.parquet) match exactly the tables' files. The
// pairs' and the export's files carry the harvest's provenance, which the
// summary records too.
func TestExportForTraining(t *testing.T) {
	dir := t.TempDir()
	corpus := lexicalCorpus(t, dir)
	ctx := context.Background()
	out := filepath.Join(dir, "harvest")
	c := config(t, "--corpus="+corpus, "--output="+out, "--labeler=lexical", "--preset=demo", "--min_words=3",
		"--sample=0.9", "--sample_from=0.05", "--seed=7", "--pair_quota=near:4,mid:4,far:4,random:4", "--parquet_shards=3", "--print=0")
	if err := c.Resolve(); err != nil {
		t.Fatal(err)
	}
	if err := Run(ctx, c); err != nil {
		t.Fatal(err)
	}
	pairs, err := storage.ReadTable[schemas.LabeledPair](ctx, filepath.Join(out, "pairs"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]schemas.TrainingPair{}
	negative := 0
	for _, p := range pairs {
		want[p.Split] = append(want[p.Split], schemas.TrainingPair{Sentence1: p.Sentence1, Sentence2: p.Sentence2,
			Score: min(max(p.Label, 0), 1)})
		if p.Label < 0 || p.Label > 1 {
			negative++
		}
	}
	sum := readSummary(t, out)
	for _, split := range harvest.Splits {
		tdir := filepath.Join(out, "export", split)
		got, err := storage.ReadTable[schemas.TrainingPair](ctx, tdir)
		if err != nil {
			t.Fatal(err)
		}
		sortPairs(got)
		sortPairs(want[split])
		if len(got) != len(want[split]) || (len(got) > 0 && !reflect.DeepEqual(got, want[split])) {
			t.Fatalf("export/%s: %d pairs, want the %d pairs of the split with their labels clipped to [0, 1]",
				split, len(got), len(want[split]))
		}
		for _, p := range got {
			if p.Score < 0 || p.Score > 1 {
				t.Fatalf("export/%s: score %v outside [0, 1]", split, p.Score)
			}
		}
		if n := sum.Export.Pairs[split]; n != int64(len(got)) || sum.Export.Dirs[split] != "export/"+split {
			t.Fatalf("summary's export %+v: want %d pairs in export/%s", sum.Export, len(got), split)
		}
		// The glob a trainer is given matches the manifest's files, and
		// nothing else: each with exactly the three columns.
		m, err := storage.CheckTable(ctx, tdir)
		if err != nil || m.Record != "TrainingPair" {
			t.Fatalf("export/%s: manifest %+v (%v)", split, m, err)
		}
		matched, _ := filepath.Glob(filepath.Join(tdir, "*.parquet"))
		var listed []string
		for _, f := range m.Files {
			listed = append(listed, filepath.Join(tdir, f.Name))
		}
		if !reflect.DeepEqual(matched, listed) {
			t.Fatalf("export/%s/*.parquet matches %v, the manifest lists %v", split, matched, listed)
		}
		for _, f := range matched {
			checkColumns(t, f)
			meta, err := storage.ReadMetadata(ctx, f, reflect.TypeOf(schemas.TrainingPair{}))
			if err != nil {
				t.Fatal(err)
			}
			if meta[schemas.MetaScoreKey] != harvest.ScoreMapping {
				t.Fatalf("%s: score metadata %q", f, meta[schemas.MetaScoreKey])
			}
			checkProvenance(t, f, meta, sum)
		}
	}
	if len(want["train"]) == 0 || len(want["dev"])+len(want["test"]) == 0 {
		t.Fatalf("splits %d/%d/%d: the corpus is too small to test the export", len(want["train"]), len(want["dev"]), len(want["test"]))
	}
	t.Logf("%d pairs: %d train, %d dev, %d test; %d labels outside [0, 1]", len(pairs), len(want["train"]),
		len(want["dev"]), len(want["test"]), negative)

	pairFiles, _ := filepath.Glob(filepath.Join(out, "pairs", "*.parquet"))
	for _, f := range pairFiles {
		meta, err := storage.ReadMetadata(ctx, f, reflect.TypeOf(schemas.LabeledPair{}))
		if err != nil {
			t.Fatal(err)
		}
		checkProvenance(t, f, meta, sum)
	}
	p := sum.Provenance
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }
	if p.Corpus != abs(corpus) || p.Sentences != abs(filepath.Join(corpus, "sentences/*.parquet")) ||
		p.Index != abs(filepath.Join(corpus, "index")) || p.Chunks != abs(filepath.Join(corpus, "chunks/*.parquet")) ||
		p.Output != abs(out) || p.Model != "" {
		t.Fatalf("provenance's inputs: %+v", p)
	}
	if p.Preset != "demo" || p.Labeler != "lexical" || p.Settings.Labeler != "lexical" || p.MinWords != 3 ||
		p.Sample != 0.9 || p.SampleFrom != 0.05 || p.Seed != 7 || p.Pairs.Seed != 7 || p.RunID != sum.RunID ||
		p.RunID == "" || len(p.Command) == 0 || p.Tool.GoVersion == "" || p.Schema != schemas.Version || p.IndexFingerprint == "" {
		t.Fatalf("provenance: %+v", p)
	}

	duckDBReadsExport(t, out, len(pairs))
}

// checkProvenance checks that the file's metadata holds the summary's
// provenance.
func checkProvenance(t *testing.T, file string, meta map[string]string, sum harvest.Summary) {
	t.Helper()
	var p harvest.Provenance
	if err := json.Unmarshal([]byte(meta[schemas.MetaProvenanceKey]), &p); err != nil {
		t.Fatalf("%s: provenance metadata %q: %v", file, meta[schemas.MetaProvenanceKey], err)
	}
	if sum.Provenance == nil || !reflect.DeepEqual(p, *sum.Provenance) || meta[schemas.MetaRunKey] != sum.RunID {
		t.Fatalf("%s: provenance %+v, the summary's %+v", file, p, sum.Provenance)
	}
}

// checkColumns checks that the Parquet file has the columns sentence1 and
// sentence2 (strings) and score (a float), and no other.
func checkColumns(t *testing.T, file string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range pf.Schema().Fields() {
		cols = append(cols, fmt.Sprintf("%s %v", c.Name(), c.Type()))
	}
	if fmt.Sprint(cols) != "[sentence1 STRING sentence2 STRING score FLOAT]" {
		t.Fatalf("%s: columns %v", file, cols)
	}
}

func sortPairs(ps []schemas.TrainingPair) {
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].Sentence1 != ps[j].Sentence1 {
			return ps[i].Sentence1 < ps[j].Sentence1
		}
		return ps[i].Sentence2 < ps[j].Sentence2
	})
}

// duckDBReadsExport reads export/*/*.parquet with DuckDB (see
// transforms/parquetio's TestDuckDBReadsOutput): it needs
// `npm ci --prefix tools/duckdb`, and CTXSIM_REQUIRE_DUCKDB=1 makes a
// missing install fail instead of skipping.
func duckDBReadsExport(t *testing.T, out string, rows int) {
	t.Helper()
	script, _ := filepath.Abs("../../../tools/duckdb/read.mjs")
	mods, _ := filepath.Abs("../../../tools/duckdb/node_modules/@duckdb/node-api")
	if _, err := os.Stat(mods); err != nil {
		if os.Getenv("CTXSIM_REQUIRE_DUCKDB") != "" {
			t.Fatalf("DuckDB not installed (%v): run npm ci --prefix tools/duckdb", err)
		}
		t.Log("DuckDB not installed (npm ci --prefix tools/duckdb): the export is not read with it")
		return
	}
	b, err := exec.Command("node", script, filepath.Join(out, "export", "*", "*.parquet")).Output()
	if err != nil {
		t.Fatalf("duckdb: %v", err)
	}
	var res struct {
		Files    int `json:"files"`
		Rows     int `json:"rows"`
		Columns  []struct{ Name, Type string }
		Metadata map[string]string `json:"metadata"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	cols := fmt.Sprint(res.Columns)
	if res.Files != 5 || res.Rows != rows || cols != "[{sentence1 VARCHAR} {sentence2 VARCHAR} {score FLOAT}]" ||
		res.Metadata[schemas.MetaScoreKey] != harvest.ScoreMapping || res.Metadata[schemas.MetaProvenanceKey] == "" {
		t.Fatalf("duckdb saw %d files, %d rows (want 5 and %d), columns %s, metadata %v", res.Files, res.Rows, rows, cols, res.Metadata)
	}
}
