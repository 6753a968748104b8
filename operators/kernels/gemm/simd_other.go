//go:build !amd64 || purego || noasm

package gemm

// Without assembly (another architecture, or the purego or noasm build
// tag) the portable kernels run.

var (
	avx2S   = generic32
	avx2D   = generic64
	avx512S = generic32
	avx512D = generic64
)

const (
	hasSIMD   = false
	hasAVX512 = false
)
