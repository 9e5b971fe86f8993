package jobrun

import (
	"flag"
	"fmt"
	"math"
	"strconv"
)

var allowEmpty = OwnBool("allow_empty", false,
	"Accept a run that produces no rows (no documents, no queries, no pairs); by default that is an error.")

// Range is the allowed interval of a numeric flag; Open excludes Lo.
type Range struct {
	Name   string
	Lo, Hi float64
	Open   bool
}

// CheckRanges fails the job, naming the flag, when a numeric flag's value
// (given or default) lies outside its range or is not a number. It runs
// before any pipeline is built.
func CheckRanges(ranges ...Range) {
	if err := checkRanges(flag.CommandLine, ranges); err != nil {
		fmt.Fprintf(flag.CommandLine.Output(), "error: %v (see -help)\n", err)
		Release()
		osExit(2)
	}
}

func checkRanges(fs *flag.FlagSet, ranges []Range) error {
	for _, r := range ranges {
		f := fs.Lookup(r.Name)
		if f == nil {
			return fmt.Errorf("no flag --%s", r.Name)
		}
		v, err := strconv.ParseFloat(f.Value.String(), 64)
		low := v < r.Lo || (r.Open && v == r.Lo)
		if err != nil || math.IsNaN(v) || low || v > r.Hi {
			lo := "["
			if r.Open {
				lo = "("
			}
			return fmt.Errorf("--%s=%s is outside %s%g, %g]", r.Name, f.Value.String(), lo, r.Lo, r.Hi)
		}
	}
	return nil
}

// NotEmpty returns an error when a job produced no rows of what counter
// counts, unless --allow_empty was given. what says what is missing and
// where to look.
func NotEmpty(c Counters, counter, what string) error {
	if len(c) == 0 || c[counter] > 0 || *allowEmpty {
		return nil
	}
	return fmt.Errorf("%s (%s = 0); give --allow_empty if that is what you mean", what, counter)
}
