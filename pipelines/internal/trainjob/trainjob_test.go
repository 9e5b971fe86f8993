package trainjob

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/retrieval/corpus"
)

// writeCorpus writes n JSONL documents of three paragraphs into dir and
// returns the file's path.
func writeCorpus(t *testing.T, dir string, n int) string {
	t.Helper()
	var lines []string
	for i := range n {
		var paras []string
		for p := range 3 {
			paras = append(paras, fmt.Sprintf(`"Document %d paragraph %d opens here. Mr. Smith met Dr. Jones in the capital %d. They spoke of item %d at length."`,
				i, p, i*7+p, i*3+p))
		}
		lines = append(lines, fmt.Sprintf(`{"doc_id": "d-%03d", "paragraphs": [%s]}`, i, strings.Join(paras, ",")))
	}
	path := filepath.Join(dir, "c.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRegister(t *testing.T) {
	var c Config
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	c.Register(fs)
	if c.Preset != "base" || c.Seed != 1 || c.HeldOut != 0.02 || c.Batch != 32 || c.Models != "ctx" ||
		c.GenDirections != "to_s,to_left,to_right" || c.EvalExamples != 4000 || c.Resume {
		t.Fatalf("defaults %+v", c)
	}
	if err := fs.Parse([]string{"--input=a,b", "--seed=7", "--resume", "--ctx_lr=0.5", "--models=disc"}); err != nil {
		t.Fatal(err)
	}
	if c.Input != "a,b" || c.Seed != 7 || !c.Resume || c.CtxLR != 0.5 || c.Models != "disc" {
		t.Fatalf("parsed %+v", c)
	}
}

// TestCtxConfig checks that each --ctx_* flag overrides its field of the
// preset's contrastive config and that 0 keeps the preset's value.
func TestCtxConfig(t *testing.T) {
	var c Config
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	c.Register(fs)
	j := &job{c: c, pc: presets["base"]}
	base := j.pc.ctx()
	if got := j.ctxConfig(); got.Window != base.Window || got.Temperature != base.Temperature || got.Dim != base.Dim {
		t.Fatalf("no flags: %+v, preset %+v", got, base)
	}
	if err := fs.Parse([]string{"--ctx_window=1", "--ctx_temperature=0.1", "--ctx_dim=64", "--ctx_epochs=3",
		"--ctx_batch=512", "--ctx_lr=0.01", "--ctx_doc_group=4"}); err != nil {
		t.Fatal(err)
	}
	j.c = c
	got := j.ctxConfig()
	want := base
	want.Window, want.Temperature, want.Dim, want.Epochs, want.Batch, want.LR, want.DocGroup, want.Seed = 1, 0.1, 64, 3, 512, 0.01, 4, c.Seed
	if got != want {
		t.Fatalf("ctxConfig = %+v, want %+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
}

// testConfig is a small ctx-only run on input into out.
func testConfig(input, out string) Config {
	var c Config
	c.Register(flag.NewFlagSet("train", flag.ContinueOnError))
	c.Input, c.Output, c.Preset, c.HeldOut, c.CtxBatch, c.RankTasks, c.ReferenceContexts = input, out, "tiny", 0.2, 16, 10, 20
	return c
}

func TestRunErrorsNameTheirCause(t *testing.T) {
	tmp := t.TempDir()
	input := writeCorpus(t, tmp, 12)
	missing := filepath.Join(tmp, "missing.jsonl")
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Input = missing }, missing},
		{func(c *Config) { c.Preset = "huge" }, `unknown preset "huge"`},
		{func(c *Config) { c.Models = "ctx,big" }, `--models: unknown model "big"`},
		{func(c *Config) { c.Models = " , " }, "--models: name at least one"},
		{func(c *Config) { c.GenDirections = "up" }, `--gen_directions: unknown direction "up"`},
		{func(c *Config) { c.HeldOut = 0 }, "need documents both to train on and to hold out"},
	} {
		c := testConfig(input, filepath.Join(tmp, "out"))
		tc.edit(&c)
		err := Run(context.Background(), c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one naming %q", err, tc.want)
		}
	}
}

func TestRunTrainsCtx(t *testing.T) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "model")
	input := writeCorpus(t, tmp, 30)
	if err := Run(context.Background(), testConfig(input, out)); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ctx.json", "ctx.safetensors", "reference.json", "white.json", "train-results-ctx.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Fatalf("%s missing: %v", f, err)
		}
	}
	// --contexts_only writes the same two samples of training contexts,
	// and trains nothing.
	only := filepath.Join(tmp, "contexts")
	c := testConfig(input, only)
	c.ContextsOnly = true
	if err := Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"reference.json", "white.json"} {
		a, _ := os.ReadFile(filepath.Join(out, f))
		b, err := os.ReadFile(filepath.Join(only, f))
		if err != nil || len(a) == 0 || string(a) != string(b) {
			t.Fatalf("%s: --contexts_only wrote %d bytes (%v), training %d, or they differ", f, len(b), err, len(a))
		}
	}
	if _, err := os.Stat(filepath.Join(only, "ctx.json")); err == nil {
		t.Fatal("--contexts_only trained a model")
	}
	var white struct{ Contexts []json.RawMessage }
	if b, _ := os.ReadFile(filepath.Join(out, "white.json")); json.Unmarshal(b, &white) != nil || len(white.Contexts) != 4096 {
		t.Fatalf("white.json holds %d contexts, want 4096", len(white.Contexts))
	}
	var res struct {
		Corpus struct{ Documents int }
		Train  int `json:"train_documents"`
		Held   int `json:"held_out_documents"`
		Ctx    struct {
			Words   int                                  `json:"vocabulary_words"`
			Ranking map[string]map[string]map[string]any `json:"context_ranking"`
		} `json:"ctx"`
	}
	b, _ := os.ReadFile(filepath.Join(out, "train-results-ctx.json"))
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if res.Corpus.Documents != 30 || res.Train+res.Held != 30 || res.Held == 0 {
		t.Fatalf("documents %+v", res)
	}
	if res.Ctx.Words == 0 || res.Ctx.Ranking["ctx"]["n20_random"] == nil {
		t.Fatalf("ctx results %+v", res.Ctx)
	}
}

