package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ctxsim/ctxsim/scoring/internal/vecmath"
	"github.com/ctxsim/ctxsim/scoring/nn/internal/gogemm"
)

// LSTM is a single-direction long short-term memory layer over padded
// batches. Gates are ordered input, forget, cell, output (as in PyTorch):
//
//	[i f g o] = x·Wihᵀ + h·Whhᵀ + b
//	c' = σ(f)⊙c + σ(i)⊙tanh(g),  h' = σ(o)⊙tanh(c')
//
// Sequence b of a batch has Lengths[b] valid steps; at padded steps the
// state is carried through unchanged and the output is zero. A reverse LSTM
// reads each sequence from its last valid step back to step 0, so padding
// never reaches its state.
type LSTM struct {
	// Wih is the (4*hidden, in) input weight, named "<name>.weight_ih".
	Wih *Param
	// Whh is the (4*hidden, hidden) recurrent weight, named "<name>.weight_hh".
	Whh *Param
	// B is the (4*hidden) bias, named "<name>.bias".
	B *Param
	// Reverse makes the layer run backwards in time.
	Reverse bool
}

// NewLSTM returns an LSTM whose weights are drawn uniformly from
// ±1/sqrt(hidden) (as in PyTorch), with a zero bias except for the forget
// gate, whose bias is 1.
func NewLSTM(name string, in, hidden int, reverse bool, rng *rand.Rand) *LSTM {
	l := &LSTM{
		Wih:     NewParam(name+".weight_ih", 4*hidden, in),
		Whh:     NewParam(name+".weight_hh", 4*hidden, hidden),
		B:       NewParam(name+".bias", 4*hidden),
		Reverse: reverse,
	}
	lim := 1 / math.Sqrt(float64(hidden))
	fillUniform(rng, l.Wih.Value.Data, lim)
	fillUniform(rng, l.Whh.Value.Data, lim)
	for j := hidden; j < 2*hidden; j++ {
		l.B.Value.Data[j] = 1
	}
	return l
}

// Hidden returns the state width.
func (l *LSTM) Hidden() int { return l.Whh.Value.Shape[1] }

// In returns the input width.
func (l *LSTM) In() int { return l.Wih.Value.Shape[1] }

// Params returns the trainable parameters.
func (l *LSTM) Params() []*Param { return []*Param{l.Wih, l.Whh, l.B} }

// LSTMCache holds what LSTM.Backward needs from a forward pass.
type LSTMCache struct {
	x            *Tensor // (B, T, in)
	lengths      []int
	gates        *Tensor // (B, T, 4H) gate activations
	hPrev, cPrev *Tensor // (B, T, H) state entering each time step
	tanhC        *Tensor // (B, T, H) tanh of the new cell state
	batch, steps int
	hasH0, hasC0 bool
}

// validLengths returns lengths, or T for every sequence when nil, and
// checks them.
func validLengths(lengths []int, batch, steps int) []int {
	if lengths == nil {
		lengths = make([]int, batch)
		for i := range lengths {
			lengths[i] = steps
		}
		return lengths
	}
	if len(lengths) != batch {
		panic(fmt.Sprintf("nn: %d lengths for batch %d", len(lengths), batch))
	}
	for _, n := range lengths {
		if n < 0 || n > steps {
			panic(fmt.Sprintf("nn: sequence length %d outside [0, %d]", n, steps))
		}
	}
	return lengths
}

