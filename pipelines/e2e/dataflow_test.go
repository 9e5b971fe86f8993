package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/storage/gcstest"
)

// Dataflow settings of the submissions below, none of which reaches
// Dataflow: a dry run stops before submitting, and a template is written to
// (fake) GCS instead.
const (
	dfProject = "ctxsim-test"
	dfRegion  = "us-central1"
	dfBucket  = "ctxsim-test"
	dfImage   = "us-central1-docker.pkg.dev/ctxsim-test/ctxsim/worker:test"
)

// dataflowFlags are the flags a Dataflow submission needs: the runner
// requires --project, --region and --staging_location.
func dataflowFlags() []string {
	return []string{"--runner=dataflow", "--project=" + dfProject, "--region=" + dfRegion,
		"--temp_location=gs://" + dfBucket + "/tmp", "--staging_location=gs://" + dfBucket + "/staging",
		"--sdk_container_image=" + dfImage}
}

// netnsCommand returns the command prefix that runs a command in a new
// network namespace, which has no network at all: unshare -n as root, or
// unshare -rn where unprivileged user namespaces are allowed. Without either
// the test is skipped, or fails when CTXSIM_REQUIRE_NETNS is set.
func netnsCommand(t *testing.T) []string {
	t.Helper()
	var errs []string
	for _, c := range [][]string{{"unshare", "-n"}, {"unshare", "-rn"}} {
		err := exec.Command(c[0], append(c[1:], "true")...).Run()
		if err == nil {
			return c
		}
		errs = append(errs, fmt.Sprintf("%s: %v", strings.Join(c, " "), err))
	}
	msg := "cannot create a network namespace: " + strings.Join(errs, "; ")
	if os.Getenv("CTXSIM_REQUIRE_NETNS") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return nil
}

// submission is what a job printed while submitting itself to Dataflow.
type submission struct {
	err        error
	stdout     string
	stderr     string
	transforms map[string]bool // unique names of the pipeline's transforms
	pipeline   string          // the portable pipeline, in protobuf text form
	job        dataflowJob     // the Dataflow job request
}

// dataflowJob is the part of a Dataflow job request (v1b3 Job) checked here.
type dataflowJob struct {
	ProjectID   string `json:"projectId"`
	Type        string `json:"type"`
	Environment struct {
		TempStoragePrefix  string   `json:"tempStoragePrefix"`
		Experiments        []string `json:"experiments"`
		SDKPipelineOptions struct {
			DisplayData []struct {
				Key       string `json:"key"`
				Namespace string `json:"namespace"`
				Value     any    `json:"value"`
			} `json:"display_data"`
			Options struct {
				Region       string `json:"region"`
				TempLocation string `json:"tempLocation"`
				PipelineURL  string `json:"pipelineUrl"`
			} `json:"options"`
		} `json:"sdkPipelineOptions"`
		WorkerPools []struct {
			Packages []struct {
				Name     string `json:"name"`
				Location string `json:"location"`
				SHA256   string `json:"sha256"`
			} `json:"packages"`
			WorkerHarnessContainerImage string `json:"workerHarnessContainerImage"`
			SDKHarnessContainerImages   []struct {
				ContainerImage string `json:"containerImage"`
			} `json:"sdkHarnessContainerImages"`
		} `json:"workerPools"`
	} `json:"environment"`
}

// goOption returns the value of a job flag as the job passes it to its
// workers (the go_options display data), and whether it is there.
func (j dataflowJob) goOption(name string) (string, bool) {
	for _, d := range j.Environment.SDKPipelineOptions.DisplayData {
		if d.Namespace == "go_options" && d.Key == name {
			return fmt.Sprint(d.Value), true
		}
	}
	return "", false
}

var (
	slogMsgRE    = regexp.MustCompile(`msg=("(?:[^"\\]|\\.)*")`)
	uniqueNameRE = regexp.MustCompile(`unique_name:"((?:[^"\\]|\\.)*)"`)
)

// parseSubmission reads the pipeline and the job request from a job's log,
// where the Dataflow runner writes them (with --verbose) as slog messages.
func parseSubmission(t *testing.T, s *submission) {
	t.Helper()
	s.transforms = map[string]bool{}
	for _, line := range strings.Split(s.stderr, "\n") {
		m := slogMsgRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		msg, err := strconv.Unquote(m[1])
		if err != nil {
			t.Fatalf("unquote log message: %v\n%s", err, line)
		}
		switch {
		case strings.HasPrefix(msg, "components:"):
			s.pipeline = msg
			for _, n := range uniqueNameRE.FindAllStringSubmatch(msg, -1) {
				s.transforms[n[1]] = true
			}
		case strings.HasPrefix(msg, "{") && strings.Contains(msg, `"environment"`):
			if err := json.Unmarshal([]byte(msg), &s.job); err != nil {
				t.Fatalf("job request: %v\n%s", err, msg)
			}
		}
	}
}

