package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Allocation granularity of the caching allocator: requests are rounded up
// to a multiple of minBlock, and past largeBlock to a multiple of
// largeStep, so that blocks freed by one tensor fit the next tensor of a
// similar size instead of piling up in classes of one.
const (
	minBlock   = 512
	largeBlock = 1 << 20
	largeStep  = 2 << 20
)

// sizeClass returns the size of the block the allocator hands out for a
// request of n bytes (at least minBlock, so that every block is aligned for
// any element type and vectorized access).
func sizeClass(n int) int {
	switch {
	case n <= minBlock:
		return minBlock
	case n <= largeBlock:
		return (n + minBlock - 1) / minBlock * minBlock
	}
	return (n + largeStep - 1) / largeStep * largeStep
}

// archOption returns NVRTC's option naming a compute capability, which
// makes it compile for that architecture's virtual ISA (PTX the driver
// finishes for the exact GPU).
func archOption(major, minor int) string {
	return fmt.Sprintf("--gpu-architecture=compute_%d%d", major, minor)
}

// cacheKey names the compiled form of a source for a set of compiler
// options: a file name that changes whenever either does.
func cacheKey(name, source string, options []string) string {
	h := sha256.New()
	h.Write([]byte(source))
	h.Write([]byte{0})
	h.Write([]byte(strings.Join(options, "\x00")))
	return name + "-" + hex.EncodeToString(h.Sum(nil)[:12]) + ".ptx"
}