// Forward runs the layer over x, shaped (batch, time, in), where sequence b
// has lengths[b] valid steps (nil lengths means all steps are valid). h0 and
// c0, shaped (batch, hidden), are the initial state; nil means zero.
//
// It returns the per-step outputs out (batch, time, hidden), zero at padded
// steps, the final state hN and cN (batch, hidden) of every sequence (the
// state after its last valid step, or after step 0 for a reverse layer),
// and the cache for Backward.
func (l *LSTM) Forward(x *Tensor, lengths []int, h0, c0 *Tensor) (out, hN, cN *Tensor, cache *LSTMCache) {
	nb, nt, lengths := l.checkInput(x, lengths)
	h := l.Hidden()
	g := 4 * h

	gates := l.project(x)

	cache = &LSTMCache{
		x: x, lengths: lengths, gates: gates,
		hPrev: newTensorUninit(nb, nt, h), cPrev: newTensorUninit(nb, nt, h), tanhC: NewTensor(nb, nt, h),
		batch: nb, steps: nt, hasH0: h0 != nil, hasC0: c0 != nil,
	}
	out = NewTensor(nb, nt, h)
	hN, cN = NewTensor(nb, h), NewTensor(nb, h)
	if h0 != nil {
		checkState("h0", h0, nb, h)
		copy(hN.Data, h0.Data)
	}
	if c0 != nil {
		checkState("c0", c0, nb, h)
		copy(cN.Data, c0.Data)
	}
	whh := newRHS(true, h, g, l.Whh.Value.Data, h) // Whhᵀ, reused at every step
	for s := 0; s < nt; s++ {
		t := s
		if l.Reverse {
			t = nt - 1 - s
		}
		for b := 0; b < nb; b++ {
			off := (b*nt + t) * h
			copy(cache.hPrev.Data[off:off+h], hN.Data[b*h:(b+1)*h])
			copy(cache.cPrev.Data[off:off+h], cN.Data[b*h:(b+1)*h])
		}
		// Recurrent contribution for all sequences of this step, added in
		// place to the strided gate rows of time t.
		gemmRHS(false, nb, 1, cache.hPrev.Data[t*h:], nt*h, whh, 1, gates.Data[t*g:], nt*g)
		for b := 0; b < nb; b++ {
			if t >= lengths[b] {
				continue
			}
			off := (b*nt + t) * h
			lstmCell(gates.Data[(b*nt+t)*g:(b*nt+t+1)*g], hN.Data[b*h:(b+1)*h], cN.Data[b*h:(b+1)*h],
				cache.tanhC.Data[off:off+h], out.Data[off:off+h])
		}
	}
	return out, hN, cN, cache
}

// checkInput checks that x is shaped (batch, time, in) and returns its
// batch and time sizes and the valid lengths (see validLengths).
func (l *LSTM) checkInput(x *Tensor, lengths []int) (nb, nt int, valid []int) {
	if len(x.Shape) != 3 || x.Shape[2] != l.In() {
		panic(fmt.Sprintf("nn: LSTM: input shape %v, want (batch, time, %d)", x.Shape, l.In()))
	}
	nb, nt = x.Shape[0], x.Shape[1]
	return nb, nt, validLengths(lengths, nb, nt)
}

// project returns the gates' input part of every step, x·Wihᵀ + b, shaped
// (batch, time, 4*hidden): one matrix product for all steps, the bias added
// as it finishes (gogemm.GemmBias gives the bits of the product followed by
// the addition).
func (l *LSTM) project(x *Tensor) *Tensor {
	nb, nt, in := x.Shape[0], x.Shape[1], x.Shape[2]
	g := 4 * l.Hidden()
	gates := newTensorUninit(nb, nt, g)
	if nb*nt == 0 {
		return gates
	}
	if useGo.Load() {
		checkGemm(false, true, nb*nt, g, in, x.Data, in, l.Wih.Value.Data, in, gates.Data, g)
		gogemm.GemmBias(gogemm.Best(), nb*nt, g, in, x.Data, in, true, l.Wih.Value.Data, in, nil, gates.Data, g,
			gogemm.Epilogue{Bias: l.B.Value.Data})
		return gates
	}
	Gemm(false, true, nb*nt, g, in, 1, x.Data, in, l.Wih.Value.Data, in, 0, gates.Data, g)
	addBiasRows(gates.Data, l.B.Value.Data)
	return gates
}

// lstmCell finishes one step of one sequence: row holds the gate
// pre-activations [i f g o] (replaced by their activations), hb and cb the
// state (updated in place), tc receives tanh of the new cell state and o
// the output h'.
func lstmCell(row, hb, cb, tc, o []float32) {
	h := len(hb)
	vecmath.SigmoidInPlace(row[:2*h]) // input and forget gates
	vecmath.TanhInPlace(row[2*h : 3*h])
	vecmath.SigmoidInPlace(row[3*h:])
	gi, gf, gg, gout := row[:h], row[h:2*h], row[2*h:3*h], row[3*h:]
	vecmath.MulAddInto(cb, gf, cb, gi, gg) // c' = f⊙c + i⊙g
	copy(tc, cb)
	vecmath.TanhInPlace(tc)
	vecmath.MulInto(hb, gout, tc) // h' = o⊙tanh(c')
	copy(o, hb)
}

