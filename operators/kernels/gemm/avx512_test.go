package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"
)

// The tests named AVX512 check the AVX-512 kernels one by one: every
// micro-kernel (packed, A in place, B in place, each for every last strip
// of 1 to 11 rows), the packers, and whole products against the AVX2
// kernels. They skip, saying why, where the build or the CPU lacks
// AVX-512F; they are small enough to run in an emulator
// (-test.run AVX512).

// avx512Skip says why the AVX-512 kernels cannot run here, or is "".
func avx512Skip() string {
	switch {
	case hasAVX512:
		return ""
	case runtime.GOARCH != "amd64":
		return "no assembly kernels on " + runtime.GOARCH
	case !hasSIMD && (!cpu.X86.HasAVX2 || !cpu.X86.HasFMA):
		return "this CPU lacks AVX2 or FMA"
	case !cpu.X86.HasAVX512F:
		return "this CPU lacks AVX-512F (or GODEBUG=cpu.avx512f=off turned it off)"
	default:
		return "built with the purego or noasm tag"
	}
}

func needAVX512(t *testing.T) {
	t.Helper()
	if why := avx512Skip(); why != "" {
		t.Skip(why)
	}
}

// tileFuncs are a kernel set's micro-kernels indexed by the rows they
// compute, 1 to mr (the full tile at mr, the edge kernels below).
type tileFuncs[T float32 | float64] struct {
	tile     []func(k int, a, b, c []T, ldc int, alpha, beta T)
	strided  []func(k int, a []T, rs, cs int, b, c []T, ldc int, alpha, beta T)
	stridedB []func(k int, a, b []T, ldb int, c []T, ldc int, alpha, beta T)
}

func tilesOf[T float32 | float64](kn *kernel[T]) tileFuncs[T] {
	f := tileFuncs[T]{
		tile:    append(slices.Clone(kn.edge), kn.tile),
		strided: append(slices.Clone(kn.stridedEdge), kn.strided),
	}
	if kn.stridedB != nil {
		f.stridedB = append(slices.Clone(kn.stridedBEdge), kn.stridedB)
	}
	return f
}

func genericFor[T float32 | float64]() *kernel[T] {
	var k any
	switch any((*T)(nil)).(type) {
	case *float32:
		k = &generic32
	case *float64:
		k = &generic64
	}
	return k.(*kernel[T])
}

func avx2For[T float32 | float64]() *kernel[T] {
	var k any
	switch any((*T)(nil)).(type) {
	case *float32:
		k = &avx2S
	case *float64:
		k = &avx2D
	}
	return k.(*kernel[T])
}

// operand is a strip of A (rows×k) or B (k×nr) in some layout: at gives
// element (i, p) of A or (p, j) of B, and data holds it, every element
// that is not part of the operand set to NaN.
type operand[T float32 | float64] struct {
	data []T
	ld   int  // leading dimension, as gemm takes it
	tr   bool // transposed, as gemm takes it
}

func (o operand[T]) at(r, c int) T {
	if o.tr {
		return o.data[c*o.ld+r]
	}
	return o.data[r*o.ld+c]
}

// newOperand returns a rows×cols operand with leading dimension ld,
// transposed (column-major) or not, random where it is read and NaN
// elsewhere.
func newOperand[T float32 | float64](r *rand.Rand, rows, cols, ld int, tr bool) operand[T] {
	outer, inner := rows, cols
	if tr {
		outer, inner = cols, rows
	}
	d := make([]T, (outer-1)*ld+inner)
	for i := range d {
		d[i] = T(math.NaN())
	}
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			d[o*ld+i] = T(r.Float64()*2 - 1)
		}
	}
	return operand[T]{data: d, ld: ld, tr: tr}
}

