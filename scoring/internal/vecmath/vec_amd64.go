//go:build amd64

package vecmath

import "golang.org/x/sys/cpu"

//go:noescape
func sigmoidAVX512(x *float32, n int)

//go:noescape
func tanhAVX512(x *float32, n int)

//go:noescape
func geluAVX512(dst, src *float32, n int)

//go:noescape
func meanVar16AVX512(x *float32, d int, idx *int32, out *[32]float32, fd float32)

//go:noescape
func normRowAVX512(x, y, xhat *float32, n int, mean, rstd float32, gain, bias *float32)

//go:noescape
func sumExpAVX512(x *float32, n int, shift float32, acc *[16]float32)

//go:noescape
func expShiftAVX512(x *float32, n int, shift float32, acc *[16]float32)

//go:noescape
func maxAVX512(x *float32, n int, acc *[16]float32)

var hasAVX512 = cpu.X86.HasAVX512F

// vectorLen returns how many leading elements of an n-element slice the
// assembly handles (a multiple of 16), or 0 without AVX-512.
func vectorLen(n int) int {
	if !hasAVX512 {
		return 0
	}
	return n &^ 15
}

func sigmoidVec(x []float32) int {
	n := vectorLen(len(x))
	if n > 0 {
		sigmoidAVX512(&x[0], n)
	}
	return n
}

func tanhVec(x []float32) int {
	n := vectorLen(len(x))
	if n > 0 {
		tanhAVX512(&x[0], n)
	}
	return n
}

func geluVec(dst, src []float32) int {
	n := vectorLen(len(src))
	if n > 0 {
		_ = dst[n-1]
		geluAVX512(&dst[0], &src[0], n)
	}
	return n
}

// meanVarVec does the leading groups of 16 rows of RowMeanVar and returns
// how many rows it did.
func meanVarVec(x []float32, d int, mean, variance []float32) int {
	rows := len(mean)
	if !hasAVX512 || d == 0 || int64(d)*16 > 1<<31-1 {
		return 0
	}
	var idx [16]int32
	for l := range idx {
		idx[l] = int32(l * d)
	}
	var out [32]float32
	r := 0
	for ; r+16 <= rows; r += 16 {
		_ = x[(r+16)*d-1]
		meanVar16AVX512(&x[r*d], d, &idx[0], &out, float32(d))
		copy(mean[r:r+16], out[:16])
		copy(variance[r:r+16], out[16:])
	}
	return r
}

// normRowVec does the leading multiple of 16 values of NormRow and returns
// how many it did.
func normRowVec(x, y, xhat []float32, mean, rstd float32, gain, bias []float32) int {
	n := vectorLen(len(x))
	if n == 0 {
		return 0
	}
	_, _, _ = y[n-1], gain[n-1], bias[n-1]
	var hp *float32
	if xhat != nil {
		_ = xhat[n-1]
		hp = &xhat[0]
	}
	normRowAVX512(&x[0], &y[0], hp, n, mean, rstd, &gain[0], &bias[0])
	return n
}

func sumExpVec(x []float32, shift float32) (float32, int) {
	n := vectorLen(len(x))
	if n == 0 {
		return 0, 0
	}
	var acc [16]float32
	sumExpAVX512(&x[0], n, shift, &acc)
	var s float32
	for _, v := range acc {
		s += v
	}
	return s, n
}

func expShiftVec(x []float32, shift float32) (float32, int) {
	n := vectorLen(len(x))
	if n == 0 {
		return 0, 0
	}
	var acc [16]float32
	expShiftAVX512(&x[0], n, shift, &acc)
	var s float32
	for _, v := range acc {
		s += v
	}
	return s, n
}

func maxVec(x []float32) (float32, int) {
	n := vectorLen(len(x))
	if n == 0 {
		return negInf, 0
	}
	var acc [16]float32
	maxAVX512(&x[0], n, &acc)
	m := acc[0]
	for _, v := range acc[1:] {
		m = max(m, v)
	}
	return m, n
}

// Accelerated reports whether the slice functions use assembly.
func Accelerated() bool { return hasAVX512 }
