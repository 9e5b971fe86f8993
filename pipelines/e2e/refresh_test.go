package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
)

// checkVectorsCarried checks that the second version under root stored
// every sentence's vector, copying the first version's for the sentences
// both hold (the encode counters in its output out say how many), and
// loaded them.
func checkVectorsCarried(t *testing.T, root, out string) {
	t.Helper()
	if !strings.Contains(out, "the harvest loads the sentence vectors in "+filepath.Join(root, "versions/v000002/corpus/vectors")) {
		t.Fatalf("refresh --vectors=encode did not load its vectors:\n%s", out)
	}
	tables, _ := filepath.Glob(filepath.Join(root, "versions/v000002/corpus/vectors/*"))
	if len(tables) != 2 {
		t.Fatalf("vector tables %v", tables)
	}
	sents := readAll[schemas.Sentence](t, filepath.Join(root, "versions/v000002/corpus/sentences"))
	for _, table := range tables {
		name := filepath.Base(table)
		before := map[string][]float32{}
		for _, v := range readAll[schemas.SentenceVector](t, filepath.Join(root, "versions/v000001/corpus/vectors", name)) {
			before[v.SentenceID] = v.Vector
		}
		now := readAll[schemas.SentenceVector](t, table)
		shared := 0
		for _, v := range now {
			if b, ok := before[v.SentenceID]; ok {
				shared++
				if !reflect.DeepEqual(b, v.Vector) {
					t.Fatalf("%s: sentence %s has another vector than in version 1", name, v.SentenceID)
				}
			}
		}
		term, _, _ := strings.Cut(name, "-")
		var reused, encoded int
		for _, l := range strings.Split(out, "\n") {
			f := strings.Fields(l)
			if len(f) == 2 && f[0] == "encode/vectors_reused_"+term {
				reused, _ = strconv.Atoi(f[1])
			}
			if len(f) == 2 && f[0] == "encode/vectors_"+term {
				encoded, _ = strconv.Atoi(f[1])
			}
		}
		t.Logf("%s: %d vectors, %d copied from version 1, %d encoded", name, len(now), reused, encoded)
		if len(now) != len(sents) || shared == 0 || reused != shared || encoded != len(now)-shared {
			t.Fatalf("%s: %d vectors for %d sentences, %d of them in version 1; counters: %d reused, %d encoded",
				name, len(now), len(sents), shared, reused, encoded)
		}
	}
}

type manifest struct {
	Version          string           `json:"version"`
	Parent           string           `json:"parent"`
	IndexFingerprint string           `json:"index_fingerprint"`
	ChunksAdded      int              `json:"chunks_added"`
	ChunksRemoved    int              `json:"chunks_removed"`
	Reused           bool             `json:"reused_parent"`
	Counters         map[string]int64 `json:"counters"`
}

func readManifest(t *testing.T, root, version string) manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "versions", version, "MANIFEST.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func currentVersion(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "CURRENT.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ Version string }
	json.Unmarshal(b, &c)
	return c.Version
}

func writeCorpus(t *testing.T, path string, docs []string) {
	t.Helper()
	gz(t, path, []byte(strings.Join(docs, "\n")+"\n"))
}

