package beamjob

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/ctxsim/ctxsim/pipelines/internal/beamjob/beamtest"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/transforms/beamreg"
	"github.com/ctxsim/ctxsim/transforms/counter"
)

func init() {
	beamreg.DoFn(&countFn{})
	beamreg.DoFn(&shardFn{})
	register.Emitter2[int, int]()
	beamreg.DoFn(&countGroupFn{})
	register.Iter1[int]()
}

func TestMain(m *testing.M) {
	if os.Getenv(failingJobEnv) != "" {
		failingJob()
	}
	if e := os.Getenv(probeEnv); e != "" {
		probe(e)
	}
	beamtest.Main(m)
}

type countFn struct{ seen counter.Counter }

func (f *countFn) Setup()                                    { f.seen = counter.New("jobrun_test", "elements") }
func (f *countFn) ProcessElement(ctx context.Context, _ int) { f.seen.Inc(ctx, 1) }

type shardFn struct{ Shards int }

func (f *shardFn) ProcessElement(v int, emit func(int, int)) { emit(v%f.Shards, v) }

// deadline is when every countGroupFn starts counting. The workers run in
// the test process (loopback), so they all see it.
var deadline time.Time

// countGroupFn counts a group's values, as the index job's shard builders
// count their chunks. It counts nothing before deadline: Prism sees a bundle
// that reports no progress for that long, splits it in two, and both halves
// then finish together, each reporting counters Prism has not seen before.
// That is the case in which Prism keeps only one of the two reports.
type countGroupFn struct{ values, groups counter.Counter }

func (f *countGroupFn) Setup() {
	f.values = counter.New("jobrun_test", "grouped_values")
	f.groups = counter.New("jobrun_test", "groups")
}

func (f *countGroupFn) ProcessElement(ctx context.Context, _ int, vs func(*int) bool) {
	time.Sleep(time.Until(deadline))
	var v int
	for vs(&v) {
		f.values.Inc(ctx, 1)
	}
	f.groups.Inc(ctx, 1)
}

// TestRunCounters runs a job whose per-key counts finish in concurrent
// bundles, the pattern in which Prism loses a counter's first updates (with
// the runner's own report, grouped_values came back as 150 of 300 on every
// run), and checks that Run's counters are exact on every run.
func TestRunCounters(t *testing.T) {
	if !strings.EqualFold(jobrun.RunnerName(), "prism") {
		t.Skipf("runner %s", jobrun.RunnerName())
	}
	const n, shards, runs = 300, 4, 5
	for i := range runs {
		deadline = time.Now().Add(400 * time.Millisecond)
		p, s := beam.NewPipelineWithRoot()
		vals := make([]int, n)
		for j := range vals {
			vals[j] = j
		}
		col := beam.CreateList(s, vals)
		beam.ParDo0(s, &countFn{}, col)
		beam.ParDo0(s, &countGroupFn{}, beam.GroupByKey(s, beam.ParDo(s, &shardFn{Shards: shards}, col)))
		c, err := Run(context.Background(), "jobrun_test", p)
		if err != nil {
			t.Fatal(err)
		}
		if !loopback() {
			t.Fatalf("environment_type = %q (%q) after a Prism run, want this process's workers", jobrun.FlagValue("environment_type"), jobrun.FlagValue("environment_config"))
		}
		for k, want := range map[string]int64{
			"jobrun_test/elements": n, "jobrun_test/grouped_values": n, "jobrun_test/groups": shards,
		} {
			if c[k] != want {
				t.Errorf("run %d: %s = %d, want %d", i, k, c[k], want)
			}
		}
	}
}

func TestCountersReplace(t *testing.T) {
	c := jobrun.Counters{"a/x": 3, "a/y": 5, "b/only_runner": 13}
	diff := c.Replace(map[string]int64{"a/x": 3, "a/y": 8, "a/z": 0, "a/w": 2})
	if want := "a/w 0→2, a/y 5→8"; diff != want {
		t.Errorf("diff %q, want %q", diff, want)
	}
	want := jobrun.Counters{"a/x": 3, "a/y": 8, "a/z": 0, "a/w": 2, "b/only_runner": 13}
	if len(c) != len(want) {
		t.Fatalf("%v, want %v", c, want)
	}
	for k, v := range want {
		if c[k] != v {
			t.Errorf("%s = %d, want %d", k, c[k], v)
		}
	}
	if err := c.Reconcile("b/only_runner", "a/x", "a/y", "a/w"); err != nil {
		t.Errorf("reconcile after replace: %v", err)
	}
}

// With HeapProfileEnv set, Run leaves a heap profile that pprof reads.
func TestRunHeapProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "heap.pprof")
	t.Setenv(HeapProfileEnv, path)
	p, s := beam.NewPipelineWithRoot()
	vals := make([]int, 2000)
	for j := range vals {
		vals[j] = j
	}
	beam.ParDo0(s, &countFn{}, beam.CreateList(s, vals))
	if _, err := Run(context.Background(), "jobrun_test", p); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// A pprof profile is a gzipped protocol buffer whose string table
	// names its sample types.
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil || !bytes.Contains(b, []byte("inuse_space")) {
		t.Fatalf("%d bytes (%v), want a heap profile", len(b), err)
	}
	t.Setenv(HeapProfileEnv, filepath.Join(t.TempDir(), "missing", "heap.pprof"))
	if _, err := Run(context.Background(), "jobrun_test", p); err == nil || !strings.Contains(err.Error(), HeapProfileEnv) {
		t.Fatalf("unwritable profile path: %v", err)
	}
}

func TestRunnerFlagsMarked(t *testing.T) {
	for _, n := range []string{"runner", "staging_location", "environment_type", "job_name"} {
		if !jobrun.RunnerFlag(n) {
			t.Errorf("--%s is not a runner flag", n)
		}
	}
	for _, n := range []string{"verbose", "allow_empty", "take_over", "expose_job_service"} {
		if jobrun.RunnerFlag(n) {
			t.Errorf("--%s, ctxsim's own, is listed as a runner flag", n)
		}
	}
}

func TestChangedCounters(t *testing.T) {
	counter.Reset()
	ctx := context.Background()
	status := changedCounters()
	if s := status(); s != "" {
		t.Errorf("no counter yet: %q", s)
	}
	a, b := counter.New("beamjob_test", "apples"), counter.New("beamjob_test", "pears")
	a.Inc(ctx, 2)
	b.Inc(ctx, 3)
	if s := status(); s != "apples 2, pears 3" {
		t.Errorf("got %q", s)
	}
	b.Inc(ctx, 1)
	if s := status(); s != "pears 4" {
		t.Errorf("only pears changed: got %q", s)
	}
	if s := status(); s != "" {
		t.Errorf("nothing changed: got %q", s)
	}
}
