package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestAdamRegressionConverges(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	trueW := []float32{1.5, -2, 0.5}
	const trueB = 0.25
	const n = 64
	x := randTensor(rng, 1, n, 3)
	y := make([]float32, n)
	for i := range y {
		for j, w := range trueW {
			y[i] += w * x.Data[i*3+j]
		}
		y[i] += trueB
	}
	l := NewLinear("reg", 3, 1, true, rng)
	opt := NewAdam(0.05)
	var mse float64
	for step := 0; step < 400; step++ {
		ZeroGrad(l.Params())
		pred := l.Forward(x)
		dy := NewTensor(n, 1)
		mse = 0
		for i, p := range pred.Data {
			e := p - y[i]
			mse += float64(e*e) / n
			dy.Data[i] = 2 * e / n
		}
		l.Backward(x, dy)
		opt.Step(l.Params())
	}
	if mse > 1e-6 {
		t.Fatalf("MSE after training = %g, want < 1e-6", mse)
	}
	for j, w := range trueW {
		if math.Abs(float64(l.W.Value.Data[j]-w)) > 1e-3 {
			t.Errorf("w[%d] = %v, want %v", j, l.W.Value.Data[j], w)
		}
	}
	if math.Abs(float64(l.B.Value.Data[0]-trueB)) > 1e-3 {
		t.Errorf("b = %v, want %v", l.B.Value.Data[0], trueB)
	}
}

func TestClipGradNorm(t *testing.T) {
	a, b := NewParam("a", 2), NewParam("b", 1, 2)
	copy(a.Grad.Data, []float32{3, 0})
	copy(b.Grad.Data, []float32{0, 4})
	params := []*Param{a, b}
	if n := ClipGradNorm(params, 10); n != 5 || a.Grad.Data[0] != 3 {
		t.Fatalf("norm below the cap: got norm %v and grad %v", n, a.Grad.Data)
	}
	if n := ClipGradNorm(params, 1); n != 5 {
		t.Fatalf("returned norm %v, want 5", n)
	}
	if n := GradNorm(params); math.Abs(n-1) > 1e-5 {
		t.Fatalf("norm after clipping = %v, want 1", n)
	}
	if math.Abs(float64(a.Grad.Data[0])-0.6) > 1e-5 || math.Abs(float64(b.Grad.Data[1])-0.8) > 1e-5 {
		t.Fatalf("clipping changed the direction: %v %v", a.Grad.Data, b.Grad.Data)
	}

	// Adam clips before updating: a huge gradient moves a weight by at most
	// about LR on the first step, and the gradients are left clipped.
	opt := NewAdam(0.1)
	opt.ClipNorm = 2
	copy(a.Grad.Data, []float32{3000, 0})
	copy(b.Grad.Data, []float32{0, 4000})
	if n := opt.Step(params); math.Abs(n-5000) > 1e-2 {
		t.Fatalf("Adam.Step returned norm %v, want 5000", n)
	}
	if n := GradNorm(params); math.Abs(n-2) > 1e-4 {
		t.Fatalf("gradient norm after Adam.Step = %v, want 2", n)
	}
	if d := math.Abs(float64(a.Value.Data[0]) + 0.1); d > 1e-4 {
		t.Fatalf("first Adam step moved the weight to %v, want -0.1", a.Value.Data[0])
	}
}

func TestAdamWeightDecay(t *testing.T) {
	p := NewParam("w", 1)
	p.Value.Data[0] = 2
	opt := NewAdam(0.1)
	opt.WeightDecay = 0.5
	opt.Step([]*Param{p})
	if got, want := p.Value.Data[0], float32(2*(1-0.1*0.5)); math.Abs(float64(got-want)) > 1e-6 {
		t.Fatalf("decayed weight = %v, want %v", got, want)
	}
}
