// Package trainjob is the train job (bin/train): it trains the contextual
// models on a corpus (the contrastive context model, and the paper's
// discriminative coherence model (Eq. 1) and generative infilling model
// (Eq. 2) with their subword tokenizer), reports held-out metrics and
// learning curves (with, for every scorer, how well it finds a sentence's
// true context among others), and saves everything under Config.Output.
package trainjob

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/pipelines/internal/nanjson"
	"github.com/ctxsim/ctxsim/retrieval/corpus"
	"github.com/ctxsim/ctxsim/scoring/contrast"
	"github.com/ctxsim/ctxsim/scoring/disc"
	"github.com/ctxsim/ctxsim/scoring/examples"
	"github.com/ctxsim/ctxsim/scoring/gen"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/scoring/nn"
	"github.com/ctxsim/ctxsim/storage"
)

// Usage is the job's description, printed by -help above the flags.
const Usage = `
train: corpus -> contrastive context model (ctx), and the paper's coherence
(disc) and infilling (gen) models with their tokenizer.

Reads the corpus like the index job (JSONL, Parquet or plain text, gzip or
zstd or not, files, globs or directories, local or gs://; see bin/index
-help), holds out
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
run also writes reference.json and white.json, fixed samples of training
contexts (the zref reading of Eq. 4 standardises a sentence's scores over
the first; zwhite whitens the context model's vectors over the second).
Every
model is checked on held-out documents: the rank of a sentence's true
context among 20 and 100 (random and same-document distractors), per term,
beside its own loss. Writes train-results.json (or
train-results-<model>.json for one model) and, for disc and gen,
checkpoint/ (see --resume).`

// Config is one run of the job. Each field holds the flag named beside it.
type Config struct {
	Input             string  // --input
	TextField         string  // --text_field
	IDField           string  // --id_field
	FollowLinks       bool    // --follow_links
	Output            string  // --output
	Preset            string  // --preset
	Seed              uint64  // --seed
	MaxDocs           int     // --max_docs
	HeldOut           float64 // --held_out
	VocabSize         int     // --vocab_size
	Head              string  // --head
	DiscSteps         int     // --disc_steps
	GenSteps          int     // --gen_steps
	GenLR             float64 // --gen_lr
	Batch             int     // --batch
	LR                float64 // --lr
	EvalEvery         int     // --eval_every
	EvalExamples      int     // --eval_examples
	CheckpointEvery   int     // --checkpoint_every
	Resume            bool    // --resume
	Models            string  // --models
	ReferenceContexts int     // --reference_contexts
	ContextsOnly      bool    // --contexts_only
	RankTasks         int     // --rank_tasks
	Threads           int     // --threads
	CtxDim            int     // --ctx_dim
	CtxEpochs         float64 // --ctx_epochs
	CtxBatch          int     // --ctx_batch
	CtxLR             float64 // --ctx_lr
	CtxDocGroup       int     // --ctx_doc_group
	CtxWindow         int     // --ctx_window
	CtxTemperature    float64 // --ctx_temperature
	GenDirections     string  // --gen_directions
}

