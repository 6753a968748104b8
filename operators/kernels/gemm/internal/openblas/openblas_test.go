package openblas

import (
	"testing"

	"github.com/caffe2go/caffe2go/operators/kernels/gemm/gemmtest"
)

// binding is the binding as an implementation for package gemmtest, the
// thread budget set before each call.
type binding struct{}

// Sgemm sets the threads and calls Sgemm.
func (binding) Sgemm(threads int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	SetThreads(threads)
	Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Dgemm sets the threads and calls Dgemm.
func (binding) Dgemm(threads int, transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	SetThreads(threads)
	Dgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// TestSgemm and TestDgemm run package gemm's contract suite on OpenBLAS: a
// reference BLAS meeting the contract that package gemm's kernels are held
// to.
func TestSgemm(t *testing.T) {
	skipUnbuilt(t)
	t.Log(Config())
	gemmtest.TestSgemm(t, binding{})
}

func TestDgemm(t *testing.T) {
	skipUnbuilt(t)
	gemmtest.TestDgemm(t, binding{})
}

func skipUnbuilt(t *testing.T) {
	if !Available {
		t.Skip(Config())
	}
}
