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
