// Command surrogate trains fast sentence encoders on harvested labels
// (Sun et al., TACL 2022, Sec. 3.4) and evaluates them side by side with a
// unigram TF-IDF baseline and the untrained encoder on an STS file:
// Spearman correlation with the gold scores and EvalRank.
//
//	go run ./pipelines/surrogate --pairs='out/harvest/pairs/*.parquet' --model=out/model \
//	  --output=out/surrogate --objective=l2,contrastive,multisim --sts=../shared/data/eval/stsb-dev.tsv \
//	  --chunks='out/corpus/chunks/*.parquet'
package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/pipelines/internal/sts"
	"github.com/ctxsim/ctxsim/schemas"
	hv "github.com/ctxsim/ctxsim/scoring/harvest"
	"github.com/ctxsim/ctxsim/scoring/surrogate"
	"github.com/ctxsim/ctxsim/scoring/tokenizer"
	"github.com/ctxsim/ctxsim/transforms/harvest"
	"github.com/ctxsim/ctxsim/transforms/parquetio"
	"github.com/ctxsim/ctxsim/transforms/remote"
)

const usage = `
surrogate: harvested pairs -> averaged-subword sentence encoders -> STS
Spearman and EvalRank beside a TF-IDF baseline.

Reads the harvest's pairs table (schemas.LabeledPair), tokenizes the sentences
with the tokenizer of the harvest's model directory (the pairs' model
fingerprint must match it), trains one encoder per objective (l2: the paper's
squared error on cosine; contrastive: InfoNCE on pairs labelled at least
--threshold; multisim: locality-weighted multi-similarity) on the pairs of
--split, with the pairs of --dev_split for the learning curve, and saves each
under --output/<objective>/ (surrogate.json + surrogate.safetensors).

With --sts (a TSV with a header and the columns score, s1, s2, as
stsb-dev.tsv), every encoder, the unigram TF-IDF cosine baseline and the
untrained encoder (random embeddings, which already reward word overlap)
are evaluated on the same pairs: Spearman x100 of cosine against the gold scores,
and EvalRank (MRR, Hits@1, Hits@3) over the file's distinct sentences. The
TF-IDF IDF is counted over the corpus chunks of --chunks, or over the STS
sentences themselves when --chunks is not given.

Writes --output/results.json: the data used, each encoder's training curve,
time and encoding throughput (sentences/s on one core), and the table.`

var (
	pairsGlob   = flag.String("pairs", "", "Harvested pairs table: comma-separated Parquet globs or directories, local or gs:// (required).")
	model       = flag.String("model", "", "The harvest's model directory, local or gs://, for its tokenizer (required).")
	output      = flag.String("output", "", "Directory for <objective>/ models and results.json, local or gs:// (required).")
	objectives  = flag.String("objective", surrogate.ObjectiveL2, "Objective, or a comma-separated list trained side by side: l2, contrastive, multisim.")
	dim         = flag.Int("dim", 300, "Width of the token and sentence embeddings.")
	epochs      = flag.Int("epochs", 5, "Passes over the training pairs.")
	batchSize   = flag.Int("batch_size", 128, "Pairs per minibatch (contrastive and multisim draw their negatives from the batch).")
	lr          = flag.Float64("lr", 0.001, "Adam learning rate (small label sets train faster at 0.01).")
	seed        = flag.Uint64("seed", 1, "Seed of the initial embeddings and the batch order: same data and seed give identical weights.")
	split       = flag.String("split", "train", "Comma-separated splits of the pairs table to train on.")
	devSplit    = flag.String("dev_split", "dev", "Split whose pairs give the learning curve (empty: none).")
	maxPairs    = flag.Int("max_pairs", 0, "Train on the first N training pairs in pair-ID order (0: all), for learning curves.")
	threshold   = flag.Float64("threshold", 0.5, "contrastive and multisim: pairs labelled at least this are positives.")
	topQuantile = flag.Float64("top_quantile", 0, "contrastive and multisim: if positive, the top fraction of each batch by label are the positives instead of --threshold.")
	stsPath     = flag.String("sts", "", "STS TSV (header; columns score, s1, s2) to evaluate on, local or gs:// (optional).")
	chunksGlob  = flag.String("chunks", "", "Chunks table glob(s) for the TF-IDF IDF (optional; default: IDF over the STS sentences).")
)

