package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// naiveGemm is the reference: a triple loop in float64 over the strided
// operands.
func naiveGemm[T float32 | float64](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) []float64 {
	out := make([]float64, len(c))
	for i := range c {
		out[i] = float64(c[i])
	}
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < k; p++ {
				var av, bv T
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += float64(av) * float64(bv)
			}
			if beta == 0 {
				out[i*ldc+j] = float64(alpha) * s
			} else {
				out[i*ldc+j] = float64(alpha)*s + float64(beta)*float64(c[i*ldc+j])
			}
		}
	}
	return out
}

func randSlice[T float32 | float64](r *rand.Rand, n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = T(r.Float64()*2 - 1)
	}
	return s
}

type gemmCase struct {
	m, n, k        int
	transA, transB bool
	alpha, beta    float64
	padA, padB     int // extra leading-dimension padding
	padC           int
}

func (tc gemmCase) String() string {
	return fmt.Sprintf("m%d_n%d_k%d_tA%v_tB%v_a%g_b%g_pad%d.%d.%d", tc.m, tc.n, tc.k, tc.transA, tc.transB, tc.alpha, tc.beta, tc.padA, tc.padB, tc.padC)
}

func gemmCases() []gemmCase {
	var cases []gemmCase
	shapes := [][3]int{
		{1, 1, 1}, {0, 3, 4}, {3, 0, 4}, {3, 4, 0}, {2, 3, 5}, {7, 5, 3},
		{17, 13, 11}, {33, 65, 9}, {1, 257, 31}, {129, 3, 300},
		{131, 1029, 259}, {5, 2000, 17}, {300, 7, 513},
	}
	for _, s := range shapes {
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				cases = append(cases, gemmCase{m: s[0], n: s[1], k: s[2], transA: tA, transB: tB, alpha: 1, beta: 0})
			}
		}
	}
	cases = append(cases,
		gemmCase{m: 37, n: 41, k: 43, alpha: 0.5, beta: 1, padA: 3, padB: 5, padC: 2},
		gemmCase{m: 37, n: 41, k: 43, transA: true, transB: true, alpha: -2, beta: 0.25, padA: 1, padB: 2, padC: 7},
		gemmCase{m: 6, n: 5, k: 4, alpha: 1.5, beta: -1, padC: 1},
		gemmCase{m: 6, n: 5, k: 4, alpha: 0, beta: 2},
		gemmCase{m: 6, n: 5, k: 0, alpha: 1, beta: 0.5},
		gemmCase{m: 200, n: 150, k: 70, transB: true, alpha: 1, beta: 1, padA: 2, padB: 1, padC: 3},
	)
	return cases
}

func runGemmCase[T float32 | float64](t *testing.T, tc gemmCase, tol float64, call func(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)) {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(tc.m*1000003+tc.n*1009+tc.k), 7))
	ar, ac := tc.m, tc.k
	if tc.transA {
		ar, ac = tc.k, tc.m
	}
	br, bc := tc.k, tc.n
	if tc.transB {
		br, bc = tc.n, tc.k
	}
	lda, ldb, ldc := max(1, ac)+tc.padA, max(1, bc)+tc.padB, max(1, tc.n)+tc.padC
	a := randSlice[T](r, ar*lda)
	b := randSlice[T](r, br*ldb)
	c := randSlice[T](r, tc.m*ldc)
	if tc.beta == 0 {
		// beta = 0 must ignore what C holds, NaNs included.
		for i := range c {
			c[i] = T(math.NaN())
		}
	}
	want := naiveGemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, T(tc.alpha), a, lda, b, ldb, T(tc.beta), c, ldc)
	call(tc.transA, tc.transB, tc.m, tc.n, tc.k, T(tc.alpha), a, lda, b, ldb, T(tc.beta), c, ldc)
	for i := 0; i < tc.m; i++ {
		for j := 0; j < ldc; j++ {
			got, w := float64(c[i*ldc+j]), want[i*ldc+j]
			if j >= tc.n {
				// Padding between rows must be left alone.
				if got != w && !(math.IsNaN(got) && math.IsNaN(w)) {
					t.Fatalf("%v: padding C[%d][%d] changed: %g, was %g", tc, i, j, got, w)
				}
				continue
			}
			if math.IsNaN(got) || math.Abs(got-w) > tol*(1+math.Abs(w))*math.Sqrt(float64(tc.k)+1) {
				t.Fatalf("%v: C[%d][%d] = %g, want %g", tc, i, j, got, w)
			}
		}
	}
}

func TestSgemm(t *testing.T) {
	for _, tc := range gemmCases() {
		t.Run(tc.String(), func(t *testing.T) { runGemmCase(t, tc, 1e-5, Sgemm) })
	}
}

func TestDgemm(t *testing.T) {
	for _, tc := range gemmCases() {
		t.Run(tc.String(), func(t *testing.T) { runGemmCase(t, tc, 1e-12, Dgemm) })
	}
}

