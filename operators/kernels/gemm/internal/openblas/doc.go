// Package openblas binds OpenBLAS's cblas_sgemm and cblas_dgemm through cgo,
// for comparing package gemm with a system BLAS in benchmarks, and for
// running package gemmtest's contract suite on a reference BLAS. It is
// built only with the openblas build tag (and needs libopenblas-dev and cgo
// then); without it Available is false and the functions are stubs, so the
// default build needs no cgo.
//
//	OPENBLAS_CORETYPE=Haswell go test -tags openblas -run '^$' -bench Compare ./operators/kernels/gemm/
//	go test -tags openblas ./operators/kernels/gemm/internal/openblas/
package openblas
