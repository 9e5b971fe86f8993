package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// gradTarget is a tensor whose analytic gradient is compared with central
// finite differences of a scalar loss.
type gradTarget struct {
	name  string
	value []float32
	grad  []float32
	skip  map[int]bool // indices excluded from the numeric check
}

func paramTargets(ps []*Param) []gradTarget {
	ts := make([]gradTarget, len(ps))
	for i, p := range ps {
		ts[i] = gradTarget{name: p.Name, value: p.Value.Data, grad: p.Grad.Data}
	}
	return ts
}

// project returns Σ x⊙r accumulated in float64: a scalar loss whose
// gradient with respect to x is r.
func project(x *Tensor, r []float32) float64 {
	var s float64
	for i, v := range x.Data {
		s += float64(v) * float64(r[i])
	}
	return s
}

func randTensor(rng *rand.Rand, scale float64, shape ...int) *Tensor {
	t := NewTensor(shape...)
	fillNormal(rng, t.Data, scale)
	return t
}

// checkGrads compares each target's analytic gradient with central finite
// differences of loss at up to maxChecks sampled entries. The comparison
// uses float64 accumulation in loss and a tolerance suited to float32:
// the sampled gradients must agree to 1e-2 in relative L2 norm (unless they
// are all below 1e-3, i.e. rounding noise), and every entry to 2e-2
// relative, plus 2e-3 of the largest gradient magnitude, plus 1e-4.
func checkGrads(t *testing.T, loss func() float64, targets []gradTarget, eps float32, maxChecks int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(99, 7))
	for _, tg := range targets {
		idx := make([]int, 0, len(tg.value))
		for i := range tg.value {
			if !tg.skip[i] {
				idx = append(idx, i)
			}
		}
		if len(idx) > maxChecks {
			rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
			idx = idx[:maxChecks]
		}
		var maxAbs float64
		for _, g := range tg.grad {
			maxAbs = max(maxAbs, math.Abs(float64(g)))
		}
		var diff2, norm2 float64
		for _, i := range idx {
			orig := tg.value[i]
			tg.value[i] = orig + eps
			lp := loss()
			tg.value[i] = orig - eps
			lm := loss()
			tg.value[i] = orig
			h := float64(orig+eps) - float64(orig-eps)
			num := (lp - lm) / h
			ana := float64(tg.grad[i])
			d := math.Abs(num - ana)
			diff2 += d * d
			norm2 += num*num + ana*ana
			if d > 2e-2*max(math.Abs(num), math.Abs(ana))+2e-3*maxAbs+1e-4 {
				t.Errorf("%s[%d]: analytic %.6g, numeric %.6g", tg.name, i, ana, num)
			}
		}
		// Gradients that are zero in exact arithmetic (e.g. a key bias under
		// softmax) leave only rounding noise; skip the relative test there.
		if rms := math.Sqrt(norm2 / float64(2*max(len(idx), 1))); rms > 1e-3 {
			if rel := math.Sqrt(diff2 / norm2); rel > 1e-2 {
				t.Errorf("%s: relative gradient error %.3g over %d entries", tg.name, rel, len(idx))
			}
		}
		if maxAbs == 0 && len(tg.grad) > 0 && !allSkipped(tg) {
			t.Errorf("%s: gradient is identically zero", tg.name)
		}
	}
}

func allSkipped(tg gradTarget) bool { return len(tg.skip) == len(tg.value) }

func TestGradEmbedding(t *testing.T) { forEachBackend(t, testGradEmbedding) }

func testGradEmbedding(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	e := NewEmbedding("emb", 7, 5, 0, rng)
	ids := []int{3, 0, 1, 3, 6, 0, 2}
	r := randTensor(rng, 1, len(ids), 5).Data
	ZeroGrad(e.Params())
	e.Backward(ids, FromData(r, len(ids), 5))
	for j := 0; j < 5; j++ {
		if e.Weight.Grad.Data[j] != 0 || e.Weight.Value.Data[j] != 0 {
			t.Fatal("padding row has a value or gradient")
		}
	}
	skip := map[int]bool{0: true, 1: true, 2: true, 3: true, 4: true}
	checkGrads(t, func() float64 { return project(e.Forward(ids), r) },
		[]gradTarget{{name: "emb.weight", value: e.Weight.Value.Data, grad: e.Weight.Grad.Data, skip: skip}}, 1e-2, 100)
}

func TestGradLinear(t *testing.T) { forEachBackend(t, testGradLinear) }

