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
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/disc"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/scoring/surrogate"
	"github.com/ctxsim/ctxsim/storage"
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
under --output/<objective>/ (surrogate.json + surrogate.safetensors; with
--encoder=bilstm, the fine-tuned coherence model as disc.json +
disc.safetensors). With a list of sizes in --max_pairs, each objective is
trained at each size, saved as <objective>-<size>/, and the learning curve
is printed.

With --sts (a TSV with a header and the columns score, s1, s2, as
stsb-dev.tsv), every encoder, the unigram TF-IDF cosine baseline and the
untrained encoder (random embeddings, which already reward word overlap)
are evaluated on the same pairs: Spearman x100 of cosine against the gold scores,
and EvalRank (MRR, Hits@1, Hits@3) over the file's distinct sentences. The
TF-IDF IDF is counted over the corpus chunks of --chunks, or over the STS
sentences themselves when --chunks is not given.

With --origin, the rows of bin/evaluate runs on the same STS pairs (Origin
and its variants) join the table.

Apply mode: with --load=<output>/<objective>, the job trains nothing. It
writes the embedding of every line of --embed to
--output/embeddings.parquet, and the cosine of every pair of --score to
--output/scores.tsv.

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
	maxPairs    = flag.String("max_pairs", "0", "Train on the first N training pairs in pair-ID order (0: all); a comma-separated list of sizes trains every objective at each, for a learning curve.")
	threshold   = flag.Float64("threshold", 0.5, "contrastive and multisim: pairs labelled at least this are positives.")
	topQuantile = flag.Float64("top_quantile", 0, "contrastive and multisim: if positive, the top fraction of each batch by label are the positives instead of --threshold.")
	stsPath     = flag.String("sts", "", "STS TSV (header; columns score, s1, s2) to evaluate on, local or gs:// (optional).")
	chunksGlob  = flag.String("chunks", "", "Chunks table glob(s) for the TF-IDF IDF (optional; default: IDF over the STS sentences).")
	stsPairs    = flag.Int("sts_pairs", 0, "Evaluate on N STS pairs spread evenly over the file, as bin/evaluate --pairs=N picks them (0: all).")
	origin      = flag.String("origin", "", "Comma-separated bin/evaluate output directories whose Origin rows join the table; their STS pairs must be the ones evaluated here.")
	load        = flag.String("load", "", "Apply mode: a trained surrogate directory (<output>/<objective>); with --model and --output, encodes --embed or scores --score instead of training.")
	embedPath   = flag.String("embed", "", "With --load: a text file, one sentence per line; writes <output>/embeddings.parquet (line, sentence, embedding).")
	scorePath   = flag.String("score", "", "With --load: a TSV of sentence pairs (columns s1 and s2 under a header, as STS files, else the first two); writes <output>/scores.tsv (score, s1, s2).")
	encoder     = flag.String("encoder", "mean", "Encoder: mean (averaged token embeddings) or bilstm (the coherence model's BiLSTM encoder, fine-tuned; slower).")
	initFrom    = flag.String("init", "random", "Initial token embeddings: random (N(0, 0.1²) at --dim), coherence (the coherence model's subword embeddings) or ctx (the contrastive model's sentence-encoder embeddings), at their width.")
	tokens      = flag.String("tokens", "auto", "Tokens of the mean encoder: subword (the model directory's tokenizer), ctx (the contrastive model's words or stems, the mean weighted by their IDF), or auto (ctx when the directory has a contrastive model).")
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
	Kind      string                     `json:"kind"` // "surrogate", "baseline", "origin" or "hybrid"
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
	// Origin rows: where they came from and what a pair cost there.
	Source          string `json:"source,omitempty"`
	Similarity      string `json:"similarity,omitempty"`
	GenEvalsPerPair *num   `json:"gen_evals_per_pair,omitempty"`
	Note            string `json:"note,omitempty"`
}

