package jobrun

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"
)

// ownFlags names the flags that ctxsim's packages register when they
// initialise (--verbose, --allow_empty, ...). -help lists them with the
// job's own flags, which a job's main registers.
var ownFlags = map[string]bool{}

// runnerFlags names the flags that Beam's packages registered (the runner
// options): MarkRunnerFlags records them, and -help lists them apart.
var runnerFlags = map[string]bool{}

// OwnBool defines a boolean flag on the command line for every job, as
// flag.Bool does, and marks it as ctxsim's own: -help lists it with the
// job's flags even when it is registered during package initialisation,
// before or after Beam's.
func OwnBool(name string, value bool, usage string) *bool {
	ownFlags[name] = true
	return flag.Bool(name, value, usage)
}

// MarkRunnerFlags records every flag registered so far, except ctxsim's
// own (OwnBool), as a Beam runner flag. Package beamjob calls it while it
// initialises: its imports (beam, beamx and the runners) have registered
// all their flags by then, and no job has registered its own yet (a job's
// main does that). Jobs that do not link Beam have no runner flags.
func MarkRunnerFlags() bool {
	flag.VisitAll(func(f *flag.Flag) {
		if !ownFlags[f.Name] {
			runnerFlags[f.Name] = true
		}
	})
	return true
}

// RunnerFlag reports whether name is a Beam runner flag (MarkRunnerFlags).
func RunnerFlag(name string) bool { return runnerFlags[name] }

// runnerHeading heads the list of Beam's flags in -help.
const runnerHeading = "Runner flags (Beam; --runner=prism by default, see deploy/ for Dataflow and Flink):"

// printUsage writes -help: the usage text, the job's flags in full, then
// the runner flags of fs (those runner reports), one line each.
func printUsage(w io.Writer, usage string, fs *flag.FlagSet, runner func(string) bool) {
	fmt.Fprintf(w, "%s\n\nFlags:\n", strings.TrimSpace(usage))
	own := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	own.SetOutput(w)
	var beam []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if runner(f.Name) {
			beam = append(beam, f)
			return
		}
		own.Var(f.Value, f.Name, f.Usage)
		// The default as registered, not the value parsed so far.
		own.Lookup(f.Name).DefValue = f.DefValue
	})
	own.PrintDefaults()
	if len(beam) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s\n", runnerHeading)
	sort.Slice(beam, func(i, j int) bool { return beam[i].Name < beam[j].Name })
	names := make([]string, len(beam))
	width := 0
	for i, f := range beam {
		kind, _ := flag.UnquoteUsage(f)
		names[i] = "-" + f.Name
		if kind != "" {
			names[i] += " " + kind
		}
		if n := len(names[i]); n > width && n <= 36 {
			width = n
		}
	}
	for i, f := range beam {
		fmt.Fprintf(w, "  %-*s  %s\n", width, names[i], summary(runnerUsage(f.Name, f.Usage), 80))
	}
}

// requiredBy says which runner needs the Beam flags whose help says
// "(required)": none is required on a local (prism) run.
var requiredBy = map[string]string{
	"endpoint":         "(--runner=universal; a local prism run starts its own)",
	"region":           "(--runner=dataflow)",
	"staging_location": "(--runner=dataflow)",
}

// runnerUsage is a Beam flag's help with "(required)" replaced by the
// runner that requires it.
func runnerUsage(name, usage string) string {
	if by, ok := requiredBy[name]; ok {
		return strings.Replace(usage, "(required)", by, 1)
	}
	return usage
}

// summary is the first line of a flag's help, cut to about max characters.
func summary(usage string, max int) string {
	s := strings.TrimSpace(usage)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)[:max]
	if i := strings.LastIndexByte(string(r), ' '); i > max/2 {
		return string(r)[:i] + " ..."
	}
	return string(r) + "..."
}
