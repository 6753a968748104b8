package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// gemmKernels emits package gemm's kernels: the micro-kernels of each
// element type (packed, A in place, and for float32 B in place), the
// float32 ones also for a last strip of 1 to 5 rows, the AVX copies that
// pack an untransposed strip of B, the float32 transpose that packs a
// transposed one, and the float32 kernel of the dot path (AVX2 and FMA);
// then the AVX-512 kernels (gemm512.go).
func gemmKernels() {
	kernel(f32, false)
	kernel(f32, true)
	kernelStridedB(f32)
	for rows := 1; rows < mr; rows++ {
		kernelGen(f32, false, false, rows)
		kernelGen(f32, true, false, rows)
		kernelGen(f32, false, true, rows)
	}
	kernel(f64, false)
	kernel(f64, true)
	copyRows(f32, "copyRows64", reg.Y0, reg.Y1)
	copyRows(f64, "copyRows64", reg.Y0, reg.Y1)
	transposeGen("transpose16S", 16)
	dot4x3S()
	gemm512Kernels()
}

// mr is the height of every micro-tile: six rows of two vectors each take
// twelve of the sixteen YMM registers as accumulators, leaving two for the
// B row and two for broadcast A values.
const mr = 6

// unroll is how many k steps one pass of the main loop takes.
const unroll = 4

// kernel emits kernel<mr>x<nr><S|D>: C = alpha·(A·B) + beta·C for one full
// mr×nr tile, where A is a packed mr-high strip and B a packed nr-wide
// strip, both k deep, and C has leading dimension ldc. C is not read when
// beta is 0. The strided variant, kernel<mr>x<nr><S|D>Strided, reads A in
// place instead: element (i, p) of the strip at a[i·rs + p·cs].
func kernel(e elem, strided bool) {
	kernelGen(e, strided, false, mr)
}

// kernelStridedB emits kernel<mr>x<nr><S|D>StridedB: the packed kernel
// reading B in place instead of A: row p of the strip is at b[p·ldb]. It
// saves packing B when few strips of A share each panel of B.
func kernelStridedB(e elem) {
	kernelGen(e, false, true, mr)
}