// referenceTile computes the rows×nr tile with the generic kernel, through
// the blocked code (which packs A and B for it), on c (leading dimension
// ldc).
func referenceTile[T float32 | float64](rows, nr, k int, a, b operand[T], alpha, beta T, c []T, ldc int) {
	p := problem[T]{kern: genericFor[T](), transA: a.tr, transB: b.tr, m: rows, n: nr, k: k, alpha: alpha, beta: beta, a: a.data, lda: a.ld, b: b.data, ldb: b.ld, c: c, ldc: ldc}
	p.run(0, rows, 0, nr, new(buffers[T]))
}

// avx2Tile computes the rows×nr tile with the AVX2 kernel, 6×(its nr) at
// a time, each sub-tile packed for it and computed on a copy of its part
// of C with the same alpha and beta: every element by the operations of
// the AVX2 kernels, in their order.
func avx2Tile[T float32 | float64](rows, nr, k int, a, b operand[T], alpha, beta T, c []T, ldc int) {
	kn := avx2For[T]()
	mr2, nr2 := kn.mr, kn.nr
	pa := make([]T, k*mr2)
	pb := make([]T, k*nr2)
	sc := make([]T, mr2*nr2)
	for i0 := 0; i0 < rows; i0 += mr2 {
		for j0 := 0; j0 < nr; j0 += nr2 {
			clear(pa)
			clear(sc)
			for p := 0; p < k; p++ {
				for i := 0; i < mr2 && i0+i < rows; i++ {
					pa[p*mr2+i] = a.at(i0+i, p)
				}
				for j := 0; j < nr2; j++ {
					pb[p*nr2+j] = b.at(p, j0+j)
				}
			}
			for i := 0; i < mr2 && i0+i < rows; i++ {
				copy(sc[i*nr2:(i+1)*nr2], c[(i0+i)*ldc+j0:])
			}
			kn.tile(k, pa, pb, sc, nr2, alpha, beta)
			for i := 0; i < mr2 && i0+i < rows; i++ {
				copy(c[(i0+i)*ldc+j0:(i0+i)*ldc+j0+nr2], sc[i*nr2:(i+1)*nr2])
			}
		}
	}
}

// epsOf is the unit roundoff of T.
func epsOf[T float32 | float64]() float64 {
	var x T
	if _, ok := any(x).(float32); ok {
		return 0x1p-24
	}
	return 0x1p-53
}

// checkTile compares got, a rows×nr tile computed from c0 by a kernel,
// with want (the generic kernel's) within the rounding bound of a k-long
// sum, 2·(k+4)·eps·(|alpha|·Σ|a||b| + |beta|·|c|), and bit for bit with
// exact (the AVX2 kernels'), and checks that C past the tile (the padding
// past nr, a guard row after the last) is untouched.
func checkTile[T float32 | float64](t *testing.T, name string, rows, nr, k int, a, b operand[T], alpha, beta T, c0, got, want, exact []T, ldc int) {
	t.Helper()
	tol := 2 * float64(k+4) * epsOf[T]()
	bad := 0
	for i := 0; i <= rows; i++ {
		for j := 0; j < ldc; j++ {
			g := got[i*ldc+j]
			if i == rows || j >= nr {
				if math.Float64bits(float64(g)) != math.Float64bits(float64(c0[i*ldc+j])) {
					t.Errorf("%s: C[%d][%d] past the tile changed to %v", name, i, j, g)
					bad++
				}
				continue
			}
			bound := 0.0
			for p := 0; p < k; p++ {
				bound += math.Abs(float64(a.at(i, p)) * float64(b.at(p, j)))
			}
			bound *= math.Abs(float64(alpha))
			if beta != 0 {
				bound += math.Abs(float64(beta) * float64(c0[i*ldc+j]))
			}
			w, x := float64(want[i*ldc+j]), exact[i*ldc+j]
			if math.IsNaN(float64(g)) || math.Abs(float64(g)-w) > tol*bound {
				t.Errorf("%s: C[%d][%d] = %v, the generic kernel's %v (within %.3g)", name, i, j, g, w, tol*bound)
				bad++
			}
			if g != x {
				t.Errorf("%s: C[%d][%d] = %v, the AVX2 kernel's %v (bit for bit)", name, i, j, g, x)
				bad++
			}
			if bad > 5 {
				t.FailNow()
			}
		}
	}
}

