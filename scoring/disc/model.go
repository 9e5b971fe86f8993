// Package disc is the discriminative coherence model of Eq. 1:
// p(y=1 | c_<i, s, c_>i) from a BiLSTM sentence encoder and a head over the
// vectors of the left context, the sentence and the right context.
//
// Sentences are encoded once (mean over time of the BiLSTM's outputs) and
// a context is the mean of its sentences' vectors, so with cached sentence
// vectors scoring a (sentence, context) pair costs only the head.
//
// The head matters. A head linear in [l; s; r] (the paper's) makes the
// logit a·l + b·s + c·r: s and the context are additively separable, so the
// ranking of contexts is the same for every sentence. HeadInteraction adds
// the products l⊙s, s⊙r and the distances |l−s|, |s−r| and a hidden layer,
// so which contexts rank first depends on s. HeadLinear is kept to measure
// the difference.
package disc

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ctxsim/ctxsim/scoring/internal/vecmath"
	"github.com/ctxsim/ctxsim/scoring/nn"
)

// Head kinds.
const (
	HeadInteraction = "interaction"
	HeadLinear      = "linear"
)

// Config is the model's architecture.
type Config struct {
	Vocab      int    `json:"vocab"`
	EmbedDim   int    `json:"embed_dim"`
	Hidden     int    `json:"hidden"`
	HeadHidden int    `json:"head_hidden"`
	Head       string `json:"head"`
	// MaxTokens truncates sentences for encoding.
	MaxTokens int `json:"max_tokens"`
	// Window is the most context sentences used on each side.
	Window int `json:"window"`
}

// DefaultConfig is the paper's encoder size (hidden 300) with an
// interaction head.
func DefaultConfig(vocab int) Config {
	return Config{Vocab: vocab, EmbedDim: 256, Hidden: 300, HeadHidden: 300,
		Head: HeadInteraction, MaxTokens: 64, Window: 2}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.Vocab < 10 || c.EmbedDim < 1 || c.Hidden < 1 || c.MaxTokens < 1 || c.Window < 1 {
		return fmt.Errorf("disc: invalid config %+v", c)
	}
	if c.Head != HeadInteraction && c.Head != HeadLinear {
		return fmt.Errorf("disc: unknown head %q", c.Head)
	}
	if c.Head == HeadInteraction && c.HeadHidden < 1 {
		return fmt.Errorf("disc: interaction head needs head_hidden > 0")
	}
	return nil
}

// Model is the encoder and head.
type Model struct {
	Cfg Config
	Emb *nn.Embedding
	Enc *nn.BiLSTM
	// H1 maps head features to the hidden layer (interaction) or straight
	// to the logit (linear); H2 maps the hidden layer to the logit.
	H1, H2 *nn.Linear

	// packing packs H1's weights for Logits (see pack).
	packing nn.Packing
}

// pack readies the interaction head's hidden layer for Logits
// (nn.Linear.Pack) once; Trainer.Step undoes it (unpack) before it changes
// the weights. Code that writes the weights in any other way after Logits
// must call unpack first.
func (m *Model) pack() {
	if m.H2 != nil {
		m.packing.Pack(m.hidden)
	}
}

// unpack drops the packed weights made by pack.
func (m *Model) unpack() { m.packing.Unpack(m.hidden) }

// hidden is the layer pack packs: the interaction head's hidden layer.
func (m *Model) hidden() []*nn.Linear { return []*nn.Linear{m.H1} }

// New returns a model with weights drawn from seed.
func New(cfg Config, seed uint64) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x636f68)) // "coh"
	m := &Model{
		Cfg: cfg,
		Emb: nn.NewEmbedding("emb", cfg.Vocab, cfg.EmbedDim, 0, rng),
		Enc: nn.NewBiLSTM("enc", cfg.EmbedDim, cfg.Hidden, rng),
	}
	// Token embeddings from N(0, 1) swamp a small LSTM; scale them down.
	for i := range m.Emb.Weight.Value.Data {
		m.Emb.Weight.Value.Data[i] *= 0.1
	}
	d := m.VecDim()
	if cfg.Head == HeadInteraction {
		m.H1 = nn.NewLinear("head.1", 7*d, cfg.HeadHidden, true, rng)
		m.H2 = nn.NewLinear("head.2", cfg.HeadHidden, 1, true, rng)
	} else {
		m.H1 = nn.NewLinear("head.1", 3*d, 1, true, rng)
	}
	return m, nil
}

// Clone returns a copy of m that shares no memory with it.
func (m *Model) Clone() *Model {
	c, err := New(m.Cfg, 0)
	if err != nil {
		panic(fmt.Sprintf("disc: Clone of a model with an invalid config: %v", err))
	}
	src := m.Params()
	for i, p := range c.Params() {
		copy(p.Value.Data, src[i].Value.Data)
	}
	return c
}

