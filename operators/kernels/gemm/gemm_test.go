package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"

	"golang.org/x/sys/cpu"

	"github.com/caffe2go/caffe2go/operators/kernels/gemm/gemmtest"
)

// path is one of the kernel paths of this package, as an implementation
// for package gemmtest: gemm on its kernels, chosen per call rather than
// through the kernel Gemm uses.
type path struct {
	name string
	k32  *kernel[float32]
	k64  *kernel[float64]
	skip string // why the path cannot run here, or ""
}

// Sgemm is Gemm on p's float32 kernel.
func (p path) Sgemm(threads int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemm(p.k32, threads, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Dgemm is Gemm on p's float64 kernel.
func (p path) Dgemm(threads int, transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	gemm(p.k64, threads, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// paths are the kernel paths of this package: the portable Go kernels, the
// AVX2 ones and the AVX-512 ones, which skip where the build or the CPU
// lacks them.
func paths() []path {
	avx2 := path{name: "avx2", k32: &avx2S, k64: &avx2D}
	switch {
	case hasSIMD:
	case runtime.GOARCH != "amd64":
		avx2.skip = "no assembly kernels on " + runtime.GOARCH
	case !cpu.X86.HasAVX2 || !cpu.X86.HasFMA:
		avx2.skip = "this CPU lacks AVX2 or FMA"
	default:
		avx2.skip = "built with the purego or noasm tag"
	}
	avx512 := path{name: "avx512", k32: &avx512S, k64: &avx512D, skip: avx512Skip()}
	return []path{{name: "generic", k32: &generic32, k64: &generic64}, avx2, avx512}
}

// runPaths runs f on every path, as a subtest named after it.
func runPaths(t *testing.T, f func(t *testing.T, p path)) {
	for _, p := range paths() {
		t.Run(p.name, func(t *testing.T) {
			if p.skip != "" {
				t.Skip(p.skip)
			}
			f(t, p)
		})
	}
}

func TestSgemm(t *testing.T) {
	runPaths(t, func(t *testing.T, p path) { gemmtest.TestSgemm(t, p) })
}

func TestDgemm(t *testing.T) {
	runPaths(t, func(t *testing.T, p path) { gemmtest.TestDgemm(t, p) })
}

// TestEntryPoints runs one product through each exported function, which
// take the kernel this machine uses: Gemm with a thread budget, Sgemm and
// Dgemm with GOMAXPROCS.
func TestEntryPoints(t *testing.T) {
	c := gemmtest.Case{M: 70, N: 90, K: 110, TransB: true, Alpha: 1.5, Beta: 0.5, PadA: 1, PadB: 2, PadC: 3, Threads: 3}
	gemmtest.CheckSgemm(t, gemmtest.SgemmFunc(Gemm[float32]), c)
	gemmtest.CheckDgemm(t, gemmtest.DgemmFunc(Gemm[float64]), c)
	gemmtest.CheckSgemm(t, gemmtest.SgemmFunc(func(_ int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
		Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}), c)
	gemmtest.CheckDgemm(t, gemmtest.DgemmFunc(func(_ int, transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
		Dgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}), c)
}

func randSlice[T float32 | float64](r *rand.Rand, n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = T(r.Float64()*2 - 1)
	}
	return s
}

func TestKernelSelection(t *testing.T) {
	want := "generic"
	switch {
	case hasAVX512:
		want = "avx512"
	case hasSIMD:
		want = "avx2"
	}
	if got := Kernel(); got != want {
		t.Errorf("Kernel() = %q, want %q", got, want)
	}
	t.Logf("float32 kernel: %s", Kernel())
}

// TestInPlaceA runs larger products through both ways of taking A, whatever
// the blocking would choose: packed, and read in place by the strided
// kernel (which needs whole strips, so the last partial strip is packed),
// with every transpose and padding, split over several goroutines and
// several k blocks.
func TestInPlaceA(t *testing.T) {
	defer func(old int) { inPlaceStrips = old }(inPlaceStrips)
	runPaths(t, func(t *testing.T, p path) {
		for _, strips := range []int{0, 1 << 30} {
			inPlaceStrips = strips
			for _, s := range [][3]int{{301, 9, 517}, {97, 40, 600}, {250, 17, 93}, {64, 130, 300}} {
				for q := 0; q < 4; q++ {
					c := gemmtest.Case{M: s[0], N: s[1], K: s[2], TransA: q&1 != 0, TransB: q&2 != 0, Alpha: 0.5, PadA: 3, PadB: 1, PadC: 2, Threads: 3}
					gemmtest.CheckSgemm(t, p, c)
					c.Beta = 1.5
					gemmtest.CheckDgemm(t, p, c)
				}
			}
		}
	})
}

// packed is a path that runs the blocked code on every product, where Gemm
// would compute a small one with the direct loop; it needs k > 0 and
// alpha ≠ 0.
type packed path

// Sgemm computes the product with the blocked code on p's kernel.
func (p packed) Sgemm(_ int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	pr := problem[float32]{kern: p.k32, transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, beta: beta, a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc}
	pr.run(0, m, 0, n, new(buffers[float32]))
}

// Dgemm computes the product with the blocked code on p's kernel.
func (p packed) Dgemm(_ int, transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	pr := problem[float64]{kern: p.k64, transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, beta: beta, a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc}
	pr.run(0, m, 0, n, new(buffers[float64]))
}

// TestPackedPath runs the blocked code on small shapes (which Gemm would
// send to the direct loop), with A packed and, where the kernel can, read
// in place, so that every edge-tile case is covered.
func TestPackedPath(t *testing.T) {
	defer func(old int) { inPlaceStrips = old }(inPlaceStrips)
	runPaths(t, func(t *testing.T, p path) {
		for _, strips := range []int{0, 1 << 30} {
			inPlaceStrips = strips
			t.Run(fmt.Sprintf("inPlace%d", strips), func(t *testing.T) {
				testPacked(t, p.k32.mr, p.k32.nr, func(t *testing.T, c gemmtest.Case) { gemmtest.CheckSgemm(t, packed(p), c) })
				testPacked(t, p.k64.mr, p.k64.nr, func(t *testing.T, c gemmtest.Case) { gemmtest.CheckDgemm(t, packed(p), c) })
			})
		}
	})
}

// testPacked checks every row and column tail of one and two mr×nr tiles,
// with k around the kernels' unrolling.
func testPacked(t *testing.T, mr, nr int, check func(*testing.T, gemmtest.Case)) {
	for m := 1; m <= 2*mr+1; m++ {
		for n := 1; n <= 2*nr+1; n++ {
			for _, k := range []int{1, 2, 3, 4, 5, 7, 8, 9, 16} {
				for q := 0; q < 4; q++ {
					for _, ab := range [][2]float64{{1.5, 0.5}, {1, 0}, {-1, 1}} {
						check(t, gemmtest.Case{M: m, N: n, K: k, TransA: q&1 != 0, TransB: q&2 != 0, Alpha: ab[0], Beta: ab[1], PadA: k % 2, PadB: m % 3, PadC: 1, Threads: 1})
					}
				}
			}
		}
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
	runPaths(t, func(t *testing.T, p path) {
		k32 := *p.k32
		k32.taskWork = 1 << 16 // smaller tasks than usual, so that these split 7 ways
		r := rand.New(rand.NewPCG(7, 8))
		for _, tc := range []struct {
			m, n, k        int
			transA, transB bool
			alpha, beta    float32
		}{
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
				gemm(&k32, threads, tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, c, tc.n)
				return c
			}
			want := run(1)
			for _, threads := range []int{2, 3, 7} {
				if tasks, _, _ := split(tc.m, tc.n, tc.k, threads, k32.mr, k32.nr, k32.taskWork); tasks < 2 {
					t.Fatalf("%+v: not split %d ways (test needs a parallel case)", tc, threads)
				}
				if got := run(threads); !slices.Equal(got, want) {
					t.Errorf("%+v: %d threads give a different result from 1", tc, threads)
				}
			}
		}
	})
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
