// Command asmgen generates, with avo, the amd64 assembly of three packages:
// given -pkg gemm, the AVX2+FMA and AVX-512F micro-kernels and packing
// routines of package gemm (gemm.go, gemm512.go: ../kernel_amd64.s and its
// Go declarations ../kernel_amd64.go); given -pkg vec, the AVX, AVX2 and
// AVX-512F element-wise kernels of package operators/internal/vec (vec.go,
// vec512.go: ../../../internal/vec/add_amd64.s and add_amd64.go); given
// -pkg convpool, the AVX and AVX-512F Winograd transforms of package
// operators/convpool (wino.go, wino512.go: ../../../convpool/wino_amd64.s
// and wino_amd64.go). Each package chooses among its kernels at run time
// with golang.org/x/sys/cpu.
//
// It is a module of its own so that the main module never depends on avo.
// Each package runs it through its own go:generate line:
//
//	go generate ./operators/kernels/gemm/ ./operators/internal/vec/ ./operators/convpool/
package main