// kernelGen emits a kernel: A read in place when strided, B read in place
// when stridedB, else packed. With rows < mr it is the kernel of a last
// strip of fewer rows, kernel<rows>x<nr>…: it reads and computes only
// the first rows rows of A (still packed mr to a column) and of C.
func kernelGen(e elem, strided, stridedB bool, rows int) {
	nr := 2 * e.lanes
	suffix := "S"
	if e.size == 8 {
		suffix = "D"
	}
	name := fmt.Sprintf("kernel%dx%d%s", rows, nr, suffix)
	tile := fmt.Sprintf("one %d×%d tile", rows, nr)
	packed := fmt.Sprintf("A is a packed strip of k columns of %d values", mr)
	if rows < mr {
		packed = fmt.Sprintf("A is a packed strip of k columns of %d values, of which the first %d are read", mr, rows)
	}
	if stridedB {
		name += "StridedB"
		TEXT(name, NOSPLIT, fmt.Sprintf("func(k int, a, b []%[1]s, ldb int, c []%[1]s, ldc int, alpha, beta %[1]s)", e.name))
		Pragma("noescape")
		Doc(
			fmt.Sprintf("%s computes C = alpha·A·B + beta·C for %s of %s with AVX2 and FMA.", name, tile, e.name),
			fmt.Sprintf("%s; row p of B, p < k, is the %d values", packed, nr),
			"from b[p·ldb], and C has leading dimension ldc; C is not read when beta is 0.",
			"The caller checks the lengths of a, b and c and that k > 0.",
		)
	} else if strided {
		name += "Strided"
		TEXT(name, NOSPLIT, fmt.Sprintf("func(k int, a []%[1]s, rs, cs int, b, c []%[1]s, ldc int, alpha, beta %[1]s)", e.name))
		Pragma("noescape")
		Doc(
			fmt.Sprintf("%s computes C = alpha·A·B + beta·C for %s of %s with AVX2 and FMA.", name, tile, e.name),
			fmt.Sprintf("Element (i, p) of A, i < %d, p < k, is a[i·rs + p·cs]; B is a packed strip of k rows of %d", rows, nr),
			"values, and C has leading dimension ldc; C is not read when beta is 0.",
			"The caller checks the lengths of a, b and c and that k > 0.",
		)
	} else {
		TEXT(name, NOSPLIT, fmt.Sprintf("func(k int, a, b, c []%[1]s, ldc int, alpha, beta %[1]s)", e.name))
		Pragma("noescape")
		Doc(
			fmt.Sprintf("%s computes C = alpha·A·B + beta·C for %s of %s with AVX2 and FMA.", name, tile, e.name),
			fmt.Sprintf("%s, B a packed strip of k rows of %d", packed, nr),
			"values, and C has leading dimension ldc; C is not read when beta is 0.",
			"The caller checks the lengths of a, b and c and that k > 0.",
		)
	}

	k := Load(Param("k"), reg.RCX)
	pa := Load(Param("a").Base(), reg.RSI)
	pb := Load(Param("b").Base(), reg.RDI)
	pc := Load(Param("c").Base(), reg.R8)
	ldc := Load(Param("ldc"), reg.R9)
	SHLQ(U8(log2(e.size)), ldc) // bytes
	// In the strided variant, rows 0-2 of A are at pa, pa+rs, pa+2rs and
	// rows 3-5 at pa3, pa3+rs, pa3+2rs; both pointers step cs bytes.
	var rs, cs, pa3 reg.Register
	if strided {
		rs = Load(Param("rs"), reg.R11)
		SHLQ(U8(log2(e.size)), rs)
		cs = Load(Param("cs"), reg.R12)
		SHLQ(U8(log2(e.size)), cs)
		if rows > 3 {
			pa3 = reg.RDX
			LEAQ(Mem{Base: rs, Index: rs, Scale: 2}, pa3)
			ADDQ(pa, pa3)
		}
	}
	var ldb reg.Register
	if stridedB {
		ldb = Load(Param("ldb"), reg.R11)
		SHLQ(U8(log2(e.size)), ldb)
	}

	acc := []reg.VecPhysical{
		reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5,
		reg.Y6, reg.Y7, reg.Y8, reg.Y9, reg.Y10, reg.Y11,
	}[:2*rows]
	b0, b1 := reg.Y12, reg.Y13
	av := []reg.VecPhysical{reg.Y14, reg.Y15}

	Comment("Prefetch the tile of C while the products accumulate.")
	row := reg.R10
	MOVQ(pc, row)
	for i := 0; i < rows; i++ {
		PREFETCHT0(Mem{Base: row})
		PREFETCHT0(Mem{Base: row, Disp: nr*e.size - 1})
		if i+1 < rows {
			ADDQ(ldc, row)
		}
	}
	for _, r := range acc {
		e.zero(r)
	}

	aStep, bStep := mr*e.size, nr*e.size
	aAddr := func(u, i int) Mem {
		if !strided {
			return Mem{Base: pa, Disp: u*aStep + i*e.size}
		}
		base := pa
		if i >= 3 {
			base, i = pa3, i-3
		}
		if i == 0 {
			return Mem{Base: base}
		}
		return Mem{Base: base, Index: rs, Scale: uint8(i)}
	}
	step := func(u int) {
		if stridedB {
			e.load(Mem{Base: pb}, b0)
			e.load(Mem{Base: pb, Disp: 32}, b1)
			ADDQ(ldb, pb)
		} else {
			e.load(Mem{Base: pb, Disp: u * bStep}, b0)
			e.load(Mem{Base: pb, Disp: u*bStep + 32}, b1)
		}
		for i := 0; i < rows; i++ {
			a := av[i%2]
			e.broadcast(aAddr(u, i), a)
			e.fma(b0, a, acc[2*i])
			e.fma(b1, a, acc[2*i+1])
		}
		if strided {
			ADDQ(cs, pa)
			if rows > 3 {
				ADDQ(cs, pa3)
			}
		}
	}

	kLoop(k, unroll, func() {
		if !strided {
			PREFETCHT0(Mem{Base: pa, Disp: 8 * aStep * unroll / 2})
		}
	}, step, func(steps int) {
		if !strided {
			ADDQ(U32(steps*aStep), pa)
		}
		if !stridedB {
			ADDQ(U32(steps*bStep), pb)
		}
	})
	e.broadcast(addr(Param("alpha")), reg.Y14)
	for _, r := range acc {
		e.mul(reg.Y14, r, r)
	}
	// beta == 0 (ZF=1, PF=0) stores without reading C; NaN is unordered
	// (PF=1) and takes the reading path, like any other nonzero beta.
	e.zero(reg.Y15)
	e.compare(addr(Param("beta")), reg.X15)
	JP(LabelRef("accumulate"))
	JE(LabelRef("overwrite"))

	Label("accumulate")
	storeTile(e, rows, acc, pc, ldc, reg.Y15)
}

