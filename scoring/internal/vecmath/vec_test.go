package vecmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

func randVals(rng *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * scale)
	}
	return x
}

func TestSliceFunctions(t *testing.T) {
	t.Logf("accelerated: %v", Accelerated())
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 100; n++ {
		for _, scale := range []float64{0.01, 1, 10, 200} {
			x := randVals(rng, n, scale)
			if n > 3 {
				x[1], x[2], x[3] = 0, float32(math.Copysign(0, -1)), 1e-30
			}
			sig := append([]float32(nil), x...)
			SigmoidInPlace(sig)
			th := append([]float32(nil), x...)
			TanhInPlace(th)
			for i, v := range x {
				xf := float64(v)
				ws := 1 / (1 + math.Exp(-xf))
				if v > -87 && ulpErr(sig[i], ws) > 6 || math.Abs(float64(sig[i])-ws) > 2e-38 && v <= -87 {
					t.Fatalf("SigmoidInPlace(%v) = %v, want %v", v, sig[i], ws)
				}
				if wt := math.Tanh(xf); ulpErr(th[i], wt) > 6 {
					t.Fatalf("TanhInPlace(%v) = %v, want %v", v, th[i], wt)
				}
			}
			m := Max(x)
			wm := float32(math.Inf(-1))
			for _, v := range x {
				wm = max(wm, v)
			}
			if m != wm {
				t.Fatalf("Max = %v, want %v", m, wm)
			}
			if n == 0 {
				continue
			}
			var ws float64
			for _, v := range x {
				ws += math.Exp(float64(v) - float64(m))
			}
			if s := SumExp(x, m); math.Abs(float64(s)-ws) > 1e-6*ws*math.Sqrt(float64(n)) {
				t.Fatalf("SumExp = %v, want %v", s, ws)
			}
			e := append([]float32(nil), x...)
			if s := ExpShiftInPlace(e, m); math.Abs(float64(s)-ws) > 1e-6*ws*math.Sqrt(float64(n)) {
				t.Fatalf("ExpShiftInPlace sum = %v, want %v", s, ws)
			}
			for i, v := range x {
				if w := math.Exp(max(float64(v-m), -87)); ulpErr(e[i], w) > 4 {
					t.Fatalf("ExpShiftInPlace: e^(%v-%v) = %v, want %v", v, m, e[i], w)
				}
			}
		}
	}
}

func BenchmarkTanhInPlace(b *testing.B) {
	x := randVals(rand.New(rand.NewPCG(1, 2)), 1200, 2)
	y := make([]float32, len(x))
	for b.Loop() {
		copy(y, x)
		TanhInPlace(y)
	}
	b.ReportMetric(float64(len(x)*b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
}

// TestGELUTanhIntoIsThreePasses checks that the fused GELU gives the bits of
// its three passes (inner values, TanhInPlace, outer product), in place and
// not, for lengths around the vector width and values from tiny to past
// tanh's saturation.
func TestGELUTanhIntoIsThreePasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{0, 1, 15, 16, 17, 33, 250, 1024} {
		for _, scale := range []float64{1e-3, 1, 4, 30} {
			src := randVals(rng, n, scale)
			if n > 2 {
				src[0], src[1] = float32(math.Copysign(0, -1)), 0
			}
			want := make([]float32, n)
			for i, x := range src {
				want[i] = geluC * (x + 0.044715*x*x*x)
			}
			TanhInPlace(want)
			for i, x := range src {
				want[i] = 0.5 * x * (1 + want[i])
			}
			got := make([]float32, n)
			GELUTanhInto(got, src)
			inPlace := append([]float32(nil), src...)
			GELUTanhInto(inPlace, inPlace)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) || math.Float32bits(inPlace[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n=%d scale=%v: x=%v gives %v (in place %v), want %v", n, scale, src[i], got[i], inPlace[i], want[i])
				}
			}
		}
	}
}

