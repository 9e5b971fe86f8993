// Command train trains the contextual models on a corpus: the contrastive
// context model, and the paper's discriminative coherence model (Eq. 1) and
// generative infilling model (Eq. 2) with their subword tokenizer. It
// reports held-out metrics and learning curves (with, for every scorer, how
// well it finds a sentence's true context among others), and saves
// everything under --output.
//
//	go run ./pipelines/train --input=corpus.jsonl.gz --output=out/model --preset=tiny
package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/retrieval/corpus"
	"github.com/ctxsim/ctxsim/scoring/bundle"
	"github.com/ctxsim/ctxsim/scoring/contrast"
	"github.com/ctxsim/ctxsim/scoring/disc"
	"github.com/ctxsim/ctxsim/scoring/examples"
	"github.com/ctxsim/ctxsim/scoring/gen"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/scoring/nn"
	"github.com/ctxsim/ctxsim/scoring/tokenizer"
	"github.com/ctxsim/ctxsim/storage"
)

const usage = `
train: corpus -> contrastive context model (ctx), and the paper's coherence
(disc) and infilling (gen) models with their tokenizer.

Reads the corpus like the index job (JSONL or text, local or gs://), holds out
a fraction of documents (by a hash of their IDs), and trains the models named
by --models:
  ctx   the contrastive context model (the default labeler's scorer):
        IDF-weighted word-embedding encoders of a sentence and of its
        neighbours, trained to pick a sentence's own context among the
        batch's (InfoNCE); writes ctx.json + ctx.safetensors
  disc  the BiLSTM coherence model (Eq. 1); writes disc.*
  gen   the encoder-decoder infilling model (Eq. 2, one model for the three
        directions); writes gen.*
disc and gen also train a byte-level BPE tokenizer (tokenizer.json). Every
run also writes reference.json, a fixed sample of training contexts (the zref
reading of Eq. 4 standardises a sentence's scores over them). Every
model is checked on held-out documents: the rank of a sentence's true
context among 20 and 100 (random and same-document distractors), per term,
beside its own loss. Writes train-results.json (or
train-results-<model>.json for one model) and, for disc and gen,
checkpoint/ (see --resume).`

var (
	input       = flag.String("input", "", "Comma-separated corpus file globs (required).")
	output      = flag.String("output", "", "Model directory, local or gs:// (required).")
	preset      = flag.String("preset", "base", "Model size: tiny (demo and tests) or base.")
	seed        = flag.Uint64("seed", 1, "Random seed: same inputs and seed give the same models.")
	maxDocs     = flag.Int("max_docs", 0, "Use at most this many documents (by ID order); 0 = all.")
	heldOut     = flag.Float64("held_out", 0.02, "Fraction of documents held out for metrics.")
	vocab       = flag.Int("vocab_size", 0, "Tokenizer vocabulary (0: 12000 base, 4000 tiny).")
	head        = flag.String("head", disc.HeadInteraction, "Coherence head: interaction or linear (the paper's separable head).")
	steps       = flag.Int("disc_steps", 0, "Training steps of the coherence model (0: preset default).")
	genSteps    = flag.Int("gen_steps", 0, "Training steps of the generative model (0: preset default).")
	genLR       = flag.Float64("gen_lr", 5e-4, "Adam learning rate of the generative model.")
	batchSize   = flag.Int("batch", 32, "Examples per training step.")
	lr          = flag.Float64("lr", 2e-3, "Adam learning rate.")
	evalEvery   = flag.Int("eval_every", 0, "Steps between held-out evaluations (0: steps/10).")
	evalN       = flag.Int("eval_examples", 4000, "Held-out examples used for metrics.")
	ckptEvery   = flag.Int("checkpoint_every", 0, "Steps between checkpoints in <output>/checkpoint (0: at each evaluation).")
	resume      = flag.Bool("resume", false, "Resume from <output>/checkpoint if it exists; the result equals an uninterrupted run.")
	models      = flag.String("models", "ctx", "Which models to train, comma-separated: ctx, disc, gen. Jobs on the same --output can train them in parallel; the tokenizer is deterministic, so disc and gen jobs write the same one.")
	refContexts = flag.Int("reference_contexts", 500, "Training contexts drawn once and saved as reference.json: the zref reading of Eq. 4 standardises a sentence's scores over them.")
	rankTasks   = flag.Int("rank_tasks", 500, "Held-out sentences per context-ranking test (the infilling model uses a tenth).")
	threads     = flag.Int("threads", 0, "Threads the contrastive model trains with (0: one per CPU; the weights do not depend on it).")
	ctxDim      = flag.Int("ctx_dim", 0, "Contrastive model: embedding width (0: preset default).")
	ctxEpochs   = flag.Float64("ctx_epochs", 0, "Contrastive model: epochs over the training slots (0: preset default).")
	ctxBatch    = flag.Int("ctx_batch", 0, "Contrastive model: examples per step, each the others' negatives (0: preset default).")
	ctxLR       = flag.Float64("ctx_lr", 0, "Contrastive model: peak Adam learning rate (0: preset default).")
	genDirs     = flag.String("gen_directions", "to_s,to_left,to_right", "Directions the generative model is trained and evaluated on (to_s, to_left, to_right); one direction gives a single-direction model.")
)

