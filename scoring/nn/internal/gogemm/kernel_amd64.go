//go:build amd64

package gogemm

import (
	"fmt"
	"os"

	"golang.org/x/sys/cpu"
)

//go:noescape
func kernel6x16AVX2Ex(kc int, a *float32, lda int, b, c *float32, ldc int, flags int, bias *float32)

//go:noescape
func kernel6x32AVX512Ex(kc int, a *float32, lda int, b, c *float32, ldc int, flags int, bias *float32)

//go:noescape
func kernel8x32BF16AVX512(kc int, a *uint32, lda int, b *uint32, c *float32, ldc int, flags int, bias *float32)

//go:noescape
func roundBF16AVX512(n16 int, src *float32, dst *uint16)

//go:noescape
func dots32AVX2(n int, x *float32, idx *int32, w *float32, acc *float32)

//go:noescape
func dots8x8AVX2(n8 int, x *float32, ld int, w *float32, acc *float32)

// dotsFMA is the dots function of the FMA kernels (AVX2 and AVX-512 CPUs
// both have AVX2 gathers).
func dotsFMA(x []float32, ld, rows int, w []float32, acc *[dotRows]float32) {
	n := len(w)
	if n == 0 {
		return
	}
	if rows < 1 || rows > dotRows || ld < n || int64(ld)*(dotRows-1) > 1<<31-1 || len(x) < (rows-1)*ld+n {
		panic(fmt.Sprintf("gogemm: dots: %d rows of %d with stride %d in %d values", rows, n, ld, len(x)))
	}
	if n8 := n / 8; rows == dotRows && n8 > 0 {
		// Whole groups of 8 rows, 8 steps at a time, then the steps left
		// over below: each lane's chain of FMAs runs in the same order.
		for g := 0; g < dotRows; g += 8 {
			dots8x8AVX2(n8, &x[g*ld], ld, &w[0], &acc[g])
		}
		if n == 8*n8 {
			return
		}
		x, w, n = x[8*n8:], w[8*n8:], n-8*n8
	}
	var idx [dotRows]int32
	for j := range idx {
		idx[j] = int32(min(j, rows-1) * ld)
	}
	dots32AVX2(n, &x[0], &idx[0], &w[0], &acc[0])
}

// asmEx wraps an assembly kernel of the ex form (see Kernel.ex) with the
// bounds checks that the assembly cannot do.
func asmEx(name string, mr, nr int, f func(kc int, a *float32, lda int, b, c *float32, ldc int, flags int, bias *float32)) func(kc int, a []float32, lda int, b, c []float32, ldc int, flags int, bias []float32) {
	return func(kc int, a []float32, lda int, b, c []float32, ldc int, flags int, bias []float32) {
		needA := kc * mr
		if lda > 0 {
			needA = (mr-1)*lda + kc
		}
		if kc <= 0 || lda < 0 || len(a) < needA || len(b) < kc*nr || len(c) < (mr-1)*ldc+nr || (flags&exBias != 0 && len(bias) < nr) {
			panic(fmt.Sprintf("gogemm: %s: bad panel sizes", name))
		}
		var bp *float32
		if flags&exBias != 0 {
			bp = &bias[0]
		}
		f(kc, &a[0], lda, &b[0], &c[0], ldc, flags, bp)
	}
}

// exKernel is the Kernel of an assembly kernel of the ex form: its plain
// fn is ex with A packed and no epilogue.
func exKernel(name string, mr, nr int, f func(kc int, a *float32, lda int, b, c *float32, ldc int, flags int, bias *float32)) Kernel {
	ex := asmEx(name, mr, nr, f)
	return Kernel{Name: name, MR: mr, NR: nr, dots: dotsFMA, ex: ex,
		fn: func(kc int, a, b, c []float32, ldc int, store bool) {
			flags := 0
			if store {
				flags = exStore
			}
			ex(kc, a, 0, b, c, ldc, flags, nil)
		}}
}

var (
	avx2Kernel   = exKernel("avx2-6x16", 6, 16, kernel6x16AVX2Ex)
	avx512Kernel = halfKernel(exKernel("avx512-6x32", 6, 32, kernel6x32AVX512Ex))
)

// halfKernel marks kn's ex form as taking exHalf.
func halfKernel(kn Kernel) Kernel {
	kn.half = true
	return kn
}

// Kernels returns every micro-kernel this CPU can run, fastest last.
func Kernels() []Kernel {
	ks := []Kernel{Generic}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, avx2Kernel)
	}
	if cpu.X86.HasAVX512F {
		ks = append(ks, avx512Kernel)
	}
	return ks
}

// HasBF16 reports whether this CPU runs the AVX-512 bfloat16 kernel
// (AVX512_BF16); GemmBF16 falls back to a scalar loop without it. Setting
// NoBF16Env in the environment makes it false, as on a CPU without the
// instructions.
func HasBF16() bool { return hasBF16 }

// NoBF16Env names the environment variable that, set to any value, turns
// the AVX-512 bfloat16 kernel off (HasBF16 false), to run as on a CPU
// without it.
const NoBF16Env = "CTXSIM_NO_BF16"

var hasBF16 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BF16 && os.Getenv(NoBF16Env) == ""

// bf16AVX512 is kernel8x32BF16AVX512 with the bounds checks the assembly
// cannot do.
func bf16AVX512(kc int, a []uint32, lda int, b []uint32, c []float32, ldc int, flags int, bias []float32) {
	if kc <= 0 || lda < kc || len(a) < (bf16MR-1)*lda+kc || len(b) < kc*bf16NR || len(c) < (bf16MR-1)*ldc+bf16NR ||
		flags&exStore == 0 || (flags&exBias != 0 && len(bias) < bf16NR) {
		panic("gogemm: bf16 kernel: bad panel sizes")
	}
	var bp *float32
	if flags&exBias != 0 {
		bp = &bias[0]
	}
	kernel8x32BF16AVX512(kc, &a[0], lda, &b[0], &c[0], ldc, flags, bp)
}

// roundBF16 sets dst[i] = BF16Bits(src[i]) for every i < len(src).
func roundBF16(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	n16 := 0
	if HasBF16() {
		n16 = len(src) / 16
		if n16 > 0 {
			roundBF16AVX512(n16, &src[0], &dst[0])
		}
	}
	roundBF16Go(dst[16*n16:], src[16*n16:])
}
