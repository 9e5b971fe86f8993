package settings

import (
	"flag"
	"strings"
	"testing"
)

func parse(t *testing.T, args ...string) (*Flags, error) {
	t.Helper()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	f := Register(fs, "default")
	return f, fs.Parse(args)
}

func TestSettings(t *testing.T) {
	f, err := parse(t, "--preset=small", "--lambda=ctx:1,disc:0.5", "--rerank_by=disc", "--labeler=origin", "--top_k=50")
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if st.TopK != 50 || st.Rerank != 200 || st.RerankBy != "disc" || st.Lambda["disc"] != 0.5 || st.Labeler != "origin" {
		t.Fatalf("%+v", st)
	}
	for _, bad := range [][]string{{"--preset=huge"}, {"--lambda=1,1,1,1"}, {"--top_k=-1"}, {"--top_k=0"}, {"--rerank=0"}, {"--set_size=0"}, {"--similarity=dot"}, {"--labeler=best"}} {
		f, err := parse(t, bad...)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.Settings()
		name := strings.TrimPrefix(strings.SplitN(bad[0], "=", 2)[0], "--")
		if err == nil || !strings.Contains(err.Error(), name) && !strings.Contains(err.Error(), "settings") {
			t.Errorf("%v: %v", bad, err)
		}
	}
}
