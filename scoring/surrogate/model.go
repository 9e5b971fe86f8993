package surrogate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ctxsim/ctxsim/scoring/nn"
)

// Limits on the shape of a model, so that a corrupt config yields an error
// instead of an enormous allocation.
const (
	MaxVocab = 1 << 24
	MaxDim   = 1 << 14
	maxTable = 1 << 31
)

// Config is the encoder's architecture.
type Config struct {
	// Vocab is the number of token IDs: the tokenizer's VocabSize.
	Vocab int `json:"vocab"`
	// Dim is the width of token and sentence embeddings.
	Dim int `json:"dim"`
	// InitStd is the standard deviation of the normal distribution the
	// initial token embeddings are drawn from.
	InitStd float64 `json:"init_std"`
	// Weighted makes a sentence the weighted mean of its token embeddings,
	// with a fixed weight per token ID (Model.Weights, for example the
	// IDF of a word), instead of their plain mean.
	Weighted bool `json:"weighted,omitempty"`
}

// DefaultConfig returns the Paragram-SP width (300) with initial embeddings
// drawn from N(0, 0.1²).
func DefaultConfig(vocab int) Config {
	return Config{Vocab: vocab, Dim: 300, InitStd: 0.1}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.Vocab < 1 || c.Vocab > MaxVocab {
		return fmt.Errorf("surrogate: vocab %d outside [1, %d]", c.Vocab, MaxVocab)
	}
	if c.Dim < 1 || c.Dim > MaxDim {
		return fmt.Errorf("surrogate: dim %d outside [1, %d]", c.Dim, MaxDim)
	}
	if c.Vocab*c.Dim > maxTable {
		return fmt.Errorf("surrogate: embedding table of %d×%d values is too large", c.Vocab, c.Dim)
	}
	if !(c.InitStd > 0) || math.IsInf(c.InitStd, 0) {
		return fmt.Errorf("surrogate: init_std %v must be positive and finite", c.InitStd)
	}
	return nil
}

// Model is a mean-of-subword-embeddings sentence encoder.
//
// A Model may be used for encoding by several goroutines at once; training
// it (SparseAdam.Step) must not overlap with other use.
type Model struct {
	Cfg Config
	// Emb is the (vocab, dim) token embedding table, named "emb.weight".
	// Its gradient is kept sparse in a SparseGrad, so Emb.Grad is nil.
	Emb *nn.Param
	// Weights, with Cfg.Weighted, is the (vocab, 1) table of token
	// weights, named "emb.token_weight"; it is trained only when
	// TrainConfig.WeightLR is set.
	Weights *nn.Param
}

// New returns a model whose embeddings are drawn from N(0, InitStd²) with a
// generator seeded by seed.
func New(cfg Config, seed uint64) (*Model, error) {
	m, err := newModel(cfg)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x73757272)) // "surr"
	for i := range m.Emb.Value.Data {
		m.Emb.Value.Data[i] = float32(rng.NormFloat64() * cfg.InitStd)
	}
	return m, nil
}

// newModel returns a model with a zero table.
func newModel(cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	table := make([]float32, cfg.Vocab*cfg.Dim)
	m := &Model{Cfg: cfg, Emb: &nn.Param{Name: "emb.weight", Value: nn.FromData(table, cfg.Vocab, cfg.Dim)}}
	if cfg.Weighted {
		w := make([]float32, cfg.Vocab)
		for i := range w {
			w[i] = 1
		}
		m.Weights = &nn.Param{Name: "emb.token_weight", Value: nn.FromData(w, cfg.Vocab, 1)}
	}
	return m, nil
}

// Params returns the model's parameters: the embedding table and, for a
// weighted model, the token weights.
func (m *Model) Params() []*nn.Param {
	if m.Weights != nil {
		return []*nn.Param{m.Emb, m.Weights}
	}
	return []*nn.Param{m.Emb}
}

// tokenWeight is the weight of token id (1 for an unweighted model).
func (m *Model) tokenWeight(id int) float32 {
	if m.Weights == nil {
		return 1
	}
	return m.Weights.Value.Data[id]
}

