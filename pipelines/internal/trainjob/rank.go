package trainjob

import (
	"fmt"
	"strings"

	"github.com/ctxsim/ctxsim/scoring/contrast"
	"github.com/ctxsim/ctxsim/scoring/disc"
	"github.com/ctxsim/ctxsim/scoring/examples"
	"github.com/ctxsim/ctxsim/scoring/gen"
	"github.com/ctxsim/ctxsim/scoring/tokenizer"
)

// rankSuite is the context-ranking test of every scorer: for held-out
// sentences, the rank of the sentence's true context among N contexts,
// for N = 20 and 100, with random and same-document distractors (the latter
// only from documents long enough to hold N-1 slots apart from the
// sentence's).
type rankSuite struct {
	sets []rankSet
}

type rankSet struct {
	key   string // e.g. "n20_random"
	n     int
	kind  examples.NegKind
	tasks []examples.RankTask
}

func newRankSuite(held []examples.Doc, tasks, window int, seed int64) *rankSuite {
	rs := &rankSuite{}
	for _, n := range []int{20, 100} {
		for _, kind := range []examples.NegKind{examples.Random, examples.SameDoc} {
			rs.sets = append(rs.sets, rankSet{fmt.Sprintf("n%d_%s", n, kind), n, kind,
				examples.RankTasks(held, n, tasks, kind, window, seed+int64(n))})
		}
	}
	return rs
}

// run scores every task set with score (whose limit, if positive, caps the
// tasks per set) and returns the results by set, with a one-line summary.
func (rs *rankSuite) run(limit int, score func(examples.RankTask) []float32) (map[string]examples.RankResult, string) {
	out := map[string]examples.RankResult{}
	var parts []string
	for _, s := range rs.sets {
		tasks := s.tasks
		if limit > 0 {
			tasks = tasks[:min(limit, len(tasks))]
		}
		r := examples.Rank(tasks, score)
		// Held-out documents too short for a task (same-document
		// distractors need n-1 slots apart from the sentence) give none.
		r.N, r.Kind = s.n, s.kind.String()
		out[s.key] = r
		if r.Tasks == 0 {
			parts = append(parts, s.key+" no task (held-out set too small)")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s MRR %.3f hits@1 %.3f", s.key, r.MRR, r.Hits1))
	}
	return out, strings.Join(parts, "; ")
}

// ctxRankScore scores a task with the contrastive model.
func ctxRankScore(m *contrast.Model) func(examples.RankTask) []float32 {
	return func(t examples.RankTask) []float32 {
		f := m.SentenceVec(t.S)
		out := make([]float32, len(t.Contexts))
		for i, c := range t.Contexts {
			out[i] = m.Score(f, m.ContextVec(c.Left, c.Right))
		}
		return out
	}
}

// discRankScore scores a task with the coherence model: log p(y=1|c,s).
func discRankScore(m *disc.Model, tok *tokenizer.Tokenizer) func(examples.RankTask) []float32 {
	return func(t examples.RankTask) []float32 {
		d := m.VecDim()
		sv := m.Encode([][]int32{tok.Encode(t.S)})[0]
		l, r, s := make([]float32, 0, len(t.Contexts)*d), make([]float32, 0, len(t.Contexts)*d), make([]float32, 0, len(t.Contexts)*d)
		side := make([]float32, d)
		for _, c := range t.Contexts {
			disc.MeanVec(side, m.Encode(tok.EncodeBatch(c.Left)))
			l = append(l, side...)
			disc.MeanVec(side, m.Encode(tok.EncodeBatch(c.Right)))
			r = append(r, side...)
			s = append(s, sv...)
		}
		logits := m.Logits(l, s, r)
		for i := range logits {
			logits[i] = disc.LogSigmoid(logits[i])
		}
		return logits
	}
}

// genRankScore scores a task with one term of the infilling model.
func genRankScore(m *gen.Model, tok *tokenizer.Tokenizer, dir examples.Direction) func(examples.RankTask) []float32 {
	return func(t examples.RankTask) []float32 {
		reqs := make([]gen.Request, len(t.Contexts))
		for i, c := range t.Contexts {
			reqs[i] = gen.NewRequest(tok, c, t.S, dir)
		}
		return m.Score(reqs)
	}
}