// storeTile emits the end of a micro-kernel: C = acc + beta·C on the rows
// rows of two vectors (acc[2i], acc[2i+1]) from pc, ldc bytes apart,
// broadcasting beta into the vector register beta, and at label overwrite
// C = acc.
func storeTile(e elem, rows int, acc []reg.VecPhysical, pc, ldc reg.Register, beta reg.VecPhysical) {
	width := int(beta.Size())
	e.broadcast(addr(Param("beta")), beta)
	for i := 0; i < rows; i++ {
		e.fma(Mem{Base: pc}, beta, acc[2*i])
		e.fma(Mem{Base: pc, Disp: width}, beta, acc[2*i+1])
		e.load(acc[2*i], Mem{Base: pc})
		e.load(acc[2*i+1], Mem{Base: pc, Disp: width})
		if i+1 < rows {
			ADDQ(ldc, pc)
		}
	}
	VZEROUPPER()
	RET()

	Label("overwrite")
	for i := 0; i < rows; i++ {
		e.load(acc[2*i], Mem{Base: pc})
		e.load(acc[2*i+1], Mem{Base: pc, Disp: width})
		if i+1 < rows {
			ADDQ(ldc, pc)
		}
	}
	VZEROUPPER()
	RET()
}

// copyRows emits name<S|D>: the packing of a strip of B, k rows of two
// vectors (v0 and v1: YMM, 64 bytes a row, or ZMM, 128 bytes) ld elements
// apart, into dst.
func copyRows(e elem, name string, v0, v1 reg.VecPhysical) {
	width := int(v0.Size())
	suffix, n := "S", 2*width/e.size
	if e.size == 8 {
		suffix = "D"
	}
	name += suffix
	TEXT(name, NOSPLIT, fmt.Sprintf("func(k int, dst, src []%s, ld int)", e.name))
	Pragma("noescape")
	Doc(
		fmt.Sprintf("%s copies k rows of %d values, ld apart in src, to consecutive rows of dst.", name, n),
		"The caller checks the lengths of dst and src and that k > 0.",
	)
	k := Load(Param("k"), reg.RCX)
	dst := Load(Param("dst").Base(), reg.RDI)
	src := Load(Param("src").Base(), reg.RSI)
	ld := Load(Param("ld"), reg.RDX)
	SHLQ(U8(log2(e.size)), ld)
	Label("loop")
	VMOVUPS(Mem{Base: src}, v0)
	VMOVUPS(Mem{Base: src, Disp: width}, v1)
	VMOVUPS(v0, Mem{Base: dst})
	VMOVUPS(v1, Mem{Base: dst, Disp: width})
	ADDQ(ld, src)
	if 2*width < 128 {
		ADDQ(U8(2*width), dst)
	} else {
		ADDQ(U32(2*width), dst) // an imm8 is signed: 128 needs 32 bits
	}
	DECQ(k)
	JNZ(LabelRef("loop"))
	VZEROUPPER()
	RET()
}

