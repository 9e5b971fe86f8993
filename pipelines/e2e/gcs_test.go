package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/retrieval"
	"github.com/ctxsim/ctxsim/storage"
	"github.com/ctxsim/ctxsim/storage/gcstest"
)

// TestHarvestOnGCS runs index, train and harvest with every input and
// output in a bucket of a fake GCS server on 127.0.0.1, and checks the
// labeled pairs equal those of the same run on local disk.
func TestHarvestOnGCS(t *testing.T) {
	gcstest.Start(t, "ctxsim-e2e")
	t.Setenv("CTXSIM_CACHE_DIR", t.TempDir())
	ctx := context.Background()
	tmp := t.TempDir()
	data, err := os.ReadFile(cleanCorpus(t, tmp, 40))
	if err != nil {
		t.Fatal(err)
	}
	const b = "gs://ctxsim-e2e"
	if err := storage.WriteFile(ctx, b+"/input/c.jsonl.gz", data); err != nil {
		t.Fatal(err)
	}
	run(t, "index", "--input="+b+"/input/*.jsonl.gz", "--output="+b+"/corpus", "--shards=2")
	meta, err := storage.ReadFile(ctx, b+"/corpus/index/"+retrieval.MetaFile)
	if err != nil {
		t.Fatalf("index metadata not in the bucket: %v", err)
	}
	var m retrieval.Meta
	if err := json.Unmarshal(meta, &m); err != nil || m.NumShards != 2 || m.Corpus.Count == 0 {
		t.Fatalf("index metadata %s: %v", meta, err)
	}
	run(t, "train", "--input="+b+"/input/c.jsonl.gz", "--output="+b+"/model", "--preset=tiny", "--models=ctx,disc,gen",
		"--vocab_size=400", "--disc_steps=20", "--gen_steps=20", "--held_out=0.2", "--eval_examples=100",
		"--ctx_batch=32", "--rank_tasks=20")
	for _, f := range []string{"ctx.safetensors", "tokenizer.json", "disc.safetensors", "gen.safetensors", "train-results.json"} {
		if ok, err := storage.Exists(ctx, b+"/model/"+f); err != nil || !ok {
			t.Fatalf("model file %s not in the bucket: %v", f, err)
		}
	}
	out := run(t, "harvest", harvestArgs(b+"/corpus", b+"/model", b+"/harvest")...)
	if !strings.Contains(out, "pairs in "+b+"/harvest/pairs") {
		t.Fatalf("harvest output:\n%s", out)
	}
	if ok, err := storage.Exists(ctx, b+"/harvest/summary.json"); err != nil || !ok {
		t.Fatalf("summary.json not in the bucket: %v", err)
	}
	got, err := storage.Fetch(ctx, b+"/harvest/pairs")
	if err != nil {
		t.Fatal(err)
	}
	remotePairs := sortedPairs(t, got)

	// The refresh job on the bucket: a first version, then a refresh after
	// a document is added, which fetches and updates the first version's
	// index; a rerun changes nothing.
	refresh := func(in string) string {
		return run(t, "refresh", "--input="+in, "--root="+b+"/labels", "--model="+b+"/model", "--preset=demo",
			"--top_k=60", "--rerank=24", "--set_size=8", "--sample=0.3", "--shards=2", "--parquet_shards=2")
	}
	refresh(b + "/input/c.jsonl.gz")
	more := append([]byte(nil), data...)
	if err := storage.WriteFile(ctx, b+"/input2/c.jsonl.gz", more); err != nil {
		t.Fatal(err)
	}
	gz(t, filepath.Join(tmp, "extra.jsonl.gz"), []byte(goodDoc(77)+"\n"))
	extra, _ := os.ReadFile(filepath.Join(tmp, "extra.jsonl.gz"))
	if err := storage.WriteFile(ctx, b+"/input2/extra.jsonl.gz", extra); err != nil {
		t.Fatal(err)
	}
	refresh(b + "/input2/*.jsonl.gz")
	cur, err := storage.ReadFile(ctx, b+"/labels/CURRENT.json")
	if err != nil || !strings.Contains(string(cur), `"v000002"`) {
		t.Fatalf("CURRENT.json on GCS: %s, %v", cur, err)
	}
	var man struct {
		ChunksAdded int  `json:"chunks_added"`
		Reused      bool `json:"reused_parent"`
	}
	mb, err := storage.ReadFile(ctx, b+"/labels/versions/v000002/MANIFEST.json")
	if err != nil || json.Unmarshal(mb, &man) != nil || man.ChunksAdded == 0 || !man.Reused {
		t.Fatalf("refresh manifest on GCS: %s, %v", mb, err)
	}
	if out := refresh(b + "/input2/*.jsonl.gz"); !strings.Contains(out, "nothing to do") {
		t.Fatalf("a repeated refresh on GCS did work:\n%s", out)
	}

	// The same run on local disk labels the same pairs, bit for bit.
	corpusOut, model := harvestFixture(t)
	local := filepath.Join(t.TempDir(), "harvest")
	run(t, "harvest", harvestArgs(corpusOut, model, local)...)
	localPairs := sortedPairs(t, local+"/pairs")
	if len(localPairs) == 0 {
		t.Fatal("the local run labeled no pairs")
	}
	if !reflect.DeepEqual(remotePairs, localPairs) {
		t.Fatalf("pairs on GCS differ from the local run: %d vs %d rows", len(remotePairs), len(localPairs))
	}
}
