package nn

import "math"

// Adam is the Adam optimiser with bias correction, optional decoupled
// weight decay (AdamW) and optional global gradient-norm clipping.
type Adam struct {
	// LR is the learning rate.
	LR float64
	// Beta1, Beta2 and Eps are the usual Adam constants; NewAdam sets 0.9,
	// 0.999 and 1e-8.
	Beta1, Beta2, Eps float64
	// WeightDecay, if positive, shrinks every parameter by LR·WeightDecay·p
	// per step, decoupled from the gradient (AdamW).
	WeightDecay float64
	// ClipNorm, if positive, rescales the gradients before each step so that
	// their global L2 norm is at most ClipNorm.
	ClipNorm float64
	// Steps counts the updates made so far.
	Steps int
}

// NewAdam returns an Adam optimiser with the standard constants and no
// weight decay or clipping.
func NewAdam(lr float64) *Adam {
	return &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
}

// Step clips the gradients of params (if ClipNorm > 0), updates the
// parameters from their gradients and returns the gradient norm before
// clipping. It does not clear the gradients; call ZeroGrad before the next
// backward pass.
func (a *Adam) Step(params []*Param) float64 {
	norm := ClipGradNorm(params, a.ClipNorm)
	a.Steps++
	t := float64(a.Steps)
	b1, b2 := float32(a.Beta1), float32(a.Beta2)
	// Bias corrections folded into the step size and epsilon.
	c1 := 1 - math.Pow(a.Beta1, t)
	c2 := 1 - math.Pow(a.Beta2, t)
	lr := float32(a.LR / c1)
	sc2 := float32(1 / math.Sqrt(c2))
	eps := float32(a.Eps)
	decay := float32(1 - a.LR*a.WeightDecay)
	for _, p := range params {
		n := len(p.Value.Data)
		if len(p.m) != n {
			p.m, p.v = make([]float32, n), make([]float32, n)
		}
		w, g, m, v := p.Value.Data, p.Grad.Data[:n], p.m, p.v
		for i := range w {
			gi := g[i]
			mi := b1*m[i] + (1-b1)*gi
			vi := b2*v[i] + (1-b2)*gi*gi
			m[i], v[i] = mi, vi
			if a.WeightDecay > 0 {
				w[i] *= decay
			}
			w[i] -= lr * mi / (float32(math.Sqrt(float64(vi)))*sc2 + eps)
		}
	}
	return norm
}