// alphaBetas are the scalar cases of the kernel tests: beta 0 (C, filled
// with NaN, must not be read), beta 1, and general ones.
var alphaBetas = [][2]float64{{1, 0}, {1.5, 0}, {1, 1}, {-0.75, 1}, {1.5, 0.5}, {2, -1.25}}

// kernelKs are the depths of the kernel tests: 1, short of one pass of the
// unrolled loop, one pass, one pass and a tail, odd and even.
var kernelKs = []int{1, 3, 4, 7, 9}

// testAVX512Tiles checks every micro-kernel of kn, for every rows count,
// against the generic kernel and the AVX2 kernel.
func testAVX512Tiles[T float32 | float64](t *testing.T, kn *kernel[T]) {
	mr, nr := kn.mr, kn.nr
	f := tilesOf(kn)
	r := rand.New(rand.NewPCG(uint64(nr), 16))
	for rows := 1; rows <= mr; rows++ {
		for ki, k := range kernelKs {
			ab := alphaBetas[(rows+ki)%len(alphaBetas)]
			alpha, beta := T(ab[0]), T(ab[1])
			// C: the rows of the tile and a guard row, ldc apart.
			ldc := nr + 3
			c0 := make([]T, (rows+1)*ldc)
			for i := range c0 {
				c0[i] = T(r.Float64()*2 - 1)
				if beta == 0 {
					c0[i] = T(math.NaN())
				}
			}
			run := func(variant string, a, b operand[T], call func(c []T)) {
				name := fmt.Sprintf("%s%dx%d_k%d_alpha%v_beta%v", variant, rows, nr, k, alpha, beta)
				got, want, exact := slices.Clone(c0), slices.Clone(c0), slices.Clone(c0)
				call(got[:(rows-1)*ldc+nr])
				referenceTile(rows, nr, k, a, b, alpha, beta, want, ldc)
				avx2Tile(rows, nr, k, a, b, alpha, beta, exact, ldc)
				checkTile(t, name, rows, nr, k, a, b, alpha, beta, c0, got, want, exact, ldc)
			}
			// Packed A: k columns of mr values, those past rows NaN
			// (never read); packed B: k rows of nr values.
			pa := newOperand[T](r, mr, k, mr, true)
			pb := newOperand[T](r, k, nr, nr, false)
			for p := 0; p < k; p++ {
				for i := rows; i < mr; i++ {
					pa.data[p*mr+i] = T(math.NaN())
				}
			}
			pa.data = pa.data[:k*mr]
			run("tile", pa, pb, func(c []T) { f.tile[rows](k, pa.data, pb.data, c, ldc, alpha, beta) })
			// A in place, by rows (cs 1) and by columns (rs 1), with gaps of NaN.
			for _, tr := range []bool{false, true} {
				ld := k + 2
				if tr {
					ld = rows + 3
				}
				a := newOperand[T](r, rows, k, ld, tr)
				rs, cs := a.ld, 1
				if tr {
					rs, cs = 1, a.ld
				}
				run(fmt.Sprintf("strided(rs%d,cs%d)", rs, cs), a, pb, func(c []T) { f.strided[rows](k, a.data, rs, cs, pb.data, c, ldc, alpha, beta) })
			}
			// B in place, rows ldb apart with gaps of NaN.
			if f.stridedB != nil {
				b := newOperand[T](r, k, nr, nr+5, false)
				run("stridedB", pa, b, func(c []T) { f.stridedB[rows](k, pa.data, b.data, b.ld, c, ldc, alpha, beta) })
			}
		}
	}
}

// TestAVX512Kernels checks every AVX-512 micro-kernel, of every row count,
// packed and reading A (rows or columns) or B in place: within the
// rounding bound of the generic kernel's result, bit for bit equal to the
// AVX2 kernels' (the same operations in the same order), C not read when
// beta is 0 (it holds NaN), and C past the tile untouched.
func TestAVX512Kernels(t *testing.T) {
	needAVX512(t)
	t.Run("float32", func(t *testing.T) { testAVX512Tiles(t, &avx512S) })
	t.Run("float64", func(t *testing.T) { testAVX512Tiles(t, &avx512D) })
}

