//go:build amd64

package vecmath

import "golang.org/x/sys/cpu"

//go:noescape
func dotAVX2(a, b *float32, n int) float32

var hasAVX2 = cpu.X86.HasAVX2

// dotVec sets *s to dot32(a, b) with the AVX2 kernel and reports whether
// it could (len(a) is a positive multiple of 32).
func dotVec(a, b []float32, s *float32) bool {
	if !hasAVX2 {
		return false
	}
	_ = b[len(a)-1]
	*s = dotAVX2(&a[0], &b[0], len(a))
	return true
}

//go:noescape
func addAVX2(dst, x *float32, n int)

// addVec adds x to dst with the AVX2 kernel and reports whether it could
// (len(dst) is a positive multiple of 32).
func addVec(dst, x []float32) bool {
	if !hasAVX2 {
		return false
	}
	_ = x[len(dst)-1]
	addAVX2(&dst[0], &x[0], len(dst))
	return true
}

//go:noescape
func prefetchLines(p *float32, n int)

// Prefetch asks the CPU to bring x's cache lines into its caches, so that
// a later read of x does not wait on memory. It changes nothing else.
func Prefetch(x []float32) {
	if len(x) > 0 {
		prefetchLines(&x[0], len(x))
	}
}
