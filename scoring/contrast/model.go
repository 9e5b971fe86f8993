// Package contrast is a contrastive context model: a sentence encoder and a
// context encoder trained together to pick a sentence's own context (the
// sentences around it in its document) among many others (InfoNCE with
// in-batch negatives). Both encoders are IDF-weighted sums of word
// embeddings, one table each, normalised to unit length; the score of a
// sentence s in a context c is their dot product over a temperature,
//
//	S(s, c) = f(s)·g(c) / τ,
//
// which estimates log p(s | c) − log p(s) up to a constant per sentence:
// the part of Eq. 3 that Eq. 4 keeps after centring. Scoring a context is a
// dot product of cached vectors, so a sentence can be scored against
// thousands of contexts in microseconds.
//
// The package knows nothing about Beam.
package contrast

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ctxsim/ctxsim/scoring/internal/vecmath"
)

// Config is the model's shape and its training settings.
type Config struct {
	// Dim is the width of the embeddings.
	Dim int `json:"dim"`
	// Vocab is the number of words with a row of their own; Buckets the
	// number of rows shared by all other words.
	Vocab   int `json:"vocab"`
	Buckets int `json:"buckets"`
	// MinCount is the fewest occurrences a word needs for a row of its own.
	MinCount int64 `json:"min_count"`
	// Stem makes the tokens Porter stems instead of words.
	Stem bool `json:"stem,omitempty"`
	// Window is the number of sentences on each side of a slot that form
	// its context.
	Window int `json:"window"`
	// Temperature τ of the softmax over in-batch contexts.
	Temperature float64 `json:"temperature"`
	// Batch is the number of (sentence, context) examples per step; each
	// example's context is scored against every sentence of the batch.
	Batch int `json:"batch"`
	// Epochs over the training examples (fractions allowed).
	Epochs float64 `json:"epochs"`
	// LR is Adam's learning rate, decayed linearly to zero after a warm-up
	// of WarmupSteps steps.
	LR          float64 `json:"lr"`
	WarmupSteps int     `json:"warmup_steps"`
	// InitStd is the standard deviation of the initial embeddings.
	InitStd float64 `json:"init_std"`
	// Symmetric adds the loss of picking each context's sentence among the
	// batch's sentences to that of picking each sentence's context.
	Symmetric bool `json:"symmetric"`
	// Seed makes initialisation and the order of examples deterministic.
	Seed uint64 `json:"seed"`
	// DocGroup, when above 1, puts groups of this many slots of one
	// document into each batch, spaced so that no two of a group share a
	// context sentence: each slot's in-batch negatives then include other
	// contexts of its own document (hard negatives of the same topic).
	// 0 or 1: slots in a random order.
	DocGroup int `json:"doc_group,omitempty"`
}

// DefaultConfig is the configuration `make models` trains, chosen on STS-B
// train (see bench/results.txt): Porter stems, 256 dimensions, 2 epochs.
func DefaultConfig() Config {
	return Config{Dim: 256, Vocab: 60000, Buckets: 16384, MinCount: 3, Stem: true, Window: 2, Temperature: 0.05,
		Batch: 1024, Epochs: 2, LR: 0.003, WarmupSteps: 100, InitStd: 0.1, Symmetric: true, Seed: 1}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case c.Dim < 1 || c.Dim > 4096:
		return fmt.Errorf("contrast: dim %d outside [1, 4096]", c.Dim)
	case c.Vocab < 0 || c.Vocab > 1<<22:
		return fmt.Errorf("contrast: vocab %d outside [0, %d]", c.Vocab, 1<<22)
	case c.Buckets < 1 || c.Buckets > 1<<22:
		return fmt.Errorf("contrast: buckets %d outside [1, %d]", c.Buckets, 1<<22)
	case c.Window < 1:
		return fmt.Errorf("contrast: window %d must be at least 1", c.Window)
	case !(c.Temperature > 0) || math.IsInf(c.Temperature, 0):
		return fmt.Errorf("contrast: temperature %v must be positive", c.Temperature)
	case c.Batch < 2:
		return fmt.Errorf("contrast: batch %d must be at least 2", c.Batch)
	case !(c.Epochs >= 0) || math.IsInf(c.Epochs, 0):
		return fmt.Errorf("contrast: epochs %v must be non-negative and finite", c.Epochs)
	case !(c.LR > 0) || math.IsInf(c.LR, 0):
		return fmt.Errorf("contrast: lr %v must be positive", c.LR)
	case c.WarmupSteps < 0:
		return fmt.Errorf("contrast: warmup_steps %d is negative", c.WarmupSteps)
	case !(c.InitStd > 0) || math.IsInf(c.InitStd, 0):
		return fmt.Errorf("contrast: init_std %v must be positive", c.InitStd)
	case c.DocGroup < 0 || c.DocGroup > c.Batch:
		return fmt.Errorf("contrast: doc_group %d outside [0, batch %d]", c.DocGroup, c.Batch)
	}
	return nil
}

