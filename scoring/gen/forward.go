package gen

import (
	"math"

	"github.com/ctxsim/ctxsim/scoring/nn"
)

// norm applies ln to x; only with keep does it return the cache for
// backward (nil otherwise, which Release accepts).
func norm(ln *nn.LayerNorm, x *nn.Tensor, keep bool) (*nn.Tensor, *nn.LayerNormCache) {
	if keep {
		return ln.Forward(x)
	}
	return ln.Apply(x), nil
}

// selfAttend is a.SelfForward(x, pad, causal), with the cache for
// backward only with keep (Apply otherwise).
func selfAttend(a *nn.MultiHeadAttention, x *nn.Tensor, pad []bool, causal, keep bool) (*nn.Tensor, *nn.AttentionCache) {
	if keep {
		return a.SelfForward(x, pad, causal)
	}
	return a.Apply(x, x, pad, causal), nil
}

// encCache holds what EncoderLayer.backward needs.
type encCache struct {
	c1, c2 *nn.LayerNormCache
	ac     *nn.AttentionCache
	fc     *nn.FeedForwardCache
	h1, h2 *nn.Tensor // LayerNorm outputs, inputs of the sublayers
}

// forward returns the block's output for x (batch, t, dim). With keep it
// also returns the cache for backward; otherwise every intermediate buffer
// is released. x itself is neither needed later nor released.
func (l *EncoderLayer) forward(x *nn.Tensor, pad []bool, keep bool) (*nn.Tensor, *encCache) {
	h1, c1 := norm(l.LN1, x, keep)
	a, ac := selfAttend(l.Att, h1, pad, false, keep)
	a.AddInPlace(x)
	h2, c2 := norm(l.LN2, a, keep)
	f, fc := l.FF.Forward(h2)
	f.AddInPlace(a)
	a.Release()
	if !keep {
		c1.Release()
		c2.Release()
		ac.Release()
		fc.Release()
		h1.Release()
		h2.Release()
		return f, nil
	}
	return f, &encCache{c1: c1, c2: c2, ac: ac, fc: fc, h1: h1, h2: h2}
}

// backward returns the gradient of the block's input given that of its
// output, and releases the cache.
func (l *EncoderLayer) backward(c *encCache, dy *nn.Tensor) *nn.Tensor {
	g := l.FF.Backward(c.fc, dy)
	dx2 := l.LN2.Backward(c.c2, g)
	g.Release()
	dx2.AddInPlace(dy)
	g = l.Att.SelfBackward(c.ac, dx2)
	dx := l.LN1.Backward(c.c1, g)
	g.Release()
	dx.AddInPlace(dx2)
	dx2.Release()
	c.c1.Release()
	c.c2.Release()
	c.ac.Release()
	c.fc.Release()
	c.h1.Release()
	c.h2.Release()
	return dx
}

// decCache holds what DecoderLayer.backward needs.
type decCache struct {
	c1, c2, c3 *nn.LayerNormCache
	sc, cc     *nn.AttentionCache
	fc         *nn.FeedForwardCache
	h1, h2, h3 *nn.Tensor
}

// memory is the encoder output a decoder attends to: t holds one (ts, dim)
// block per source, pad its padding (ts entries per block), and request b
// reads block src[b], or block b when src is nil.
type memory struct {
	t   *nn.Tensor
	pad []bool
	src []int
}

// forward returns the block's output for y (batch, tt, dim) attending to
// the encoder output mem. Only without keep may mem's blocks be shared
// (src not nil): their key and value projections are then computed once.
func (l *DecoderLayer) forward(y *nn.Tensor, mem memory, keep bool) (*nn.Tensor, *decCache) {
	h1, c1 := norm(l.LN1, y, keep)
	// Padded target steps come after the real ones, so the causal mask
	// alone keeps real steps from seeing them.
	a, sc := selfAttend(l.Self, h1, nil, true, keep)
	var x *nn.Tensor
	var cc *nn.AttentionCache
	a.AddInPlace(y)
	h2, c2 := norm(l.LN2, a, keep)
	switch {
	case keep:
		if mem.src != nil {
			panic("gen: decoder: shared sources have no backward")
		}
		x, cc = l.Cross.Forward(h2, mem.t, mem.pad, false)
	case mem.src != nil:
		x = l.Cross.ApplyShared(h2, mem.t, mem.src, mem.pad)
	default:
		x = l.Cross.Apply(h2, mem.t, mem.pad, false)
	}
	x.AddInPlace(a)
	a.Release()
	h3, c3 := norm(l.LN3, x, keep)
	f, fc := l.FF.Forward(h3)
	f.AddInPlace(x)
	x.Release()
	if !keep {
		for _, c := range []*nn.LayerNormCache{c1, c2, c3} {
			c.Release()
		}
		sc.Release()
		cc.Release()
		fc.Release()
		h1.Release()
		h2.Release()
		h3.Release()
		return f, nil
	}
	return f, &decCache{c1: c1, c2: c2, c3: c3, sc: sc, cc: cc, fc: fc, h1: h1, h2: h2, h3: h3}
}

// backward returns the gradient of the block's input, adds the gradient of
// the memory into dmem, and releases the cache.
func (l *DecoderLayer) backward(c *decCache, dy, dmem *nn.Tensor) *nn.Tensor {
	g := l.FF.Backward(c.fc, dy)
	dx3 := l.LN3.Backward(c.c3, g)
	g.Release()
	dx3.AddInPlace(dy)
	dq, dkv := l.Cross.Backward(c.cc, dx3)
	dmem.AddInPlace(dkv)
	dkv.Release()
	dx2 := l.LN2.Backward(c.c2, dq)
	dq.Release()
	dx2.AddInPlace(dx3)
	dx3.Release()
	g = l.Self.SelfBackward(c.sc, dx2)
	dx := l.LN1.Backward(c.c1, g)
	g.Release()
	dx.AddInPlace(dx2)
	dx2.Release()
	for _, lc := range []*nn.LayerNormCache{c.c1, c.c2, c.c3} {
		lc.Release()
	}
	c.sc.Release()
	c.cc.Release()
	c.fc.Release()
	c.h1.Release()
	c.h2.Release()
	c.h3.Release()
	return dx
}

