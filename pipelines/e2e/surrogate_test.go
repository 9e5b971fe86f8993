package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/disc"
	"github.com/ctxsim/ctxsim/scoring/stats"
	"github.com/ctxsim/ctxsim/scoring/surrogate"
	"github.com/ctxsim/ctxsim/storage"
)

// surrogateResults is the part of the surrogate job's results.json the
// test checks.
type surrogateResults struct {
	TrainPairs          int            `json:"train_pairs"`
	TrainPairsAvailable int            `json:"train_pairs_available"`
	DevPairs            int            `json:"dev_pairs"`
	BySplit             map[string]int `json:"pairs_by_split"`
	STSPairs            int            `json:"sts_pairs"`
	STSSentences        int            `json:"sts_sentences"`
	TokenizerFP         string         `json:"tokenizer_fingerprint"`
	IDF                 struct {
		Source    string `json:"source"`
		Documents int    `json:"documents"`
	} `json:"idf"`
	Results []struct {
		Name        string   `json:"name"`
		Kind        string   `json:"kind"`
		Spearman100 *float64 `json:"spearman_x100"`
		EvalRank    *struct {
			MRR     *float64 `json:"mrr"`
			Hits1   *float64 `json:"hits1"`
			Hits3   *float64 `json:"hits3"`
			Queries int      `json:"queries"`
		} `json:"evalrank"`
		TrainPairs   int     `json:"train_pairs"`
		TrainSeconds float64 `json:"train_seconds"`
		Source       string  `json:"source"`
		Curve        *struct {
			Epochs []struct {
				TrainLoss *float64 `json:"train_loss"`
			} `json:"epochs"`
		} `json:"curve"`
		Encode *struct {
			SentencesPerSec float64 `json:"sentences_per_sec_per_core"`
		} `json:"encode"`
	} `json:"results"`
	TrainSizes    []int `json:"train_sizes"`
	LearningCurve map[string][]struct {
		Pairs       int      `json:"pairs"`
		Spearman100 *float64 `json:"spearman_x100"`
	} `json:"learning_curve"`
	Config  map[string]any     `json:"config"`
	Seconds map[string]float64 `json:"seconds"`
}

func readSurrogateResults(t *testing.T, dir, stdout string) surrogateResults {
	t.Helper()
	var res surrogateResults
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatalf("results.json: %v\n%s", err, stdout)
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatalf("results.json: %v\n%s", err, b)
	}
	return res
}

// surrogateSTS writes an STS-format file of corpus-like sentences: pairs of
// one template with different numbers score high, pairs across templates
// low, so that every encoder has something to rank.
func surrogateSTS(t *testing.T, dir string) string {
	t.Helper()
	templates := []string{
		"Document %d paragraph 1 opens here.",
		"Mr. Smith met Dr. Jones at 3.5 p.m. in the U.S. capital %d.",
		"They spoke of item %d at length.",
	}
	lines := []string{"score\ts1\ts2\tgenre"}
	for i := range 16 {
		a := i % len(templates)
		b := a
		score := 4.0 + float64(i%2)
		if i%4 >= 2 {
			b, score = (a+1)%len(templates), float64(i%2)
		}
		lines = append(lines, fmt.Sprintf("%.1f\t%s\t%s\tx", score,
			fmt.Sprintf(templates[a], i), fmt.Sprintf(templates[b], 100+i)))
	}
	path := filepath.Join(dir, "sts.tsv")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runSurrogateFail runs the surrogate job expecting it to fail, and returns
// its stderr.
func runSurrogateFail(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "surrogate"), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err == nil {
		t.Fatalf("surrogate %v succeeded, want an error\n%s", args, out.String())
	}
	return errb.String()
}

