package trainjob

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/ctxsim/ctxsim/scoring/bundle"
	"github.com/ctxsim/ctxsim/scoring/nn"
)

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

// loopOptions are the settings every training run shares.
type loopOptions struct {
	evalEvery       int // steps between evaluations; 0: steps/10
	checkpointEvery int // steps between checkpoints; 0: at each evaluation
	resume          bool
	checkpointDir   string
}

// loopOptions returns the job's settings of the training runs, with the
// checkpoints under <output>/checkpoint.
func (j *job) loopOptions() loopOptions {
	return loopOptions{evalEvery: j.c.EvalEvery, checkpointEvery: j.c.CheckpointEvery, resume: j.c.Resume,
		checkpointDir: filepath.Join(j.dir, "checkpoint")}
}

// runLoop trains for l.steps batches drawn from l.exs in an order fixed by
// l.seed (reshuffled at each epoch), evaluates every o.evalEvery steps,
// checkpoints into o.checkpointDir, and with o.resume continues from the
// checkpoint so the result equals an uninterrupted run. It returns the
// learning curve.
func runLoop[E any](l loop[E], o loopOptions) ([]curvePoint, error) {
	every := o.evalEvery
	if every <= 0 {
		every = max(1, l.steps/10)
	}
	ckEvery := o.checkpointEvery
	if ckEvery <= 0 {
		ckEvery = every
	}
	if len(l.exs) < l.batch {
		return nil, fmt.Errorf("%s: %d training examples, fewer than one batch of %d", l.name, len(l.exs), l.batch)
	}
	r := rand.New(rand.NewPCG(l.seed, 1))
	shuffle := func() { r.Shuffle(len(l.exs), func(i, j int) { l.exs[i], l.exs[j] = l.exs[j], l.exs[i] }) }
	shuffle()
	var ts trainState
	first := 1
	if o.resume {
		step, resumed, err := loadCheckpoint(l, o.checkpointDir, &ts)
		if err != nil {
			return nil, err
		}
		if resumed {
			first = step + 1
			for e := 0; e < ts.Epochs; e++ {
				shuffle()
			}
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
			if err := bundle.SaveCheckpoint(o.checkpointDir, l.name, l.format, l.tokFP, l.modelCfg, step, l.opt, l.params, ts); err != nil {
				return nil, fmt.Errorf("%s: checkpoint: %w", l.name, err)
			}
		}
	}
	return ts.Curve, nil
}

// loadCheckpoint restores l's model, optimiser and ts from the checkpoint
// in dir and returns the step it was taken after; resumed is false when
// there is no checkpoint.
func loadCheckpoint[E any](l loop[E], dir string, ts *trainState) (step int, resumed bool, err error) {
	step, err = bundle.LoadCheckpoint(dir, l.name, l.format, l.tokFP, l.modelCfg, l.opt, l.params, ts)
	switch {
	case err == nil:
		fmt.Printf("%s: resumed from the checkpoint after step %d\n", l.name, step)
		return step, true, nil
	case errors.Is(err, os.ErrNotExist):
		fmt.Printf("%s: no checkpoint to resume from; starting afresh\n", l.name)
		return 0, false, nil
	default:
		return 0, false, fmt.Errorf("%s: resume: %w", l.name, err)
	}
}