// Infer is Forward from a zero state for inference: the same out, hN and
// cN, bit for bit, without the cache, so without the per-step copies of
// the state that Backward needs (the recurrent product reads hN in place).
func (l *LSTM) Infer(x *Tensor, lengths []int) (out, hN, cN *Tensor) {
	nb, nt, _ := l.checkInput(x, lengths)
	h := l.Hidden()
	out = NewTensor(nb, nt, h)
	hN, cN = l.infer(x, lengths, out.Data, h)
	return out, hN, cN
}

// infer is Infer writing the output of step t of sequence b to
// out[(b*T+t)*ldo:][:hidden], which is left as it is at padded steps.
func (l *LSTM) infer(x *Tensor, lengths []int, out []float32, ldo int) (hN, cN *Tensor) {
	nb, nt, lengths := l.checkInput(x, lengths)
	h := l.Hidden()
	g := 4 * h
	gates := l.project(x)
	hN, cN = NewTensor(nb, h), NewTensor(nb, h)
	tc := getBuf(h, false)
	whh := newRHS(true, h, g, l.Whh.Value.Data, h)
	for s := 0; s < nt; s++ {
		t := s
		if l.Reverse {
			t = nt - 1 - s
		}
		gemmRHS(false, nb, 1, hN.Data, h, whh, 1, gates.Data[t*g:], nt*g)
		for b := 0; b < nb; b++ {
			if t >= lengths[b] {
				continue
			}
			off := (b*nt + t) * ldo
			lstmCell(gates.Data[(b*nt+t)*g:(b*nt+t+1)*g], hN.Data[b*h:(b+1)*h], cN.Data[b*h:(b+1)*h], tc, out[off:off+h])
		}
	}
	putBuf(tc)
	gates.Release()
	return hN, cN
}

func checkState(name string, s *Tensor, batch, hidden int) {
	if s.Size() != batch*hidden {
		panic(fmt.Sprintf("nn: LSTM: %s shape %v, want (%d, %d)", name, s.Shape, batch, hidden))
	}
}

