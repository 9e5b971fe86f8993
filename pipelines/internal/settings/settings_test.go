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
	for _, bad := range [][]string{{"--preset=huge"}, {"--lambda=1,1,1,1"}, {"--top_k=-1"}, {"--top_k=0"}, {"--rerank=0"}, {"--set_size=0"}, {"--similarity=dot"}, {"--labeler=best"}, {"--gen_precision=int8"}} {
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

func TestHarvest(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	f := RegisterHarvest(fs)
	if err := fs.Parse([]string{"--preset=paper", "--sample=0.25", "--sample_from=0.5", "--pair_quota=near:2", "--seed=7", "--min_words=3"}); err != nil {
		t.Fatal(err)
	}
	h, err := f.Harvest()
	if err != nil {
		t.Fatal(err)
	}
	if h.Method.Labeler != "origin" || h.Sample != 0.25 || h.SampleFrom != 0.5 || h.Quota != "near:2" ||
		h.Seed != 7 || h.MinWords != 3 || h.Neighbours != 200 || h.BLAS != "go" {
		t.Fatalf("%+v", h)
	}
	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	f = RegisterHarvest(fs)
	if err := fs.Parse([]string{"--similarity=dot"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Harvest(); err == nil || !strings.Contains(err.Error(), "similarity") {
		t.Fatalf("bad method setting: %v", err)
	}
}

func TestHelpStatesThePresets(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	Register(fs, "small")
	preset := fs.Lookup("preset").Usage
	for _, want := range []string{`this job's default is "small"`,
		"default, demo, small: Eq. 3 ctx:1 reranked by ctx, Eq. 4 as zwhite, the aligned labeler",
		"paper, paper_demo, paper_small: Eq. 3 disc:1,to_left:1,to_right:1,to_s:1 reranked by disc, Eq. 4 as cosine, the origin labeler",
		"default, paper 20000/1000/500"} {
		if !strings.Contains(preset, want) {
			t.Errorf("--preset help lacks %q:\n%s", want, preset)
		}
	}
	for name, want := range map[string]string{"similarity": "default, demo, small: zwhite", "labeler": "default, demo, small: aligned", "rerank_by": "default, demo, small: ctx"} {
		if u := fs.Lookup(name).Usage; !strings.Contains(u, want) {
			t.Errorf("--%s help lacks %q:\n%s", name, want, u)
		}
	}
}