// VecDim is the width of a sentence vector.
func (m *Model) VecDim() int { return 2 * m.Cfg.Hidden }

// Params returns every trainable parameter, in a fixed order.
func (m *Model) Params() []*nn.Param {
	ps := append(m.Emb.Params(), m.Enc.Params()...)
	ps = append(ps, m.H1.Params()...)
	if m.H2 != nil {
		ps = append(ps, m.H2.Params()...)
	}
	return ps
}

// EncCache holds what EncodeBackward needs.
type EncCache struct {
	ids     []int
	lengths []int
	steps   int
	enc     *nn.BiLSTMCache
	x       *nn.Tensor // the embedded input, which enc refers to
}

// release hands the cache's buffers back for reuse; it must not be used
// afterwards.
func (c *EncCache) release() {
	c.enc.Release()
	c.x.Release()
}

// padBatch turns token sequences into one padded id list, truncating to
// MaxTokens; an empty sequence gets a single padding step.
func (m *Model) padBatch(seqs [][]int32) (ids, lengths []int, steps int) {
	lengths = make([]int, len(seqs))
	for i, s := range seqs {
		lengths[i] = max(1, min(len(s), m.Cfg.MaxTokens))
		steps = max(steps, lengths[i])
	}
	ids = make([]int, len(seqs)*steps)
	for i, s := range seqs {
		for t := 0; t < min(len(s), m.Cfg.MaxTokens); t++ {
			ids[i*steps+t] = int(s[t])
		}
	}
	return ids, lengths, steps
}

// encode returns (len(seqs), VecDim) sentence vectors: the mean over valid
// steps of the BiLSTM outputs.
func (m *Model) encode(seqs [][]int32) (*nn.Tensor, *EncCache) {
	ids, lengths, steps := m.padBatch(seqs)
	x := m.Emb.Forward(ids).Reshape(len(seqs), steps, m.Cfg.EmbedDim)
	out, cache := m.Enc.Forward(x, lengths)
	// Only the vectors are needed after this; backward uses the cache.
	v := m.meanSteps(out, lengths, steps)
	return v, &EncCache{ids: ids, lengths: lengths, steps: steps, enc: cache, x: x}
}

// meanSteps returns the sentence vectors of a BiLSTM output, the mean over
// each sequence's valid steps, and releases the output.
func (m *Model) meanSteps(out *nn.BiLSTMOutput, lengths []int, steps int) *nn.Tensor {
	d := m.VecDim()
	v := nn.NewTensor(len(lengths), d)
	for b := range lengths {
		row := v.Data[b*d : (b+1)*d]
		for t := 0; t < lengths[b]; t++ {
			o := out.Out.Data[(b*steps+t)*d : (b*steps+t+1)*d]
			for j := range row {
				row[j] += o[j]
			}
		}
		inv := 1 / float32(lengths[b])
		for j := range row {
			row[j] *= inv
		}
	}
	out.Out.Release()
	out.HFwd.Release()
	out.CFwd.Release()
	out.HBwd.Release()
	out.CBwd.Release()
	return v
}

// encodeBackward back-propagates sentence-vector gradients dv into the
// encoder and embeddings.
func (m *Model) encodeBackward(c *EncCache, dv *nn.Tensor) {
	n, d := len(c.lengths), m.VecDim()
	dOut := nn.NewTensor(n, c.steps, d)
	for b := 0; b < n; b++ {
		g := dv.Data[b*d : (b+1)*d]
		inv := 1 / float32(c.lengths[b])
		for t := 0; t < c.lengths[b]; t++ {
			o := dOut.Data[(b*c.steps+t)*d : (b*c.steps+t+1)*d]
			for j := range o {
				o[j] = g[j] * inv
			}
		}
	}
	dx := m.Enc.Backward(c.enc, nn.BiLSTMGrads{Out: dOut})
	m.Emb.Backward(c.ids, dx.Reshape(len(c.ids), m.Cfg.EmbedDim))
}

// EncodeTrain returns the (len(seqs), VecDim) sentence vectors of seqs with
// what EncodeBackward needs, for training the encoder on another objective.
func (m *Model) EncodeTrain(seqs [][]int32) (*nn.Tensor, *EncCache) { return m.encode(seqs) }

// EncodeBackward accumulates into the encoder's parameter gradients the
// back-propagation of dv, the gradient of the vectors EncodeTrain returned.
func (m *Model) EncodeBackward(c *EncCache, dv *nn.Tensor) { m.encodeBackward(c, dv) }

// EncoderParams returns the parameters of the sentence encoder: the
// embeddings and the BiLSTM, without the head.
func (m *Model) EncoderParams() []*nn.Param { return append(m.Emb.Params(), m.Enc.Params()...) }

