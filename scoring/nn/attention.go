package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ctxsim/ctxsim/scoring/internal/vecmath"
)

// MultiHeadAttention is scaled dot-product attention with Heads heads and
// learned query, key, value and output projections (each dim→dim, with
// bias). Head h uses columns [h*dim/Heads, (h+1)*dim/Heads) of the
// projections.
type MultiHeadAttention struct {
	// Heads is the number of attention heads.
	Heads int
	// Q, K, V and O are named "<name>.q", "<name>.k", "<name>.v", "<name>.o".
	Q, K, V, O *Linear
}

// NewMultiHeadAttention returns an attention layer over width dim, which
// must be divisible by heads.
func NewMultiHeadAttention(name string, dim, heads int, rng *rand.Rand) *MultiHeadAttention {
	if heads <= 0 || dim%heads != 0 {
		panic(fmt.Sprintf("nn: attention: dim %d not divisible by %d heads", dim, heads))
	}
	return &MultiHeadAttention{
		Heads: heads,
		Q:     NewLinear(name+".q", dim, dim, true, rng),
		K:     NewLinear(name+".k", dim, dim, true, rng),
		V:     NewLinear(name+".v", dim, dim, true, rng),
		O:     NewLinear(name+".o", dim, dim, true, rng),
	}
}

// Dim returns the model width.
func (a *MultiHeadAttention) Dim() int { return a.Q.In() }

// Params returns the trainable parameters.
func (a *MultiHeadAttention) Params() []*Param {
	var ps []*Param
	for _, l := range []*Linear{a.Q, a.K, a.V, a.O} {
		ps = append(ps, l.Params()...)
	}
	return ps
}

// AttentionCache holds what MultiHeadAttention.Backward needs.
type AttentionCache struct {
	q, kv      *Tensor // layer inputs
	qp, kp, vp *Tensor // projections
	probs      *Tensor // (batch, heads, tq, tk) attention weights
	ctx        *Tensor // (batch, tq, dim) concatenated head outputs
	batch      int
	tq, tk     int
}

// PadMask returns a key-padding mask for a (batch, steps) layout: entry
// b*steps+t is true when t >= lengths[b].
func PadMask(lengths []int, steps int) []bool {
	m := make([]bool, len(lengths)*steps)
	for b, n := range lengths {
		for t := n; t < steps; t++ {
			m[b*steps+t] = true
		}
	}
	return m
}

// Forward attends from the queries q (batch, tq, dim) to the keys and
// values kv (batch, tk, dim). keyPad, of length batch*tk or nil, marks
// padded keys that no query may attend to. With causal, query i may only
// attend to keys j <= i (this requires tq == tk). A query with no visible
// key gets a zero context vector. It returns (batch, tq, dim).
func (a *MultiHeadAttention) Forward(q, kv *Tensor, keyPad []bool, causal bool) (*Tensor, *AttentionCache) {
	nb, tq, tk := a.checkShapes(q, kv, keyPad, causal)
	d := a.Dim()
	c := &AttentionCache{
		q: q, kv: kv,
		qp: a.Q.Forward(q), kp: a.K.Forward(kv), vp: a.V.Forward(kv),
		probs: newTensorUninit(nb, a.Heads, tq, tk), ctx: newTensorUninit(nb, tq, d),
		batch: nb, tq: tq, tk: tk,
	}
	a.attend(c.qp.Data, c.kp.Data, c.vp.Data, c.ctx.Data, c.probs.Data, nb, tq, tk, nil, keyPad, causal, false)
	return a.O.Forward(c.ctx), c
}

// attend computes the concatenated head outputs ctx (nb, tq, d) from the
// projections qp (nb, tq, d) and kp, vp (one (tk, d) block per source):
// batch entry b attends to source src[b], or to source b when src is nil,
// with keyPad (tk entries per source, or nil) and the causal mask. With
// probs of nb*heads*tq*tk values the attention weights are kept there;
// otherwise (len(probs) == tq*tk) that buffer is reused for every head.
// With scaled, qp already holds the queries times attentionScale.
func (a *MultiHeadAttention) attend(qp, kp, vp, ctx, probs []float32, nb, tq, tk int, src []int, keyPad []bool, causal, scaled bool) {
	d := a.Dim()
	nh := a.Heads
	dh := d / nh
	scale := a.attentionScale()
	if scaled {
		scale = 1
	}
	keep := len(probs) == nb*nh*tq*tk
	for b := 0; b < nb; b++ {
		kb := b
		if src != nil {
			kb = src[b]
		}
		var pad []bool
		if keyPad != nil {
			pad = keyPad[kb*tk : (kb+1)*tk]
		}
		for h := 0; h < nh; h++ {
			s := probs[:tq*tk]
			if keep {
				s = probs[(b*nh+h)*tq*tk : (b*nh+h+1)*tq*tk]
			}
			Gemm(false, true, tq, tk, dh, scale, qp[b*tq*d+h*dh:], d, kp[kb*tk*d+h*dh:], d, 0, s, tk)
			for i := 0; i < tq; i++ {
				visible := tk
				if causal {
					visible = i + 1
				}
				maskedSoftmax(s[i*tk:(i+1)*tk], pad, visible)
			}
			Gemm(false, false, tq, dh, tk, 1, s, tk, vp[kb*tk*d+h*dh:], d, 0, ctx[b*tq*d+h*dh:], d)
		}
	}
}

