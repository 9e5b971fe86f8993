package gogemm

import (
	"fmt"
	"math"
	"sync"
	"unsafe"
)

// bfloat16 products: C = bf16(A)·bf16(B), each operand rounded to
// bfloat16 (8 bits of mantissa, round to nearest even) and the exact
// products summed in float32. On a CPU with AVX512_BF16 the AVX-512 kernel
// does one VDPBF16PS per pair of k-steps, twice the multiply-adds of a
// float32 FMA per instruction (about twice the float32 rate measured on
// AMD Zen 4; on an Intel Xeon with AMX, where the instruction issues half
// as often as an FMA, 0.53-0.78x); elsewhere a scalar loop gives the same
// bits, slowly (tests and other CPUs; callers check HasBF16 first).

// bf16NR is the number of columns of a panel of PackedBF16.
const bf16NR = 32

// bf16MR is the number of rows of the kernel's tile: eight, so that the
// AVX-512 kernel keeps 16 registers of sums (see kernel8x32BF16AVX512).
const bf16MR = 8

// bf16Rows is the number of rows of A rounded at a time.
const bf16Rows = 16 * bf16MR

// BF16Bits rounds x to bfloat16 (round to nearest, ties to even) and
// returns its 16 bits; a NaN stays a NaN.
func BF16Bits(x float32) uint16 {
	b := math.Float32bits(x)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// bf16Value is the float32 whose top half is b.
func bf16Value(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }

// PackedBF16 is op(B) (k×n) rounded to bfloat16 and packed for GemmBF16:
// panels of 32 columns, each ceil(k/2) words per column step, a word
// holding rows 2p (low half) and 2p+1 (high half) of its column; rows and
// columns past the matrix are zero.
type PackedBF16 struct {
	k, n, k2 int
	data     []uint32
}

// PackBF16 rounds op(B), stored k×n (ldb >= n) or, if transB, n×k
// (ldb >= k), to bfloat16 and packs it.
func PackBF16(transB bool, k, n int, b []float32, ldb int) *PackedBF16 {
	at := func(p, j int) float32 { return b[p*ldb+j] }
	if transB {
		at = func(p, j int) float32 { return b[j*ldb+p] }
	}
	k2 := (k + 1) / 2
	panels := (n + bf16NR - 1) / bf16NR
	pb := &PackedBF16{k: k, n: n, k2: k2, data: make([]uint32, panels*k2*bf16NR)}
	for jp := range panels {
		panel := pb.data[jp*k2*bf16NR : (jp+1)*k2*bf16NR]
		for jj := range min(bf16NR, n-jp*bf16NR) {
			j := jp*bf16NR + jj
			for p := range k2 {
				lo := uint32(BF16Bits(at(2*p, j)))
				var hi uint32
				if 2*p+1 < k {
					hi = uint32(BF16Bits(at(2*p+1, j)))
				}
				panel[p*bf16NR+jj] = lo | hi<<16
			}
		}
	}
	return pb
}

// roundRows writes rows [i0, i0+rows) of the m×k matrix A (row stride
// lda) into dst as bfloat16 pairs, k2 words a row; missing values are zero.
func roundRows(dst []uint32, a []float32, lda, i0, rows, k, k2 int) {
	for r := range rows {
		out := unsafe.Slice((*uint16)(unsafe.Pointer(&dst[r*k2])), 2*k2)
		roundBF16(out, a[(i0+r)*lda:(i0+r)*lda+k])
		if k < 2*k2 {
			out[k] = 0
		}
	}
}

// roundBF16Go is the scalar roundBF16.
func roundBF16Go(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, x := range src {
		dst[i] = BF16Bits(x)
	}
}

var bf16Pool = sync.Pool{New: func() any { return new(bf16Buf) }}

type bf16Buf struct {
	a    []uint32
	tile [bf16MR * bf16NR]float32
}

// GemmBF16 computes C = bf16(A)·op(B) for the m×k matrix A (row stride
// lda >= k) and the packed op(B), overwriting the m×n matrix C (row stride
// ldc >= n), then applies ep. It uses the AVX-512 kernel when HasBF16 and
// the scalar one otherwise; both give the same bits (each sum adds, for
// p = 0, 1, ..., the product of step 2p+1 and then that of step 2p, as
// VDPBF16PS does), except where a sum or product is subnormal, which the
// instruction flushes to zero.
func GemmBF16(m int, a []float32, lda int, pb *PackedBF16, c []float32, ldc int, ep Epilogue) {
	gemmBF16With(bf16Kernel(), m, a, lda, pb, c, ldc, ep)
}

// gemmBF16With is GemmBF16 on kernel kern.
func gemmBF16With(kern bf16Func, m int, a []float32, lda int, pb *PackedBF16, c []float32, ldc int, ep Epilogue) {
	k, n, k2 := pb.k, pb.n, pb.k2
	if m < 0 || lda < k || ldc < n || (m > 0 && (len(a) < (m-1)*lda+k || len(c) < (m-1)*ldc+n)) || (ep.Bias != nil && len(ep.Bias) < n) {
		panic(fmt.Sprintf("gogemm: GemmBF16: %d×%d by %d×%d with lda %d (%d values), ldc %d (%d values)", m, k, k, n, lda, len(a), ldc, len(c)))
	}
	if m == 0 || n == 0 {
		return
	}
	buf := bf16Pool.Get().(*bf16Buf)
	defer bf16Pool.Put(buf)
	if need := bf16Rows * k2; cap(buf.a) < need {
		buf.a = make([]uint32, need)
	}
	for i0 := 0; i0 < m; i0 += bf16Rows {
		mb := min(bf16Rows, m-i0)
		strips := (mb + bf16MR - 1) / bf16MR
		ab := buf.a[:strips*bf16MR*k2]
		roundRows(ab, a, lda, i0, mb, k, k2)
		clear(ab[mb*k2:])
		for jp := 0; jp*bf16NR < n; jp++ {
			j0 := jp * bf16NR
			nb := min(bf16NR, n-j0)
			bp := pb.data[jp*k2*bf16NR : (jp+1)*k2*bf16NR]
			for s := range strips {
				rows := min(bf16MR, mb-s*bf16MR)
				at := ab[s*bf16MR*k2:]
				ct := c[(i0+s*bf16MR)*ldc+j0:]
				if rows == bf16MR && nb == bf16NR {
					flags := exStore
					var bias []float32
					if ep.Bias != nil {
						flags |= exBias
						bias = ep.Bias[j0 : j0+bf16NR]
					}
					if ep.ReLU {
						flags |= exReLU
					}
					kern(k2, at, k2, bp, ct, ldc, flags, bias)
					continue
				}
				kern(k2, at, k2, bp, buf.tile[:], bf16NR, exStore, nil)
				for r := range rows {
					copy(ct[r*ldc:r*ldc+nb], buf.tile[r*bf16NR:r*bf16NR+nb])
				}
				var bias []float32
				if ep.Bias != nil {
					bias = ep.Bias[j0 : j0+nb]
				}
				applyEpilogue(ct, ldc, rows, nb, bias, ep.ReLU)
			}
		}
	}
}

// bf16Func is a bfloat16 kernel: the 8×32 tile of sums over kc pairs of
// steps of A (row i at a[i*lda:], lda in words) and the panel b, stored in
// c with the epilogue of flags (exStore must be set).
type bf16Func func(kc int, a []uint32, lda int, b []uint32, c []float32, ldc int, flags int, bias []float32)

// bf16Kernel returns the fastest bfloat16 kernel of this CPU.
func bf16Kernel() bf16Func {
	if HasBF16() {
		return bf16AVX512
	}
	return bf16Go
}

// bf16Go is the scalar bfloat16 kernel.
func bf16Go(kc int, a []uint32, lda int, b []uint32, c []float32, ldc int, flags int, bias []float32) {
	var acc [bf16MR * bf16NR]float32
	for i := range bf16MR {
		row := a[i*lda : i*lda+kc]
		for p, w := range row {
			alo, ahi := bf16Value(uint16(w)), bf16Value(uint16(w>>16))
			for j, v := range b[p*bf16NR : (p+1)*bf16NR] {
				s := acc[i*bf16NR+j] + ahi*bf16Value(uint16(v>>16))
				acc[i*bf16NR+j] = s + alo*bf16Value(uint16(v))
			}
		}
	}
	for i := range bf16MR {
		for j := range bf16NR {
			v := acc[i*bf16NR+j]
			if flags&exBias != 0 {
				v += bias[j]
			}
			if flags&exReLU != 0 {
				v = max(v, 0)
			}
			c[i*ldc+j] = v
		}
	}
}
