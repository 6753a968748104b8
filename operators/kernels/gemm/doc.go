// Package gemm is the dense matrix-multiply kernel behind the FC, MatMul,
// BatchMatMul and convolution operators: C = alpha·op(A)·op(B) + beta·C on
// row-major matrices, in float32 (Sgemm) and float64 (Dgemm).
//
// The implementation follows the usual blocked layout (Goto, BLIS): B is
// packed into kc×nc panels of nr-wide column strips, A into mc×kc blocks of
// mr-high row strips, and an mr×nr micro-kernel accumulates one tile of C
// at a time, so that the working set of the inner loops stays in cache and
// transposed operands cost nothing extra. When a panel of B has only a few
// strips (a narrow C), A is not packed: a strided variant of the
// micro-kernel reads it in place. Likewise, when C has only a few rows
// (float32, B untransposed), B is read in place by another variant. A
// last strip of C with fewer than mr rows is computed by kernels of just
// those rows (float32, and float64 with AVX-512), straight into C, rather
// than by a whole tile into a scratch tile.
//
// Tiny products (at most 96 multiply-adds with the assembly kernels, 256
// with the portable ones) are computed by plain loops. A
// float32 C = A·Bᵀ with few columns or few rows and a long k (a
// classifier's last layer, a convolution's weight gradient, an FC layer on
// a batch of a few) takes the dot path (dot.go)
// where a cost model says it is faster: every element of C is the dot
// product of a row of A and a row of B, both contiguous, and a 4×3 kernel
// reads them in place instead of transposing B into strips that would be
// largely padding.
// PathCounts tells which path the products took (Path names them), once
// CountPaths has turned the counting on.
// MulPackedB takes a B its caller has already built in the packed layout
// (PackedBLayout), as the Winograd convolutions of operators/convpool
// build their transformed input tiles.
//
// # Kernels
//
// On amd64 CPUs with AVX2 and FMA (detected at run time with
// golang.org/x/sys/cpu) the micro-kernels are in assembly: a 6×16 float32
// tile (6×8 float64) held in twelve YMM accumulators, fed by one broadcast
// of A and two loads of B per step, and AVX copies and 8×8 transposes that
// pack B, and the dot path's kernel (kernel_amd64.s). CPUs that also have
// AVX-512F take AVX-512 kernels instead: a 12×32 float32 tile (12×16
// float64) in 24 ZMM accumulators, with kernels for every shorter last
// strip of rows, ZMM copies and wider transposes that pack B, and the
// AVX2 dot kernel. They compute each element of C by the same operations
// in the same order as the AVX2 kernels (same k blocking, FMAs, then
// alpha, then beta·C), so the results agree bit for bit where beta is 0
// or 1 and a product takes the same path. Everywhere else, and with the
// purego or noasm build tag, a portable 4×4 Go kernel runs. Kernel reports
// which one is in use.
//
// Go's GODEBUG setting turns the AVX-512 kernels off on a machine that
// has them (golang.org/x/sys/cpu honours it), to compare the two kernel
// sets or to work around a CPU that clocks down under AVX-512:
//
//	GODEBUG=cpu.avx512f=off go test -bench Sgemm ./operators/kernels/gemm/
//
// The assembly is generated with avo by the command in asmgen, a module of
// its own so that this module does not depend on avo:
//
//	go generate ./operators/kernels/gemm/
//
// # Threads
//
// Large products are split into row (or, for short wide products, column)
// ranges, as many as the caller's thread budget allows: GOMAXPROCS for
// Sgemm and Dgemm, the threads argument of Gemm (an operator passes its
// Base.Threads). The ranges run on the kernels' shared workers (package
// operators/internal/parallel): the caller computes ranges itself and
// whoever comes first claims the next one, so a helper that cannot start
// at once costs nothing more than computing its range in the caller. The k
// dimension is never split, so the result is the same for any budget.
// Packing buffers and per-call state are recycled through free lists, so a
// call in steady state does not allocate.
//
// # Tests
//
// Package gemmtest is the contract suite of a GEMM. The tests here run it
// over every kernel path (the portable one and, where the build and the
// CPU have them, AVX2 and AVX-512), and the tests of the OpenBLAS binding in
// internal/openblas over OpenBLAS with the openblas build tag. Other tests
// here force the blocked code's internal choices (A packed or read in
// place, the blocked code on small products) and check what is particular
// to this package: argument panics, results independent of the thread
// budget, no allocation in steady state.
//
// # Benchmarks
//
// BenchmarkCompare1024 and BenchmarkCompare256 put the kernels beside
// gonum's pure-Go BLAS and, with the openblas build tag (cgo and
// libopenblas-dev), OpenBLAS; with -v they log each one's fraction of
// OpenBLAS's GFLOP/s:
//
//	OPENBLAS_CORETYPE=Haswell go test -tags openblas -run '^$' -bench Compare -benchmem -cpu 2 -v ./operators/kernels/gemm/
//
// OPENBLAS_CORETYPE picks OpenBLAS's kernels: Haswell is its AVX2 kernel
// set; SkylakeX needs AVX-512 and dies with an illegal instruction on CPUs
// without it.
package gemm
