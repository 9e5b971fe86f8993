package nn

import (
	"fmt"
	"math/rand/v2"

	"github.com/ctxsim/ctxsim/scoring/internal/vecmath"
)

// Activation selects the non-linearity of a FeedForward block.
type Activation int

const (
	// ReLU is max(0, x).
	ReLU Activation = iota
	// GELU is the Gaussian error linear unit in its tanh approximation,
	// 0.5·x·(1 + tanh(sqrt(2/π)·(x + 0.044715·x³))).
	GELU
)

// String returns the activation's name.
func (a Activation) String() string {
	switch a {
	case ReLU:
		return "relu"
	case GELU:
		return "gelu"
	}
	return fmt.Sprintf("Activation(%d)", int(a))
}

// FeedForward is the position-wise block Linear(dim→hidden) → activation →
// Linear(hidden→dim), applied to every row.
type FeedForward struct {
	// L1 and L2 are named "<name>.fc1" and "<name>.fc2".
	L1, L2 *Linear
	// Act is the non-linearity between them.
	Act Activation
}

// NewFeedForward returns a feed-forward block with biases.
func NewFeedForward(name string, dim, hidden int, act Activation, rng *rand.Rand) *FeedForward {
	return &FeedForward{
		L1:  NewLinear(name+".fc1", dim, hidden, true, rng),
		L2:  NewLinear(name+".fc2", hidden, dim, true, rng),
		Act: act,
	}
}

// Params returns the trainable parameters.
func (f *FeedForward) Params() []*Param { return append(f.L1.Params(), f.L2.Params()...) }

// FeedForwardCache holds what FeedForward.Backward needs: the input, the
// activations and, for GELU, the pre-activations (a ReLU's derivative is
// read from its output, which is positive exactly where its input is).
type FeedForwardCache struct {
	x, pre, act *Tensor
}

const geluC = 0.7978845608028654 // sqrt(2/π)

// Forward applies the block to x, of shape (..., dim). A ReLU is applied
// by the first layer's product as it finishes each tile (Linear.forward).
func (f *FeedForward) Forward(x *Tensor) (*Tensor, *FeedForwardCache) {
	var pre, act *Tensor
	switch f.Act {
	case ReLU:
		act = f.L1.forward(x, true)
	case GELU:
		pre = f.L1.Forward(x)
		act = newTensorUninit(pre.Shape...)
		vecmath.GELUTanhInto(act.Data, pre.Data)
	default:
		panic(fmt.Sprintf("nn: FeedForward: unknown activation %v", f.Act))
	}
	return f.L2.Forward(act), &FeedForwardCache{x: x, pre: pre, act: act}
}

// geluTanh sets dst[i] = tanh(sqrt(2/π)·(x + 0.044715·x³)) for x = src[i].
func geluTanh(dst, src []float32) {
	for i, v := range src {
		dst[i] = geluC * (v + 0.044715*v*v*v)
	}
	vecmath.TanhInPlace(dst)
}

// Backward accumulates the parameter gradients and returns the gradient of
// the input.
func (f *FeedForward) Backward(cache *FeedForwardCache, dy *Tensor) *Tensor {
	dAct := f.L2.Backward(cache.act, dy)
	switch f.Act {
	case ReLU:
		for i, v := range cache.act.Data {
			if v <= 0 {
				dAct.Data[i] = 0
			}
		}
	case GELU:
		th := getBuf(len(cache.pre.Data), false)
		defer putBuf(th)
		geluTanh(th, cache.pre.Data)
		for i, v := range cache.pre.Data {
			t := th[i]
			dAct.Data[i] *= 0.5*(1+t) + 0.5*v*(1-t*t)*geluC*(1+3*0.044715*v*v)
		}
	}
	dx := f.L1.Backward(cache.x, dAct)
	dAct.Release()
	return dx
}

// Release hands the cache's buffers back for reuse (see Tensor.Release);
// the cache must not be used afterwards. The input is not released.
func (c *FeedForwardCache) Release() {
	releaseAll(c.pre, c.act)
	c.pre, c.act = nil, nil
}
