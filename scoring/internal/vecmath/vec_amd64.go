//go:build amd64

package vecmath

import (
	"sync"

	"golang.org/x/sys/cpu"
)

//go:noescape
func sigmoidAVX512(x *float32, n int)

//go:noescape
func tanhAVX512(x *float32, n int)

//go:noescape
func geluAVX512(dst, src *float32, n int)

//go:noescape
func meanVar16TAVX512(xt *float32, d int, out *[32]float32, fd float32)

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
// how many rows it did: each group is transposed into a scratch buffer
// (value p of row l at p*16+l), then summed one contiguous vector per step.
func meanVarVec(x []float32, d int, mean, variance []float32) int {
	rows := len(mean)
	if !hasAVX512 || d == 0 || rows < 16 {
		return 0
	}
	bp := scratchPool.Get().(*[]float32)
	defer scratchPool.Put(bp)
	if cap(*bp) < 16*d {
		*bp = make([]float32, 16*d)
	}
	xt := (*bp)[:16*d]
	var out [32]float32
	r := 0
	for ; r+16 <= rows; r += 16 {
		transpose16(xt, x[r*d:(r+16)*d], d)
		meanVar16TAVX512(&xt[0], d, &out, float32(d))
		copy(mean[r:r+16], out[:16])
		copy(variance[r:r+16], out[16:])
	}
	return r
}

var scratchPool = sync.Pool{New: func() any { return new([]float32) }}

// transpose16 writes dst[p*16+l] = src[l*d+p] for l < 16 and p < d.
func transpose16(dst, src []float32, d int) {
	r0, r1, r2, r3 := src[:d], src[d:2*d], src[2*d:3*d], src[3*d:4*d]
	r4, r5, r6, r7 := src[4*d:5*d], src[5*d:6*d], src[6*d:7*d], src[7*d:8*d]
	r8, r9, r10, r11 := src[8*d:9*d], src[9*d:10*d], src[10*d:11*d], src[11*d:12*d]
	r12, r13, r14, r15 := src[12*d:13*d], src[13*d:14*d], src[14*d:15*d], src[15*d:16*d]
	dst = dst[:16*d]
	for p := range r0 {
		q := dst[p*16 : p*16+16 : p*16+16]
		q[0], q[1], q[2], q[3] = r0[p], r1[p], r2[p], r3[p]
		q[4], q[5], q[6], q[7] = r4[p], r5[p], r6[p], r7[p]
		q[8], q[9], q[10], q[11] = r8[p], r9[p], r10[p], r11[p]
		q[12], q[13], q[14], q[15] = r12[p], r13[p], r14[p], r15[p]
	}
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

//go:noescape
func mulAVX512(dst, a, b *float32, n int)

//go:noescape
func absDiffAVX512(dst, a, b *float32, n int)

//go:noescape
func mulAddAVX512(dst, a, b, c, d *float32, n int)

func mulAddVec(dst, a, b, c, d []float32) int {
	n := vectorLen(len(dst))
	if n > 0 {
		mulAddAVX512(&dst[0], &a[0], &b[0], &c[0], &d[0], n)
	}
	return n
}

func mulVec(dst, a, b []float32) int {
	n := vectorLen(len(dst))
	if n > 0 {
		mulAVX512(&dst[0], &a[0], &b[0], n)
	}
	return n
}

func absDiffVec(dst, a, b []float32) int {
	n := vectorLen(len(dst))
	if n > 0 {
		absDiffAVX512(&dst[0], &a[0], &b[0], n)
	}
	return n
}
