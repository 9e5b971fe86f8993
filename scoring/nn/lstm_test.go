package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestInferIsForward checks that LSTM.Infer and BiLSTM.Infer give
// Forward's outputs and final states bit for bit: both directions, padded
// sequences (one of length 0), batches that are not whole tiles and gate
// widths with a narrow right edge, on every backend.
func TestInferIsForward(t *testing.T) {
	forEachBackend(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(21, 22))
		for _, sz := range [][4]int{{1, 1, 3, 2}, {7, 5, 9, 4}, {13, 11, 16, 37}, {6, 25, 128, 300}} {
			nb, nt, in, hidden := sz[0], sz[1], sz[2], sz[3]
			x := NewTensor(nb, nt, in)
			fillNormal(rng, x.Data, 1)
			lengths := make([]int, nb)
			for b := range lengths {
				lengths[b] = rng.IntN(nt + 1)
			}
			lengths[0] = nt
			if nb > 2 {
				lengths[2] = 0
			}
			name := fmt.Sprint(sz)
			bi := NewBiLSTM("bi", in, hidden, rng)
			for _, l := range []*LSTM{bi.Fwd, bi.Bwd} {
				out, hN, cN, _ := l.Forward(x, lengths, nil, nil)
				iout, ihN, icN := l.Infer(x, lengths)
				sameTensorBits(t, name+" out", iout, out)
				sameTensorBits(t, name+" hN", ihN, hN)
				sameTensorBits(t, name+" cN", icN, cN)
			}
			want, _ := bi.Forward(x, lengths)
			got := bi.Infer(x, lengths)
			sameTensorBits(t, name+" bi out", got.Out, want.Out)
			sameTensorBits(t, name+" bi hFwd", got.HFwd, want.HFwd)
			sameTensorBits(t, name+" bi cFwd", got.CFwd, want.CFwd)
			sameTensorBits(t, name+" bi hBwd", got.HBwd, want.HBwd)
			sameTensorBits(t, name+" bi cBwd", got.CBwd, want.CBwd)
		}
	})
}

func sameTensorBits(t *testing.T, what string, got, want *Tensor) {
	t.Helper()
	if len(got.Data) != len(want.Data) {
		t.Fatalf("%s: %d values, want %d", what, len(got.Data), len(want.Data))
	}
	for i := range want.Data {
		if math.Float32bits(got.Data[i]) != math.Float32bits(want.Data[i]) {
			t.Fatalf("%s: [%d] = %v, want %v", what, i, got.Data[i], want.Data[i])
		}
	}
}
