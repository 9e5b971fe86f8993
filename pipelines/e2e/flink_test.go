package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
)

// flinkCluster starts the local Flink cluster of deploy/flink (two task
// managers, each with a Go SDK worker pool, in network namespaces of their
// own) under dir for the rest of the test, and returns the flags that
// submit a job to it. The cluster's tests run when CTXSIM_FLINK_E2E is set
// (they fetch some 150 MB from Maven Central the first time, and take
// minutes); they skip where the cluster cannot run (not root, no Java or
// Maven), and fail there instead when CTXSIM_REQUIRE_FLINK is set.
func flinkCluster(t *testing.T, dir string) []string {
	t.Helper()
	if os.Getenv("CTXSIM_FLINK_E2E") == "" && os.Getenv("CTXSIM_REQUIRE_FLINK") == "" {
		t.Skip("starts a Flink cluster: set CTXSIM_FLINK_E2E=1")
	}
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root (network namespaces)")
	}
	for _, tool := range []string{"ip", "java", "mvn", "curl", "ss"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) > 0 {
		if os.Getenv("CTXSIM_REQUIRE_FLINK") != "" {
			t.Fatalf("the Flink cluster needs %s", strings.Join(missing, ", "))
		}
		t.Skipf("the Flink cluster needs %s", strings.Join(missing, ", "))
	}
	script, err := filepath.Abs("../../deploy/flink/flink.sh")
	if err != nil {
		t.Fatal(err)
	}
	// A name and subnet of its own, so that a cluster started by hand
	// (make flink-up) is left alone.
	env := append(os.Environ(), "CTXSIM_FLINK_NAME=cxe2e", "CTXSIM_FLINK_NET=10.231.78",
		"CTXSIM_FLINK_HOME="+filepath.Join(dir, "flink"))
	flink := func(arg string) (string, error) {
		cmd := exec.Command(script, arg)
		cmd.Env = env
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	flink("down") // a cluster left by a test that was killed
	t.Cleanup(func() {
		if out, err := flink("down"); err != nil {
			t.Errorf("flink.sh down: %v\n%s", err, out)
		}
	})
	t0 := time.Now()
	if out, err := flink("up"); err != nil {
		t.Fatalf("flink.sh up: %v\n%s", err, out)
	}
	t.Logf("cluster up in %s", time.Since(t0).Round(time.Second))
	flags, err := flink("env")
	if err != nil {
		t.Fatalf("flink.sh env: %v\n%s", err, flags)
	}
	return strings.Fields(flags)
}

