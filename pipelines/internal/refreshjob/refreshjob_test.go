package refreshjob

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/pipelines/internal/harvestjob"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/retrieval/corpus"
)

func config(t *testing.T, args ...string) Config {
	t.Helper()
	var c Config
	if err := jobrun.ParseArgs(&c, args...); err != nil {
		t.Fatal(err)
	}
	if err := c.Resolve(); err != nil {
		t.Fatal(err)
	}
	return c
}

// The method fingerprint decides whether a version's labels can be
// reused: it must move with every setting that changes labels, and not
// with the sample window while that stays at its start.
func TestMethodFingerprint(t *testing.T) {
	fp := func(args ...string) string {
		c := config(t, args...)
		pc, err := harvestjob.PairConfig(c.Method)
		if err != nil {
			t.Fatal(err)
		}
		f, err := methodFingerprint(c.Method, pc, "model-1", corpus.Defaults())
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	base := fp()
	if fp("--sample_from=0") != base {
		t.Error("an explicit --sample_from=0 changed the fingerprint")
	}
	for _, args := range [][]string{{"--sample_from=0.5", "--sample=0.5"}, {"--sample=0.5"}, {"--preset=paper"},
		{"--top_k=7"}, {"--pair_quota=near:2"}, {"--seed=2"}, {"--min_words=2"}} {
		if fp(args...) == base {
			t.Errorf("%v left the fingerprint unchanged", args)
		}
	}
	c := config(t)
	pc, _ := harvestjob.PairConfig(c.Method)
	if f, _ := methodFingerprint(c.Method, pc, "model-2", corpus.Defaults()); f == base {
		t.Error("another model left the fingerprint unchanged")
	}
	// Other text or ID fields read other documents; the defaults named
	// explicitly are the defaults.
	for _, f := range []func(*corpus.Options){
		func(o *corpus.Options) { o.TextField = "content" },
		func(o *corpus.Options) { o.IDField = "url" },
	} {
		o := corpus.Defaults()
		f(&o)
		if got, _ := methodFingerprint(c.Method, pc, "model-1", o); got == base {
			t.Errorf("fields %q, %q left the fingerprint unchanged", o.TextField, o.IDField)
		}
	}
	o := corpus.Defaults()
	o.TextField, o.IDField = corpus.DefaultTextField, corpus.DefaultIDField
	if got, _ := methodFingerprint(c.Method, pc, "model-1", o); got != base {
		t.Error("the default fields named explicitly changed the fingerprint")
	}
}

// --text_field and --id_field are the job's flags, as bin/index's.
func TestRefreshFieldFlags(t *testing.T) {
	root := t.TempDir()
	c := config(t, "--input=x.jsonl", "--root="+root, "--model="+filepath.Join(root, "nomodel"), "--text_field=content", "--id_field=url")
	if c.TextField != "content" || c.IDField != "url" {
		t.Fatalf("flags parsed into %q, %q", c.TextField, c.IDField)
	}
}

// A run whose models cannot be loaded fails before it writes a version.
func TestRunChecksModelsFirst(t *testing.T) {
	root := t.TempDir()
	c := config(t, "--input=x.jsonl", "--root="+root, "--model="+filepath.Join(root, "nomodel"))
	err := Run(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "nomodel") {
		t.Fatalf("missing model: %v", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("the failed run wrote %v", entries)
	}
}

// A negative --keep_versions is refused: by the flag's range before the
// job starts, and by Run before it writes anything.
func TestKeepVersionsNegative(t *testing.T) {
	root := t.TempDir()
	c := config(t, "--input=x.jsonl", "--root="+root, "--model="+filepath.Join(root, "nomodel"), "--keep_versions=-7")
	checked := false
	for _, r := range c.Ranges() {
		if r.Name == "keep_versions" {
			checked = true
			if r.Lo != 0 || r.Open || r.Hi < 100 {
				t.Errorf("--keep_versions range %+v, want [0, 100 or more]", r)
			}
		}
	}
	if !checked {
		t.Error("--keep_versions has no range: -7 would be accepted")
	}
	err := Run(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "--keep_versions=-7") {
		t.Fatalf("--keep_versions=-7: %v", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("the refused run wrote %v", entries)
	}
}
