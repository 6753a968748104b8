package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
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

// kernelSet is one choice of micro-kernels for both element types.
type kernelSet struct {
	name string
	k32  *kernel[float32]
	k64  *kernel[float64]
}

// kernelSets are the kernels this build can run here: the generic ones,
// and the assembly ones where the build and the CPU have them.
func kernelSets() []kernelSet {
	sets := []kernelSet{{"generic", &generic32, &generic64}}
	if hasSIMD {
		sets = append(sets, kernelSet{"avx2", &avx2S, &avx2D})
	}
	return sets
}

// withKernels runs f with the kernels of ks in use.
func withKernels(t *testing.T, ks kernelSet, f func(t *testing.T)) {
	t.Run(ks.name, func(t *testing.T) {
		old32, old64 := state32.kern, state64.kern
		state32.kern, state64.kern = ks.k32, ks.k64
		defer func() { state32.kern, state64.kern = old32, old64 }()
		f(t)
	})
}

func TestKernelSelection(t *testing.T) {
	want := "generic"
	if hasSIMD {
		want = "avx2"
	}
	if got := Kernel(); got != want {
		t.Errorf("Kernel() = %q, want %q", got, want)
	}
	t.Logf("float32 kernel: %s", Kernel())
}

func TestSgemm(t *testing.T) {
	for _, ks := range kernelSets() {
		withKernels(t, ks, func(t *testing.T) {
			for _, tc := range gemmCases() {
				t.Run(tc.String(), func(t *testing.T) { runGemmCase(t, tc, 1e-5, Sgemm) })
			}
		})
	}
}

// TestInPlaceA runs larger products through both ways of taking A: packed,
// and read in place by the strided kernel (which needs whole strips, so
// the last partial strip is packed), with every transpose and padding,
// split over several goroutines and several k blocks.
func TestInPlaceA(t *testing.T) {
	defer func(old int) { inPlaceStrips = old }(inPlaceStrips)
	old := runtime.GOMAXPROCS(3)
	defer runtime.GOMAXPROCS(old)
	for _, ks := range kernelSets() {
		for _, strips := range []int{0, 1 << 30} {
			inPlaceStrips = strips
			withKernels(t, ks, func(t *testing.T) {
				for _, s := range [][3]int{{301, 9, 517}, {97, 40, 600}, {250, 17, 93}, {64, 130, 300}} {
					for _, tA := range []bool{false, true} {
						for _, tB := range []bool{false, true} {
							tc := gemmCase{m: s[0], n: s[1], k: s[2], transA: tA, transB: tB, alpha: 0.5, beta: 0, padA: 3, padB: 1, padC: 2}
							runGemmCase(t, tc, 1e-5, Sgemm)
							tc.beta = 1.5
							runGemmCase(t, tc, 1e-12, Dgemm)
						}
					}
				}
			})
		}
	}
}

// TestInPlaceB covers the stridedB path: few rows of C, a wide
// untransposed B whose leading dimension is not a multiple of 64, partial
// strips of A and B, and several k blocks.
func TestInPlaceB(t *testing.T) {
	for _, s := range [][3]int{{32, 517, 300}, {20, 300, 600}, {7, 1000, 50}, {31, 290, 257}} {
		for _, tA := range []bool{false, true} {
			tc := gemmCase{m: s[0], n: s[1], k: s[2], transA: tA, alpha: 0.5, beta: 0, padA: 3, padB: 3, padC: 2}
			runGemmCase(t, tc, 1e-5, Sgemm)
			tc.beta = 1.5
			runGemmCase(t, tc, 1e-5, Sgemm)
		}
	}
}

func TestDgemm(t *testing.T) {
	for _, ks := range kernelSets() {
		withKernels(t, ks, func(t *testing.T) {
			for _, tc := range gemmCases() {
				t.Run(tc.String(), func(t *testing.T) { runGemmCase(t, tc, 1e-12, Dgemm) })
			}
		})
	}
}