// Encode returns the sentence vectors of seqs (token ids), one row each.
func (m *Model) Encode(seqs [][]int32) [][]float32 {
	// Inference keeps nothing for backward (BiLSTM.Infer gives Forward's
	// output without its cache), and the buffers go back to the pool, so
	// the next batch is not fresh memory to fault in and zero.
	ids, lengths, steps := m.padBatch(seqs)
	x := m.Emb.Forward(ids).Reshape(len(seqs), steps, m.Cfg.EmbedDim)
	v := m.meanSteps(m.Enc.Infer(x, lengths), lengths, steps)
	x.Release()
	d := m.VecDim()
	out := make([][]float32, len(seqs))
	for i := range out {
		out[i] = v.Data[i*d : (i+1)*d : (i+1)*d]
	}
	return out
}

// headCache holds what headBackward needs.
type headCache struct {
	l, s, r *nn.Tensor
	feat    *nn.Tensor
	hidden  *nn.Tensor // after ReLU
}

// features writes the head input of one (l, s, r) triple into dst.
func (m *Model) features(dst, l, s, r []float32) {
	d := len(s)
	if m.Cfg.Head == HeadLinear {
		copy(dst[0:d], l)
		copy(dst[d:2*d], s)
		copy(dst[2*d:3*d], r)
		return
	}
	copy(dst[0:d], l)
	copy(dst[d:2*d], s)
	copy(dst[2*d:3*d], r)
	for j := 0; j < d; j++ {
		dst[3*d+j] = l[j] * s[j]
		dst[4*d+j] = s[j] * r[j]
		dst[5*d+j] = abs32(l[j] - s[j])
		dst[6*d+j] = abs32(s[j] - r[j])
	}
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}

func (m *Model) featDim() int {
	if m.Cfg.Head == HeadLinear {
		return 3 * m.VecDim()
	}
	return 7 * m.VecDim()
}

// headForward returns one logit per row of l, s, r (each (n, VecDim)).
func (m *Model) headForward(l, s, r *nn.Tensor) (*nn.Tensor, *headCache) {
	n, d := s.Rows(), m.VecDim()
	fd := m.featDim()
	feat := nn.NewTensor(n, fd)
	for i := 0; i < n; i++ {
		m.features(feat.Data[i*fd:(i+1)*fd], l.Data[i*d:(i+1)*d], s.Data[i*d:(i+1)*d], r.Data[i*d:(i+1)*d])
	}
	c := &headCache{l: l, s: s, r: r, feat: feat}
	if m.H2 == nil {
		return m.H1.Forward(feat), c
	}
	h := m.H1.Forward(feat)
	for i, x := range h.Data {
		if x < 0 {
			h.Data[i] = 0
		}
	}
	c.hidden = h
	return m.H2.Forward(h), c
}

// headBackward returns the gradients of l, s and r given logit gradients.
func (m *Model) headBackward(c *headCache, dlogit *nn.Tensor) (dl, ds, dr *nn.Tensor) {
	var dfeat *nn.Tensor
	if m.H2 == nil {
		dfeat = m.H1.Backward(c.feat, dlogit)
	} else {
		dh := m.H2.Backward(c.hidden, dlogit)
		for i, x := range c.hidden.Data {
			if x <= 0 {
				dh.Data[i] = 0
			}
		}
		dfeat = m.H1.Backward(c.feat, dh)
	}
	n, d, fd := c.s.Rows(), m.VecDim(), m.featDim()
	dl, ds, dr = nn.NewTensor(n, d), nn.NewTensor(n, d), nn.NewTensor(n, d)
	for i := 0; i < n; i++ {
		g := dfeat.Data[i*fd : (i+1)*fd]
		l, s, r := c.l.Data[i*d:(i+1)*d], c.s.Data[i*d:(i+1)*d], c.r.Data[i*d:(i+1)*d]
		gl, gs, gr := dl.Data[i*d:(i+1)*d], ds.Data[i*d:(i+1)*d], dr.Data[i*d:(i+1)*d]
		for j := 0; j < d; j++ {
			gl[j] = g[j]
			gs[j] = g[d+j]
			gr[j] = g[2*d+j]
		}
		if m.Cfg.Head == HeadLinear {
			continue
		}
		for j := 0; j < d; j++ {
			gl[j] += g[3*d+j] * s[j]
			gs[j] += g[3*d+j]*l[j] + g[4*d+j]*r[j]
			gr[j] += g[4*d+j] * s[j]
			sl := sign32(l[j] - s[j])
			gl[j] += g[5*d+j] * sl
			gs[j] -= g[5*d+j] * sl
			sr := sign32(s[j] - r[j])
			gs[j] += g[6*d+j] * sr
			gr[j] -= g[6*d+j] * sr
		}
	}
	return dl, ds, dr
}

