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

// sameBits reports the first index where got and want differ in any bit.
func sameBits(got, want []float32) (int, bool) {
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return i, false
		}
	}
	return 0, true
}

// TestFillAIsGemm checks that a generated A gives bit for bit the product
// of the stored one, on one thread and several.
func TestFillAIsGemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	defer SetThreads(Threads())
	for _, kn := range Kernels() {
		for _, sz := range [][3]int{{1, 1, 1}, {7, 5, 3}, {150, 33, 700}, {300, 9, 256}, {13, 300, 4200}} {
			m, n, k := sz[0], sz[1], sz[2]
			a := randSlice(rng, m*k)
			fill := func(dst []float32, i, p int) { copy(dst, a[i*k+p:]) }
			for _, tb := range []bool{false, true} {
				ldb := n
				if tb {
					ldb = k
				}
				b := randSlice(rng, k*n)
				for _, threads := range []int{1, 3} {
					SetThreads(threads)
					want := make([]float32, m*n)
					GemmWith(kn, false, tb, m, n, k, 1, a, k, b, ldb, 0, want, n)
					got := randSlice(rng, m*n)
					GemmFillA(kn, m, n, k, fill, tb, b, ldb, nil, got, n)
					if i, ok := sameBits(got, want); !ok {
						t.Fatalf("%s %v tb=%v: GemmFillA c[%d] = %v, GemmWith %v", kn.Name, sz, tb, i, got[i], want[i])
					}
					got = randSlice(rng, m*n)
					GemmFillA(kn, m, n, k, fill, tb, nil, 0, PackB(kn, tb, k, n, b, ldb), got, n)
					if i, ok := sameBits(got, want); !ok {
						t.Fatalf("%s %v tb=%v: GemmFillA on packed B c[%d] = %v, GemmWith %v", kn.Name, sz, tb, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestRowDotsIsGemm checks that RowDots gives bit for bit the one-column
// product of the concatenated parts, across block and part boundaries and
// partial groups of rows.
func TestRowDotsIsGemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	for _, kn := range Kernels() {
		for _, m := range []int{1, 5, 31, 32, 33, 100} {
			for _, widths := range [][]int{{1}, {3, 3, 3}, {600, 600, 600}, {300, 257}, {1000}, {0, 5, 0}} {
				k := 0
				var parts [][]float32
				for _, w := range widths {
					parts = append(parts, randSlice(rng, m*w))
					k += w
				}
				a := make([]float32, 0, m*k)
				for i := 0; i < m; i++ {
					for j, w := range widths {
						a = append(a, parts[j][i*w:(i+1)*w]...)
					}
				}
				w := randSlice(rng, k)
				want := make([]float32, m)
				GemmWith(kn, false, false, m, 1, k, 1, a, k, w, 1, 0, want, 1)
				got := randSlice(rng, m)
				RowDots(kn, m, parts, w, got)
				if i, ok := sameBits(got, want); !ok {
					t.Fatalf("%s m=%d widths %v: c[%d] = %v, GemmWith %v", kn.Name, m, widths, i, got[i], want[i])
				}
			}
		}
	}
}

// packedOnly is kn without its ex form: every product packs A and runs
// the plain kernel.
func packedOnly(kn Kernel) Kernel {
	kn.ex = nil
	return kn
}

// TestGemmBiasIsGemmThenEpilogue checks that GemmBias gives bit for bit
// the packed-A GemmWith followed by the bias and the ReLU as separate
// passes (and so, through GemmBias, that plain products of GemmWith and
// GemmPacked that read A in place give the packed bits): across
// partial row panels and column tiles, several blocks of k and of n, a
// strided A and C, B packed or not, on one thread and several, for every
// kernel (those without an ex form take the packed path).
func TestGemmBiasIsGemmThenEpilogue(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 7))
	defer SetThreads(Threads())
	for _, kn := range Kernels() {
		for _, sz := range [][3]int{{1, 1, 1}, {6, 32, 5}, {7, 33, 3}, {150, 70, 700}, {300, 96, 256}, {13, 4200, 40}, {25, 60, 513}} {
			m, n, k := sz[0], sz[1], sz[2]
			lda, ldc := k+3, n+5
			a := randSlice(rng, m*lda)
			bias := randSlice(rng, n)
			bias[0] = float32(math.Copysign(0, -1))
			for _, tb := range []bool{false, true} {
				ldb := n
				if tb {
					ldb = k
				}
				b := randSlice(rng, k*n)
				for _, threads := range []int{1, 3} {
					SetThreads(threads)
					for _, ep := range []Epilogue{{}, {Bias: bias}, {ReLU: true}, {Bias: bias, ReLU: true}} {
						want := randSlice(rng, m*ldc)
						got := append([]float32(nil), want...)
						GemmWith(packedOnly(kn), false, tb, m, n, k, 1, a, lda, b, ldb, 0, want, ldc)
						applyEpilogue(want, ldc, m, n, ep.Bias, ep.ReLU)
						GemmBias(kn, m, n, k, a, lda, tb, b, ldb, nil, got, ldc, ep)
						if i, ok := sameBits(got, want); !ok {
							t.Fatalf("%s %v tb=%v threads=%d bias=%v relu=%v: c[%d] = %v, want %v", kn.Name, sz, tb, threads, ep.Bias != nil, ep.ReLU, i, got[i], want[i])
						}
						if ep.Bias == nil && !ep.ReLU {
							plain := append([]float32(nil), got...)
							GemmWith(kn, false, tb, m, n, k, 1, a, lda, b, ldb, 0, plain, ldc)
							if i, ok := sameBits(plain, want); !ok {
								t.Fatalf("%s %v tb=%v: GemmWith c[%d] = %v, packed A %v", kn.Name, sz, tb, i, plain[i], want[i])
							}
							GemmPacked(false, m, 1, a, lda, PackB(kn, tb, k, n, b, ldb), 0, plain, ldc)
							if i, ok := sameBits(plain, want); !ok {
								t.Fatalf("%s %v tb=%v: GemmPacked c[%d] = %v, packed A %v", kn.Name, sz, tb, i, plain[i], want[i])
							}
						}
						packed := append([]float32(nil), want...)
						for i := range packed {
							packed[i] = float32(math.NaN())
						}
						GemmBias(kn, m, n, k, a, lda, false, nil, 0, PackB(kn, tb, k, n, b, ldb), packed, ldc, ep)
						for i := 0; i < m; i++ {
							if j, ok := sameBits(packed[i*ldc:i*ldc+n], want[i*ldc:i*ldc+n]); !ok {
								t.Fatalf("%s %v tb=%v packed: c[%d][%d] = %v, want %v", kn.Name, sz, tb, i, j, packed[i*ldc+j], want[i*ldc+j])
							}
						}
					}
				}
			}
		}
	}
}

// TestHalfTile checks a kernel's half form (exHalf) against its full tile:
// columns 0 to NR/2-1 the same bits, with A packed and read in place, and
// zeros in the other columns; and that GemmWith takes it at a right edge
// of at most NR/2 columns and gives the packed-only bits there.
func TestHalfTile(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	tested := false
	for _, kn := range Kernels() {
		if !kn.half {
			continue
		}
		tested = true
		mr, nr := kn.MR, kn.NR
		for _, kc := range []int{1, 7, 256} {
			b := randSlice(rng, kc*nr)
			for _, lda := range []int{0, kc + 5} {
				a := randSlice(rng, kc*mr)
				if lda > 0 {
					a = randSlice(rng, (mr-1)*lda+kc)
				}
				full := randSlice(rng, mr*nr)
				kn.ex(kc, a, lda, b, full, nr, exStore, nil)
				half := randSlice(rng, mr*nr)
				kn.ex(kc, a, lda, b, half, nr, exStore|exHalf, nil)
				for i := 0; i < mr; i++ {
					if j, ok := sameBits(half[i*nr:i*nr+nr/2], full[i*nr:i*nr+nr/2]); !ok {
						t.Fatalf("%s kc=%d lda=%d: half c[%d][%d] = %v, full %v", kn.Name, kc, lda, i, j, half[i*nr+j], full[i*nr+j])
					}
					for j := nr / 2; j < nr; j++ {
						if half[i*nr+j] != 0 {
							t.Fatalf("%s kc=%d lda=%d: half c[%d][%d] = %v, want 0", kn.Name, kc, lda, i, j, half[i*nr+j])
						}
					}
				}
			}
		}
		// Right edges of 1, NR/2 and NR/2+1 columns (the last one takes
		// the full tile), through the packed and the in-place A.
		for _, n := range []int{nr + 1, nr + nr/2, nr + nr/2 + 1, 300} {
			m, k := 13, 40
			a, b := randSlice(rng, m*k), randSlice(rng, k*n)
			want := make([]float32, m*n)
			GemmWith(packedOnly(kn), false, false, m, n, k, 1, a, k, b, n, 0, want, n)
			for _, name := range []string{"packed", "in place"} {
				got := randSlice(rng, m*n)
				if name == "packed" {
					GemmPacked(false, m, 1, a, k, PackB(kn, false, k, n, b, n), 0, got, n)
				} else {
					GemmBias(kn, m, n, k, a, k, false, b, n, nil, got, n, Epilogue{})
				}
				if i, ok := sameBits(got, want); !ok {
					t.Fatalf("%s n=%d %s: c[%d] = %v, want %v", kn.Name, n, name, i, got[i], want[i])
				}
			}
		}
	}
	if !tested {
		t.Skip("no kernel of this CPU has a half form")
	}
}