// Model is a trained (or initial) contrastive context model. It is safe for
// concurrent use once trained.
type Model struct {
	Cfg   Config
	Vocab *Vocab
	// Sent and Ctx are the (rows, dim) embedding tables of the sentence
	// and context encoders, row-major.
	Sent, Ctx []float32

	wordState // AlignSimilarity's word vectors, built on first use
}

// newModel returns a model over vocab with tables drawn from N(0, InitStd²).
func newModel(cfg Config, vocab *Vocab) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := vocab.Rows() * cfg.Dim
	m := &Model{Cfg: cfg, Vocab: vocab, Sent: make([]float32, n), Ctx: make([]float32, n)}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x63747874)) // "ctxt"
	for _, t := range [][]float32{m.Sent, m.Ctx} {
		for i := range t {
			t[i] = float32(rng.NormFloat64() * cfg.InitStd)
		}
	}
	return m, nil
}

// Dim is the width of the vectors.
func (m *Model) Dim() int { return m.Cfg.Dim }

// SentenceEmbeddings returns the sentence encoder's embedding table
// (row-major, one row per vocabulary row) and its width. The table is the
// model's own: callers must not change it.
func (m *Model) SentenceEmbeddings() (table []float32, dim int) { return m.Sent, m.Cfg.Dim }

// Vocabulary returns the model's vocabulary. It is the model's own:
// callers must not change it.
func (m *Model) Vocabulary() *Vocab { return m.Vocab }

// WordEmbeddings returns a new table of the alignment's word vectors for
// every row, words and hashed buckets alike: the sum of the sentence and
// context tables' rows, each scaled to unit length (a zero row stays
// zero). The IDF-weighted mean of these rows is a sentence vector whose
// cosine is the soft cosine of the two sentences' words, with unclipped
// word similarities.
func (m *Model) WordEmbeddings() (table []float32, dim int) {
	return m.unitSums(len(m.Sent) / m.Cfg.Dim), m.Cfg.Dim
}

// VocabWords is the number of words in the model's vocabulary, besides
// its hashed buckets.
func (m *Model) VocabWords() int { return len(m.Vocab.Words) }

// Scale is 1/τ, the factor from a dot product of unit vectors to a score.
func (m *Model) Scale() float32 { return float32(1 / m.Cfg.Temperature) }