// num is a float64 written to JSON as null when it is NaN or infinite.
type num float64

func (x num) MarshalJSON() ([]byte, error) {
	f := float64(x)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

type devJSON struct {
	Loss     num `json:"loss"`
	Spearman num `json:"spearman"`
	Pearson  num `json:"pearson"`
}

type epochJSON struct {
	Epoch     int      `json:"epoch"`
	TrainLoss num      `json:"train_loss"`
	Dev       *devJSON `json:"dev,omitempty"`
	Seconds   num      `json:"seconds"`
}

type curveJSON struct {
	Init   *devJSON    `json:"init,omitempty"`
	Epochs []epochJSON `json:"epochs"`
}

func devOf(d *surrogate.DevStats) *devJSON {
	if d == nil {
		return nil
	}
	return &devJSON{num(d.Loss), num(d.Spearman), num(d.Pearson)}
}

func curveOf(c surrogate.Curve) curveJSON {
	out := curveJSON{Init: devOf(c.Init), Epochs: []epochJSON{}}
	for _, e := range c.Epochs {
		out.Epochs = append(out.Epochs, epochJSON{e.Epoch, num(e.TrainLoss), devOf(e.Dev), num(e.Seconds)})
	}
	return out
}

// rankJSON is EvalRank's result.
type rankJSON struct {
	MRR       num `json:"mrr"`
	Hits1     num `json:"hits1"`
	Hits3     num `json:"hits3"`
	Threshold num `json:"threshold"`
	Positives int `json:"positives"`
	Queries   int `json:"queries"`
	Skipped   int `json:"skipped"`
}

func rankOf(r surrogate.RankResult) *rankJSON {
	return &rankJSON{num(r.MRR), num(r.Hits1), num(r.Hits3), num(r.Threshold), r.Positives, r.Queries, r.Skipped}
}

// throughput is the encoder's speed on the distinct STS sentences, in one
// goroutine (so on one core, whatever GOMAXPROCS is).
type throughput struct {
	SentencesPerSecPerCore num `json:"sentences_per_sec_per_core"`
	TokensPerSecPerCore    num `json:"tokens_per_sec_per_core"`
	Sentences              int `json:"sentences"`
	Repeats                int `json:"repeats"`
	Seconds                num `json:"seconds"`
}

// result is one row of the table.
type result struct {
	Name      string                     `json:"name"`
	Kind      string                     `json:"kind"` // "surrogate" or "baseline"
	Objective *surrogate.ObjectiveConfig `json:"objective,omitempty"`
	Dir       string                     `json:"dir,omitempty"`
	// Spearman100 is the Spearman correlation ×100 of cosine with the STS
	// gold scores; null without --sts or when either side is constant.
	Spearman100 *num      `json:"spearman_x100,omitempty"`
	EvalRank    *rankJSON `json:"evalrank,omitempty"`
	STSPairs    int       `json:"sts_pairs,omitempty"`
	TrainPairs  int       `json:"train_pairs,omitempty"`
	// TrainSeconds is the time of surrogate.Train (including the dev
	// evaluations).
	TrainSeconds   num         `json:"train_seconds,omitempty"`
	FinalTrainLoss *num        `json:"final_train_loss,omitempty"`
	FinalDev       *devJSON    `json:"final_dev,omitempty"`
	Curve          *curveJSON  `json:"curve,omitempty"`
	Encode         *throughput `json:"encode,omitempty"`
	Note           string      `json:"note,omitempty"`
}

type idfInfo struct {
	// Source is "chunks" (the corpus chunks of --chunks) or
	// "sts_sentences" (the distinct sentences of the STS file).
	Source    string `json:"source"`
	Documents int    `json:"documents"`
	Chunks    string `json:"chunks,omitempty"`
	Note      string `json:"note,omitempty"`
}

type results struct {
	SchemaVersion        string         `json:"schema_version"`
	Pairs                []string       `json:"pairs"`
	PairFiles            int            `json:"pair_files"`
	PairsRead            int            `json:"pairs_read"`
	DuplicatesDropped    int            `json:"duplicates_dropped"`
	BySplit              map[string]int `json:"pairs_by_split"`
	Split                []string       `json:"split"`
	DevSplit             string         `json:"dev_split"`
	TrainPairsAvailable  int            `json:"train_pairs_available"`
	MaxPairs             int            `json:"max_pairs"`
	TrainPairs           int            `json:"train_pairs"`
	DevPairs             int            `json:"dev_pairs"`
	Model                string         `json:"model"`
	ModelFingerprint     string         `json:"model_fingerprint"`
	TokenizerFingerprint string         `json:"tokenizer_fingerprint"`
	Vocab                int            `json:"vocab"`
	Config               map[string]any `json:"config"`
	STS                  string         `json:"sts,omitempty"`
	STSPairs             int            `json:"sts_pairs,omitempty"`
	STSSentences         int            `json:"sts_sentences,omitempty"`
	IDF                  *idfInfo       `json:"idf,omitempty"`
	Tokenize             *throughput    `json:"tokenize,omitempty"`
	Results              []result       `json:"results"`
	Seconds              map[string]num `json:"seconds"`
	GOMAXPROCS           int            `json:"gomaxprocs"`
}

func main() {
	jobrun.Init(usage)
	jobrun.Require("pairs", "model", "output")
	ctx := context.Background()
	start := time.Now()
	seconds := map[string]num{}

	objs, err := parseObjectives(*objectives)
	if err != nil {
		jobrun.Fail(err)
	}
	if *maxPairs < 0 {
		jobrun.Fail(fmt.Errorf("--max_pairs %d: want 0 (all) or a positive count", *maxPairs))
	}
	trainSplits := jobrun.SplitList(*split)
	if len(trainSplits) == 0 {
		jobrun.Fail(errors.New("--split: name at least one split to train on"))
	}
	for _, s := range trainSplits {
		if s == *devSplit {
			jobrun.Fail(fmt.Errorf("--split %s and --dev_split %s overlap", *split, *devSplit))
		}
	}

	// A remote --output is written in a local working directory and
	// uploaded at the end.
	dest, work := *output, *output
	if remote.IsRemote(dest) {
		h := sha256.Sum256([]byte(dest))
		work = filepath.Join(remote.CacheRoot(), fmt.Sprintf("surrogate-%x", h[:8]))
		fmt.Printf("surrogate: working in %s, copied to %s at the end\n", work, dest)
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		jobrun.Fail(err)
	}

	// Models first: they are what the pairs are checked against.
	t0 := time.Now()
	models, err := harvest.LoadModels(ctx, *model)
	if err != nil {
		jobrun.Fail(err)
	}
	tok := models.Tok
	seconds["load_models"] = num(time.Since(t0).Seconds())

	t0 = time.Now()
	globs := jobrun.SplitList(*pairsGlob)
	rows, files, err := readPairs(ctx, globs)
	if err != nil {
		jobrun.Fail(err)
	}
	if err := checkFingerprints(rows, models.Fingerprint, tok.Fingerprint(), *model); err != nil {
		jobrun.Fail(err)
	}
	rows, dups := dedup(rows)
	bySplit := map[string]int{}
	var trainRows, devRows []schemas.LabeledPair
	isTrain := map[string]bool{}
	for _, s := range trainSplits {
		isTrain[s] = true
	}
	for _, r := range rows {
		bySplit[r.Split]++
		switch {
		case isTrain[r.Split]:
			trainRows = append(trainRows, r)
		case *devSplit != "" && r.Split == *devSplit:
			devRows = append(devRows, r)
		}
	}
	if len(trainRows) == 0 {
		jobrun.Fail(fmt.Errorf("no training pairs: %d pairs read from %d files, none in split %s (pairs by split: %s)",
			len(rows), files, strings.Join(trainSplits, ","), splitLine(bySplit)))
	}
	available := len(trainRows)
	if *maxPairs > 0 && *maxPairs < len(trainRows) {
		trainRows = trainRows[:*maxPairs] // rows are in pair-ID order
	}
	trainPairs, devPairs, err := tokenizePairs(tok, trainRows, devRows)
	if err != nil {
		jobrun.Fail(err)
	}
	seconds["read_pairs"] = num(time.Since(t0).Seconds())
	fmt.Printf("surrogate: %d pairs from %d files (%s; %d duplicates dropped), training on %d of %d %s pairs, %d dev pairs\n",
		len(rows), files, splitLine(bySplit), dups, len(trainPairs), available, strings.Join(trainSplits, ","), len(devPairs))
	fmt.Printf("surrogate: models %s, tokenizer %.12s (vocab %d)\n", models.Fingerprint, tok.Fingerprint(), tok.VocabSize())

	out := results{SchemaVersion: schemas.Version, Pairs: globs, PairFiles: files, PairsRead: len(rows) + dups,
		DuplicatesDropped: dups, BySplit: bySplit, Split: trainSplits, DevSplit: *devSplit,
		TrainPairsAvailable: available, MaxPairs: *maxPairs, TrainPairs: len(trainPairs), DevPairs: len(devPairs),
		Model: *model, ModelFingerprint: models.Fingerprint, TokenizerFingerprint: tok.Fingerprint(),
		Vocab: tok.VocabSize(), Seconds: seconds, GOMAXPROCS: runtime.GOMAXPROCS(0),
		Config: map[string]any{"dim": *dim, "epochs": *epochs, "batch_size": *batchSize, "lr": *lr, "seed": *seed,
			"threshold": *threshold, "top_quantile": *topQuantile}}

	// The evaluation data, read before training so that a bad file fails
	// early.
	var ev *evalData
	if *stsPath != "" {
		t0 = time.Now()
		if ev, err = loadEval(ctx, *stsPath, *chunksGlob, tok); err != nil {
			jobrun.Fail(err)
		}
		seconds["load_eval"] = num(time.Since(t0).Seconds())
		out.STS, out.STSPairs, out.STSSentences, out.IDF = *stsPath, len(ev.gold), len(ev.sents), &ev.idf
		out.Tokenize = tokenizeThroughput(tok, ev.sents)
		fmt.Printf("surrogate: %d STS pairs, %d distinct sentences; IDF over %d %s\n",
			len(ev.gold), len(ev.sents), ev.idf.Documents, strings.ReplaceAll(ev.idf.Source, "_", " "))
	} else if *chunksGlob != "" {
		fmt.Println("surrogate: --chunks is only used with --sts; ignoring it")
	}

	for _, oc := range objs {
		cfg := surrogate.TrainConfig{
			Model:     surrogate.Config{Vocab: tok.VocabSize(), Dim: *dim, InitStd: surrogate.DefaultConfig(1).InitStd},
			Objective: oc, Epochs: *epochs, BatchSize: *batchSize, LR: *lr, Seed: *seed,
			Progress: func(e surrogate.EpochStats) {
				line := fmt.Sprintf("%s: epoch %d/%d, train loss %.4f", oc.Name, e.Epoch, *epochs, e.TrainLoss)
				if e.Dev != nil {
					line += fmt.Sprintf(", dev loss %.4f, dev Spearman %.4f", e.Dev.Loss, e.Dev.Spearman)
				}
				fmt.Printf("%s (%.1fs)\n", line, e.Seconds)
			},
		}
		t0 := time.Now()
		m, curve, err := surrogate.Train(cfg, trainPairs, devPairs)
		if err != nil {
			jobrun.Fail(fmt.Errorf("%s: %w", oc.Name, err))
		}
		took := time.Since(t0).Seconds()
		cj := curveOf(curve)
		dir := filepath.Join(work, oc.Name)
		info := map[string]any{"train_config": cfg, "curve": cj, "train_pairs": len(trainPairs),
			"dev_pairs": len(devPairs), "pairs": globs, "split": trainSplits, "max_pairs": *maxPairs,
			"model_fingerprint": models.Fingerprint, "train_seconds": num(took)}
		if err := m.Save(dir, tok.Fingerprint(), info); err != nil {
			jobrun.Fail(fmt.Errorf("%s: save: %w", oc.Name, err))
		}
		// What was written must load back with this tokenizer.
		if _, _, err := surrogate.Load(dir, tok.Fingerprint()); err != nil {
			jobrun.Fail(fmt.Errorf("%s: the saved model does not load: %w", oc.Name, err))
		}
		r := result{Name: oc.Name, Kind: "surrogate", Objective: &oc, Dir: remote.Join(dest, oc.Name),
			TrainPairs: len(trainPairs), TrainSeconds: num(took), Curve: &cj}
		if n := len(cj.Epochs); n > 0 {
			r.FinalTrainLoss, r.FinalDev = &cj.Epochs[n-1].TrainLoss, cj.Epochs[n-1].Dev
		}
		if ev != nil {
			if err := ev.surrogate(m, &r); err != nil {
				jobrun.Fail(fmt.Errorf("%s: %w", oc.Name, err))
			}
		}
		out.Results = append(out.Results, r)
	}
	if ev != nil {
		r, err := ev.tfidfResult()
		if err != nil {
			jobrun.Fail(err)
		}
		out.Results = append(out.Results, r)
		// The encoder before training, from the same seed: averaged random
		// vectors already reward word overlap, so this is the bar the
		// labels must lift an encoder above.
		m0, err := surrogate.New(surrogate.Config{Vocab: tok.VocabSize(), Dim: *dim,
			InitStd: surrogate.DefaultConfig(1).InitStd}, *seed)
		if err != nil {
			jobrun.Fail(err)
		}
		u := result{Name: "untrained", Kind: "baseline",
			Note: "the encoder at its random initialisation (same seed and width), before any label"}
		if err := ev.surrogate(m0, &u); err != nil {
			jobrun.Fail(err)
		}
		out.Results = append(out.Results, u)
	}

	report(os.Stdout, out.Results)
	seconds["total"] = num(time.Since(start).Seconds())
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		jobrun.Fail(err)
	}
	if err := os.WriteFile(filepath.Join(work, "results.json"), append(b, '\n'), 0o644); err != nil {
		jobrun.Fail(err)
	}
	if dest != work {
		if err := remote.Upload(ctx, work, dest); err != nil {
			jobrun.Fail(err)
		}
	}
	fmt.Printf("surrogate: done in %s; models and results.json in %s\n", time.Since(start).Round(time.Millisecond), dest)
}

