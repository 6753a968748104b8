package gemmtest

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
)

// gonum's testblas has Dgemm tests only (TestDgemm): small products in
// gonum's row-major layout, each with every combination of transposes. The
// adapters below implement testblas.Dgemmer, the one method those tests
// call, on an implementation under test. They map:
//
//   - blas.NoTrans to an untransposed operand, blas.Trans and
//     blas.ConjTrans (the same for real matrices) to a transposed one;
//   - the layout as it is: both are row-major with leading dimensions;
//   - the thread budget, which gonum's interface lacks, to 1 (the products
//     are too small to split).
//
// sgemmAdapter also rounds A, B and C to float32 and the result back to
// float64, so its A and B are never written whatever the implementation
// does (the contract table checks that instead).

// trans maps a gonum transpose flag to package gemm's.
func trans(t blas.Transpose) bool {
	switch t {
	case blas.NoTrans:
		return false
	case blas.Trans, blas.ConjTrans:
		return true
	}
	panic(fmt.Sprintf("gemmtest: bad transpose %q", rune(t)))
}

// dgemmAdapter is a Dgemmer as a testblas.Dgemmer.
type dgemmAdapter struct{ impl Dgemmer }

// Dgemm runs the product on the implementation.
func (d dgemmAdapter) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	d.impl.Dgemm(1, trans(tA), trans(tB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// sgemmAdapter is an Sgemmer as a testblas.Dgemmer.
type sgemmAdapter struct{ impl Sgemmer }

// Dgemm runs the product on the implementation in float32.
func (s sgemmAdapter) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	c32 := to32(c)
	s.impl.Sgemm(1, trans(tA), trans(tB), m, n, k, float32(alpha), to32(a), lda, to32(b), ldb, float32(beta), c32, ldc)
	for i, v := range c32 {
		c[i] = float64(v)
	}
}

func to32(s []float64) []float32 {
	r := make([]float32, len(s))
	for i, v := range s {
		r[i] = float32(v)
	}
	return r
}
