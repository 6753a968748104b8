//go:build openblas && cgo

package openblas

// #cgo LDFLAGS: -lopenblas
// #include <cblas.h>
import "C"

import "unsafe"

// Available reports whether the binding is built.
const Available = true

// SetThreads sets the number of threads OpenBLAS uses.
func SetThreads(n int) { C.openblas_set_num_threads(C.int(n)) }

// Config is OpenBLAS's description of its build and the core it chose.
func Config() string {
	return C.GoString(C.openblas_get_config()) + " core=" + C.GoString(C.openblas_get_corename())
}

// Sgemm is cblas_sgemm on row-major matrices, with package gemm's
// argument order. It checks nothing but that C is not empty.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	C.cblas_sgemm(C.CblasRowMajor, trans(transA), trans(transB), C.blasint(m), C.blasint(n), C.blasint(k),
		C.float(alpha), (*C.float)(first(a)), C.blasint(lda),
		(*C.float)(first(b)), C.blasint(ldb),
		C.float(beta), (*C.float)(first(c)), C.blasint(ldc))
}

// Dgemm is cblas_dgemm on row-major matrices, with package gemm's
// argument order. It checks nothing but that C is not empty.
func Dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	C.cblas_dgemm(C.CblasRowMajor, trans(transA), trans(transB), C.blasint(m), C.blasint(n), C.blasint(k),
		C.double(alpha), (*C.double)(first(a)), C.blasint(lda),
		(*C.double)(first(b)), C.blasint(ldb),
		C.double(beta), (*C.double)(first(c)), C.blasint(ldc))
}

func trans(t bool) C.enum_CBLAS_TRANSPOSE {
	if t {
		return C.CblasTrans
	}
	return C.CblasNoTrans
}

// first is the address of s[0], or nil for an empty s (an operand that k = 0
// leaves empty, which OpenBLAS does not read).
func first[T float32 | float64](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}
