package gemm

import (
	"testing"

	"github.com/caffe2go/caffe2go/operators/kernels/gemm/gemmtest"
)

// dotPath is a path that computes every float32 product with
// transB && !transA on the dot path, whatever its size, and the others as
// Gemm would; it needs the avx2 kernel (the only one with a dot kernel).
type dotPath struct{}

// Sgemm computes the product on the dot path when B is transposed and A
// is not, with Gemm otherwise.
func (dotPath) Sgemm(threads int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if !transB || transA || m == 0 || n == 0 || k == 0 || alpha == 0 {
		gemm(&avx2S, threads, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	checkArgs(transA, transB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	k32 := avx2S
	k32.taskWork = 1 << 10 // split even small products, to test the ranges
	p := problem[float32]{kern: &k32, transB: true, m: m, n: n, k: k, alpha: alpha, beta: beta, a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc}
	dotProduct(state32, p, threads)
}

func skipNoDot(t *testing.T) {
	t.Helper()
	if avx2S.dot == nil {
		t.Skip("no dot kernel in this build or on this CPU (it needs AVX2 and FMA on amd64)")
	}
}

// TestDotPath runs the contract suite and every edge of the dot kernel's
// tiles through the dot path: rows of C that leave a partial group of
// four, columns that leave one or two, k around its eight-wide steps and
// masked tail, NaNs in A and B, every scalar case and several thread
// budgets, each against gemmtest's float64 reference and its rounding
// bound.
func TestDotPath(t *testing.T) {
	skipNoDot(t)
	gemmtest.TestSgemm(t, dotPath{})
	for m := 1; m <= 9; m++ {
		for n := 1; n <= 7; n++ {
			for _, k := range []int{1, 7, 8, 9, 15, 16, 33, 40, 47, 64, 100} {
				for i, ab := range [][2]float64{{1.5, 0.5}, {1, 0}, {-1, 1}} {
					c := gemmtest.Case{M: m, N: n, K: k, TransB: true, Alpha: ab[0], Beta: ab[1], PadA: k % 3, PadB: m % 2, PadC: i, Threads: 1 + (m+n)%3}
					gemmtest.CheckSgemm(t, dotPath{}, c)
				}
			}
		}
	}
	// Few rows and many columns: split by groups of columns, the last
	// one partial.
	for m := 1; m <= 5; m++ {
		for _, n := range []int{40, 101} {
			c := gemmtest.Case{M: m, N: n, K: 100, TransB: true, Alpha: 0.5, Beta: 1, PadA: 1, PadB: 2, PadC: 3, Threads: 3}
			gemmtest.CheckSgemm(t, dotPath{}, c)
		}
	}
	for _, nan := range [][2]bool{{true, false}, {false, true}, {true, true}} {
		c := gemmtest.Case{M: 13, N: 8, K: 77, TransB: true, Alpha: 1, Beta: 0.5, PadA: 1, PadB: 2, PadC: 3, Threads: 2, NaNA: nan[0], NaNB: nan[1]}
		gemmtest.CheckSgemm(t, dotPath{}, c)
	}
}

// TestDotPathChosen checks that Gemm sends the shapes the dot path is for
// to it, and the others not.
func TestDotPathChosen(t *testing.T) {
	skipNoDot(t)
	for _, tc := range []struct {
		transA, transB bool
		m, n, k        int
		want           bool
	}{
		{false, true, 256, 9, 512, true},   // mlp's last layer
		{false, true, 64, 10, 500, true},   // lenet's
		{false, true, 20, 25, 576, true},   // lenet's first convolution, weight gradient
		{false, true, 256, 24, 512, true},  // two strips, a third of them padding
		{false, true, 256, 16, 512, false}, // one whole strip
		{false, true, 256, 32, 512, false},
		{false, true, 50, 32, 64, false}, // k too short for the reduction
		{false, true, 256, 12, 32, false},
		{false, true, 4, 512, 512, true}, // a batch of four
		{false, true, 64, 128, 512, false},
		{false, false, 256, 9, 512, false},
		{true, true, 256, 9, 512, false},
	} {
		if got := useDot(&avx2S, tc.transA, tc.transB, tc.m, tc.n, tc.k); got != tc.want {
			t.Errorf("useDot(transA %v, transB %v, %d×%d×%d) = %v, want %v", tc.transA, tc.transB, tc.m, tc.n, tc.k, got, tc.want)
		}
	}
	if useDot(&generic32, false, true, 256, 9, 512) {
		t.Error("the portable kernel has no dot kernel, but takes the dot path")
	}
}

// TestDotPathChosenAVX512 checks the dot path's cost model with the
// AVX-512 tile kernels, twice as fast as the dot kernel: a classifier's
// few columns and a batch of a few still take the dot path, but a C of two
// strips of 16 columns, cheaper as one 32-wide strip at twice the speed,
// does not (the model's estimate; not measured on an AVX-512 CPU).
func TestDotPathChosenAVX512(t *testing.T) {
	if avx512S.dot == nil {
		t.Skip("no dot kernel in this build (it needs amd64 without the purego or noasm tag)")
	}
	for _, tc := range []struct {
		m, n, k int
		want    bool
	}{
		{256, 9, 512, true},
		{4, 512, 512, true},
		{256, 24, 512, false},
		{256, 32, 512, false},
		{64, 128, 512, false},
	} {
		if got := useDot(&avx512S, false, true, tc.m, tc.n, tc.k); got != tc.want {
			t.Errorf("useDot(avx512, %d×%d×%d) = %v, want %v", tc.m, tc.n, tc.k, got, tc.want)
		}
	}
}

// TestDotPathThreadsDoNotChangeResults requires the dot path to give
// exactly the result of one goroutine when split over several: the split
// cuts rows (or, for a C of few rows, columns) of C, never k.
func TestDotPathThreadsDoNotChangeResults(t *testing.T) {
	skipNoDot(t)
	for _, s := range [][3]int{{203, 11, 301}, {3, 101, 301}} { // split by rows, by columns
		m, n, k := s[0], s[1], s[2]
		a := make([]float32, m*k)
		b := make([]float32, n*k)
		for i := range a {
			a[i] = float32(i%17) - 8.25
		}
		for i := range b {
			b[i] = float32(i%13)*0.125 - 0.5
		}
		run := func(threads int) []float32 {
			c := make([]float32, m*n)
			dotPath{}.Sgemm(threads, false, true, m, n, k, 1, a, k, b, k, 0, c, n)
			return c
		}
		want := run(1)
		for _, threads := range []int{2, 3, 7} {
			got := run(threads)
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%v, %d threads: C[%d] = %v, one thread gives %v", s, threads, i, got[i], want[i])
				}
			}
		}
	}
}

// TestDotPathNoAllocs checks that the dot path, split or not, allocates
// nothing in steady state.
func TestDotPathNoAllocs(t *testing.T) {
	skipNoDot(t)
	const m, n, k = 256, 10, 512
	a, b, c := make([]float32, m*k), make([]float32, n*k), make([]float32, m*n)
	for _, threads := range []int{1, 2} {
		f := func() { Gemm(threads, false, true, m, n, k, 1, a, k, b, k, 0, c, n) }
		f()
		if allocs := testing.AllocsPerRun(20, f); allocs != 0 {
			t.Errorf("%d threads: %v allocations per call", threads, allocs)
		}
	}
}
