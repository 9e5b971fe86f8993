package retrievejob

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/pipelines/internal/beamjob/beamtest"
	"github.com/ctxsim/ctxsim/pipelines/internal/indexjob"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/storage"
)

func TestMain(m *testing.M) { beamtest.Main(m) }

func config(t *testing.T, args ...string) Config {
	t.Helper()
	var c Config
	if err := jobrun.ParseArgs(&c, args...); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRunRetrievesQueries(t *testing.T) {
	dir := t.TempDir()
	var docs []string
	for i := range 8 {
		docs = append(docs, fmt.Sprintf(`{"doc_id": "d%d", "paragraphs": ["The river %d floods the valley. Farmers %d move the cattle uphill. The rain stops at night."]}`, i, i, i))
	}
	in := filepath.Join(dir, "c.jsonl")
	os.WriteFile(in, []byte(strings.Join(docs, "\n")+"\n"), 0o644)
	var ic indexjob.Config
	if err := jobrun.ParseArgs(&ic, "--input="+in, "--output="+filepath.Join(dir, "corpus"), "--shards=1", "--parquet_shards=1"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := indexjob.Run(ctx, ic); err != nil {
		t.Fatal(err)
	}
	q := filepath.Join(dir, "q.txt")
	os.WriteFile(q, []byte("the river floods the valley\nfarmers move the cattle uphill\n"), 0o644)
	out := filepath.Join(dir, "hits")
	c := config(t, "--index="+filepath.Join(dir, "corpus/index"), "--queries="+q, "--output="+out, "--k=5", "--parquet_shards=1")
	if err := Run(ctx, c); err != nil {
		t.Fatal(err)
	}
	rs, err := storage.ReadTable[schemas.Retrieval](ctx, filepath.Join(out, "hits"))
	if err != nil || len(rs) != 2 {
		t.Fatalf("%d retrievals (%v), want 2", len(rs), err)
	}
	for _, r := range rs {
		if len(r.Hits) != 5 {
			t.Errorf("%q: %d hits, want 5", r.Text, len(r.Hits))
		}
	}

	// STS files, in the layouts bin/evaluate reads, give their pairs'
	// sentences (each distinct one once), not their lines.
	for name, body := range map[string]string{
		"sts-dev.csv": "main-news\tx\t2012\t0000\t4.5\tthe river floods the valley\tfarmers move the cattle uphill\n" +
			"main-news\tx\t2012\t0001\t1.0\tthe rain stops at night\tthe river floods the valley\n",
		"stsb.csv": "sentence1,sentence2,score\nthe river floods the valley,farmers move the cattle uphill,0.9\n" +
			"the rain stops at night,\"the river floods the valley\",0.2\n",
		"tsv.tsv": "score\ts1\ts2\tgenre\n4.5\tthe river floods the valley\tfarmers move the cattle uphill\tx\n" +
			"1\tthe rain stops at night\tthe river floods the valley\tx\n",
	} {
		q := filepath.Join(dir, name)
		os.WriteFile(q, []byte(body), 0o644)
		out := filepath.Join(dir, "hits-"+name)
		if err := Run(ctx, config(t, "--index="+filepath.Join(dir, "corpus/index"), "--queries="+q, "--output="+out, "--k=5", "--parquet_shards=1")); err != nil {
			t.Fatal(err)
		}
		rs, err := storage.ReadTable[schemas.Retrieval](ctx, filepath.Join(out, "hits"))
		var texts []string
		for _, r := range rs {
			texts = append(texts, r.Text)
		}
		slices.Sort(texts)
		if want := []string{"farmers move the cattle uphill", "the rain stops at night", "the river floods the valley"}; err != nil || !slices.Equal(texts, want) {
			t.Errorf("%s: queries %q (%v), want %q", name, texts, err, want)
		}
	}

	both := config(t, "--index=x", "--queries=q", "--sentences=s", "--output="+out)
	if err := Run(ctx, both); err == nil || !strings.Contains(err.Error(), "exactly one") {
		t.Fatalf("both inputs given: %v", err)
	}
	missing := config(t, "--index="+filepath.Join(dir, "none"), "--queries="+q, "--output="+out)
	if err := Run(ctx, missing); err == nil || !strings.Contains(err.Error(), "none") {
		t.Fatalf("missing index: %v", err)
	}
}
