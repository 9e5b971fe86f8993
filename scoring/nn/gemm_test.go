package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/scoring/nn/internal/gogemm"
)

// naiveGemm is the reference triple loop, accumulated in float64.
func naiveGemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < k; p++ {
				var av, bv float32
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
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

type gemmFunc func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)

// gemmImpls lists every implementation available in this build.
func gemmImpls() map[string]gemmFunc {
	impls := map[string]gemmFunc{"Gemm/" + Backend(): Gemm}
	for _, kn := range gogemm.Kernels() {
		impls["go/"+kn.Name] = func(ta, tb bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
			gogemm.GemmWith(kn, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		}
	}
	return impls
}

func TestGemmMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := [][3]int{{1, 1, 1}, {3, 5, 7}, {17, 33, 9}, {6, 32, 1}, {31, 47, 300}, {130, 70, 513}, {5, 600, 19}, {2, 3, 0}, {7, 4200, 5}, {301, 20, 30}}
	coefs := [][2]float32{{1, 0}, {0.5, 1}, {-1.5, 0.25}, {0, 2}}
	for name, impl := range gemmImpls() {
		t.Logf("checking %s", name)
		for _, sz := range sizes {
			m, n, k := sz[0], sz[1], sz[2]
			for _, ta := range []bool{false, true} {
				for _, tb := range []bool{false, true} {
					for _, ab := range coefs {
						// Leading dimensions larger than the minimum exercise strides.
						lda, ldb, ldc := k+3, n+1, n+2
						ar := m
						if ta {
							lda, ar = m+2, k
						}
						br := k
						if tb {
							ldb, br = k+1, n
						}
						a := randSlice(rng, ar*lda)
						b := randSlice(rng, br*ldb)
						c := randSlice(rng, m*ldc)
						if ab[1] == 0 {
							for i := range c {
								c[i] = float32(math.NaN()) // beta == 0 must not read C
							}
							// Padding between rows must survive untouched.
							for i := 0; i < m; i++ {
								for j := n; j < ldc; j++ {
									c[i*ldc+j] = 7
								}
							}
						}
						want := append([]float32(nil), c...)
						naiveGemm(ta, tb, m, n, k, ab[0], a, lda, b, ldb, ab[1], want, ldc)
						got := append([]float32(nil), c...)
						impl(ta, tb, m, n, k, ab[0], a, lda, b, ldb, ab[1], got, ldc)
						for i := range want {
							if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*(1+math.Abs(float64(want[i])))*math.Sqrt(float64(k+1)) || math.IsNaN(float64(got[i])) != math.IsNaN(float64(want[i])) {
								t.Fatalf("%s ta=%v tb=%v m=%d n=%d k=%d alpha=%v beta=%v: c[%d]=%v want %v", name, ta, tb, m, n, k, ab[0], ab[1], i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

// backends lists the Gemm backends of this build.
func backends() []string {
	if haveOpenBLAS {
		return []string{"openblas", "go"}
	}
	return []string{"go"}
}

// forEachBackend runs f as a subtest under every backend.
func forEachBackend(t *testing.T, f func(t *testing.T)) {
	defer SetBackend(backends()[0])
	for _, name := range backends() {
		if err := SetBackend(name); err != nil {
			t.Fatal(err)
		}
		t.Run(name, f)
	}
}

func TestSetBackend(t *testing.T) {
	defer SetBackend(backends()[0])
	if err := SetBackend("go"); err != nil || !strings.HasPrefix(Backend(), "go/") {
		t.Fatalf("SetBackend(go): %v, backend %s", err, Backend())
	}
	err := SetBackend("openblas")
	if haveOpenBLAS != (err == nil) {
		t.Fatalf("SetBackend(openblas) = %v with haveOpenBLAS %v", err, haveOpenBLAS)
	}
	if SetBackend("cuda") == nil {
		t.Fatal("unknown backend accepted")
	}
}

func TestGemmRHS(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	forEachBackend(t, func(t *testing.T) {
		for _, tb := range []bool{false, true} {
			for _, ta := range []bool{false, true} {
				m, n, k := 13, 300, 37 // n spans several kernel panels
				ldb := n + 3
				br := k
				if tb {
					ldb, br = k+2, n
				}
				b := randSlice(rng, br*ldb)
				r := newRHS(tb, k, n, b, ldb)
				for _, mm := range []int{m, 1, 70} {
					lda := k + 1
					ar := mm
					if ta {
						lda, ar = mm+1, k
					}
					a := randSlice(rng, ar*lda)
					c := randSlice(rng, mm*n)
					want := append([]float32(nil), c...)
					naiveGemm(ta, tb, mm, n, k, 0.5, a, lda, b, ldb, 2, want, n)
					gemmRHS(ta, mm, 0.5, a, lda, r, 2, c, n)
					for i := range want {
						if math.Abs(float64(c[i]-want[i])) > 1e-3*(1+math.Abs(float64(want[i]))) {
							t.Fatalf("ta=%v tb=%v m=%d: c[%d]=%v want %v", ta, tb, mm, i, c[i], want[i])
						}
					}
				}
			}
		}
	})
}

func TestGemmThreads(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m, n, k := 300, 200, 100
	a, b := randSlice(rng, m*k), randSlice(rng, k*n)
	want := make([]float32, m*n)
	naiveGemm(false, true, m, n, k, 1, a, k, b, k, 0, want, n)
	defer SetThreads(1)
	SetThreads(2)
	for name, impl := range gemmImpls() {
		got := make([]float32, m*n)
		impl(false, true, m, n, k, 1, a, k, b, k, 0, got, n)
		for i := range want {
			if math.Abs(float64(got[i]-want[i])) > 1e-3 {
				t.Fatalf("%s with 2 threads: c[%d]=%v want %v", name, i, got[i], want[i])
			}
		}
	}
}

func TestGemmPanicsOnShortSlice(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for short A")
		}
	}()
	Gemm(false, false, 2, 2, 2, 1, make([]float32, 3), 2, make([]float32, 4), 2, 0, make([]float32, 4), 2)
}

func TestBackendName(t *testing.T) {
	if Backend() == "" {
		t.Fatal("empty backend")
	}
	t.Logf("backend %s", Backend())
}

// gemmBenchShapes are the square reference and the shapes used by the models.
var gemmBenchShapes = []struct {
	name    string
	ta, tb  bool
	m, n, k int
}{
	{"square512", false, false, 512, 512, 512},
	{"square1024", false, false, 1024, 1024, 1024},
	{"lstm_inproj_1600x1200x256", false, true, 1600, 1200, 256},
	{"lstm_recur_64x1200x300", false, true, 64, 1200, 300},
	{"enc_qkv_3840x256x256", false, true, 3840, 256, 256},
	{"enc_ff1_3840x1024x256", false, true, 3840, 1024, 256},
	{"enc_ff2_3840x256x1024", false, true, 3840, 256, 1024},
	{"attn_scores_60x60x64", false, true, 60, 60, 64},
	{"attn_ctx_25x64x60", false, false, 25, 64, 60},
	{"out_proj_1600x16000x256", false, true, 1600, 16000, 256},
}

func BenchmarkGemm(b *testing.B) {
	for _, s := range gemmBenchShapes {
		for name, impl := range gemmImpls() {
			if name != "Gemm/"+Backend() && name != "go/"+gogemm.Best().Name {
				continue // Slower kernels would dominate the run time.
			}
			b.Run(fmt.Sprintf("%s/%s", s.name, name), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(5, 6))
				x := randSlice(rng, s.m*s.k)
				y := randSlice(rng, s.k*s.n)
				c := make([]float32, s.m*s.n)
				lda, ldb := s.k, s.n
				if s.ta {
					lda = s.m
				}
				if s.tb {
					ldb = s.k
				}
				b.ResetTimer()
				for b.Loop() {
					impl(s.ta, s.tb, s.m, s.n, s.k, 1, x, lda, y, ldb, 0, c, s.n)
				}
				b.ReportMetric(2*float64(s.m)*float64(s.n)*float64(s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