func TestLoadDocs(t *testing.T) {
	tmp := t.TempDir()
	path := filepath.Join(tmp, "c.jsonl")
	data := `{"doc_id": "b", "paragraphs": ["Second doc. It has two sentences."]}
{"doc_id": "a", "paragraphs": ["First doc here."]}
{"doc_id": "b", "paragraphs": ["A duplicate."]}
not json
{"doc_id": "c", "paragraphs": ["Third doc."]}
`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	docs, st, err := loadDocs(context.Background(), []string{path}, corpus.Defaults(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || docs[0].ID != "a" || docs[1].ID != "b" || len(docs[1].Sentences) != 2 {
		t.Fatalf("docs %+v", docs)
	}
	if st.Files != 1 || st.Documents != 2 || st.Sentences != 3 || st.Dead != 2 {
		t.Fatalf("stats %+v", st)
	}
}

// TestLoadDocsDirectory reads a directory of {"id","text"} JSONL with a
// custom text field and text files, named as bin/index names them.
func TestLoadDocsDirectory(t *testing.T) {
	tmp := t.TempDir()
	for name, data := range map[string]string{
		"web.jsonl":      `{"id": "w1", "body": "Web text. Two sentences.\n\nA paragraph."}` + "\n" + `{"id": "w2", "text": "Not the field read."}` + "\n",
		"essays/one.txt": "An essay of one sentence.\n",
		".hidden.txt":    "Never read.\n",
	} {
		p := filepath.Join(tmp, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts := corpus.Defaults()
	opts.TextField = "body"
	docs, st, err := loadDocs(context.Background(), []string{tmp}, opts, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || docs[0].ID != "essays/one.txt" || docs[1].ID != "w1" || len(docs[1].Sentences) != 3 {
		t.Fatalf("docs %+v", docs)
	}
	if st.Files != 2 || st.Dead != 1 || st.Reasons[corpus.ReasonMissingField] != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestLoadDocsCSVAndLinks: the train job reads CSV, and symbolic links
// leading outside the input only with --follow_links, as bin/index does.
func TestLoadDocsCSVAndLinks(t *testing.T) {
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in, "t.csv"), []byte("id,text\nc1,\"A CSV row. Two sentences.\"\nc2,ragged,row\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(tmp, "outside.txt")
	if err := os.WriteFile(outside, []byte("Outside the input.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(in, "link.txt")); err != nil {
		t.Fatal(err)
	}
	for _, follow := range []bool{false, true} {
		var c Config
		if err := jobrun.ParseArgs(&c, "--input="+in, "--output=x", fmt.Sprintf("--follow_links=%v", follow)); err != nil {
			t.Fatal(err)
		}
		opts := corpus.Defaults()
		opts.FollowLinks = c.FollowLinks
		docs, st, err := loadDocs(context.Background(), []string{in}, opts, 0)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, d := range docs {
			ids = append(ids, d.ID)
		}
		want, outsideDead := "[c1]", int64(1)
		if follow {
			want, outsideDead = "[c1 link.txt]", 0
		}
		if fmt.Sprint(ids) != want || st.Reasons[corpus.ReasonInvalidCSV] != 1 || st.Reasons[corpus.ReasonLinkOutside] != outsideDead {
			t.Errorf("follow_links=%v: documents %v, stats %+v; want %s", follow, ids, st, want)
		}
	}
}

func TestRunLoopNeedsABatch(t *testing.T) {
	_, err := runLoop(loop[int]{name: "disc", exs: []int{1, 2}, steps: 5, batch: 4}, loopOptions{})
	if err == nil || !strings.Contains(err.Error(), "disc: 2 training examples, fewer than one batch of 4") {
		t.Fatalf("error %v", err)
	}
}

// A NaN result (a diverged loss) is written as null: the results file
// stays valid JSON.
func TestFinishNaN(t *testing.T) {
	dir := t.TempDir()
	j := &job{c: Config{Models: "ctx", Output: dir}, dir: dir,
		res: results{Train: 3, Ctx: map[string]any{"train_loss": math.NaN(), "steps": 2}}}
	if err := j.finish(context.Background(), map[string]bool{"ctx": true}, time.Now()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "train-results-ctx.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Train int            `json:"train_documents"`
		Ctx   map[string]any `json:"ctx"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("train-results-ctx.json is not JSON (%v):\n%q", err, b)
	}
	if v, ok := doc.Ctx["train_loss"]; !ok || v != nil || doc.Train != 3 || doc.Ctx["steps"] != 2.0 {
		t.Errorf("train-results-ctx.json:\n%s", b)
	}
}