// Register defines the job's flags on fs, each bound to its field of c and
// setting it to the flag's default.
func (c *Config) Register(fs *flag.FlagSet) {
	fs.StringVar(&c.Input, "input", "", "Comma-separated corpus files, globs or directories, local or gs://, read as bin/index reads them (required).")
	fs.StringVar(&c.TextField, "text_field", corpus.DefaultTextField, "JSONL field (when a record has no \"paragraphs\"), or Parquet or CSV column, holding a document's text, as in bin/index.")
	fs.StringVar(&c.IDField, "id_field", corpus.DefaultIDField, "JSONL field (when a record has no \"doc_id\"), or Parquet or CSV column, holding a document's ID, as in bin/index.")
	fs.BoolVar(&c.FollowLinks, "follow_links", false, "Read the files that symbolic links under an input directory lead to outside it, as in bin/index.")
	fs.StringVar(&c.Output, "output", "", "Model directory, local or gs:// (required).")
	fs.StringVar(&c.Preset, "preset", "base", "Model size: tiny (demo and tests) or base.")
	fs.Uint64Var(&c.Seed, "seed", 1, "Random seed: same inputs and seed give the same models.")
	fs.IntVar(&c.MaxDocs, "max_docs", 0, "Use at most this many documents (by ID order); 0 = all.")
	fs.Float64Var(&c.HeldOut, "held_out", 0.02, "Fraction of documents held out for metrics.")
	fs.IntVar(&c.VocabSize, "vocab_size", 0, "Tokenizer vocabulary ("+presetDefault(func(p presetConfig) any { return p.vocab })+").")
	fs.StringVar(&c.Head, "head", disc.HeadInteraction, "Coherence head: interaction or linear (the paper's separable head).")
	fs.IntVar(&c.DiscSteps, "disc_steps", 0, "Training steps of the coherence model ("+presetDefault(func(p presetConfig) any { return p.steps })+").")
	fs.IntVar(&c.GenSteps, "gen_steps", 0, "Training steps of the generative model ("+presetDefault(func(p presetConfig) any { return p.genSteps })+").")
	fs.Float64Var(&c.GenLR, "gen_lr", 5e-4, "Adam learning rate of the generative model.")
	fs.IntVar(&c.Batch, "batch", 32, "Examples per training step.")
	fs.Float64Var(&c.LR, "lr", 2e-3, "Adam learning rate.")
	fs.IntVar(&c.EvalEvery, "eval_every", 0, "Steps between held-out evaluations (0: steps/10).")
	fs.IntVar(&c.EvalExamples, "eval_examples", 4000, "Held-out examples used for metrics.")
	fs.IntVar(&c.CheckpointEvery, "checkpoint_every", 0, "Steps between checkpoints in <output>/checkpoint (0: at each evaluation).")
	fs.BoolVar(&c.Resume, "resume", false, "Resume from <output>/checkpoint if it exists; the result equals an uninterrupted run.")
	fs.StringVar(&c.Models, "models", "ctx", "Which models to train, comma-separated: ctx, disc, gen. Jobs on the same --output can train them in parallel; the tokenizer is deterministic, so disc and gen jobs write the same one.")
	fs.BoolVar(&c.ContextsOnly, "contexts_only", false, "Write only reference.json and white.json into --output, training nothing: "+
		"for a model directory trained before white.json existed. Give the training's --input, --held_out and --seed; the samples are then those its training drew.")
	fs.IntVar(&c.ReferenceContexts, "reference_contexts", 500, "Training contexts drawn once and saved as reference.json: the zref reading of Eq. 4 standardises a sentence's scores over them.")
	fs.IntVar(&c.RankTasks, "rank_tasks", 500, "Held-out sentences per context-ranking test (the infilling model uses a tenth).")
	fs.IntVar(&c.Threads, "threads", 0, "Threads the contrastive model trains with (0: one per CPU; the weights do not depend on it).")
	fs.IntVar(&c.CtxDim, "ctx_dim", 0, "Contrastive model: embedding width ("+presetDefault(func(p presetConfig) any { return p.ctx().Dim })+").")
	fs.Float64Var(&c.CtxEpochs, "ctx_epochs", 0, "Contrastive model: epochs over the training slots ("+presetDefault(func(p presetConfig) any { return p.ctx().Epochs })+").")
	fs.IntVar(&c.CtxBatch, "ctx_batch", 0, "Contrastive model: examples per step, each the others' negatives ("+presetDefault(func(p presetConfig) any { return p.ctx().Batch })+").")
	fs.IntVar(&c.CtxDocGroup, "ctx_doc_group", 0, "Contrastive model: put groups of this many slots of one document (spaced so their contexts do not overlap) into each batch, "+
		"so that each slot's negatives include contexts of its own document; 0 or 1: slots in a random order.")
	fs.IntVar(&c.CtxWindow, "ctx_window", 0, "Contrastive model: sentences on each side of a sentence that form its context ("+presetDefault(func(p presetConfig) any { return p.ctx().Window })+").")
	fs.Float64Var(&c.CtxTemperature, "ctx_temperature", 0, "Contrastive model: softmax temperature of the in-batch loss and of the scores S = f·g/τ ("+presetDefault(func(p presetConfig) any { return p.ctx().Temperature })+").")
	fs.Float64Var(&c.CtxLR, "ctx_lr", 0, "Contrastive model: peak Adam learning rate ("+presetDefault(func(p presetConfig) any { return p.ctx().LR })+").")
	fs.StringVar(&c.GenDirections, "gen_directions", "to_s,to_left,to_right", "Directions the generative model is trained and evaluated on (to_s, to_left, to_right); one direction gives a single-direction model.")
}