func testGradLinear(t *testing.T) {
	for _, bias := range []bool{true, false} {
		rng := rand.New(rand.NewPCG(2, 2))
		l := NewLinear("lin", 6, 4, bias, rng)
		if bias {
			fillNormal(rng, l.B.Value.Data, 0.5)
		}
		x := randTensor(rng, 1, 2, 3, 6)
		r := randTensor(rng, 1, 2, 3, 4).Data
		ZeroGrad(l.Params())
		dx := l.Backward(x, FromData(r, 2, 3, 4))
		targets := append(paramTargets(l.Params()), gradTarget{name: "x", value: x.Data, grad: dx.Data})
		checkGrads(t, func() float64 { return project(l.Forward(x), r) }, targets, 1e-2, 100)
	}
}

func TestGradLSTM(t *testing.T) { forEachBackend(t, testGradLSTM) }

func testGradLSTM(t *testing.T) {
	for _, reverse := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(3, 3))
		const nb, nt, in, h = 4, 5, 3, 4
		l := NewLSTM("lstm", in, h, reverse, rng)
		fillNormal(rng, l.B.Value.Data, 0.3)
		lengths := []int{5, 2, 0, 4}
		x := randTensor(rng, 1, nb, nt, in)
		h0, c0 := randTensor(rng, 0.5, nb, h), randTensor(rng, 0.5, nb, h)
		rOut := randTensor(rng, 1, nb, nt, h)
		rh, rc := randTensor(rng, 1, nb, h), randTensor(rng, 1, nb, h)
		loss := func() float64 {
			out, hN, cN, _ := l.Forward(x, lengths, h0, c0)
			return project(out, rOut.Data) + project(hN, rh.Data) + project(cN, rc.Data)
		}
		ZeroGrad(l.Params())
		out, hN, _, cache := l.Forward(x, lengths, h0, c0)
		// Padded outputs are zero and the final state of an empty
		// sequence is its initial state.
		for b, n := range lengths {
			for tt := n; tt < nt; tt++ {
				for j := 0; j < h; j++ {
					if out.Data[(b*nt+tt)*h+j] != 0 {
						t.Fatalf("output at padded step %d of sequence %d is non-zero", tt, b)
					}
				}
			}
		}
		for j := 0; j < h; j++ {
			if hN.Data[2*h+j] != h0.Data[2*h+j] {
				t.Fatal("empty sequence changed its state")
			}
		}
		dx, dh0, dc0 := l.Backward(cache, rOut, rh, rc)
		for b, n := range lengths {
			for tt := n; tt < nt; tt++ {
				for j := 0; j < in; j++ {
					if dx.Data[(b*nt+tt)*in+j] != 0 {
						t.Fatal("gradient reaches a padded input")
					}
				}
			}
		}
		targets := append(paramTargets(l.Params()),
			gradTarget{name: "x", value: x.Data, grad: dx.Data},
			gradTarget{name: "h0", value: h0.Data, grad: dh0.Data},
			gradTarget{name: "c0", value: c0.Data, grad: dc0.Data})
		checkGrads(t, loss, targets, 1e-2, 150)
	}
}

func TestGradBiLSTM(t *testing.T) { forEachBackend(t, testGradBiLSTM) }

func testGradBiLSTM(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	const nb, nt, in, h = 3, 6, 3, 4
	l := NewBiLSTM("bi", in, h, rng)
	lengths := []int{6, 3, 1}
	x := randTensor(rng, 1, nb, nt, in)
	r := randTensor(rng, 1, nb, nt, 2*h)
	rs := []*Tensor{randTensor(rng, 1, nb, h), randTensor(rng, 1, nb, h), randTensor(rng, 1, nb, h), randTensor(rng, 1, nb, h)}
	loss := func() float64 {
		o, _ := l.Forward(x, lengths)
		return project(o.Out, r.Data) + project(o.HFwd, rs[0].Data) + project(o.CFwd, rs[1].Data) +
			project(o.HBwd, rs[2].Data) + project(o.CBwd, rs[3].Data)
	}
	ZeroGrad(l.Params())
	o, cache := l.Forward(x, lengths)
	// The backward direction's final state of sequence b equals its
	// output at step 0, and the forward one its output at the last step.
	for b, n := range lengths {
		for j := 0; j < h; j++ {
			if o.HBwd.Data[b*h+j] != o.Out.Data[(b*nt)*2*h+h+j] || o.HFwd.Data[b*h+j] != o.Out.Data[(b*nt+n-1)*2*h+j] {
				t.Fatalf("final states of sequence %d do not match the outputs", b)
			}
		}
	}
	dx := l.Backward(cache, BiLSTMGrads{Out: r, HFwd: rs[0], CFwd: rs[1], HBwd: rs[2], CBwd: rs[3]})
	targets := append(paramTargets(l.Params()), gradTarget{name: "x", value: x.Data, grad: dx.Data})
	checkGrads(t, loss, targets, 1e-2, 120)
}

