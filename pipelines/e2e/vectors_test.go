package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/transforms/harvest"
)

func sentencesEncoded(t *testing.T, out string) int64 {
	t.Helper()
	var sum harvest.Summary
	b, err := os.ReadFile(out + "/summary.json")
	if err != nil || json.Unmarshal(b, &sum) != nil {
		t.Fatalf("summary.json: %v", err)
	}
	return sum.Counters["harvest/sentences_encoded"]
}

// TestHarvestStoredVectors stores the corpus's sentence vectors with
// bin/encode and checks that a harvest loading them labels exactly the
// pairs, with exactly the context sets, of a harvest computing them, while
// encoding no corpus sentence; and that a missing or damaged store is
// refused with an error naming it. With the vectors and the chunk store's
// strings in memory maps (--map_corpus), the labels and sets are the same.
func TestHarvestStoredVectors(t *testing.T) {
	corpusOut, model := harvestFixture(t)
	tmp := t.TempDir()
	outA, outB := filepath.Join(tmp, "computed"), filepath.Join(tmp, "stored")
	stdout := run(t, "harvest", append(harvestArgs(corpusOut, model, outA), "--preset=paper", "--top_k=60", "--rerank=24", "--set_size=8")...)
	if !strings.Contains(stdout, "no stored sentence vectors in "+corpusOut+"/vectors") {
		t.Fatalf("harvest did not say it computes the vectors:\n%s", stdout)
	}

	stdout = run(t, "encode", "--corpus="+corpusOut, "--model="+model, "--parquet_shards=2")
	tables, _ := filepath.Glob(corpusOut + "/vectors/*")
	var names []string
	for _, d := range tables {
		names = append(names, filepath.Base(d))
	}
	if len(tables) != 2 || !strings.HasPrefix(names[0], "ctx-") || !strings.HasPrefix(names[1], "disc-") {
		t.Fatalf("vector tables %v\n%s", names, stdout)
	}
	sents := readAll[schemas.Sentence](t, corpusOut+"/sentences")
	for _, d := range tables {
		vs := readAll[schemas.SentenceVector](t, d)
		ids := map[string]bool{}
		for _, v := range vs {
			ids[v.SentenceID] = true
			if len(v.Vector) == 0 || len(v.Vector) != len(vs[0].Vector) {
				t.Fatalf("%s: sentence %s has %d values", d, v.SentenceID, len(v.Vector))
			}
		}
		if len(vs) != len(sents) || len(ids) != len(sents) {
			t.Fatalf("%s: %d vectors (%d sentences) for %d sentences", d, len(vs), len(ids), len(sents))
		}
	}
	if again := run(t, "encode", "--corpus="+corpusOut, "--model="+model); strings.Count(again, "is complete; kept") != 2 {
		t.Fatalf("a second encode run recomputed complete tables:\n%s", again)
	}

	stdout = run(t, "harvest", append(harvestArgs(corpusOut, model, outB), "--preset=paper", "--top_k=60", "--rerank=24", "--set_size=8")...)
	if strings.Count(stdout, "sentence vectors loaded from "+corpusOut+"/vectors/") != 2 {
		t.Fatalf("harvest did not load both tables:\n%s", stdout)
	}
	pairs, sets := sortedPairs(t, outA+"/pairs"), sortedSets(t, outA+"/context_sets")
	if len(pairs) < 10 || len(sets) < 10 {
		t.Fatalf("%d pairs, %d context sets", len(pairs), len(sets))
	}
	if !reflect.DeepEqual(sortedPairs(t, outB+"/pairs"), pairs) || !reflect.DeepEqual(sortedSets(t, outB+"/context_sets"), sets) {
		t.Fatal("the harvest with stored vectors labeled other pairs or built other context sets")
	}
	// Kept in memory maps, the same corpus and vectors give the same labels.
	outC := filepath.Join(tmp, "mapped")
	stdout = run(t, "harvest", append(harvestArgs(corpusOut, model, outC), "--preset=paper", "--top_k=60", "--rerank=24", "--set_size=8", "--map_corpus")...)
	if strings.Count(stdout, "sentence vectors loaded from "+corpusOut+"/vectors/") != 2 {
		t.Fatalf("harvest --map_corpus did not load both tables:\n%s", stdout)
	}
	if !reflect.DeepEqual(sortedPairs(t, outC+"/pairs"), pairs) || !reflect.DeepEqual(sortedSets(t, outC+"/context_sets"), sets) {
		t.Fatal("the harvest with a mapped corpus labeled other pairs or built other context sets")
	}
	// Computing, the workers encode the corpus sentences their contexts
	// use (here all of them); loading, only the labeled sentences
	// themselves, once per scoring call, in both runs.
	computed, stored := sentencesEncoded(t, outA), sentencesEncoded(t, outB)
	if computed-stored < int64(len(sents))*9/10 {
		t.Fatalf("sentences encoded: %d computing, %d with stored vectors (%d corpus sentences)", computed, stored, len(sents))
	}

	// The evaluation loads the same tables, with the same predictions.
	sts := smallSTS(t, tmp)
	evalArgs := func(out string) []string {
		return []string{"--sts=" + sts, "--index=" + corpusOut + "/index", "--chunks=" + corpusOut + "/chunks/*.parquet",
			"--model=" + model, "--output=" + out, "--preset=demo", "--top_k=40", "--rerank=20", "--set_size=6",
			"--pairs=6", "--variants=origin,paper", "--workers=1"}
	}
	run(t, "evaluate", evalArgs(filepath.Join(tmp, "eval-computed"))...)
	stdout = run(t, "evaluate", append(evalArgs(filepath.Join(tmp, "eval-stored")), "--vectors="+corpusOut+"/vectors")...)
	if strings.Count(stdout, "evaluate: sentence vectors loaded from "+corpusOut+"/vectors/") != 2 {
		t.Fatalf("evaluate did not load both tables:\n%s", stdout)
	}
	computedTSV, _ := os.ReadFile(filepath.Join(tmp, "eval-computed", "pairs.tsv"))
	storedTSV, _ := os.ReadFile(filepath.Join(tmp, "eval-stored", "pairs.tsv"))
	if len(computedTSV) == 0 || !bytes.Equal(computedTSV, storedTSV) {
		t.Fatalf("evaluate's predictions with stored vectors differ:\n%s\nwithout:\n%s", storedTSV, computedTSV)
	}
	// With the store's strings and the vectors mapped, the same again.
	stdout = run(t, "evaluate", append(evalArgs(filepath.Join(tmp, "eval-mapped")), "--vectors="+corpusOut+"/vectors", "--map_corpus")...)
	if strings.Count(stdout, "evaluate: sentence vectors loaded from "+corpusOut+"/vectors/") != 2 || !strings.Contains(stdout, "are in memory maps under") {
		t.Fatalf("evaluate --map_corpus did not load both tables into memory maps:\n%s", stdout)
	}
	mappedTSV, err := os.ReadFile(filepath.Join(tmp, "eval-mapped", "pairs.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(computedTSV, mappedTSV) {
		t.Fatalf("evaluate's predictions with a mapped corpus differ:\n%s\nwithout:\n%s", mappedTSV, computedTSV)
	}
	encoded := func(out string) int64 {
		var res struct {
			Engine struct{ SentencesEncoded int64 } `json:"engine"`
		}
		b, err := os.ReadFile(filepath.Join(tmp, out, "results.json"))
		if err != nil || json.Unmarshal(b, &res) != nil {
			t.Fatalf("%s/results.json: %v", out, err)
		}
		return res.Engine.SentencesEncoded
	}
	if c, s := encoded("eval-computed"), encoded("eval-stored"); s >= c {
		t.Fatalf("evaluate encoded %d sentences with stored vectors, %d without", s, c)
	}

	// --vectors named explicitly must hold the models' vectors.
	empty := filepath.Join(tmp, "no-vectors")
	os.MkdirAll(empty, 0o755)
	code, stderr := runExit(t, "harvest", append(harvestArgs(corpusOut, model, filepath.Join(tmp, "c")), "--vectors="+empty)...)
	if l := firstLine(stderr); code == 0 || !strings.Contains(l, empty+" holds none of these models' sentence vectors") {
		t.Fatalf("harvest with an empty --vectors: exit %d: %q", code, l)
	}
	code, stderr = runExit(t, "evaluate", append(evalArgs(filepath.Join(tmp, "eval-none")), "--vectors="+empty)...)
	if l := firstLine(stderr); code == 0 || !strings.Contains(l, empty+" holds none of these models' sentence vectors") {
		t.Fatalf("evaluate with an empty --vectors: exit %d: %q", code, l)
	}
	// A table that lost a file is refused before the job starts.
	parts, _ := filepath.Glob(tables[1] + "/part-*.parquet")
	os.Remove(parts[0])
	code, stderr = runExit(t, "harvest", harvestArgs(corpusOut, model, filepath.Join(tmp, "d"))...)
	if l := firstLine(stderr); code == 0 || !strings.Contains(l, filepath.Base(parts[0])) {
		t.Fatalf("harvest with a damaged vector table: exit %d: %q", code, l)
	}
}