// TestRowMeanVarAndNormRowAreLoops checks the layer-normalisation helpers
// bit for bit against plain loops over each row, for row counts around the
// group of 16 and widths around the vector width.
func TestRowMeanVarAndNormRowAreLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, rows := range []int{0, 1, 15, 16, 17, 40} {
		for _, d := range []int{1, 5, 16, 31, 256, 300} {
			x := randVals(rng, rows*d, 3)
			for i := range x {
				x[i] += 0.5 // a mean away from zero
			}
			mean, variance := make([]float32, rows), make([]float32, rows)
			RowMeanVar(x, d, mean, variance)
			gain, bias := randVals(rng, d, 1), randVals(rng, d, 1)
			for r := 0; r < rows; r++ {
				row := x[r*d : (r+1)*d]
				var m, s float32
				for _, v := range row {
					m += v
				}
				m /= float32(d)
				for _, v := range row {
					s += (v - m) * (v - m)
				}
				s /= float32(d)
				if math.Float32bits(mean[r]) != math.Float32bits(m) || math.Float32bits(variance[r]) != math.Float32bits(s) {
					t.Fatalf("rows=%d d=%d row %d: mean %v var %v, want %v %v", rows, d, r, mean[r], variance[r], m, s)
				}
				rstd := float32(1 / math.Sqrt(float64(s+1e-5)))
				y, xhat, y2 := make([]float32, d), make([]float32, d), make([]float32, d)
				NormRow(row, y, xhat, m, rstd, gain, bias)
				NormRow(row, y2, nil, m, rstd, gain, bias)
				for j, v := range row {
					h := (v - m) * rstd
					want := h*gain[j] + bias[j]
					if math.Float32bits(xhat[j]) != math.Float32bits(h) || math.Float32bits(y[j]) != math.Float32bits(want) || math.Float32bits(y2[j]) != math.Float32bits(want) {
						t.Fatalf("rows=%d d=%d row %d col %d: xhat %v y %v (no xhat %v), want %v %v", rows, d, r, j, xhat[j], y[j], y2[j], h, want)
					}
				}
			}
		}
	}
}

// MulInto and AbsDiffInto give the bits of their scalar loops, at lengths
// around the vector width, with zeros, infinities and NaNs among the
// values.
func TestMulAndAbsDiffAreLoops(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-40, -3}
	for _, n := range []int{0, 1, 15, 16, 17, 33, 600, 1000} {
		a, b := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
			if r.IntN(8) == 0 {
				a[i] = specials[r.IntN(len(specials))]
			}
			if r.IntN(8) == 0 {
				b[i] = specials[r.IntN(len(specials))]
			}
		}
		mul, diff := make([]float32, n), make([]float32, n)
		MulInto(mul, a, b)
		AbsDiffInto(diff, a, b)
		for i := range a {
			if want := a[i] * b[i]; math.Float32bits(mul[i]) != math.Float32bits(want) {
				t.Fatalf("n=%d: MulInto[%d] = %v, want %v (%v*%v)", n, i, mul[i], want, a[i], b[i])
			}
			if want := math.Float32frombits(math.Float32bits(a[i]-b[i]) &^ (1 << 31)); math.Float32bits(diff[i]) != math.Float32bits(want) {
				t.Fatalf("n=%d: AbsDiffInto[%d] = %v, want %v (%v-%v)", n, i, diff[i], want, a[i], b[i])
			}
		}
	}
}

// MulAddInto gives the bits of its scalar loop (two rounded products, then
// their sum), at lengths around the vector width, with special values and
// with dst one of its operands.
func TestMulAddIntoIsLoop(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 10))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-40, -3, 3e38}
	val := func() float32 {
		if r.IntN(8) == 0 {
			return specials[r.IntN(len(specials))]
		}
		return float32(r.NormFloat64())
	}
	for _, n := range []int{0, 1, 15, 16, 17, 33, 300, 1000} {
		a, b, c, d := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range a {
			a[i], b[i], c[i], d[i] = val(), val(), val(), val()
		}
		want := make([]float32, n)
		for i := range want {
			p, q := a[i]*b[i], c[i]*d[i]
			want[i] = p + q
		}
		got := make([]float32, n)
		MulAddInto(got, a, b, c, d)
		MulAddInto(b, a, b, c, d) // in place, as an LSTM cell updates its state
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) || math.Float32bits(b[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n=%d: MulAddInto[%d] = %v (in place %v), want %v", n, i, got[i], b[i], want[i])
			}
		}
	}
}