// parseObjectives returns the configurations of the named objectives, with
// --threshold and --top_quantile applied, each checked.
func parseObjectives(list string) ([]surrogate.ObjectiveConfig, error) {
	names := jobrun.SplitList(list)
	if len(names) == 0 {
		return nil, errors.New("--objective: name at least one of l2, contrastive, multisim")
	}
	seen := map[string]bool{}
	var out []surrogate.ObjectiveConfig
	for _, n := range names {
		if seen[n] {
			return nil, fmt.Errorf("--objective: %s given twice", n)
		}
		seen[n] = true
		c := surrogate.DefaultObjective(n)
		if n != surrogate.ObjectiveL2 {
			c.Threshold, c.TopQuantile = *threshold, *topQuantile
		}
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("--objective: %w", err)
		}
		out = append(out, c)
	}
	return out, nil
}

// readPairs reads every row of the pairs tables matched by globs. A local
// directory stands for its Parquet files.
func readPairs(ctx context.Context, globs []string) ([]schemas.LabeledPair, int, error) {
	if len(globs) == 0 {
		return nil, 0, errors.New("no pairs found: --pairs names no files")
	}
	var rows []schemas.LabeledPair
	seen := map[string]bool{}
	files := 0
	for _, g := range globs {
		if !remote.IsRemote(g) && !strings.ContainsAny(g, "*?[") {
			if st, err := os.Stat(g); err == nil && st.IsDir() {
				g = filepath.Join(g, "*.parquet")
			}
		}
		names, err := parquetio.Glob(ctx, g)
		if err != nil {
			return nil, 0, fmt.Errorf("no pairs found: --pairs %s: %w", g, err)
		}
		for _, name := range names {
			if seen[name] {
				continue
			}
			seen[name] = true
			files++
			if _, err := parquetio.ReadFile(ctx, name, reflect.TypeOf(schemas.LabeledPair{}), func(v any) error {
				rows = append(rows, v.(schemas.LabeledPair))
				return nil
			}); err != nil {
				return nil, 0, fmt.Errorf("pairs: %w", err)
			}
		}
	}
	if len(rows) == 0 {
		return nil, 0, fmt.Errorf("no pairs found: the %d files matching --pairs %s hold no rows", files, strings.Join(globs, ","))
	}
	return rows, files, nil
}