// TestRefresh refreshes a harvest after documents were added, changed and
// removed, and checks the result against a full run on the final corpus:
// the same index, the same context sets for new sentences, the same pairs,
// and labels recomputed only where a new sentence is involved.
func TestRefresh(t *testing.T) {
	_, model := harvestFixture(t)
	tmp := t.TempDir()
	var base, final []string
	for i := range 40 {
		base = append(base, goodDoc(i))
	}
	for i := 4; i < 44; i++ {
		d := goodDoc(i)
		if i == 10 { // edited in place
			d = strings.Replace(d, "opens here", "begins here instead", 1)
		}
		final = append(final, d)
	}
	baseIn, finalIn := filepath.Join(tmp, "base.jsonl.gz"), filepath.Join(tmp, "final.jsonl.gz")
	writeCorpus(t, baseIn, base)
	writeCorpus(t, finalIn, final)
	args := func(in, root string) []string {
		return []string{"--input=" + in, "--root=" + root, "--model=" + model, "--preset=demo", "--top_k=60",
			"--rerank=24", "--set_size=8", "--sample=0.5", "--shards=2", "--parquet_shards=2", "--keep_versions=2"}
	}
	// The refreshes under root store their sentence vectors and load them
	// (the second copies the first's where the sentences are the same);
	// the full run below computes them in its workers, and everything is
	// compared with it.
	root := filepath.Join(tmp, "root")
	if code, stderr := runExit(t, "refresh", append(args(baseIn, root), "--vectors=some")...); code == 0 || !strings.Contains(stderr, "--vectors") {
		t.Fatalf("--vectors=some: exit %d, %s", code, stderr)
	}
	run(t, "refresh", append(args(baseIn, root), "--vectors=encode")...)
	if v := currentVersion(t, root); v != "v000001" {
		t.Fatalf("current version %q after the first run", v)
	}
	v1 := readManifest(t, root, "v000001")
	v1Pairs := sortedPairs(t, filepath.Join(root, "versions/v000001/harvest/pairs"))
	v1Sets := sortedSets(t, filepath.Join(root, "versions/v000001/harvest/context_sets"))
	if len(v1Pairs) == 0 || v1.Reused || v1.ChunksRemoved != 0 {
		t.Fatalf("first version: %d pairs, manifest %+v", len(v1Pairs), v1)
	}

	// The same corpus again: nothing changes.
	cur, _ := os.ReadFile(filepath.Join(root, "CURRENT.json"))
	out := run(t, "refresh", append(args(baseIn, root), "--vectors=encode")...)
	if !strings.Contains(out, "nothing to do") {
		t.Fatalf("a repeated refresh did work:\n%s", out)
	}
	again, _ := os.ReadFile(filepath.Join(root, "CURRENT.json"))
	if string(again) != string(cur) {
		t.Fatal("a repeated refresh moved CURRENT.json")
	}
	if _, err := os.Stat(filepath.Join(root, "versions/v000002")); !os.IsNotExist(err) {
		t.Fatalf("a repeated refresh left a version behind: %v", err)
	}

	// The changed corpus.
	out = run(t, "refresh", append(args(finalIn, root), "--vectors=encode")...)
	checkVectorsCarried(t, root, out)
	if v := currentVersion(t, root); v != "v000002" {
		t.Fatalf("current version %q after the refresh", v)
	}
	v2 := readManifest(t, root, "v000002")
	if !v2.Reused || v2.Parent != "v000001" || v2.ChunksAdded == 0 || v2.ChunksRemoved == 0 {
		t.Fatalf("refresh manifest %+v", v2)
	}
	if v2.Counters["refresh/context_sets_reused"] == 0 || v2.Counters["harvest/context_sets"] == 0 {
		t.Fatalf("refresh reused %d sets and computed %d", v2.Counters["refresh/context_sets_reused"], v2.Counters["harvest/context_sets"])
	}
	checkReport(t, filepath.Join(root, "versions/v000002/harvest/report.html"), 4, "Reuse against a full run",
		"kept from the parent")
	// The old version is still readable.
	if got := sortedPairs(t, filepath.Join(root, "versions/v000001/harvest/pairs")); len(got) != len(v1Pairs) {
		t.Fatalf("version 1 changed under the refresh: %d pairs, was %d", len(got), len(v1Pairs))
	}

	// A full run on the final corpus, its workers computing the sentence
	// vectors.
	full := filepath.Join(tmp, "full")
	run(t, "refresh", args(finalIn, full)...)
	f1 := readManifest(t, full, "v000001")
	t.Logf("corpus sentences encoded by the harvest: %d loading stored vectors (version 1), %d computing them (full run)",
		v1.Counters["harvest/sentences_encoded"], f1.Counters["harvest/sentences_encoded"])
	if f1.Counters["harvest/sentences_encoded"] <= 2*v1.Counters["harvest/sentences_encoded"] {
		t.Fatalf("computing its vectors the full run encoded %d sentences; loading them, version 1 of a corpus as large encoded %d",
			f1.Counters["harvest/sentences_encoded"], v1.Counters["harvest/sentences_encoded"])
	}
	if f1.IndexFingerprint != v2.IndexFingerprint {
		t.Fatalf("updated index %s differs from the rebuilt one %s", v2.IndexFingerprint, f1.IndexFingerprint)
	}
	refPairs := sortedPairs(t, filepath.Join(root, "versions/v000002/harvest/pairs"))
	checkExport(t, filepath.Join(root, "versions/v000002/harvest"), refPairs)
	fullPairs := sortedPairs(t, filepath.Join(full, "versions/v000001/harvest/pairs"))
	refSets := sortedSets(t, filepath.Join(root, "versions/v000002/harvest/context_sets"))
	fullSets := sortedSets(t, filepath.Join(full, "versions/v000001/harvest/context_sets"))
	old := map[string]schemas.ContextSet{}
	for _, cs := range v1Sets {
		old[cs.SentenceID] = cs
	}
	fullByID := map[string]schemas.ContextSet{}
	for _, cs := range fullSets {
		fullByID[cs.SentenceID] = cs
	}
	if len(refSets) != len(fullSets) {
		t.Fatalf("refresh has %d context sets, the full run %d", len(refSets), len(fullSets))
	}
	newSents, kept, recomputed := 0, 0, 0
	for _, cs := range refSets {
		want, ok := fullByID[cs.SentenceID]
		if !ok {
			t.Fatalf("sentence %s has a set in the refresh only", cs.SentenceID)
		}
		prev, wasOld := old[cs.SentenceID]
		switch {
		case wasOld && sameSet(cs, prev):
			kept++
		case wasOld:
			// Recomputed because it used a chunk that left the corpus.
			recomputed++
			if !sameSet(cs, want) {
				t.Fatalf("sentence %s: its recomputed set differs from the full run's", cs.SentenceID)
			}
		default:
			newSents++
			if !sameSet(cs, want) {
				t.Fatalf("new sentence %s: its set differs from the full run's", cs.SentenceID)
			}
		}
	}
	if int64(kept) != v2.Counters["refresh/context_sets_reused"] || int64(recomputed) != v2.Counters["refresh/context_sets_stale"] {
		t.Fatalf("%d sets kept and %d recomputed; counters say %d and %d", kept, recomputed,
			v2.Counters["refresh/context_sets_reused"], v2.Counters["refresh/context_sets_stale"])
	}
	if recomputed == 0 {
		t.Fatal("no set used a removed chunk: the test corpus does not exercise staleness")
	}
	if newSents == 0 {
		t.Fatal("no new sentences in the refresh")
	}
	if len(refPairs) != len(fullPairs) {
		for _, k := range []string{"harvest/pairs_labeled", "refresh/labels_copied", "refresh/pairs_new", "refresh/labels_dropped", "harvest/context_sets", "refresh/context_sets_reused", "retrieve/queries", "harvest/sentences_kept"} {
			t.Logf("%s: refresh %d, full %d", k, v2.Counters[k], f1.Counters[k])
		}
		t.Fatalf("refresh labeled %d pairs, the full run %d", len(refPairs), len(fullPairs))
	}
	prevPair := map[string]schemas.LabeledPair{}
	for _, p := range v1Pairs {
		prevPair[p.PairID] = p
	}
	copied, bothNew := 0, 0
	for i, p := range refPairs {
		q := fullPairs[i]
		if p.PairID != q.PairID || p.Stratum != q.Stratum || p.Split != q.Split {
			t.Fatalf("pair %d: refresh %s (%s), full run %s (%s)", i, p.PairID, p.Stratum, q.PairID, q.Stratum)
		}
		if pp, ok := prevPair[p.PairID]; ok && pp.ContextsDigest == p.ContextsDigest {
			copied++
			// Eq. 4 is copied; the label's other parts are computed
			// again (checked against the full run below).
			if p.LabelContext != pp.LabelContext || p.IndexFingerprint != pp.IndexFingerprint {
				t.Fatalf("pair %s: copied Eq. 4 value %v (index %s), version 1 had %v (index %s)",
					p.PairID, p.LabelContext, p.IndexFingerprint, pp.LabelContext, pp.IndexFingerprint)
			}
		}
		_, o1 := old[p.SentenceID1]
		_, o2 := old[p.SentenceID2]
		if p.ContextsDigest == q.ContextsDigest && p.Label != q.Label {
			t.Fatalf("pair %s: same context sets as the full run, label %v vs %v", p.PairID, p.Label, q.Label)
		}
		if !o1 && !o2 {
			bothNew++
			if p.Label != q.Label {
				t.Fatalf("pair %s of two new sentences: label %v, full run %v", p.PairID, p.Label, q.Label)
			}
		}
	}
	if int64(copied) != v2.Counters["refresh/labels_copied"] || copied == 0 {
		t.Fatalf("%d pairs carry version 1 Eq. 4 values, the counter says %d", copied, v2.Counters["refresh/labels_copied"])
	}
	t.Logf("refresh: %d pairs (%d copied, %d between new sentences); sets: %d new, %d kept, %d recomputed",
		len(refPairs), copied, bothNew, newSents, kept, recomputed)

	// A third version expires the first (--keep_versions=2).
	third := filepath.Join(tmp, "third.jsonl.gz")
	writeCorpus(t, third, append(final, goodDoc(50)))
	run(t, "refresh", args(third, root)...)
	if _, err := os.Stat(filepath.Join(root, "versions/v000001")); !os.IsNotExist(err) {
		t.Fatalf("version 1 did not expire: %v", err)
	}
	if v := currentVersion(t, root); v != "v000003" {
		t.Fatalf("current version %q", v)
	}
	readManifest(t, root, "v000002")
}