// curvePoint is one point of the learning curve: an objective trained on
// the first Pairs training pairs.
type curvePoint struct {
	Pairs       int       `json:"pairs"`
	Spearman100 *num      `json:"spearman_x100,omitempty"`
	EvalRank    *rankJSON `json:"evalrank,omitempty"`
	DevSpearman *num      `json:"dev_spearman,omitempty"`
	TrainSecs   num       `json:"train_seconds"`
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
	SchemaVersion       string         `json:"schema_version"`
	Pairs               []string       `json:"pairs"`
	PairFiles           int            `json:"pair_files"`
	PairsRead           int            `json:"pairs_read"`
	DuplicatesDropped   int            `json:"duplicates_dropped"`
	BySplit             map[string]int `json:"pairs_by_split"`
	Split               []string       `json:"split"`
	DevSplit            string         `json:"dev_split"`
	TrainPairsAvailable int            `json:"train_pairs_available"`
	MaxPairs            []int          `json:"max_pairs"`
	// TrainSizes are the training-set sizes trained at (--max_pairs capped
	// at what is available); TrainPairs is the largest.
	TrainSizes           []int          `json:"train_sizes"`
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
	// LearningCurve holds, per objective, its STS results at each size.
	LearningCurve map[string][]curvePoint `json:"learning_curve,omitempty"`
	Seconds       map[string]num          `json:"seconds"`
	GOMAXPROCS    int                     `json:"gomaxprocs"`
}

