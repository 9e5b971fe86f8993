package harvestjob

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/pipelines/internal/beamjob/beamtest"
	"github.com/ctxsim/ctxsim/pipelines/internal/indexjob"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/transforms/harvest"
)

func TestMain(m *testing.M) { beamtest.Main(m) }

// A harvest under the lexical labeler runs on a real index with no model:
// every sampled pair is labeled with the TF-IDF cosine of its sentences'
// stems, once, and no context set is built.
func TestRunLexicalWithoutModels(t *testing.T) {
	dir := t.TempDir()
	corpus := lexicalCorpus(t, dir)
	ctx := context.Background()

	// Without --model, only the lexical labeler is accepted.
	noModel := config(t, "--corpus="+corpus, "--output="+filepath.Join(dir, "x"))
	if err := noModel.Resolve(); err == nil || !strings.Contains(err.Error(), "--model") {
		t.Fatalf("no model under the default labeler: %v", err)
	}

	out := filepath.Join(dir, "harvest")
	c := config(t, "--corpus="+corpus, "--output="+out, "--labeler=lexical", "--preset=demo",
		"--pair_quota=near:2,mid:2,far:2,random:2", "--parquet_shards=2", "--print=0")
	if err := c.Resolve(); err != nil {
		t.Fatal(err)
	}
	if err := Run(ctx, c); err != nil {
		t.Fatal(err)
	}
	pairs, err := storage.ReadTable[schemas.LabeledPair](ctx, filepath.Join(out, "pairs"))
	if err != nil {
		t.Fatal(err)
	}
	sents, err := storage.ReadTable[schemas.Sentence](ctx, filepath.Join(corpus, "sentences"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) < len(sents) {
		t.Fatalf("%d pairs from %d sentences at quota 2 per stratum", len(pairs), len(sents))
	}
	st, err := resources.LoadStore(ctx, filepath.Join(corpus, "chunks/*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	tfidf := st.TFIDF(true)
	text := map[string]string{}
	for _, s := range sents {
		text[s.ID] = s.Text
	}
	seen := map[string]bool{}
	strata := map[string]int{}
	for _, p := range pairs {
		if seen[p.PairID] || p.PairID != harvest.PairID(p.SentenceID1, p.SentenceID2) || p.SentenceID1 == p.SentenceID2 {
			t.Fatalf("pair %+v: repeated, or not the pair of its sentences", p)
		}
		seen[p.PairID] = true
		strata[p.Stratum]++
		if p.Sentence1 != text[p.SentenceID1] || p.Sentence2 != text[p.SentenceID2] {
			t.Fatalf("pair %s carries other texts than its sentences'", p.PairID)
		}
		want := float32(tfidf.Cosine(p.Sentence1, p.Sentence2))
		if p.Label != want || p.LabelLexical != want || p.LabelContext != 0 || p.NumContexts != 0 || p.ModelFingerprint != "" {
			t.Fatalf("pair %s: label %v lexical %v context %v |C| %d model %q, want label = lexical = %v and no contexts",
				p.PairID, p.Label, p.LabelLexical, p.LabelContext, p.NumContexts, p.ModelFingerprint, want)
		}
	}
	if strata[harvest.StratumRandom] == 0 || strata[harvest.StratumNear] == 0 {
		t.Fatalf("strata %v: want near and random pairs", strata)
	}
	sets, err := storage.ReadTable[schemas.ContextSet](ctx, filepath.Join(out, "context_sets"))
	if err != nil || len(sets) != 0 {
		t.Fatalf("%d context sets (%v), want an empty table", len(sets), err)
	}
	sum := readSummary(t, out)
	if sum.Labeled != int64(len(pairs)) || sum.GenEvalsPerPair != 0 {
		t.Fatalf("summary %+v: want %d pairs labeled and no generative evaluations", sum, len(pairs))
	}
}

// A harvest in waves labels the pairs one pipeline labels, with the same
// labels, strata and counters, in tables with one manifest each, and
// leaves nothing else in its output.
func TestRunLexicalInWaves(t *testing.T) {
	dir := t.TempDir()
	corpus := lexicalCorpus(t, dir)
	ctx := context.Background()
	args := []string{"--corpus=" + corpus, "--labeler=lexical", "--preset=demo",
		"--pair_quota=near:2,mid:2,far:2,random:2", "--parquet_shards=2", "--print=0"}

	run := func(name string, extra ...string) (map[string]schemas.LabeledPair, harvest.Summary) {
		out := filepath.Join(dir, name)
		c := config(t, append(append(args, "--output="+out), extra...)...)
		if err := c.Resolve(); err != nil {
			t.Fatal(err)
		}
		if err := Run(ctx, c); err != nil {
			t.Fatal(err)
		}
		byID := pairsByID(t, out)
		if _, err := os.Stat(filepath.Join(out, wavesDir)); !os.IsNotExist(err) {
			t.Fatalf("%s: the waves' shared retrievals are left in the output (%v)", name, err)
		}
		for _, table := range []string{"pairs", "context_sets", "dead_letters", "export/train", "export/dev", "export/test"} {
			if _, err := storage.CheckTable(ctx, filepath.Join(out, table)); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if left, _ := filepath.Glob(filepath.Join(out, table, "_part-*")); len(left) > 0 {
				t.Fatalf("%s: part records left: %v", name, left)
			}
		}
		return byID, readSummary(t, out)
	}
	one, sumOne := run("one")
	waves, sumWaves := run("waves", "--waves=3")
	if len(one) == 0 || !reflect.DeepEqual(one, waves) {
		t.Fatalf("one pipeline labeled %d pairs, three waves %d, not the same pairs and labels", len(one), len(waves))
	}
	// Every count, but not the milliseconds spent (stage_ms_*).
	for _, c := range []map[string]int64{sumOne.Counters, sumWaves.Counters} {
		for k := range c {
			if strings.Contains(k, "/stage_ms_") {
				delete(c, k)
			}
		}
	}
	if len(sumOne.Counters) < 10 || !reflect.DeepEqual(sumOne.Counters, sumWaves.Counters) {
		t.Fatalf("counters differ:\none pipeline %v\nthree waves  %v", sumOne.Counters, sumWaves.Counters)
	}
	if sumWaves.Waves != 3 {
		t.Fatalf("summary records %d waves, want 3", sumWaves.Waves)
	}
	m, err := storage.CheckTable(ctx, filepath.Join(dir, "waves", "pairs"))
	if err != nil || m.NumShards != 6 || m.Rows != int64(len(waves)) {
		t.Fatalf("pairs manifest %+v (%v): want 6 files of %d rows in all", m, err, len(waves))
	}
	// Each wave wrote some of the pairs: the waves split the work.
	for _, f := range m.Files[:4] {
		if f.Rows == 0 {
			t.Errorf("%s: no rows; each wave should own some pairs", f.Name)
		}
	}
}

// A harvest in waves that stops midway is resumed by the same command: the
// waves it finished are not run again, the one it was in is run again from
// the start, and the tables, summary and counters are those of a run that
// never stopped. Another command starts over.
func TestWavesResumeAfterAStop(t *testing.T) {
	dir := t.TempDir()
	corpus := lexicalCorpus(t, dir)
	ctx := context.Background()
	args := []string{"--corpus=" + corpus, "--labeler=lexical", "--preset=demo",
		"--pair_quota=near:2,mid:2,far:2,random:2", "--parquet_shards=2", "--print=0", "--waves=3"}
	var ran []string
	stopAt := ""
	afterStep = func(name string) error {
		ran = append(ran, name)
		if name == stopAt {
			return fmt.Errorf("stopped after %s", name)
		}
		return nil
	}
	attempt := ""
	newRunID = func() string { return attempt }
	t.Cleanup(func() { afterStep, newRunID = nil, storage.RunID })
	harvestTo := func(out, id, stop string, extra ...string) error {
		ran, stopAt, attempt = nil, stop, id
		c := config(t, append(append(args, "--output="+out), extra...)...)
		if err := c.Resolve(); err != nil {
			t.Fatal(err)
		}
		return Run(ctx, c)
	}
	counts := func(s harvest.Summary) map[string]int64 {
		c := map[string]int64{}
		for k, v := range s.Counters {
			if !strings.Contains(k, "/stage_ms_") {
				c[k] = v
			}
		}
		return c
	}

	whole := filepath.Join(dir, "whole")
	if err := harvestTo(whole, "run-whole", ""); err != nil {
		t.Fatal(err)
	}
	want, wantSum := pairsByID(t, whole), readSummary(t, whole)

	out := filepath.Join(dir, "stopped")
	if err := harvestTo(out, "run-a", "harvest wave 2 of 3"); err == nil || !strings.Contains(err.Error(), "stopped after") {
		t.Fatalf("the stop was not reported: %v", err)
	}
	// Wave 2 wrote its files and part records, but not its step record.
	if left, _ := filepath.Glob(filepath.Join(out, "pairs", "_part-00001-*")); len(left) != 1 {
		t.Fatalf("the stopped wave's part record: %v", left)
	}
	if _, err := os.Stat(filepath.Join(out, "summary.json")); !os.IsNotExist(err) {
		t.Fatalf("a stopped harvest has a summary (%v)", err)
	}
	if err := harvestTo(out, "run-b", ""); err != nil {
		t.Fatal(err)
	}
	if want2 := []string{"harvest wave 2 of 3", "harvest wave 3 of 3", "commit"}; !reflect.DeepEqual(ran, want2) {
		t.Fatalf("the resumed run ran %q, want %q", ran, want2)
	}
	got, sum := pairsByID(t, out), readSummary(t, out)
	if len(want) == 0 || !reflect.DeepEqual(got, want) {
		t.Fatalf("resumed: %d pairs, want the %d of a run that did not stop, with the same labels", len(got), len(want))
	}
	if !reflect.DeepEqual(counts(sum), counts(wantSum)) {
		t.Fatalf("counters differ:\nresumed %v\nwhole   %v", counts(sum), counts(wantSum))
	}
	if sum.RunID != "run-a" || sum.WavesResumed != 1 || sum.Waves != 3 {
		t.Fatalf("summary: run %q, %d of %d waves resumed; want run-a, 1 of 3", sum.RunID, sum.WavesResumed, sum.Waves)
	}
	for _, table := range []string{"pairs", "context_sets", "dead_letters", "export/train", "export/dev", "export/test"} {
		m, err := storage.CheckTable(ctx, filepath.Join(out, table))
		if err != nil || m.RunID != "run-a" {
			t.Fatalf("%s: manifest of run %q (%v), want run-a", table, m.RunID, err)
		}
	}
	if err := jobrun.CheckCommitted(ctx, filepath.Join(out, "pairs")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, wavesDir)); !os.IsNotExist(err) {
		t.Fatalf("_waves left after the resumed run (%v)", err)
	}

	// Stopped after its tables were committed, before the summary: the
	// rerun runs no pipeline, commits again and writes the summary.
	late := filepath.Join(dir, "late")
	if err := harvestTo(late, "run-e", "commit"); err == nil {
		t.Fatal("the stop was not reported")
	}
	if err := harvestTo(late, "run-f", ""); err != nil {
		t.Fatal(err)
	}
	if s := readSummary(t, late); !reflect.DeepEqual(ran, []string{"commit"}) || s.RunID != "run-e" || s.WavesResumed != 3 ||
		!reflect.DeepEqual(pairsByID(t, late), want) {
		t.Fatalf("after a stop at the commit: ran %q, summary run %q with %d waves resumed", ran, s.RunID, s.WavesResumed)
	}

	// Stopped with another seed, then run with the first: nothing of the
	// stopped run is taken over.
	other := filepath.Join(dir, "other")
	if err := harvestTo(other, "run-c", "harvest wave 2 of 3", "--seed=9"); err == nil {
		t.Fatal("the stop was not reported")
	}
	if err := harvestTo(other, "run-d", ""); err != nil {
		t.Fatal(err)
	}
	if len(ran) != 5 || !reflect.DeepEqual(pairsByID(t, other), want) {
		t.Fatalf("after a stopped run of another seed: ran %q; pairs equal to a fresh run: %v", ran, reflect.DeepEqual(pairsByID(t, other), want))
	}
	if s := readSummary(t, other); s.RunID != "run-d" || s.WavesResumed != 0 {
		t.Fatalf("summary: run %q, %d waves resumed; want run-d, none", s.RunID, s.WavesResumed)
	}
}

// pairsByID reads a harvest's pairs table by pair ID, failing on a pair
// written twice.
func pairsByID(t *testing.T, out string) map[string]schemas.LabeledPair {
	t.Helper()
	pairs, err := storage.ReadTable[schemas.LabeledPair](context.Background(), filepath.Join(out, "pairs"))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]schemas.LabeledPair{}
	for _, p := range pairs {
		if _, ok := byID[p.PairID]; ok {
			t.Fatalf("%s: pair %s twice", out, p.PairID)
		}
		byID[p.PairID] = p
	}
	return byID
}

func readSummary(t *testing.T, out string) harvest.Summary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, jobrun.SummaryName))
	if err != nil {
		t.Fatal(err)
	}
	var sum harvest.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	return sum
}