// addBag adds the weighted rows of table to dst. It works on eight columns
// at a time, summing them in registers over all words, in word order.
func addBag(dst, table []float32, rows []int32, weights []float32) {
	d := len(dst)
	weights = weights[:len(rows)]
	j := 0
	for ; j+8 <= d; j += 8 {
		o := dst[j : j+8 : j+8]
		a0, a1, a2, a3, a4, a5, a6, a7 := o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7]
		for i, r := range rows {
			w := weights[i]
			x := table[int(r)*d+j : int(r)*d+j+8 : int(r)*d+j+8]
			a0 += w * x[0]
			a1 += w * x[1]
			a2 += w * x[2]
			a3 += w * x[3]
			a4 += w * x[4]
			a5 += w * x[5]
			a6 += w * x[6]
			a7 += w * x[7]
		}
		o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7] = a0, a1, a2, a3, a4, a5, a6, a7
	}
	for ; j < d; j++ {
		a := dst[j]
		for i, r := range rows {
			a += weights[i] * table[int(r)*d+j]
		}
		dst[j] = a
	}
}

// axpy adds a·x to y.
func axpy(a float32, x, y []float32) {
	y = y[:len(x)]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		xs, ys := x[i:i+4:i+4], y[i:i+4:i+4]
		ys[0] += a * xs[0]
		ys[1] += a * xs[1]
		ys[2] += a * xs[2]
		ys[3] += a * xs[3]
	}
	for ; i < len(x); i++ {
		y[i] += a * x[i]
	}
}

// Normalize scales x to unit length in place and returns its former norm;
// a zero vector stays zero.
func Normalize(x []float32) float32 {
	ss := sumSquares(x)
	if ss == 0 {
		return 0
	}
	n := math.Sqrt(ss)
	inv := float32(1 / n)
	for i := range x {
		x[i] *= inv
	}
	return float32(n)
}

// Dot is the dot product of a and b (vecmath.Dot: the same bits on every
// CPU, AVX2 where there is one).
func Dot(a, b []float32) float32 { return vecmath.Dot(a, b) }

// SentenceVec returns f(s), the unit sentence vector of s (zero when s has
// no words).
func (m *Model) SentenceVec(s string) []float32 {
	out := make([]float32, m.Cfg.Dim)
	rows, w := m.Vocab.Bag(s, nil, nil)
	addBag(out, m.Sent, rows, w)
	Normalize(out)
	return out
}

// ContextSum returns the unnormalised context-table sum of one sentence;
// a context's vector is the normalised sum of its sentences' ContextSums,
// so callers can cache them per sentence.
func (m *Model) ContextSum(s string) []float32 {
	out := make([]float32, m.Cfg.Dim)
	rows, w := m.Vocab.Bag(s, nil, nil)
	addBag(out, m.Ctx, rows, w)
	return out
}

// ContextVec returns g(c), the unit vector of the context made of the
// sentences left and right of a slot.
func (m *Model) ContextVec(left, right []string) []float32 {
	out := make([]float32, m.Cfg.Dim)
	var rows []int32
	var w []float32
	for _, s := range left {
		rows, w = m.Vocab.Bag(s, rows, w)
	}
	for _, s := range right {
		rows, w = m.Vocab.Bag(s, rows, w)
	}
	addBag(out, m.Ctx, rows, w)
	Normalize(out)
	return out
}

// Score is S(s, c) for unit vectors f = f(s) and g = g(c).
func (m *Model) Score(f, g []float32) float32 { return Dot(f, g) * m.Scale() }

// ScoreSum is S(s, c) for the unit vector f = f(s) and g(c) given as the
// unnormalised sum u of its sentences' context-table sums with inv =
// InvNorm(u): Score(f, u/‖u‖) up to rounding, without writing g(c).
func (m *Model) ScoreSum(f, u []float32, inv float32) float32 {
	return Dot(f, u) * inv * m.Scale()
}

// InvNorm is 1/‖x‖ as Normalize scales by it (the sum of squares in
// float64), 0 when x is zero.
func InvNorm(x []float32) float32 {
	ss := sumSquares(x)
	if ss == 0 {
		return 0
	}
	return float32(1 / math.Sqrt(ss))
}

// sumSquares is Σ x_i² in float64, in order: the norm Normalize and
// InvNorm share.
func sumSquares(x []float32) float64 {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	return ss
}
