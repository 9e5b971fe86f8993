package nn

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// catRows returns the (n, Σw) matrix whose row i is the concatenation of
// the rows i of parts.
func catRows(n int, parts ...[]float32) []float32 {
	var x []float32
	for i := 0; i < n; i++ {
		for _, p := range parts {
			w := len(p) / n
			x = append(x, p[i*w:(i+1)*w]...)
		}
	}
	return x
}

// TestForwardFillAndCat checks that ForwardFill and ForwardCat give what
// Forward gives on the stored input: bit for bit under the "go" backend,
// within float rounding under "openblas" (they run on the pure-Go kernel
// with either).
func TestForwardFillAndCat(t *testing.T) {
	forEachBackend(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		exact := strings.HasPrefix(Backend(), "go/")
		for _, out := range []int{1, 3, 300} {
			for _, n := range []int{1, 5, 33, 130} {
				for _, widths := range [][]int{{600, 600, 600}, {2, 7}, {300}} {
					in := 0
					var parts [][]float32
					for _, w := range widths {
						parts = append(parts, randSlice(rng, n*w))
						in += w
					}
					l := NewLinear("l", in, out, true, rng)
					copy(l.B.Value.Data, randSlice(rng, out))
					x := catRows(n, parts...)
					want := l.Forward(FromData(x, n, in)).Data
					fill := make([]float32, n*out)
					l.ForwardFill(n, func(dst []float32, i, p int) { copy(dst, x[i*in+p:]) }, fill)
					cat := make([]float32, n*out)
					l.ForwardCat(cat, parts...)
					for i, w := range want {
						tol := 1e-5 * (1 + math.Abs(float64(w)))
						for name, got := range map[string]float32{"ForwardFill": fill[i], "ForwardCat": cat[i]} {
							if exact && math.Float32bits(got) != math.Float32bits(w) || math.Abs(float64(got-w)) > tol {
								t.Fatalf("out %d n %d widths %v: %s y[%d] = %v, Forward %v", out, n, widths, name, i, got, w)
							}
						}
					}
				}
			}
		}
	})
}

// TestForwardIsGemmThenBias checks that Forward, with the bias added by the
// product's tiles (and, for a ReLU block, the activation too), gives bit
// for bit a plain Gemm followed by the bias and the activation, and that a
// packed layer (Pack) gives the same bits until Unpack, under either
// backend.
func TestForwardIsGemmThenBias(t *testing.T) {
	forEachBackend(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 10))
		for _, sz := range [][3]int{{1, 1, 1}, {7, 33, 5}, {130, 300, 600}, {64, 257, 40}} {
			n, in, out := sz[0], sz[1], sz[2]
			l := NewLinear("l", in, out, true, rng)
			copy(l.B.Value.Data, randSlice(rng, out))
			x := FromData(randSlice(rng, n*in), n, in)
			want := make([]float32, n*out)
			Gemm(false, true, n, out, in, 1, x.Data, in, l.W.Value.Data, in, 0, want, out)
			addBiasRows(want, l.B.Value.Data)
			relu := make([]float32, len(want))
			for i, v := range want {
				relu[i] = max(v, 0)
			}
			check := func(name string, got, want []float32) {
				t.Helper()
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%v %s: y[%d] = %v, want %v", sz, name, i, got[i], want[i])
					}
				}
			}
			check("Forward", l.Forward(x).Data, want)
			check("forward relu", l.forward(x, true).Data, relu)
			l.Pack()
			if l.Packed() != strings.HasPrefix(Backend(), "go/") {
				t.Fatalf("Packed() = %v under %s", l.Packed(), Backend())
			}
			check("packed Forward", l.Forward(x).Data, want)
			check("packed forward relu", l.forward(x, true).Data, relu)
			l.Unpack()
			l.W.Value.Data[0] += 1
			if got := l.Forward(x).Data; got[0] == want[0] {
				t.Fatalf("%v: Forward after Unpack and a weight change kept y[0] = %v", sz, got[0])
			}
		}
	})
}
