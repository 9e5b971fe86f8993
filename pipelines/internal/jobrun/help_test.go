package jobrun

import (
	"bytes"
	"flag"
	"strings"
	"testing"
)

func TestHelpListsJobFlagsBeforeRunnerFlags(t *testing.T) {
	fs := flag.NewFlagSet("job", flag.ContinueOnError)
	fs.String("staging_location", "", "GCS staging location (required).")
	fs.String("runner", "", "Pipeline runner.")
	fs.Float64("sample", 1, "Fraction of corpus sentences to label.")
	fs.Bool("verbose", false, "Log the runner's informational messages.")
	fs.String("environment_config", "", "Set environment configuration.\nFor DOCKER: Url for the docker image.")
	runner := map[string]bool{"staging_location": true, "runner": true, "environment_config": true}
	if err := fs.Parse([]string{"-sample=0.5"}); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	printUsage(&b, "  job: does things.\n", fs, func(n string) bool { return runner[n] })
	out := b.String()
	if !strings.HasPrefix(out, "job: does things.\n\nFlags:\n") {
		t.Errorf("help does not start with the usage and Flags:\n%s", out)
	}
	block := strings.Index(out, runnerHeading)
	if block < 0 {
		t.Fatalf("no runner block:\n%s", out)
	}
	for _, own := range []string{"-sample", "-verbose"} {
		i := strings.Index(out, "  "+own)
		if i < 0 || i > block {
			t.Errorf("%s is not listed before the runner block:\n%s", own, out)
		}
	}
	for _, beam := range []string{"-staging_location", "-runner", "-environment_config"} {
		i := strings.Index(out, "  "+beam)
		if i < block || strings.Count(out, "  "+beam+" ") != 1 {
			t.Errorf("%s is not listed once, in the runner block:\n%s", beam, out)
		}
	}
	// The default as registered, not the value parsed.
	if !strings.Contains(out, "(default 1)") {
		t.Errorf("-sample's default is not 1:\n%s", out)
	}
	// Runner flags take one line each.
	if strings.Contains(out, "For DOCKER") {
		t.Errorf("a runner flag's help runs over one line:\n%s", out)
	}
	// No runner flag is "required" on a local run: the help names the
	// runner that requires it.
	if strings.Contains(out, "(required)") || !strings.Contains(out, "GCS staging location (--runner=dataflow).") {
		t.Errorf("-staging_location's help does not name Dataflow:\n%s", out)
	}
}

func TestHelpWithoutRunnerFlags(t *testing.T) {
	fs := flag.NewFlagSet("job", flag.ContinueOnError)
	fs.Int("steps", 10, "Training steps.")
	var b bytes.Buffer
	printUsage(&b, "train", fs, func(string) bool { return false })
	if strings.Contains(b.String(), runnerHeading) || !strings.Contains(b.String(), "-steps") {
		t.Errorf("help of a job without Beam:\n%s", b.String())
	}
}

func TestSummary(t *testing.T) {
	if got := summary("One line.\nAnother.", 80); got != "One line." {
		t.Errorf("got %q", got)
	}
	long := strings.Repeat("word ", 40)
	if got := summary(long, 80); len(got) > 84 || !strings.HasSuffix(got, "...") {
		t.Errorf("got %q", got)
	}
}