// checkFingerprints checks that every pair was labelled with the models of
// --model: the surrogate is trained on token IDs of that model directory's
// tokenizer, which is only right for labels made with it.
func checkFingerprints(rows []schemas.LabeledPair, modelFP, tokFP, dir string) error {
	count := map[string]int{}
	for _, r := range rows {
		count[r.ModelFingerprint]++
	}
	if len(count) == 1 && count[modelFP] > 0 {
		return nil
	}
	var fps []string
	for fp, n := range count {
		if fp == "" {
			fp = "(none)"
		}
		fps = append(fps, fmt.Sprintf("%s (%d pairs)", fp, n))
	}
	sort.Strings(fps)
	return fmt.Errorf("model fingerprint mismatch: the pairs were labelled with models %s, but --model %s holds models %s "+
		"(tokenizer %.12s…): train the surrogate with the tokenizer of the harvest that labelled the pairs",
		strings.Join(fps, ", "), dir, modelFP, tokFP)
}

// dedup sorts rows by pair ID and keeps the first row of each ID.
func dedup(rows []schemas.LabeledPair) ([]schemas.LabeledPair, int) {
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].PairID < rows[j].PairID })
	out := rows[:0]
	for i, r := range rows {
		if i > 0 && r.PairID == rows[i-1].PairID {
			continue
		}
		out = append(out, r)
	}
	return out, len(rows) - len(out)
}