// Backward back-propagates through time. dOut (batch, time, hidden) is the
// gradient of the per-step outputs (its padded steps are ignored), dhN and
// dcN (batch, hidden) are the gradients of the final states; any of them
// may be nil for zero. It accumulates the parameter gradients and returns
// the gradient of the input x and of the initial states h0 and c0 (zero
// tensors when no initial state was given).
func (l *LSTM) Backward(cache *LSTMCache, dOut, dhN, dcN *Tensor) (dx, dh0, dc0 *Tensor) {
	nb, nt := cache.batch, cache.steps
	h := l.Hidden()
	g := 4 * h
	in := l.In()
	lengths := cache.lengths
	dGates := NewTensor(nb, nt, g)
	dh, dc := NewTensor(nb, h), NewTensor(nb, h)
	if dhN != nil {
		checkState("dhN", dhN, nb, h)
		copy(dh.Data, dhN.Data)
	}
	if dcN != nil {
		checkState("dcN", dcN, nb, h)
		copy(dc.Data, dcN.Data)
	}
	if dOut != nil && dOut.Size() != nb*nt*h {
		panic(fmt.Sprintf("nn: LSTM.Backward: output gradient shape %v, want (%d, %d, %d)", dOut.Shape, nb, nt, h))
	}
	dhNext := NewTensor(nb, h)
	whh := newRHS(false, g, h, l.Whh.Value.Data, h)
	for s := nt - 1; s >= 0; s-- {
		t := s
		if l.Reverse {
			t = nt - 1 - s
		}
		for b := 0; b < nb; b++ {
			if t >= lengths[b] {
				continue // dGates row stays zero; state gradients pass through.
			}
			off := (b*nt + t) * h
			row := cache.gates.Data[(b*nt+t)*g : (b*nt+t+1)*g]
			gi, gf, gg, gout := row[:h], row[h:2*h], row[2*h:3*h], row[3*h:]
			drow := dGates.Data[(b*nt+t)*g : (b*nt+t+1)*g]
			di, df, dg, do := drow[:h], drow[h:2*h], drow[2*h:3*h], drow[3*h:]
			tc := cache.tanhC.Data[off : off+h]
			cp := cache.cPrev.Data[off : off+h]
			dhb, dcb := dh.Data[b*h:(b+1)*h], dc.Data[b*h:(b+1)*h]
			var dOutRow []float32
			if dOut != nil {
				dOutRow = dOut.Data[off : off+h]
			}
			for j := range dhb {
				dhv := dhb[j]
				if dOutRow != nil {
					dhv += dOutRow[j]
				}
				iv, fv, gv, ov, tcv := gi[j], gf[j], gg[j], gout[j], tc[j]
				dcv := dcb[j] + dhv*ov*(1-tcv*tcv)
				do[j] = dhv * tcv * ov * (1 - ov)
				di[j] = dcv * gv * iv * (1 - iv)
				df[j] = dcv * cp[j] * fv * (1 - fv)
				dg[j] = dcv * iv * (1 - gv*gv)
				dcb[j] = dcv * fv
			}
		}
		gemmRHS(false, nb, 1, dGates.Data[t*g:], nt*g, whh, 0, dhNext.Data, h)
		for b := 0; b < nb; b++ {
			if t >= lengths[b] {
				copy(dhNext.Data[b*h:(b+1)*h], dh.Data[b*h:(b+1)*h])
			}
		}
		dh, dhNext = dhNext, dh
	}
	// Parameter gradients for all steps at once.
	x := cache.x
	Gemm(true, false, g, h, nb*nt, 1, dGates.Data, g, cache.hPrev.Data, h, 1, l.Whh.Grad.Data, h)
	Gemm(true, false, g, in, nb*nt, 1, dGates.Data, g, x.Data, in, 1, l.Wih.Grad.Data, in)
	sumRowsInto(l.B.Grad.Data, dGates.Data)
	dx = newTensorUninit(x.Shape...)
	Gemm(false, false, nb*nt, in, g, 1, dGates.Data, g, l.Wih.Value.Data, in, 0, dx.Data, in)
	releaseAll(dGates, dhNext)
	return dx, dh, dc
}

// Release hands the cache's buffers back for reuse (see Tensor.Release);
// the cache must not be used afterwards. The input x is not released.
func (c *LSTMCache) Release() {
	releaseAll(c.gates, c.hPrev, c.cPrev, c.tanhC)
	c.gates, c.hPrev, c.cPrev, c.tanhC = nil, nil, nil, nil
}

// BiLSTM runs a forward and a backward-in-time LSTM over the same input
// and concatenates their outputs.
type BiLSTM struct {
	// Fwd reads sequences forwards; Bwd is a reverse LSTM.
	Fwd, Bwd *LSTM
}

// NewBiLSTM returns a bidirectional LSTM whose directions are named
// "<name>.fwd" and "<name>.bwd".
func NewBiLSTM(name string, in, hidden int, rng *rand.Rand) *BiLSTM {
	return &BiLSTM{
		Fwd: NewLSTM(name+".fwd", in, hidden, false, rng),
		Bwd: NewLSTM(name+".bwd", in, hidden, true, rng),
	}
}

// Params returns the trainable parameters of both directions.
func (l *BiLSTM) Params() []*Param { return append(l.Fwd.Params(), l.Bwd.Params()...) }

// Hidden returns the state width of one direction.
func (l *BiLSTM) Hidden() int { return l.Fwd.Hidden() }

// BiLSTMOutput is the result of BiLSTM.Forward.
type BiLSTMOutput struct {
	// Out (batch, time, 2*hidden) is [forward; backward] per step, zero at
	// padded steps.
	Out *Tensor
	// HFwd and CFwd (batch, hidden) are the forward state after the last
	// valid step of each sequence.
	HFwd, CFwd *Tensor
	// HBwd and CBwd (batch, hidden) are the backward state after step 0.
	HBwd, CBwd *Tensor
}

