//go:build !openblas || !cgo

package openblas

// Available reports whether the binding is built.
const Available = false

// SetThreads does nothing without the binding.
func SetThreads(int) {}

// Config says that the binding is not built.
func Config() string { return "not built (needs the openblas build tag and cgo)" }

// Sgemm panics without the binding.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	panic("openblas: not built (needs the openblas build tag and cgo)")
}

// Dgemm panics without the binding.
func Dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	panic("openblas: not built (needs the openblas build tag and cgo)")
}