// flinkDataDir makes a directory for a test's data that the cluster's
// workers see: outside /tmp, which is each task manager host's own.
func flinkDataDir(t *testing.T) string {
	t.Helper()
	base, err := filepath.Abs("../../out")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(base, "e2e-flink-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestFlinkIndexEqualsPrism runs the index job on Prism and on the local
// Flink cluster (parallelism 4 over two task managers) and checks that
// the two wrote the same sentences, chunks and dead letters, every field,
// and indexes of the same corpus and shards.
func TestFlinkIndexEqualsPrism(t *testing.T) {
	dir := flinkDataDir(t)
	flinkFlags := flinkCluster(t, dir)
	path := cleanCorpus(t, dir, 40)
	prism, onFlink := filepath.Join(dir, "prism"), filepath.Join(dir, "flink-index")
	args := func(out string) []string {
		return []string{"--input=" + path, "--output=" + out, "--shards=2", "--parquet_shards=2"}
	}
	run(t, "index", args(prism)...)
	run(t, "index", append(args(onFlink), flinkFlags...)...)
	if a, b := readTable[schemas.Sentence](t, prism+"/sentences"), readTable[schemas.Sentence](t, onFlink+"/sentences"); len(a) == 0 || !sameMultiset(a, b) {
		t.Errorf("sentences: Flink's %d rows differ from Prism's %d", len(b), len(a))
	}
	if a, b := readTable[schemas.Chunk](t, prism+"/chunks"), readTable[schemas.Chunk](t, onFlink+"/chunks"); len(a) == 0 || !sameMultiset(a, b) {
		t.Errorf("chunks: Flink's %d rows differ from Prism's %d", len(b), len(a))
	}
	if a, b := readTable[schemas.DeadLetter](t, prism+"/dead_letters"), readTable[schemas.DeadLetter](t, onFlink+"/dead_letters"); !sameMultiset(a, b) {
		t.Errorf("dead letters: Flink's %d rows differ from Prism's %d", len(b), len(a))
	}
	ma, err := retrieval.ReadMeta(prism + "/index")
	if err != nil {
		t.Fatal(err)
	}
	mb, err := retrieval.ReadMeta(onFlink + "/index")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ma.Corpus, mb.Corpus) || !reflect.DeepEqual(ma.Shards, mb.Shards) {
		t.Errorf("index: Flink's corpus or shard fingerprints differ from Prism's")
	}
}

// TestFlinkHarvestEqualsPrism runs a small harvest with the default
// labeler, in two waves over two corpus parts, on Prism and on the local
// Flink cluster (parallelism 4 over two task managers), and checks that
// the two wrote the same rows: pairs, context sets and the exported
// splits, every field, labels to the bit.
func TestFlinkHarvestEqualsPrism(t *testing.T) {
	if os.Getenv("CTXSIM_FLINK_HARVEST") == "" {
		t.Skip("the harvest does not run on Flink yet (deploy/README.md, Flink): set CTXSIM_FLINK_HARVEST=1 to try")
	}
	dir := flinkDataDir(t)
	flinkFlags := flinkCluster(t, dir)

	corpusOut, model := ctxFixture(t, dir)
	args := func(out string) []string {
		return append(harvestArgs(corpusOut, model, out), "--waves=2", "--corpus_parts=2")
	}
	prism := filepath.Join(dir, "prism")
	t0 := time.Now()
	run(t, "harvest", args(prism)...)
	tPrism := time.Since(t0)
	onFlink := filepath.Join(dir, "flink-harvest")
	t0 = time.Now()
	run(t, "harvest", append(args(onFlink), flinkFlags...)...)
	t.Logf("harvest: Prism %s, Flink %s", tPrism.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))

	pa, pb := sortedPairs(t, prism+"/pairs"), sortedPairs(t, onFlink+"/pairs")
	if len(pa) < 20 {
		t.Fatalf("Prism's harvest labeled %d pairs, too few to compare", len(pa))
	}
	if d := pairsDiff(pa, pb); d != "" {
		t.Errorf("pairs: Flink's differ from Prism's: %s", d)
	}
	if sa, sb := sortedSets(t, prism+"/context_sets"), sortedSets(t, onFlink+"/context_sets"); !reflect.DeepEqual(sa, sb) {
		t.Errorf("context sets: Flink's %d differ from Prism's %d", len(sb), len(sa))
	}
	for _, split := range []string{"train", "dev", "test"} {
		ea := readTable[schemas.TrainingPair](t, prism+"/export/"+split)
		eb := readTable[schemas.TrainingPair](t, onFlink+"/export/"+split)
		if !sameMultiset(ea, eb) {
			t.Errorf("export/%s: Flink's %d rows differ from Prism's %d", split, len(eb), len(ea))
		}
	}
}

// ctxFixture indexes a generated corpus of 40 documents under dir and
// trains the tiny contrastive model (the default labeler's) on it.
func ctxFixture(t *testing.T, dir string) (corpusOut, model string) {
	t.Helper()
	path := cleanCorpus(t, dir, 40)
	corpusOut = filepath.Join(dir, "corpus")
	run(t, "index", "--input="+path, "--output="+corpusOut, "--shards=2")
	model = filepath.Join(dir, "model")
	run(t, "train", "--input="+path, "--output="+model, "--preset=tiny", "--models=ctx", "--vocab_size=400",
		"--held_out=0.2", "--eval_examples=100", "--ctx_batch=32", "--rank_tasks=20")
	return corpusOut, model
}

// readTable reads every row of a table that may have no rows.
func readTable[T any](t *testing.T, dir string) []T {
	t.Helper()
	rows, err := storage.ReadTable[T](context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// pairsDiff describes how two harvests' pairs, sorted by ID, differ: ""
// when every field is equal and every label is equal to the bit.
func pairsDiff(a, b []schemas.LabeledPair) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d rows against %d", len(b), len(a))
	}
	rows, labels := 0, 0
	maxDelta := 0.0
	for i := range a {
		x, y := a[i], b[i]
		if math.Float32bits(x.Label) != math.Float32bits(y.Label) {
			labels++
			maxDelta = math.Max(maxDelta, math.Abs(float64(x.Label-y.Label)))
		}
		if !reflect.DeepEqual(x, y) {
			rows++
		}
	}
	if rows == 0 && labels == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d rows differ, %d labels (max |Δ| %.3g)", rows, len(a), labels, maxDelta)
}

// sameMultiset reports whether a and b hold the same rows, in any order.
func sameMultiset[T any](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	count := map[string]int{}
	for _, r := range a {
		count[fmt.Sprintf("%#v", r)]++
	}
	for _, r := range b {
		k := fmt.Sprintf("%#v", r)
		if count[k] == 0 {
			return false
		}
		count[k]--
	}
	return true
}
