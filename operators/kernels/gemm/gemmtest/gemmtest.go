package gemmtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/testblas"
)

// Sgemmer is a float32 GEMM under test, with the arguments of package
// gemm's Gemm: threads is the caller's thread budget.
type Sgemmer interface {
	Sgemm(threads int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
}

// Dgemmer is a float64 GEMM under test, with the arguments of package
// gemm's Gemm.
type Dgemmer interface {
	Dgemm(threads int, transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int)
}

// SgemmFunc is a function that is an Sgemmer, such as gemm.Gemm[float32].
type SgemmFunc func(threads int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)

// Sgemm calls f.
func (f SgemmFunc) Sgemm(threads int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	f(threads, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// DgemmFunc is a function that is a Dgemmer, such as gemm.Gemm[float64].
type DgemmFunc func(threads int, transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int)

// Dgemm calls f.
func (f DgemmFunc) Dgemm(threads int, transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	f(threads, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// TestSgemm checks a float32 GEMM against the contract (see the package
// doc), and runs gonum's Dgemm tests on it through an adapter that rounds
// their operands to float32 and the result back (their values are small
// integers and halves, exact in float32).
func TestSgemm(t *testing.T, impl Sgemmer) {
	testGemm(t, impl.Sgemm)
	t.Run("gonum", func(t *testing.T) { testblas.TestDgemm(t, sgemmAdapter{impl}) })
}

// TestDgemm checks a float64 GEMM against the contract (see the package
// doc), and runs gonum's Dgemm tests on it through an adapter.
func TestDgemm(t *testing.T, impl Dgemmer) {
	testGemm(t, impl.Dgemm)
	t.Run("gonum", func(t *testing.T) { testblas.TestDgemm(t, dgemmAdapter{impl}) })
}

// gemmFunc is the method under test.
type gemmFunc[T float32 | float64] func(threads int, transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

// Case is one product: C = Alpha·op(A)·op(B) + Beta·C with op(A) M×K and
// op(B) K×N, random operands in [-1, 1), leading dimensions PadA, PadB and
// PadC past the row lengths, and the thread budget Threads. With NaNA a NaN
// is put in op(A) at (M/2, K/2), with NaNB in op(B) at (K/3, N/3).
type Case struct {
	M, N, K          int
	TransA, TransB   bool
	Alpha, Beta      float64
	PadA, PadB, PadC int
	Threads          int
	NaNA, NaNB       bool
}

// String names the case for a subtest.
func (tc Case) String() string {
	tr := func(t bool) string {
		if t {
			return "T"
		}
		return "N"
	}
	s := fmt.Sprintf("%dx%dx%d_%s%s_alpha%g_beta%g_ld+%d.%d.%d_threads%d", tc.M, tc.N, tc.K, tr(tc.TransA), tr(tc.TransB), tc.Alpha, tc.Beta, tc.PadA, tc.PadB, tc.PadC, tc.Threads)
	if tc.NaNA {
		s += "_NaNinA"
	}
	if tc.NaNB {
		s += "_NaNinB"
	}
	return s
}

// shapes are the m×n×k of the table, each run with every combination of
// transposes.
var shapes = [][3]int{
	// Tiny and odd, below and around one micro-tile.
	{1, 1, 1}, {2, 3, 5}, {7, 5, 3}, {6, 16, 9}, {17, 13, 11}, {33, 65, 9}, {37, 41, 43},
	// Empty.
	{0, 3, 4}, {3, 0, 4}, {3, 4, 0},
	// Skinny: one row or column, few rows of a wide B, many of a narrow one.
	{1, 257, 31}, {300, 1, 40}, {5, 2000, 17}, {7, 1000, 50}, {20, 300, 600}, {31, 290, 257},
	{32, 517, 300}, {129, 3, 300}, {300, 7, 513},
	// Larger: more than one block of k, m and n of package gemm's kernels,
	// and enough work to split by rows or by columns.
	{145, 520, 257}, {200, 150, 70}, {301, 97, 67}, {9, 3001, 77}, {160, 130, 270}, {40, 4200, 20},
}

// The parameters the table rotates through, so that each shape meets
// several of each: (alpha, beta), leading-dimension paddings of A, B and C,
// and thread budgets.
var (
	scalars = [][2]float64{{1, 0}, {1, 1}, {-0.5, 0.75}, {2, -1}, {0.25, 0}, {1.5, 1}, {-1, 0.5}}
	pads    = [][3]int{{0, 0, 0}, {3, 5, 2}, {1, 2, 7}}
	budgets = []int{1, 2, 3, 7}
)

// cases is the table: every shape with every transpose, then alpha = 0
// and the NaN cases.
func cases() []Case {
	var cs []Case
	for s, sh := range shapes {
		for q := 0; q < 4; q++ {
			i := 4*s + q
			ab, pd := scalars[i%len(scalars)], pads[i%len(pads)]
			cs = append(cs, Case{
				M: sh[0], N: sh[1], K: sh[2], TransA: q&1 != 0, TransB: q&2 != 0,
				Alpha: ab[0], Beta: ab[1], PadA: pd[0], PadB: pd[1], PadC: pd[2],
				Threads: budgets[(s+q)%len(budgets)],
			})
		}
	}
	for _, sh := range [][3]int{{5, 6, 7}, {40, 70, 300}, {7, 1000, 50}, {301, 97, 67}} {
		for q := 0; q < 4; q++ {
			c := Case{M: sh[0], N: sh[1], K: sh[2], TransA: q&1 != 0, TransB: q&2 != 0, PadA: 1, PadB: 2, PadC: 3, Threads: 1 + q}
			for _, v := range []struct {
				alpha, beta float64
				nanA, nanB  bool
			}{
				{0, 0.5, false, false},
				{0, 0, true, true},
				{0, 1, true, true},
				{1.5, 0.5, true, false},
				{-1, 0, false, true},
				{1, 1, true, true},
			} {
				c.Alpha, c.Beta, c.NaNA, c.NaNB = v.alpha, v.beta, v.nanA, v.nanB
				cs = append(cs, c)
			}
		}
	}
	return cs
}

func testGemm[T float32 | float64](t *testing.T, f gemmFunc[T]) {
	for _, tc := range cases() {
		t.Run(tc.String(), func(t *testing.T) { check(t, tc, f) })
	}
}

// CheckSgemm runs one case on impl and checks it as TestSgemm checks its
// table, for tests of an implementation's own paths.
func CheckSgemm(t *testing.T, impl Sgemmer, c Case) {
	t.Helper()
	check(t, c, impl.Sgemm)
}

// CheckDgemm runs one case on impl and checks it as TestDgemm checks its
// table.
func CheckDgemm(t *testing.T, impl Dgemmer, c Case) {
	t.Helper()
	check(t, c, impl.Dgemm)
}

// guard is how many elements past the end of each operand are checked for
// writes; they and the padding between rows hold NaN, so that reading them
// into the product shows as a NaN in C.
const guard = 16

// matrix returns a rows×cols matrix with leading dimension ld: a slice of
// the least length that holds it, random in [-1, 1), NaN between the rows
// and in the guard elements past its end (within its capacity).
func matrix[T float32 | float64](r *rand.Rand, rows, cols, ld int) []T {
	n := 0
	if rows > 0 && cols > 0 {
		n = (rows-1)*ld + cols
	}
	s := make([]T, n+guard)
	for i := range s {
		s[i] = T(math.NaN())
	}
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			s[i*ld+j] = T(r.Float64()*2 - 1)
		}
	}
	return s[:n]
}

// sameBits reports whether a and b hold the same bits, guards included.
func sameBits[T float32 | float64](a, b []T) bool {
	a, b = a[:cap(a)], b[:cap(b)]
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if bits(a[i]) != bits(b[i]) {
			return false
		}
	}
	return true
}

func bits[T float32 | float64](v T) uint64 {
	if x, ok := any(v).(float32); ok {
		return uint64(math.Float32bits(x))
	}
	return math.Float64bits(float64(v))
}

// clone copies s with its guard elements.
func clone[T float32 | float64](s []T) []T {
	r := make([]T, cap(s))
	copy(r, s[:cap(s)])
	return r[:len(s)]
}

// eps is the unit roundoff of T.
func eps[T float32 | float64]() float64 {
	var z T
	if _, ok := any(z).(float32); ok {
		return 0x1p-24
	}
	return 0x1p-53
}

// check runs one case and compares C with the reference, element by
// element, and A, B and the rest of C with what they held.
func check[T float32 | float64](t *testing.T, tc Case, f gemmFunc[T]) {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(tc.M)<<40|uint64(tc.N)<<20|uint64(tc.K), uint64(tc.PadA+tc.PadB+tc.PadC)))
	ar, ac := tc.M, tc.K
	if tc.TransA {
		ar, ac = tc.K, tc.M
	}
	br, bc := tc.K, tc.N
	if tc.TransB {
		br, bc = tc.N, tc.K
	}
	lda, ldb, ldc := max(1, ac)+tc.PadA, max(1, bc)+tc.PadB, max(1, tc.N)+tc.PadC
	a := matrix[T](r, ar, ac, lda)
	b := matrix[T](r, br, bc, ldb)
	c := matrix[T](r, tc.M, tc.N, ldc)
	// Element (i, p) of op(A) and (p, j) of op(B).
	ai, ap := lda, 1
	if tc.TransA {
		ai, ap = 1, lda
	}
	bp, bj := ldb, 1
	if tc.TransB {
		bp, bj = 1, ldb
	}
	if tc.NaNA && tc.M > 0 && tc.K > 0 {
		a[tc.M/2*ai+tc.K/2*ap] = T(math.NaN())
	}
	if tc.NaNB && tc.K > 0 && tc.N > 0 {
		b[tc.K/3*bp+tc.N/3*bj] = T(math.NaN())
	}
	if tc.Beta == 0 {
		for i := range c {
			c[i] = T(math.NaN())
		}
	}
	a0, b0, c0 := clone(a), clone(b), clone(c)

	f(tc.Threads, tc.TransA, tc.TransB, tc.M, tc.N, tc.K, T(tc.Alpha), a, lda, b, ldb, T(tc.Beta), c, ldc)

	if !sameBits(a, a0) {
		t.Error("A (or the elements past its end) changed")
	}
	if !sameBits(b, b0) {
		t.Error("B (or the elements past its end) changed")
	}
	if !sameBits(c[len(c):cap(c)], c0[len(c0):cap(c0)]) {
		t.Error("the elements past the end of C changed")
	}
	// The reference reads op(A) by rows and op(B) by columns, both copied
	// to float64 so that the loop runs over contiguous slices.
	ra, rb := make([]float64, tc.M*tc.K), make([]float64, tc.N*tc.K)
	for p := 0; p < tc.K; p++ {
		for i := 0; i < tc.M; i++ {
			ra[i*tc.K+p] = float64(a[i*ai+p*ap])
		}
		for j := 0; j < tc.N; j++ {
			rb[j*tc.K+p] = float64(b[p*bp+j*bj])
		}
	}
	tol := 2 * float64(tc.K+4) * eps[T]()
	bad := 0
	for i := 0; i < tc.M; i++ {
		for j := 0; j < ldc && i*ldc+j < len(c); j++ {
			got := c[i*ldc+j]
			if j >= tc.N {
				if bits(got) != bits(c0[i*ldc+j]) {
					t.Errorf("C[%d][%d], between rows, changed: %v, was %v", i, j, got, c0[i*ldc+j])
					bad++
				}
				continue
			}
			// The reference: A and B not read for alpha = 0 or k = 0,
			// C not read for beta = 0.
			var want, bound float64
			if tc.Alpha != 0 {
				var s, abs float64
				rj := rb[j*tc.K : (j+1)*tc.K]
				for p, x := range ra[i*tc.K : (i+1)*tc.K] {
					v := x * rj[p]
					s += v
					abs += math.Abs(v)
				}
				want, bound = tc.Alpha*s, math.Abs(tc.Alpha)*abs
			}
			if tc.Beta != 0 {
				v := tc.Beta * float64(c0[i*ldc+j])
				want += v
				bound += math.Abs(v)
			}
			g := float64(got)
			if math.IsNaN(want) != math.IsNaN(g) || !math.IsNaN(want) && math.Abs(g-want) > tol*bound {
				t.Errorf("C[%d][%d] = %v, want %v (within %.3g)", i, j, got, want, tol*bound)
				bad++
			}
			if bad >= 10 {
				t.Fatal("too many errors")
			}
		}
	}
}
