package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLayerNormIsRowLoops checks Forward and Apply bit for bit against a
// plain loop over each row (sum, mean, squared deviations, variance, then
// the scaled rows), for row counts around the group of 16 rows that is
// done in vector lanes and widths around the vector width.
func TestLayerNormIsRowLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, n := range []int{1, 15, 16, 17, 50} {
		for _, d := range []int{3, 16, 256, 260} {
			ln := NewLayerNorm("ln", d)
			copy(ln.Gain.Value.Data, randSlice(rng, d))
			copy(ln.Bias.Value.Data, randSlice(rng, d))
			x := FromData(randSlice(rng, n*d), n, d)
			want, wantHat := make([]float32, n*d), make([]float32, n*d)
			for r := 0; r < n; r++ {
				row := x.Data[r*d : (r+1)*d]
				var mean, variance float32
				for _, v := range row {
					mean += v
				}
				mean /= float32(d)
				for _, v := range row {
					variance += (v - mean) * (v - mean)
				}
				variance /= float32(d)
				rstd := float32(1 / math.Sqrt(float64(variance+ln.Eps)))
				for j, v := range row {
					h := (v - mean) * rstd
					wantHat[r*d+j] = h
					want[r*d+j] = h*ln.Gain.Value.Data[j] + ln.Bias.Value.Data[j]
				}
			}
			y, c := ln.Forward(x)
			applied := ln.Apply(x)
			for i := range want {
				if math.Float32bits(y.Data[i]) != math.Float32bits(want[i]) || math.Float32bits(c.xhat.Data[i]) != math.Float32bits(wantHat[i]) || math.Float32bits(applied.Data[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n=%d d=%d: y[%d] = %v (xhat %v, Apply %v), want %v (%v)", n, d, i, y.Data[i], c.xhat.Data[i], applied.Data[i], want[i], wantHat[i])
				}
			}
		}
	}
}
