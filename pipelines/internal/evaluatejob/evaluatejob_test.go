package evaluatejob

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/pipelines/internal/evaluation"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/scoring/sts"
)

// testConfig is a config with the flags' defaults and the given arguments
// parsed.
func testConfig(t *testing.T, args ...string) Config {
	t.Helper()
	var c Config
	if err := jobrun.ParseArgs(&c, args...); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRegister(t *testing.T) {
	c := testConfig(t)
	if c.Variants != "origin,random_contexts,no_diversity,set_20,set_100,cosine" || c.BLAS != "go" || c.Seed != 1 ||
		c.Pairs != 0 || c.Workers != 0 || c.Method == nil || c.Method.Preset() != "small" {
		t.Fatalf("defaults %+v", c)
	}
	c = testConfig(t, "--sts=a.tsv", "--pairs=7", "--seed=3", "--preset=demo", "--top_k=9")
	if c.STS != "a.tsv" || c.Pairs != 7 || c.Seed != 3 || c.Method.Preset() != "demo" {
		t.Fatalf("parsed %+v", c)
	}
	st, err := c.Method.Settings()
	if err != nil || st.TopK != 9 {
		t.Fatalf("method settings %+v, %v", st, err)
	}
}

// TestRunErrorsNameTheirCause checks the errors Run returns before it
// loads any resource.
func TestRunErrorsNameTheirCause(t *testing.T) {
	tmp := t.TempDir()
	missing := filepath.Join(tmp, "missing.tsv")
	base := []string{"--sts=" + missing, "--index=" + tmp + "/index", "--chunks=" + tmp + "/chunks/*.parquet",
		"--model=" + tmp + "/model", "--output=" + tmp + "/out"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, missing},
		{[]string{"--variants=origin,bogus"}, `--variants: unknown variant "bogus"`},
		{[]string{"--preset=nope"}, "--preset"},
		{[]string{"--top_k=0"}, "--top_k must be at least 1"},
		{[]string{"--blas=fortran"}, `unknown backend "fortran"`},
	} {
		err := Run(context.Background(), testConfig(t, append(append([]string{}, base...), tc.args...)...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one naming %q", tc.args, err, tc.want)
		}
	}
	if err := Run(context.Background(), Config{STS: missing}); err == nil || !strings.Contains(err.Error(), "method settings") {
		t.Errorf("a config without method flags: %v", err)
	}
	if _, err := os.Stat(filepath.Join(tmp, "out")); !os.IsNotExist(err) {
		t.Errorf("a failed run wrote its output directory: %v", err)
	}
}

func TestPairsTSV(t *testing.T) {
	pairs := []sts.Pair{{Gold: 4.5, S1: "A cat.", S2: "A dog."}, {Gold: 0, S1: "One.", S2: "Two."}}
	out := &evaluation.Output{Columns: []string{"tfidf", "origin", "origin:eq4"},
		Pred: [][]float64{{0.5, 0.25}, {1, -0.123456}, {0.333333, 0}}}
	want := "gold\ttfidf\torigin\torigin:eq4\ts1\ts2\n" +
		"4.5\t0.50000\t1.00000\t0.33333\tA cat.\tA dog.\n" +
		"0\t0.25000\t-0.12346\t0.00000\tOne.\tTwo.\n"
	if got := string(pairsTSV(out, pairs)); got != want {
		t.Fatalf("pairs.tsv:\n%s\nwant:\n%s", got, want)
	}
}

// A NaN result (the Spearman correlation of constant gold scores) is
// written as null: results.json stays valid JSON. A file that cannot be
// written fails the job.
func TestWriteResultsNaN(t *testing.T) {
	dir := t.TempDir()
	c := testConfig(t, "--output="+dir, "--sts=a.tsv")
	out := &evaluation.Output{Results: []evaluation.Result{{Name: "tfidf", Spearman100: 12.5, Pairs: 2},
		{Name: "origin", Spearman100: math.NaN(), Pairs: 2}}}
	res := &resources.Resources{Engine: &method.Engine{Store: method.NewStore()},
		Models: &method.Models{Fingerprint: "models-1"}, Index: &retrieval.Index{}}
	pairs := []sts.Pair{{Gold: 3, S1: "A.", S2: "B."}, {Gold: 3, S1: "C.", S2: "D."}}
	if err := c.writeResults(context.Background(), out, pairs, res, time.Now()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Results []struct {
			Name     string   `json:"name"`
			Spearman *float64 `json:"spearman_x100"`
		} `json:"results"`
		Pairs int `json:"pairs"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("results.json is not JSON (%v):\n%q", err, b)
	}
	if len(doc.Results) != 2 || doc.Pairs != 2 || doc.Results[0].Spearman == nil || *doc.Results[0].Spearman != 12.5 ||
		doc.Results[1].Name != "origin" || doc.Results[1].Spearman != nil {
		t.Errorf("results.json:\n%s", b)
	}

	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	c.Output = filepath.Join(file, "out")
	if err := c.writeResults(context.Background(), out, pairs, res, time.Now()); err == nil ||
		!strings.Contains(err.Error(), "results.json") {
		t.Errorf("an output under a file: %v", err)
	}
}
