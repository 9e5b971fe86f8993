// Package e2e runs the job binaries end to end: on Prism in-process, and
// through a Prism job server with the universal runner (the path Flink
// uses), inside a private network namespace.
package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/contrast"
	"github.com/ctxsim/ctxsim/scoring/examples"
	"github.com/ctxsim/ctxsim/storage"
)

var (
	binDir string
	// builtRevision is `git rev-parse HEAD` when TestMain built the tools,
	// or "" outside a git work tree.
	builtRevision string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ctxsim-e2e-bin-")
	if err != nil {
		panic(err)
	}
	binDir = dir
	// The tools as `make build` builds them, with -buildvcs=false (as in
	// many CI images) so that the revision in their provenance is the
	// Makefile's stamp (TestHarvest checks it); Prism's job server apart.
	if rev, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
		builtRevision = strings.TrimSpace(string(rev))
	}
	mk := exec.Command("make", "-s", "-C", filepath.Join("..", ".."), "BIN="+dir, "build")
	mk.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -buildvcs=false"))
	mk.Stdout, mk.Stderr = os.Stderr, os.Stderr
	if err := mk.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "make build: %v\n", err)
		os.Exit(1)
	}
	prism := exec.Command("go", "build", "-o", filepath.Join(dir, "prism"), "github.com/apache/beam/sdks/v2/go/cmd/prism")
	prism.Stderr = os.Stderr
	if err := prism.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "build prism: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	return runEnv(t, nil, name, args...)
}

// runEnv is run with env added to the command's environment.
func runEnv(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\nstdout:\n%s\nstderr:\n%s", name, args, err, out.String(), errb.String())
	}
	return out.String()
}