// dryRun runs a job with --runner=dataflow --dry_run in a network namespace,
// from an empty directory, and checks that it wrote nothing there.
func dryRun(t *testing.T, netns []string, job string, args ...string) submission {
	t.Helper()
	dir := t.TempDir()
	argv := append(append(append([]string{}, netns...), filepath.Join(binDir, job)), dataflowFlags()...)
	argv = append(append(argv, "--dry_run", "--verbose"), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	s := submission{err: cmd.Run(), stdout: out.String(), stderr: errb.String()}
	parseSubmission(t, &s)
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("%s dry run wrote into its working directory: %v", job, entries)
	}
	return s
}

// checkJobRequest checks what every submission of these jobs must send to
// Dataflow: a batch job of the right project, region and locations, run by
// the worker image dfImage.
func checkJobRequest(t *testing.T, j dataflowJob) {
	t.Helper()
	if j.ProjectID != dfProject || j.Type != "JOB_TYPE_BATCH" {
		t.Errorf("job request: project %q, type %q; want %q, JOB_TYPE_BATCH", j.ProjectID, j.Type, dfProject)
	}
	if o := j.Environment.SDKPipelineOptions.Options; o.Region != dfRegion || o.TempLocation != "gs://"+dfBucket+"/tmp" ||
		!strings.HasPrefix(o.PipelineURL, "gs://"+dfBucket+"/staging/") {
		t.Errorf("job request options %+v", o)
	}
	if j.Environment.TempStoragePrefix != "gs://"+dfBucket+"/tmp" {
		t.Errorf("temp storage %q", j.Environment.TempStoragePrefix)
	}
	if !strings.Contains(strings.Join(j.Environment.Experiments, ","), "use_runner_v2") {
		t.Errorf("experiments %v: Beam Go needs Runner v2", j.Environment.Experiments)
	}
	if len(j.Environment.WorkerPools) != 1 {
		t.Fatalf("%d worker pools, want 1", len(j.Environment.WorkerPools))
	}
	wp := j.Environment.WorkerPools[0]
	if wp.WorkerHarnessContainerImage != dfImage || len(wp.SDKHarnessContainerImages) != 1 ||
		wp.SDKHarnessContainerImages[0].ContainerImage != dfImage {
		t.Errorf("workers do not run --sdk_container_image %s: %+v", dfImage, wp)
	}
	if len(wp.Packages) == 0 || wp.Packages[0].Name != "worker" ||
		!strings.HasPrefix(wp.Packages[0].Location, "gs://"+dfBucket+"/staging/") {
		t.Fatalf("worker binary package %+v, want the staged worker first", wp.Packages)
	}
}

// checkPipelineEnvironment checks that the pipeline (as text or encoded)
// runs its transforms in the worker image dfImage.
func checkPipelineEnvironment(t *testing.T, pipeline []byte) {
	t.Helper()
	if !bytes.Contains(pipeline, []byte("beam:env:docker:v1")) || !bytes.Contains(pipeline, []byte(dfImage)) {
		t.Errorf("the pipeline's environment is not the docker image %s", dfImage)
	}
}

func wantTransforms(t *testing.T, s submission, names ...string) {
	t.Helper()
	for _, n := range names {
		if !s.transforms[n] {
			t.Errorf("the pipeline has no transform %q; it has %d transforms", n, len(s.transforms))
		}
	}
}

