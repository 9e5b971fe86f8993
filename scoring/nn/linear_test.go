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
// Forward gives on the stored input: bit for bit, except ForwardCat with
// one output under OpenBLAS, which sums in the pure-Go kernel's order.
func TestForwardFillAndCat(t *testing.T) {
	forEachBackend(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
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
					exactCat := out > 1 || strings.HasPrefix(Backend(), "go/")
					for i := range want {
						if math.Float32bits(fill[i]) != math.Float32bits(want[i]) {
							t.Fatalf("out %d n %d widths %v: ForwardFill y[%d] = %v, Forward %v", out, n, widths, i, fill[i], want[i])
						}
						diff := math.Abs(float64(cat[i] - want[i]))
						if exactCat && diff != 0 || diff > 1e-5*(1+math.Abs(float64(want[i]))) {
							t.Fatalf("out %d n %d widths %v: ForwardCat y[%d] = %v, Forward %v", out, n, widths, i, cat[i], want[i])
						}
					}
				}
			}
		}
	})
}
