package nn

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/ctxsim/ctxsim/scoring/nn/internal/gogemm"
)

// Linear is the affine map y = x·Wᵀ + b applied to every row of x. W is
// stored as (out, in), the PyTorch layout, so that a row of W holds the
// weights of one output unit.
type Linear struct {
	// W is the (out, in) weight, named "<name>.weight".
	W *Param
	// B is the (out) bias, named "<name>.bias", or nil for no bias.
	B *Param

	// packed is Wᵀ packed for the pure-Go kernel by Pack, or nil.
	packed *gogemm.PackedB
	// packed16 is Wᵀ rounded to bfloat16 and packed by PackBF16, or nil.
	packed16 *gogemm.PackedBF16
}

// NewLinear returns a Linear layer with Glorot-uniform weights and a zero
// bias (if bias is true).
func NewLinear(name string, in, out int, bias bool, rng *rand.Rand) *Linear {
	l := &Linear{W: NewParam(name+".weight", out, in)}
	fillUniform(rng, l.W.Value.Data, xavierLimit(in, out))
	if bias {
		l.B = NewParam(name+".bias", out)
	}
	return l
}

// In returns the input width.
func (l *Linear) In() int { return l.W.Value.Shape[1] }

// Out returns the output width.
func (l *Linear) Out() int { return l.W.Value.Shape[0] }

// Params returns the trainable parameters.
func (l *Linear) Params() []*Param {
	if l.B == nil {
		return []*Param{l.W}
	}
	return []*Param{l.W, l.B}
}

// Forward maps x, of shape (..., in), to a tensor of shape (..., out). The
// input x is the cache for Backward and must not be modified in between.
//
// With the pure-Go backend the bias is added to each tile of the output as
// the matrix product finishes it (gogemm.GemmBias), which gives the same
// bits as adding it afterwards.
func (l *Linear) Forward(x *Tensor) *Tensor { return l.forward(x, false) }

// forward is Forward, followed with relu by max(v, 0) on every output.
func (l *Linear) forward(x *Tensor, relu bool) *Tensor {
	in, out := l.In(), l.Out()
	if x.Cols() != in {
		panic(fmt.Sprintf("nn: Linear: input shape %v, want last axis %d", x.Shape, in))
	}
	n := x.Rows()
	shape := append(append([]int(nil), x.Shape[:len(x.Shape)-1]...), out)
	y := newTensorUninit(shape...)
	if n == 0 || out == 0 {
		return y
	}
	checkGemm(false, true, n, out, in, x.Data, in, l.W.Value.Data, in, y.Data, out)
	var bias []float32
	if l.B != nil {
		bias = l.B.Value.Data
	}
	if l.packed16 != nil {
		gogemm.GemmBF16(n, x.Data, in, l.packed16, y.Data, out, gogemm.Epilogue{Bias: bias, ReLU: relu})
		return y
	}
	if useGo.Load() {
		gogemm.GemmBias(gogemm.Best(), n, out, in, x.Data, in, true, l.W.Value.Data, in, l.packed, y.Data, out, gogemm.Epilogue{Bias: bias, ReLU: relu})
		return y
	}
	gemmBackend(false, true, n, out, in, 1, x.Data, in, l.W.Value.Data, in, 0, y.Data, out)
	if bias != nil {
		addBiasRows(y.Data, bias)
	}
	if relu {
		for i, v := range y.Data {
			y.Data[i] = max(v, 0)
		}
	}
	return y
}

// Pack readies the layer for inference: with the pure-Go backend, Forward
// then multiplies by a copy of Wᵀ packed once for the kernel, instead of
// packing W at every call (the results are the same bits). The weights
// must not change while the layer is packed: call Unpack before training
// it or writing W. Pack and Unpack must not run while Forward does.
func (l *Linear) Pack() {
	if !useGo.Load() {
		return
	}
	l.packed = gogemm.PackB(gogemm.Best(), true, l.In(), l.Out(), l.W.Value.Data, l.In())
}

// PackBF16 readies the layer for inference in bfloat16, whatever the
// backend: Forward then rounds its input and a copy of W made once to
// bfloat16 (round to nearest even) and sums their exact products in
// float32 (gogemm.GemmBF16), twice the multiply-adds per instruction of
// float32 on a CPU with AVX512_BF16 (HasBF16), and far slower on others.
// Per second it depends on the CPU: about twice float32 on AMD Zen 4,
// less than float32 on an Intel Xeon with AMX.
// The outputs differ from float32 ones by the rounding of the operands,
// about 3 significant digits. The conditions of Pack apply. ForwardFill
// and ForwardCat stay float32.
func (l *Linear) PackBF16() {
	l.packed = nil
	l.packed16 = gogemm.PackBF16(true, l.In(), l.Out(), l.W.Value.Data, l.In())
}

// HasBF16 reports whether this CPU has the bfloat16 instructions
// (AVX512_BF16); whether they beat float32 depends on the CPU (PackBF16).
func HasBF16() bool { return gogemm.HasBF16() }

// Unpack drops the packed copies made by Pack or PackBF16.
func (l *Linear) Unpack() { l.packed, l.packed16 = nil, nil }

// packedGo is the packed copy of the weights for the pure-Go kernel, or
// nil: the copy ForwardFill multiplies by, whatever the backend.
func (l *Linear) packedGo() *gogemm.PackedB { return l.packed }

