//go:build !cgo || !openblas

package nn

// haveOpenBLAS reports whether this build links OpenBLAS.
const haveOpenBLAS = false

func setBLASThreads(int) {}

func blasCore() string { return "" }

func openblasGemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	panic("nn: OpenBLAS is not available without cgo")
}
