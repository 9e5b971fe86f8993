package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAttentionApplyIsForward checks that the inference forms give the
// bits of Forward: Apply on the same inputs, with and without key padding
// and the causal mask, and ApplyShared on distinct key blocks against
// Apply on the batch where each entry has its block copied in.
func TestAttentionApplyIsForward(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	const d, heads = 32, 4
	a := NewMultiHeadAttention("att", d, heads, rng)
	for _, l := range []*Linear{a.Q, a.K, a.V, a.O} {
		copy(l.B.Value.Data, randSlice(rng, d))
	}
	same := func(name string, got, want *Tensor) {
		t.Helper()
		for i := range want.Data {
			if math.Float32bits(got.Data[i]) != math.Float32bits(want.Data[i]) {
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

	// Three distinct sources shared by five entries.
	src := []int{2, 0, 2, 1, 0}
	blocks := FromData(randSlice(rng, 3*tk*d), 3, tk, d)
	blockPad := PadMask([]int{4, 9, 6}, tk)
	full := NewTensor(nb, tk, d)
	fullPad := make([]bool, 0, nb*tk)
	for b, u := range src {
		copy(full.Data[b*tk*d:(b+1)*tk*d], blocks.Data[u*tk*d:(u+1)*tk*d])
		fullPad = append(fullPad, blockPad[u*tk:(u+1)*tk]...)
	}
	same("ApplyShared", a.ApplyShared(q, blocks, src, blockPad), a.Apply(q, full, fullPad, false))
}
