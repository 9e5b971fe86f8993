package gogemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestBF16Bits(t *testing.T) {
	for _, c := range []struct {
		x    float32
		want uint16
	}{
		{1, 0x3f80},
		{-2, 0xc000},
		{math.Float32frombits(0x3f808000), 0x3f80}, // a tie rounds to the even neighbour
		{math.Float32frombits(0x3f818000), 0x3f82},
		{math.Float32frombits(0x3f808001), 0x3f81},
		{math.Float32frombits(0x7f7fffff), 0x7f80}, // the largest float32 rounds to +Inf
		{float32(math.Inf(-1)), 0xff80},
	} {
		if got := BF16Bits(c.x); got != c.want {
			t.Errorf("BF16Bits(%g) = %#x, want %#x", c.x, got, c.want)
		}
	}
	if n := bf16Value(BF16Bits(float32(math.NaN()))); !math.IsNaN(float64(n)) {
		t.Errorf("NaN rounds to %g", n)
	}
}

// TestRoundBF16 checks the vector rounding against BF16Bits on random
// values, ties, infinities, NaNs and subnormals.
func TestRoundBF16(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	src := randSlice(rng, 1000)
	for i := range 200 {
		src[i] = math.Float32frombits(rng.Uint32())
	}
	for i, b := range []uint32{0x3f808000, 0x3f818000, 0x7f7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0x7fffffff, 0xffffffff, 0x7f800001, 0x00000001, 0x80008000} {
		src[300+i] = math.Float32frombits(b)
	}
	for _, n := range []int{0, 1, 15, 16, 17, 999, 1000} {
		got := make([]uint16, n)
		roundBF16(got, src[:n])
		for i, x := range src[:n] {
			if got[i] != BF16Bits(x) {
				t.Fatalf("n=%d: %#x rounds to %#x, want %#x", n, math.Float32bits(x), got[i], BF16Bits(x))
			}
		}
	}
}

// naiveBF16 is C = bf16(A)·bf16(op(B)) in float64, then the epilogue.
func naiveBF16(m, n, k int, a []float32, transB bool, b []float32, ep Epilogue) []float64 {
	r := func(x float32) float64 { return float64(bf16Value(BF16Bits(x))) }
	out := make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				bv := b[p*n+j]
				if transB {
					bv = b[j*k+p]
				}
				s += r(a[i*k+p]) * r(bv)
			}
			if ep.Bias != nil {
				s += float64(ep.Bias[j])
			}
			if ep.ReLU {
				s = max(s, 0)
			}
			out[i*n+j] = s
		}
	}
	return out
}

// TestGemmBF16 checks the bfloat16 product against float64 arithmetic on
// the rounded operands, over shapes with partial tiles and odd depths,
// and, on a CPU with AVX512_BF16, that the AVX-512 kernel gives the bits
// of the scalar one.
func TestGemmBF16(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, sz := range [][3]int{{1, 1, 1}, {6, 32, 2}, {8, 32, 2}, {7, 33, 5}, {16, 64, 3}, {13, 70, 256}, {100, 40, 31}, {200, 65, 1024}} {
		m, n, k := sz[0], sz[1], sz[2]
		for _, transB := range []bool{false, true} {
			for _, ep := range []Epilogue{{}, {Bias: randSlice(rng, n), ReLU: true}} {
				a, b := randSlice(rng, m*k), randSlice(rng, k*n)
				ldb := n
				if transB {
					ldb = k
				}
				pb := PackBF16(transB, k, n, b, ldb)
				got := make([]float32, m*n)
				GemmBF16(m, a, k, pb, got, n, ep)
				want := naiveBF16(m, n, k, a, transB, b, ep)
				for i, w := range want {
					// float32 sums of k exact products: error within
					// k units of the last place of the largest partial sum.
					if tol := 1e-6 * float64(k) * math.Sqrt(float64(k)) * 8; math.Abs(float64(got[i])-w) > tol+1e-6*math.Abs(w) {
						t.Fatalf("%v transB=%v relu=%v: C[%d] = %g, want %g", sz, transB, ep.ReLU, i, got[i], w)
					}
				}
				if !HasBF16() {
					continue
				}
				slow := make([]float32, m*n)
				gemmBF16With(bf16Go, m, a, k, pb, slow, n, ep)
				for i := range slow {
					if math.Float32bits(slow[i]) != math.Float32bits(got[i]) {
						t.Fatalf("%v transB=%v: AVX-512 kernel C[%d] = %g, scalar %g", sz, transB, i, got[i], slow[i])
					}
				}
			}
		}
	}
	if !HasBF16() {
		t.Log("no AVX512_BF16 on this CPU: the scalar kernel alone was checked")
	}
}

// TestGemmBF16Strided checks row strides larger than the widths.
func TestGemmBF16Strided(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	m, n, k, lda, ldc := 9, 40, 11, 15, 47
	a := randSlice(rng, m*lda)
	b := randSlice(rng, k*n)
	pb := PackBF16(false, k, n, b, n)
	c := randSlice(rng, m*ldc)
	keep := append([]float32(nil), c...)
	GemmBF16(m, a, lda, pb, c, ldc, Epilogue{})
	dense := make([]float32, m*k)
	for i := range m {
		copy(dense[i*k:], a[i*lda:i*lda+k])
	}
	want := naiveBF16(m, n, k, dense, false, b, Epilogue{})
	for i := range m {
		for j := range ldc {
			got := c[i*ldc+j]
			if j >= n {
				if got != keep[i*ldc+j] {
					t.Fatalf("C[%d][%d] past the product changed", i, j)
				}
				continue
			}
			if math.Abs(float64(got)-want[i*n+j]) > 1e-4 {
				t.Fatalf("C[%d][%d] = %g, want %g", i, j, got, want[i*n+j])
			}
		}
	}
}

// BenchmarkLinearPrecision compares the packed float32 product with the
// bfloat16 one on the shapes of the generative model's layers: 1,536 rows
// (a batch of 64 sequences of 24 tokens) times width 256 into 256, 1,024
// and 12,000 (the output projection) columns. Run with -cpu=1.
func BenchmarkLinearPrecision(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	const m, k = 1536, 256
	for _, n := range []int{256, 1024, 12000} {
		a, w := randSlice(rng, m*k), randSlice(rng, n*k)
		c := make([]float32, m*n)
		p32 := PackB(Best(), true, k, n, w, k)
		p16 := PackBF16(true, k, n, w, k)
		flops := 2 * float64(m) * float64(n) * float64(k)
		b.Run(fmt.Sprintf("fp32/n=%d", n), func(b *testing.B) {
			for range b.N {
				GemmBias(Best(), m, n, k, a, k, true, w, k, p32, c, n, Epilogue{})
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(fmt.Sprintf("bf16/n=%d", n), func(b *testing.B) {
			for range b.N {
				GemmBF16(m, a, k, p16, c, n, Epilogue{})
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
