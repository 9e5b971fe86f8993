package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// repoRoot and deployDir are relative to this package's directory, where
// tests run.
const (
	repoRoot  = "../.."
	deployDir = repoRoot + "/deploy"
)

// jobFlags returns the flags a job binary accepts, its own and the Beam
// runners', as its -help prints them ("  -name type", and a runner flag
// with its help on the same line), mapped to their types ("" for
// booleans).
func jobFlags(t *testing.T, job string) map[string]string {
	t.Helper()
	bin := filepath.Join(binDir, job)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no %s binary to check against (%v): TestMain must build pipelines/%s", job, err, job)
	}
	out, err := exec.Command(bin, "-help").CombinedOutput()
	if err != nil {
		t.Fatalf("%s -help: %v\n%s", job, err, out)
	}
	flags := map[string]string{}
	for _, m := range helpFlagRE.FindAllStringSubmatch(string(out), -1) {
		flags[m[1]] = m[2]
	}
	if len(flags) == 0 {
		t.Fatalf("%s -help lists no flags:\n%s", job, out)
	}
	return flags
}

var helpFlagRE = regexp.MustCompile(`(?m)^  -([A-Za-z0-9_.-]+)(?: (\S+))?(?:  .*)?$`)

// exampleValue is a value of each flag type that a template parameter's
// regexes must accept.
var exampleValue = map[string]string{"": "true", "int": "8", "uint": "8", "float": "0.5", "string": ""}

// beamVersion returns the Beam SDK version the jobs are built with.
func beamVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(repoRoot + "/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*github\.com/apache/beam/sdks/v2 v(\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("go.mod does not require the Beam SDK")
	}
	return string(m[1])
}

// goMinor returns the Go version of go.mod as major.minor.
func goMinor(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(repoRoot + "/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("go.mod has no go directive")
	}
	return string(m[1])
}

// yamlDocs decodes every document of a YAML file.
func yamlDocs(t *testing.T, name string) []any {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var docs []any
	for {
		var doc any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		docs = append(docs, doc)
	}
	if len(docs) == 0 {
		t.Fatalf("%s: no YAML document", name)
	}
	return docs
}

