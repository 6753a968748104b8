// Package gemm is the dense matrix-multiply kernel behind the FC, MatMul,
// BatchMatMul and convolution operators: C = alpha·op(A)·op(B) + beta·C on
// row-major matrices, in float32 (Sgemm) and float64 (Dgemm).
//
// The implementation follows the usual blocked layout: B is packed into
// kc×nc panels of nr-wide column strips, A into mc×kc blocks of mr-high row
// strips, and an mr×nr micro-kernel accumulates one tile of C at a time, so
// that the working set of the inner loops stays in cache and transposed
// operands cost nothing extra. Large products are split into row (or, for
// short wide products, column) ranges that run on a fixed pool of worker
// goroutines; packing buffers and per-call state are recycled through free
// lists, so a call in steady state does not allocate.
package gemm
