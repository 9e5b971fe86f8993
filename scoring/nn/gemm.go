package nn

import (
	"fmt"
	"sync/atomic"

	"github.com/ctxsim/ctxsim/scoring/nn/internal/gogemm"
)

// useGo selects the pure-Go Gemm; it is forced on without cgo.
var useGo atomic.Bool

func init() { useGo.Store(!haveOpenBLAS) }

// Backend reports which matrix-multiply implementation Gemm uses:
// "openblas/" followed by the kernel family OpenBLAS chose for the CPU (for
// example "openblas/Haswell"), or "go/" followed by the pure-Go
// micro-kernel in use (for example "go/avx512-6x32" or "go/generic4x4").
//
// OpenBLAS 0.3.21 (Debian 12) does not recognise AMD Zen 5 and falls back
// to its Haswell (AVX2) kernels, at about half the speed of its AVX-512
// ones; setting OPENBLAS_CORETYPE=Cooperlake (or SkylakeX) in the process
// environment before start-up selects the latter.
func Backend() string {
	if useGo.Load() {
		return "go/" + gogemm.Best().Name
	}
	return "openblas/" + blasCore()
}

// RowExact reports whether every row of a Gemm result depends only on the
// same row of op(A) and on op(B), bit for bit, whatever the number of rows
// m: true for the pure-Go kernel, which sums over k in the same order for
// every m. OpenBLAS picks its kernels and blocking by the shape of the
// product, so a row computed in a product of another height may differ in
// its last bits.
func RowExact() bool { return useGo.Load() }

// SetBackend selects the Gemm implementation: "openblas" (the default in
// builds with cgo and the openblas build tag, an error in any other build)
// or "go" (the pure-Go kernel, the only choice in other builds). It must not be called while Gemm calls are running.
func SetBackend(name string) error {
	if err := CheckBackend(name); err != nil {
		return err
	}
	useGo.Store(name == "go")
	return nil
}

// CheckBackend returns an error unless SetBackend(name) would succeed.
func CheckBackend(name string) error {
	switch name {
	case "go":
	case "openblas":
		if !haveOpenBLAS {
			return fmt.Errorf("nn: backend %q needs a build with cgo and -tags openblas", name)
		}
	default:
		return fmt.Errorf("nn: unknown backend %q", name)
	}
	return nil
}

// SetThreads sets the number of threads a Gemm call may use, for OpenBLAS
// and for the pure-Go kernel. The default is one. Values below one are
// treated as one.
func SetThreads(n int) {
	n = max(n, 1)
	gogemm.SetThreads(n)
	if haveOpenBLAS {
		setBLASThreads(n)
	}
}

// Threads returns the number of threads a Gemm call may use.
func Threads() int { return gogemm.Threads() }

func gemmBackend(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if useGo.Load() {
		gogemm.Gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	openblasGemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// rhsMatrix is a right-hand Gemm operand op(B) (k×n) reused across many
// products; with the pure-Go backend it is packed once.
type rhsMatrix struct {
	transB bool
	k, n   int
	b      []float32
	ldb    int
	packed *gogemm.PackedB
}

// newRHS prepares op(B) for repeated use by gemmRHS. B must not change
// while the result is in use.
func newRHS(transB bool, k, n int, b []float32, ldb int) *rhsMatrix {
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	checkMat("B", b, br, bc, ldb)
	r := &rhsMatrix{transB: transB, k: k, n: n, b: b, ldb: ldb}
	if useGo.Load() {
		r.packed = gogemm.PackB(gogemm.Best(), transB, k, n, b, ldb)
	}
	return r
}

// gemmRHS computes C = alpha*op(A)*op(B) + beta*C for op(B) = r, with
// op(A) m×r.k and C m×r.n.
func gemmRHS(transA bool, m int, alpha float32, a []float32, lda int, r *rhsMatrix, beta float32, c []float32, ldc int) {
	if r.packed == nil {
		Gemm(transA, r.transB, m, r.n, r.k, alpha, a, lda, r.b, r.ldb, beta, c, ldc)
		return
	}
	ar, ac := m, r.k
	if transA {
		ar, ac = r.k, m
	}
	checkMat("A", a, ar, ac, lda)
	checkMat("C", c, m, r.n, ldc)
	gogemm.GemmPacked(transA, m, alpha, a, lda, r.packed, beta, c, ldc)
}

// Gemm computes the single-precision general matrix product
//
//	C = alpha * op(A) * op(B) + beta * C
//
// on row-major matrices, where op(X) is X or its transpose Xᵀ. op(A) is
// m×k, op(B) is k×n and C is m×n. When transA is false A is stored as an m×k
// matrix with leading dimension (row stride) lda >= k; when it is true A is
// stored as k×m with lda >= m. B is likewise stored as k×n (ldb >= n) or, if
// transB, as n×k (ldb >= k). C is m×n with ldc >= n. When beta is zero C is
// not read, so it may hold garbage (even NaN) on entry.
//
// Gemm is the hot path of the package: it calls OpenBLAS's cblas_sgemm in
// cgo builds and a pure-Go blocked kernel otherwise (see Backend and
// SetBackend). It panics if a dimension is negative or a slice is too short
// for its shape.
func Gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkGemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	gemmBackend(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// checkGemm validates the arguments of Gemm and panics with a descriptive
// message on misuse.
func checkGemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("nn: Gemm: negative dimension m=%d n=%d k=%d", m, n, k))
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	checkMat("A", a, ar, ac, lda)
	checkMat("B", b, br, bc, ldb)
	checkMat("C", c, m, n, ldc)
}

func checkMat(name string, x []float32, rows, cols, ld int) {
	if ld < max(1, cols) {
		panic(fmt.Sprintf("nn: Gemm: leading dimension of %s is %d, want >= %d", name, ld, max(1, cols)))
	}
	if rows == 0 || cols == 0 {
		return
	}
	if need := (rows-1)*ld + cols; len(x) < need {
		panic(fmt.Sprintf("nn: Gemm: %s has %d elements, need %d for %dx%d with ld %d", name, len(x), need, rows, cols, ld))
	}
}

// scaleC applies C = beta*C to the m×n matrix c; beta == 0 clears C
// without reading it.
func scaleC(m, n int, beta float32, c []float32, ldc int) {
	if beta == 1 {
		return
	}
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		scal(beta, row)
	}
}