// testAVX512Packers checks kn's copyRows and transpose against their
// definitions, element by element (bit for bit: they copy).
func testAVX512Packers[T float32 | float64](t *testing.T, kn *kernel[T]) {
	nr := kn.nr
	r := rand.New(rand.NewPCG(3, uint64(nr)))
	for _, k := range []int{1, 3, 8} {
		src := newOperand[T](r, k, nr, nr+7, false)
		dst := make([]T, k*nr+1)
		dst[k*nr] = 42
		kn.copyRows(k, dst[:k*nr], src.data, src.ld)
		for q := 0; q < k; q++ {
			for j := 0; j < nr; j++ {
				if g, w := dst[q*nr+j], src.at(q, j); g != w {
					t.Fatalf("copyRows k=%d: dst[%d] = %v, want %v", k, q*nr+j, g, w)
				}
			}
		}
		if dst[k*nr] != 42 {
			t.Fatalf("copyRows k=%d wrote past its %d values", k, k*nr)
		}
	}
	if kn.transpose == nil {
		return
	}
	for _, k := range []int{8, 16, 24} {
		// src: nr rows of B (columns of op(B)), k+5 apart.
		src := newOperand[T](r, nr, k, k+5, false)
		dst := make([]T, k*nr+1)
		dst[k*nr] = 42
		kn.transpose(k, dst[:k*nr], src.data, src.ld)
		for q := 0; q < k; q++ {
			for j := 0; j < nr; j++ {
				if g, w := dst[q*nr+j], src.at(j, q); g != w {
					t.Fatalf("transpose k=%d: dst[%d] = %v, want src[%d] = %v", k, q*nr+j, g, j*src.ld+q, w)
				}
			}
		}
		if dst[k*nr] != 42 {
			t.Fatalf("transpose k=%d wrote past its %d values", k, k*nr)
		}
	}
}

// TestAVX512Packers checks the AVX-512 kernels' packers of B.
func TestAVX512Packers(t *testing.T) {
	needAVX512(t)
	t.Run("float32", func(t *testing.T) { testAVX512Packers(t, &avx512S) })
	t.Run("float64", func(t *testing.T) { testAVX512Packers(t, &avx512D) })
}

// gemmShapes are the products of TestAVX512MatchesAVX2: rows and columns
// that leave every kind of partial tile of both kernel sets, k of 1, odd,
// and past the 256 of one k block, C narrow enough for A to be read in
// place and short enough for B to be, and a transposed B few enough
// columns for the dot path.
var gemmShapes = [][3]int{
	{13, 33, 1}, {12, 32, 7}, {25, 65, 9}, {11, 31, 300}, {20, 40, 260},
	{7, 100, 33}, {100, 7, 40}, {30, 97, 16}, {5, 9, 300}, {24, 48, 48},
}

