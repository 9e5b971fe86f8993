// Package surrogatejob is the surrogate job (bin/surrogate). It trains fast
// sentence encoders on harvested labels (Sun et al., TACL 2022, Sec. 3.4)
// and evaluates them side by side with a unigram TF-IDF baseline and the
// untrained encoder on an STS file: Spearman correlation with the gold
// scores and EvalRank. In apply mode (--load) it encodes or scores text
// with a trained encoder instead.
package surrogatejob

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/pipelines/internal/report"
	"github.com/ctxsim/ctxsim/resources"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/disc"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/scoring/surrogate"
	"github.com/ctxsim/ctxsim/storage"
)

// Run runs the job c describes: the apply mode when c.Load is set, else
// training and evaluation. It writes under c.Output and prints its progress
// to stdout.
func Run(ctx context.Context, c Config) error {
	if err := c.CheckMode(); err != nil {
		return err
	}
	if c.ApplyMode() {
		return runApply(ctx, c)
	}
	j, err := newJob(c)
	if err != nil {
		return err
	}
	for _, step := range []func(context.Context) error{
		j.makeWorkDir,  // the local directory the outputs are written in
		j.loadModels,   // the model directory and the tokens it gives
		j.loadPairs,    // read, checked, deduplicated, split and tokenized
		j.initTables,   // the encoders' initial embeddings
		j.loadEval,     // the STS file and Origin's rows, before any training
		j.train,        // one encoder per objective and training-set size
		j.baselines,    // TF-IDF, mean word vectors and the untrained encoder
		j.writeResults, // the table, results.json, report.html, the upload
	} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// job is one training run: its configuration, and what each step leaves
// for the next.
type job struct {
	c           Config
	start       time.Time
	seconds     map[string]num
	objs        []surrogate.ObjectiveConfig
	sizes       []int    // --max_pairs
	trainSplits []string // --split
	// dest is --output; work is the local directory written first (dest
	// itself unless it is remote).
	dest, work string

	models  *method.Models
	tok     textVocab
	tokName string

	globs                []string // --pairs
	plan                 []int    // the training-set sizes trained at, ascending
	trainPairs, devPairs []surrogate.Pair

	modelCfg               surrogate.Config
	initTable, initWeights []float32
	initSource             string

	ev         *evalData // nil without --sts
	originRows []result
	out        results
}

// newJob checks the flags of c that need no file and returns the job.
func newJob(c Config) (*job, error) {
	j := &job{c: c, start: time.Now(), seconds: map[string]num{}}
	var err error
	if j.objs, err = parseObjectives(c.Objective, c.Threshold, c.TopQuantile); err != nil {
		return nil, err
	}
	if j.sizes, err = parseSizes(c.MaxPairs); err != nil {
		return nil, err
	}
	if c.STSPairs < 0 {
		return nil, fmt.Errorf("--sts_pairs %d: want 0 (all) or a positive count", c.STSPairs)
	}
	if c.Origin != "" && c.STS == "" {
		return nil, errors.New("--origin needs --sts: Origin's rows are compared on the STS pairs")
	}
	if c.Init != "random" && c.Init != "coherence" && c.Init != "ctx" && c.Init != "ctx_words" {
		return nil, fmt.Errorf("--init %q: want random, coherence, ctx or ctx_words", c.Init)
	}
	if c.Encoder != "mean" && c.Encoder != "bilstm" {
		return nil, fmt.Errorf("--encoder %q: want mean or bilstm", c.Encoder)
	}
	if !(c.Anchor >= 0) || math.IsInf(c.Anchor, 0) {
		return nil, fmt.Errorf("--anchor %v: want 0 (off) or a positive number", c.Anchor)
	}
	if !(c.WeightLR >= 0) || math.IsInf(c.WeightLR, 0) {
		return nil, fmt.Errorf("--weight_lr %v: want 0 (off) or a positive number", c.WeightLR)
	}
	if !(c.Interpolate > 0 && c.Interpolate <= 2) {
		return nil, fmt.Errorf("--interpolate %v: want a number in (0, 2] (1: the trained table)", c.Interpolate)
	}
	if c.Encoder == "bilstm" && c.Interpolate != 1 {
		return nil, errors.New("--interpolate mixes the mean encoder's table with its start: it does not apply to --encoder=bilstm")
	}
	if c.Encoder == "bilstm" && c.WeightLR > 0 {
		return nil, errors.New("--weight_lr trains the mean encoder's word weights: it does not apply to --encoder=bilstm")
	}
	if c.Encoder == "bilstm" && c.Anchor > 0 {
		return nil, errors.New("--anchor holds the mean encoder's table: it does not apply to --encoder=bilstm")
	}
	if c.Encoder == "bilstm" && (c.DimGiven || c.InitGiven) {
		return nil, errors.New("--encoder=bilstm starts from the coherence model's encoder: --dim and --init do not apply")
	}
	j.trainSplits = jobrun.SplitList(c.Split)
	if len(j.trainSplits) == 0 {
		return nil, errors.New("--split: name at least one split to train on")
	}
	if _, err := parseLabel(c.Label); err != nil {
		return nil, err
	}
	for _, s := range jobrun.SplitList(c.Strata) {
		if !slices.Contains(report.Strata, s) {
			return nil, fmt.Errorf("--strata %s: unknown stratum %q (want some of %s)", c.Strata, s, strings.Join(report.Strata, ", "))
		}
	}
	for _, s := range j.trainSplits {
		if s == c.DevSplit {
			return nil, fmt.Errorf("--split %s and --dev_split %s overlap", c.Split, c.DevSplit)
		}
	}
	return j, nil
}

// makeWorkDir creates the directory the outputs are written in: --output,
// or for a remote --output a local working directory uploaded at the end.
func (j *job) makeWorkDir(context.Context) error {
	j.dest, j.work = j.c.Output, j.c.Output
	if storage.IsRemote(j.dest) {
		h := sha256.Sum256([]byte(j.dest))
		j.work = filepath.Join(storage.CacheRoot(), fmt.Sprintf("surrogate-%x", h[:8]))
		fmt.Printf("surrogate: working in %s, copied to %s at the end\n", j.work, j.dest)
	}
	return os.MkdirAll(j.work, 0o755)
}

// loadModels loads the model directory and picks its tokens. The models
// come first: they are what the pairs are checked against.
func (j *job) loadModels(ctx context.Context) error {
	t0 := time.Now()
	var err error
	if j.models, err = resources.LoadModels(ctx, j.c.Model); err != nil {
		return err
	}
	if j.tok, j.tokName, err = chooseTokens(j.c.Tokens, j.models); err != nil {
		return err
	}
	if j.c.Encoder == "bilstm" && j.tokName != "subword" {
		return errors.New("--encoder=bilstm reads subword tokens: use --tokens=subword")
	}
	j.seconds["load_models"] = num(time.Since(t0).Seconds())
	return nil
}

// loadPairs reads the pairs, checks them against the models, drops
// duplicate pair IDs, splits them into training and dev pairs, and
// tokenizes them.
func (j *job) loadPairs(ctx context.Context) error {
	t0 := time.Now()
	j.globs = jobrun.SplitList(j.c.Pairs)
	rows, files, err := readPairs(ctx, j.globs)
	if err != nil {
		return err
	}
	if err := checkFingerprints(rows, j.models.Fingerprint, j.tok.Fingerprint(), j.c.Model); err != nil {
		return err
	}
	rows, dups := dedup(rows)
	strata := jobrun.SplitList(j.c.Strata)
	trainRows, devRows, bySplit, skipped := splitPairs(rows, j.trainSplits, j.c.DevSplit, strata)
	if len(trainRows) == 0 {
		return fmt.Errorf("no training pairs: %d pairs read from %d files, none in split %s%s (pairs by split: %s)",
			len(rows), files, strings.Join(j.trainSplits, ","), strataLine(strata, skipped), splitLine(bySplit))
	}
	if err := useLabel(j.c.Label, trainRows, devRows); err != nil {
		return err
	}
	if len(strata) > 0 {
		fmt.Printf("surrogate: --strata=%s: %d pairs of other strata left out\n", strings.Join(strata, ","), skipped)
	}
	available := len(trainRows)
	j.plan = planSizes(j.sizes, available)
	trainRows = trainRows[:j.plan[len(j.plan)-1]] // rows are in pair-ID order
	if j.trainPairs, j.devPairs, err = tokenizePairs(j.tok, trainRows, devRows); err != nil {
		return err
	}
	j.seconds["read_pairs"] = num(time.Since(t0).Seconds())
	fmt.Printf("surrogate: %d pairs from %d files (%s; %d duplicates dropped), training on %s of %d %s pairs, %d dev pairs\n",
		len(rows), files, splitLine(bySplit), dups, sizeLine(j.plan), available, strings.Join(j.trainSplits, ","), len(j.devPairs))
	fmt.Printf("surrogate: models %s, %s tokens %.24s (vocab %d)\n", j.models.Fingerprint, j.tokName, j.tok.Fingerprint(), j.tok.VocabSize())

	c := j.c
	j.out = results{SchemaVersion: schemas.Version, Pairs: j.globs, PairFiles: files, PairsRead: len(rows) + dups,
		DuplicatesDropped: dups, BySplit: bySplit, Split: j.trainSplits, DevSplit: c.DevSplit,
		TrainPairsAvailable: available, MaxPairs: j.sizes, TrainSizes: j.plan, TrainPairs: len(j.trainPairs), DevPairs: len(j.devPairs),
		Model: c.Model, ModelFingerprint: j.models.Fingerprint, TokenizerFingerprint: j.tok.Fingerprint(),
		Vocab: j.tok.VocabSize(), Seconds: j.seconds, GOMAXPROCS: runtime.GOMAXPROCS(0),
		Config: map[string]any{"dim": c.Dim, "epochs": c.Epochs, "batch_size": c.BatchSize, "lr": c.LR, "anchor": c.Anchor, "weight_lr": c.WeightLR, "decay": c.Decay, "interpolate": c.Interpolate, "seed": c.Seed,
			"threshold": c.Threshold, "top_quantile": c.TopQuantile, "init": c.Init, "sts_pairs": c.STSPairs, "encoder": c.Encoder,
			"tokens": j.tokName, "label": c.Label, "strata": strata}}
	labels := make([]float32, len(j.trainPairs))
	for i, p := range j.trainPairs {
		labels[i] = p.Label
	}
	if j.out.Positives, err = choosePositives(os.Stdout, os.Stderr, c, j.objs, labels); err != nil {
		return err
	}
	if p := j.out.Positives; p != nil && p.Threshold != nil {
		j.out.Config["threshold"] = float64(*p.Threshold)
	}
	return nil
}

// initTables sets the encoders' configuration and initial embeddings:
// random draws at --dim, a trained table of the model directory
// (--init=coherence, ctx or ctx_words), or the coherence model's BiLSTM encoder.
func (j *job) initTables(context.Context) error {
	j.modelCfg = surrogate.Config{Vocab: j.tok.VocabSize(), Dim: j.c.Dim, InitStd: surrogate.DefaultConfig(1).InitStd}
	if cv, ok := j.tok.(*ctxVocab); ok {
		j.modelCfg.Weighted, j.initWeights = true, cv.Weights()
	}
	if j.c.WeightLR > 0 && !j.modelCfg.Weighted {
		return fmt.Errorf("--weight_lr learns the word weights of --tokens=ctx; --tokens=%s has none", j.tokName)
	}
	j.initSource = fmt.Sprintf("random N(0, %g²), seed %d", j.modelCfg.InitStd, j.c.Seed)
	switch j.c.Init {
	case "random":
	case "coherence", "ctx", "ctx_words":
		table, width, source, err := j.trainedTable()
		if err != nil {
			return err
		}
		j.modelCfg.Dim, j.initTable, j.initSource = width, table, source
		j.out.Config["dim"] = j.modelCfg.Dim
	default:
		return fmt.Errorf("--init: unknown start %q (random, coherence, ctx, ctx_words)", j.c.Init)
	}
	if j.c.Encoder == "bilstm" {
		j.initSource = "the coherence model's BiLSTM encoder"
		j.out.Config["dim"] = j.models.Disc.VecDim()
		delete(j.out.Config, "init")
	}
	return nil
}

// trainedTable returns the embedding table --init names (coherence: the
// coherence model's subword embeddings; ctx: the contrastive model's
// sentence-encoder embeddings; ctx_words: its unit word vectors, the
// alignment's), its width and a description, checked
// against the tokens and --dim.
func (j *job) trainedTable() (table []float32, width int, source string, err error) {
	if j.c.Init == "coherence" {
		if j.models.Disc == nil || j.tokName != "subword" {
			return nil, 0, "", errors.New("--init=coherence needs the coherence model and --tokens=subword")
		}
		table, width = j.models.Disc.SubwordEmbeddings()
		source = "the coherence model's subword embeddings"
	} else {
		if j.tokName != "ctx" {
			return nil, 0, "", fmt.Errorf("--init=%s needs --tokens=ctx", j.c.Init)
		}
		if j.c.Init == "ctx_words" {
			table, width = j.models.Ctx.WordEmbeddings()
			source = "the contrastive model's word vectors (unit sums of its two tables' rows)"
		} else {
			table, width = j.models.Ctx.SentenceEmbeddings()
			source = "the contrastive model's sentence-encoder embeddings"
		}
	}
	if j.c.DimGiven && j.c.Dim != width {
		return nil, 0, "", fmt.Errorf("--dim %d with --init=%s: those embeddings are %d wide; leave --dim out", j.c.Dim, j.c.Init, width)
	}
	if len(table) != j.tok.VocabSize()*width {
		return nil, 0, "", fmt.Errorf("--init=%s: %d embeddings for a vocabulary of %d", j.c.Init, len(table)/width, j.tok.VocabSize())
	}
	return table, width, source, nil
}

// loadEval reads the STS file (--sts) and Origin's rows (--origin) before
// any training, so that a bad file fails early.
func (j *job) loadEval(ctx context.Context) error {
	c := j.c
	if c.STS != "" {
		t0 := time.Now()
		ev, err := loadEval(ctx, c.STS, c.STSPairs, c.Chunks, j.tok)
		if err != nil {
			return err
		}
		j.ev = ev
		j.seconds["load_eval"] = num(time.Since(t0).Seconds())
		j.out.STS, j.out.STSPairs, j.out.STSSentences, j.out.IDF = c.STS, len(ev.gold), len(ev.sents), &ev.idf
		j.out.Tokenize = tokenizeThroughput(j.tok, ev.sents)
		fmt.Printf("surrogate: %d STS pairs, %d distinct sentences; IDF over %d %s\n",
			len(ev.gold), len(ev.sents), ev.idf.Documents, strings.ReplaceAll(ev.idf.Source, "_", " "))
	} else if c.Chunks != "" {
		fmt.Println("surrogate: --chunks is only used with --sts; ignoring it")
	}
	if c.Origin != "" {
		rows, err := readOrigin(ctx, jobrun.SplitList(c.Origin), j.ev)
		if err != nil {
			return err
		}
		j.originRows = rows
	}
	return nil
}

// train trains each objective at each training-set size, adding a row per
// encoder and, with several sizes, the learning curve.
func (j *job) train(context.Context) error {
	for _, n := range j.plan {
		for _, oc := range j.objs {
			name := oc.Name
			if len(j.plan) > 1 {
				name = fmt.Sprintf("%s-%d", oc.Name, n)
			}
			r, err := j.trainOne(oc, name, j.trainPairs[:n])
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			j.out.Results = append(j.out.Results, r)
			if len(j.plan) > 1 {
				if j.out.LearningCurve == nil {
					j.out.LearningCurve = map[string][]curvePoint{}
				}
				p := curvePoint{Pairs: n, Spearman100: r.Spearman100, EvalRank: r.EvalRank, TrainSecs: r.TrainSeconds}
				if r.FinalDev != nil {
					p.DevSpearman = &r.FinalDev.Spearman
				}
				j.out.LearningCurve[oc.Name] = append(j.out.LearningCurve[oc.Name], p)
			}
		}
	}
	return nil
}

// trainOne trains objective oc on pairs, saves the model under
// work/<name>/, checks that it loads back, and evaluates it when there is
// an STS file.
func (j *job) trainOne(oc surrogate.ObjectiveConfig, name string, pairs []surrogate.Pair) (result, error) {
	c := j.c
	cfg := surrogate.TrainConfig{
		Model: j.modelCfg, Objective: oc, Epochs: c.Epochs, BatchSize: c.BatchSize, LR: c.LR, Seed: c.Seed, Anchor: c.Anchor, WeightLR: c.WeightLR, Decay: c.Decay,
		Interpolate: c.Interpolate,
		InitTable:   j.initTable, InitWeights: j.initWeights, InitSource: j.initSource,
		Progress: func(e surrogate.EpochStats) {
			line := fmt.Sprintf("%s: epoch %d/%d, train loss %.4f", name, e.Epoch, c.Epochs, e.TrainLoss)
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
	if c.Encoder == "bilstm" {
		// Each run starts from its own copy of the coherence model.
		cfg.Model = surrogate.Config{}
		m, curve, err = surrogate.TrainBiLSTM(j.models.Disc.Clone(), cfg, pairs, j.devPairs)
	} else {
		m, curve, err = surrogate.Train(cfg, pairs, j.devPairs)
	}
	if err != nil {
		return result{}, err
	}
	took := time.Since(t0).Seconds()
	cj := curveOf(curve)
	info := map[string]any{"train_config": cfg, "curve": cj, "train_pairs": len(pairs),
		"dev_pairs": len(j.devPairs), "pairs": j.globs, "split": j.trainSplits, "encoder": c.Encoder,
		"model_fingerprint": j.models.Fingerprint, "train_seconds": num(took)}
	if err := saveEncoder(m, filepath.Join(j.work, name), j.tok.Fingerprint(), info); err != nil {
		return result{}, err
	}
	r := result{Name: name, Kind: "surrogate", Objective: &oc, Dir: storage.Join(j.dest, name),
		TrainPairs: len(pairs), TrainSeconds: num(took), Curve: &cj}
	if n := len(cj.Epochs); n > 0 {
		r.FinalTrainLoss, r.FinalDev = &cj.Epochs[n-1].TrainLoss, cj.Epochs[n-1].Dev
	}
	if cj.Interpolated != nil {
		// The saved model is the interpolated one: its dev figures are
		// the final ones.
		r.FinalDev = cj.Interpolated
		fmt.Printf("%s: moved to %g times the trained change from the start, dev loss %.4f, dev Spearman %.4f\n", name, c.Interpolate, float64(cj.Interpolated.Loss), float64(cj.Interpolated.Spearman))
	}
	if j.ev != nil {
		if err := j.ev.surrogate(m, &r); err != nil {
			return result{}, err
		}
	}
	return r, nil
}

// saveEncoder saves a trained encoder in dir with info and checks that what
// was written loads back with the tokenizer of fingerprint tokFP.
func saveEncoder(m surrogate.Encoder, dir, tokFP string, info map[string]any) error {
	switch m := m.(type) {
	case *surrogate.Model:
		if err := m.Save(dir, tokFP, info); err != nil {
			return fmt.Errorf("save: %w", err)
		}
		if _, _, err := surrogate.Load(dir, tokFP); err != nil {
			return fmt.Errorf("the saved model does not load: %w", err)
		}
	case *surrogate.BiLSTM:
		if err := m.M.Save(dir, tokFP, info); err != nil {
			return fmt.Errorf("save: %w", err)
		}
		if _, _, err := disc.Load(dir, tokFP); err != nil {
			return fmt.Errorf("the saved model does not load: %w", err)
		}
	}
	return nil
}

// baselines adds, with an STS file, Origin's rows, the TF-IDF cosine, the
// coherence model's mean word vectors and the untrained encoder.
func (j *job) baselines(context.Context) error {
	ev := j.ev
	if ev == nil {
		return nil
	}
	j.out.Results = append(j.out.Results, j.originRows...)
	r, err := ev.tfidfResult()
	if err != nil {
		return err
	}
	j.out.Results = append(j.out.Results, r)
	if j.models.Disc != nil {
		if r, err = ev.meanWordVectors(j.models); err != nil {
			return err
		}
		j.out.Results = append(j.out.Results, r)
	}
	// The encoder before training: averaged random vectors already reward
	// word overlap, and the coherence model's table is a trained start, so
	// this is the bar the labels must lift an encoder above.
	var m0 surrogate.Encoder = &surrogate.BiLSTM{M: j.models.Disc}
	if j.c.Encoder == "mean" {
		mm, err := surrogate.TrainConfig{Model: j.modelCfg, Seed: j.c.Seed, InitTable: j.initTable, InitWeights: j.initWeights}.Initial()
		if err != nil {
			return err
		}
		m0 = mm
	}
	u := result{Name: "untrained", Kind: "baseline",
		Note: "the encoder at its initialisation (" + j.initSource + "), before any label"}
	if err := ev.surrogate(m0, &u); err != nil {
		return err
	}
	j.out.Results = append(j.out.Results, u)
	return nil
}

// writeResults prints the table (and the learning curve), writes
// results.json and report.html, and uploads a remote --output.
func (j *job) writeResults(ctx context.Context) error {
	printTable(os.Stdout, j.out.Results)
	if len(j.plan) > 1 {
		reportCurve(os.Stdout, j.objs, j.plan, j.out.LearningCurve)
	}
	j.seconds["total"] = num(time.Since(j.start).Seconds())
	b, err := json.MarshalIndent(j.out, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(j.work, "results.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	rep, err := htmlReport("ctxsim surrogates: "+j.dest, &j.out, j.objs, j.plan)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(j.work, "report.html"), rep.HTML(), 0o644); err != nil {
		return err
	}
	if j.dest != j.work {
		if err := storage.Upload(ctx, j.work, j.dest); err != nil {
			return fmt.Errorf("upload to %s: %w", j.dest, err)
		}
	}
	fmt.Printf("surrogate: done in %s; models and results.json in %s\n", time.Since(j.start).Round(time.Millisecond), j.dest)
	fmt.Printf("surrogate: report in %s\n", storage.Join(j.dest, "report.html"))
	return nil
}