// decodeYAML decodes a single-document YAML file into v, strictly.
func decodeYAML(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func decodeJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// TestDeployFilesParse parses every YAML and JSON file under deploy/ and
// checks the shell scripts' syntax.
func TestDeployFilesParse(t *testing.T) {
	seen := map[string]bool{}
	err := filepath.WalkDir(deployDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(deployDir, path)
		seen[filepath.ToSlash(rel)] = true
		switch filepath.Ext(path) {
		case ".yaml", ".yml":
			yamlDocs(t, path)
		case ".json":
			var v any
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if err := json.Unmarshal(b, &v); err != nil {
				t.Errorf("%s: %v", rel, err)
			}
		case ".sh":
			if out, err := exec.Command("bash", "-n", path).CombinedOutput(); err != nil {
				t.Errorf("%s: %v\n%s", rel, err, out)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{
		"README.md", "docker/Dockerfile", "docker/launch.sh",
		"dataflow/harvest-metadata.json",
		"flink/docker-compose.yaml",
		"scheduler/refresh-cronjob.yaml", "scheduler/refresh-cloudrun-job.yaml", "scheduler/cloud-scheduler-job.yaml",
	} {
		if !seen[f] {
			t.Errorf("deploy/%s is missing", f)
		}
	}
}

// dockerStage is one FROM of a Dockerfile and its instructions.
type dockerStage struct {
	name, from string
	lines      []string // instructions after FROM, continuation lines joined
}

// parseDockerfile returns the global ARG defaults and the stages, with
// ${ARG} references of FROM lines expanded.
func parseDockerfile(t *testing.T, name string) (map[string]string, []dockerStage) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	cur := ""
	for _, l := range strings.Split(string(b), "\n") {
		if s := strings.TrimSpace(l); strings.HasPrefix(s, "#") || (s == "" && cur == "") {
			continue
		}
		if strings.HasSuffix(l, `\`) {
			cur += strings.TrimSuffix(l, `\`) + " "
			continue
		}
		lines = append(lines, strings.TrimSpace(cur+l))
		cur = ""
	}
	args := map[string]string{}
	var stages []dockerStage
	for _, l := range lines {
		f := strings.Fields(l)
		switch {
		case strings.EqualFold(f[0], "ARG") && len(stages) == 0:
			k, v, _ := strings.Cut(f[1], "=")
			args[k] = v
		case strings.EqualFold(f[0], "FROM"):
			from := os.Expand(f[1], func(k string) string { return args[k] })
			st := dockerStage{from: from}
			if len(f) == 4 && strings.EqualFold(f[2], "AS") {
				st.name = f[3]
			}
			stages = append(stages, st)
		case len(stages) > 0:
			stages[len(stages)-1].lines = append(stages[len(stages)-1].lines, l)
		}
	}
	return args, stages
}

// pipelineJobs returns the jobs under pipelines/: the directories with a
// main.go.
func pipelineJobs(t *testing.T) []string {
	t.Helper()
	mains, err := filepath.Glob(repoRoot + "/pipelines/*/main.go")
	if err != nil {
		t.Fatal(err)
	}
	var jobs []string
	for _, m := range mains {
		jobs = append(jobs, filepath.Base(filepath.Dir(m)))
	}
	return jobs
}

// TestDeployDockerfile checks what can be checked of the images without
// Docker: the stages and the images they start from, that the build stage
// builds exactly the jobs under pipelines/ with cgo and OpenBLAS, that the
// worker is a Beam SDK harness of the jobs' Beam version with OpenBLAS, and
// that the launcher runs the Flex Template launcher on launch.sh.
func TestDeployDockerfile(t *testing.T) {
	args, stages := parseDockerfile(t, deployDir+"/docker/Dockerfile")
	byName := map[string]dockerStage{}
	for i, st := range stages {
		if base, ok := byName[st.from]; ok {
			st.lines = append(append([]string{}, base.lines...), st.lines...)
		} else if !strings.Contains(st.from, ":") && !strings.Contains(st.from, "/") {
			t.Errorf("stage %d starts from %q, neither an earlier stage nor a tagged image", i, st.from)
		}
		if st.name != "" {
			byName[st.name] = st
		}
		for _, l := range st.lines {
			if m := regexp.MustCompile(`^COPY\s+--from=(\S+)`).FindStringSubmatch(l); m != nil {
				if _, ok := byName[m[1]]; !ok || m[1] == st.name {
					t.Errorf("%q copies from %q, which is not an earlier stage", l, m[1])
				}
			} else if f := strings.Fields(l); f[0] == "COPY" && !strings.HasPrefix(f[1], "--") && f[1] != "." {
				for _, src := range f[1 : len(f)-1] {
					if _, err := os.Stat(filepath.Join(repoRoot, src)); err != nil {
						t.Errorf("%q: %v", l, err)
					}
				}
			}
		}
	}
	for _, name := range []string{"beam-sdk", "flex-launcher", "build", "worker", "launcher"} {
		if _, ok := byName[name]; !ok {
			t.Fatalf("no stage %q", name)
		}
	}
	text := func(name string) string { return strings.Join(byName[name].lines, "\n") }

	if want := "apache/beam_go_sdk:" + beamVersion(t); byName["beam-sdk"].from != want {
		t.Errorf("the SDK harness comes from %s, want %s (the jobs' Beam version)", byName["beam-sdk"].from, want)
	}
	debian := args["DEBIAN_RELEASE"]
	if want := "golang:" + goMinor(t) + "-" + debian; byName["build"].from != want {
		t.Errorf("build stage from %s, want %s (go.mod's Go on the worker's Debian)", byName["build"].from, want)
	}
	if want := "debian:" + debian + "-slim"; byName["worker"].from != want {
		t.Errorf("worker stage from %s, want %s", byName["worker"].from, want)
	}
	build := text("build")
	if !strings.Contains(build, "libopenblas-dev") || !strings.Contains(build, "CGO_ENABLED=1") ||
		!strings.Contains(build, "-tags openblas") {
		t.Error("the build stage must install libopenblas-dev and build with CGO_ENABLED=1 and -tags openblas")
	}
	built := map[string]bool{}
	for _, m := range regexp.MustCompile(`\./pipelines/([A-Za-z0-9_]+)`).FindAllStringSubmatch(build, -1) {
		built[m[1]] = true
	}
	jobs := map[string]bool{}
	for _, j := range pipelineJobs(t) {
		jobs[j] = true
		if !built[j] {
			t.Errorf("the image does not build pipelines/%s", j)
		}
	}
	for j := range built {
		if !jobs[j] {
			t.Errorf("the image builds pipelines/%s, which has no main.go", j)
		}
	}
	if !strings.Contains(build, "-o /opt/ctxsim/bin/") {
		t.Error("the jobs are not built into /opt/ctxsim/bin")
	}

	worker := text("worker")
	for _, want := range []string{"libopenblas0", "COPY --from=beam-sdk /opt/apache/beam /opt/apache/beam",
		"COPY --from=build /opt/ctxsim/bin /opt/ctxsim/bin", `ENTRYPOINT ["/opt/apache/beam/boot"]`} {
		if !strings.Contains(worker, want) {
			t.Errorf("worker stage lacks %q", want)
		}
	}
	if !strings.HasPrefix(byName["flex-launcher"].from, "gcr.io/dataflow-templates-base/go-template-launcher-base") {
		t.Errorf("flex-launcher stage from %s, want Google's Go launcher image", byName["flex-launcher"].from)
	}
	if byName["launcher"].from != "worker" {
		t.Errorf("launcher stage from %s: it must run the jobs' cgo binaries, so it must be the worker", byName["launcher"].from)
	}
	launcher := text("launcher")
	for _, want := range []string{
		"COPY --from=flex-launcher /opt/google/dataflow/go_template_launcher /opt/google/dataflow/go_template_launcher",
		"COPY deploy/docker/launch.sh /opt/ctxsim/launch.sh",
		"FLEX_TEMPLATE_GO_BINARY=/opt/ctxsim/launch.sh",
		`ENTRYPOINT ["/opt/google/dataflow/go_template_launcher"]`,
	} {
		if !strings.Contains(launcher, want) {
			t.Errorf("launcher stage lacks %q", want)
		}
	}
	// Docker reads the ignore file next to a Dockerfile given with -f.
	ignore, err := os.ReadFile(deployDir + "/docker/Dockerfile.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(ignore), "\n") {
		if l == "go.mod" || l == "go.sum" || strings.HasPrefix(l, "pipelines") || strings.HasPrefix(l, "deploy") {
			t.Errorf("Dockerfile.dockerignore drops %s, which the build needs", l)
		}
	}
}

// templateMetadata is a Flex Template metadata file.
type templateMetadata struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Parameters  []struct {
		Name       string   `json:"name"`
		Label      string   `json:"label"`
		HelpText   string   `json:"helpText"`
		IsOptional *bool    `json:"isOptional"`
		Regexes    []string `json:"regexes"`
	} `json:"parameters"`
}

// templateParams loads a job's template metadata, checks it against the
// job's flags and returns its parameters' regexes by name.
func templateParams(t *testing.T, job string) map[string][]*regexp.Regexp {
	t.Helper()
	var md templateMetadata
	decodeJSON(t, deployDir+"/dataflow/"+job+"-metadata.json", &md)
	flags := jobFlags(t, job)
	if md.Name == "" || md.Description == "" || len(md.Parameters) == 0 {
		t.Errorf("%s template: name %q, description %q, %d parameters", job, md.Name, md.Description, len(md.Parameters))
	}
	params := map[string][]*regexp.Regexp{}
	var required []string
	for _, p := range md.Parameters {
		typ, ok := flags[p.Name]
		if !ok {
			t.Errorf("%s template parameter %q is not a flag of %s", job, p.Name, job)
			typ = "string"
		}
		if _, dup := params[p.Name]; dup {
			t.Errorf("%s template parameter %q is declared twice", job, p.Name)
		}
		if p.Label == "" || p.HelpText == "" || p.IsOptional == nil {
			t.Errorf("%s template parameter %q needs label, helpText and isOptional", job, p.Name)
		}
		if p.IsOptional != nil && !*p.IsOptional {
			required = append(required, p.Name)
		}
		var res []*regexp.Regexp
		for _, r := range p.Regexes {
			re, err := regexp.Compile(r)
			if err != nil {
				t.Errorf("%s template parameter %q: %v", job, p.Name, err)
				continue
			}
			if v := exampleValue[typ]; v != "" && !re.MatchString(v) {
				t.Errorf("%s template parameter %q (%q flag): regex %q refuses %q", job, p.Name, typ, r, v)
			}
			res = append(res, re)
		}
		params[p.Name] = res
	}
	sort.Strings(required)
	if want := requiredFlags[job]; !reflect.DeepEqual(required, want) {
		t.Errorf("%s template requires %v, want the job's required flags %v", job, required, want)
	}
	return params
}

// requiredFlags are the flags each job cannot run without, sorted.
var requiredFlags = map[string][]string{
	"harvest": {"model", "output"},
	"refresh": {"input", "model", "root"},
}

// checkParamValue checks a template parameter's value against its regexes,
// with shell variables replaced by a plain word.
func checkParamValue(t *testing.T, where string, params map[string][]*regexp.Regexp, name, value string) {
	t.Helper()
	res, ok := params[name]
	if !ok {
		t.Errorf("%s: %q is not a parameter of the template", where, name)
		return
	}
	v := shellVarRE.ReplaceAllString(value, "x")
	for _, re := range res {
		if !re.MatchString(v) {
			t.Errorf("%s: %s=%q does not match the template's regex %q", where, name, value, re)
		}
	}
}

var shellVarRE = regexp.MustCompile(`\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*|\([^)]*\))`)

// driverJobs are the jobs that run several Beam jobs and work between them
// (refresh: ingest, the index update in the driver, harvest, the commit of
// CURRENT.json). A Flex Template launch captures one job and does not wait
// for it, so these are scheduled as processes (deploy/scheduler) and have
// no template.
var driverJobs = map[string]bool{"refresh": true}

// TestDeployFlexTemplates checks every template's metadata against its
// job's flags, and that no driver job has a template.
func TestDeployFlexTemplates(t *testing.T) {
	files, err := filepath.Glob(deployDir + "/dataflow/*-metadata.json")
	if err != nil {
		t.Fatal(err)
	}
	jobs := map[string]bool{}
	for _, f := range files {
		job := strings.TrimSuffix(filepath.Base(f), "-metadata.json")
		jobs[job] = true
		if driverJobs[job] {
			t.Errorf("%s: %s runs several Dataflow jobs and commits between them, so a Flex Template launch cannot run it; schedule the driver (deploy/scheduler)", f, job)
			continue
		}
		t.Run(job, func(t *testing.T) { templateParams(t, job) })
	}
	if !jobs["harvest"] {
		t.Error("no harvest template metadata")
	}
}

// podContainer is the part of a container, of a Kubernetes pod or a Cloud
// Run task, checked here.
type podContainer struct {
	Name    string   `yaml:"name"`
	Image   string   `yaml:"image"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	} `yaml:"env"`
	Resources struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

// cronJob is the part of a Kubernetes CronJob checked here.
type cronJob struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		Schedule          string `yaml:"schedule"`
		TimeZone          string `yaml:"timeZone"`
		ConcurrencyPolicy string `yaml:"concurrencyPolicy"`
		JobTemplate       struct {
			Spec struct {
				Template struct {
					Spec struct {
						ServiceAccountName string         `yaml:"serviceAccountName"`
						RestartPolicy      string         `yaml:"restartPolicy"`
						Containers         []podContainer `yaml:"containers"`
					} `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"spec"`
		} `yaml:"jobTemplate"`
	} `yaml:"spec"`
}

const (
	cronJobFile    = deployDir + "/scheduler/refresh-cronjob.yaml"
	cloudRunFile   = deployDir + "/scheduler/refresh-cloudrun-job.yaml"
	schedulerFile  = deployDir + "/scheduler/cloud-scheduler-job.yaml"
	refreshCommand = "/opt/ctxsim/bin/refresh"
)

// loadCronJob returns the CronJob of refresh-cronjob.yaml and the names of
// the ServiceAccounts the file defines.
func loadCronJob(t *testing.T) (cronJob, map[string]bool) {
	t.Helper()
	var cj cronJob
	accounts := map[string]bool{}
	for _, doc := range yamlDocs(t, cronJobFile) {
		b, _ := yaml.Marshal(doc)
		var head struct {
			Kind     string
			Metadata struct{ Name string }
		}
		yaml.Unmarshal(b, &head)
		switch head.Kind {
		case "CronJob":
			if cj.Kind != "" {
				t.Fatal("two CronJobs")
			}
			if err := yaml.Unmarshal(b, &cj); err != nil {
				t.Fatal(err)
			}
		case "ServiceAccount":
			accounts[head.Metadata.Name] = true
		}
	}
	if cj.Kind != "CronJob" || cj.APIVersion != "batch/v1" {
		t.Fatalf("no batch/v1 CronJob in %s", cronJobFile)
	}
	if n := len(cj.Spec.JobTemplate.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("the CronJob has %d containers, want 1", n)
	}
	return cj, accounts
}

var argRE = regexp.MustCompile(`^--([a-z0-9_]+)=(.*)$`)

// refreshArgs checks a container that runs the refresh driver: its command
// is the worker image's refresh binary, and its arguments are --flag=value
// flags refresh accepts, each once, the required ones among them. It
// returns the arguments by flag.
func refreshArgs(t *testing.T, where string, c podContainer) map[string]string {
	t.Helper()
	if !reflect.DeepEqual(c.Command, []string{refreshCommand}) {
		t.Errorf("%s: command %q, want the worker image's refresh binary %s", where, c.Command, refreshCommand)
	}
	if !strings.Contains(c.Image, "/worker") {
		t.Errorf("%s: image %q is not the worker image", where, c.Image)
	}
	given := map[string]string{}
	for _, a := range c.Args {
		m := argRE.FindStringSubmatch(a)
		if m == nil {
			t.Errorf("%s: argument %q is not --flag=value", where, a)
			continue
		}
		if _, dup := given[m[1]]; dup {
			t.Errorf("%s: --%s given twice", where, m[1])
		}
		given[m[1]] = m[2]
	}
	flags := jobFlags(t, "refresh")
	for name, v := range given {
		if _, ok := flags[name]; !ok {
			t.Errorf("%s: argument --%s=%s: refresh has no flag --%s", where, name, v, name)
		}
	}
	for _, f := range requiredFlags["refresh"] {
		if given[f] == "" {
			t.Errorf("%s does not give --%s", where, f)
		}
	}
	return given
}

// checkWorkDir checks that --work_dir, when given, is a mounted volume.
func checkWorkDir(t *testing.T, where string, given map[string]string, c podContainer) {
	t.Helper()
	wd, ok := given["work_dir"]
	if !ok {
		return
	}
	for _, v := range c.VolumeMounts {
		if v.MountPath == wd {
			return
		}
	}
	t.Errorf("%s: --work_dir=%s is not a mounted volume", where, wd)
}

// TestDeployCronJob checks the Kubernetes CronJob: it runs the refresh
// binary of the worker image with flags refresh knows, and never two at once.
func TestDeployCronJob(t *testing.T) {
	cj, accounts := loadCronJob(t)
	if cj.Spec.ConcurrencyPolicy != "Forbid" {
		t.Errorf("concurrencyPolicy %q: two refreshes could overlap; want Forbid", cj.Spec.ConcurrencyPolicy)
	}
	if f := strings.Fields(cj.Spec.Schedule); len(f) != 5 {
		t.Errorf("schedule %q is not a five-field cron expression", cj.Spec.Schedule)
	}
	pod := cj.Spec.JobTemplate.Spec.Template.Spec
	if pod.RestartPolicy != "Never" && pod.RestartPolicy != "OnFailure" {
		t.Errorf("restartPolicy %q", pod.RestartPolicy)
	}
	if sa := pod.ServiceAccountName; sa != "" && !accounts[sa] {
		t.Errorf("serviceAccountName %q is not defined in %s", sa, cronJobFile)
	}
	c := pod.Containers[0]
	given := refreshArgs(t, "the CronJob", c)
	checkWorkDir(t, "the CronJob", given, c)
}

// cloudRunJob is a Cloud Run job as `gcloud run jobs replace` reads it (the
// Admin API v1 Job). It is decoded strictly: a field this type lacks is
// either one to add here or one in the wrong place, which Cloud Run would
// refuse or ignore.
type cloudRunJob struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name        string            `yaml:"name"`
		Labels      map[string]string `yaml:"labels"`
		Annotations map[string]string `yaml:"annotations"`
	} `yaml:"metadata"`
	Spec struct {
		Template struct { // the execution template
			Metadata struct {
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"metadata"`
			Spec struct {
				TaskCount   int      `yaml:"taskCount"`
				Parallelism int      `yaml:"parallelism"`
				Template    struct { // the task template
					Spec struct {
						ServiceAccountName string         `yaml:"serviceAccountName"`
						TimeoutSeconds     int            `yaml:"timeoutSeconds"`
						MaxRetries         *int           `yaml:"maxRetries"`
						Containers         []podContainer `yaml:"containers"`
						Volumes            []struct {
							Name     string `yaml:"name"`
							EmptyDir *struct {
								Medium    string `yaml:"medium"`
								SizeLimit string `yaml:"sizeLimit"`
							} `yaml:"emptyDir"`
						} `yaml:"volumes"`
					} `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// decodeYAMLStrict decodes a single-document YAML file into v, refusing
// fields v does not have.
func decodeYAMLStrict(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// loadCloudRunJob returns the Cloud Run job and its one container.
func loadCloudRunJob(t *testing.T) (cloudRunJob, podContainer) {
	t.Helper()
	var j cloudRunJob
	decodeYAMLStrict(t, cloudRunFile, &j)
	if j.APIVersion != "run.googleapis.com/v1" || j.Kind != "Job" {
		t.Fatalf("%s is %s %s, want a run.googleapis.com/v1 Job", cloudRunFile, j.APIVersion, j.Kind)
	}
	cs := j.Spec.Template.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("the Cloud Run job has %d containers, want 1", len(cs))
	}
	return j, cs[0]
}

// quantityBytes parses a Kubernetes memory quantity with a binary suffix.
func quantityBytes(q string) (int64, bool) {
	for i, suffix := range []string{"Ki", "Mi", "Gi", "Ti"} {
		if n, ok := strings.CutSuffix(q, suffix); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			return v << (10 * (i + 1)), err == nil
		}
	}
	v, err := strconv.ParseInt(q, 10, 64)
	return v, err == nil
}

// TestDeployCloudRunJob checks the Cloud Run job that runs the refresh
// driver on Dataflow: one task running the refresh binary of the worker
// image with the CronJob's refresh flags plus the Dataflow runner's, whose
// workers run that same binary in that same image, and a --work_dir volume
// that fits in the task's memory.
func TestDeployCloudRunJob(t *testing.T) {
	j, c := loadCloudRunJob(t)
	const where = "the Cloud Run job"
	if j.Metadata.Name == "" || j.Metadata.Labels["cloud.googleapis.com/location"] == "" {
		t.Errorf("the Cloud Run job needs a name and a cloud.googleapis.com/location label: %+v", j.Metadata)
	}
	es := j.Spec.Template.Spec
	if es.TaskCount != 1 || es.Parallelism > 1 {
		t.Errorf("taskCount %d, parallelism %d: the driver is one task", es.TaskCount, es.Parallelism)
	}
	ts := es.Template.Spec
	// Cloud Run retries a failed task 3 times unless told otherwise.
	if ts.MaxRetries == nil {
		t.Error("maxRetries is not set (Cloud Run's default is 3 retries, each with the full timeout)")
	}
	if ts.TimeoutSeconds <= 0 || ts.TimeoutSeconds > 168*3600 {
		t.Errorf("timeoutSeconds %d: Cloud Run's default of 10 minutes is too short for a refresh, and 168 hours is its most", ts.TimeoutSeconds)
	}
	if !strings.HasSuffix(ts.ServiceAccountName, ".iam.gserviceaccount.com") {
		t.Errorf("serviceAccountName %q is not a service account's email", ts.ServiceAccountName)
	}

	given := refreshArgs(t, where, c)
	if given["runner"] != "dataflow" {
		t.Errorf("--runner=%q: the Cloud Run job drives the refresh on Dataflow", given["runner"])
	}
	for _, f := range []string{"project", "region"} {
		if given[f] == "" {
			t.Errorf("the Cloud Run job does not give --%s, which Dataflow needs", f)
		}
	}
	// Dataflow workers read and write only shared storage.
	for _, f := range []string{"temp_location", "staging_location", "input", "root", "model"} {
		if !strings.HasPrefix(given[f], "gs://") {
			t.Errorf("--%s=%q is not on GCS, where the Dataflow workers can reach it", f, given[f])
		}
	}
	// Beam Go workers run the binary of the pipeline they execute: the
	// driver's own, built with cgo against the worker image's libraries.
	if given["worker_binary"] != c.Command[0] {
		t.Errorf("--worker_binary=%q, want the driver's binary %s", given["worker_binary"], c.Command[0])
	}
	if given["sdk_container_image"] != c.Image {
		t.Errorf("--sdk_container_image=%q, want the task's image %s, which the worker binary is built for", given["sdk_container_image"], c.Image)
	}

	// The same refresh as the CronJob's, on another runner.
	cj, _ := loadCronJob(t)
	cc := cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0]
	if cc.Image != c.Image {
		t.Errorf("the Cloud Run job runs %s, the CronJob %s", c.Image, cc.Image)
	}
	for _, a := range cc.Args {
		if m := argRE.FindStringSubmatch(a); m != nil {
			if v, ok := given[m[1]]; !ok || v != m[2] {
				t.Errorf("the CronJob gives --%s=%s, the Cloud Run job %q", m[1], m[2], v)
			}
		}
	}

	checkWorkDir(t, where, given, c)
	memory, ok := quantityBytes(c.Resources.Limits["memory"])
	if !ok || c.Resources.Limits["cpu"] == "" {
		t.Errorf("resources.limits %v: give cpu and memory (the default 512Mi cannot hold the driver)", c.Resources.Limits)
	}
	volumes := map[string]bool{}
	for _, v := range ts.Volumes {
		volumes[v.Name] = true
		if v.EmptyDir == nil {
			continue
		}
		size, ok := quantityBytes(v.EmptyDir.SizeLimit)
		if v.EmptyDir.Medium != "Memory" || !ok || size >= memory {
			t.Errorf("volume %s: an emptyDir on Cloud Run is medium Memory and its sizeLimit (%q) must leave the driver part of the task's memory (%q)",
				v.Name, v.EmptyDir.SizeLimit, c.Resources.Limits["memory"])
		}
	}
	for _, m := range c.VolumeMounts {
		if !volumes[m.Name] {
			t.Errorf("volume mount %s: no volume %s", m.MountPath, m.Name)
		}
	}
	for _, e := range c.Env {
		if e.Name == "CTXSIM_CACHE_DIR" && given["work_dir"] != "" && !strings.HasPrefix(e.Value, given["work_dir"]+"/") {
			t.Errorf("CTXSIM_CACHE_DIR=%s is outside --work_dir=%s", e.Value, given["work_dir"])
		}
	}
}

// schedulerJob is a Cloud Scheduler job (the API's Job resource), decoded
// strictly.
type schedulerJob struct {
	Name            string `yaml:"name"`
	Description     string `yaml:"description"`
	Schedule        string `yaml:"schedule"`
	TimeZone        string `yaml:"timeZone"`
	AttemptDeadline string `yaml:"attemptDeadline"`
	RetryConfig     struct {
		RetryCount int `yaml:"retryCount"`
	} `yaml:"retryConfig"`
	HTTPTarget struct {
		URI        string            `yaml:"uri"`
		HTTPMethod string            `yaml:"httpMethod"`
		Headers    map[string]string `yaml:"headers"`
		Body       string            `yaml:"body"`
		OAuthToken struct {
			ServiceAccountEmail string `yaml:"serviceAccountEmail"`
			Scope               string `yaml:"scope"`
		} `yaml:"oauthToken"`
	} `yaml:"httpTarget"`
}

var (
	runJobURIRE      = regexp.MustCompile(`^https://run\.googleapis\.com/v2/projects/([^/]+)/locations/([^/]+)/jobs/([^/:]+):run$`)
	schedulerJobRE   = regexp.MustCompile(`^projects/([^/]+)/locations/([^/]+)/jobs/([^/]+)$`)
	cloudPlatformURL = "https://www.googleapis.com/auth/cloud-platform"
)

// cronInterval returns the seconds between the runs of a daily or hourly
// cron schedule.
func cronInterval(schedule string) (int, bool) {
	f := strings.Fields(schedule)
	num := regexp.MustCompile(`^[0-9]+$`)
	if len(f) != 5 || !num.MatchString(f[0]) || f[2] != "*" || f[3] != "*" || f[4] != "*" {
		return 0, false
	}
	switch {
	case num.MatchString(f[1]):
		return 24 * 3600, true
	case f[1] == "*":
		return 3600, true
	}
	return 0, false
}

// TestDeployCloudScheduler checks the Cloud Scheduler job: it runs the Cloud
// Run job of refresh-cloudrun-job.yaml (the Admin API's jobs.run, with an
// OAuth token), on the CronJob's schedule, and a run ends before the next
// one starts, since Cloud Run would start the next one regardless.
func TestDeployCloudScheduler(t *testing.T) {
	var sj schedulerJob
	decodeYAMLStrict(t, schedulerFile, &sj)
	h := sj.HTTPTarget
	m := runJobURIRE.FindStringSubmatch(h.URI)
	if m == nil || h.HTTPMethod != "POST" {
		t.Fatalf("target %s %s, want a POST to https://run.googleapis.com/v2/projects/P/locations/L/jobs/J:run", h.HTTPMethod, h.URI)
	}
	project, location, job := m[1], m[2], m[3]
	if h.OAuthToken.ServiceAccountEmail == "" || h.OAuthToken.Scope != cloudPlatformURL {
		t.Errorf("oauthToken %+v: a Google API needs an OAuth token with scope %s", h.OAuthToken, cloudPlatformURL)
	}
	if h.Body != "" {
		body, err := base64.StdEncoding.DecodeString(h.Body)
		var v any
		if err == nil {
			err = json.Unmarshal(body, &v)
		}
		if err != nil {
			t.Errorf("httpTarget.body is not base64 JSON: %v", err)
		}
	}
	if n := schedulerJobRE.FindStringSubmatch(sj.Name); n == nil || n[1] != project {
		t.Errorf("scheduler job %q is not a job of the project %s it runs the Cloud Run job in", sj.Name, project)
	}

	crj, c := loadCloudRunJob(t)
	if job != crj.Metadata.Name {
		t.Errorf("the scheduler runs Cloud Run job %q, %s defines %q", job, cloudRunFile, crj.Metadata.Name)
	}
	if loc := crj.Metadata.Labels["cloud.googleapis.com/location"]; location != loc {
		t.Errorf("the scheduler runs the Cloud Run job in %q, which is in %q", location, loc)
	}
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--project="); ok && v != project {
			t.Errorf("the scheduler runs the Cloud Run job in project %q, which submits to Dataflow in %q", project, v)
		}
	}

	cj, _ := loadCronJob(t)
	if sj.Schedule != cj.Spec.Schedule || sj.TimeZone != cj.Spec.TimeZone {
		t.Errorf("Cloud Scheduler runs at %q %s, the CronJob at %q %s", sj.Schedule, sj.TimeZone, cj.Spec.Schedule, cj.Spec.TimeZone)
	}
	interval, ok := cronInterval(sj.Schedule)
	if !ok {
		t.Fatalf("cannot tell the interval of schedule %q (daily or hourly expected)", sj.Schedule)
	}
	ts := crj.Spec.Template.Spec.Template.Spec
	retries := 3
	if ts.MaxRetries != nil {
		retries = *ts.MaxRetries
	}
	if worst := ts.TimeoutSeconds * (retries + 1); worst >= interval {
		t.Errorf("a run may last %ds (timeout %ds, %d retries), not less than the %ds between runs: two refreshes could overlap",
			worst, ts.TimeoutSeconds, retries, interval)
	}
}

// checkSchedulerCommand checks that the README's gcloud scheduler jobs
// create http command (words) creates the job of cloud-scheduler-job.yaml,
// with the README's shell variables standing for the file's placeholders.
func checkSchedulerCommand(t *testing.T, words []string) {
	t.Helper()
	var sj schedulerJob
	decodeYAMLStrict(t, schedulerFile, &sj)
	n := schedulerJobRE.FindStringSubmatch(sj.Name)
	if n == nil {
		t.Fatalf("scheduler job name %q", sj.Name)
	}
	placeholders := strings.NewReplacer("$PROJECT", "PROJECT", "${PROJECT}", "PROJECT", "$REGION", "REGION", "${REGION}", "REGION")
	got := map[string]string{}
	for _, w := range words[6:] {
		if k, v, ok := strings.Cut(w, "="); ok && strings.HasPrefix(k, "--") {
			got[k] = placeholders.Replace(v)
		}
	}
	want := map[string]string{
		"--location":                    n[2],
		"--schedule":                    sj.Schedule,
		"--time-zone":                   sj.TimeZone,
		"--uri":                         sj.HTTPTarget.URI,
		"--http-method":                 sj.HTTPTarget.HTTPMethod,
		"--oauth-service-account-email": sj.HTTPTarget.OAuthToken.ServiceAccountEmail,
		"--oauth-token-scope":           sj.HTTPTarget.OAuthToken.Scope,
		"--attempt-deadline":            sj.AttemptDeadline,
		"--max-retry-attempts":          strconv.Itoa(sj.RetryConfig.RetryCount),
	}
	if words[5] != n[3] {
		t.Errorf("README creates scheduler job %s, %s is %s", words[5], schedulerFile, n[3])
	}
	for k, v := range want {
		if !strings.EqualFold(got[k], v) {
			t.Errorf("README: gcloud scheduler jobs create http %s=%q, but %s has %q", k, got[k], schedulerFile, v)
		}
	}
}

// composeFile is the part of a Compose file checked here.
type composeFile struct {
	Services map[string]struct {
		Image       string   `yaml:"image"`
		Command     any      `yaml:"command"`
		Ports       []string `yaml:"ports"`
		NetworkMode string   `yaml:"network_mode"`
		Volumes     []string `yaml:"volumes"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

// composeVarRE matches Compose's ${NAME:-default} and ${NAME}.
var composeVarRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)

// TestDeployFlinkCompose checks the Flink recipe: a job manager, a task
// manager with an SDK worker pool beside it, and Beam's Flink job server for
// the same Flink version and the jobs' Beam version, pointed at the job
// manager and publishing the job, artifact and expansion ports.
func TestDeployFlinkCompose(t *testing.T) {
	b, err := os.ReadFile(deployDir + "/flink/docker-compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Interpolate with the defaults, as Compose does with no variables set.
	b = composeVarRE.ReplaceAllFunc(b, func(m []byte) []byte { return composeVarRE.FindSubmatch(m)[2] })
	var c composeFile
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"jobmanager", "taskmanager", "worker-pool", "job-server"} {
		if _, ok := c.Services[s]; !ok {
			t.Fatalf("no %s service", s)
		}
	}
	flinkRE := regexp.MustCompile(`^flink:(\d+\.\d+)`)
	jm, tm := flinkRE.FindStringSubmatch(c.Services["jobmanager"].Image), flinkRE.FindStringSubmatch(c.Services["taskmanager"].Image)
	if jm == nil || tm == nil || jm[1] != tm[1] {
		t.Fatalf("job manager %q and task manager %q are not one Flink version", c.Services["jobmanager"].Image, c.Services["taskmanager"].Image)
	}
	js := c.Services["job-server"]
	if want := "apache/beam_flink" + jm[1] + "_job_server:" + beamVersion(t); js.Image != want {
		t.Errorf("job server %s, want %s (the cluster's Flink and the jobs' Beam version)", js.Image, want)
	}
	args := commandArgs(js.Command)
	for _, want := range []string{"--flink-master=jobmanager:8081", "--job-port=8099", "--artifact-port=8098", "--expansion-port=8097"} {
		if !contains(args, want) {
			t.Errorf("job server command %q lacks %s", args, want)
		}
	}
	for _, p := range []string{"8099", "8098", "8097"} {
		if !contains(js.Ports, p+":"+p) {
			t.Errorf("job server does not publish port %s: %v", p, js.Ports)
		}
	}
	// The artifacts the job server stages are read by the task manager.
	dir := ""
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--artifacts-dir="); ok {
			dir = v
		}
	}
	shared := func(svc string) bool {
		for _, v := range c.Services[svc].Volumes {
			if src, dst, _ := strings.Cut(v, ":"); dst == dir && c.Volumes != nil {
				if _, named := c.Volumes[src]; named {
					return true
				}
			}
		}
		return false
	}
	if dir == "" || !shared("job-server") || !shared("taskmanager") {
		t.Errorf("the job server's --artifacts-dir %q is not a volume shared with the task manager", dir)
	}
	wp := c.Services["worker-pool"]
	if !contains(commandArgs(wp.Command), "--worker_pool") || wp.NetworkMode != "service:taskmanager" {
		t.Errorf("worker pool %+v must run --worker_pool in the task manager's network namespace", wp)
	}
}

func commandArgs(cmd any) []string {
	switch c := cmd.(type) {
	case string:
		return strings.Fields(c)
	case []any:
		var out []string
		for _, a := range c {
			if s, ok := a.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// shellBlocks returns the ```sh blocks of a Markdown file.
func shellBlocks(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, m := range regexp.MustCompile("(?ms)^```sh\n(.*?)^```").FindAllStringSubmatch(string(b), -1) {
		blocks = append(blocks, m[1])
	}
	return blocks
}

// shellCommands splits a shell script into simple commands (at newlines,
// ;, &, | and their doubles) and those into words, with quotes removed.
// Comments are dropped and $(...) stays inside its word.
func shellCommands(script string) [][]string {
	var cmds [][]string
	var words []string
	var word strings.Builder
	inWord := false
	endWord := func() {
		if inWord {
			words = append(words, word.String())
			word.Reset()
			inWord = false
		}
	}
	endCmd := func() {
		endWord()
		if len(words) > 0 {
			cmds = append(cmds, words)
			words = nil
		}
	}
	s := []rune(script)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && s[i+1] == '\n':
			i++
			endWord()
		case c == '\\' && i+1 < len(s):
			i++
			word.WriteRune(s[i])
			inWord = true
		case c == '\'':
			j := i + 1
			for j < len(s) && s[j] != '\'' {
				j++
			}
			word.WriteString(string(s[i+1 : min(j, len(s))]))
			inWord, i = true, j
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			word.WriteString(string(s[i+1 : min(j, len(s))]))
			inWord, i = true, j
		case c == '$' && i+1 < len(s) && s[i+1] == '(':
			depth, j := 0, i+1
			for ; j < len(s); j++ {
				if s[j] == '(' {
					depth++
				} else if s[j] == ')' {
					if depth--; depth == 0 {
						break
					}
				}
			}
			word.WriteString(string(s[i:min(j+1, len(s))]))
			inWord, i = true, j
		case c == '#' && !inWord:
			for i < len(s) && s[i] != '\n' {
				i++
			}
			endCmd()
		case c == '\n' || c == ';' || c == '&' || c == '|':
			endCmd()
		case c == ' ' || c == '\t':
			endWord()
		default:
			word.WriteRune(c)
			inWord = true
		}
	}
	endCmd()
	return cmds
}

var (
	assignmentRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	jobCmdRE     = regexp.MustCompile(`^(?:\./|/opt/ctxsim/)?bin/([a-z]+)$`)
	templateRE   = regexp.MustCompile(`/templates/([a-z]+)\.json$`)
	deployPathRE = regexp.MustCompile(`\bdeploy/[A-Za-z0-9_./-]*[A-Za-z0-9_]`)
)

// TestDeployREADME checks the commands of deploy/README.md: every block is
// valid shell, every bin/<job> command uses only flags the job (or its Beam
// runners) accepts, every template launch passes parameters the template
// declares with values its regexes accept, every deploy/ file named exists,
// and each recipe's command is there.
func TestDeployREADME(t *testing.T) {
	readme := deployDir + "/README.md"
	blocks := shellBlocks(t, readme)
	if len(blocks) == 0 {
		t.Fatal("no ```sh blocks")
	}
	flagsOf := map[string]map[string]string{}
	var all []string
	for i, block := range blocks {
		if out, err := exec.Command("bash", "-n", "-c", block).CombinedOutput(); err != nil {
			t.Errorf("block %d is not valid shell: %v\n%s\n%s", i+1, err, out, block)
		}
		for _, p := range deployPathRE.FindAllString(block, -1) {
			if _, err := os.Stat(filepath.Join(repoRoot, p)); err != nil {
				t.Errorf("README names %s: %v", p, err)
			}
		}
		for _, words := range shellCommands(block) {
			for len(words) > 0 && assignmentRE.MatchString(words[0]) {
				words = words[1:]
			}
			if len(words) == 0 {
				continue
			}
			all = append(all, strings.Join(words, " "))
			if m := jobCmdRE.FindStringSubmatch(words[0]); m != nil {
				job := m[1]
				if flagsOf[job] == nil {
					flagsOf[job] = jobFlags(t, job)
				}
				for _, w := range words[1:] {
					if !strings.HasPrefix(w, "-") {
						continue
					}
					name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
					if _, ok := flagsOf[job][name]; !ok {
						t.Errorf("bin/%s has no flag -%s: %s", job, name, strings.Join(words, " "))
					}
				}
			}
			if len(words) > 3 && strings.Join(words[:4], " ") == "gcloud dataflow flex-template run" {
				t.Run("template run", func(t *testing.T) { checkTemplateRun(t, words) })
			}
			if len(words) > 4 && strings.Join(words[:4], " ") == "gcloud scheduler jobs create" && words[4] == "http" {
				t.Run("scheduler job", func(t *testing.T) { checkSchedulerCommand(t, words) })
			}
			if len(words) > 3 && strings.Join(words[:4], " ") == "gcloud dataflow flex-template build" {
				m := templateRE.FindStringSubmatch(words[4])
				if m == nil || !contains(words, "--metadata-file=deploy/dataflow/"+m[1]+"-metadata.json") ||
					!contains(words, "--sdk-language=GO") {
					t.Errorf("template build must use <job>.json, --sdk-language=GO and the job's metadata: %s", strings.Join(words, " "))
				}
			}
		}
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`^docker build -f deploy/docker/Dockerfile --target worker `),
		regexp.MustCompile(`^docker build -f deploy/docker/Dockerfile --target launcher `),
		regexp.MustCompile(`^bin/harvest --runner=dataflow --dry_run --verbose `),
		regexp.MustCompile(`^bin/harvest --runner=dataflow .*--sdk_container_image=\S+ --worker_binary=\S+`),
		regexp.MustCompile(`^bin/index --runner=dataflow .*--sdk_container_image=\S+ --worker_binary=\S+`),
		regexp.MustCompile(`^bin/refresh --runner=dataflow .*--sdk_container_image=\S+ --worker_binary=\S+`),
		regexp.MustCompile(`^gcloud dataflow flex-template build \S+/harvest\.json `),
		regexp.MustCompile(`^gcloud dataflow flex-template run .*/harvest\.json`),
		regexp.MustCompile(`^docker compose -f deploy/flink/docker-compose\.yaml up`),
		regexp.MustCompile(`^bin/harvest --runner=universal --endpoint=localhost:8099 --environment_type=EXTERNAL --environment_config=localhost:50000 `),
		regexp.MustCompile(`^bin/harvest --runner=universal --endpoint=localhost:8099 --environment_type=DOCKER --environment_config=\S+ `),
		regexp.MustCompile(`^bin/harvest --runner=universal --endpoint=localhost:8099 --environment_type=LOOPBACK `),
		regexp.MustCompile(`^kubectl apply -f deploy/scheduler/refresh-cronjob\.yaml$`),
		regexp.MustCompile(`^gcloud run jobs replace deploy/scheduler/refresh-cloudrun-job\.yaml --region=\S+$`),
		regexp.MustCompile(`^gcloud run jobs add-iam-policy-binding ctxsim-refresh .*--role=roles/run\.invoker`),
		regexp.MustCompile(`^gcloud scheduler jobs create http ctxsim-refresh .*--uri=https://run\.googleapis\.com/v2/projects/\S+/locations/\S+/jobs/ctxsim-refresh:run .*--http-method=POST .*--oauth-service-account-email=\S+`),
	} {
		found := false
		for _, c := range all {
			found = found || want.MatchString(c)
		}
		if !found {
			t.Errorf("README has no command matching %s", want)
		}
	}
}

