// Package vecmath has fast float32 elementary functions: accurate scalar
// versions (Exp, Expm1, Sigmoid, Tanh) and in-place slice versions
// (Sigmoid, Tanh, SumExp, Max) that use AVX-512 assembly on amd64 CPUs
// that have it and the scalar versions elsewhere.
package vecmath

import "math"

// Fast float32 elementary functions. They are accurate to a few ulp over the
// whole float32 range (see mathf_test.go), several times faster than going
// through float64 math, and free of data-dependent branches on their hot
// paths (gate activations have random signs, so branches mispredict).

const (
	log2e  = 1.44269504088896341
	ln2Hi  = 0.693359375
	ln2Lo  = -2.12194440e-4
	expMax = 88.72
	expMin = -103.0
	// roundMagic rounds a float32 of magnitude < 2^22 to an integer when
	// added and subtracted, and leaves the integer in the low mantissa bits.
	roundMagic  = 0x1.8p23
	roundMagicU = 0x4B400000
)

// expm1Reduced returns n and q with e^x = 2^n * (1 + q), |q| < 0.42, for
// |x| < 2^21.
func expm1Reduced(x float32) (int32, float32) {
	t := x*log2e + roundMagic
	n := int32(math.Float32bits(t)) - roundMagicU
	fn := t - roundMagic
	r := x - fn*ln2Hi
	r -= fn * ln2Lo
	// Taylor series of e^r - 1 to degree 7 (error < 2e-8 for |r| <= ln2/2).
	q := r * (1 + r*(0.5+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720+r*(1.0/5040)))))))
	return n, q
}

// pow2 returns 2^n for -126 <= n <= 127.
func pow2(n int32) float32 { return math.Float32frombits(uint32(n+127) << 23) }

// Exp returns e^x.
func Exp(x float32) float32 {
	if x > expMax {
		return float32(math.Inf(1))
	}
	if x < expMin {
		return 0
	}
	n, q := expm1Reduced(x)
	p := 1 + q
	if n > 127 {
		return p * 0x1p127 * 2
	}
	if n < -126 {
		// Scale in two steps to reach the subnormal range.
		return p * pow2(n+64) * 0x1p-64
	}
	return p * pow2(n)
}

// Expm1 returns e^x - 1, accurate also for small |x|.
func Expm1(x float32) float32 {
	if x > expMax {
		return float32(math.Inf(1))
	}
	if x < -20 {
		return -1
	}
	n, q := expm1Reduced(x)
	if n > 127 {
		return (1 + q) * 0x1p127 * 2
	}
	// For n == 0 this is exactly q, so small |x| keeps full precision.
	s := pow2(n)
	return s*q + (s - 1)
}

// Sigmoid returns 1 / (1 + e^-x). Below x = -87 it saturates at
// sigmoid(-87) ≈ 1.6e-38, an absolute error under 2e-38.
func Sigmoid(x float32) float32 {
	// Clamping keeps e^-x finite and normal; the result is saturated there.
	if x > 87 {
		x = 87
	}
	if x < -87 {
		x = -87
	}
	n, q := expm1Reduced(-x)
	return 1 / (1 + (1+q)*pow2(n))
}

// Tanh returns tanh(x), computed as expm1(2|x|) / (expm1(2|x|) + 2) with
// the sign of x.
func Tanh(x float32) float32 {
	bits := math.Float32bits(x)
	ax := math.Float32frombits(bits &^ (1 << 31))
	if ax > 9.1 {
		ax = 9.1 // tanh(9.1) rounds to 1 in float32.
	}
	n, q := expm1Reduced(2 * ax)
	s := pow2(n)
	e := s*q + (s - 1)
	t := e / (e + 2)
	return math.Float32frombits(math.Float32bits(t) | bits&(1<<31))
}