// presetDefault describes a flag's 0 for its help: the value each preset
// gives it, e.g. "0: the preset's, 20000 base, 300 tiny".
func presetDefault(value func(presetConfig) any) string {
	names := slices.Sorted(maps.Keys(presets))
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprint(value(presets[n])) + " " + n
	}
	return "0: the preset's, " + strings.Join(parts, ", ")
}

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

// job is one run in progress: its config, the preset with the config's
// overrides, the directory the models are written to, and the results so
// far.
type job struct {
	c     Config
	pc    presetConfig
	dir   string          // c.Output, or a local working directory when c.Output is remote
	split examples.Config // the held-out split, also the training examples' seed
	res   results
}

// Run trains the models c.Models names on the corpus c.Input, writes them
// with their results under c.Output, and prints its progress on stdout.
func Run(ctx context.Context, c Config) error {
	start := time.Now()
	pc, err := resolvePreset(c)
	if err != nil {
		return err
	}
	j := &job{c: c, pc: pc, dir: c.Output, split: examples.Config{HeldOut: c.HeldOut, Seed: int64(c.Seed)}}
	if err := j.workLocally(); err != nil {
		return err
	}
	trainDocs, heldDocs, err := j.load(ctx)
	if err != nil {
		return err
	}
	if c.ContextsOnly {
		if err := j.writeContexts(trainDocs); err != nil {
			return err
		}
		if j.dir != c.Output {
			if err := storage.Upload(ctx, j.dir, c.Output); err != nil {
				return fmt.Errorf("copy the contexts to %s: %w", c.Output, err)
			}
		}
		fmt.Printf("train: %s and %s written in %s; no model trained\n", method.ReferenceFile, method.WhiteFile,
			time.Since(start).Round(time.Second))
		return nil
	}
	want, err := parseModels(c.Models)
	if err != nil {
		return err
	}
	dirs, err := parseDirections(c.GenDirections)
	if err != nil {
		return err
	}
	if err := j.trainModels(trainDocs, heldDocs, want, dirs); err != nil {
		return err
	}
	return j.finish(ctx, want, start)
}

// resolvePreset returns the preset c names with c's overrides of its
// vocabulary and step counts.
func resolvePreset(c Config) (presetConfig, error) {
	pc, ok := presets[c.Preset]
	if !ok {
		return pc, fmt.Errorf("unknown preset %q (tiny, base)", c.Preset)
	}
	if c.VocabSize > 0 {
		pc.vocab = c.VocabSize
	}
	if c.DiscSteps > 0 {
		pc.steps = c.DiscSteps
	}
	if c.GenSteps > 0 {
		pc.genSteps = c.GenSteps
	}
	return pc, nil
}

// workLocally points j.dir at a local working directory when the output is
// remote: the models are written there (named by the output, so --resume
// finds its checkpoints after a restart on the same machine) and copied up
// at the end.
func (j *job) workLocally() error {
	if !storage.IsRemote(j.c.Output) {
		return nil
	}
	h := sha256.Sum256([]byte(j.c.Output))
	j.dir = filepath.Join(storage.CacheRoot(), fmt.Sprintf("train-%x", h[:8]))
	if err := os.MkdirAll(j.dir, 0o755); err != nil {
		return fmt.Errorf("working directory for %s: %w", j.c.Output, err)
	}
	fmt.Printf("train: working in %s, copied to %s at the end\n", j.dir, j.c.Output)
	return nil
}