// checkTemplateRun checks a gcloud dataflow flex-template run command's
// parameters against the metadata of the template it launches.
func checkTemplateRun(t *testing.T, words []string) {
	t.Helper()
	var job, list string
	for _, w := range words {
		if v, ok := strings.CutPrefix(w, "--template-file-gcs-location="); ok {
			if m := templateRE.FindStringSubmatch(v); m != nil {
				job = m[1]
			}
		}
		if v, ok := strings.CutPrefix(w, "--parameters="); ok {
			list = v
		}
	}
	if job == "" || list == "" {
		t.Errorf("template run without a <job>.json template or --parameters: %s", strings.Join(words, " "))
		return
	}
	params := templateParams(t, job)
	sep := ","
	if len(list) > 2 && list[0] == '^' {
		if i := strings.IndexByte(list[1:], '^'); i > 0 {
			sep, list = list[1:i+1], list[i+2:]
		}
	}
	given := map[string]bool{}
	for _, kv := range strings.Split(list, sep) {
		k, v, _ := strings.Cut(kv, "=")
		checkParamValue(t, "flex-template run "+job, params, k, v)
		given[k] = true
	}
	for _, f := range requiredFlags[job] {
		if !given[f] {
			t.Errorf("flex-template run %s does not give the required parameter %s", job, f)
		}
	}
}