// TestDataflowDryRun submits the index and harvest jobs to the Dataflow
// runner with --dry_run, which builds and translates the job and prints it
// instead of submitting it, inside a network namespace: a Dataflow
// submission must be valid without network, and the printed job must be
// the job's whole pipeline, run by the worker image.
func TestDataflowDryRun(t *testing.T) {
	netns := netnsCommand(t)
	corpusOut, model := harvestFixture(t)

	t.Run("index", func(t *testing.T) {
		out := "gs://" + dfBucket + "/corpus"
		s := dryRun(t, netns, "index", "--input="+filepath.Join(filepath.Dir(corpusOut), "c.jsonl.gz"),
			"--output="+out, "--shards=2")
		if s.err != nil {
			t.Fatalf("index dry run: %v\nstdout:\n%s\nstderr:\n%s", s.err, s.stdout, lastLines(s.stderr, 10))
		}
		if !strings.Contains(s.stderr, "Dry-run: not submitting job!") || s.pipeline == "" {
			t.Fatalf("no dry-run print (the runner logs it, shown with --verbose):\n%s", lastLines(s.stderr, 10))
		}
		checkJobRequest(t, s.job)
		checkPipelineEnvironment(t, []byte(s.pipeline))
		wantTransforms(t, s, "ingest", "ingest/ingest.readFileFn", "ingest/ingest.splitFn", "ingest/ingest.dedupeFn",
			"index.Build", "index.Build/index.buildShardFn", "index.Build/index.finalizeFn",
			"parquetio.Write", "parquetio.Write'1", "parquetio.Write'2", "parquetio.Write/parquetio.finalizeFn")
		if v, ok := s.job.goOption("output"); !ok || v != out {
			t.Errorf("workers get --output=%q (%v), want %s", v, ok, out)
		}
		// Without --index, the index goes under --output, which is on GCS.
		m := regexp.MustCompile(`(?m)^index:\s+(\S+)$`).FindStringSubmatch(s.stdout)
		if m == nil || m[1] != out+"/index" {
			t.Errorf("index directory %q, want %s/index: a gs:// --output must not become a local path\n%s", m, out, s.stdout)
		}
	})

	t.Run("harvest", func(t *testing.T) {
		out := "gs://" + dfBucket + "/out"
		s := dryRun(t, netns, "harvest", "--corpus="+corpusOut, "--model="+model, "--output="+out, "--preset=demo")
		if !strings.Contains(s.stderr, "Dry-run: not submitting job!") || s.pipeline == "" {
			t.Fatalf("no dry-run print (err %v; the runner logs it, shown with --verbose):\nstdout:\n%s\nstderr:\n%s",
				s.err, s.stdout, lastLines(s.stderr, 10))
		}
		checkJobRequest(t, s.job)
		checkPipelineEnvironment(t, []byte(s.pipeline))
		wantTransforms(t, s, "parquetio.Read", "parquetio.Read/parquetio.readFn",
			"harvest.FilterSentences", "index.Retrieve", "index.Retrieve/index.retrieveFn",
			"harvest.ContextSets", "harvest.ContextSets/harvest.contextSetFn",
			"harvest.SamplePairs", "harvest.SamplePairs/harvest.quotaFn",
			"harvest.LabelSides", "harvest.LabelSides/harvest.textJoinFn",
			"harvest.LabelSides/harvest.sideAFn", "harvest.LabelSides/harvest.sideBFn",
			"parquetio.Write", "parquetio.Write'1", "parquetio.Write'2", "parquetio.Write/parquetio.finalizeFn")
		for name, want := range map[string]string{"output": out, "preset": "demo", "model": model, "corpus": corpusOut} {
			if v, ok := s.job.goOption(name); !ok || v != want {
				t.Errorf("workers get --%s=%q (%v), want %q", name, v, ok, want)
			}
		}
		// A dry run has no results: nothing may be written after it, such
		// as a summary of zero counters to --output, which is on GCS here.
		if s.err != nil {
			t.Errorf("harvest dry run failed after printing the job (a dry run must end there):\n%v\nstdout:\n%s\nstderr (last lines):\n%s",
				s.err, s.stdout, lastLines(s.stderr, 4))
		}
	})
}

// TestDataflowTemplate submits the harvest job the way a Flex Template
// launch does (deploy/docker/launch.sh): with --template_location and
// --worker_binary, the runner stages the worker binary and the pipeline and
// writes the job request to GCS instead of submitting it. GCS is a fake
// server on 127.0.0.1.
func TestDataflowTemplate(t *testing.T) {
	gcstest.Start(t, dfBucket)
	corpusOut, model := harvestFixture(t)
	ctx := context.Background()
	worker := filepath.Join(binDir, "harvest")
	const tplURL = "gs://" + dfBucket + "/templates/harvest.json"
	run(t, "harvest", append(dataflowFlags(), "--template_location="+tplURL, "--worker_binary="+worker,
		"--corpus="+corpusOut, "--model="+model, "--output=gs://"+dfBucket+"/out", "--preset=demo")...)

	tpl, err := storage.ReadFile(ctx, tplURL)
	if err != nil {
		t.Fatalf("no job request at --template_location: %v", err)
	}
	var job dataflowJob
	if err := json.Unmarshal(tpl, &job); err != nil {
		t.Fatalf("job request at --template_location: %v", err)
	}
	checkJobRequest(t, job)
	// The staged worker is exactly --worker_binary, and the package says so.
	pkg := job.Environment.WorkerPools[0].Packages[0]
	staged, err := storage.ReadFile(ctx, pkg.Location)
	if err != nil {
		t.Fatalf("worker package %s was not staged: %v", pkg.Location, err)
	}
	want, err := os.ReadFile(worker)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(staged)
	if !bytes.Equal(staged, want) || pkg.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("staged worker (%d bytes, package sha256 %q) is not --worker_binary (%d bytes)", len(staged), pkg.SHA256, len(want))
	}
	pipelineURL := job.Environment.SDKPipelineOptions.Options.PipelineURL
	pipeline, err := storage.ReadFile(ctx, pipelineURL)
	if err != nil {
		t.Fatalf("pipeline %s was not staged: %v", pipelineURL, err)
	}
	checkPipelineEnvironment(t, pipeline)
	// The job has not run when its template is written: a summary then
	// would report zero counts.
	if ok, err := storage.Exists(ctx, "gs://"+dfBucket+"/out/summary.json"); err != nil || ok {
		t.Errorf("writing the template wrote gs://%s/out/summary.json before the job ran (%v)", dfBucket, err)
	}
}

// lastLines returns the last n lines of s, each cut to 500 bytes (the
// Dataflow runner logs the whole pipeline on one line).
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		if len(l) > 500 {
			lines[i] = l[:500] + " …"
		}
	}
	return strings.Join(lines, "\n")
}
