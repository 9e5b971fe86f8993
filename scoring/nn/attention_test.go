package nn

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/scoring/internal/vecmath"
)

// TestAttentionApplyIsForward checks that the inference forms give the
// bits of Forward: Apply on the same inputs, with and without key padding
// and the causal mask, and ApplyShared on distinct key blocks against
// Apply on the batch where each entry has its block copied in. ApplyShared
// projects fewer rows than the expanded batch, which OpenBLAS may block
// differently, so under that backend it is held to float rounding only.
func TestAttentionApplyIsForward(t *testing.T) { forEachBackend(t, testAttentionApplyIsForward) }

func testAttentionApplyIsForward(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	const d, heads = 32, 4
	a := NewMultiHeadAttention("att", d, heads, rng)
	for _, l := range []*Linear{a.Q, a.K, a.V, a.O} {
		copy(l.B.Value.Data, randSlice(rng, d))
	}
	exact := strings.HasPrefix(Backend(), "go/")
	same := func(name string, got, want *Tensor) {
		t.Helper()
		for i := range want.Data {
			if math.Float32bits(got.Data[i]) != math.Float32bits(want.Data[i]) && (exact || name != "ApplyShared" || math.Abs(float64(got.Data[i]-want.Data[i])) > 1e-5*(1+math.Abs(float64(want.Data[i])))) {
				t.Fatalf("%s: y[%d] = %v, want %v", name, i, got.Data[i], want.Data[i])
			}
		}
	}
	const nb, tq, tk = 5, 7, 9
	q := FromData(randSlice(rng, nb*tq*d), nb, tq, d)
	kv := FromData(randSlice(rng, nb*tk*d), nb, tk, d)
	pad := PadMask([]int{9, 3, 0, 8, 1}, tk)
	for _, p := range [][]bool{nil, pad} {
		want, c := a.Forward(q, kv, p, false)
		c.Release()
		same("Apply", a.Apply(q, kv, p, false), want)
	}
	self, c := a.SelfForward(q, nil, true)
	c.Release()
	same("causal Apply", a.Apply(q, q, nil, true), self)

	// Three distinct sources shared by five entries, scattered and in runs
	// (entries of a run attend in one product per head).
	blocks := FromData(randSlice(rng, 3*tk*d), 3, tk, d)
	blockPad := PadMask([]int{4, 9, 6}, tk)
	for _, src := range [][]int{{2, 0, 2, 1, 0}, {2, 2, 0, 0, 0}, {1, 1, 1, 1, 1}, {0, 1, 1, 2, 2}} {
		full := NewTensor(nb, tk, d)
		fullPad := make([]bool, 0, nb*tk)
		for b, u := range src {
			copy(full.Data[b*tk*d:(b+1)*tk*d], blocks.Data[u*tk*d:(u+1)*tk*d])
			fullPad = append(fullPad, blockPad[u*tk:(u+1)*tk]...)
		}
		for _, p := range [][]bool{nil, blockPad} {
			fp := fullPad
			if p == nil {
				fp = nil
			}
			same("ApplyShared", a.ApplyShared(q, blocks, src, p), a.Apply(q, full, fp, false))
		}
	}
}

// softmaxLoops is maskedSoftmax as plain loops: the maximum of the visible
// unpadded entries, e^(x - max) of the entries up to the last unpadded
// visible one (padded ones -Inf), the sum, and the scaled row.
func softmaxLoops(row []float32, pad []bool, visible int) {
	mx := float32(math.Inf(-1))
	for j := 0; j < visible; j++ {
		if (pad == nil || !pad[j]) && row[j] > mx {
			mx = row[j]
		}
	}
	if math.IsInf(float64(mx), -1) {
		clear(row)
		return
	}
	for pad != nil && visible > 0 && pad[visible-1] {
		visible--
	}
	for j := 0; j < visible; j++ {
		if pad != nil && pad[j] {
			row[j] = float32(math.Inf(-1))
		}
	}
	sum := vecmath.ExpShiftInPlace(row[:visible], mx)
	clear(row[visible:])
	inv := 1 / sum
	for j := 0; j < visible; j++ {
		if pad != nil && pad[j] {
			row[j] = 0
			continue
		}
		row[j] *= inv
	}
}

// TestMaskedSoftmaxIsLoops checks maskedSoftmax bit for bit against the
// plain loops, with no mask, trailing padding, padding inside the row,
// causal cut-offs and rows with nothing visible.
func TestMaskedSoftmaxIsLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	for _, n := range []int{1, 7, 16, 25, 60} {
		masks := [][]bool{nil, make([]bool, n), PadMask([]int{n / 2}, n), PadMask([]int{0}, n)}
		inner := make([]bool, n)
		inner[0] = true
		masks = append(masks, inner)
		for _, pad := range masks {
			for _, visible := range []int{n, 1, (n + 1) / 2, 0} {
				row := randSlice(rng, n)
				for i := range row {
					row[i] *= 5
				}
				want := append([]float32(nil), row...)
				softmaxLoops(want, pad, visible)
				maskedSoftmax(row, pad, visible)
				for j := range want {
					if math.Float32bits(row[j]) != math.Float32bits(want[j]) {
						t.Fatalf("n=%d pad=%v visible=%d: p[%d] = %v, want %v", n, pad, visible, j, row[j], want[j])
					}
				}
			}
		}
	}
}
