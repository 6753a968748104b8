package gemm

import "sync/atomic"

// Path is one of the ways Gemm computes a product, chosen per call from
// its shape, transposes and thread budget.
type Path int

// The paths, in the order PathCounts reports them.
const (
	// PathScale: alpha or k is 0, so C = beta·C and A and B are not read.
	PathScale Path = iota
	// PathDirect: a tiny product (at most 96 multiply-adds with the AVX2
	// kernels), computed by plain loops over the operands where they are.
	PathDirect
	// PathDot: C = A·Bᵀ with few columns (float32, AVX2): each element
	// is a dot product of two contiguous rows, computed by a kernel that
	// reads A and B in place, without packing.
	PathDot
	// PathBlocked: the packed, blocked product on one goroutine.
	PathBlocked
	// PathBlockedParallel: the packed, blocked product split into row or
	// column ranges over several goroutines.
	PathBlockedParallel
	// NumPaths is the number of paths.
	NumPaths
)

var pathNames = [NumPaths]string{"scale", "direct", "dot", "blocked", "blocked-parallel"}

// String names the path.
func (p Path) String() string {
	if p < 0 || p >= NumPaths {
		return "unknown"
	}
	return pathNames[p]
}

// counting and pathCounts are the optional per-path call counters: one
// atomic load per call when off.
var (
	counting   atomic.Bool
	pathCounts [NumPaths]struct {
		n atomic.Uint64
		_ [56]byte // one cache line each: concurrent callers count different paths
	}
)

// CountPaths turns the counting of calls per path on or off (it starts
// off, so that calls from many goroutines do not contend for the
// counters). A benchmark turns it on to report which paths its operators
// take.
func CountPaths(on bool) { counting.Store(on) }

// PathCounts returns how many products of either element type each path
// has computed while counting was on, indexed by Path.
func PathCounts() [NumPaths]uint64 {
	var out [NumPaths]uint64
	for i := range out {
		out[i] = pathCounts[i].n.Load()
	}
	return out
}

// took counts a call on path p when counting is on.
func took(p Path) {
	if counting.Load() {
		pathCounts[p].n.Add(1)
	}
}
