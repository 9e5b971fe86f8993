package vecmath

import "math"

var negInf = float32(math.Inf(-1))

// SigmoidInPlace replaces every x[i] with Sigmoid(x[i]).
func SigmoidInPlace(x []float32) {
	for i := sigmoidVec(x); i < len(x); i++ {
		x[i] = Sigmoid(x[i])
	}
}

// TanhInPlace replaces every x[i] with Tanh(x[i]).
func TanhInPlace(x []float32) {
	for i := tanhVec(x); i < len(x); i++ {
		x[i] = Tanh(x[i])
	}
}

// GELUTanhInto sets dst[i], for every x = src[i], to the tanh
// approximation of the Gaussian error linear unit,
//
//	0.5·x · (1 + tanh(c·(x + 0.044715·x·x·x))), c = sqrt(2/π) in float32,
//
// each operation rounded to float32 in that order, the tanh being
// TanhInPlace's. It gives the same bits as computing the inner values, then
// TanhInPlace over all of them, then the outer product, in three passes;
// dst must hold len(src) values and may be src.
func GELUTanhInto(dst, src []float32) {
	dst = dst[:len(src)]
	for i := geluVec(dst, src); i < len(src); i++ {
		x := src[i]
		t := Tanh(geluC * (x + 0.044715*x*x*x))
		dst[i] = 0.5 * x * (1 + t)
	}
}

// geluC is sqrt(2/π).
const geluC = 0.7978845608028654

// RowMeanVar sets mean[r] and variance[r] to the mean and the (biased)
// variance of row r of the row-major (len(mean), d) matrix x, each computed
// as a loop over the row in order would: the sum of the values divided by
// d, then the sum of the squared deviations from that mean divided by d,
// one float32 rounding per operation. Groups of 16 rows are done 16 at a
// time, one row per vector lane, which keeps the order of every sum.
func RowMeanVar(x []float32, d int, mean, variance []float32) {
	rows := len(mean)
	_, _ = x[:rows*d], variance[:rows]
	for r := meanVarVec(x, d, mean, variance); r < rows; r++ {
		row := x[r*d : (r+1)*d]
		var m float32
		for _, v := range row {
			m += v
		}
		m /= float32(d)
		var s float32
		for _, v := range row {
			s += (v - m) * (v - m)
		}
		mean[r], variance[r] = m, s/float32(d)
	}
}

// NormRow sets, for every j, h = (x[j]-mean)*rstd, xhat[j] = h (unless
// xhat is nil) and y[j] = h*gain[j] + bias[j], one rounding per operation:
// the output of a layer normalisation.
func NormRow(x, y, xhat []float32, mean, rstd float32, gain, bias []float32) {
	n := len(x)
	_, _, _ = y[:n], gain[:n], bias[:n]
	if xhat != nil {
		_ = xhat[:n]
	}
	for j := normRowVec(x, y, xhat, mean, rstd, gain, bias); j < n; j++ {
		h := (x[j] - mean) * rstd
		if xhat != nil {
			xhat[j] = h
		}
		y[j] = h*gain[j] + bias[j]
	}
}

// SumExp returns Σ e^(x[i]-shift). Terms whose exponent is below -87
// contribute at most 1.6e-38 each; with shift = Max(x) the sum is at least
// one, so this is immaterial.
func SumExp(x []float32, shift float32) float32 {
	s, i := sumExpVec(x, shift)
	for ; i < len(x); i++ {
		s += Exp(max(x[i]-shift, -87))
	}
	return s
}

// ExpShiftInPlace replaces every x[i] with e^(x[i]-shift), the exponent
// clamped to [-87, 87], and returns the sum of the results.
func ExpShiftInPlace(x []float32, shift float32) float32 {
	s, i := expShiftVec(x, shift)
	for ; i < len(x); i++ {
		e := Exp(min(max(x[i]-shift, -87), 87))
		x[i] = e
		s += e
	}
	return s
}

// Max returns the largest element of x, or -Inf for an empty slice. NaNs
// are not handled.
func Max(x []float32) float32 {
	m, i := maxVec(x)
	for ; i < len(x); i++ {
		m = max(m, x[i])
	}
	return m
}

// MulInto sets dst[i] = a[i]*b[i] for i < len(dst); a and b must be at
// least as long.
func MulInto(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := mulVec(dst, a, b); i < len(dst); i++ {
		dst[i] = a[i] * b[i]
	}
}

// MulAddInto sets dst[i] = a[i]*b[i] + c[i]*d[i] for i < len(dst), each
// product rounded to float32 before the sum (no fused multiply-add); a, b,
// c and d must be at least as long, and dst may be any of them.
func MulAddInto(dst, a, b, c, d []float32) {
	a, b, c, d = a[:len(dst)], b[:len(dst)], c[:len(dst)], d[:len(dst)]
	for i := mulAddVec(dst, a, b, c, d); i < len(dst); i++ {
		dst[i] = float32(a[i]*b[i]) + float32(c[i]*d[i])
	}
}

// AbsDiffInto sets dst[i] = |a[i]-b[i]| for i < len(dst), clearing the
// sign bit of the difference (so -0 and NaNs lose their sign too); a and b
// must be at least as long.
func AbsDiffInto(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := absDiffVec(dst, a, b); i < len(dst); i++ {
		dst[i] = math.Float32frombits(math.Float32bits(a[i]-b[i]) &^ (1 << 31))
	}
}
