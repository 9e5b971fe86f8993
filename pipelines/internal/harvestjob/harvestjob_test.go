package harvestjob

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/pipelines/internal/settings"
	"github.com/ctxsim/ctxsim/transforms/harvest"
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

// A NaN figure (a mean over no pairs) is written as null: summary.json
// stays valid JSON. A file that cannot be written fails the job.
func TestWriteSummaryNaN(t *testing.T) {
	dir := t.TempDir()
	sum := harvest.Summary{RunID: "r1", MeanSetSize: math.NaN(), Seconds: 2}
	b, err := WriteSummary(context.Background(), dir, sum)
	if err != nil {
		t.Fatal(err)
	}
	onDisk, err := os.ReadFile(filepath.Join(dir, jobrun.SummaryName))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(onDisk, &doc); err != nil || !bytes.Equal(bytes.TrimSpace(b), bytes.TrimSpace(onDisk)) {
		t.Fatalf("summary.json (%v):\n%q\nreturned %q", err, onDisk, b)
	}
	if v, ok := doc["mean_set_size"]; !ok || v != nil || doc["run_id"] != "r1" || doc["seconds"] != 2.0 {
		t.Errorf("summary.json:\n%s", onDisk)
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := WriteSummary(context.Background(), filepath.Join(file, "out"), sum); err == nil ||
		!strings.Contains(err.Error(), jobrun.SummaryName) {
		t.Errorf("an output under a file: %v", err)
	}
}