// load reads the corpus and splits its documents into training and
// held-out ones; both must be non-empty. What it read starts j.res.
func (j *job) load(ctx context.Context) (trainDocs, heldDocs []examples.Doc, err error) {
	opts := corpus.Defaults()
	opts.TextField, opts.IDField, opts.FollowLinks = j.c.TextField, j.c.IDField, j.c.FollowLinks
	if err := opts.Validate(); err != nil {
		return nil, nil, err
	}
	docs, st, err := loadDocs(ctx, jobrun.SplitList(j.c.Input), opts, j.c.MaxDocs)
	if err != nil {
		return nil, nil, err
	}
	if len(docs) == 0 {
		fmt.Printf("corpus: no document in --input=%s (%d files, %d rejected records %v); the job reads:\n%s\n",
			j.c.Input, st.Files, st.Dead, st.Reasons, corpus.InputShapes)
	}
	trainDocs, heldDocs = examples.Split(docs, j.split)
	fmt.Printf("corpus: %d files, %d documents (%d train, %d held out), %d sentences, %d rejected records %v\n",
		st.Files, st.Documents, len(trainDocs), len(heldDocs), st.Sentences, st.Dead, st.Reasons)
	if len(trainDocs) == 0 || len(heldDocs) == 0 {
		return nil, nil, fmt.Errorf("need documents both to train on and to hold out; got %d and %d", len(trainDocs), len(heldDocs))
	}
	j.res = results{Corpus: st, Train: len(trainDocs), HeldOut: len(heldDocs), Backend: nn.Backend()}
	return trainDocs, heldDocs, nil
}

// parseModels parses --models into the set of models to train.
func parseModels(list string) (map[string]bool, error) {
	want := map[string]bool{}
	for _, m := range jobrun.SplitList(list) {
		if m != "ctx" && m != "disc" && m != "gen" {
			return nil, fmt.Errorf("--models: unknown model %q (ctx, disc, gen)", m)
		}
		want[m] = true
	}
	if len(want) == 0 {
		return nil, fmt.Errorf("--models: name at least one of ctx, disc, gen")
	}
	return want, nil
}

// writeContexts writes the models' fixed samples of training contexts,
// which go with whatever models are trained: the reference contexts (the
// zref reading of Eq. 4) and the whitening contexts (zwhite).
func (j *job) writeContexts(trainDocs []examples.Doc) error {
	ref := examples.ReferenceContexts(trainDocs, j.c.ReferenceContexts, 2, int64(j.c.Seed)+11)
	if err := method.SaveReference(j.dir, ref); err != nil {
		return fmt.Errorf("reference contexts: %w", err)
	}
	white := examples.ReferenceContexts(trainDocs, method.WhiteContexts, 2, int64(j.c.Seed)+13)
	if err := method.SaveWhite(j.dir, white); err != nil {
		return fmt.Errorf("whitening contexts: %w", err)
	}
	return nil
}

// trainModels writes the reference contexts and trains, checks and saves
// each model in want, the tokenizer first when disc or gen is wanted.
func (j *job) trainModels(trainDocs, heldDocs []examples.Doc, want map[string]bool, dirs []examples.Direction) error {
	if err := j.writeContexts(trainDocs); err != nil {
		return err
	}
	ranks := newRankSuite(heldDocs, j.c.RankTasks, 2, int64(j.c.Seed)+7)
	warnSmallHeldOut(os.Stderr, ranks, len(heldDocs))
	if want["ctx"] {
		if err := j.trainCtx(trainDocs, ranks); err != nil {
			return err
		}
	}
	if !want["disc"] && !want["gen"] {
		return nil
	}
	tok, err := j.trainTokenizer(trainDocs, heldDocs)
	if err != nil {
		return err
	}
	if want["disc"] {
		if err := j.trainDisc(tok, trainDocs, heldDocs, ranks); err != nil {
			return err
		}
	}
	if want["gen"] {
		if err := j.trainGen(tok, trainDocs, heldDocs, dirs, ranks); err != nil {
			return err
		}
	}
	return nil
}

// finish writes the results file (train-results.json, or
// train-results-<model>.json for one model) and copies a local working
// directory up to the output.
func (j *job) finish(ctx context.Context, want map[string]bool, start time.Time) error {
	name := "train-results.json"
	if len(want) == 1 {
		name = "train-results-" + jobrun.SplitList(j.c.Models)[0] + ".json"
	}
	b, err := nanjson.Document(os.Stderr, "train", name, j.res)
	if err != nil {
		return err
	}
	path := filepath.Join(j.dir, name)
	if err := storage.WriteFile(ctx, path, b); err != nil {
		return fmt.Errorf("train: write %s: %w", path, err)
	}
	if j.dir != j.c.Output {
		if err := storage.Upload(ctx, j.dir, j.c.Output); err != nil {
			return fmt.Errorf("copy the models to %s: %w", j.c.Output, err)
		}
	}
	fmt.Printf("train: done in %s; models in %s\n", time.Since(start).Round(time.Second), j.c.Output)
	return nil
}