// BiLSTMGrads holds the gradients of a BiLSTMOutput; nil fields are zero.
type BiLSTMGrads struct {
	// Out is the gradient of BiLSTMOutput.Out.
	Out *Tensor
	// HFwd, CFwd, HBwd and CBwd are the gradients of the final states.
	HFwd, CFwd, HBwd, CBwd *Tensor
}

// BiLSTMCache holds what BiLSTM.Backward needs.
type BiLSTMCache struct {
	fwd, bwd *LSTMCache
}

// Forward runs both directions over x (batch, time, in) with the given
// per-sequence lengths (nil means all valid) from a zero state.
func (l *BiLSTM) Forward(x *Tensor, lengths []int) (*BiLSTMOutput, *BiLSTMCache) {
	of, hf, cf, cacheF := l.Fwd.Forward(x, lengths, nil, nil)
	ob, hb, cb, cacheB := l.Bwd.Forward(x, lengths, nil, nil)
	nb, nt, h := x.Shape[0], x.Shape[1], l.Hidden()
	out := newTensorUninit(nb, nt, 2*h)
	for r := 0; r < nb*nt; r++ {
		copy(out.Data[r*2*h:r*2*h+h], of.Data[r*h:(r+1)*h])
		copy(out.Data[r*2*h+h:(r+1)*2*h], ob.Data[r*h:(r+1)*h])
	}
	releaseAll(of, ob)
	return &BiLSTMOutput{Out: out, HFwd: hf, CFwd: cf, HBwd: hb, CBwd: cb}, &BiLSTMCache{fwd: cacheF, bwd: cacheB}
}

// Infer is Forward for inference: the same output, bit for bit, without
// the cache (see LSTM.Infer); each direction writes its half of Out
// directly.
func (l *BiLSTM) Infer(x *Tensor, lengths []int) *BiLSTMOutput {
	nb, nt, _ := l.Fwd.checkInput(x, lengths)
	h := l.Hidden()
	out := NewTensor(nb, nt, 2*h)
	hf, cf := l.Fwd.infer(x, lengths, out.Data, 2*h)
	hb, cb := l.Bwd.infer(x, lengths, out.Data[h:], 2*h)
	return &BiLSTMOutput{Out: out, HFwd: hf, CFwd: cf, HBwd: hb, CBwd: cb}
}

// Backward back-propagates the output gradients through both directions,
// accumulates the parameter gradients and returns the gradient of x.
func (l *BiLSTM) Backward(cache *BiLSTMCache, grads BiLSTMGrads) *Tensor {
	var dOutF, dOutB *Tensor
	if grads.Out != nil {
		nb, nt, h := cache.fwd.batch, cache.fwd.steps, l.Hidden()
		if grads.Out.Size() != nb*nt*2*h {
			panic(fmt.Sprintf("nn: BiLSTM.Backward: output gradient shape %v, want (%d, %d, %d)", grads.Out.Shape, nb, nt, 2*h))
		}
		dOutF, dOutB = newTensorUninit(nb, nt, h), newTensorUninit(nb, nt, h)
		d := grads.Out.Data
		for r := 0; r < nb*nt; r++ {
			copy(dOutF.Data[r*h:(r+1)*h], d[r*2*h:r*2*h+h])
			copy(dOutB.Data[r*h:(r+1)*h], d[r*2*h+h:(r+1)*2*h])
		}
	}
	dx, _, _ := l.Fwd.Backward(cache.fwd, dOutF, grads.HFwd, grads.CFwd)
	dxb, _, _ := l.Bwd.Backward(cache.bwd, dOutB, grads.HBwd, grads.CBwd)
	dx.AddInPlace(dxb)
	releaseAll(dxb, dOutF, dOutB)
	return dx
}

// Release hands the cache's buffers back for reuse (see Tensor.Release);
// the cache must not be used afterwards.
func (c *BiLSTMCache) Release() {
	c.fwd.Release()
	c.bwd.Release()
}
