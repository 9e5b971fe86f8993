package trainjob

import (
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
	"github.com/ctxsim/ctxsim/scoring/contrast"
	"github.com/ctxsim/ctxsim/scoring/disc"
	"github.com/ctxsim/ctxsim/scoring/examples"
	"github.com/ctxsim/ctxsim/scoring/gen"
	"github.com/ctxsim/ctxsim/scoring/nn"
	"github.com/ctxsim/ctxsim/scoring/tokenizer"
)

// trainTokenizer trains the subword tokenizer on the training documents
// and saves it.
func (j *job) trainTokenizer(trainDocs, heldDocs []examples.Doc) (*tokenizer.Tokenizer, error) {
	t0 := time.Now()
	tok, err := tokenizer.Train(sentences(trainDocs), tokenizer.TrainConfig{VocabSize: j.pc.vocab})
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if err := saveTokenizer(j.dir, tok); err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	var words, toks int
	for s := range sentences(heldDocs) {
		words += len(splitWords(s))
		toks += len(tok.Encode(s))
	}
	j.res.Tokenizer = map[string]any{"vocab_size": tok.VocabSize(), "fingerprint": tok.Fingerprint(),
		"seconds": time.Since(t0).Seconds(), "held_out_tokens_per_word": float64(toks) / float64(max(words, 1))}
	fmt.Printf("tokenizer: vocab %d, %.3f tokens/word on held-out text, %.1fs\n",
		tok.VocabSize(), j.res.Tokenizer["held_out_tokens_per_word"], time.Since(t0).Seconds())
	return tok, nil
}

// ctxConfig is the contrastive model's config: the preset's with the
// job's overrides.
func (j *job) ctxConfig() contrast.Config {
	c := j.pc.ctx()
	c.Seed = j.c.Seed
	if j.c.CtxDim > 0 {
		c.Dim = j.c.CtxDim
	}
	if j.c.CtxEpochs > 0 {
		c.Epochs = j.c.CtxEpochs
	}
	if j.c.CtxBatch > 0 {
		c.Batch = j.c.CtxBatch
	}
	if j.c.CtxDocGroup > 0 {
		c.DocGroup = j.c.CtxDocGroup
	}
	if j.c.CtxLR > 0 {
		c.LR = j.c.CtxLR
	}
	if j.c.CtxWindow > 0 {
		c.Window = j.c.CtxWindow
	}
	if j.c.CtxTemperature > 0 {
		c.Temperature = j.c.CtxTemperature
	}
	return c
}

// trainCtx trains, evaluates and saves the contrastive context model.
func (j *job) trainCtx(trainDocs []examples.Doc, ranks *rankSuite) error {
	c := j.ctxConfig()
	th := j.c.Threads
	if th <= 0 {
		th = runtime.NumCPU()
	}
	fmt.Printf("ctx: dim %d, vocabulary %d words (stems: %v) + %d buckets, batch %d, %.1f epochs, %d threads\n",
		c.Dim, c.Vocab, c.Stem, c.Buckets, c.Batch, c.Epochs, th)
	steps, sentences := ctxSteps(trainDocs, c.Epochs, c.Batch)
	warnShortTraining(os.Stderr, "ctx", steps, minCtxSteps, fmt.Sprintf("%d training sentences, %g epochs of batch %d", sentences, c.Epochs, c.Batch),
		"train on a larger corpus, or raise --ctx_epochs or lower --ctx_batch")
	t0 := time.Now()
	// The held-out check runs at a tenth of the tasks during training, in
	// full at the end.
	quick := max(1, j.c.RankTasks/10)
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
		return fmt.Errorf("ctx: %w", err)
	}
	rank, line := ranks.run(0, ctxRankScore(m))
	fmt.Printf("ctx: trained in %.1f min; held-out context ranking: %s\n", time.Since(t0).Minutes(), line)
	warnNearChance(os.Stderr, "ctx", rank)
	j.res.Ctx = map[string]any{"config": c, "threads": th, "train_seconds": time.Since(t0).Seconds(),
		"vocabulary_words": m.VocabWords(), "context_ranking": map[string]any{"ctx": rank}}
	j.res.CtxCurve = curve
	if err := m.Save(j.dir, map[string]any{"seed": j.c.Seed, "context_ranking": rank,
		"train_seconds": time.Since(t0).Seconds()}); err != nil {
		return fmt.Errorf("ctx: %w", err)
	}
	return nil
}

