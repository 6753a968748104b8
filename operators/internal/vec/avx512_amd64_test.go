//go:build !purego && !noasm

package vec

import "testing"

// TestAVX512OffMatchesGo runs the checks of TestAVX512MatchesGo with the
// AVX-512 kernels turned off: on a CPU with AVX-512 the AVX and AVX2
// kernels, which CPUs without it take, are checked too.
func TestAVX512OffMatchesGo(t *testing.T) {
	defer func(v bool) { hasAVX512 = v }(hasAVX512)
	hasAVX512 = false
	checkKernelBits(t)
}