func TestGradLayerNorm(t *testing.T) { forEachBackend(t, testGradLayerNorm) }

func testGradLayerNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	ln := NewLayerNorm("ln", 8)
	fillNormal(rng, ln.Gain.Value.Data, 1)
	fillNormal(rng, ln.Bias.Value.Data, 1)
	x := randTensor(rng, 2, 2, 3, 8)
	r := randTensor(rng, 1, 2, 3, 8).Data
	ZeroGrad(ln.Params())
	_, cache := ln.Forward(x)
	dx := ln.Backward(cache, FromData(r, 2, 3, 8))
	targets := append(paramTargets(ln.Params()), gradTarget{name: "x", value: x.Data, grad: dx.Data})
	checkGrads(t, func() float64 { y, _ := ln.Forward(x); return project(y, r) }, targets, 1e-2, 100)
}

func TestGradAttention(t *testing.T) { forEachBackend(t, testGradAttention) }

func testGradAttention(t *testing.T) {
	const nb, tq, tk, d, heads = 2, 4, 5, 8, 2
	t.Run("cross", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(6, 6))
		a := NewMultiHeadAttention("att", d, heads, rng)
		q, kv := randTensor(rng, 1, nb, tq, d), randTensor(rng, 1, nb, tk, d)
		pad := PadMask([]int{5, 3}, tk)
		r := randTensor(rng, 1, nb, tq, d)
		ZeroGrad(a.Params())
		_, c := a.Forward(q, kv, pad, false)
		dq, dkv := a.Backward(c, r)
		for j := 0; j < d; j++ {
			if dkv.Data[(1*tk+4)*d+j] != 0 {
				t.Fatal("gradient reaches a padded key")
			}
		}
		targets := append(paramTargets(a.Params()),
			gradTarget{name: "q", value: q.Data, grad: dq.Data},
			gradTarget{name: "kv", value: kv.Data, grad: dkv.Data})
		checkGrads(t, func() float64 { y, _ := a.Forward(q, kv, pad, false); return project(y, r.Data) }, targets, 1e-2, 80)
	})
	t.Run("self-causal-padded", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 7))
		a := NewMultiHeadAttention("att", d, heads, rng)
		x := randTensor(rng, 1, nb, tk, d)
		pad := PadMask([]int{5, 2}, tk)
		pad[0] = true // sequence 0's first query sees no key at all
		r := randTensor(rng, 1, nb, tk, d)
		ZeroGrad(a.Params())
		y, c := a.SelfForward(x, pad, true)
		// Causality: changing the last step must not change earlier outputs.
		x2 := x.Clone()
		for j := 0; j < d; j++ {
			x2.Data[(tk-1)*d+j] += 1
		}
		y2, _ := a.SelfForward(x2, pad, true)
		for i := 0; i < (tk-1)*d; i++ {
			if y.Data[i] != y2.Data[i] {
				t.Fatal("causal mask leaks the future")
			}
		}
		dx := a.SelfBackward(c, r)
		targets := append(paramTargets(a.Params()), gradTarget{name: "x", value: x.Data, grad: dx.Data})
		checkGrads(t, func() float64 { y, _ := a.SelfForward(x, pad, true); return project(y, r.Data) }, targets, 1e-2, 80)
	})
}

func TestGradFeedForward(t *testing.T) { forEachBackend(t, testGradFeedForward) }

func testGradFeedForward(t *testing.T) {
	for _, act := range []Activation{ReLU, GELU} {
		t.Run(act.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(8, 8))
			f := NewFeedForward("ff", 6, 10, act, rng)
			fillNormal(rng, f.L1.B.Value.Data, 0.5)
			x := randTensor(rng, 1, 2, 3, 6)
			r := randTensor(rng, 1, 2, 3, 6).Data
			ZeroGrad(f.Params())
			_, c := f.Forward(x)
			dx := f.Backward(c, FromData(r, 2, 3, 6))
			targets := append(paramTargets(f.Params()), gradTarget{name: "x", value: x.Data, grad: dx.Data})
			// A small step keeps ReLU inputs on one side of the kink.
			checkGrads(t, func() float64 { y, _ := f.Forward(x); return project(y, r) }, targets, 2e-3, 100)
		})
	}
}

