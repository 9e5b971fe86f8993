//go:build amd64

package gogemm

import (
	"fmt"

	"golang.org/x/sys/cpu"
)

//go:noescape
func kernel6x16AVX2(kc int, a, b, c *float32, ldc int, store int)

//go:noescape
func kernel6x32AVX512(kc int, a, b, c *float32, ldc int, store int)

// asmKernel wraps an assembly micro-kernel with the bounds checks that the
// assembly cannot do.
func asmKernel(name string, mr, nr int, f func(kc int, a, b, c *float32, ldc int, store int)) Kernel {
	return Kernel{Name: name, MR: mr, NR: nr, fn: func(kc int, a, b, c []float32, ldc int, store bool) {
		if kc <= 0 || len(a) < kc*mr || len(b) < kc*nr || len(c) < (mr-1)*ldc+nr {
			panic(fmt.Sprintf("gogemm: %s: bad panel sizes", name))
		}
		s := 0
		if store {
			s = 1
		}
		f(kc, &a[0], &b[0], &c[0], ldc, s)
	}}
}

var (
	avx2Kernel   = asmKernel("avx2-6x16", 6, 16, kernel6x16AVX2)
	avx512Kernel = asmKernel("avx512-6x32", 6, 32, kernel6x32AVX512)
)

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
