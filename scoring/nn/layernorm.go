package nn

import (
	"fmt"
	"math"

	"github.com/ctxsim/ctxsim/scoring/internal/vecmath"
)

// LayerNorm normalises every row of its input over the last axis and
// applies a learned gain and bias: y = (x - mean) / sqrt(var + Eps) * g + b.
type LayerNorm struct {
	// Gain is the (dim) scale, named "<name>.weight", initialised to one.
	Gain *Param
	// Bias is the (dim) shift, named "<name>.bias", initialised to zero.
	Bias *Param
	// Eps is added to the variance; NewLayerNorm sets 1e-5.
	Eps float32
}

// NewLayerNorm returns a LayerNorm over rows of width dim.
func NewLayerNorm(name string, dim int) *LayerNorm {
	ln := &LayerNorm{Gain: NewParam(name+".weight", dim), Bias: NewParam(name+".bias", dim), Eps: 1e-5}
	for i := range ln.Gain.Value.Data {
		ln.Gain.Value.Data[i] = 1
	}
	return ln
}

// Params returns the trainable parameters.
func (ln *LayerNorm) Params() []*Param { return []*Param{ln.Gain, ln.Bias} }

// LayerNormCache holds what LayerNorm.Backward needs.
type LayerNormCache struct {
	xhat *Tensor   // normalised input
	rstd []float32 // 1/sqrt(var+eps) per row
}

// Forward normalises x, of shape (..., dim).
func (ln *LayerNorm) Forward(x *Tensor) (*Tensor, *LayerNormCache) {
	n := ln.rows(x)
	y := newTensorUninit(x.Shape...)
	cache := &LayerNormCache{xhat: newTensorUninit(x.Shape...), rstd: make([]float32, n)}
	ln.normalize(x.Data, y.Data, cache.xhat.Data, cache.rstd)
	return y, cache
}

// Apply is Forward without the cache, for inference: the same output,
// bit for bit, with one pass less over memory.
func (ln *LayerNorm) Apply(x *Tensor) *Tensor {
	y := newTensorUninit(x.Shape...)
	rstd := getBuf(ln.rows(x), false)
	ln.normalize(x.Data, y.Data, nil, rstd)
	putBuf(rstd)
	return y
}

// rows checks x's last axis and returns its number of rows.
func (ln *LayerNorm) rows(x *Tensor) int {
	if d := len(ln.Gain.Value.Data); x.Cols() != d {
		panic(fmt.Sprintf("nn: LayerNorm: input shape %v, want last axis %d", x.Shape, d))
	}
	return x.Rows()
}

// normalize writes the normalised rows of x to y and, unless it is nil,
// their unscaled values to xhat, and each row's 1/sqrt(var+Eps) to rstd.
// The statistics are those of a loop over each row in order (see
// vecmath.RowMeanVar), whatever the vector width.
func (ln *LayerNorm) normalize(x, y, xhat, rstd []float32) {
	d := len(ln.Gain.Value.Data)
	n := len(rstd)
	mean := getBuf(n, false)
	defer putBuf(mean)
	vecmath.RowMeanVar(x, d, mean, rstd)
	gain, bias := ln.Gain.Value.Data, ln.Bias.Value.Data
	for r := 0; r < n; r++ {
		rs := float32(1 / math.Sqrt(float64(rstd[r]+ln.Eps)))
		rstd[r] = rs
		var xh []float32
		if xhat != nil {
			xh = xhat[r*d : (r+1)*d]
		}
		vecmath.NormRow(x[r*d:(r+1)*d], y[r*d:(r+1)*d], xh, mean[r], rs, gain, bias)
	}
}

// Release hands the cache's buffers back for reuse (see Tensor.Release);
// the cache must not be used afterwards. A nil cache is a no-op.
func (c *LayerNormCache) Release() {
	if c == nil {
		return
	}
	c.xhat.Release()
	c.xhat = nil
}

// Backward accumulates the gain and bias gradients and returns the
// gradient of the input.
func (ln *LayerNorm) Backward(cache *LayerNormCache, dy *Tensor) *Tensor {
	d := len(ln.Gain.Value.Data)
	if dy.Size() != cache.xhat.Size() {
		panic(fmt.Sprintf("nn: LayerNorm.Backward: gradient shape %v, want %v", dy.Shape, cache.xhat.Shape))
	}
	n := len(cache.rstd)
	dx := newTensorUninit(cache.xhat.Shape...)
	gain, dgain, dbias := ln.Gain.Value.Data, ln.Gain.Grad.Data, ln.Bias.Grad.Data
	for r := 0; r < n; r++ {
		xh := cache.xhat.Data[r*d : (r+1)*d]
		dyr := dy.Data[r*d : (r+1)*d]
		var sum, sumX float32
		for j, g := range dyr {
			dgain[j] += g * xh[j]
			dbias[j] += g
			dxh := g * gain[j]
			sum += dxh
			sumX += dxh * xh[j]
		}
		mean, meanX := sum/float32(d), sumX/float32(d)
		rstd := cache.rstd[r]
		dxr := dx.Data[r*d : (r+1)*d]
		for j, g := range dyr {
			dxr[j] = rstd * (g*gain[j] - mean - xh[j]*meanX)
		}
	}
	return dx
}