// TestKernelsAgree compares the assembly kernels with the generic ones on
// products large enough to take the packed path, with every transpose,
// padding and scaling.
func TestKernelsAgree(t *testing.T) {
	if !hasSIMD {
		t.Skip("no assembly kernel in this build or on this CPU")
	}
	r := rand.New(rand.NewPCG(3, 4))
	sets := kernelSets()
	for i := 0; i < 60; i++ {
		m, n, k := 1+r.IntN(70), 1+r.IntN(70), 1+r.IntN(300)
		if i%10 == 0 {
			m, n, k = 100+r.IntN(200), 100+r.IntN(200), 200+r.IntN(400)
		}
		tA, tB := r.IntN(2) == 1, r.IntN(2) == 1
		alpha := []float32{1, -0.5, 2}[r.IntN(3)]
		beta := []float32{0, 1, 0.75}[r.IntN(3)]
		ar, ac := m, k
		if tA {
			ar, ac = k, m
		}
		br, bc := k, n
		if tB {
			br, bc = n, k
		}
		lda, ldb, ldc := ac+r.IntN(3), bc+r.IntN(3), n+r.IntN(3)
		a := randSlice[float32](r, ar*lda)
		b := randSlice[float32](r, br*ldb)
		c0 := randSlice[float32](r, m*ldc)
		var out [2][]float32
		for s, ks := range sets {
			c := append([]float32(nil), c0...)
			state32.kern = ks.k32
			Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
			out[s] = c
		}
		state32.kern = sets[len(sets)-1].k32
		for j := range c0 {
			g, s := float64(out[0][j]), float64(out[1][j])
			if math.Abs(g-s) > 1e-5*math.Sqrt(float64(k))*(1+math.Abs(g)) {
				t.Fatalf("m%d n%d k%d tA%v tB%v alpha%g beta%g: C[%d] = %g (avx2), %g (generic)", m, n, k, tA, tB, alpha, beta, j, s, g)
			}
		}
	}
}

// TestPackedPath runs the packed kernel directly on small shapes (which Gemm
// would send to the direct loop) so that every edge-tile case is covered.
func TestPackedPath(t *testing.T) {
	defer func(old int) { inPlaceStrips = old }(inPlaceStrips)
	for _, ks := range kernelSets() {
		// Packed A always, and (where the kernel can) A read in place always.
		for _, strips := range []int{0, 1 << 30} {
			inPlaceStrips = strips
			t.Run(fmt.Sprintf("%s_inPlace%d", ks.name, strips), func(t *testing.T) {
				testPacked(t, ks.k32, 1e-5)
				testPacked(t, ks.k64, 1e-12)
			})
		}
	}
}