// Packing packs a model's linear layers for inference once (Pack), for
// callers that may run at the same time, and drops the packed copies
// (Unpack) before training changes the weights. Code that writes the
// weights in any other way after packing must call Unpack first.
type Packing struct {
	mu     sync.Mutex
	packed atomic.Bool
	bf16   bool
}

// SetBF16 chooses how Pack packs: in bfloat16 (Linear.PackBF16) when on,
// as Linear.Pack does otherwise. Layers already packed the other way are
// unpacked, to be packed again on the next Pack.
func (p *Packing) SetBF16(on bool, layers func() []*Linear) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bf16 == on {
		return
	}
	p.bf16 = on
	for _, l := range layers() {
		l.Unpack()
	}
	p.packed.Store(false)
}

// BF16 reports whether Pack packs in bfloat16.
func (p *Packing) BF16() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bf16
}

// Pack packs the layers layers returns, unless they are packed already.
func (p *Packing) Pack(layers func() []*Linear) {
	if p.packed.Load() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.packed.Load() {
		return
	}
	for _, l := range layers() {
		if p.bf16 {
			l.PackBF16()
		} else {
			l.Pack()
		}
	}
	p.packed.Store(true)
}

// Unpack drops the packed copies made by Pack.
func (p *Packing) Unpack(layers func() []*Linear) {
	if !p.packed.Load() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range layers() {
		l.Unpack()
	}
	p.packed.Store(false)
}

// Packed reports whether Forward uses a packed copy of the weights.
func (l *Linear) Packed() bool { return l.packed16 != nil || (l.packed != nil && useGo.Load()) }

// ForwardFill is Forward for an (n, In()) input x that is not stored:
// fill(dst, i, p) writes x[i][p : p+len(dst)] into dst, and the product
// packs x from it block by block. The n*Out() outputs go to y.
//
// ForwardFill and ForwardCat run on the pure-Go kernel whatever the
// backend, since OpenBLAS needs its input stored: their outputs are those
// of Forward under the "go" backend, bit for bit, and within float
// rounding of Forward under "openblas". fill may be called from several
// goroutines at once (see SetThreads), for different rows.
func (l *Linear) ForwardFill(n int, fill func(dst []float32, i, p int), y []float32) {
	in, out := l.In(), l.Out()
	if n < 0 || len(y) != n*out {
		panic(fmt.Sprintf("nn: Linear.ForwardFill: %d outputs for %d rows of %d", len(y), n, out))
	}
	gogemm.GemmFillA(gogemm.Best(), n, out, in, fill, true, l.W.Value.Data, in, l.packedGo(), y, out)
	if l.B != nil {
		addBiasRows(y, l.B.Value.Data)
	}
}

// ForwardCat is Forward for the input whose row i is the concatenation of
// the rows i of parts, each a row-major (n, w_j) matrix with the w_j adding
// up to In(), without building it; n is len(y)/Out() and y receives the
// outputs. With one output it takes the dot products straight from the
// parts (gogemm.RowDots), otherwise it is ForwardFill; see ForwardFill for
// the kernel and the rounding.
func (l *Linear) ForwardCat(y []float32, parts ...[]float32) {
	in, out := l.In(), l.Out()
	n := len(y) / out
	if len(y) != n*out {
		panic(fmt.Sprintf("nn: Linear.ForwardCat: %d outputs, not rows of %d", len(y), out))
	}
	if n == 0 {
		return
	}
	width := 0
	for j, p := range parts {
		if len(p)%n != 0 {
			panic(fmt.Sprintf("nn: Linear.ForwardCat: part %d has %d values for %d rows", j, len(p), n))
		}
		width += len(p) / n
	}
	if width != in {
		panic(fmt.Sprintf("nn: Linear.ForwardCat: parts %d wide for input %d", width, in))
	}
	if out != 1 {
		l.ForwardFill(n, func(dst []float32, i, p int) {
			for _, part := range parts {
				w := len(part) / n
				if p >= w {
					p -= w
					continue
				}
				c := copy(dst, part[i*w+p:(i+1)*w])
				if dst = dst[c:]; len(dst) == 0 {
					return
				}
				p = 0
			}
		}, y)
		return
	}
	gogemm.RowDots(gogemm.Best(), n, parts, l.W.Value.Data, y)
	if l.B != nil {
		addBiasRows(y, l.B.Value.Data)
	}
}

// Backward accumulates the parameter gradients for the forward input x and
// output gradient dy, and returns the gradient of x.
func (l *Linear) Backward(x, dy *Tensor) *Tensor {
	dx := newTensorUninit(x.Shape...)
	l.backward(x, dy, dx)
	return dx
}

// BackwardParams is Backward without computing the input gradient, for
// layers whose input needs none.
func (l *Linear) BackwardParams(x, dy *Tensor) { l.backward(x, dy, nil) }

func (l *Linear) backward(x, dy, dx *Tensor) {
	in, out := l.In(), l.Out()
	n := x.Rows()
	if dy.Size() != n*out {
		panic(fmt.Sprintf("nn: Linear.Backward: gradient shape %v for input %v", dy.Shape, x.Shape))
	}
	Gemm(true, false, out, in, n, 1, dy.Data, out, x.Data, in, 1, l.W.Grad.Data, in)
	if l.B != nil {
		sumRowsInto(l.B.Grad.Data, dy.Data)
	}
	if dx != nil {
		Gemm(false, false, n, in, out, 1, dy.Data, out, l.W.Value.Data, in, 0, dx.Data, in)
	}
}
