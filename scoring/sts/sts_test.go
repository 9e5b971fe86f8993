package sts

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.tsv")
	os.WriteFile(good, []byte("score\ts1\ts2\tgenre\n4.5\tA cat sat.\tA cat sits.\tx\n\n0.5\tDogs bark.\tRain falls.\tx\n"), 0o644)
	ps, err := Read(context.Background(), good)
	if err != nil || len(ps) != 2 || ps[0].Gold != 4.5 || ps[1].S2 != "Rain falls." {
		t.Fatalf("Read = %+v, %v", ps, err)
	}
	for name, body := range map[string]string{
		"cols":  "score\ts1\ts2\n1\tonly one\n2\ta\tb\n",
		"score": "score\ts1\ts2\nx\ta\tb\n2\ta\tb\n",
		"empty": "score\ts1\ts2\n1\t \tb\n2\ta\tb\n",
		"short": "score\ts1\ts2\n1\ta\tb\n",
	} {
		p := filepath.Join(dir, name+".tsv")
		os.WriteFile(p, []byte(body), 0o644)
		if _, err := Read(context.Background(), p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v", name, err)
		}
	}
}

func TestSpread(t *testing.T) {
	ps := make([]Pair, 10)
	for i := range ps {
		ps[i].Gold = float64(i)
	}
	got := Spread(ps, 3)
	if len(got) != 3 || got[0].Gold != 0 || got[1].Gold != 3 || got[2].Gold != 6 {
		t.Fatalf("Spread = %+v", got)
	}
	if len(Spread(ps, 0)) != 10 || len(Spread(ps, 20)) != 10 {
		t.Fatal("Spread should keep all pairs for n = 0 or n >= len")
	}
}

// A file without the header is refused: read as before, its first pair
// would be taken for the header and lost.
func TestReadNeedsHeader(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct{ body, want string }{
		"pairs":  {"4.5\tA cat sat.\tA cat sits.\tx\n0.5\tDogs bark.\tRain falls.\tx\n3\tOne.\tTwo.\tx\n", "no header"},
		"other":  {"gold\ta\tb\n4.5\tA cat sat.\tA cat sits.\n0.5\tDogs bark.\tRain falls.\n", "want a TSV with the header"},
		"spaces": {"score s1 s2\n4.5\tA cat sat.\tA cat sits.\n0.5\tDogs bark.\tRain falls.\n", "want a TSV with the header"},
		"blank":  {"\nscore\ts1\ts2\n4.5\tA cat sat.\tA cat sits.\n0.5\tDogs bark.\tRain falls.\n", "want a TSV with the header"},
	} {
		p := filepath.Join(dir, name+".tsv")
		os.WriteFile(p, []byte(tc.body), 0o644)
		ps, err := Read(context.Background(), p)
		if err == nil || !strings.Contains(err.Error(), p+":1: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Read = %d pairs, error %v; want one naming %s:1 and %q", name, len(ps), err, p, tc.want)
		}
	}
	// The header's case, spaces around its names, a byte order mark and
	// further columns do not matter.
	p := filepath.Join(dir, "bom.tsv")
	os.WriteFile(p, []byte("\uFEFFScore\t s1 \tS2\tgenre\textra\n4.5\tA cat sat.\tA cat sits.\tx\ty\n0.5\tDogs bark.\tRain falls.\tx\ty\n"), 0o644)
	if ps, err := Read(context.Background(), p); err != nil || len(ps) != 2 || ps[0].Gold != 4.5 {
		t.Errorf("a header with a byte order mark: %+v, %v", ps, err)
	}
}

// The layouts STS files come in: the STS Benchmark's own sts-*.csv
// (tab-separated, no header, quotation marks that are text), the
// sentence-transformers/stsb CSV (quoted fields, columns by name, in any
// order) and SICK's tab-separated file with its own column names.
func TestReadLayouts(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"stsbenchmark.csv": "main-captions\tMSRvid\t2012test\t0000\t4.5\t\"A cat\" sat.\tA cat sits.\n" +
			"main-news\tnews\t2015\t0001\t0.5\tDogs bark.\tRain falls.\tsource\textra\n",
		"hf.csv":    "sentence1,sentence2,score\n\"\"\"A cat\"\" sat.\",A cat sits.,0.9\nDogs bark.,\"Rain, then falls.\",0.1\n",
		"order.csv": "score,sentence2,sentence1\n0.9,A cat sits.,\"\"\"A cat\"\" sat.\"\n0.1,\"Rain, then falls.\",Dogs bark.\n",
		"sick.txt": "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n" +
			"1\t\"A cat\" sat.\tA cat sits.\t4.5\tENTAILMENT\n2\tDogs bark.\tRain falls.\t1.5\tNEUTRAL\n",
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		ps, err := Read(context.Background(), p)
		if err != nil || len(ps) != 2 {
			t.Errorf("%s: Read = %+v, %v", name, ps, err)
			continue
		}
		if ps[0].S1 != `"A cat" sat.` || ps[0].S2 != "A cat sits." || !strings.HasPrefix(ps[1].S2, "Rain") || !(ps[0].Gold > ps[1].Gold) {
			t.Errorf("%s: read %+v", name, ps)
		}
	}
	// A malformed line of a headerless STS Benchmark file names its line.
	p := filepath.Join(dir, "short.csv")
	os.WriteFile(p, []byte("main-captions\tMSRvid\t2012test\t0000\t4.5\tA.\tB.\nmain\tx\t2012\t1\t3\tC.\n"), 0o644)
	if _, err := Read(context.Background(), p); err == nil || !strings.Contains(err.Error(), p+":2: ") {
		t.Errorf("short line: %v", err)
	}
}
