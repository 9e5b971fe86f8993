package gogemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

func naive(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < k; p++ {
				ai, bi := i*lda+p, p*ldb+j
				if transA {
					ai = p*lda + i
				}
				if transB {
					bi = j*ldb + p
				}
				av, bv := a[ai], b[bi]
				s += float64(av) * float64(bv)
			}
			v := float64(alpha) * s
			if beta != 0 {
				v += float64(beta) * float64(c[i*ldc+j])
			}
			c[i*ldc+j] = float32(v)
		}
	}
}

func randSlice(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(rng.NormFloat64())
	}
	return s
}

func TestKernelsAndPacked(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, kn := range Kernels() {
		for _, sz := range [][3]int{{1, 1, 1}, {13, 17, 3}, {150, 9, 260}, {5, 4100, 7}} {
			m, n, k := sz[0], sz[1], sz[2]
			for _, ta := range []bool{false, true} {
				for _, tb := range []bool{false, true} {
					lda, ldb := k, n
					if ta {
						lda = m
					}
					if tb {
						ldb = k
					}
					a, b := randSlice(rng, m*k), randSlice(rng, k*n)
					for _, beta := range []float32{0, 1, -0.5} {
						c0 := randSlice(rng, m*n)
						want := append([]float32(nil), c0...)
						naive(ta, tb, m, n, k, 1.5, a, lda, b, ldb, beta, want, n)
						got := append([]float32(nil), c0...)
						GemmWith(kn, ta, tb, m, n, k, 1.5, a, lda, b, ldb, beta, got, n)
						packed := append([]float32(nil), c0...)
						GemmPacked(ta, m, 1.5, a, lda, PackB(kn, tb, k, n, b, ldb), beta, packed, n)
						for i := range want {
							tol := 1e-4 * math.Sqrt(float64(k)) * (1 + math.Abs(float64(want[i])))
							if math.Abs(float64(got[i]-want[i])) > tol || math.Abs(float64(packed[i]-want[i])) > tol {
								t.Fatalf("%s %v ta=%v tb=%v beta=%v: c[%d] = %v (packed %v), want %v", kn.Name, sz, ta, tb, beta, i, got[i], packed[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}
