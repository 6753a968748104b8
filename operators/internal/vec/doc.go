// Package vec holds small slice kernels that several operator families
// share: fills, element-wise adds and sums, and the inner loops of
// normalization, ReLU and 2×2 max pooling and their gradients. It is
// internal to package operators and its subpackages.
//
// On amd64 CPUs with AVX (AVX2 for some) the float32 kernels and the adds
// are in assembly, add_amd64.s, generated with avo by the vec part of the
// command in operators/kernels/gemm/asmgen; with AVX-512F all but the
// statistics sums take ZMM kernels with masked tails instead (hasAVX512 in
// simd_amd64.go):
//
//	go generate ./operators/internal/vec/
//
// Elsewhere, and with the purego or noasm build tag, Go loops run. The
// assembly computes bit for bit what the Go loops compute (the tests check
// it), so that a result does not depend on the CPU.
package vec
