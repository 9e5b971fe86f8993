package trainjob

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/scoring/examples"
)

func TestWarnShortTraining(t *testing.T) {
	var b bytes.Buffer
	warnShortTraining(&b, "ctx", 30, minCtxSteps, "6000 training sentences", "train on a larger corpus")
	if out := b.String(); !strings.HasPrefix(out, "warning: train: the ctx model gets only about 30 training steps") || !strings.Contains(out, "larger corpus") {
		t.Errorf("30 steps: %q", out)
	}
	// The demo's contrastive model (about 360 steps) learns: no warning.
	b.Reset()
	warnShortTraining(&b, "ctx", 360, minCtxSteps, "71000 training sentences", "")
	if b.Len() != 0 {
		t.Errorf("360 steps of ctx: %q", b.String())
	}
	b.Reset()
	warnShortTraining(&b, "disc", presets["base"].steps, minLearnSteps, "--preset=base", "")
	if b.Len() != 0 {
		t.Errorf("the base preset's steps: %q", b.String())
	}
	b.Reset()
	warnShortTraining(&b, "disc", presets["tiny"].steps, minLearnSteps, "--preset=tiny", "use --preset=base")
	if b.Len() == 0 {
		t.Error("no warning at the tiny preset's steps")
	}
}

func TestCtxSteps(t *testing.T) {
	docs := make([]examples.Doc, 100)
	for i := range docs {
		docs[i].Sentences = make([]string, 60) // 6000 sentences
	}
	if steps, n := ctxSteps(docs, 2, 256); n != 6000 || steps != 2*(6000/256) {
		t.Errorf("got %d steps over %d sentences", steps, n)
	}
}

func TestWarnSmallHeldOut(t *testing.T) {
	tasks := func(n int) []examples.RankTask { return make([]examples.RankTask, n) }
	rs := &rankSuite{sets: []rankSet{{key: "n20_random", tasks: tasks(500)}, {key: "n100_random", tasks: tasks(0)}}}
	var b bytes.Buffer
	warnSmallHeldOut(&b, rs, 3)
	out := b.String()
	if !strings.HasPrefix(out, "warning: train: the held-out set (3 documents) is too small") || !strings.Contains(out, "n100_random (0 tasks)") || strings.Contains(out, "n20_random") {
		t.Errorf("got %q", out)
	}
	b.Reset()
	warnSmallHeldOut(&b, &rankSuite{sets: rs.sets[:1]}, 300)
	if b.Len() != 0 {
		t.Errorf("enough tasks: %q", b.String())
	}
	// A test with no task says so instead of printing an MRR of 0.
	_, line := (&rankSuite{sets: []rankSet{{key: "n100_random", n: 100}}}).run(0, nil)
	if strings.Contains(line, "MRR") || !strings.Contains(line, "held-out set too small") {
		t.Errorf("line of a test with no task: %q", line)
	}
}

func TestWarnNearChance(t *testing.T) {
	if c := chanceMRR(20); math.Abs(c-0.1799) > 0.001 {
		t.Errorf("chance MRR among 20: %.4f", c)
	}
	for _, tc := range []struct {
		mrr   float64
		tasks int
		warn  bool
	}{{0.21, 500, true}, {0.26, 500, true}, {0.6, 500, false}, {0.21, 5, false}} {
		var b bytes.Buffer
		warnNearChance(&b, "ctx", map[string]examples.RankResult{"n20_random": {Tasks: tc.tasks, MRR: tc.mrr}})
		if (b.Len() != 0) != tc.warn || tc.warn && !strings.Contains(b.String(), fmt.Sprintf("%.3f, near chance", tc.mrr)) {
			t.Errorf("MRR %.2f over %d tasks: %q", tc.mrr, tc.tasks, b.String())
		}
	}
}
