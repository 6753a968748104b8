package gemm

//go:generate go run -C asmgen . -out ../kernel_amd64.s -stubs ../kernel_amd64.go -pkg gemm

// kernel is a micro-kernel and the blocking that suits it. A packed A block
// is mc×kc, a packed B panel kc×nc, and tile computes one mr×nr tile of C.
type kernel[T float32 | float64] struct {
	name       string
	mr, nr     int
	mc, kc, nc int
	// taskWork is the least m·n·k worth a parallel task: handing work to
	// another goroutine costs some microseconds.
	taskWork int
	// smallWork is the m·n·k at or below which Gemm computes the product
	// by a direct loop, without packing: about where packing starts to
	// pay. The direct loop makes about one multiply-add every two
	// nanoseconds (each waits for the last), so the AVX2 kernels take over
	// early: at 2×16×4 they are already three times faster.
	smallWork int
	// tile computes C = alpha·A·B + beta·C for the mr×nr tile at the start
	// of c (leading dimension ldc), where a is a packed strip of k·mr
	// values and b one of k·nr, k > 0. It does not read C when beta is 0.
	tile func(k int, a, b, c []T, ldc int, alpha, beta T)
	// strided, where not nil, is tile reading A in place: element (i, p)
	// of the strip is a[i·rs + p·cs]. It saves packing A when few strips
	// of B share each packed block of A.
	strided func(k int, a []T, rs, cs int, b, c []T, ldc int, alpha, beta T)
	// stridedB, where not nil, is tile reading an untransposed B in
	// place: row p of the strip is at b[p·ldb]. It saves packing B when few
	// strips of A share each panel of B.
	stridedB func(k int, a, b []T, ldb int, c []T, ldc int, alpha, beta T)
	// copyRows, where not nil, packs a whole strip of an untransposed B:
	// dst[q·nr+j] = src[q·ld+j] for q < k, j < nr.
	copyRows func(k int, dst, src []T, ld int)
	// transpose, where not nil, packs a whole strip of a transposed B:
	// dst[q·nr+j] = src[j·ld+q] for j < nr and q < k, k a multiple of 8.
	transpose func(k int, dst, src []T, ld int)
	// edge, stridedEdge and stridedBEdge, where not nil, are tile,
	// strided and stridedB for a last strip of r < mr rows, at index r:
	// they compute only those r rows, straight into C (a packed strip
	// still holds mr values per column, the last mr−r of them unread).
	edge         []func(k int, a, b, c []T, ldc int, alpha, beta T)
	stridedEdge  []func(k int, a []T, rs, cs int, b, c []T, ldc int, alpha, beta T)
	stridedBEdge []func(k int, a, b []T, ldb int, c []T, ldc int, alpha, beta T)
	// tileSpeed, where not 0, is how many times as many multiply-adds a
	// cycle the tile kernels make as the dot kernel: 2 for the AVX-512
	// tiles beside the AVX2 dot kernel (vectors twice as wide; an
	// estimate, not a measurement). useDot divides the blocked path's
	// multiply-adds by it.
	tileSpeed float64
	// dot, where not nil, is the kernel of the dot path: it sets
	// out[4·i+j] to the dot product of rows i < 4 of a (lda apart) and rows
	// j < 3 of b (ldb apart), each k long, and out[4·i+3] to 0.
	dot func(k int, a []T, lda int, b []T, ldb int, out []T)
}

// The portable kernels, in plain Go: a 4×4 tile in scalar registers.
var (
	generic32 = kernel[float32]{name: "generic", mr: 4, nr: 4, mc: 128, kc: 256, nc: 512, taskWork: 1 << 16, smallWork: 256, tile: genericTile[float32]}
	generic64 = kernel[float64]{name: "generic", mr: 4, nr: 4, mc: 128, kc: 256, nc: 512, taskWork: 1 << 16, smallWork: 256, tile: genericTile[float64]}
)

// genericTile is the tile function of the portable kernels.
func genericTile[T float32 | float64](k int, a, b, c []T, ldc int, alpha, beta T) {
	var t [4 * 4]T
	micro(k, a, b, &t)
	store(t[:], 4, 4, 4, alpha, beta, c, ldc)
}

// micro computes the 4×4 product of a packed A strip and a packed B
// strip, both kb deep, into tile (row-major). It makes two passes of 4×2
// columns: sixteen scalar accumulators do not fit the register file, eight
// do, and the A strip stays in L1 for the second pass.
func micro[T float32 | float64](kb int, a, b []T, tile *[4 * 4]T) {
	const mr, nr = 4, 4
	a = a[:kb*mr]
	b = b[:kb*nr]
	for h := 0; h < nr; h += 2 {
		var c00, c01, c10, c11, c20, c21, c30, c31 T
		bh := b[h:]
		for p := 0; p < kb; p++ {
			ap := a[p*mr : p*mr+4 : p*mr+4]
			bp := bh[p*nr : p*nr+2 : p*nr+2]
			a0, a1, a2, a3 := ap[0], ap[1], ap[2], ap[3]
			b0, b1 := bp[0], bp[1]
			c00 += a0 * b0
			c01 += a0 * b1
			c10 += a1 * b0
			c11 += a1 * b1
			c20 += a2 * b0
			c21 += a2 * b1
			c30 += a3 * b0
			c31 += a3 * b1
		}
		tile[0*nr+h], tile[0*nr+h+1] = c00, c01
		tile[1*nr+h], tile[1*nr+h+1] = c10, c11
		tile[2*nr+h], tile[2*nr+h+1] = c20, c21
		tile[3*nr+h], tile[3*nr+h+1] = c30, c31
	}
}

// Kernel names the float32 micro-kernel that Sgemm uses on this machine:
// "avx512" (AVX-512F, AVX2 and FMA, amd64), "avx2" (AVX2 and FMA, amd64;
// also on an AVX-512 machine run with GODEBUG=cpu.avx512f=off) or
// "generic" (portable Go, also what the purego and noasm build tags
// force).
func Kernel() string { return state32.kern.name }
