package harvestjob

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/pipelines/internal/settings"
)

func config(t *testing.T, args ...string) Config {
	t.Helper()
	var c Config
	if err := jobrun.ParseArgs(&c, args...); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestResolve(t *testing.T) {
	c := config(t, "--corpus=/data/corpus", "--model=m", "--chunks=/other/chunks/*.parquet", "--preset=small", "--pair_quota=near:2", "--seed=9")
	if err := c.Resolve(); err != nil {
		t.Fatal(err)
	}
	if c.Index != "/data/corpus/index" || c.Sentences != "/data/corpus/sentences/*.parquet" || c.Chunks != "/other/chunks/*.parquet" {
		t.Fatalf("paths %q %q %q", c.Index, c.Sentences, c.Chunks)
	}
	if c.Method.Method.TopK == 0 || c.Method.Quota != "near:2" || c.Method.Seed != 9 {
		t.Fatalf("method %+v", c.Method)
	}
	pc, err := PairConfig(c.Method)
	if err != nil || pc.Quota != [4]int{2, 0, 0, 0} || pc.Seed != 9 {
		t.Fatalf("pair sampler %+v, %v", pc, err)
	}
	if _, err := PairConfig(settings.Harvest{Quota: "close:1"}); err == nil {
		t.Fatal("an unknown stratum was accepted")
	}
	none := config(t)
	if err := none.Resolve(); err == nil || !strings.Contains(err.Error(), "--corpus") {
		t.Fatalf("no corpus: %v", err)
	}
	bad := config(t, "--corpus=c", "--similarity=dot")
	if err := bad.Resolve(); err == nil || !strings.Contains(err.Error(), "dot") {
		t.Fatalf("bad similarity: %v", err)
	}
}

// Run checks the index and models before anything starts, and removes an
// earlier run's summary first: a stale summary must not commit tables the
// new run is about to rewrite.
func TestRunChecksInputsFirst(t *testing.T) {
	out := t.TempDir()
	stale := filepath.Join(out, jobrun.SummaryName)
	os.WriteFile(stale, []byte(`{"run_id":"old"}`), 0o644)
	c := config(t, "--corpus="+filepath.Join(t.TempDir(), "nocorpus"), "--model=m", "--output="+out)
	if err := c.Resolve(); err != nil {
		t.Fatal(err)
	}
	err := Run(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "nocorpus") {
		t.Fatalf("missing index: %v", err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("the earlier run's summary is still there: %v", err)
	}
}