// TestPackedPath runs the packed kernel directly on small shapes (which Gemm
// would send to the direct loop) so that every edge-tile case is covered.
func TestPackedPath(t *testing.T) {
	packed := func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
		p := problem[float32]{transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, beta: beta, a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc}
		p.run(0, m, 0, n, new(buffers[float32]))
	}
	for m := 1; m <= 9; m++ {
		for n := 1; n <= 9; n++ {
			for _, k := range []int{1, 2, 5} {
				for _, tA := range []bool{false, true} {
					for _, tB := range []bool{false, true} {
						tc := gemmCase{m: m, n: n, k: k, transA: tA, transB: tB, alpha: 1.5, beta: 0.5, padC: 1}
						runGemmCase(t, tc, 1e-5, packed)
					}
				}
			}
		}
	}
}

// TestParallelSplit checks both split directions and uneven chunks with
// more workers than this machine may have.
func TestParallelSplit(t *testing.T) {
	old := runtime.GOMAXPROCS(7)
	defer runtime.GOMAXPROCS(old)
	for _, tc := range []gemmCase{
		{m: 301, n: 97, k: 67, alpha: 1, beta: 0},                               // rows
		{m: 9, n: 3001, k: 77, transA: true, alpha: 1, beta: 0.5},               // columns
		{m: 250, n: 250, k: 300, transA: true, transB: true, alpha: 2, beta: 1}, // rows, two k blocks
	} {
		if tasks, _, _ := split(tc.m, tc.n, tc.k, 7); tasks < 2 {
			t.Fatalf("%v: not split (test needs a parallel case)", tc)
		}
		t.Run(tc.String(), func(t *testing.T) { runGemmCase(t, tc, 1e-5, Sgemm) })
	}
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		m, n, k, procs int
		tasks, chunk   int
		byRows         bool
	}{
		{m: 10, n: 10, k: 10, procs: 8, tasks: 1, chunk: 10, byRows: true},
		{m: 1024, n: 1024, k: 1024, procs: 1, tasks: 1, chunk: 1024, byRows: true},
		{m: 1024, n: 1024, k: 1024, procs: 4, tasks: 4, chunk: 256, byRows: true},
		{m: 1000, n: 1000, k: 1000, procs: 3, tasks: 3, chunk: 336, byRows: true},
		{m: 8, n: 4096, k: 1024, procs: 4, tasks: 4, chunk: 1024, byRows: false},
		{m: 20, n: 20, k: 100000, procs: 8, tasks: 1, chunk: 20, byRows: true},
	} {
		tasks, byRows, chunk := split(tc.m, tc.n, tc.k, tc.procs)
		if tasks != tc.tasks || byRows != tc.byRows || chunk != tc.chunk {
			t.Errorf("split(%d, %d, %d, %d) = %d, %v, %d; want %d, %v, %d", tc.m, tc.n, tc.k, tc.procs, tasks, byRows, chunk, tc.tasks, tc.byRows, tc.chunk)
		}
	}
}

func TestBadArgumentsPanic(t *testing.T) {
	a := make([]float32, 6)
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"negative", func() { Sgemm(false, false, -1, 2, 3, 1, a, 3, a, 2, 0, a, 2) }},
		{"lda", func() { Sgemm(false, false, 2, 2, 3, 1, a, 2, a, 2, 0, a, 2) }},
		{"short A", func() { Sgemm(false, false, 3, 2, 3, 1, a, 3, a, 2, 0, a, 2) }},
		{"short C", func() { Sgemm(false, false, 2, 4, 1, 1, a, 1, a, 4, 0, a, 4) }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			tc.f()
		}()
	}
}

func TestSgemmNoAllocs(t *testing.T) {
	for _, s := range []int{8, 64, 256} {
		a := make([]float32, s*s)
		b := make([]float32, s*s)
		c := make([]float32, s*s)
		Sgemm(false, true, s, s, s, 1, a, s, b, s, 0, c, s)
		if n := testing.AllocsPerRun(10, func() { Sgemm(false, true, s, s, s, 1, a, s, b, s, 0, c, s) }); n != 0 {
			t.Errorf("Sgemm %d³: %v allocations per call", s, n)
		}
	}
}

func benchGemm(b *testing.B, s int, transB bool) {
	r := rand.New(rand.NewPCG(1, 2))
	x := randSlice[float32](r, s*s)
	y := randSlice[float32](r, s*s)
	z := make([]float32, s*s)
	Sgemm(false, transB, s, s, s, 1, x, s, y, s, 0, z, s)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Sgemm(false, transB, s, s, s, 1, x, s, y, s, 0, z, s)
	}
	b.ReportMetric(2*float64(s)*float64(s)*float64(s)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkSgemm256(b *testing.B)    { benchGemm(b, 256, false) }
func BenchmarkSgemm1024(b *testing.B)   { benchGemm(b, 1024, false) }
func BenchmarkSgemm1024NT(b *testing.B) { benchGemm(b, 1024, true) }
