package nn

import (
	"fmt"
	"math"
)

// Tensor is a dense, row-major float32 tensor. Shape lists the extent of
// every axis; Data holds exactly the product of Shape elements, the last
// axis varying fastest.
type Tensor struct {
	Shape []int
	Data  []float32
}

// NewTensor returns a zero-filled tensor of the given shape.
func NewTensor(shape ...int) *Tensor {
	return &Tensor{Shape: append([]int(nil), shape...), Data: getBuf(shapeSize(shape), true)}
}

// FromData wraps data in a tensor of the given shape without copying. It
// panics if len(data) does not match the shape.
func FromData(data []float32, shape ...int) *Tensor {
	if n := shapeSize(shape); n != len(data) {
		panic(fmt.Sprintf("nn: FromData: %d values for shape %v (%d)", len(data), shape, n))
	}
	return &Tensor{Shape: append([]int(nil), shape...), Data: data}
}

func shapeSize(shape []int) int {
	n := 1
	for _, d := range shape {
		if d < 0 {
			panic(fmt.Sprintf("nn: negative dimension in shape %v", shape))
		}
		n *= d
	}
	return n
}

// Size returns the number of elements.
func (t *Tensor) Size() int { return len(t.Data) }

// Dim returns the extent of axis i; negative i counts from the end.
func (t *Tensor) Dim(i int) int {
	if i < 0 {
		i += len(t.Shape)
	}
	return t.Shape[i]
}

// Cols returns the extent of the last axis.
func (t *Tensor) Cols() int { return t.Shape[len(t.Shape)-1] }

// Rows returns the number of rows when the tensor is viewed as a matrix
// whose row length is the last axis.
func (t *Tensor) Rows() int {
	c := t.Cols()
	if c == 0 {
		return 0
	}
	return len(t.Data) / c
}

// Reshape returns a view of t with a new shape sharing the same data. It
// panics if the sizes differ.
func (t *Tensor) Reshape(shape ...int) *Tensor { return FromData(t.Data, shape...) }

// Clone returns a deep copy of t.
func (t *Tensor) Clone() *Tensor {
	return &Tensor{Shape: append([]int(nil), t.Shape...), Data: append([]float32(nil), t.Data...)}
}

// Zero sets every element to zero.
func (t *Tensor) Zero() { clear(t.Data) }

// SameShape reports whether t and u have identical shapes.
func (t *Tensor) SameShape(u *Tensor) bool {
	if len(t.Shape) != len(u.Shape) {
		return false
	}
	for i := range t.Shape {
		if t.Shape[i] != u.Shape[i] {
			return false
		}
	}
	return true
}

// AddInPlace adds u element-wise into t. Both must have the same size.
func (t *Tensor) AddInPlace(u *Tensor) {
	if len(t.Data) != len(u.Data) {
		panic(fmt.Sprintf("nn: AddInPlace: sizes %v and %v differ", t.Shape, u.Shape))
	}
	axpy(1, u.Data, t.Data)
}

// Param is a named trainable tensor together with its gradient and the Adam
// moment estimates. Grad has the shape of Value and is accumulated by the
// layers' Backward methods; call ZeroGrad between steps.
type Param struct {
	Name  string
	Value *Tensor
	Grad  *Tensor

	m, v []float32 // Adam moments, allocated on first use.
}

// NewParam returns a zero-valued parameter with a zero gradient.
func NewParam(name string, shape ...int) *Param {
	return &Param{Name: name, Value: NewTensor(shape...), Grad: NewTensor(shape...)}
}

// ZeroGrad clears the gradients of all params.
func ZeroGrad(params []*Param) {
	for _, p := range params {
		p.Grad.Zero()
	}
}

// GradNorm returns the global L2 norm of the gradients of params.
func GradNorm(params []*Param) float64 {
	var s float64
	for _, p := range params {
		for _, g := range p.Grad.Data {
			s += float64(g) * float64(g)
		}
	}
	return math.Sqrt(s)
}

// ClipGradNorm rescales all gradients so that their global L2 norm is at
// most maxNorm, and returns the norm before clipping. A maxNorm <= 0
// disables clipping.
func ClipGradNorm(params []*Param, maxNorm float64) float64 {
	norm := GradNorm(params)
	if maxNorm > 0 && norm > maxNorm {
		s := float32(maxNorm / (norm + 1e-6))
		for _, p := range params {
			scal(s, p.Grad.Data)
		}
	}
	return norm
}

// axpy computes y += alpha*x.
func axpy(alpha float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += alpha * v
	}
}

// scal computes x *= alpha.
func scal(alpha float32, x []float32) {
	for i := range x {
		x[i] *= alpha
	}
}

// addBiasRows adds bias to every row of the (rows, len(bias)) matrix x.
func addBiasRows(x, bias []float32) {
	n := len(bias)
	for off := 0; off+n <= len(x); off += n {
		r := x[off : off+n]
		for j, b := range bias {
			r[j] += b
		}
	}
}

// sumRowsInto adds the column sums of the (rows, len(dst)) matrix x to dst.
func sumRowsInto(dst, x []float32) {
	n := len(dst)
	for off := 0; off+n <= len(x); off += n {
		r := x[off : off+n]
		for j, v := range r {
			dst[j] += v
		}
	}
}