// transposeGen emits name: the packing of a strip of a transposed B,
// cols columns of op(B) (16 or 32) that are cols rows of B, ld apart, into
// k rows of cols values, with AVX 8×8 transposes in registers.
func transposeGen(name string, cols int) {
	TEXT(name, NOSPLIT, "func(k int, dst, src []float32, ld int)")
	Pragma("noescape")
	Doc(
		fmt.Sprintf("%s sets dst[q·%d+c] = src[c·ld+q] for c < %d and q < k.", name, cols, cols),
		"The caller checks the lengths of dst and src and that k is a positive multiple of 8.",
	)
	k := Load(Param("k"), reg.RCX)
	dst := Load(Param("dst").Base(), reg.RDI)
	src := Load(Param("src").Base(), reg.RSI)
	ld := Load(Param("ld"), reg.RDX)
	SHLQ(U8(2), ld)
	ld3 := reg.R8
	LEAQ(Mem{Base: ld, Index: ld, Scale: 2}, ld3)
	// Rows 0, 4, 8, … of the strip; the others are 1-3 ld past them.
	bases := []reg.Register{src, reg.R9, reg.R10, reg.R11, reg.R12, reg.R13, reg.RBX, reg.RAX}[:cols/4]
	for i := 1; i < len(bases); i++ {
		LEAQ(Mem{Base: bases[i-1], Index: ld, Scale: 4}, bases[i])
	}
	SHRQ(U8(3), k)
	row := func(i int) Mem {
		b := bases[i/4]
		switch i % 4 {
		case 1:
			return Mem{Base: b, Index: ld, Scale: 1}
		case 2:
			return Mem{Base: b, Index: ld, Scale: 2}
		case 3:
			return Mem{Base: b, Index: ld3, Scale: 1}
		}
		return Mem{Base: b}
	}
	r := []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7}
	t := []reg.VecPhysical{reg.Y8, reg.Y9, reg.Y10, reg.Y11, reg.Y12, reg.Y13, reg.Y14, reg.Y15}
	Label("loop")
	for half := 0; half < cols/8; half++ {
		Commentf("Columns %d-%d of this 8-row block of the strip.", 8*half, 8*half+7)
		for i := 0; i < 8; i++ {
			VMOVUPS(row(8*half+i), r[i])
		}
		for i := 0; i < 8; i += 2 {
			VUNPCKLPS(r[i+1], r[i], t[i])   // r_i[0] r_i+1[0] r_i[1] r_i+1[1] (per lane)
			VUNPCKHPS(r[i+1], r[i], t[i+1]) // r_i[2] r_i+1[2] r_i[3] r_i+1[3]
		}
		// u: four rows' values of one column per lane.
		u := r
		for i := 0; i < 8; i += 4 {
			VSHUFPS(U8(0x44), t[i+2], t[i], u[i])
			VSHUFPS(U8(0xEE), t[i+2], t[i], u[i+1])
			VSHUFPS(U8(0x44), t[i+3], t[i+1], u[i+2])
			VSHUFPS(U8(0xEE), t[i+3], t[i+1], u[i+3])
		}
		for j := 0; j < 4; j++ {
			VPERM2F128(U8(0x20), u[j+4], u[j], t[j])
			VPERM2F128(U8(0x31), u[j+4], u[j], t[j+4])
		}
		for q := 0; q < 8; q++ {
			VMOVUPS(t[q], Mem{Base: dst, Disp: q*4*cols + 32*half})
		}
	}
	for _, b := range bases {
		ADDQ(U8(32), b)
	}
	ADDQ(U32(8*4*cols), dst)
	DECQ(k)
	JNZ(LabelRef("loop"))
	VZEROUPPER()
	RET()
}

// log2 is the base-2 logarithm of x, a power of two.
func log2(x int) int {
	n := 0
	for x > 1 {
		x >>= 1
		n++
	}
	return n
}

// kLoop emits the loop over k of a micro-kernel: unroll steps a pass
// (prefetch, then step(0) … step(unroll−1), then advance(unroll)), then
// the k mod unroll steps left one at a time (step(0), advance(1)); k
// counts down and RAX is the pass counter. The code after it is at label
// update.
func kLoop(k reg.Register, unroll int, prefetch func(), step func(u int), advance func(steps int)) {
	n := reg.RAX
	MOVQ(k, n)
	SHRQ(U8(log2(unroll)), n)
	JZ(LabelRef("tail"))
	Label("loop")
	prefetch()
	for u := 0; u < unroll; u++ {
		step(u)
	}
	advance(unroll)
	DECQ(n)
	JNZ(LabelRef("loop"))

	Label("tail")
	ANDQ(U8(unroll-1), k)
	JZ(LabelRef("update"))
	Label("tailloop")
	step(0)
	advance(1)
	DECQ(k)
	JNZ(LabelRef("tailloop"))

	Label("update")
}