// lexicalCorpus indexes twelve documents on three topics under dir and
// returns the index job's output directory.
func lexicalCorpus(t *testing.T, dir string) string {
	t.Helper()
	topics := []string{"river boats", "mountain roads", "winter gardens"}
	var lines []string
	for i := range 12 {
		tp := topics[i%3]
		lines = append(lines, fmt.Sprintf(`{"doc_id": "d%02d", "title": "T", "paragraphs": [`+
			`"The %s of the north are old. People speak of the %s with care. Travel by %s takes %d days. `+
			`Each spring the %s change. Nobody owns the %s for long."]}`, i, tp, tp, tp, i+2, tp, tp))
	}
	in := filepath.Join(dir, "c.jsonl")
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	corpus := filepath.Join(dir, "corpus")
	var ic indexjob.Config
	if err := jobrun.ParseArgs(&ic, "--input="+in, "--output="+corpus, "--shards=1", "--parquet_shards=1"); err != nil {
		t.Fatal(err)
	}
	if err := indexjob.Run(context.Background(), ic); err != nil {
		t.Fatal(err)
	}
	return corpus
}

// Corpus parts split the work of context sets: the lexical labeler, which
// builds none, is refused before anything runs.
func TestCorpusPartsNeedContextSets(t *testing.T) {
	dir := t.TempDir()
	corpus := lexicalCorpus(t, dir)
	out := filepath.Join(dir, "parts")
	c := config(t, "--corpus="+corpus, "--output="+out, "--labeler=lexical", "--preset=demo", "--corpus_parts=2", "--print=0")
	if err := c.Resolve(); err != nil {
		t.Fatal(err)
	}
	err := Run(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "--corpus_parts") || !strings.Contains(err.Error(), "lexical") {
		t.Fatalf("--corpus_parts under the lexical labeler: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "pairs")); !os.IsNotExist(err) {
		t.Fatalf("a refused harvest wrote its pairs table (%v)", err)
	}
}
