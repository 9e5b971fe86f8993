//go:build !amd64

package vecmath

func sigmoidVec(x []float32) int     { return 0 }
func tanhVec(x []float32) int        { return 0 }
func geluVec(dst, src []float32) int { return 0 }
func meanVarVec(x []float32, d int, mean, variance []float32) int {
	return 0
}
func normRowVec(x, y, xhat []float32, mean, rstd float32, gain, bias []float32) int {
	return 0
}
func sumExpVec(x []float32, shift float32) (float32, int)   { return 0, 0 }
func expShiftVec(x []float32, shift float32) (float32, int) { return 0, 0 }
func maxVec(x []float32) (float32, int)                     { return negInf, 0 }

// Accelerated reports whether the slice functions use assembly.
func Accelerated() bool { return false }

func mulVec(dst, a, b []float32) int          { return 0 }
func absDiffVec(dst, a, b []float32) int      { return 0 }
func mulAddVec(dst, a, b, c, d []float32) int { return 0 }
