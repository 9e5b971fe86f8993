//go:build cgo && openblas

package nn

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
*/
import "C"

import (
	"sync"
	"unsafe"
)

// haveOpenBLAS reports whether this build links OpenBLAS.
const haveOpenBLAS = true

var blasInit sync.Once

// initBLAS makes OpenBLAS single-threaded on first use.
func initBLAS() {
	blasInit.Do(func() { C.openblas_set_num_threads(1) })
}

// blasCore returns the name of the kernel family OpenBLAS selected for this
// CPU (for example "Haswell" or "Cooperlake").
func blasCore() string {
	initBLAS()
	return C.GoString(C.openblas_get_corename())
}

func setBLASThreads(n int) {
	initBLAS()
	C.openblas_set_num_threads(C.int(n))
}

func openblasGemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	initBLAS()
	if k == 0 || alpha == 0 {
		// Avoid handing empty A or B slices to C; only the beta scaling applies.
		scaleC(m, n, beta, c, ldc)
		return
	}
	ta, tb := uint32(C.CblasNoTrans), uint32(C.CblasNoTrans)
	if transA {
		ta = C.CblasTrans
	}
	if transB {
		tb = C.CblasTrans
	}
	C.cblas_sgemm(C.CblasRowMajor, ta, tb, C.blasint(m), C.blasint(n), C.blasint(k),
		C.float(alpha), (*C.float)(unsafe.Pointer(&a[0])), C.blasint(lda),
		(*C.float)(unsafe.Pointer(&b[0])), C.blasint(ldb),
		C.float(beta), (*C.float)(unsafe.Pointer(&c[0])), C.blasint(ldc))
}