// TestSurrogate harvests pairs, trains a surrogate per objective on them,
// and checks the side-by-side evaluation, the saved models and the errors.
func TestSurrogate(t *testing.T) {
	corpusOut, model := harvestFixture(t)
	hout := filepath.Join(t.TempDir(), "harvest")
	run(t, "harvest", harvestArgs(corpusOut, model, hout)...)
	pairs := sortedPairs(t, hout+"/pairs")
	nTrain := 0
	for _, p := range pairs {
		if p.Split == "train" {
			nTrain++
		}
	}
	if nTrain < 10 {
		t.Fatalf("the harvest gave %d training pairs of %d", nTrain, len(pairs))
	}

	tmp := t.TempDir()
	sts := surrogateSTS(t, tmp)
	out := filepath.Join(tmp, "surrogate")
	pairsGlob := hout + "/pairs/*.parquet"
	stdout := run(t, "surrogate", "--pairs="+pairsGlob, "--model="+model, "--output="+out,
		"--objective=l2,contrastive,multisim", "--epochs=2", "--batch_size=16", "--lr=0.01", "--sts="+sts)
	if !strings.Contains(stdout, "Spearman x100") || !strings.Contains(stdout, "Hits@1") {
		t.Fatalf("no table printed:\n%s", stdout)
	}
	res := readSurrogateResults(t, out, stdout)
	if res.TrainPairs != nTrain || res.TrainPairsAvailable != nTrain || res.BySplit["train"] != nTrain {
		t.Fatalf("results report %d training pairs (%d available, by split %v), the table has %d",
			res.TrainPairs, res.TrainPairsAvailable, res.BySplit, nTrain)
	}
	if res.STSPairs != 16 || res.STSSentences != 32 {
		t.Fatalf("%d STS pairs and %d sentences, want 16 and 32", res.STSPairs, res.STSSentences)
	}
	if res.IDF.Source != "sts_sentences" || res.IDF.Documents != 32 {
		t.Fatalf("without --chunks the IDF should come from the 32 STS sentences: %+v", res.IDF)
	}
	var names []string
	for _, r := range res.Results {
		names = append(names, r.Name)
		if r.Spearman100 == nil || math.IsNaN(*r.Spearman100) || *r.Spearman100 < -100 || *r.Spearman100 > 100 {
			t.Errorf("%s: Spearman x100 %v", r.Name, r.Spearman100)
		}
		er := r.EvalRank
		if er == nil || er.MRR == nil || er.Hits1 == nil || er.Hits3 == nil || er.Queries == 0 {
			t.Fatalf("%s: EvalRank %+v", r.Name, er)
		}
		if !(*er.MRR > 0 && *er.MRR <= 1) || !(*er.Hits1 >= 0 && *er.Hits1 <= *er.Hits3 && *er.Hits3 <= 1) ||
			*er.Hits1 > *er.MRR {
			t.Errorf("%s: EvalRank MRR %v, Hits@1 %v, Hits@3 %v", r.Name, *er.MRR, *er.Hits1, *er.Hits3)
		}
		if r.Name == "tfidf" || r.Name == "mean_word_vectors" || r.Name == "untrained" {
			if r.Kind != "baseline" {
				t.Errorf("%s kind %q", r.Name, r.Kind)
			}
			continue
		}
		if r.Kind != "surrogate" || r.TrainPairs != nTrain || r.TrainSeconds <= 0 || r.Curve == nil ||
			len(r.Curve.Epochs) != 2 || r.Curve.Epochs[1].TrainLoss == nil {
			t.Errorf("%s: training report kind %q, %d pairs, %gs, curve %+v", r.Name, r.Kind, r.TrainPairs, r.TrainSeconds, r.Curve)
		}
		if r.Encode == nil || r.Encode.SentencesPerSec <= 0 {
			t.Errorf("%s: no encoder throughput", r.Name)
		}
		m, saved, err := surrogate.Load(filepath.Join(out, r.Name), res.TokenizerFP)
		if err != nil {
			t.Fatalf("%s: the saved model does not load: %v", r.Name, err)
		}
		if m.Dim() != 300 || saved.Info["train_pairs"] != float64(nTrain) {
			t.Errorf("%s: dim %d, info %v", r.Name, m.Dim(), saved.Info["train_pairs"])
		}
	}
	if want := []string{"l2", "contrastive", "multisim", "tfidf", "mean_word_vectors", "untrained"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("results %v, want %v", names, want)
	}
	if _, _, err := surrogate.Load(filepath.Join(out, "l2"), "another tokenizer"); err == nil {
		t.Fatal("a surrogate loaded with another tokenizer's fingerprint")
	}

	// Apply mode: embeddings for a list of sentences, and pair scores whose
	// Spearman with the gold scores is the one in results.json.
	sents := filepath.Join(tmp, "sentences.txt")
	os.WriteFile(sents, []byte("They spoke of item 4 at length.\n\nThey spoke of item 4 at length.\nDocument 2 paragraph 1 opens here.\n"), 0o644)
	applied := filepath.Join(tmp, "applied")
	run(t, "surrogate", "--load="+filepath.Join(out, "l2"), "--model="+model, "--embed="+sents, "--score="+sts, "--output="+applied)
	embs, err := storage.ReadParquet[schemas.SentenceEmbedding](context.Background(), filepath.Join(applied, "embeddings.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if len(embs) != 3 || embs[0].Line != 1 || embs[1].Line != 3 || embs[2].Line != 4 || len(embs[0].Embedding) != 300 ||
		!reflect.DeepEqual(embs[0].Embedding, embs[1].Embedding) || reflect.DeepEqual(embs[0].Embedding, embs[2].Embedding) {
		t.Fatalf("embeddings: %d rows, lines and widths %v", len(embs), embs)
	}
	scored, err := os.ReadFile(filepath.Join(applied, "scores.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	goldLines, _ := os.ReadFile(sts)
	var pred, gold []float64
	for i, l := range strings.Split(strings.TrimSpace(string(scored)), "\n")[1:] {
		var p, g float64
		fmt.Sscan(strings.Split(l, "\t")[0], &p)
		fmt.Sscan(strings.Split(strings.Split(string(goldLines), "\n")[i+1], "\t")[0], &g)
		pred, gold = append(pred, p), append(gold, g)
	}
	if len(pred) != 16 || res.Results[0].Name != "l2" || math.Abs(100*stats.Spearman(pred, gold)-*res.Results[0].Spearman100) > 1e-9 {
		t.Fatalf("scores.tsv: %d pairs, Spearman %v; results.json l2 %v", len(pred), 100*stats.Spearman(pred, gold), *res.Results[0].Spearman100)
	}
	if msg := runSurrogateFail(t, "--load="+tmp, "--model="+model, "--embed="+sents, "--output="+applied); !strings.Contains(msg, "no trained surrogate") {
		t.Errorf("--load of a directory without a model: %s", msg)
	}
	headerOnly := filepath.Join(tmp, "header.tsv")
	os.WriteFile(headerOnly, []byte("score\ts1\ts2\n"), 0o644)
	if msg := runSurrogateFail(t, "--load="+filepath.Join(out, "l2"), "--model="+model, "--score="+headerOnly,
		"--output="+filepath.Join(tmp, "applied2")); !strings.Contains(msg, "no sentence pairs after the header") {
		t.Errorf("--score of a header without pairs: %s", msg)
	}
	if msg := runSurrogateFail(t, "--model="+model, "--embed="+sents, "--output="+applied); !strings.Contains(msg, "--load") {
		t.Errorf("--embed without --load: %s", msg)
	}

	// Same data and seed: identical weights. A learning-curve point on the
	// first pairs by ID, with the IDF over the corpus chunks.
	out2 := filepath.Join(tmp, "surrogate2")
	stdout = run(t, "surrogate", "--pairs="+hout+"/pairs", "--model="+model, "--output="+out2,
		"--objective=l2", "--epochs=2", "--batch_size=16", "--lr=0.01", "--sts="+sts,
		"--chunks="+corpusOut+"/chunks/*.parquet")
	a, _ := os.ReadFile(filepath.Join(out, "l2", surrogate.WeightsFile))
	b, _ := os.ReadFile(filepath.Join(out2, "l2", surrogate.WeightsFile))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatal("two runs with the same data and seed give different weights")
	}
	if res2 := readSurrogateResults(t, out2, stdout); res2.IDF.Source != "chunks" || res2.IDF.Documents == 0 {
		t.Fatalf("with --chunks the IDF should come from the chunks: %+v", res2.IDF)
	}
	out3 := filepath.Join(tmp, "surrogate3")
	stdout = run(t, "surrogate", "--pairs="+pairsGlob, "--model="+model, "--output="+out3,
		"--objective=multisim", "--epochs=1", "--max_pairs=5")
	if res3 := readSurrogateResults(t, out3, stdout); res3.TrainPairs != 5 || len(res3.Results) != 1 ||
		res3.Results[0].Spearman100 != nil {
		t.Fatalf("--max_pairs=5 without --sts: %d training pairs, results %+v", res3.TrainPairs, res3.Results)
	}

	// A learning curve from the coherence model's embeddings, on 8 of the
	// STS pairs, beside Origin's labels for the same 8 pairs from
	// bin/evaluate.
	evalOut := filepath.Join(tmp, "eval")
	run(t, "evaluate", "--sts="+sts, "--index="+corpusOut+"/index", "--chunks="+corpusOut+"/chunks/*.parquet",
		"--model="+model, "--output="+evalOut, "--preset=demo", "--top_k=40", "--rerank=20", "--set_size=6",
		"--pairs=8", "--variants=origin,lambda(to_s:1)")
	out4 := filepath.Join(tmp, "surrogate4")
	stdout = run(t, "surrogate", "--pairs="+pairsGlob, "--model="+model, "--output="+out4, "--objective=l2,multisim",
		"--epochs=1", "--lr=0.01", "--max_pairs=3,5,0,100000", "--sts="+sts, "--sts_pairs=8", "--origin="+evalOut,
		"--init=coherence", "--tokens=subword")
	res4 := readSurrogateResults(t, out4, stdout)
	if !reflect.DeepEqual(res4.TrainSizes, []int{3, 5, nTrain}) || res4.TrainPairs != nTrain || res4.STSPairs != 8 {
		t.Fatalf("learning curve sizes %v (train pairs %d), %d STS pairs; want [3 5 %d] on 8", res4.TrainSizes,
			res4.TrainPairs, res4.STSPairs, nTrain)
	}
	names = nil
	for _, r := range res4.Results {
		names = append(names, r.Name)
		if r.Spearman100 == nil {
			t.Errorf("%s: no Spearman", r.Name)
		}
		if (r.Kind == "origin" || r.Kind == "aligned") && (r.Source != evalOut || r.EvalRank != nil) {
			t.Errorf("%s: source %q, EvalRank %+v", r.Name, r.Source, r.EvalRank)
		}
	}
	n := fmt.Sprint(nTrain)
	if want := []string{"l2-3", "multisim-3", "l2-5", "multisim-5", "l2-" + n, "multisim-" + n, "origin", "aligned",
		"origin:lambda(to_s:1)", "aligned:lambda(to_s:1)", "tfidf", "mean_word_vectors", "untrained"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("results %v, want %v", names, want)
	}
	for _, obj := range []string{"l2", "multisim"} {
		lc := res4.LearningCurve[obj]
		if len(lc) != 3 || lc[0].Pairs != 3 || lc[1].Pairs != 5 || lc[2].Pairs != nTrain || lc[2].Spearman100 == nil {
			t.Errorf("%s learning curve %+v", obj, lc)
		}
	}
	checkReport(t, out4+"/report.html", 2, "Learning curves: STS Spearman", "EvalRank MRR per objective")
	if !strings.Contains(stdout, "learning curve") {
		t.Errorf("no learning curve printed:\n%s", stdout)
	}
	m4, _, err := surrogate.Load(filepath.Join(out4, "l2-5"), res4.TokenizerFP)
	if err != nil {
		t.Fatal(err)
	}
	if dim, ok := res4.Config["dim"].(float64); !ok || m4.Dim() != int(dim) || m4.Dim() == 300 {
		t.Errorf("--init=coherence: model width %d, config dim %v; want the coherence model's width", m4.Dim(), res4.Config["dim"])
	}
	// The coherence model's BiLSTM as the encoder: trained from its copy,
	// saved as a coherence model, and reported beside the untouched one.
	out5 := filepath.Join(tmp, "surrogate5")
	stdout = run(t, "surrogate", "--pairs="+pairsGlob, "--model="+model, "--output="+out5, "--objective=l2",
		"--epochs=1", "--lr=0.001", "--encoder=bilstm", "--tokens=subword", "--sts="+sts)
	res5 := readSurrogateResults(t, out5, stdout)
	if len(res5.Results) != 4 || res5.Results[0].Name != "l2" || res5.Results[0].Spearman100 == nil ||
		res5.Results[3].Name != "untrained" || res5.Results[0].Encode == nil || res5.Results[0].Encode.SentencesPerSec <= 0 {
		t.Fatalf("--encoder=bilstm results %+v", res5.Results)
	}
	dm, _, err := disc.Load(filepath.Join(out5, "l2"), res5.TokenizerFP)
	if err != nil {
		t.Fatalf("the BiLSTM surrogate does not load as a coherence model: %v", err)
	}
	orig, _, err := disc.Load(model, res5.TokenizerFP)
	if err != nil {
		t.Fatal(err)
	}
	if dm.VecDim() != orig.VecDim() || reflect.DeepEqual(dm.Emb.Weight.Value.Data, orig.Emb.Weight.Value.Data) {
		t.Errorf("the BiLSTM surrogate has width %d (coherence model %d) or was not trained", dm.VecDim(), orig.VecDim())
	}
	if msg := runSurrogateFail(t, "--pairs="+pairsGlob, "--model="+model, "--output="+filepath.Join(tmp, "bad5"),
		"--encoder=bilstm", "--tokens=subword", "--dim=8"); !strings.Contains(msg, "do not apply") {
		t.Errorf("--dim with --encoder=bilstm: %s", msg)
	}

	// The contrastive model's words, weighted by their IDF, from its
	// sentence-encoder table: the untrained encoder is that model's own
	// sentence vector.
	out6 := filepath.Join(tmp, "surrogate6")
	stdout = run(t, "surrogate", "--pairs="+pairsGlob, "--model="+model, "--output="+out6, "--objective=l2",
		"--epochs=1", "--lr=0.001", "--init=ctx", "--sts="+sts)
	res6 := readSurrogateResults(t, out6, stdout)
	m6, _, err := surrogate.Load(filepath.Join(out6, "l2"), res6.TokenizerFP)
	if err != nil {
		t.Fatal(err)
	}
	if !m6.Cfg.Weighted || res6.Config["tokens"] != "ctx" || res6.Config["dim"] != float64(m6.Dim()) || m6.Dim() == 300 {
		t.Fatalf("--init=ctx: weighted %v, tokens %v, dim %d (config %v)", m6.Cfg.Weighted, res6.Config["tokens"], m6.Dim(), res6.Config["dim"])
	}
	applied6 := filepath.Join(tmp, "applied6")
	run(t, "surrogate", "--load="+filepath.Join(out6, "l2"), "--model="+model, "--score="+sts, "--output="+applied6)
	if b, err := os.ReadFile(filepath.Join(applied6, "scores.tsv")); err != nil || strings.Count(string(b), "\n") < 10 {
		t.Fatalf("apply mode with the contrastive model's tokens: %v", err)
	}

	// Origin's pairs must be the ones evaluated.
	if msg := runSurrogateFail(t, "--pairs="+pairsGlob, "--model="+model, "--output="+filepath.Join(tmp, "bad4"),
		"--sts="+sts, "--sts_pairs=6", "--origin="+evalOut); !strings.Contains(msg, "are not the 6 evaluated here") {
		t.Errorf("Origin on other pairs: %s", msg)
	}

	// Errors.
	bad := filepath.Join(tmp, "bad")
	if msg := runSurrogateFail(t, "--pairs="+filepath.Join(tmp, "none/*.parquet"), "--model="+model, "--output="+bad); !strings.Contains(msg, "no pairs found") {
		t.Errorf("missing pairs: %s", msg)
	}
	if msg := runSurrogateFail(t, "--pairs="+pairsGlob, "--model="+model, "--output="+bad, "--split=nosuch"); !strings.Contains(msg, "no training pairs") {
		t.Errorf("empty train split: %s", msg)
	}
	if msg := runSurrogateFail(t, "--pairs="+pairsGlob, "--model="+model, "--output="+bad, "--objective=l2,cosine"); !strings.Contains(msg, "unknown objective") {
		t.Errorf("unknown objective: %s", msg)
	}
	if msg := runSurrogateFail(t, "--pairs="+pairsGlob, "--model="+model, "--output="+bad, "--max_pairs=10,x"); !strings.Contains(msg, "--max_pairs") {
		t.Errorf("bad --max_pairs: %s", msg)
	}
	if msg := runSurrogateFail(t, "--pairs="+pairsGlob, "--model="+model, "--output="+bad, "--init=coherence", "--tokens=subword", "--dim=7"); !strings.Contains(msg, "leave --dim out") {
		t.Errorf("--dim with --init=coherence: %s", msg)
	}
	if msg := runSurrogateFail(t, "--pairs="+pairsGlob, "--model="+model, "--output="+bad, "--init=coherence"); !strings.Contains(msg, "--tokens=subword") {
		t.Errorf("--init=coherence with the contrastive model's tokens: %s", msg)
	}
	if msg := runSurrogateFail(t, "--pairs="+pairsGlob, "--model="+model, "--output="+bad, "--tokens=bpe"); !strings.Contains(msg, "unknown vocabulary") {
		t.Errorf("--tokens=bpe: %s", msg)
	}
	// Pairs labelled by other models (a Parquet file written by hand, with
	// no table manifest).
	other := filepath.Join(tmp, "other")
	os.MkdirAll(other, 0o755)
	f, err := os.Create(filepath.Join(other, "pairs.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	w := schemas.NewWriter(f, reflect.TypeOf(schemas.LabeledPair{}), schemas.WriterOptions{})
	for _, p := range pairs {
		p.ModelFingerprint = "0123456789abcdef"
		if err := w.Write(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if msg := runSurrogateFail(t, "--pairs="+other+"/*.parquet", "--model="+model, "--output="+bad); !strings.Contains(msg, "fingerprint mismatch") {
		t.Errorf("pairs of other models: %s", msg)
	}
	if _, err := os.Stat(filepath.Join(bad, "l2")); err == nil {
		t.Error("a failed run saved a model")
	}
}
