package jobrun

import (
	"flag"
	"strings"
	"testing"
)

func TestCheckRanges(t *testing.T) {
	for _, tc := range []struct {
		arg string
		ok  bool
	}{{"--sample=0.5", true}, {"--sample=1", true}, {"--sample=-1", false}, {"--sample=2", false},
		{"--sample=0", false}, {"--sample=NaN", false}, {"--shards=0", false}, {"--shards=100000", false}, {"--shards=3", true}} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.Float64("sample", 1, "")
		fs.Int("shards", 4, "")
		if err := fs.Parse([]string{tc.arg}); err != nil {
			t.Fatal(err)
		}
		err := checkRanges(fs, []Range{{Name: "sample", Lo: 0, Hi: 1, Open: true}, {Name: "shards", Lo: 1, Hi: 256}})
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok = %v", tc.arg, err, tc.ok)
		}
		name := strings.SplitN(tc.arg, "=", 2)[0]
		if err != nil && !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %q does not name the flag", tc.arg, err)
		}
	}
}
