//go:build !amd64

package gogemm

// Kernels returns every micro-kernel this CPU can run, fastest last.
func Kernels() []Kernel { return []Kernel{Generic} }

// HasBF16 reports whether this CPU runs a vector bfloat16 kernel: none
// outside amd64.
func HasBF16() bool { return false }

// bf16AVX512 is never chosen outside amd64 (HasBF16 is false); it is the
// scalar kernel so that bf16Kernel compiles everywhere.
var bf16AVX512 bf16Func = bf16Go

// roundBF16 sets dst[i] = BF16Bits(src[i]) for every i < len(src).
func roundBF16(dst []uint16, src []float32) { roundBF16Go(dst, src) }