func gz(t *testing.T, path string, data []byte) {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(data)
	w.Close()
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func goodDoc(i int) string {
	var paras []string
	for p := 0; p < 3; p++ {
		paras = append(paras, fmt.Sprintf(`"Document %d paragraph %d opens here. Mr. Smith met Dr. Jones at 3.5 p.m. in the U.S. capital %d. They spoke of item %d at length."`, i, p, i*7+p, i*3+p))
	}
	return fmt.Sprintf(`{"doc_id": "good-%d", "source": "test", "title": "T%d", "paragraphs": [%s]}`, i, i, strings.Join(paras, ","))
}

// malformedCorpus writes a corpus mixing good documents with every kind of
// bad input, and returns the dead-letter reasons expected (with lines).
func malformedCorpus(t *testing.T, dir string) (good int, want []string) {
	t.Helper()
	long := strings.Repeat("word ", 400) // 2000 bytes, over the test's paragraph cap
	lines := []string{
		goodDoc(1),
		`{"doc_id": "bad-json", "paragraphs": ["unterminated"`,
		goodDoc(2),
		"{\"doc_id\": \"bad-utf8\", \"paragraphs\": [\"caf\xe9 au lait\"]}",
		`{"source": "test", "paragraphs": ["no id here."]}`,
		`{"doc_id": "no-paragraphs", "title": "x"}`,
		`{"doc_id": "empty", "paragraphs": []}`,
		`{"doc_id": "blank", "paragraphs": ["   ", "\t"]}`,
		``,
		`{"doc_id": "types", "paragraphs": "not a list"}`,
		fmt.Sprintf(`{"doc_id": "long-para", "paragraphs": ["A fine first paragraph. It is kept.", "%s"]}`, long),
		fmt.Sprintf(`{"doc_id": "all-long", "paragraphs": ["%s"]}`, long),
		goodDoc(1), // duplicate doc_id
		goodDoc(3),
	}
	gz(t, filepath.Join(dir, "mixed.jsonl.gz"), []byte(strings.Join(lines, "\n")+"\n"))
	want = []string{
		"invalid_json:2", "invalid_utf8:4", "missing_field:5", "missing_field:6",
		"empty_document:7", "empty_document:8", "invalid_json:10",
		"paragraph_too_long:11", "paragraph_too_long:12", "empty_document:12",
		"duplicate_doc_id:13",
	}
	// A plain-text document, an empty one, and a truncated gzip file.
	os.WriteFile(filepath.Join(dir, "essay.txt"), []byte("A plain text essay. It has two sentences.\n\nA second paragraph follows here.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "empty.txt"), []byte("\n\n  \n"), 0o644)
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	for i := 100; i < 120; i++ {
		w.Write([]byte(goodDoc(i) + "\n"))
	}
	w.Close()
	os.WriteFile(filepath.Join(dir, "truncated.jsonl.gz"), b.Bytes()[:b.Len()/2], 0o644)
	want = append(want, "empty_document:0", "read_error:*")
	// good-1 (kept once), good-2, good-3, long-para, the essay; the
	// documents of truncated.jsonl.gz read before the damage are withdrawn
	// (corrupt_file).
	return 5, want
}

func TestIndexMalformedCorpus(t *testing.T) {
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in")
	os.MkdirAll(in, 0o755)
	good, want := malformedCorpus(t, in)
	out := filepath.Join(tmp, "out")
	stdout := run(t, "index", "--input="+in+"/*.jsonl.gz,"+in+"/*.txt", "--output="+out,
		"--shards=2", "--max_paragraph_bytes=1000")

	dead := readAll[schemas.DeadLetter](t, out+"/dead_letters")
	var got []string
	withdrawn := 0
	for _, d := range dead {
		switch {
		case d.Reason == "read_error":
			got = append(got, "read_error:*")
			continue
		case d.Reason == "corrupt_file" && strings.HasSuffix(d.Source, "truncated.jsonl.gz"):
			withdrawn++
			continue
		}
		got = append(got, fmt.Sprintf("%s:%d", d.Reason, d.Line))
		if d.Source == "" || d.Detail == "" {
			t.Errorf("dead letter without source or detail: %+v", d)
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("dead letters:\n got  %v\n want %v", got, want)
	}

	sents := readAll[schemas.Sentence](t, out+"/sentences")
	docs := map[string]bool{}
	for _, s := range sents {
		docs[s.DocID] = true
	}
	for _, id := range []string{"good-1", "good-2", "good-3", "long-para", "essay.txt"} {
		if !docs[id] {
			t.Errorf("document %s not ingested", id)
		}
	}
	fromTruncated := 0
	for id := range docs {
		if strings.HasPrefix(id, "good-1") && len(id) == len("good-100") {
			fromTruncated++
		}
	}
	if n := len(docs) - fromTruncated; n != good || fromTruncated != 0 || withdrawn == 0 || withdrawn >= 20 {
		t.Errorf("%d documents ingested plus %d of the truncated file (%d withdrawn), want %d, none, and between 1 and 19 withdrawn: %v",
			n, fromTruncated, withdrawn, good, docs)
	}
	if !strings.Contains(stdout, "ingest/records_read") || strings.Contains(stdout, "do not reconcile") {
		t.Errorf("counters missing or not reconciled:\n%s", stdout)
	}
	chunks := readAll[schemas.Chunk](t, out+"/chunks")
	if len(chunks) == 0 {
		t.Fatal("no chunks")
	}
}

func readAll[T any](t *testing.T, dir string) []T {
	t.Helper()
	files, _ := filepath.Glob(dir + "/part-*.parquet")
	if len(files) == 0 {
		t.Fatalf("no Parquet files in %s", dir)
	}
	var all []T
	for _, f := range files {
		rows, err := storage.ReadParquet[T](context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, rows...)
	}
	return all
}

// cleanCorpus writes n good documents to dir/c.jsonl.gz and returns its path.
func cleanCorpus(t *testing.T, dir string, n int) string {
	t.Helper()
	var lines []string
	for i := 0; i < n; i++ {
		lines = append(lines, goodDoc(i))
	}
	path := filepath.Join(dir, "c.jsonl.gz")
	gz(t, path, []byte(strings.Join(lines, "\n")))
	return path
}

// smallCorpus indexes a few clean documents and returns the output dir.
func smallCorpus(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	cleanCorpus(t, tmp, 30)
	out := filepath.Join(tmp, "out")
	run(t, "index", "--input="+tmp+"/c.jsonl.gz", "--output="+out, "--shards=3")
	return out
}

func TestRetrieveOnPrism(t *testing.T) {
	out := smallCorpus(t)
	hitsOut := filepath.Join(t.TempDir(), "hits")
	stdout := run(t, "retrieve", "--index="+out+"/index", "--sentences="+out+"/sentences/*.parquet",
		"--k=5", "--output="+hitsOut, "--print=2", "--chunks="+out+"/chunks/*.parquet")
	rs := readAll[schemas.Retrieval](t, hitsOut+"/hits")
	sents := readAll[schemas.Sentence](t, out+"/sentences")
	if len(rs) != len(sents) {
		t.Fatalf("%d retrievals for %d sentences", len(rs), len(sents))
	}
	own := map[string]map[string]bool{}
	for _, s := range sents {
		own[s.ID] = map[string]bool{}
		for _, c := range s.ChunkIDs {
			own[s.ID][c] = true
		}
	}
	for _, r := range rs {
		for _, h := range r.Hits {
			if own[r.SentenceID][h.ChunkID] {
				t.Fatalf("sentence %s retrieved its own chunk %s", r.SentenceID, h.ChunkID)
			}
		}
	}
	if !strings.Contains(stdout, "query: ") {
		t.Errorf("no printed examples:\n%s", stdout)
	}
}

// TestUniversalRunner submits the index and retrieve jobs to a Prism job server
// with --runner=universal, the portable path Flink uses. The server listens
// on all interfaces, so it runs in a private network namespace.
func TestUniversalRunner(t *testing.T) {
	if err := exec.Command("unshare", "-n", "true").Run(); err != nil {
		if os.Getenv("CTXSIM_REQUIRE_NETNS") != "" {
			t.Fatalf("cannot create a network namespace: %v", err)
		}
		t.Skipf("cannot create a network namespace (needs root): %v", err)
	}
	tmp := t.TempDir()
	cleanCorpus(t, tmp, 30)
	out := filepath.Join(tmp, "out")
	tsv := filepath.Join(t.TempDir(), "q.tsv")
	os.WriteFile(tsv, []byte("score\ts1\ts2\tgenre\n"+
		"4.0\tMr. Smith met Dr. Jones.\tThey spoke of item 3 at length.\tnews\n"+
		"1.0\tDocument 3 paragraph 1 opens here.\tMr. Smith met Dr. Jones.\tnews\n"), 0o644)
	hitsOut := filepath.Join(t.TempDir(), "hits")
	script := fmt.Sprintf(`set -e
ip link set lo up
%[1]s/prism --job_port=18099 --serve_http=false --log_level=warn &
for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/18099) 2>/dev/null && break; sleep 0.1; done
%[1]s/index --runner=universal --endpoint=localhost:18099 --environment_type=LOOPBACK \
  --input=%[5]s/c.jsonl.gz --output=%[2]s --shards=2
%[1]s/retrieve --runner=universal --endpoint=localhost:18099 --environment_type=LOOPBACK \
  --index=%[2]s/index --queries=%[3]s --k=4 --output=%[4]s
kill %%1`, binDir, out, tsv, hitsOut, tmp)
	cmd := exec.Command("unshare", "-n", "bash", "-c", script)
	done := make(chan error, 1)
	var combined bytes.Buffer
	cmd.Stdout, cmd.Stderr = &combined, &combined
	go func() { done <- cmd.Run() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("universal run: %v\n%s", err, combined.String())
		}
	case <-time.After(5 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("universal run timed out\n%s", combined.String())
	}
	if n := len(readAll[schemas.Chunk](t, out+"/chunks")); n == 0 {
		t.Fatal("index job wrote no chunks")
	}
	rs := readAll[schemas.Retrieval](t, hitsOut+"/hits")
	if len(rs) != 3 { // three distinct sentences in the TSV
		t.Fatalf("%d retrievals, want 3", len(rs))
	}
	for _, r := range rs {
		if len(r.Hits) == 0 || len(r.Hits) > 4 {
			t.Errorf("%q: %d hits", r.Text, len(r.Hits))
		}
	}
}

// TestTrainTiny trains the tiny preset on a generated corpus and checks the
// saved models load and the results file holds the held-out metrics.
func TestTrainTiny(t *testing.T) {
	tmp := t.TempDir()
	corpusPath := cleanCorpus(t, tmp, 120)
	model := filepath.Join(tmp, "model")
	args := []string{"--input=" + corpusPath, "--output=" + model, "--preset=tiny", "--models=ctx,disc,gen",
		"--vocab_size=400", "--disc_steps=30", "--gen_steps=30", "--held_out=0.2", "--eval_examples=200",
		"--ctx_batch=64", "--rank_tasks=30"}
	stdout := run(t, "train", args...)
	for _, f := range []string{"ctx.json", "ctx.safetensors", "reference.json", "tokenizer.json", "disc.json", "disc.safetensors", "gen.json",
		"gen.safetensors", "train-results.json"} {
		if _, err := os.Stat(filepath.Join(model, f)); err != nil {
			t.Fatalf("%s missing: %v\n%s", f, err, stdout)
		}
	}
	var res struct {
		Curve []struct {
			Step    int
			HeldOut struct {
				Examples int     `json:"examples"`
				AUC      float64 `json:"auc"`
			} `json:"held_out"`
		} `json:"disc_curve"`
		Gen struct {
			HeldOut struct {
				ToSentence struct {
					Perplexity float64 `json:"perplexity"`
				} `json:"to_s"`
			} `json:"held_out"`
			Ranking map[string]map[string]examples.RankResult `json:"context_ranking"`
		} `json:"gen"`
		Disc struct {
			Ranking map[string]map[string]examples.RankResult `json:"context_ranking"`
		} `json:"disc"`
		Ctx struct {
			Ranking map[string]map[string]examples.RankResult `json:"context_ranking"`
		} `json:"ctx"`
		CtxCurve []contrast.CurvePoint `json:"ctx_curve"`
	}
	b, _ := os.ReadFile(filepath.Join(model, "train-results.json"))
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Curve) != 10 || res.Curve[9].Step != 30 || res.Curve[9].HeldOut.Examples == 0 {
		t.Fatalf("learning curve %+v", res.Curve)
	}
	if p := res.Gen.HeldOut.ToSentence.Perplexity; p <= 1 || p > 1000 {
		t.Fatalf("generative held-out perplexity %v", p)
	}
	// Every term's context ranking, for N = 20 and 100, random and
	// same-document distractors (this corpus's documents are too short for
	// the latter: none).
	for term, r := range map[string]map[string]examples.RankResult{"ctx": res.Ctx.Ranking["ctx"], "disc": res.Disc.Ranking["disc"],
		"to_s": res.Gen.Ranking["to_s"], "to_left": res.Gen.Ranking["to_left"], "to_right": res.Gen.Ranking["to_right"]} {
		for _, key := range []string{"n20_random", "n100_random"} {
			if x := r[key]; x.Tasks == 0 || !(x.MRR > 0 && x.MRR <= 1) || x.Kind != "random" {
				t.Errorf("%s %s: %+v", term, key, x)
			}
		}
		if x := r["n20_same_doc"]; x.Kind != "same_doc" || x.N != 20 {
			t.Errorf("%s n20_same_doc: %+v", term, x)
		}
	}
	if n := len(res.CtxCurve); n < 2 || res.CtxCurve[n-1].Step == 0 || res.CtxCurve[n-1].HeldOut == nil {
		t.Fatalf("ctx learning curve %+v", res.CtxCurve)
	}
	// Same inputs and seed: identical weights.
	model2 := filepath.Join(tmp, "model2")
	args[1] = "--output=" + model2
	run(t, "train", append(args, "--checkpoint_every=20")...)
	same := func(name string) bool {
		a, _ := os.ReadFile(filepath.Join(model, name))
		c, _ := os.ReadFile(filepath.Join(model2, name))
		return len(a) > 0 && bytes.Equal(a, c)
	}
	if !same("disc.safetensors") || !same("gen.safetensors") || !same("ctx.safetensors") {
		t.Fatal("training is not deterministic under a fixed seed")
	}
	// Resuming from the checkpoints taken after step 20 reproduces the
	// uninterrupted run exactly.
	os.Remove(filepath.Join(model2, "disc.safetensors"))
	os.Remove(filepath.Join(model2, "gen.safetensors"))
	out := run(t, "train", append(args, "--resume", "--checkpoint_every=20")...)
	if !strings.Contains(out, "disc: resumed from the checkpoint after step 20") ||
		!strings.Contains(out, "gen: resumed from the checkpoint after step 20") {
		t.Fatalf("did not resume:\n%s", out)
	}
	if !same("disc.safetensors") || !same("gen.safetensors") {
		t.Fatal("a resumed run differs from an uninterrupted one")
	}
}
