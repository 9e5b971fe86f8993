package jobrun

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// osExit is os.Exit; tests replace it.
var osExit = os.Exit

var verbose = OwnBool("verbose", false, "Log the runner's informational messages, and notes such as counters the runner reported differently.")

// Init parses flags and initialises Beam. It must be called first in main.
// usage is printed by -help above the job's flags, which come before
// Beam's runner flags (MarkRunnerFlags).
func Init(usage string) {
	flag.Usage = func() {
		printUsage(flag.CommandLine.Output(), usage, flag.CommandLine, RunnerFlag)
	}
	flag.Parse()
	SetupLogging()
}

// SetupLogging sets the default slog logger, through which the Beam runner
// (Prism) and the SDK harness log. The runner logs a failed bundle several
// times over, with its plan; the job prints the cause itself (Fail), so
// only --verbose shows the runner's log. That includes the log package's
// output, which slog carries at INFO: Beam's SDK harness writes its log
// there when the runner has stopped listening ("stopping worker ...").
// Init calls it; beam.Init replaces the default logger with Beam's, so a
// Beam job calls it again after that.
func SetupLogging() {
	level := slog.LevelError + 4
	if *verbose {
		level = slog.LevelInfo
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})))
}

// Verbose reports whether --verbose was given.
func Verbose() bool { return *verbose }

// Fail prints err and exits with status 1.
func Fail(err error) {
	fmt.Fprintln(os.Stderr, "error:", err)
	var pe *PipelineError
	if errors.As(err, &pe) {
		if *verbose {
			fmt.Fprintf(os.Stderr, "\nthe runner's report:\n%s\n", pe.Detail)
		} else {
			fmt.Fprintln(os.Stderr, "(--verbose prints the runner's full report)")
		}
	}
	abandonOnFailure()
	Release()
	os.Exit(1)
}

// Require fails with a usage error when a required flag is empty.
func Require(names ...string) {
	for _, n := range names {
		if FlagValue(n) == "" {
			fmt.Fprintf(os.Stderr, "error: --%s is required (see -help)\n", n)
			osExit(2)
		}
	}
}

// SplitList splits a comma-separated flag value, dropping empty items.
func SplitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func FlagValue(name string) string {
	f := flag.Lookup(name)
	if f == nil {
		return ""
	}
	return f.Value.String()
}

// FlagSet reports whether the flag name was given on the command line.
func FlagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// Registerer is a job's configuration: it binds its fields to flags.
type Registerer interface {
	Register(fs *flag.FlagSet)
}

// ParseArgs binds c to a new flag set and parses args into it, as the
// command line would (for tests and for callers that build a job's
// configuration from arguments).
func ParseArgs(c Registerer, args ...string) error {
	fs := flag.NewFlagSet("job", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.Register(fs)
	return fs.Parse(args)
}

// AbsPath returns a local path (or glob) made absolute, so that workers
// started elsewhere find it; a remote path is returned as it is.
func AbsPath(p string) string {
	if strings.Contains(p, "://") {
		return p
	}
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}