func sameSet(a, b schemas.ContextSet) bool {
	if a.SentenceID != b.SentenceID || len(a.Contexts) != len(b.Contexts) {
		return false
	}
	for i := range a.Contexts {
		x, y := a.Contexts[i], b.Contexts[i]
		if x.ChunkID != y.ChunkID || x.Slot != y.Slot || x.Score != y.Score {
			return false
		}
	}
	return true
}

// checkExport checks a harvest's export for training under out against
// its pairs: each split's table holds that split's pairs, with their
// labels clipped to [0, 1], and the files carry the harvest's provenance.
func checkExport(t *testing.T, out string, pairs []schemas.LabeledPair) {
	t.Helper()
	want := map[string]map[schemas.TrainingPair]int{}
	n := map[string]int{}
	for _, p := range pairs {
		if want[p.Split] == nil {
			want[p.Split] = map[schemas.TrainingPair]int{}
		}
		want[p.Split][schemas.TrainingPair{Sentence1: p.Sentence1, Sentence2: p.Sentence2, Score: min(max(p.Label, 0), 1)}]++
		n[p.Split]++
	}
	for _, split := range []string{"train", "dev", "test"} {
		dir := filepath.Join(out, "export", split)
		got := readAll[schemas.TrainingPair](t, dir)
		if len(got) != n[split] {
			t.Fatalf("%s: %d pairs, the pairs table has %d in %s", dir, len(got), n[split], split)
		}
		for _, p := range got {
			if want[split][p] == 0 {
				t.Fatalf("%s: %+v is not a pair of the split with its label clipped to [0, 1]", dir, p)
			}
			want[split][p]--
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
		if len(files) == 0 {
			t.Fatalf("%s: no Parquet files", dir)
		}
		meta, err := storage.ReadMetadata(context.Background(), files[0], reflect.TypeOf(schemas.TrainingPair{}))
		if err != nil || !strings.Contains(meta[schemas.MetaProvenanceKey], `"version":`) || meta[schemas.MetaScoreKey] == "" {
			t.Fatalf("%s: metadata %v (%v)", files[0], meta, err)
		}
	}
}