func TestGradSoftmaxCrossEntropy(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const rows, classes, ignore = 6, 7, -100
	logits := randTensor(rng, 2, rows, classes)
	targets := []int{3, ignore, 0, 6, ignore, 2}
	loss, logp, c := SoftmaxCrossEntropy(logits, targets, ignore)
	var want float64
	for r, tg := range targets {
		if tg == ignore {
			if logp[r] != 0 {
				t.Fatalf("ignored row %d has log-probability %v", r, logp[r])
			}
			continue
		}
		var z float64
		for j := 0; j < classes; j++ {
			z += math.Exp(float64(logits.Data[r*classes+j]))
		}
		lp := float64(logits.Data[r*classes+tg]) - math.Log(z)
		if math.Abs(lp-float64(logp[r])) > 1e-5 {
			t.Fatalf("row %d: log p %v, want %v", r, logp[r], lp)
		}
		want -= lp / 4
	}
	if math.Abs(float64(loss)-want) > 1e-5 {
		t.Fatalf("loss %v, want %v", loss, want)
	}
	ls := LogSoftmax(logits)
	for r, tg := range targets {
		if tg != ignore && math.Abs(float64(ls.Data[r*classes+tg]-logp[r])) > 1e-6 {
			t.Fatalf("LogSoftmax row %d disagrees with SoftmaxCrossEntropy", r)
		}
		var z float64
		for j := 0; j < classes; j++ {
			z += math.Exp(float64(ls.Data[r*classes+j]))
		}
		if math.Abs(z-1) > 1e-5 {
			t.Fatalf("LogSoftmax row %d sums to %v in probability", r, z)
		}
	}
	const scale = 1.7
	d := c.Backward(scale)
	for j := 0; j < classes; j++ {
		if d.Data[1*classes+j] != 0 {
			t.Fatal("gradient on an ignored row")
		}
	}
	lossFn := func() float64 { l, _, _ := SoftmaxCrossEntropy(logits, targets, ignore); return scale * float64(l) }
	checkGrads(t, lossFn, []gradTarget{{name: "logits", value: logits.Data, grad: d.Data}}, 1e-2, 100)

	// All rows ignored: zero loss and gradient, no NaN.
	l0, _, c0 := SoftmaxCrossEntropy(logits, []int{ignore, ignore, ignore, ignore, ignore, ignore}, ignore)
	if l0 != 0 || tensorNorm(c0.Backward(1)) != 0 {
		t.Fatal("fully ignored batch has a loss or gradient")
	}
}

// tensorNorm is the L2 norm of a tensor.
func tensorNorm(x *Tensor) float64 {
	var s float64
	for _, v := range x.Data {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s)
}

func TestGradSigmoidBCE(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	logits := randTensor(rng, 3, 7, 1)
	targets := []float32{1, 0, 1, 1, 0, 0.3, 1}
	loss, probs, c := SigmoidBCE(logits, targets)
	var want float64
	for i, x := range logits.Data {
		p := 1 / (1 + math.Exp(-float64(x)))
		if math.Abs(p-float64(probs[i])) > 1e-6 {
			t.Fatalf("prob %v, want %v", probs[i], p)
		}
		y := float64(targets[i])
		want -= (y*math.Log(p) + (1-y)*math.Log(1-p)) / 7
	}
	if math.Abs(float64(loss)-want) > 1e-5 {
		t.Fatalf("loss %v, want %v", loss, want)
	}
	d := c.Backward(2)
	lossFn := func() float64 { l, _, _ := SigmoidBCE(logits, targets); return 2 * float64(l) }
	checkGrads(t, lossFn, []gradTarget{{name: "logits", value: logits.Data, grad: d.Data}}, 1e-2, 10)
	// Extreme logits stay finite.
	l, _, _ := SigmoidBCE(FromData([]float32{200, -200}, 2), []float32{0, 1})
	if math.IsInf(float64(l), 0) || math.IsNaN(float64(l)) || math.Abs(float64(l)-200) > 1e-3 {
		t.Fatalf("loss for saturated logits = %v, want 200", l)
	}
}