// Apply is Forward without the cache, for inference: the same output, bit
// for bit, with one tq×tk buffer of weights reused for every head.
func (a *MultiHeadAttention) Apply(q, kv *Tensor, keyPad []bool, causal bool) *Tensor {
	nb, tq, tk := a.checkShapes(q, kv, keyPad, causal)
	return a.apply(q, kv, nb, tq, tk, nil, keyPad, causal)
}

// ApplyShared is Apply for batch entries that share their keys and
// values: kv holds one (tk, dim) block per distinct source, entry b of q
// attends to block src[b], and keyPad (nil or tk entries per block) masks
// padded keys of each block. The key and value projections are computed
// once per block. The output is that of Apply on the expanded kv, bit for
// bit.
func (a *MultiHeadAttention) ApplyShared(q, kv *Tensor, src []int, keyPad []bool) *Tensor {
	d := a.Dim()
	if len(q.Shape) != 3 || len(kv.Shape) != 3 || q.Shape[2] != d || kv.Shape[2] != d || len(src) != q.Shape[0] {
		panic(fmt.Sprintf("nn: attention: query shape %v, key shape %v and %d sources", q.Shape, kv.Shape, len(src)))
	}
	nu, tk := kv.Shape[0], kv.Shape[1]
	for _, u := range src {
		if u < 0 || u >= nu {
			panic(fmt.Sprintf("nn: attention: source %d of %d", u, nu))
		}
	}
	if keyPad != nil && len(keyPad) != nu*tk {
		panic(fmt.Sprintf("nn: attention: key mask has %d entries, want %d", len(keyPad), nu*tk))
	}
	return a.apply(q, kv, q.Shape[0], q.Shape[1], tk, src, keyPad, false)
}

func (a *MultiHeadAttention) apply(q, kv *Tensor, nb, tq, tk int, src []int, keyPad []bool, causal bool) *Tensor {
	qp, kp, vp := a.Q.Forward(q), a.K.Forward(kv), a.V.Forward(kv)
	ctx := newTensorUninit(nb, tq, a.Dim())
	// The pure-Go Gemm folds alpha into A as alpha*a before its sums, so
	// scaling the queries here gives the same bits and lets the score
	// products read them in place rather than pack a scaled copy per head.
	// OpenBLAS may apply alpha elsewhere; it gets the scale as alpha.
	scaled := useGo.Load()
	if scaled {
		scaleInPlace(qp.Data, a.attentionScale())
	}
	probs := getBuf(tq*tk, false)
	a.attend(qp.Data, kp.Data, vp.Data, ctx.Data, probs, nb, tq, tk, src, keyPad, causal, scaled)
	putBuf(probs)
	releaseAll(qp, kp, vp)
	y := a.O.Forward(ctx)
	ctx.Release()
	return y
}

// attentionScale is the factor of the attention scores, 1/sqrt(d/heads).
func (a *MultiHeadAttention) attentionScale() float32 {
	return float32(1 / math.Sqrt(float64(a.Dim()/a.Heads)))
}

// scaleInPlace multiplies every value of x by s.
func scaleInPlace(x []float32, s float32) {
	for i := range x {
		x[i] *= s
	}
}

// checkShapes panics unless q (batch, tq, dim) and kv (batch, tk, dim)
// fit the layer, keyPad (when not nil) has batch*tk entries, and a causal
// mask has tq == tk; it returns batch, tq and tk.
func (a *MultiHeadAttention) checkShapes(q, kv *Tensor, keyPad []bool, causal bool) (nb, tq, tk int) {
	d := a.Dim()
	if len(q.Shape) != 3 || len(kv.Shape) != 3 || q.Shape[2] != d || kv.Shape[2] != d || q.Shape[0] != kv.Shape[0] {
		panic(fmt.Sprintf("nn: attention: query shape %v and key shape %v, want (batch, t, %d)", q.Shape, kv.Shape, d))
	}
	nb, tq, tk = q.Shape[0], q.Shape[1], kv.Shape[1]
	if causal && tq != tk {
		panic(fmt.Sprintf("nn: attention: causal mask needs equal lengths, got %d and %d", tq, tk))
	}
	if keyPad != nil && len(keyPad) != nb*tk {
		panic(fmt.Sprintf("nn: attention: key mask has %d entries, want %d", len(keyPad), nb*tk))
	}
	return nb, tq, tk
}

