package nn

import (
	"math"
	"math/rand/v2"
)

// fillUniform fills x with values drawn uniformly from [-limit, limit).
func fillUniform(rng *rand.Rand, x []float32, limit float64) {
	for i := range x {
		x[i] = float32((2*rng.Float64() - 1) * limit)
	}
}

// fillNormal fills x with values drawn from N(0, std²).
func fillNormal(rng *rand.Rand, x []float32, std float64) {
	for i := range x {
		x[i] = float32(rng.NormFloat64() * std)
	}
}

// xavierLimit is the Glorot-uniform bound for a weight with the given fans.
func xavierLimit(fanIn, fanOut int) float64 {
	return math.Sqrt(6 / float64(fanIn+fanOut))
}