// trainState is what a checkpoint records besides the model and optimiser.
// The data order is replayed from the seed and the number of reshuffles.
type trainState struct {
	Pos     int          `json:"pos"`
	Epochs  int          `json:"epochs"`
	LossSum float64      `json:"loss_sum"`
	LossN   int          `json:"loss_n"`
	Curve   []curvePoint `json:"curve"`
}

type presetConfig struct {
	vocab, embed, hidden, headHidden, steps int
	gen                                     func(vocab int) gen.Config
	genSteps                                int
	ctx                                     func() contrast.Config
}

var presets = map[string]presetConfig{
	"tiny": {vocab: 4000, embed: 32, hidden: 32, headHidden: 32, steps: 300, genSteps: 300,
		gen: func(v int) gen.Config {
			return gen.Config{Vocab: v, Dim: 32, Heads: 2, FF: 64, EncLayers: 1, DecLayers: 1,
				MaxSrc: 64, MaxTgt: 32, MaxSegments: 11}
		},
		ctx: func() contrast.Config {
			c := contrast.DefaultConfig()
			c.Dim, c.Batch, c.Vocab = 128, 256, 30000
			return c
		}},
	"base": {vocab: 12000, embed: 256, hidden: 300, headHidden: 300, steps: 20000, genSteps: 20000,
		gen: gen.DefaultConfig, ctx: contrast.DefaultConfig},
}

// curvePoint is one learning-curve measurement.
type curvePoint struct {
	Step      int     `json:"step"`
	Examples  int     `json:"examples"`
	Seconds   float64 `json:"seconds"`
	TrainLoss float64 `json:"train_loss"`
	HeldOut   any     `json:"held_out"`
}

type results struct {
	Corpus    loadStats             `json:"corpus"`
	Train     int                   `json:"train_documents"`
	HeldOut   int                   `json:"held_out_documents"`
	Tokenizer map[string]any        `json:"tokenizer"`
	Disc      map[string]any        `json:"disc"`
	Curve     []curvePoint          `json:"disc_curve"`
	Gen       map[string]any        `json:"gen"`
	GenCurve  []curvePoint          `json:"gen_curve"`
	Ctx       map[string]any        `json:"ctx,omitempty"`
	CtxCurve  []contrast.CurvePoint `json:"ctx_curve,omitempty"`
	Backend   string                `json:"blas_backend"`
}