// Dim returns the width of a sentence embedding.
func (m *Model) Dim() int { return m.Cfg.Dim }

// CheckIDs returns an error naming the first token ID of ids outside
// [0, vocab).
func (m *Model) CheckIDs(ids []int) error {
	for i, id := range ids {
		if uint(id) >= uint(m.Cfg.Vocab) {
			return fmt.Errorf("surrogate: token %d has id %d outside [0, %d)", i, id, m.Cfg.Vocab)
		}
	}
	return nil
}

// EncodeInto writes the embedding of the sentence ids, the mean of its
// token embeddings (weighted, for a weighted model), into dst[:dim]. An
// empty sentence, or one whose tokens all weigh zero, is the zero vector.
// It panics on a token ID outside the vocabulary (see CheckIDs).
func (m *Model) EncodeInto(dst []float32, ids []int) {
	dst = dst[:m.Cfg.Dim]
	for _, id := range ids {
		if uint(id) >= uint(m.Cfg.Vocab) {
			panic(fmt.Sprintf("surrogate: token id %d outside [0, %d): the tokenizer does not match the model", id, m.Cfg.Vocab))
		}
	}
	if m.Weights == nil {
		sumRows(dst, m.Emb.Value.Data, ids)
		if len(ids) > 0 {
			scaleBy(dst, 1/float32(len(ids)))
		}
		return
	}
	clear(dst)
	d := m.Cfg.Dim
	var total float32
	for _, id := range ids {
		w := m.Weights.Value.Data[id]
		total += w
		axpy(w, m.Emb.Value.Data[id*d:(id+1)*d], dst)
	}
	if total > 0 {
		scaleBy(dst, 1/total)
	}
}

// Encode returns the embedding of the sentence ids in a new slice.
func (m *Model) Encode(ids []int) []float32 {
	v := make([]float32, m.Cfg.Dim)
	m.EncodeInto(v, ids)
	return v
}

// EncodeBatch encodes sents into the rows of a (len(sents), dim) row-major
// matrix, reusing dst's memory when it is large enough, and returns it.
func (m *Model) EncodeBatch(sents [][]int, dst []float32) []float32 {
	d := m.Cfg.Dim
	dst = grow(dst, len(sents)*d)
	for i, s := range sents {
		m.EncodeInto(dst[i*d:(i+1)*d], s)
	}
	return dst
}

// Similarity returns the cosine of the embeddings of two sentences.
func (m *Model) Similarity(a, b []int) float64 {
	buf := make([]float32, 2*m.Cfg.Dim)
	ea, eb := buf[:m.Cfg.Dim], buf[m.Cfg.Dim:]
	m.EncodeInto(ea, a)
	m.EncodeInto(eb, b)
	return Cosine(ea, eb)
}

// Backward accumulates into g the gradient of a loss with respect to the
// embedding table, given dE, the gradient with respect to the rows of
// EncodeBatch(sents): every token t of sentence i receives
// dE_i · w_t / Σ w (dE_i / len(sents[i]) for an unweighted model).
func (m *Model) Backward(sents [][]int, dE []float32, g *SparseGrad) {
	d := m.Cfg.Dim
	if len(dE) < len(sents)*d {
		panic(fmt.Sprintf("surrogate: Backward: gradient of %d values for %d sentences of dim %d", len(dE), len(sents), d))
	}
	if g.dim != d || len(g.slot) != m.Cfg.Vocab {
		panic(fmt.Sprintf("surrogate: Backward: SparseGrad for %d×%d, model is %d×%d", len(g.slot), g.dim, m.Cfg.Vocab, d))
	}
	for i, s := range sents {
		if len(s) == 0 {
			continue
		}
		di := dE[i*d : (i+1)*d]
		if m.Weights == nil {
			scale := 1 / float32(len(s))
			for _, id := range s {
				axpy(scale, di, g.acc(id))
			}
			continue
		}
		var total float32
		for _, id := range s {
			total += m.tokenWeight(id)
		}
		if total == 0 {
			continue
		}
		for _, id := range s {
			axpy(m.tokenWeight(id)/total, di, g.acc(id))
		}
	}
}