func testPacked[T float32 | float64](t *testing.T, kn *kernel[T], tol float64) {
	packed := func(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
		p := problem[T]{kern: kn, transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, beta: beta, a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc}
		p.run(0, m, 0, n, new(buffers[T]))
	}
	// Every row and column tail of one and two tiles, and k around the
	// kernel's unrolling.
	for m := 1; m <= 2*kn.mr+1; m++ {
		for n := 1; n <= 2*kn.nr+1; n++ {
			for _, k := range []int{1, 2, 3, 4, 5, 7, 8, 9, 16} {
				for _, tA := range []bool{false, true} {
					for _, tB := range []bool{false, true} {
						for _, ab := range [][2]float64{{1.5, 0.5}, {1, 0}, {-1, 1}} {
							tc := gemmCase{m: m, n: n, k: k, transA: tA, transB: tB, alpha: ab[0], beta: ab[1], padA: k % 2, padB: m % 3, padC: 1}
							runGemmCase(t, tc, tol, packed)
						}
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
	for _, ks := range kernelSets() {
		// Smaller tasks than usual, so that these products split 7 ways.
		k32 := *ks.k32
		k32.taskWork = 1 << 16
		ks.k32 = &k32
		withKernels(t, ks, func(t *testing.T) {
			for _, tc := range []gemmCase{
				{m: 301, n: 97, k: 67, alpha: 1, beta: 0},                               // rows
				{m: 9, n: 3001, k: 77, transA: true, alpha: 1, beta: 0.5},               // columns
				{m: 250, n: 250, k: 300, transA: true, transB: true, alpha: 2, beta: 1}, // rows, two k blocks
				{m: 403, n: 4500, k: 20, transB: true, alpha: 1, beta: 0, padC: 3},      // rows, two n blocks
			} {
				if tasks, _, _ := split(tc.m, tc.n, tc.k, 7, ks.k32.mr, ks.k32.nr, ks.k32.taskWork); tasks < 2 {
					t.Fatalf("%v: not split (test needs a parallel case)", tc)
				}
				t.Run(tc.String(), func(t *testing.T) { runGemmCase(t, tc, 1e-5, Sgemm) })
			}
		})
	}
}

// TestConcurrentCalls runs parallel products from several goroutines at
// once, so that helpers are scarce and callers compute others' ranges.
func TestConcurrentCalls(t *testing.T) {
	old := runtime.GOMAXPROCS(3)
	defer runtime.GOMAXPROCS(old)
	const m, n, k = 256, 96, 100 // split in two by every kernel
	r := rand.New(rand.NewPCG(5, 6))
	a := randSlice[float32](r, m*k)
	b := randSlice[float32](r, k*n)
	want := make([]float32, m*n)
	direct(false, false, m, n, k, 1, a, k, b, n, 0, want, n)
	if tasks, _, _ := split(m, n, k, 3, state32.kern.mr, state32.kern.nr, state32.kern.taskWork); tasks < 2 {
		t.Fatal("not split (test needs a parallel case)")
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := make([]float32, m*n)
			for it := 0; it < 20; it++ {
				Sgemm(false, false, m, n, k, 1, a, k, b, n, 0, c, n)
				for i := range c {
					if math.Abs(float64(c[i]-want[i])) > 1e-4 {
						errs <- fmt.Sprintf("goroutine %d, call %d: C[%d] = %g, want %g", g, it, i, c[i], want[i])
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestThreadsDoNotChangeResults runs products split over 2, 3 and 7
// goroutines and requires exactly the result of one goroutine: the split
// never cuts k, so a data-parallel replica with a smaller thread budget
// computes what one device with all the cores computes.
func TestThreadsDoNotChangeResults(t *testing.T) {
	for _, ks := range kernelSets() {
		k32 := *ks.k32
		k32.taskWork = 1 << 16 // smaller tasks than usual, so that these split 7 ways
		ks.k32 = &k32
		withKernels(t, ks, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, 8))
			for _, tc := range []gemmCase{
				{m: 301, n: 97, k: 700, alpha: 1, beta: 0},
				{m: 9, n: 3001, k: 77, transA: true, alpha: 1, beta: 0.5},
				{m: 250, n: 250, k: 600, transA: true, transB: true, alpha: 2, beta: 1},
			} {
				a := randSlice[float32](r, tc.m*tc.k)
				b := randSlice[float32](r, tc.k*tc.n)
				c0 := randSlice[float32](r, tc.m*tc.n)
				lda, ldb := tc.k, tc.n
				if tc.transA {
					lda = tc.m
				}
				if tc.transB {
					ldb = tc.k
				}
				run := func(threads int) []float32 {
					c := slices.Clone(c0)
					Gemm(threads, tc.transA, tc.transB, tc.m, tc.n, tc.k, float32(tc.alpha), a, lda, b, ldb, float32(tc.beta), c, tc.n)
					return c
				}
				want := run(1)
				for _, threads := range []int{2, 3, 7} {
					if tasks, _, _ := split(tc.m, tc.n, tc.k, threads, k32.mr, k32.nr, k32.taskWork); tasks < 2 {
						t.Fatalf("%v: not split %d ways (test needs a parallel case)", tc, threads)
					}
					if got := run(threads); !slices.Equal(got, want) {
						t.Errorf("%v: %d threads give a different result from 1", tc, threads)
					}
				}
			}
		})
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
		tasks, byRows, chunk := split(tc.m, tc.n, tc.k, tc.procs, 4, 4, 1<<18)
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

func benchGemm(b *testing.B, s int, transB bool) { benchShape(b, false, transB, s, s, s) }

func benchShape(b *testing.B, transA, transB bool, m, n, k int) {
	r := rand.New(rand.NewPCG(1, 2))
	lda, ldb := k, n
	if transA {
		lda = m
	}
	if transB {
		ldb = k
	}
	x := randSlice[float32](r, m*k)
	y := randSlice[float32](r, k*n)
	z := make([]float32, m*n)
	Sgemm(transA, transB, m, n, k, 1, x, lda, y, ldb, 0, z, n)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Sgemm(transA, transB, m, n, k, 1, x, lda, y, ldb, 0, z, n)
	}
	b.StopTimer()
	b.ReportMetric(2*float64(m)*float64(n)*float64(k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkSgemm256(b *testing.B)    { benchGemm(b, 256, false) }
func BenchmarkSgemm1024(b *testing.B)   { benchGemm(b, 1024, false) }
func BenchmarkSgemm1024NT(b *testing.B) { benchGemm(b, 1024, true) }

// The products of one training step of the MLP benchmark (batch 256,
// 93 → 512 → 512 → 9): FC forward X·Wᵀ, input gradient dY·W and weight
// gradient dYᵀ·X.
func BenchmarkSgemmFC(b *testing.B) {
	for _, s := range []struct {
		name           string
		transA, transB bool
		m, n, k        int
	}{
		{"fwd_256x512x93", false, true, 256, 512, 93},
		{"fwd_256x512x512", false, true, 256, 512, 512},
		{"fwd_256x9x512", false, true, 256, 9, 512},
		{"dX_256x512x512", false, false, 256, 512, 512},
		{"dW_512x512x256", true, false, 512, 512, 256},
		{"dW_512x93x256", true, false, 512, 93, 256},
	} {
		b.Run(s.name, func(b *testing.B) { benchShape(b, s.transA, s.transB, s.m, s.n, s.k) })
	}
}