func main() {
	jobrun.Init(usage)
	jobrun.Require("input", "output")
	jobrun.Lease("train", *output)
	defer jobrun.Release()
	pc, ok := presets[*preset]
	if !ok {
		jobrun.Fail(fmt.Errorf("unknown preset %q (tiny, base)", *preset))
	}
	if *vocab > 0 {
		pc.vocab = *vocab
	}
	if *steps > 0 {
		pc.steps = *steps
	}
	if *genSteps > 0 {
		pc.genSteps = *genSteps
	}
	ctx := context.Background()
	start := time.Now()
	// A remote --output is written in a local working directory (named by
	// the output, so --resume finds its checkpoints after a restart on the
	// same machine) and copied up at the end.
	dest := *output
	if storage.IsRemote(dest) {
		h := sha256.Sum256([]byte(dest))
		*output = filepath.Join(storage.CacheRoot(), fmt.Sprintf("train-%x", h[:8]))
		if err := os.MkdirAll(*output, 0o755); err != nil {
			jobrun.Fail(err)
		}
		fmt.Printf("train: working in %s, copied to %s at the end\n", *output, dest)
	}
	docs, st, err := loadDocs(ctx, jobrun.SplitList(*input), corpus.Defaults(), *maxDocs)
	if err != nil {
		jobrun.Fail(err)
	}
	cfg := examples.Config{HeldOut: *heldOut, Seed: int64(*seed)}
	trainDocs, heldDocs := examples.Split(docs, cfg)
	fmt.Printf("corpus: %d files, %d documents (%d train, %d held out), %d sentences, %d rejected records %v\n",
		st.Files, st.Documents, len(trainDocs), len(heldDocs), st.Sentences, st.Dead, st.Reasons)
	if len(trainDocs) == 0 || len(heldDocs) == 0 {
		jobrun.Fail(fmt.Errorf("need documents both to train on and to hold out; got %d and %d", len(trainDocs), len(heldDocs)))
	}
	res := results{Corpus: st, Train: len(trainDocs), HeldOut: len(heldDocs), Backend: nn.Backend()}
	want := map[string]bool{}
	for _, m := range jobrun.SplitList(*models) {
		if m != "ctx" && m != "disc" && m != "gen" {
			jobrun.Fail(fmt.Errorf("--models: unknown model %q (ctx, disc, gen)", m))
		}
		want[m] = true
	}
	if len(want) == 0 {
		jobrun.Fail(fmt.Errorf("--models: name at least one of ctx, disc, gen"))
	}
	dirs, err := parseDirections(*genDirs)
	if err != nil {
		jobrun.Fail(err)
	}
	// The reference contexts (a fixed sample of training contexts, for the
	// zref reading of Eq. 4) go with whatever models are trained.
	if err := method.SaveReference(*output, examples.ReferenceContexts(trainDocs, *refContexts, 2, int64(*seed)+11)); err != nil {
		jobrun.Fail(err)
	}
	ranks := newRankSuite(heldDocs, *rankTasks, 2, int64(*seed)+7)
	if want["ctx"] {
		trainCtx(&res, pc, trainDocs, ranks)
	}
	if want["disc"] || want["gen"] {
		tok := trainTokenizer(&res, pc, trainDocs, heldDocs)
		if want["disc"] {
			trainDisc(&res, pc, tok, trainDocs, heldDocs, cfg, ranks)
		}
		if want["gen"] {
			trainGen(&res, pc, tok, trainDocs, heldDocs, cfg, dirs, ranks)
		}
	}
	name := "train-results.json"
	if len(want) == 1 {
		name = "train-results-" + jobrun.SplitList(*models)[0] + ".json"
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(filepath.Join(*output, name), append(b, '\n'), 0o644); err != nil {
		jobrun.Fail(err)
	}
	if dest != *output {
		if err := storage.Upload(ctx, *output, dest); err != nil {
			jobrun.Fail(err)
		}
	}
	fmt.Printf("train: done in %s; models in %s\n", time.Since(start).Round(time.Second), dest)
}

// trainTokenizer trains the subword tokenizer on the training documents
// and saves it.
func trainTokenizer(res *results, pc presetConfig, trainDocs, heldDocs []examples.Doc) *tokenizer.Tokenizer {
	t0 := time.Now()
	tok, err := tokenizer.Train(sentences(trainDocs), tokenizer.TrainConfig{VocabSize: pc.vocab})
	if err != nil {
		jobrun.Fail(err)
	}
	if err := saveTokenizer(*output, tok); err != nil {
		jobrun.Fail(err)
	}
	var words, toks int
	for s := range sentences(heldDocs) {
		words += len(splitWords(s))
		toks += len(tok.Encode(s))
	}
	res.Tokenizer = map[string]any{"vocab_size": tok.VocabSize(), "fingerprint": tok.Fingerprint(),
		"seconds": time.Since(t0).Seconds(), "held_out_tokens_per_word": float64(toks) / float64(max(words, 1))}
	fmt.Printf("tokenizer: vocab %d, %.3f tokens/word on held-out text, %.1fs\n",
		tok.VocabSize(), res.Tokenizer["held_out_tokens_per_word"], time.Since(t0).Seconds())
	return tok
}

// trainCtx trains, evaluates and saves the contrastive context model.
func trainCtx(res *results, pc presetConfig, trainDocs []examples.Doc, ranks *rankSuite) {
	c := pc.ctx()
	c.Seed = *seed
	if *ctxDim > 0 {
		c.Dim = *ctxDim
	}
	if *ctxEpochs > 0 {
		c.Epochs = *ctxEpochs
	}
	if *ctxBatch > 0 {
		c.Batch = *ctxBatch
	}
	if *ctxLR > 0 {
		c.LR = *ctxLR
	}
	th := *threads
	if th <= 0 {
		th = runtime.NumCPU()
	}
	fmt.Printf("ctx: dim %d, vocabulary %d words (stems: %v) + %d buckets, batch %d, %.1f epochs, %d threads\n",
		c.Dim, c.Vocab, c.Stem, c.Buckets, c.Batch, c.Epochs, th)
	t0 := time.Now()
	// The held-out check runs at a tenth of the tasks during training, in
	// full at the end.
	quick := max(1, *rankTasks/10)
	m, curve, err := contrast.Train(c, trainDocs, contrast.TrainOptions{Threads: th, Every: 100,
		Progress: func(p contrast.Progress) {
			if p.Step%500 == 0 || p.Step == p.Steps {
				fmt.Printf("ctx step %d/%d (%.0fs): train loss %.4f\n", p.Step, p.Steps, p.Elapsed.Seconds(), p.Loss)
			}
		},
		Eval: func(m *contrast.Model) any {
			r, line := ranks.run(quick, ctxRankScore(m))
			fmt.Printf("ctx (%.1f min): held-out context ranking (%d tasks each): %s\n", time.Since(t0).Minutes(), quick, line)
			return r
		}})
	if err != nil {
		jobrun.Fail(fmt.Errorf("ctx: %w", err))
	}
	rank, line := ranks.run(0, ctxRankScore(m))
	fmt.Printf("ctx: trained in %.1f min; held-out context ranking: %s\n", time.Since(t0).Minutes(), line)
	res.Ctx = map[string]any{"config": c, "threads": th, "train_seconds": time.Since(t0).Seconds(),
		"vocabulary_words": len(m.Vocab.Words), "context_ranking": map[string]any{"ctx": rank}}
	res.CtxCurve = curve
	if err := m.Save(*output, map[string]any{"seed": *seed, "context_ranking": rank,
		"train_seconds": time.Since(t0).Seconds()}); err != nil {
		jobrun.Fail(err)
	}
}

// trainDisc trains, evaluates and saves the coherence model.
func trainDisc(res *results, pc presetConfig, tok *tokenizer.Tokenizer, trainDocs, heldDocs []examples.Doc,
	cfg examples.Config, ranks *rankSuite) {
	hr := rand.New(rand.NewPCG(*seed, 2))
	dcfg := disc.Config{Vocab: tok.VocabSize(), EmbedDim: pc.embed, Hidden: pc.hidden,
		HeadHidden: pc.headHidden, Head: *head, MaxTokens: 64, Window: 2}
	model, err := disc.New(dcfg, *seed)
	if err != nil {
		jobrun.Fail(err)
	}
	trainEx := examples.CoherenceExamples(trainDocs, cfg)
	heldEx := examples.CoherenceExamples(heldDocs, examples.Config{Seed: int64(*seed) + 1})
	hr.Shuffle(len(heldEx), func(i, j int) { heldEx[i], heldEx[j] = heldEx[j], heldEx[i] })
	evalEx := heldEx[:min(*evalN, len(heldEx))]
	fmt.Printf("disc: %d training examples, %d held-out examples, %d steps of %d, head %s, backend %s\n",
		len(trainEx), len(evalEx), pc.steps, *batchSize, *head, nn.Backend())
	tr := disc.NewTrainer(model, tok, *lr)
	t0 := time.Now()
	res.Curve = runLoop(loop[examples.Coherence]{
		name: "disc", format: disc.Format, exs: trainEx, steps: pc.steps, batch: *batchSize, seed: *seed,
		step: tr.Step, modelCfg: dcfg, opt: tr.Opt, params: model.Params(), tokFP: tok.Fingerprint(),
		eval: func() (any, string) {
			met := model.Evaluate(tok, evalEx, 256)
			return met, fmt.Sprintf("held-out loss %.4f acc %.3f auc %.3f (same-doc %.3f, random %.3f)",
				met.Loss, met.Accuracy, met.AUC, met.AUCSameDoc, met.AUCRandom)
		},
	})
	final := model.Evaluate(tok, evalEx, 256)
	mrr, hits1 := model.Ranking(tok, evalEx, 20, *seed)
	rank, line := ranks.run(0, discRankScore(model, tok))
	res.Disc = map[string]any{"config": dcfg, "steps": pc.steps, "batch": *batchSize, "lr": *lr,
		"train_seconds": time.Since(t0).Seconds(), "held_out": final,
		"context_ranking_mrr_at_20": mrr, "context_ranking_hits1_at_20": hits1,
		"context_ranking": map[string]any{"disc": rank}}
	fmt.Printf("disc: context ranking among 20 contexts: MRR %.3f, hits@1 %.3f\n", mrr, hits1)
	fmt.Printf("disc: held-out context ranking: %s\n", line)
	if err := model.Save(*output, tok.Fingerprint(), map[string]any{"seed": *seed, "steps": pc.steps,
		"held_out": final, "context_ranking_mrr_at_20": mrr}); err != nil {
		jobrun.Fail(err)
	}
}

// trainGen trains, evaluates and saves the infilling model on the given
// directions.
func trainGen(res *results, pc presetConfig, tok *tokenizer.Tokenizer, trainDocs, heldDocs []examples.Doc,
	cfg examples.Config, dirs []examples.Direction, ranks *rankSuite) {
	hr := rand.New(rand.NewPCG(*seed, 3))
	gcfg := pc.gen(tok.VocabSize())
	gm, err := gen.New(gcfg, *seed)
	if err != nil {
		jobrun.Fail(err)
	}
	gTrain := filterDirs(examples.InfillExamples(trainDocs, cfg), dirs)
	gHeld := filterDirs(examples.InfillExamples(heldDocs, cfg), dirs)
	hr.Shuffle(len(gHeld), func(i, j int) { gHeld[i], gHeld[j] = gHeld[j], gHeld[i] })
	gEval := gHeld[:min(*evalN, len(gHeld))]
	fmt.Printf("gen: %d training examples, %d held-out examples, %d steps of %d\n",
		len(gTrain), len(gEval), pc.genSteps, *batchSize)
	gtr := gen.NewTrainer(gm, tok, *genLR)
	t0 := time.Now()
	res.GenCurve = runLoop(loop[examples.Infill]{
		name: "gen", format: gen.Format, exs: gTrain, steps: pc.genSteps, batch: *batchSize, seed: *seed + 100,
		step: gtr.Step, modelCfg: gcfg, opt: gtr.Opt, params: gm.Params(), tokFP: tok.Fingerprint(),
		eval: func() (any, string) {
			met := gm.Evaluate(tok, gEval, 64)
			var per []string
			for _, d := range []struct {
				name string
				m    gen.DirMetrics
			}{{"to_s", met.ToSentence}, {"to_left", met.ToLeft}, {"to_right", met.ToRight}} {
				if d.m.Examples > 0 {
					per = append(per, fmt.Sprintf("%s %.1f", d.name, d.m.Perplexity))
				}
			}
			return met, fmt.Sprintf("held-out perplexity %.1f (%s)", met.All.Perplexity, strings.Join(per, ", "))
		},
	})
	gfinal := gm.Evaluate(tok, gEval, 64)
	rank := map[string]any{}
	for _, d := range dirs {
		r, line := ranks.run(max(1, *rankTasks/10), genRankScore(gm, tok, d))
		rank[d.String()] = r
		fmt.Printf("gen %s: held-out context ranking: %s\n", d, line)
	}
	res.Gen = map[string]any{"config": gcfg, "steps": pc.genSteps, "batch": *batchSize, "lr": *genLR,
		"train_seconds": time.Since(t0).Seconds(), "held_out": gfinal, "context_ranking": rank}
	if err := gm.Save(*output, tok.Fingerprint(), map[string]any{"seed": *seed, "steps": pc.genSteps,
		"directions": *genDirs, "held_out": gfinal}); err != nil {
		jobrun.Fail(err)
	}
}

// parseDirections parses --gen_directions.
func parseDirections(list string) ([]examples.Direction, error) {
	var out []examples.Direction
	for _, name := range jobrun.SplitList(list) {
		found := false
		for _, d := range []examples.Direction{examples.ToSentence, examples.ToLeft, examples.ToRight} {
			if d.String() == name {
				out = append(out, d)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("--gen_directions: unknown direction %q (to_s, to_left, to_right)", name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--gen_directions: name at least one direction")
	}
	return out, nil
}

// filterDirs keeps the examples whose direction is in dirs.
func filterDirs(exs []examples.Infill, dirs []examples.Direction) []examples.Infill {
	if len(dirs) == 3 {
		return exs
	}
	out := exs[:0]
	for _, e := range exs {
		if slices.Contains(dirs, e.Dir) {
			out = append(out, e)
		}
	}
	return out
}

// sentences yields every sentence of docs.
func sentences(docs []examples.Doc) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, d := range docs {
			for _, s := range d.Sentences {
				if !yield(s) {
					return
				}
			}
		}
	}
}

func splitWords(s string) []string {
	var out []string
	start := -1
	for i, c := range s {
		if c == ' ' {
			if start >= 0 {
				out = append(out, s[start:i])
			}
			start = -1
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

func saveTokenizer(dir string, tok *tokenizer.Tokenizer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "tokenizer.json.tmp"))
	if err != nil {
		return err
	}
	if err := tok.Save(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(filepath.Join(dir, "tokenizer.json.tmp"), filepath.Join(dir, "tokenizer.json"))
}

// loop describes one model's training run.
type loop[E any] struct {
	name, format string
	exs          []E
	steps, batch int
	seed         uint64
	step         func([]E) float32
	eval         func() (metrics any, line string)
	modelCfg     any
	opt          *nn.Adam
	params       []*nn.Param
	tokFP        string
}

// runLoop trains for l.steps batches drawn from l.exs in an order fixed by
// l.seed (reshuffled at each epoch), evaluates every --eval_every steps,
// checkpoints into <output>/checkpoint/, and with --resume continues from
// the checkpoint so the result equals an uninterrupted run. It returns the
// learning curve.
func runLoop[E any](l loop[E]) []curvePoint {
	every := *evalEvery
	if every <= 0 {
		every = max(1, l.steps/10)
	}
	ckEvery := *ckptEvery
	if ckEvery <= 0 {
		ckEvery = every
	}
	if len(l.exs) < l.batch {
		jobrun.Fail(fmt.Errorf("%s: %d training examples, fewer than one batch of %d", l.name, len(l.exs), l.batch))
	}
	ckptDir := filepath.Join(*output, "checkpoint")
	r := rand.New(rand.NewPCG(l.seed, 1))
	shuffle := func() { r.Shuffle(len(l.exs), func(i, j int) { l.exs[i], l.exs[j] = l.exs[j], l.exs[i] }) }
	shuffle()
	var ts trainState
	first := 1
	if *resume {
		step, err := bundle.LoadCheckpoint(ckptDir, l.name, l.format, l.tokFP, l.modelCfg, l.opt, l.params, &ts)
		switch {
		case err == nil:
			first = step + 1
			for e := 0; e < ts.Epochs; e++ {
				shuffle()
			}
			fmt.Printf("%s: resumed from the checkpoint after step %d\n", l.name, step)
		case errors.Is(err, os.ErrNotExist):
			fmt.Printf("%s: no checkpoint to resume from; starting afresh\n", l.name)
		default:
			jobrun.Fail(err)
		}
	}
	t0 := time.Now()
	for step := first; step <= l.steps; step++ {
		if ts.Pos+l.batch > len(l.exs) {
			ts.Pos = 0
			ts.Epochs++
			shuffle()
		}
		ts.LossSum += float64(l.step(l.exs[ts.Pos : ts.Pos+l.batch]))
		ts.LossN++
		ts.Pos += l.batch
		if step%every == 0 || step == l.steps {
			met, line := l.eval()
			p := curvePoint{Step: step, Examples: step * l.batch, Seconds: time.Since(t0).Seconds(),
				TrainLoss: ts.LossSum / float64(ts.LossN), HeldOut: met}
			ts.Curve = append(ts.Curve, p)
			ts.LossSum, ts.LossN = 0, 0
			fmt.Printf("%s step %d (%.0fs): train loss %.4f, %s\n", l.name, step, p.Seconds, p.TrainLoss, line)
		}
		if step%ckEvery == 0 {
			if err := bundle.SaveCheckpoint(ckptDir, l.name, l.format, l.tokFP, l.modelCfg, step, l.opt, l.params, ts); err != nil {
				jobrun.Fail(err)
			}
		}
	}
	return ts.Curve
}
