package surrogatejob

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/contrast"
	"github.com/ctxsim/ctxsim/scoring/examples"
	"github.com/ctxsim/ctxsim/scoring/surrogate"
	"github.com/ctxsim/ctxsim/storage"
)

// topics are the words of a toy corpus whose sentences each keep to one
// topic.
var topics = [][]string{
	{"ship", "sea", "sail", "harbour", "wind", "crew"},
	{"court", "judge", "law", "trial", "jury", "verdict"},
	{"kernel", "module", "driver", "memory", "boot", "config"},
	{"bread", "flour", "oven", "bake", "dough", "yeast"},
}

func toySentence(topic, i int) string {
	t := topics[topic%len(topics)]
	return fmt.Sprintf("the %s and the %s by the %s", t[i%6], t[(2*i+1)%6], t[(3*i+2)%6])
}

// toyModelDir trains a small contrastive context model on the toy corpus
// and saves it as a model directory.
func toyModelDir(t *testing.T) string {
	t.Helper()
	var docs []examples.Doc
	for i := range 16 {
		d := examples.Doc{ID: fmt.Sprintf("d%d", i)}
		for j := range 8 {
			d.Sentences = append(d.Sentences, toySentence(i, i+j))
		}
		docs = append(docs, d)
	}
	cfg := contrast.DefaultConfig()
	cfg.Dim, cfg.Vocab, cfg.Buckets, cfg.MinCount, cfg.Batch, cfg.Epochs, cfg.WarmupSteps = 8, 50, 4, 1, 8, 1, 1
	m, _, err := contrast.Train(cfg, docs, contrast.TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "model")
	if err := m.Save(dir, nil); err != nil {
		t.Fatal(err)
	}
	return dir
}