// testAVX512Gemm runs gemm on the kernels k512 and k2 (the AVX-512 and
// the AVX2 ones) and requires the same bits where they compute each
// element the same way (beta 0 or 1, the same path), else the same within
// the rounding bound.
func testAVX512Gemm[T float32 | float64](t *testing.T, k512, k2 *kernel[T]) {
	r := rand.New(rand.NewPCG(11, 12))
	for si, s := range gemmShapes {
		m, n, k := s[0], s[1], s[2]
		for q := 0; q < 4; q++ {
			transA, transB := q&1 != 0, q&2 != 0
			ab := alphaBetas[(si+q)%len(alphaBetas)]
			alpha, beta := T(ab[0]), T(ab[1])
			lda, ldb, ldc := k+1, n+2, n+3
			if transA {
				lda = m + 1
			}
			if transB {
				ldb = k + 2
			}
			a := newOperand[T](r, m, k, lda, transA)
			b := newOperand[T](r, k, n, ldb, transB)
			c0 := make([]T, (m-1)*ldc+n)
			for i := range c0 {
				c0[i] = T(r.Float64()*2 - 1)
				if beta == 0 {
					c0[i] = T(math.NaN())
				}
			}
			threads := 1 + si%3
			for _, strips := range []int{0, 1 << 30} {
				inPlaceStrips = strips
				got, want := slices.Clone(c0), slices.Clone(c0)
				gemm(k512, threads, transA, transB, m, n, k, alpha, a.data, lda, b.data, ldb, beta, got, ldc)
				gemm(k2, threads, transA, transB, m, n, k, alpha, a.data, lda, b.data, ldb, beta, want, ldc)
				exact := (beta == 0 || beta == 1) && useDot(k512, transA, transB, m, n, k) == useDot(k2, transA, transB, m, n, k)
				tol := 2 * float64(k+4) * epsOf[T]()
				name := fmt.Sprintf("%dx%dx%d_trans%v%v_alpha%v_beta%v_threads%d_inPlace%d", m, n, k, transA, transB, alpha, beta, threads, strips)
				bad := 0
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						g, w := got[i*ldc+j], want[i*ldc+j]
						bound := 0.0
						for p := 0; p < k; p++ {
							bound += math.Abs(float64(a.at(i, p)) * float64(b.at(p, j)))
						}
						bound *= math.Abs(float64(alpha))
						if beta != 0 {
							bound += math.Abs(float64(beta) * float64(c0[i*ldc+j]))
						}
						switch {
						case exact && g != w:
							t.Errorf("%s: C[%d][%d] = %v, the AVX2 kernels' %v (bit for bit)", name, i, j, g, w)
							bad++
						case math.IsNaN(float64(g)) || math.Abs(float64(g-w)) > tol*bound:
							t.Errorf("%s: C[%d][%d] = %v, the AVX2 kernels' %v (within %.3g)", name, i, j, g, w, tol*bound)
							bad++
						}
						if bad > 5 {
							t.FailNow()
						}
					}
				}
			}
		}
	}
}

// TestAVX512MatchesAVX2 runs whole products, every transpose, A packed and
// read in place, on one and several goroutines, through the AVX-512 and
// the AVX2 kernels, and requires the same bits where both compute each
// element by the same operations in the same order (beta 0 or 1, and the
// same choice of the dot path), else agreement within the rounding bound.
func TestAVX512MatchesAVX2(t *testing.T) {
	needAVX512(t)
	defer func(old int) { inPlaceStrips = old }(inPlaceStrips)
	t.Run("float32", func(t *testing.T) { testAVX512Gemm(t, &avx512S, &avx2S) })
	t.Run("float64", func(t *testing.T) { testAVX512Gemm(t, &avx512D, &avx2D) })
}

// TestAVX512GODEBUGOff checks that GODEBUG=cpu.avx512f=off, the documented
// way to turn the AVX-512 kernels off, makes Gemm take the AVX2 kernels:
// it runs this test binary again with it.
func TestAVX512GODEBUGOff(t *testing.T) {
	if os.Getenv("GEMM_TEST_WANT_KERNEL") != "" {
		if got, want := Kernel(), os.Getenv("GEMM_TEST_WANT_KERNEL"); got != want {
			t.Fatalf("Kernel() = %q with GODEBUG=%q, want %q", got, os.Getenv("GODEBUG"), want)
		}
		return
	}
	needAVX512(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestAVX512GODEBUGOff$", "-test.v")
	for _, kv := range os.Environ() {
		// An emulator's init may hand over entries that exec refuses.
		if !strings.Contains(kv, "\x00") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GODEBUG=cpu.avx512f=off", "GEMM_TEST_WANT_KERNEL=avx2")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestAVX512GODEBUGOff") {
		t.Fatalf("with GODEBUG=cpu.avx512f=off: %v\n%s", err, out)
	}
}