func main() {
	jobrun.Init(usage)
	ctx := context.Background()
	if *load != "" {
		if err := runApply(ctx); err != nil {
			jobrun.Fail(err)
		}
		return
	}
	if *embedPath != "" || *scorePath != "" {
		jobrun.Fail(errors.New("--embed and --score apply a trained surrogate: name it with --load"))
	}
	jobrun.Require("pairs", "model", "output")
	jobrun.CheckRanges(jobrun.Range{Name: "epochs", Lo: 1, Hi: 1000})
	jobrun.Lease("surrogate", *output)
	defer jobrun.Release()
	start := time.Now()
	seconds := map[string]num{}

	objs, err := parseObjectives(*objectives)
	if err != nil {
		jobrun.Fail(err)
	}
	sizes, err := parseSizes(*maxPairs)
	if err != nil {
		jobrun.Fail(err)
	}
	if *stsPairs < 0 {
		jobrun.Fail(fmt.Errorf("--sts_pairs %d: want 0 (all) or a positive count", *stsPairs))
	}
	if *origin != "" && *stsPath == "" {
		jobrun.Fail(errors.New("--origin needs --sts: Origin's rows are compared on the STS pairs"))
	}
	if *initFrom != "random" && *initFrom != "coherence" && *initFrom != "ctx" {
		jobrun.Fail(fmt.Errorf("--init %q: want random, coherence or ctx", *initFrom))
	}
	if *encoder != "mean" && *encoder != "bilstm" {
		jobrun.Fail(fmt.Errorf("--encoder %q: want mean or bilstm", *encoder))
	}
	if *encoder == "bilstm" && (jobrun.FlagSet("dim") || jobrun.FlagSet("init")) {
		jobrun.Fail(errors.New("--encoder=bilstm starts from the coherence model's encoder: --dim and --init do not apply"))
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
	if storage.IsRemote(dest) {
		h := sha256.Sum256([]byte(dest))
		work = filepath.Join(storage.CacheRoot(), fmt.Sprintf("surrogate-%x", h[:8]))
		fmt.Printf("surrogate: working in %s, copied to %s at the end\n", work, dest)
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		jobrun.Fail(err)
	}

	// Models first: they are what the pairs are checked against.
	t0 := time.Now()
	models, err := resources.LoadModels(ctx, *model)
	if err != nil {
		jobrun.Fail(err)
	}
	tok, tokName, err := chooseTokens(*tokens, models)
	if err != nil {
		jobrun.Fail(err)
	}
	if *encoder == "bilstm" && tokName != "subword" {
		jobrun.Fail(fmt.Errorf("--encoder=bilstm reads subword tokens: use --tokens=subword"))
	}
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
	plan := planSizes(sizes, available)
	trainRows = trainRows[:plan[len(plan)-1]] // rows are in pair-ID order
	trainPairs, devPairs, err := tokenizePairs(tok, trainRows, devRows)
	if err != nil {
		jobrun.Fail(err)
	}
	seconds["read_pairs"] = num(time.Since(t0).Seconds())
	fmt.Printf("surrogate: %d pairs from %d files (%s; %d duplicates dropped), training on %s of %d %s pairs, %d dev pairs\n",
		len(rows), files, splitLine(bySplit), dups, sizeLine(plan), available, strings.Join(trainSplits, ","), len(devPairs))
	fmt.Printf("surrogate: models %s, %s tokens %.24s (vocab %d)\n", models.Fingerprint, tokName, tok.Fingerprint(), tok.VocabSize())

	out := results{SchemaVersion: schemas.Version, Pairs: globs, PairFiles: files, PairsRead: len(rows) + dups,
		DuplicatesDropped: dups, BySplit: bySplit, Split: trainSplits, DevSplit: *devSplit,
		TrainPairsAvailable: available, MaxPairs: sizes, TrainSizes: plan, TrainPairs: len(trainPairs), DevPairs: len(devPairs),
		Model: *model, ModelFingerprint: models.Fingerprint, TokenizerFingerprint: tok.Fingerprint(),
		Vocab: tok.VocabSize(), Seconds: seconds, GOMAXPROCS: runtime.GOMAXPROCS(0),
		Config: map[string]any{"dim": *dim, "epochs": *epochs, "batch_size": *batchSize, "lr": *lr, "seed": *seed,
			"threshold": *threshold, "top_quantile": *topQuantile, "init": *initFrom, "sts_pairs": *stsPairs, "encoder": *encoder,
			"tokens": tokName}}

	// The initial embeddings: random draws at --dim, or the coherence
	// model's subword table.
	modelCfg := surrogate.Config{Vocab: tok.VocabSize(), Dim: *dim, InitStd: surrogate.DefaultConfig(1).InitStd}
	var initTable, initWeights []float32
	if cv, ok := tok.(*ctxVocab); ok {
		modelCfg.Weighted, initWeights = true, cv.Weights()
	}
	initSource := fmt.Sprintf("random N(0, %g²), seed %d", modelCfg.InitStd, *seed)
	switch *initFrom {
	case "random":
	case "coherence", "ctx":
		var table []float32
		var width int
		if *initFrom == "coherence" {
			if models.Disc == nil || tokName != "subword" {
				jobrun.Fail(fmt.Errorf("--init=coherence needs the coherence model and --tokens=subword"))
			}
			table, width = models.Disc.SubwordEmbeddings()
			initSource = "the coherence model's subword embeddings"
		} else {
			if tokName != "ctx" {
				jobrun.Fail(fmt.Errorf("--init=ctx needs --tokens=ctx"))
			}
			table, width = models.Ctx.SentenceEmbeddings()
			initSource = "the contrastive model's sentence-encoder embeddings"
		}
		if jobrun.FlagSet("dim") && *dim != width {
			jobrun.Fail(fmt.Errorf("--dim %d with --init=%s: those embeddings are %d wide; leave --dim out", *dim, *initFrom, width))
		}
		if len(table) != tok.VocabSize()*width {
			jobrun.Fail(fmt.Errorf("--init=%s: %d embeddings for a vocabulary of %d", *initFrom, len(table)/width, tok.VocabSize()))
		}
		modelCfg.Dim, initTable = width, table
		out.Config["dim"] = modelCfg.Dim
	default:
		jobrun.Fail(fmt.Errorf("--init: unknown start %q (random, coherence, ctx)", *initFrom))
	}
	if *encoder == "bilstm" {
		initSource = "the coherence model's BiLSTM encoder"
		out.Config["dim"] = models.Disc.VecDim()
		delete(out.Config, "init")
	}

	// The evaluation data, read before training so that a bad file fails
	// early.
	var ev *evalData
	if *stsPath != "" {
		t0 = time.Now()
		if ev, err = loadEval(ctx, *stsPath, *stsPairs, *chunksGlob, tok); err != nil {
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

	// Origin's rows are checked before any training.
	var originRows []result
	if *origin != "" {
		if originRows, err = readOrigin(ctx, jobrun.SplitList(*origin), ev); err != nil {
			jobrun.Fail(err)
		}
	}

	for _, n := range plan {
		for _, oc := range objs {
			name := oc.Name
			if len(plan) > 1 {
				name = fmt.Sprintf("%s-%d", oc.Name, n)
			}
			r, err := trainOne(oc, name, modelCfg, initTable, initWeights, initSource, models, trainPairs[:n], devPairs, work, dest, globs,
				trainSplits, tok.Fingerprint(), ev)
			if err != nil {
				jobrun.Fail(fmt.Errorf("%s: %w", name, err))
			}
			out.Results = append(out.Results, r)
			if len(plan) > 1 {
				if out.LearningCurve == nil {
					out.LearningCurve = map[string][]curvePoint{}
				}
				p := curvePoint{Pairs: n, Spearman100: r.Spearman100, EvalRank: r.EvalRank, TrainSecs: r.TrainSeconds}
				if r.FinalDev != nil {
					p.DevSpearman = &r.FinalDev.Spearman
				}
				out.LearningCurve[oc.Name] = append(out.LearningCurve[oc.Name], p)
			}
		}
	}
	if ev != nil {
		out.Results = append(out.Results, originRows...)
		r, err := ev.tfidfResult()
		if err != nil {
			jobrun.Fail(err)
		}
		out.Results = append(out.Results, r)
		if models.Disc != nil {
			if r, err = ev.meanWordVectors(models); err != nil {
				jobrun.Fail(err)
			}
			out.Results = append(out.Results, r)
		}
		// The encoder before training: averaged random vectors already
		// reward word overlap, and the coherence model's table is a
		// trained start, so this is the bar the labels must lift an
		// encoder above.
		var m0 surrogate.Encoder = &surrogate.BiLSTM{M: models.Disc}
		if *encoder == "mean" {
			mm, err := surrogate.TrainConfig{Model: modelCfg, Seed: *seed, InitTable: initTable, InitWeights: initWeights}.Initial()
			if err != nil {
				jobrun.Fail(err)
			}
			m0 = mm
		}
		u := result{Name: "untrained", Kind: "baseline",
			Note: "the encoder at its initialisation (" + initSource + "), before any label"}
		if err := ev.surrogate(m0, &u); err != nil {
			jobrun.Fail(err)
		}
		out.Results = append(out.Results, u)
	}

	printTable(os.Stdout, out.Results)
	if len(plan) > 1 {
		reportCurve(os.Stdout, objs, plan, out.LearningCurve)
	}
	seconds["total"] = num(time.Since(start).Seconds())
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		jobrun.Fail(err)
	}
	if err := os.WriteFile(filepath.Join(work, "results.json"), append(b, '\n'), 0o644); err != nil {
		jobrun.Fail(err)
	}
	rep, err := htmlReport("ctxsim surrogates: "+dest, &out, objs, plan)
	if err != nil {
		jobrun.Fail(err)
	}
	if err := os.WriteFile(filepath.Join(work, "report.html"), rep.HTML(), 0o644); err != nil {
		jobrun.Fail(err)
	}
	if dest != work {
		if err := storage.Upload(ctx, work, dest); err != nil {
			jobrun.Fail(err)
		}
	}
	fmt.Printf("surrogate: done in %s; models and results.json in %s\n", time.Since(start).Round(time.Millisecond), dest)
	fmt.Printf("surrogate: report in %s\n", storage.Join(dest, "report.html"))
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
	seen, checked := map[string]bool{}, map[string]bool{}
	files := 0
	for _, g := range globs {
		if !storage.IsRemote(g) && !strings.ContainsAny(g, "*?[") {
			if st, err := os.Stat(g); err == nil && st.IsDir() {
				g = filepath.Join(g, "*.parquet")
			}
		}
		names, err := storage.Glob(ctx, g)
		if err != nil {
			return nil, 0, fmt.Errorf("no pairs found: --pairs %s: %w", g, err)
		}
		for _, name := range names {
			if seen[name] {
				continue
			}
			seen[name] = true
			files++
			if dir := name[:max(strings.LastIndex(name, "/"), 0)]; !checked[dir] {
				checked[dir] = true
				if err := jobrun.CheckCommitted(ctx, dir); err != nil {
					return nil, 0, fmt.Errorf("pairs: %w", err)
				}
			}
			if _, err := storage.ReadRows(ctx, name, reflect.TypeOf(schemas.LabeledPair{}), func(v any) error {
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
func tokenizePairs(tok textVocab, trainRows, devRows []schemas.LabeledPair) (train, dev []surrogate.Pair, err error) {
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
	ids := surrogate.IDs[int](tok.EncodeBatch(texts))
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

// parseSizes parses --max_pairs: one count, or a comma-separated list for a
// learning curve; 0 stands for every pair.
func parseSizes(v string) ([]int, error) {
	var out []int
	for _, f := range jobrun.SplitList(v) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("--max_pairs %q: want counts of pairs (0: all), comma-separated", v)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--max_pairs %q: name at least one count (0: all)", v)
	}
	return out, nil
}

// planSizes turns the requested sizes into the distinct training-set sizes
// to train at, ascending: 0, and any size beyond what is available, become
// every available pair.
func planSizes(sizes []int, available int) []int {
	var out []int
	for _, n := range sizes {
		if n == 0 || n > available {
			n = available
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func sizeLine(plan []int) string {
	parts := make([]string, len(plan))
	for i, n := range plan {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ", ")
}

// trainOne trains objective oc on pairs, saves the model under
// work/<name>/, checks that it loads back, and evaluates it when ev is set.
func trainOne(oc surrogate.ObjectiveConfig, name string, mc surrogate.Config, initTable, initWeights []float32, initSource string,
	models *method.Models, pairs, dev []surrogate.Pair, work, dest string, globs, splits []string, tokFP string, ev *evalData) (result, error) {
	cfg := surrogate.TrainConfig{
		Model: mc, Objective: oc, Epochs: *epochs, BatchSize: *batchSize, LR: *lr, Seed: *seed,
		InitTable: initTable, InitWeights: initWeights, InitSource: initSource,
		Progress: func(e surrogate.EpochStats) {
			line := fmt.Sprintf("%s: epoch %d/%d, train loss %.4f", name, e.Epoch, *epochs, e.TrainLoss)
			if e.Dev != nil {
				line += fmt.Sprintf(", dev loss %.4f, dev Spearman %.4f", e.Dev.Loss, e.Dev.Spearman)
			}
			fmt.Printf("%s (%.1fs)\n", line, e.Seconds)
		},
	}
	t0 := time.Now()
	var m surrogate.Encoder
	var curve surrogate.Curve
	var err error
	if *encoder == "bilstm" {
		// Each run starts from its own copy of the coherence model.
		cfg.Model = surrogate.Config{}
		m, curve, err = surrogate.TrainBiLSTM(models.Disc.Clone(), cfg, pairs, dev)
	} else {
		m, curve, err = surrogate.Train(cfg, pairs, dev)
	}
	if err != nil {
		return result{}, err
	}
	took := time.Since(t0).Seconds()
	cj := curveOf(curve)
	dir := filepath.Join(work, name)
	info := map[string]any{"train_config": cfg, "curve": cj, "train_pairs": len(pairs),
		"dev_pairs": len(dev), "pairs": globs, "split": splits, "encoder": *encoder,
		"model_fingerprint": models.Fingerprint, "train_seconds": num(took)}
	// What was written must load back with this tokenizer.
	switch m := m.(type) {
	case *surrogate.Model:
		if err := m.Save(dir, tokFP, info); err != nil {
			return result{}, fmt.Errorf("save: %w", err)
		}
		if _, _, err := surrogate.Load(dir, tokFP); err != nil {
			return result{}, fmt.Errorf("the saved model does not load: %w", err)
		}
	case *surrogate.BiLSTM:
		if err := m.M.Save(dir, tokFP, info); err != nil {
			return result{}, fmt.Errorf("save: %w", err)
		}
		if _, _, err := disc.Load(dir, tokFP); err != nil {
			return result{}, fmt.Errorf("the saved model does not load: %w", err)
		}
	}
	r := result{Name: name, Kind: "surrogate", Objective: &oc, Dir: storage.Join(dest, name),
		TrainPairs: len(pairs), TrainSeconds: num(took), Curve: &cj}
	if n := len(cj.Epochs); n > 0 {
		r.FinalTrainLoss, r.FinalDev = &cj.Epochs[n-1].TrainLoss, cj.Epochs[n-1].Dev
	}
	if ev != nil {
		if err := ev.surrogate(m, &r); err != nil {
			return result{}, err
		}
	}
	return r, nil
}
