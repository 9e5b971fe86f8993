package trainjob

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/ctxsim/ctxsim/scoring/examples"
)

// minLearnSteps is the fewest training steps after which the coherence
// and generative models are expected to rank contexts clearly better than
// chance (their tiny preset, 300 steps, is for tests and demos).
const minLearnSteps = 1000

// minCtxSteps is the same for the contrastive model, which learns in far
// fewer steps: the tiny preset on 125K words trained it for 30 steps, to a
// held-out MRR among 20 contexts of 0.21-0.26 (chance: 0.18), and on 1.2M
// words (150 speeches) for 354-360 steps, to 0.45-0.73.
const minCtxSteps = 200

// minRankTasks is the fewest tasks of a context-ranking test whose MRR
// means something.
const minRankTasks = 20

// nearChance is how far above chance a held-out MRR among 20 contexts must
// be for the model not to be called near chance.
const nearChance = 0.1

// warnShortTraining warns when a model is planned for fewer steps than
// least, too few to learn; hint says what gives it more.
func warnShortTraining(w io.Writer, model string, steps, least int, why, hint string) {
	if steps >= least {
		return
	}
	fmt.Fprintf(w, "warning: train: the %s model gets only about %d training steps (%s): too few to learn, so it will rank contexts "+
		"little better than chance and label poorly; %s\n", model, steps, why, hint)
}

// ctxSteps is the contrastive model's planned steps (as contrast.Train
// plans them: epochs over one slot per training sentence, Batch a step).
func ctxSteps(trainDocs []examples.Doc, epochs float64, batch int) (steps, sentences int) {
	for _, d := range trainDocs {
		sentences += len(d.Sentences)
	}
	return int(math.Round(epochs * float64(sentences/max(batch, 1)))), sentences
}

// warnSmallHeldOut warns of the context-ranking tests that the held-out
// documents give too few tasks for (none: the test reports no MRR).
func warnSmallHeldOut(w io.Writer, rs *rankSuite, heldDocs int) {
	var small []string
	for _, s := range rs.sets {
		if len(s.tasks) < minRankTasks {
			small = append(small, fmt.Sprintf("%s (%d tasks)", s.key, len(s.tasks)))
		}
	}
	if len(small) == 0 {
		return
	}
	fmt.Fprintf(w, "warning: train: the held-out set (%d documents) is too small for the context-ranking tests %s: "+
		"they measure no MRR, or an unreliable one; a larger --held_out or corpus gives them more tasks\n",
		heldDocs, strings.Join(small, ", "))
}

// chanceMRR is the expected MRR of a random ranking of n contexts.
func chanceMRR(n int) float64 {
	h := 0.0
	for i := 1; i <= n; i++ {
		h += 1 / float64(i)
	}
	return h / float64(n)
}

// warnNearChance warns when a model's held-out MRR among 20 random
// contexts is near chance.
func warnNearChance(w io.Writer, model string, rank map[string]examples.RankResult) {
	r, ok := rank["n20_random"]
	if !ok || r.Tasks < minRankTasks {
		return
	}
	if c := chanceMRR(20); r.MRR < c+nearChance {
		fmt.Fprintf(w, "warning: train: the %s model's held-out MRR among 20 contexts is %.3f, near chance (%.3f): "+
			"it has not learnt enough to label well (train longer, or on a larger corpus)\n", model, r.MRR, c)
	}
}
