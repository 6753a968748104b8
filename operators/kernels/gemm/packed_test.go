package gemm

import (
	"math"
	"runtime"
	"testing"

	"github.com/caffe2go/caffe2go/operators/kernels/gemm/gemmtest"
)

// packedPath is a GEMM for the contract suite that runs MulPackedB on a
// path's kernels: it packs op(B) element by element through
// PackedB.Offset (the padding set to NaN, which must never reach C) and
// gives MulPackedB op(A), copied out when A is transposed.
type packedPath path

func (p packedPath) Sgemm(threads int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	a, lda, bp := packOperands(p.k32, transA, transB, m, n, k, a, lda, b, ldb)
	mulPackedB(p.k32, threads, m, n, k, alpha, a, lda, bp, beta, c, ldc)
}

func (p packedPath) Dgemm(threads int, transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	a, lda, bp := packOperands(p.k64, transA, transB, m, n, k, a, lda, b, ldb)
	mulPackedB(p.k64, threads, m, n, k, alpha, a, lda, bp, beta, c, ldc)
}

// packOperands returns op(A) untransposed and op(B) packed for kern.
func packOperands[T float32 | float64](kern *kernel[T], transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int) ([]T, int, []T) {
	if transA && m > 0 && k > 0 {
		at := make([]T, m*k)
		for i := range m {
			for q := range k {
				at[i*k+q] = a[q*lda+i]
			}
		}
		a, lda = at, k
	} else if transA {
		a, lda = nil, max(1, k)
	}
	lay := packedBLayout(kern, k, n)
	bp := make([]T, lay.Len())
	for i := range bp {
		bp[i] = T(math.NaN())
	}
	for q := range k {
		for j := range n {
			if transB {
				bp[lay.Offset(q, j)] = b[j*ldb+q]
			} else {
				bp[lay.Offset(q, j)] = b[q*ldb+j]
			}
		}
	}
	return a, lda, bp
}

func TestMulPackedB(t *testing.T) {
	runPaths(t, func(t *testing.T, p path) {
		gemmtest.TestSgemm(t, packedPath(p))
		gemmtest.TestDgemm(t, packedPath(p))
	})
}

// TestMulPackedBBlocking runs products that take several k blocks, several
// row blocks and partial strips, A packed and read in place, split over
// several goroutines.
func TestMulPackedBBlocking(t *testing.T) {
	defer func(old int) { inPlaceStrips = old }(inPlaceStrips)
	runPaths(t, func(t *testing.T, p path) {
		for _, strips := range []int{0, 1 << 30} {
			inPlaceStrips = strips
			for _, s := range [][3]int{{301, 9, 517}, {32, 1024, 288}, {128, 70, 1152}, {7, 33, 5}} {
				c := gemmtest.Case{M: s[0], N: s[1], K: s[2], TransB: s[0] == 7, Alpha: 0.5, Beta: 1.5, PadA: 3, PadB: 1, PadC: 2, Threads: 3}
				gemmtest.CheckSgemm(t, packedPath(p), c)
				gemmtest.CheckDgemm(t, packedPath(p), c)
			}
		}
	})
}

// TestPackedBLayout checks that Offset maps the elements of B one to one
// onto [0, Len) and that each strip's rows are consecutive.
func TestPackedBLayout(t *testing.T) {
	for _, s := range [][2]int{{1, 1}, {288, 1024}, {517, 9}, {1152, 70}, {3, 17}} {
		l := PackedBLayout[float32](s[0], s[1])
		seen := make([]bool, l.Len())
		for q := range l.K {
			for j := range l.N {
				o := l.Offset(q, j)
				if o < 0 || o >= len(seen) || seen[o] {
					t.Fatalf("%d×%d: Offset(%d, %d) = %d: out of range or taken twice", l.K, l.N, q, j, o)
				}
				seen[o] = true
				if j%l.NR > 0 && l.Offset(q, j-1) != o-1 {
					t.Fatalf("%d×%d: Offset(%d, %d) = %d, not one past Offset(%d, %d)", l.K, l.N, q, j, o, q, j-1)
				}
			}
		}
	}
}

func TestMulPackedBPanics(t *testing.T) {
	bp := make([]float32, 10)
	for name, f := range map[string]func(){
		"negative":     func() { MulPackedB(1, -1, 2, 2, 1, make([]float32, 4), 2, bp, 0, make([]float32, 4), 2) },
		"short packed": func() { MulPackedB(1, 2, 20, 2, 1, make([]float32, 4), 2, bp, 0, make([]float32, 40), 20) },
		"short A": func() {
			MulPackedB(1, 2, 2, 2, 1, make([]float32, 3), 2, make([]float32, 64), 0, make([]float32, 4), 2)
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestMulPackedBNoAllocs checks that a product in steady state, split or
// not, allocates nothing.
func TestMulPackedBNoAllocs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	const m, n, k = 64, 512, 300
	lay := PackedBLayout[float32](k, n)
	a, bp, c := make([]float32, m*k), make([]float32, lay.Len()), make([]float32, m*n)
	for _, threads := range []int{1, 4} {
		MulPackedB(threads, m, n, k, 1, a, k, bp, 0, c, n)
		if got := testing.AllocsPerRun(20, func() { MulPackedB(threads, m, n, k, 1, a, k, bp, 0, c, n) }); got > 0.5 {
			t.Errorf("threads %d: %v allocations per product", threads, got)
		}
	}
}