// BackwardLogWeights accumulates into g, a SparseGrad of width 1, the
// gradient of a loss with respect to the logarithms of the token weights of
// a weighted model, given the sentences, their embeddings E (EncodeBatch's
// rows) and dE, the loss's gradient in them. For e = Σ w_t x_t / Σ w_t,
// ∂e/∂(log w_t) = w_t (x_t − e) / Σ w, summed over the token's
// occurrences. Tokens of weight zero receive nothing.
func (m *Model) BackwardLogWeights(sents [][]int, E, dE []float32, g *SparseGrad) {
	d := m.Cfg.Dim
	if m.Weights == nil {
		panic("surrogate: BackwardLogWeights on a model without token weights")
	}
	if len(dE) < len(sents)*d || len(E) < len(sents)*d {
		panic(fmt.Sprintf("surrogate: BackwardLogWeights: %d embedding and %d gradient values for %d sentences of dim %d", len(E), len(dE), len(sents), d))
	}
	if g.dim != 1 || len(g.slot) != m.Cfg.Vocab {
		panic(fmt.Sprintf("surrogate: BackwardLogWeights: SparseGrad for %d×%d, want %d×1", len(g.slot), g.dim, m.Cfg.Vocab))
	}
	w, table := m.Weights.Value.Data, m.Emb.Value.Data
	for i, s := range sents {
		var total float32
		for _, id := range s {
			total += w[id]
		}
		if total == 0 {
			continue
		}
		e, de := E[i*d:(i+1)*d:(i+1)*d], dE[i*d:(i+1)*d:(i+1)*d]
		// dE·(x_t − e) = dE·x_t − dE·e; the second term is the sentence's
		// (zero for a loss of cosines alone, whose dE is orthogonal to e).
		var dee float32
		for k, v := range de {
			dee += v * e[k]
		}
		for _, id := range s {
			if w[id] == 0 {
				continue
			}
			x := table[id*d : (id+1)*d : (id+1)*d]
			var dex float32
			for k, v := range de {
				dex += v * x[k]
			}
			g.acc(id)[0] += w[id] * (dex - dee) / total
		}
	}
}

// SparseGrad is the gradient of a (vocab, dim) embedding table restricted
// to the rows that received a gradient since the last Reset. Rows are
// stored contiguously in first-touch order; after the first few batches
// accumulating into it allocates nothing.
type SparseGrad struct {
	dim  int
	slot []int32 // per token id: index into ids, or -1
	ids  []int
	data []float32
}

// NewSparseGrad returns an empty gradient for a (vocab, dim) table.
func NewSparseGrad(vocab, dim int) *SparseGrad {
	slot := make([]int32, vocab)
	for i := range slot {
		slot[i] = -1
	}
	return &SparseGrad{dim: dim, slot: slot}
}

// Rows returns the token IDs whose rows hold a gradient, in first-touch
// order. The slice is owned by g.
func (g *SparseGrad) Rows() []int { return g.ids }

// Row returns the gradient row of id, or nil if id received none. The
// slice aliases g's storage.
func (g *SparseGrad) Row(id int) []float32 {
	s := g.slot[id]
	if s < 0 {
		return nil
	}
	return g.data[int(s)*g.dim : (int(s)+1)*g.dim]
}

// acc returns the gradient row of id, adding a zero row on first touch.
func (g *SparseGrad) acc(id int) []float32 {
	s := g.slot[id]
	if s < 0 {
		s = int32(len(g.ids))
		g.slot[id] = s
		g.ids = append(g.ids, id)
		n := len(g.data)
		g.data = slices.Grow(g.data, g.dim)[:n+g.dim]
		clear(g.data[n:])
	}
	return g.data[int(s)*g.dim : (int(s)+1)*g.dim : (int(s)+1)*g.dim]
}

// Reset empties g, keeping its memory.
func (g *SparseGrad) Reset() {
	for _, id := range g.ids {
		g.slot[id] = -1
	}
	g.ids = g.ids[:0]
	g.data = g.data[:0]
}

