// Package gemmtest is the contract suite of a GEMM, C = alpha·op(A)·op(B) +
// beta·C on row-major matrices with package gemm's argument order, in the
// manner of gonum's blas/testblas: TestSgemm and TestDgemm check any
// implementation, and every kernel path of package gemm (and the OpenBLAS
// binding it is compared with) runs them.
//
// Each runs a table of products against a naive float64 reference: tiny,
// empty (m, n or k 0) and odd shapes, skinny ones (a row or a column of a
// few, few rows of a wide B, many of a narrow one), larger ones that take
// the blocked and parallel paths, every combination of transposes, alpha
// and beta among 0, 1 and others, leading dimensions larger than the rows,
// and thread budgets from 1 to 7. What it checks is the contract:
//
//   - every element of C is within the rounding error any order of
//     summation allows: (k+4)·ε·(|alpha|·Σ|a·b| + |beta·c|), doubled;
//   - beta = 0 overwrites C without reading it: NaNs in C do not propagate;
//   - alpha = 0 or k = 0 scales C by beta without reading A and B, so NaNs
//     in them do not propagate either; otherwise a NaN in row i of op(A)
//     makes row i of C NaN, and one in column j of op(B) column j;
//   - A and B are not written, and neither are the elements of C between
//     the end of a row and the next (ldc > n).
//
// Each also runs gonum's own Dgemm tests (gonum.org/v1/gonum/blas/testblas)
// through an adapter; see TestSgemm.
//
// Argument checking (panics on bad dimensions) and allocation or
// concurrency properties are an implementation's own: package gemm tests
// its own.
package gemmtest
