package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// A whitener with p = 1 and no shrinkage maps its own sample to one whose
// covariance is the identity; with p = 0 it only centres it.
func TestWhiteningIdentityCovariance(t *testing.T) {
	const d, n = 8, 4000
	r := rand.New(rand.NewPCG(1, 2))
	mix := make([]float64, d*d)
	for i := range mix {
		mix[i] = r.NormFloat64()
	}
	gs := make([][]float32, n)
	for k := range gs {
		z := make([]float64, d)
		for i := range z {
			z[i] = r.NormFloat64()
		}
		g := make([]float32, d)
		for i := range d {
			s := 3.0
			for j := range d {
				s += mix[i*d+j] * z[j] * float64(j+1)
			}
			g[i] = float32(s)
		}
		gs[k] = g
	}
	for _, p := range []float64{1, 0} {
		mu0, w0 := Whitening(gs, p, 0)
		wh := testWhitener{mu0, w0, d}
		cov := make([]float64, d*d)
		mean := make([]float64, d)
		for _, g := range gs {
			x := wh.apply(g)
			for i := range d {
				mean[i] += float64(x[i]) / n
				for j := range d {
					cov[i*d+j] += float64(x[i]) * float64(x[j]) / n
				}
			}
		}
		for i := range d {
			if math.Abs(mean[i]) > 1e-4 {
				t.Errorf("p=%g: mean[%d] = %g, want 0", p, i, mean[i])
			}
		}
		if p == 1 {
			for i := range d {
				for j := range d {
					want := 0.0
					if i == j {
						want = 1
					}
					if math.Abs(cov[i*d+j]-want) > 1e-3 {
						t.Errorf("p=1: cov[%d][%d] = %g, want %g", i, j, cov[i*d+j], want)
					}
				}
			}
		} else if cov[0] < 2 {
			t.Errorf("p=0 changed the scale: cov[0][0] = %g", cov[0])
		}
	}
}

type testWhitener struct {
	mu, w []float64
	d     int
}

func (t testWhitener) apply(g []float32) []float32 {
	out := make([]float32, t.d)
	for i := range t.d {
		var s float64
		for j := range t.d {
			s += t.w[i*t.d+j] * (float64(g[j]) - t.mu[j])
		}
		out[i] = float32(s)
	}
	return out
}