// trainDisc trains, evaluates and saves the coherence model.
func (j *job) trainDisc(tok *tokenizer.Tokenizer, trainDocs, heldDocs []examples.Doc, ranks *rankSuite) error {
	hr := rand.New(rand.NewPCG(j.c.Seed, 2))
	dcfg := disc.Config{Vocab: tok.VocabSize(), EmbedDim: j.pc.embed, Hidden: j.pc.hidden,
		HeadHidden: j.pc.headHidden, Head: j.c.Head, MaxTokens: 64, Window: 2}
	model, err := disc.New(dcfg, j.c.Seed)
	if err != nil {
		return fmt.Errorf("disc: %w", err)
	}
	trainEx := examples.CoherenceExamples(trainDocs, j.split)
	heldEx := examples.CoherenceExamples(heldDocs, examples.Config{Seed: int64(j.c.Seed) + 1})
	hr.Shuffle(len(heldEx), func(i, k int) { heldEx[i], heldEx[k] = heldEx[k], heldEx[i] })
	evalEx := heldEx[:min(j.c.EvalExamples, len(heldEx))]
	fmt.Printf("disc: %d training examples, %d held-out examples, %d steps of %d, head %s, backend %s\n",
		len(trainEx), len(evalEx), j.pc.steps, j.c.Batch, j.c.Head, nn.Backend())
	warnShortTraining(os.Stderr, "disc", j.pc.steps, minLearnSteps, "--preset="+j.c.Preset, "use --preset=base or raise --disc_steps")
	tr := disc.NewTrainer(model, tok, j.c.LR)
	t0 := time.Now()
	curve, err := runLoop(loop[examples.Coherence]{
		name: "disc", format: disc.Format, exs: trainEx, steps: j.pc.steps, batch: j.c.Batch, seed: j.c.Seed,
		step: tr.Step, modelCfg: dcfg, opt: tr.Opt, params: model.Params(), tokFP: tok.Fingerprint(),
		eval: func() (any, string) {
			met := model.Evaluate(tok, evalEx, 256)
			return met, fmt.Sprintf("held-out loss %.4f acc %.3f auc %.3f (same-doc %.3f, random %.3f)",
				met.Loss, met.Accuracy, met.AUC, met.AUCSameDoc, met.AUCRandom)
		},
	}, j.loopOptions())
	if err != nil {
		return err
	}
	j.res.Curve = curve
	final := model.Evaluate(tok, evalEx, 256)
	mrr, hits1 := model.Ranking(tok, evalEx, 20, j.c.Seed)
	rank, line := ranks.run(0, discRankScore(model, tok))
	warnNearChance(os.Stderr, "disc", rank)
	j.res.Disc = map[string]any{"config": dcfg, "steps": j.pc.steps, "batch": j.c.Batch, "lr": j.c.LR,
		"train_seconds": time.Since(t0).Seconds(), "held_out": final,
		"context_ranking_mrr_at_20": mrr, "context_ranking_hits1_at_20": hits1,
		"context_ranking": map[string]any{"disc": rank}}
	fmt.Printf("disc: context ranking among 20 contexts: MRR %.3f, hits@1 %.3f\n", mrr, hits1)
	fmt.Printf("disc: held-out context ranking: %s\n", line)
	if err := model.Save(j.dir, tok.Fingerprint(), map[string]any{"seed": j.c.Seed, "steps": j.pc.steps,
		"held_out": final, "context_ranking_mrr_at_20": mrr}); err != nil {
		return fmt.Errorf("disc: %w", err)
	}
	return nil
}

// trainGen trains, evaluates and saves the infilling model on the given
// directions.
func (j *job) trainGen(tok *tokenizer.Tokenizer, trainDocs, heldDocs []examples.Doc, dirs []examples.Direction,
	ranks *rankSuite) error {
	hr := rand.New(rand.NewPCG(j.c.Seed, 3))
	gcfg := j.pc.gen(tok.VocabSize())
	gm, err := gen.New(gcfg, j.c.Seed)
	if err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	gTrain := filterDirs(examples.InfillExamples(trainDocs, j.split), dirs)
	gHeld := filterDirs(examples.InfillExamples(heldDocs, j.split), dirs)
	hr.Shuffle(len(gHeld), func(i, k int) { gHeld[i], gHeld[k] = gHeld[k], gHeld[i] })
	gEval := gHeld[:min(j.c.EvalExamples, len(gHeld))]
	fmt.Printf("gen: %d training examples, %d held-out examples, %d steps of %d\n",
		len(gTrain), len(gEval), j.pc.genSteps, j.c.Batch)
	warnShortTraining(os.Stderr, "gen", j.pc.genSteps, minLearnSteps, "--preset="+j.c.Preset, "use --preset=base or raise --gen_steps")
	gtr := gen.NewTrainer(gm, tok, j.c.GenLR)
	t0 := time.Now()
	curve, err := runLoop(loop[examples.Infill]{
		name: "gen", format: gen.Format, exs: gTrain, steps: j.pc.genSteps, batch: j.c.Batch, seed: j.c.Seed + 100,
		step: gtr.Step, modelCfg: gcfg, opt: gtr.Opt, params: gm.Params(), tokFP: tok.Fingerprint(),
		eval: func() (any, string) {
			met := gm.Evaluate(tok, gEval, 64)
			return met, genEvalLine(met)
		},
	}, j.loopOptions())
	if err != nil {
		return err
	}
	j.res.GenCurve = curve
	gfinal := gm.Evaluate(tok, gEval, 64)
	rank := map[string]any{}
	for _, d := range dirs {
		r, line := ranks.run(max(1, j.c.RankTasks/10), genRankScore(gm, tok, d))
		rank[d.String()] = r
		fmt.Printf("gen %s: held-out context ranking: %s\n", d, line)
	}
	j.res.Gen = map[string]any{"config": gcfg, "steps": j.pc.genSteps, "batch": j.c.Batch, "lr": j.c.GenLR,
		"train_seconds": time.Since(t0).Seconds(), "held_out": gfinal, "context_ranking": rank}
	if err := gm.Save(j.dir, tok.Fingerprint(), map[string]any{"seed": j.c.Seed, "steps": j.pc.genSteps,
		"directions": j.c.GenDirections, "held_out": gfinal}); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	return nil
}

// genEvalLine summarises the infilling model's held-out metrics: the
// perplexity over all examples, then per direction that has examples.
func genEvalLine(met gen.Metrics) string {
	var per []string
	for _, d := range []struct {
		name string
		m    gen.DirMetrics
	}{{"to_s", met.ToSentence}, {"to_left", met.ToLeft}, {"to_right", met.ToRight}} {
		if d.m.Examples > 0 {
			per = append(per, fmt.Sprintf("%s %.1f", d.name, d.m.Perplexity))
		}
	}
	return fmt.Sprintf("held-out perplexity %.1f (%s)", met.All.Perplexity, strings.Join(per, ", "))
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