// embed returns the (n, t, dim) input of a stack: scaled token embeddings
// plus positions plus, when seg is not nil, segments.
func (m *Model) embed(ids, pos, seg []int, posEmb *nn.Embedding, n, t int) *nn.Tensor {
	x := m.Tok.Forward(ids)
	scaleData(x.Data, float32(math.Sqrt(float64(m.Cfg.Dim))))
	p := posEmb.Forward(pos)
	x.AddInPlace(p)
	p.Release()
	if seg != nil {
		s := m.Seg.Forward(seg)
		x.AddInPlace(s)
		s.Release()
	}
	return x.Reshape(n, t, m.Cfg.Dim)
}

// embedBackward accumulates the embedding gradients for input gradient dx
// and releases dx.
func (m *Model) embedBackward(ids, pos, seg []int, posEmb *nn.Embedding, dx *nn.Tensor) {
	d := m.Cfg.Dim
	g := dx.Reshape(len(ids), d)
	posEmb.Backward(pos, g)
	if seg != nil {
		m.Seg.Backward(seg, g)
	}
	scaleData(g.Data, float32(math.Sqrt(float64(d))))
	m.Tok.Backward(ids, g)
	dx.Release()
}

// pass holds what backward needs from a training forward pass.
type pass struct {
	b            *batch
	enc          []*encCache
	dec          []*decCache
	encNC, decNC *nn.LayerNormCache
	mem          *nn.Tensor
	h            *nn.Tensor // (len(b.rows), dim) final decoder states
}

// forward runs the encoder and decoder on b and returns the final decoder
// states of the target tokens, one row per entry of b.rows. With keep it
// also returns what backward needs; otherwise all other buffers are
// released.
func (m *Model) forward(b *batch, keep bool) (*nn.Tensor, *pass) {
	d := m.Cfg.Dim
	p := &pass{b: b}
	x := m.embed(b.src, b.srcPos, b.srcSeg, m.SrcPos, b.nu, b.ts)
	for _, l := range m.Enc {
		nx, c := l.forward(x, b.srcPad, keep)
		x.Release()
		x = nx
		p.enc = append(p.enc, c)
	}
	mem, nc := norm(m.EncNorm, x, keep)
	x.Release()
	mm := memory{t: mem, pad: b.pad}
	if b.nu != b.n {
		if keep {
			panic("gen: forward: de-duplicated sources have no backward")
		}
		mm = memory{t: mem, pad: b.srcPad, src: b.uniq}
	}
	if !keep {
		h := m.decode(b, mm)
		nc.Release()
		mem.Release()
		return h, nil
	}
	y := m.embed(b.dec, b.decPos, nil, m.TgtPos, b.n, b.tt)
	for _, l := range m.Dec {
		ny, c := l.forward(y, mm, keep)
		y.Release()
		y = ny
		p.dec = append(p.dec, c)
	}
	hf, dnc := norm(m.DecNorm, y, keep)
	y.Release()
	h := nn.NewTensor(len(b.rows), d)
	for i, r := range b.rows {
		copy(h.Data[i*d:(i+1)*d], hf.Data[r*d:(r+1)*d])
	}
	hf.Release()
	p.encNC, p.decNC, p.mem, p.h = nc, dnc, mem, h
	return h, p
}

// backward accumulates every parameter gradient given the gradient dh of
// the states returned by forward, and releases the pass's buffers.
func (m *Model) backward(p *pass, dh *nn.Tensor) {
	b, d := p.b, m.Cfg.Dim
	dhf := nn.NewTensor(b.n, b.tt, d)
	for i, r := range b.rows {
		copy(dhf.Data[r*d:(r+1)*d], dh.Data[i*d:(i+1)*d])
	}
	dy := m.DecNorm.Backward(p.decNC, dhf)
	dhf.Release()
	p.decNC.Release()
	dmem := nn.NewTensor(b.n, b.ts, d)
	for i := len(m.Dec) - 1; i >= 0; i-- {
		g := m.Dec[i].backward(p.dec[i], dy, dmem)
		dy.Release()
		dy = g
	}
	m.embedBackward(b.dec, b.decPos, nil, m.TgtPos, dy)
	dx := m.EncNorm.Backward(p.encNC, dmem)
	dmem.Release()
	p.encNC.Release()
	p.mem.Release()
	for i := len(m.Enc) - 1; i >= 0; i-- {
		g := m.Enc[i].backward(p.enc[i], dx)
		dx.Release()
		dx = g
	}
	m.embedBackward(b.src, b.srcPos, b.srcSeg, m.SrcPos, dx)
}

// loss returns the mean token cross-entropy of b and, with grad, adds its
// gradient into the parameters' Grad.
func (m *Model) loss(b *batch, grad bool) float32 {
	h, p := m.forward(b, grad)
	logits := m.out.Forward(h)
	loss, _, ce := nn.SoftmaxCrossEntropy(logits, b.tgt, -1)
	if grad {
		dl := ce.Backward(1)
		dh := m.out.Backward(h, dl)
		dl.Release()
		m.backward(p, dh)
		dh.Release()
	}
	logits.Release()
	h.Release()
	return loss
}
