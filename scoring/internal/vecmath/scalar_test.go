package vecmath

import (
	"math"
	"testing"
)

func ulpErr(got float32, want float64) float64 {
	if want == 0 {
		return math.Abs(float64(got))
	}
	w := float32(want)
	ulp := math.Abs(float64(math.Nextafter32(w, float32(math.Inf(1))) - w))
	if ulp == 0 || math.IsInf(float64(w), 0) {
		return math.Abs(float64(got) - want)
	}
	return math.Abs(float64(got)-want) / ulp
}

func TestFastMath(t *testing.T) {
	var worstExp, worstExpm1, worstTanh, worstSig float64
	for x := -110.0; x <= 89; x += 0.0137 {
		x32 := float32(x)
		xf := float64(x32)
		if e := math.Exp(xf); e > 1e-37 && e < math.MaxFloat32 {
			worstExp = max(worstExp, ulpErr(Exp(x32), e))
		}
		if want := 1 / (1 + math.Exp(-xf)); x > -87 {
			worstSig = max(worstSig, ulpErr(Sigmoid(x32), want))
		} else if d := math.Abs(float64(Sigmoid(x32)) - want); d > 2e-38 {
			t.Fatalf("Sigmoid(%v) = %v, want %v", x32, Sigmoid(x32), want)
		}
	}
	for x := -12.0; x <= 12; x += 0.00071 {
		x32 := float32(x)
		xf := float64(x32)
		worstExpm1 = max(worstExpm1, ulpErr(Expm1(x32), math.Expm1(xf)))
		worstTanh = max(worstTanh, ulpErr(Tanh(x32), math.Tanh(xf)))
	}
	for _, x := range []float32{1e-30, -1e-20, 1e-7, -3e-4} {
		worstTanh = max(worstTanh, ulpErr(Tanh(x), math.Tanh(float64(x))))
		worstExpm1 = max(worstExpm1, ulpErr(Expm1(x), math.Expm1(float64(x))))
	}
	t.Logf("max ulp error: exp %.2f expm1 %.2f tanh %.2f sigmoid %.2f", worstExp, worstExpm1, worstTanh, worstSig)
	if worstExp > 4 || worstExpm1 > 4 || worstTanh > 6 || worstSig > 6 {
		t.Fatalf("fast math too inaccurate: exp %.2f expm1 %.2f tanh %.2f sigmoid %.2f ulp", worstExp, worstExpm1, worstTanh, worstSig)
	}
	if Exp(100) != float32(math.Inf(1)) || Exp(-200) != 0 || Tanh(50) != 1 || Tanh(-50) != -1 {
		t.Fatal("bad saturation")
	}
}
