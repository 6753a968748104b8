// Package openblas binds OpenBLAS's cblas_sgemm through cgo, for comparing
// package gemm with a system BLAS in benchmarks. It is built only with the
// openblas build tag (and needs libopenblas-dev and cgo then); without it
// the package is empty, so the default build needs no cgo.
//
//	OPENBLAS_CORETYPE=Haswell go test -tags openblas -run '^$' -bench Compare ./operators/kernels/gemm/
package openblas
