package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// poisonPool fills the free lists with NaN buffers of every size class a
// test may request.
func poisonPool() {
	for c := 12; c <= 20; c++ {
		for i := 0; i < 4; i++ {
			b := make([]float32, 1<<c)
			for j := range b {
				b[j] = float32(math.NaN())
			}
			putBuf(b)
		}
	}
}

// pipelineOutputs runs forward and backward passes of several layers on
// inputs large enough to use pooled buffers, releasing every cache, and
// returns all outputs and gradients.
func pipelineOutputs() [][]float32 {
	rng := rand.New(rand.NewPCG(21, 21))
	const nb, nt, in, h, d = 4, 30, 48, 40, 64
	var out [][]float32
	keep := func(ts ...*Tensor) {
		for _, t := range ts {
			out = append(out, append([]float32(nil), t.Data...))
		}
	}
	bi := NewBiLSTM("bi", in, h, rng)
	x := randTensor(rng, 1, nb, nt, in)
	o, bc := bi.Forward(x, []int{30, 12, 1, 25})
	keep(o.Out, o.HFwd, o.CBwd)
	dx := bi.Backward(bc, BiLSTMGrads{Out: o.Out, HBwd: o.HFwd})
	keep(dx)
	bc.Release()
	releaseAll(o.Out, dx)

	att := NewMultiHeadAttention("att", d, 4, rng)
	q := randTensor(rng, 1, nb, nt, d)
	y, ac := att.SelfForward(q, PadMask([]int{30, 5, 0, 17}, nt), true)
	keep(y)
	keep(att.SelfBackward(ac, y))
	ac.Release()

	ff := NewFeedForward("ff", d, 3*d, GELU, rng)
	z, fc := ff.Forward(y)
	keep(z, ff.Backward(fc, z))
	fc.Release()

	ln := NewLayerNorm("ln", d)
	w, lc := ln.Forward(z)
	keep(w, ln.Backward(lc, z))
	lc.Release()

	lin := NewLinear("lin", d, 100, true, rng)
	logits := lin.Forward(w)
	targets := make([]int, logits.Rows())
	for i := range targets {
		targets[i] = rng.IntN(100)
	}
	_, logp, cc := SoftmaxCrossEntropy(logits, targets, -1)
	keep(FromData(logp, len(logp)), cc.Backward(1), lin.Backward(w, cc.Backward(1)))
	for _, p := range append(append(bi.Params(), att.Params()...), ff.Params()...) {
		keep(p.Grad)
	}
	return out
}

func TestPooledBuffersDoNotLeak(t *testing.T) {
	FreePooled()
	want := pipelineOutputs()
	poisonPool()
	got := pipelineOutputs()
	FreePooled()
	for i := range want {
		for j := range want[i] {
			if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
				t.Fatalf("output %d[%d] = %v with recycled buffers, want %v", i, j, got[i][j], want[i][j])
			}
		}
	}
	// A released tensor's storage is zeroed again by NewTensor.
	a := NewTensor(5000)
	a.Data[7] = 3
	a.Release()
	if b := NewTensor(4999); b.Data[7] != 0 {
		t.Fatal("NewTensor returned a dirty recycled buffer")
	}
}
