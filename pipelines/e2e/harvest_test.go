package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/scoring/nn"
	"github.com/ctxsim/ctxsim/transforms/harvest"
)

// harvestFixture indexes and trains tiny models on a generated corpus.
func harvestFixture(t *testing.T) (corpusOut, model string) {
	t.Helper()
	tmp := t.TempDir()
	path := cleanCorpus(t, tmp, 40)
	corpusOut = filepath.Join(tmp, "corpus")
	run(t, "index", "--input="+path, "--output="+corpusOut, "--shards=2")
	model = filepath.Join(tmp, "model")
	run(t, "train", "--input="+path, "--output="+model, "--preset=tiny", "--models=ctx,disc,gen", "--vocab_size=400",
		"--disc_steps=20", "--gen_steps=20", "--held_out=0.2", "--eval_examples=100", "--ctx_batch=32", "--rank_tasks=20")
	return corpusOut, model
}

func harvestArgs(corpusOut, model, out string) []string {
	return []string{"--corpus=" + corpusOut, "--model=" + model, "--output=" + out, "--preset=demo",
		"--top_k=60", "--rerank=24", "--set_size=8", "--sample=0.5", "--print=3", "--parquet_shards=3"}
}

func sortedPairs(t *testing.T, dir string) []schemas.LabeledPair {
	ps := readAll[schemas.LabeledPair](t, dir)
	sort.Slice(ps, func(i, j int) bool { return ps[i].PairID < ps[j].PairID })
	return ps
}

func sortedSets(t *testing.T, dir string) []schemas.ContextSet {
	cs := readAll[schemas.ContextSet](t, dir)
	sort.Slice(cs, func(i, j int) bool { return cs[i].SentenceID < cs[j].SentenceID })
	return cs
}