// maskedSoftmax replaces row with its softmax over the entries j < visible
// that pad does not mark; the other entries become zero, and so does the
// whole row if no entry is left.
func maskedSoftmax(row []float32, pad []bool, visible int) {
	// Trailing padding (the usual layout) is left out of the sum, so a
	// row's result does not depend on how far its batch is padded: scores
	// are the same whichever requests share a batch.
	for pad != nil && visible > 0 && pad[visible-1] {
		visible--
	}
	if pad != nil && slices.Contains(pad[:visible], true) {
		maskedSoftmaxInterior(row, pad, visible)
		return
	}
	mx := vecmath.Max(row[:visible])
	if math.IsInf(float64(mx), -1) {
		clear(row)
		return
	}
	sum := vecmath.ExpShiftInPlace(row[:visible], mx)
	clear(row[visible:])
	inv := 1 / sum
	for j := range row[:visible] {
		row[j] *= inv
	}
}

// maskedSoftmaxInterior is maskedSoftmax for a row with padded entries
// before its last visible one.
func maskedSoftmaxInterior(row []float32, pad []bool, visible int) {
	mx := float32(math.Inf(-1))
	for j := 0; j < visible; j++ {
		if !pad[j] && row[j] > mx {
			mx = row[j]
		}
	}
	if math.IsInf(float64(mx), -1) {
		clear(row)
		return
	}
	for j := 0; j < visible; j++ {
		if pad[j] {
			row[j] = float32(math.Inf(-1)) // e^-Inf clamps to ~1e-38, zeroed below.
		}
	}
	sum := vecmath.ExpShiftInPlace(row[:visible], mx)
	clear(row[visible:])
	inv := 1 / sum
	for j := 0; j < visible; j++ {
		if pad[j] {
			row[j] = 0
			continue
		}
		row[j] *= inv
	}
}

// Backward accumulates the parameter gradients and returns the gradients
// of the query input q and of the key/value input kv. For self-attention,
// where both inputs are the same tensor, add the two (or use SelfBackward).
func (a *MultiHeadAttention) Backward(c *AttentionCache, dy *Tensor) (dq, dkv *Tensor) {
	d := a.Dim()
	nb, tq, tk := c.batch, c.tq, c.tk
	nh := a.Heads
	dh := d / nh
	scale := float32(1 / math.Sqrt(float64(dh)))
	dctx := a.O.Backward(c.ctx, dy)
	dqp, dkp, dvp := newTensorUninit(c.qp.Shape...), newTensorUninit(c.kp.Shape...), newTensorUninit(c.vp.Shape...)
	ds := make([]float32, tq*tk)
	for b := 0; b < nb; b++ {
		for h := 0; h < nh; h++ {
			p := c.probs.Data[(b*nh+h)*tq*tk : (b*nh+h+1)*tq*tk]
			qo, ko := b*tq*d+h*dh, b*tk*d+h*dh
			// dP = dctx·Vᵀ and dV = Pᵀ·dctx.
			Gemm(false, true, tq, tk, dh, 1, dctx.Data[qo:], d, c.vp.Data[ko:], d, 0, ds, tk)
			Gemm(true, false, tk, dh, tq, 1, p, tk, dctx.Data[qo:], d, 0, dvp.Data[ko:], d)
			// Softmax backward: dS = P ⊙ (dP - rowsum(dP ⊙ P)).
			for i := 0; i < tq; i++ {
				pr, dr := p[i*tk:(i+1)*tk], ds[i*tk:(i+1)*tk]
				var dot float32
				for j, pv := range pr {
					dot += pv * dr[j]
				}
				for j, pv := range pr {
					dr[j] = pv * (dr[j] - dot)
				}
			}
			Gemm(false, false, tq, dh, tk, scale, ds, tk, c.kp.Data[ko:], d, 0, dqp.Data[qo:], d)
			Gemm(true, false, tk, dh, tq, scale, ds, tk, c.qp.Data[qo:], d, 0, dkp.Data[ko:], d)
		}
	}
	dq = a.Q.Backward(c.q, dqp)
	dkv = a.K.Backward(c.kv, dkp)
	dv := a.V.Backward(c.kv, dvp)
	dkv.AddInPlace(dv)
	releaseAll(dctx, dqp, dkp, dvp, dv)
	return dq, dkv
}

// Release hands the cache's buffers back for reuse (see Tensor.Release);
// the cache must not be used afterwards. The inputs are not released. A
// nil cache is a no-op.
func (c *AttentionCache) Release() {
	if c == nil {
		return
	}
	releaseAll(c.qp, c.kp, c.vp, c.probs, c.ctx)
	c.qp, c.kp, c.vp, c.probs, c.ctx = nil, nil, nil, nil, nil
}

// SelfForward is Forward(x, x, keyPad, causal).
func (a *MultiHeadAttention) SelfForward(x *Tensor, keyPad []bool, causal bool) (*Tensor, *AttentionCache) {
	return a.Forward(x, x, keyPad, causal)
}

// SelfBackward is Backward for self-attention: it returns the total
// gradient of the shared input.
func (a *MultiHeadAttention) SelfBackward(c *AttentionCache, dy *Tensor) *Tensor {
	dq, dkv := a.Backward(c, dy)
	dq.AddInPlace(dkv)
	dkv.Release()
	return dq
}