// SparseAdam is Adam restricted to the rows of an embedding table that
// received a gradient ("lazy" Adam): the moments and weights of a row are
// updated only in steps whose batch contains its token, with the bias
// correction of the global step count. Rows of tokens absent from a batch
// keep their moments unchanged instead of decaying them, which is what makes
// a step cost proportional to the tokens of the batch rather than to the
// vocabulary.
type SparseAdam struct {
	// LR is the learning rate.
	LR float64
	// Beta1, Beta2 and Eps are the usual Adam constants; NewSparseAdam sets
	// 0.9, 0.999 and 1e-8.
	Beta1, Beta2, Eps float64
	// Steps counts the updates made so far.
	Steps int

	m, v []float32
}

// NewSparseAdam returns a lazy Adam optimiser with the standard constants.
func NewSparseAdam(lr float64) *SparseAdam {
	return &SparseAdam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
}

// Step updates the rows of table (a (vocab, dim) parameter) that hold a
// gradient in g. It does not reset g.
func (a *SparseAdam) Step(table *nn.Param, g *SparseGrad) {
	w := table.Value.Data
	if len(a.m) != len(w) {
		a.m, a.v = make([]float32, len(w)), make([]float32, len(w))
	}
	a.Steps++
	t := float64(a.Steps)
	b1, b2 := float32(a.Beta1), float32(a.Beta2)
	lr := float32(a.LR / (1 - math.Pow(a.Beta1, t)))
	sc2 := float32(1 / math.Sqrt(1-math.Pow(a.Beta2, t)))
	eps := float32(a.Eps)
	d := g.dim
	for s, id := range g.ids {
		gr := g.data[s*d : (s+1)*d : (s+1)*d]
		wr := w[id*d : (id+1)*d : (id+1)*d]
		mr := a.m[id*d : (id+1)*d : (id+1)*d]
		vr := a.v[id*d : (id+1)*d : (id+1)*d]
		for j, gj := range gr {
			mj := b1*mr[j] + (1-b1)*gj
			vj := b2*vr[j] + (1-b2)*gj*gj
			mr[j], vr[j] = mj, vj
			wr[j] -= lr * mj / (float32(math.Sqrt(float64(vj)))*sc2 + eps)
		}
	}
}

// Cosine returns the cosine of a and b, accumulated in float64; it is 0
// when either vector is zero.
func Cosine(a, b []float32) float64 {
	b = b[:len(a)]
	var ab, aa, bb float64
	for i, x := range a {
		y := float64(b[i])
		ab += float64(x) * y
		aa += float64(x) * float64(x)
		bb += y * y
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

// sumRows writes into dst the sum of the rows ids of table, a matrix with
// rows of len(dst) values. It works on eight columns at a time, summing
// them in registers over all tokens before storing, which makes the
// encoder about 1.6 times as fast as adding row after row into dst. The
// sums run in token order, so the result does not depend on the blocking.
func sumRows(dst, table []float32, ids []int) {
	d := len(dst)
	j := 0
	for ; j+8 <= d; j += 8 {
		var a0, a1, a2, a3, a4, a5, a6, a7 float32
		for _, id := range ids {
			r := table[id*d+j : id*d+j+8 : id*d+j+8]
			a0 += r[0]
			a1 += r[1]
			a2 += r[2]
			a3 += r[3]
			a4 += r[4]
			a5 += r[5]
			a6 += r[6]
			a7 += r[7]
		}
		o := dst[j : j+8 : j+8]
		o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7] = a0, a1, a2, a3, a4, a5, a6, a7
	}
	for ; j < d; j++ {
		var a float32
		for _, id := range ids {
			a += table[id*d+j]
		}
		dst[j] = a
	}
}

// axpy computes y += alpha*x.
func axpy(alpha float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += alpha * v
	}
}

func scaleBy(x []float32, s float32) {
	for i := range x {
		x[i] *= s
	}
}

// grow returns a slice of length n reusing buf's memory when it can. The
// contents are unspecified.
func grow[T any](buf []T, n int) []T {
	if cap(buf) >= n {
		return buf[:n]
	}
	return make([]T, n)
}
