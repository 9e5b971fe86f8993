package repocheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var (
	// An environment variable a bench script reads: ${NAME:-...},
	// ${NAME:+...} or ${NAME-...}.
	knobRead = regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]*)(:-|:\+|-)`)
	// The script's call of bench/knobs.sh's bench_knobs.
	knobsCall = regexp.MustCompile(`(?m)^\s*bench_knobs((?: [A-Z][A-Z0-9_]*)+)`)
)

// TestBenchHeadersRecordTheirKnobs checks that every bench script that
// writes a header into bench/results.txt prints, through bench_knobs,
// every environment variable it reads, so that each block can be rerun
// from its record.
func TestBenchHeadersRecordTheirKnobs(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join("..", "..", "bench", "*.sh"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no bench scripts: %v", err)
	}
	checked := 0
	for _, p := range scripts {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		if filepath.Base(p) == "knobs.sh" || !strings.Contains(src, `"== `) {
			continue // no header of its own
		}
		checked++
		call := knobsCall.FindStringSubmatch(src)
		if call == nil {
			t.Errorf("%s writes a header without bench_knobs", p)
			continue
		}
		listed := map[string]bool{}
		for _, k := range strings.Fields(call[1]) {
			listed[k] = true
		}
		var missing []string
		for _, m := range knobRead.FindAllStringSubmatch(src, -1) {
			if !listed[m[1]] {
				listed[m[1]] = true
				missing = append(missing, m[1])
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("%s reads %s but its header does not record them", p, strings.Join(missing, ", "))
		}
	}
	if checked < 5 {
		t.Fatalf("only %d bench scripts with headers found", checked)
	}
}

// TestBenchKnobsCommandReruns checks bench_knobs' two lines: every knob
// with its value, and a command that sets them all and repeats the
// script's arguments, quoted for the shell.
func TestBenchKnobsCommandReruns(t *testing.T) {
	script := `set -eu
. bench/knobs.sh
POINTS="near:3,random:7 near:3,random:27" NEIGHBOURS=200
bench_knobs POINTS NEIGHBOURS UNSET`
	cmd := exec.Command("bash", "-c", script, "bench/dataplane.sh", "a b", "c")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := `knobs: POINTS=near:3,random:7 near:3,random:27 NEIGHBOURS=200 UNSET=
command: POINTS=near:3\,random:7\ near:3\,random:27 NEIGHBOURS=200 UNSET='' bench/dataplane.sh a\ b c
`
	if string(out) != want {
		t.Errorf("bench_knobs printed\n%s\nwant\n%s", out, want)
	}
}
