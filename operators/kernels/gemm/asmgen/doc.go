// Command asmgen generates, with avo, the amd64 assembly of three packages:
// given -pkg gemm, the AVX2+FMA micro-kernels and packing routines of
// package gemm (gemm.go: ../kernel_amd64.s and its Go declarations
// ../kernel_amd64.go); given -pkg vec, the AVX element-wise kernels of
// package operators/internal/vec (vec.go: ../../../internal/vec/add_amd64.s
// and add_amd64.go); given -pkg convpool, the AVX Winograd transforms of
// package operators/convpool (wino.go: ../../../convpool/wino_amd64.s and
// wino_amd64.go).
//
// It is a module of its own so that the main module never depends on avo.
// Each package runs it through its own go:generate line:
//
//	go generate ./operators/kernels/gemm/ ./operators/internal/vec/ ./operators/convpool/
package main