// smallSTS writes an STS-format file of 12 corpus-like pairs under dir and
// returns its path.
func smallSTS(t *testing.T, dir string) string {
	t.Helper()
	lines := []string{"score\ts1\ts2\tgenre"}
	for i := range 12 {
		lines = append(lines, fmt.Sprintf("%d.0\tMr. Smith met Dr. Jones in the U.S. capital %d.\tThey spoke of item %d at length.\tx", i%6, i, 3*i))
	}
	sts := filepath.Join(dir, "sts.tsv")
	if err := os.WriteFile(sts, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return sts
}

// TestEvaluate runs the evaluation on a small STS-format file made of
// corpus-like sentences and checks every variant and baseline is reported.
func TestEvaluate(t *testing.T) {
	corpusOut, model := harvestFixture(t)
	tmp := t.TempDir()
	sts := smallSTS(t, tmp)
	out := filepath.Join(tmp, "eval")
	stdout := run(t, "evaluate", "--sts="+sts, "--index="+corpusOut+"/index", "--chunks="+corpusOut+"/chunks/*.parquet",
		"--model="+model, "--output="+out, "--preset=demo", "--top_k=40", "--rerank=20", "--set_size=6", "--pairs=10",
		"--variants=origin,paper,no_disc,random_contexts,set_10,signal_20,lambda(to_s:1),rerank_by(disc)")
	var res struct {
		Pairs   int `json:"pairs"`
		Results []struct {
			Name     string   `json:"name"`
			Spearman float64  `json:"spearman_x100"`
			Eq4      *float64 `json:"eq4_spearman_x100"`
			Labeler  string   `json:"labeler"`
			Pairs    int      `json:"pairs"`
			Evals    float64  `json:"gen_evals_per_pair"`
			CtxPairs float64  `json:"ctx_pairs_per_pair"`
		} `json:"results"`
	}
	b, err := os.ReadFile(out + "/results.json")
	if err != nil || json.Unmarshal(b, &res) != nil {
		t.Fatalf("results.json: %v\n%s", err, stdout)
	}
	var names []string
	for _, r := range res.Results {
		names = append(names, r.Name)
		if r.Pairs != 10 || r.Spearman < -100 || r.Spearman > 100 {
			t.Fatalf("result %+v", r)
		}
	}
	if want := "[tfidf tfidf_stem ctx_cosine ctx_cosine+tfidf_stem ctx_align mean_word_vectors origin paper no_disc random_contexts set_10 signal_20 lambda(to_s:1) rerank_by(disc)]"; fmt.Sprint(names) != want {
		t.Fatalf("variants %v, want %s", names, want)
	}
	origin, paper := res.Results[6], res.Results[7]
	if origin.Labeler != "aligned" || origin.Eq4 == nil || origin.CtxPairs <= 0 || origin.Evals != 0 {
		t.Fatalf("origin (the contrastive scorer, aligned labeler): %+v", origin)
	}
	if paper.Labeler != "origin" || paper.Eq4 == nil || *paper.Eq4 != paper.Spearman || paper.Evals <= 0 {
		t.Fatalf("paper (the four terms, Eq. 4 alone): %+v", paper)
	}
	tsv, _ := os.ReadFile(out + "/pairs.tsv")
	lines := strings.Split(strings.TrimSuffix(string(tsv), "\n"), "\n")
	if len(lines) != 11 {
		t.Fatalf("pairs.tsv has %d lines, want a header and 10 pairs", len(lines))
	}
	if cols := strings.Split(lines[0], "\t"); len(cols) != 1+6+2*8+2 || cols[7] != "origin" || cols[8] != "origin:eq4" {
		t.Fatalf("pairs.tsv header %q", lines[0])
	}
	if !strings.Contains(stdout, "Spearman x100") {
		t.Fatalf("no table printed:\n%s", stdout)
	}
	checkReport(t, out+"/report.html", 4, "Verdict", "The harvested label (the configured settings, aligned labeler) scores",
		"Eq. 4 alone (configured) against the gold score", "Stemmed TF-IDF cosine against the gold score")
	if !strings.Contains(stdout, "evaluate: The harvested label") {
		t.Errorf("no verdict printed:\n%s", stdout)
	}
}

// TestHarvest runs the harvest job end to end and checks its output, that
// a second run gives identical rows, and that a run killed midway and
// started again gives the complete output without duplicates.
func TestHarvest(t *testing.T) {
	corpusOut, model := harvestFixture(t)
	outA := filepath.Join(t.TempDir(), "a")
	t0 := time.Now()
	stdout := run(t, "harvest", harvestArgs(corpusOut, model, outA)...)
	took := time.Since(t0)
	if !strings.Contains(stdout, "pairs in "+outA+"/pairs") || !strings.Contains(stdout, "label ") {
		t.Fatalf("harvest did not report its output and examples:\n%s", stdout)
	}
	pairs := sortedPairs(t, outA+"/pairs")
	sets := sortedSets(t, outA+"/context_sets")
	if len(pairs) < 20 || len(sets) < 20 {
		t.Fatalf("%d pairs, %d context sets", len(pairs), len(sets))
	}
	setOf := map[string]schemas.ContextSet{}
	for _, c := range sets {
		if len(c.Contexts) == 0 || len(c.Contexts) > 8 {
			t.Fatalf("context set of %s has %d contexts", c.SentenceID, len(c.Contexts))
		}
		chunks := map[string]bool{}
		for i, x := range c.Contexts {
			if chunks[x.ChunkID] {
				t.Fatalf("context set of %s uses chunk %s twice", c.SentenceID, x.ChunkID)
			}
			chunks[x.ChunkID] = true
			if i > 0 && x.Score > c.Contexts[i-1].Score {
				t.Fatalf("context set of %s is not sorted by score", c.SentenceID)
			}
		}
		setOf[c.SentenceID] = c
	}
	strata := map[string]int{}
	for i, p := range pairs {
		if i > 0 && p.PairID == pairs[i-1].PairID {
			t.Fatalf("duplicate pair %s", p.PairID)
		}
		if p.SentenceID1 == p.SentenceID2 || p.Label < -1 || p.Label > 1 || p.NumContexts < 1 ||
			p.ModelFingerprint == "" || p.IndexFingerprint == "" {
			t.Fatalf("bad row %+v", p)
		}
		// The default labeler weighs the word alignment 8 to 1 to 1
		// against Eq. 4 and the sentence cosine; the TF-IDF cosine is kept
		// beside them.
		if want := method.Aligned(method.Defaults().Similarity, float64(p.LabelContext), float64(p.LabelAlign), float64(p.LabelEmbed)); math.Abs(float64(p.Label)-want) > 1e-6 ||
			p.LabelAlign < 0 || p.LabelAlign > 1.0001 || p.LabelLexical < 0 || p.LabelLexical > 1.0001 {
			t.Fatalf("pair %s: label %v from Eq. 4 %v and alignment %v (TF-IDF %v)", p.PairID, p.Label, p.LabelContext, p.LabelAlign,
				p.LabelLexical)
		}
		a, b := setOf[p.SentenceID1], setOf[p.SentenceID2]
		if a.Text != p.Sentence1 || b.Text != p.Sentence2 {
			t.Fatalf("pair %s: sentences do not match their context sets", p.PairID)
		}
		if n := int(p.NumContexts); n > len(a.Contexts)+len(b.Contexts) || n < max(len(a.Contexts), len(b.Contexts)) {
			t.Fatalf("pair %s: |C| = %d for sets of %d and %d", p.PairID, n, len(a.Contexts), len(b.Contexts))
		}
		var st map[string]any
		if err := json.Unmarshal([]byte(p.Settings), &st); err != nil || st["set_size"] != float64(8) {
			t.Fatalf("settings %q: %v", p.Settings, err)
		}
		if p.Split != "train" && p.Split != "dev" && p.Split != "test" {
			t.Fatalf("split %q", p.Split)
		}
		strata[p.Stratum]++
	}
	if strata["random"] == 0 || strata["near"] == 0 {
		t.Fatalf("strata %v", strata)
	}
	var sum harvest.Summary
	b, err := os.ReadFile(outA + "/summary.json")
	if err != nil || json.Unmarshal(b, &sum) != nil {
		t.Fatalf("summary.json: %v", err)
	}
	// TestMain built the tools with `make build` and -buildvcs=false: the
	// revision is the Makefile's stamp, or "unknown" outside a git work
	// tree.
	want := builtRevision
	if want == "" {
		want = harvest.UnknownRevision
	}
	if sum.Provenance == nil || sum.Provenance.Tool.Revision != want {
		t.Errorf("provenance %+v, want the revision %s", sum.Provenance, want)
	}
	var histTotal int64
	for i, bin := range sum.LabelHistogram {
		histTotal += bin.Pairs
		if i > 0 && bin.Lo != sum.LabelHistogram[i-1].Hi {
			t.Fatalf("histogram bins out of order: %+v", sum.LabelHistogram)
		}
	}
	if len(sum.LabelHistogram) != 20 || sum.LabelHistogram[0].Lo != -1 || sum.LabelHistogram[19].Hi != 1 {
		t.Fatalf("histogram bins %+v", sum.LabelHistogram)
	}
	if sum.Labeled != int64(len(pairs)) || histTotal != sum.Labeled || sum.CtxPairs["context_sets"] <= 0 ||
		sum.CPUSecondsPerPair <= 0 || sum.CoreHours100M <= 0 {
		t.Fatalf("summary: %d labeled, histogram total %d, ctx pairs %v, %g CPU s per pair; %d rows",
			sum.Labeled, histTotal, sum.CtxPairs, sum.CPUSecondsPerPair, len(pairs))
	}

	if !strings.Contains(stdout, "report in "+outA+"/report.html") {
		t.Fatalf("harvest did not print its report's path:\n%s", stdout)
	}
	checkReport(t, outA+"/report.html", 4, "Are the labels any good?", "Random pairs have a median label of",
		"bin/evaluate --sts=STS_FILE --index="+corpusOut+"/index", "--model="+model,
		"Label histogram per stratum", "Pairs across the label range", "near, median", "c_{i-1} (left)",
		"projection to 100M labeled pairs")

	// Same inputs on one core, where the context sets are built one at a
	// time (the first run built as many at once as the machine has cores):
	// identical rows.
	outB := filepath.Join(t.TempDir(), "b")
	runEnv(t, []string{"GOMAXPROCS=1"}, "harvest", harvestArgs(corpusOut, model, outB)...)
	if !reflect.DeepEqual(sortedPairs(t, outB+"/pairs"), pairs) || !reflect.DeepEqual(sortedSets(t, outB+"/context_sets"), sets) {
		t.Fatal("two runs with the same inputs differ")
	}

	// In three waves (the context sets built once, the pairs labeled
	// against the stored sets in three pipelines): the same rows, and
	// nothing of the waves left behind.
	outW := filepath.Join(t.TempDir(), "w")
	run(t, "harvest", append(harvestArgs(corpusOut, model, outW), "--waves=3")...)
	if !reflect.DeepEqual(sortedPairs(t, outW+"/pairs"), pairs) || !reflect.DeepEqual(sortedSets(t, outW+"/context_sets"), sets) {
		t.Fatal("a harvest in three waves labeled other pairs, or built other context sets, than one pipeline")
	}
	if _, err := os.Stat(filepath.Join(outW, "_waves")); !os.IsNotExist(err) {
		t.Fatalf("the waves' shared sets are left in the output (%v)", err)
	}

	// Over the corpus in two parts by index shard (each pipeline loading
	// one part), in two waves: the same context sets, and the same pairs
	// with the same labels but for the order Eq. 4's sums are added in.
	outP := filepath.Join(t.TempDir(), "p")
	run(t, "harvest", append(harvestArgs(corpusOut, model, outP), "--corpus_parts=2", "--waves=2")...)
	if !reflect.DeepEqual(sortedSets(t, outP+"/context_sets"), sets) {
		t.Fatal("a harvest over two parts of the corpus built other context sets than one pipeline")
	}
	checkSamePairs(t, sortedPairs(t, outP+"/pairs"), pairs, 1e-6)
	if _, err := os.Stat(filepath.Join(outP, "_waves")); !os.IsNotExist(err) {
		t.Fatalf("the parts' files are left in the output (%v)", err)
	}
	if code, stderr := runExit(t, "harvest", append(harvestArgs(corpusOut, model, filepath.Join(t.TempDir(), "p3")), "--corpus_parts=3")...); code == 0 ||
		!strings.Contains(stderr, "has 2 shards") {
		t.Fatalf("three parts of a two-shard index: exit %d, %s", code, stderr)
	}
	if code, stderr := runExit(t, "harvest", append(harvestArgs(corpusOut, model, filepath.Join(t.TempDir(), "pm")), "--corpus_parts=2", "--map_corpus")...); code == 0 ||
		!strings.Contains(stderr, "--map_corpus") {
		t.Fatalf("corpus parts with --map_corpus: exit %d, %s", code, stderr)
	}

	// Killed midway, then run again into the same directory.
	outC := filepath.Join(t.TempDir(), "c")
	cmd := exec.Command(filepath.Join(binDir, "harvest"), harvestArgs(corpusOut, model, outC)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(took / 2)
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	if _, err := os.Stat(outC + "/pairs/_manifest.json"); err == nil {
		t.Logf("the killed run had already finished its pairs table (it took %s before)", took)
	}
	run(t, "harvest", harvestArgs(corpusOut, model, outC)...)
	if got := sortedPairs(t, outC+"/pairs"); !reflect.DeepEqual(got, pairs) {
		t.Fatalf("restarted run: %d pairs, want the same %d as an uninterrupted run", len(got), len(pairs))
	}
	entries, _ := os.ReadDir(outC + "/pairs")
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := fmt.Sprint([]string{"_manifest.json", "part-00000-of-00003.parquet", "part-00001-of-00003.parquet",
		"part-00002-of-00003.parquet"}); fmt.Sprint(names) != want {
		t.Fatalf("pairs directory after restart: %v", names)
	}

	checkGenPrecision(t, corpusOut, model)
}

// checkGenPrecision harvests with the generative terms in float32 and in
// bfloat16: the same pairs, labels near but not all equal, and the
// precision in the settings of every bfloat16 row. A CPU without
// AVX512_BF16 refuses bf16, naming the need.
func checkGenPrecision(t *testing.T, corpusOut, model string) {
	gen := []string{"--lambda=disc:1,to_s:1,to_left:1,to_right:1", "--rerank_by=disc", "--labeler=origin", "--similarity=cosine"}
	out32 := filepath.Join(t.TempDir(), "fp32")
	run(t, "harvest", append(harvestArgs(corpusOut, model, out32), gen...)...)
	out16 := filepath.Join(t.TempDir(), "bf16")
	args := append(append(harvestArgs(corpusOut, model, out16), gen...), "--gen_precision=bf16")
	if !nn.HasBF16() {
		code, stderr := runExit(t, "harvest", args...)
		if code == 0 || !strings.Contains(stderr, "AVX512_BF16") {
			t.Fatalf("bf16 on a CPU without AVX512_BF16: exit %d, %s", code, stderr)
		}
		t.Log("no AVX512_BF16 on this CPU: bf16 refused, as it should be")
		return
	}
	run(t, "harvest", args...)
	p32, p16 := sortedPairs(t, out32+"/pairs"), sortedPairs(t, out16+"/pairs")
	if len(p32) == 0 || len(p32) != len(p16) {
		t.Fatalf("%d fp32 pairs, %d bf16 pairs", len(p32), len(p16))
	}
	var maxDiff float64
	changed := 0
	for i := range p32 {
		if p32[i].PairID != p16[i].PairID {
			t.Fatalf("pair %d: %s in fp32, %s in bf16", i, p32[i].PairID, p16[i].PairID)
		}
		if strings.Contains(p32[i].Settings, "gen_precision") || !strings.Contains(p16[i].Settings, `"gen_precision":"bf16"`) {
			t.Fatalf("settings: fp32 %s, bf16 %s", p32[i].Settings, p16[i].Settings)
		}
		d := math.Abs(float64(p32[i].Label - p16[i].Label))
		maxDiff = max(maxDiff, d)
		if d > 0 {
			changed++
		}
	}
	t.Logf("bf16 changed %d of %d labels, by up to %.3g", changed, len(p32), maxDiff)
	if changed == 0 || maxDiff > 0.1 {
		t.Fatalf("bf16 changed %d of %d labels, by up to %v", changed, len(p32), maxDiff)
	}
}

// checkSamePairs checks that got holds the pairs of want (both sorted by
// pair ID) with the same fields, but for labels that may differ by tol
// (Eq. 4's sums added in another order).
func checkSamePairs(t *testing.T, got, want []schemas.LabeledPair, tol float64) {
	t.Helper()
	if len(got) != len(want) || len(want) == 0 {
		t.Fatalf("%d pairs, want %d", len(got), len(want))
	}
	differ := 0
	for i := range want {
		g, w := got[i], want[i]
		if math.Abs(float64(g.Label-w.Label)) > tol || math.Abs(float64(g.LabelContext-w.LabelContext)) > tol {
			t.Fatalf("pair %s: label %v (Eq. 4 %v), want %v (%v)", w.PairID, g.Label, g.LabelContext, w.Label, w.LabelContext)
		}
		if g.Label != w.Label || g.LabelContext != w.LabelContext {
			differ++
		}
		g.Label, g.LabelContext = w.Label, w.LabelContext
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("pair %s differs:\n%+v\nwant\n%+v", w.PairID, g, w)
		}
	}
	t.Logf("%d of %d labels differ in their last bits", differ, len(want))
}