// writePairs writes n pairs labelled with the models of fingerprint fp
// (plus one duplicate pair ID) as a Parquet file in dir: every fifth pair
// is in the dev split, the rest in train; pairs of one topic are labelled
// 1, others 0.
func writePairs(t *testing.T, dir, fp string, n int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var rows []schemas.LabeledPair
	for i := range n {
		a, b := i%4, (i/4)%4
		split := "train"
		if i%5 == 4 {
			split = "dev"
		}
		var label float32
		if a == b {
			label = 1
		}
		rows = append(rows, schemas.LabeledPair{PairID: fmt.Sprintf("p%03d", i), Sentence1: toySentence(a, i),
			Sentence2: toySentence(b, i+1), Label: label, Split: split, ModelFingerprint: fp})
	}
	rows = append(rows, rows[0])
	f, err := os.Create(filepath.Join(dir, "pairs.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := schemas.NewWriter(f, reflect.TypeOf(schemas.LabeledPair{}), schemas.WriterOptions{})
	for _, r := range rows {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// writeSTS writes an STS file (header; score, s1, s2) of n pairs.
func writeSTS(t *testing.T, path string, n int) {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("score\ts1\ts2\n")
	for i := range n {
		a, b := i%4, (i+i/4)%4
		score := 1.0
		if a == b {
			score = 4.5
		}
		fmt.Fprintf(&sb, "%g\t%s\t%s\n", score+float64(i%3)*0.1, toySentence(a, i+7), toySentence(b, i+3))
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRun trains an encoder on a tiny harvest with the contrastive model's
// tokens, evaluates it on a tiny STS file, then applies it.
func TestRun(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	model := toyModelDir(t)
	models, err := resources.LoadModels(ctx, model)
	if err != nil {
		t.Fatal(err)
	}
	pairs := filepath.Join(tmp, "pairs")
	writePairs(t, pairs, models.Fingerprint, 40)
	sts := filepath.Join(tmp, "sts.tsv")
	writeSTS(t, sts, 12)

	c := defaults(t)
	c.Pairs, c.Model, c.Output, c.STS = pairs, model, filepath.Join(tmp, "out"), sts
	c.Dim, c.Epochs, c.BatchSize = 8, 2, 8
	if err := Run(ctx, c); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(c.Output, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		PairsRead   int            `json:"pairs_read"`
		Duplicates  int            `json:"duplicates_dropped"`
		BySplit     map[string]int `json:"pairs_by_split"`
		TrainPairs  int            `json:"train_pairs"`
		DevPairs    int            `json:"dev_pairs"`
		TokenizerFP string         `json:"tokenizer_fingerprint"`
		STSPairs    int            `json:"sts_pairs"`
		Config      map[string]any `json:"config"`
		Results     []struct {
			Name, Kind string
			TrainPairs int `json:"train_pairs"`
			Spearman   any `json:"spearman_x100"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if res.PairsRead != 41 || res.Duplicates != 1 || res.BySplit["train"] != 32 || res.BySplit["dev"] != 8 ||
		res.TrainPairs != 32 || res.DevPairs != 8 || res.STSPairs != 12 || res.Config["tokens"] != "ctx" {
		t.Fatalf("results.json: %s", b)
	}
	var names []string
	for _, r := range res.Results {
		names = append(names, r.Kind+":"+r.Name)
		if r.Spearman == nil {
			t.Errorf("%s: no STS Spearman", r.Name)
		}
	}
	if got := strings.Join(names, " "); got != "surrogate:l2 baseline:tfidf baseline:untrained" {
		t.Fatalf("results %s", got)
	}
	if res.Results[0].TrainPairs != 32 {
		t.Errorf("l2 trained on %d pairs, want 32", res.Results[0].TrainPairs)
	}
	if _, _, err := surrogate.Load(filepath.Join(c.Output, "l2"), res.TokenizerFP); err != nil {
		t.Fatalf("the trained encoder does not load: %v", err)
	}
	if _, err := os.Stat(filepath.Join(c.Output, "report.html")); err != nil {
		t.Error(err)
	}

	// --init=ctx_words starts from unit word vectors: untrained (zero
	// epochs), every row of the saved table has length 1 or 0.
	w := c
	w.Init, w.InitGiven, w.Epochs, w.Dim, w.DimGiven = "ctx_words", true, 0, 300, false
	w.Output, w.STS = filepath.Join(tmp, "words"), ""
	if err := Run(ctx, w); err != nil {
		t.Fatal(err)
	}
	wm, _, err := surrogate.Load(filepath.Join(w.Output, "l2"), res.TokenizerFP)
	if err != nil {
		t.Fatal(err)
	}
	units := 0
	for r := 0; r < wm.Cfg.Vocab; r++ {
		var ss float64
		for _, x := range wm.Emb.Value.Data[r*wm.Cfg.Dim : (r+1)*wm.Cfg.Dim] {
			ss += float64(x) * float64(x)
		}
		if math.Abs(ss-1) < 1e-4 {
			units++
		} else if ss != 0 {
			t.Fatalf("--init=ctx_words: row %d has norm² %v", r, ss)
		}
	}
	if units == 0 {
		t.Fatal("--init=ctx_words: no unit rows")
	}

	// --weight_lr learns the word weights: the saved ones leave the IDF
	// they start from (the l2 run above keeps them) and stay positive.
	lw := c
	lw.WeightLR, lw.Output, lw.STS = 0.05, filepath.Join(tmp, "weights"), ""
	if err := Run(ctx, lw); err != nil {
		t.Fatal(err)
	}
	fixed, _, err := surrogate.Load(filepath.Join(c.Output, "l2"), res.TokenizerFP)
	if err != nil {
		t.Fatal(err)
	}
	learned, _, err := surrogate.Load(filepath.Join(lw.Output, "l2"), res.TokenizerFP)
	if err != nil {
		t.Fatal(err)
	}
	moved := 0
	for id, x := range learned.Weights.Value.Data {
		if f := fixed.Weights.Value.Data[id]; x != f {
			moved++
			if !(x > 0) || f == 0 {
				t.Fatalf("--weight_lr: token %d weighs %v (IDF %v)", id, x, f)
			}
		}
	}
	if moved == 0 {
		t.Fatal("--weight_lr: no word weight moved")
	}

	// Apply mode: embed lines and score the STS pairs with the encoder.
	sents := filepath.Join(tmp, "sents.txt")
	if err := os.WriteFile(sents, []byte(toySentence(0, 1)+"\n\n"+toySentence(2, 3)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := defaults(t)
	a.Load, a.Model, a.Output, a.Embed, a.Score = filepath.Join(c.Output, "l2"), model, filepath.Join(tmp, "applied"), sents, sts
	if err := Run(ctx, a); err != nil {
		t.Fatal(err)
	}
	scores, err := os.ReadFile(filepath.Join(a.Output, scoresFile))
	if err != nil || strings.Count(string(scores), "\n") != 13 || !strings.HasPrefix(string(scores), "score\ts1\ts2\n") {
		t.Fatalf("scores.tsv (%v):\n%s", err, scores)
	}
	var embeddings []schemas.SentenceEmbedding
	if _, err := storage.ReadRows(ctx, filepath.Join(a.Output, embeddingsFile), reflect.TypeOf(schemas.SentenceEmbedding{}), func(v any) error {
		embeddings = append(embeddings, v.(schemas.SentenceEmbedding))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(embeddings) != 2 || embeddings[0].Line != 1 || embeddings[1].Line != 3 || len(embeddings[0].Embedding) != 8 {
		t.Fatalf("embeddings: %+v", embeddings)
	}

	// Errors that need the model directory: no pairs, no training split,
	// pairs of other models.
	bad := filepath.Join(tmp, "bad")
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Pairs = filepath.Join(tmp, "none/*.parquet") }, "no pairs found"},
		{func(c *Config) { c.Split = "nosuch" }, "no training pairs: 40 pairs read from 1 files, none in split nosuch (pairs by split: dev 8, train 32)"},
		{func(c *Config) { c.Init = "coherence" }, "--init=coherence needs the coherence model"},
		{func(c *Config) { c.Tokens = "subword" }, "--tokens=subword: the model directory has no tokenizer"},
		{func(c *Config) { c.Model = pairs }, "holds no trained model"},
	} {
		cb := c
		cb.Output, cb.STS = bad, ""
		tc.edit(&cb)
		if err := Run(ctx, cb); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Run: %v, want an error containing %q", err, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(bad, "l2")); err == nil {
		t.Error("a failed run saved a model")
	}
}