func splitLine(by map[string]int) string {
	var keys []string
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		name := k
		if name == "" {
			name = "(none)"
		}
		parts = append(parts, fmt.Sprintf("%s %d", name, by[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// tokenizePairs turns rows into token-ID pairs, tokenizing each distinct
// sentence once.
func tokenizePairs(tok *tokenizer.Tokenizer, trainRows, devRows []schemas.LabeledPair) (train, dev []surrogate.Pair, err error) {
	index := map[string]int{}
	var texts []string
	for _, rs := range [][]schemas.LabeledPair{trainRows, devRows} {
		for _, r := range rs {
			for _, s := range []string{r.Sentence1, r.Sentence2} {
				if _, ok := index[s]; !ok {
					index[s] = len(texts)
					texts = append(texts, s)
				}
			}
		}
	}
	ids := toInts(tok.EncodeBatch(texts))
	conv := func(rs []schemas.LabeledPair, what string) ([]surrogate.Pair, error) {
		out := make([]surrogate.Pair, len(rs))
		for i, r := range rs {
			a, b := ids[index[r.Sentence1]], ids[index[r.Sentence2]]
			if len(a) == 0 || len(b) == 0 {
				return nil, fmt.Errorf("%s pair %s: a sentence has no tokens", what, r.PairID)
			}
			if !(r.Label >= -1 && r.Label <= 1) {
				return nil, fmt.Errorf("%s pair %s: label %v outside [-1, 1]", what, r.PairID, r.Label)
			}
			out[i] = surrogate.Pair{A: a, B: b, Label: r.Label}
		}
		return out, nil
	}
	if train, err = conv(trainRows, "training"); err != nil {
		return nil, nil, err
	}
	dev, err = conv(devRows, "dev")
	return train, dev, err
}

func toInts(xs [][]int32) [][]int {
	out := make([][]int, len(xs))
	for i, x := range xs {
		out[i] = make([]int, len(x))
		for j, v := range x {
			out[i][j] = int(v)
		}
	}
	return out
}

// evalData is an STS file: its distinct sentences, token IDs and TF-IDF
// vectors, and its pairs as indices into them.
type evalData struct {
	sents []string
	ids   [][]int
	gold  []surrogate.GoldPair
	idf   idfInfo
	tf    []sts.Vector
}

func loadEval(ctx context.Context, path, chunks string, tok *tokenizer.Tokenizer) (*evalData, error) {
	pairs, err := sts.Read(ctx, path)
	if err != nil {
		return nil, err
	}
	ev := &evalData{}
	index := map[string]int{}
	at := func(s string) int {
		i, ok := index[s]
		if !ok {
			i = len(ev.sents)
			index[s] = i
			ev.sents = append(ev.sents, s)
		}
		return i
	}
	for _, p := range pairs {
		ev.gold = append(ev.gold, surrogate.GoldPair{A: at(p.S1), B: at(p.S2), Score: p.Gold})
	}
	ev.ids = toInts(tok.EncodeBatch(ev.sents))
	var tf *sts.TFIDF
	if chunks != "" {
		if tf, err = chunkDF(ctx, chunks); err != nil {
			return nil, err
		}
		ev.idf = idfInfo{Source: "chunks", Documents: int(tf.N), Chunks: chunks}
	} else {
		tf = &sts.TFIDF{}
		for _, s := range ev.sents {
			tf.AddDocument(s)
		}
		ev.idf = idfInfo{Source: "sts_sentences", Documents: len(ev.sents),
			Note: "no --chunks given: IDF counted over the distinct STS sentences themselves, not the corpus"}
	}
	for _, s := range ev.sents {
		ev.tf = append(ev.tf, tf.Vector(s))
	}
	return ev, nil
}

// surrogate fills r with the model's Spearman, EvalRank and throughput.
func (ev *evalData) surrogate(m *surrogate.Model, r *result) error {
	d := m.Dim()
	flat := m.EncodeBatch(ev.ids, nil)
	emb := make([][]float32, len(ev.sents))
	for i := range emb {
		emb[i] = flat[i*d : (i+1)*d]
	}
	pred := make([]float64, len(ev.gold))
	for i, p := range ev.gold {
		pred[i] = surrogate.Cosine(emb[p.A], emb[p.B])
	}
	sp := num(100 * hv.Spearman(pred, ev.goldScores()))
	rr, err := surrogate.EvalRank(emb, ev.gold)
	if err != nil {
		return err
	}
	r.Spearman100, r.EvalRank, r.STSPairs = &sp, rankOf(rr), len(ev.gold)
	r.Encode = encodeThroughput(m, ev.ids)
	return nil
}

func (ev *evalData) tfidfResult() (result, error) {
	pred := make([]float64, len(ev.gold))
	for i, p := range ev.gold {
		pred[i] = ev.tf[p.A].Cosine(ev.tf[p.B])
	}
	sp := num(100 * hv.Spearman(pred, ev.goldScores()))
	rr, err := surrogate.EvalRankFunc(len(ev.tf), func(i, j int) float64 { return ev.tf[i].Cosine(ev.tf[j]) }, ev.gold)
	if err != nil {
		return result{}, err
	}
	note := "unigram TF-IDF cosine, IDF over the corpus chunks"
	if ev.idf.Source != "chunks" {
		note = "unigram TF-IDF cosine, IDF over the STS sentences (no --chunks)"
	}
	return result{Name: "tfidf", Kind: "baseline", Spearman100: &sp, EvalRank: rankOf(rr), STSPairs: len(ev.gold),
		Note: note}, nil
}

func (ev *evalData) goldScores() []float64 {
	g := make([]float64, len(ev.gold))
	for i, p := range ev.gold {
		g[i] = p.Score
	}
	return g
}

// minMeasure is how long a throughput measurement repeats its pass.
const minMeasure = 200 * time.Millisecond

// encodeThroughput times EncodeBatch over sents in the calling goroutine,
// repeating the pass until minMeasure has elapsed, after one warm-up pass.
func encodeThroughput(m *surrogate.Model, sents [][]int) *throughput {
	buf := m.EncodeBatch(sents, nil)
	tokens := 0
	for _, s := range sents {
		tokens += len(s)
	}
	reps := 0
	t0 := time.Now()
	var el time.Duration
	for el < minMeasure || reps == 0 {
		buf = m.EncodeBatch(sents, buf)
		reps++
		el = time.Since(t0)
	}
	return rate(len(sents), tokens, reps, el)
}

// tokenizeThroughput times tokenizing texts one by one in the calling
// goroutine, after a pass that fills the tokenizer's word cache.
func tokenizeThroughput(tok *tokenizer.Tokenizer, texts []string) *throughput {
	tokens := 0
	for _, s := range texts {
		tokens += len(tok.Encode(s))
	}
	reps := 0
	t0 := time.Now()
	var el time.Duration
	for el < minMeasure || reps == 0 {
		for _, s := range texts {
			tok.Encode(s)
		}
		reps++
		el = time.Since(t0)
	}
	return rate(len(texts), tokens, reps, el)
}

func rate(sents, tokens, reps int, el time.Duration) *throughput {
	s := el.Seconds()
	return &throughput{SentencesPerSecPerCore: num(float64(sents*reps) / s), TokensPerSecPerCore: num(float64(tokens*reps) / s),
		Sentences: sents, Repeats: reps, Seconds: num(s)}
}

// chunkDF counts, over the chunks of the tables matching globs (each
// chunk ID once), the chunks each word occurs in.
func chunkDF(ctx context.Context, globs string) (*sts.TFIDF, error) {
	tf := &sts.TFIDF{}
	seen := map[string]bool{}
	for _, g := range jobrun.SplitList(globs) {
		files, err := parquetio.Glob(ctx, g)
		if err != nil {
			return nil, fmt.Errorf("chunks: %w", err)
		}
		for _, name := range files {
			if _, err := parquetio.ReadFile(ctx, name, reflect.TypeOf(schemas.Chunk{}), func(v any) error {
				c := v.(schemas.Chunk)
				if !seen[c.ID] {
					seen[c.ID] = true
					tf.AddDocument(c.Sentences...)
				}
				return nil
			}); err != nil {
				return nil, fmt.Errorf("chunks: %w", err)
			}
		}
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("chunks: no chunks in %s", globs)
	}
	return tf, nil
}

func report(w io.Writer, rs []result) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "encoder\tSpearman x100\tMRR\tHits@1\tHits@3\ttrain pairs\ttrain s\tdev Spearman\tsentences/s/core")
	f := func(x *num, format string) string {
		if x == nil || math.IsNaN(float64(*x)) || math.IsInf(float64(*x), 0) {
			return "-"
		}
		return fmt.Sprintf(format, float64(*x))
	}
	for _, r := range rs {
		var mrr, h1, h3, dev, enc *num
		if r.EvalRank != nil {
			mrr, h1, h3 = &r.EvalRank.MRR, &r.EvalRank.Hits1, &r.EvalRank.Hits3
		}
		if r.FinalDev != nil {
			dev = &r.FinalDev.Spearman
		}
		if r.Encode != nil {
			enc = &r.Encode.SentencesPerSecPerCore
		}
		pairs, secs := "-", "-"
		if r.Kind == "surrogate" {
			pairs, secs = strconv.Itoa(r.TrainPairs), fmt.Sprintf("%.2f", float64(r.TrainSeconds))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, f(r.Spearman100, "%.2f"), f(mrr, "%.4f"),
			f(h1, "%.4f"), f(h3, "%.4f"), pairs, secs, f(dev, "%.4f"), f(enc, "%.0f"))
	}
	tw.Flush()
}
