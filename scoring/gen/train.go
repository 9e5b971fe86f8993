package gen

import (
	"math"

	"github.com/ctxsim/ctxsim/scoring/examples"
	"github.com/ctxsim/ctxsim/scoring/nn"
)

// Trainer trains a Model with Adam on the mean token cross-entropy of
// teacher-forced targets.
type Trainer struct {
	M   *Model
	Tok Tokenizer
	Opt *nn.Adam
}

// NewTrainer returns a trainer with learning rate lr and gradients clipped
// to norm 1.
func NewTrainer(m *Model, tok Tokenizer, lr float64) *Trainer {
	opt := nn.NewAdam(lr)
	opt.ClipNorm = 1
	return &Trainer{M: m, Tok: tok, Opt: opt}
}

// batchOf tokenizes and lays out exs as one batch.
func (m *Model) batchOf(tok Tokenizer, exs []examples.Infill) *batch {
	seqs := make([]seq, len(exs))
	for i := range exs {
		r := NewRequest(tok, exs[i].Context, exs[i].S, exs[i].Dir)
		seqs[i] = m.layout(&r)
	}
	return newBatch(seqs, false)
}

// Step trains on one batch of examples and returns its loss: the mean
// negative log-likelihood per target token over the whole batch. An empty
// batch is a no-op returning zero.
func (t *Trainer) Step(exs []examples.Infill) float32 {
	if len(exs) == 0 {
		return 0
	}
	m := t.M
	m.unpack()
	loss := m.loss(m.batchOf(t.Tok, exs), true)
	params := m.Params()
	t.Opt.Step(params)
	nn.ZeroGrad(params)
	return loss
}

// DirMetrics are held-out results for one direction.
type DirMetrics struct {
	Examples int `json:"examples"`
	Tokens   int `json:"tokens"`
	// NLL is the mean negative log-likelihood per target token, in nats.
	NLL float64 `json:"nll"`
	// Perplexity is exp(NLL).
	Perplexity float64 `json:"perplexity"`
}

// Metrics are held-out results of the generative model: over all
// examples and per direction.
type Metrics struct {
	All        DirMetrics `json:"all"`
	ToSentence DirMetrics `json:"to_s"`
	ToLeft     DirMetrics `json:"to_left"`
	ToRight    DirMetrics `json:"to_right"`
}

// Evaluate scores exs in batches of batchSize and returns per-token
// perplexities. Directions without examples have zero metrics.
func (m *Model) Evaluate(tok Tokenizer, exs []examples.Infill, batchSize int) Metrics {
	reqs := make([]Request, len(exs))
	for i := range exs {
		reqs[i] = NewRequest(tok, exs[i].Context, exs[i].S, exs[i].Dir)
	}
	var acc [3]struct {
		n, tokens int
		nll       float64
	}
	m.logLik(reqs, batchSize, func(i int, sum float64, n int) {
		a := &acc[exs[i].Dir]
		a.n++
		a.tokens += n
		a.nll -= sum
	})
	fin := func(n, tokens int, nll float64) DirMetrics {
		dm := DirMetrics{Examples: n, Tokens: tokens}
		if tokens > 0 {
			dm.NLL = nll / float64(tokens)
			dm.Perplexity = math.Exp(dm.NLL)
		}
		return dm
	}
	var met Metrics
	var n, tokens int
	var nll float64
	for dir, a := range acc {
		dm := fin(a.n, a.tokens, a.nll)
		switch examples.Direction(dir) {
		case examples.ToSentence:
			met.ToSentence = dm
		case examples.ToLeft:
			met.ToLeft = dm
		case examples.ToRight:
			met.ToRight = dm
		}
		n, tokens, nll = n+a.n, tokens+a.tokens, nll+a.nll
	}
	met.All = fin(n, tokens, nll)
	return met
}