func sign32(x float32) float32 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// Logits scores n (context, sentence) pairs from cached vectors: row i of
// l, s and r (each n×VecDim, row-major) is one pair. It returns the logits
// of p(y=1 | c_<i, s, c_>i).
//
// It computes what the training forward pass (headForward) computes
// without building the feature matrix: the linear head takes its dot
// products straight from l, s and r, and the interaction head's features
// are written block by block into the hidden layer's packed input. It runs
// on the pure-Go kernel whatever the nn backend (see nn.Linear.ForwardFill):
// its logits are headForward's under the "go" backend bit for bit, and
// within float rounding of them under "openblas". Logits only reads the
// model, so it may run from several goroutines at once.
func (m *Model) Logits(l, s, r []float32) []float32 {
	d := m.VecDim()
	n := len(s) / d
	if len(s) != n*d || len(l) != n*d || len(r) != n*d {
		panic(fmt.Sprintf("disc: Logits: %d, %d and %d values for rows of %d", len(l), len(s), len(r), d))
	}
	if m.H2 == nil {
		out := make([]float32, n)
		m.H1.ForwardCat(out, l, s, r)
		return out
	}
	m.pack()
	h := nn.NewTensor(n, m.H1.Out())
	m.H1.ForwardFill(n, func(dst []float32, i, p int) {
		interactionFeatures(dst, p, l[i*d:(i+1)*d], s[i*d:(i+1)*d], r[i*d:(i+1)*d])
	}, h.Data)
	relu(h.Data)
	out := make([]float32, n)
	m.H2.ForwardCat(out, h.Data)
	h.Release()
	return out
}

// relu sets the negative values of x to zero, as headForward does, with a
// conditional move on the bits instead of a branch (mispredicted half the
// time on random data): x < 0 exactly when its bits lie in
// [0x80000001, 0xff800000], the negative numbers from the least subnormal
// to -Inf, which leaves -0 and NaNs as they are.
func relu(x []float32) {
	for i, v := range x {
		b := math.Float32bits(v)
		if b-0x80000001 < 0x7f800000 {
			b = 0
		}
		x[i] = math.Float32frombits(b)
	}
}

// interactionFeatures writes the interaction head's features p, p+1, ...,
// p+len(dst)-1 of one (l, s, r) triple into dst: the values features
// writes at those places, up to the sign of zero: the absolute
// differences clear the sign bit (vecmath.AbsDiffInto, without a branch),
// which differs from abs32 only in the sign of -0 (and of a NaN). That
// cannot change a logit: the matrix product sums from +0, and +0 + -0 is
// +0, so a -0 product adds exactly what a +0 one does.
func interactionFeatures(dst []float32, p int, l, s, r []float32) {
	d := len(s)
	for len(dst) > 0 {
		off := p % d
		o := dst[:min(d-off, len(dst))]
		lo, so, ro := l[off:off+len(o)], s[off:off+len(o)], r[off:off+len(o)]
		switch p / d {
		case 0:
			copy(o, lo)
		case 1:
			copy(o, so)
		case 2:
			copy(o, ro)
		case 3:
			vecmath.MulInto(o, lo, so)
		case 4:
			vecmath.MulInto(o, so, ro)
		case 5:
			vecmath.AbsDiffInto(o, lo, so)
		case 6:
			vecmath.AbsDiffInto(o, so, ro)
		default:
			panic(fmt.Sprintf("disc: feature %d of %d", p, 7*d))
		}
		dst = dst[len(o):]
		p += len(o)
	}
}

// LogSigmoid is log p(y=1) for a logit, computed stably.
func LogSigmoid(x float32) float32 {
	xf := float64(x)
	if xf >= 0 {
		return float32(-math.Log1p(math.Exp(-xf)))
	}
	return float32(xf - math.Log1p(math.Exp(xf)))
}

// MeanVec writes the mean of vecs into dst (zero when vecs is empty): the
// vector of a context side.
func MeanVec(dst []float32, vecs [][]float32) {
	clear(dst)
	if len(vecs) == 0 {
		return
	}
	for _, v := range vecs {
		for j := range dst {
			dst[j] += v[j]
		}
	}
	inv := 1 / float32(len(vecs))
	for j := range dst {
		dst[j] *= inv
	}
}

// SubwordEmbeddings returns the subword embedding table (row-major, one
// row per token ID) and its width. The table is the model's own: callers
// must not change it.
func (m *Model) SubwordEmbeddings() (table []float32, dim int) {
	w := m.Emb.Weight.Value
	return w.Data, w.Cols()
}
