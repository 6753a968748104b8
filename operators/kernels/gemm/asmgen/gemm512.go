package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The AVX-512 kernels of package gemm use only AVX-512F (ZMM loads,
// broadcasts, FMAs and VPXORD) besides the AVX2 of the transpose.
//
// Tile: zmr = 12 rows of two ZMM vectors, 12×32 float32 or 12×16 float64,
// in 24 of the 32 ZMM registers. Each step of k loads two vectors of B
// and broadcasts twelve values of A into registers (a broadcast from
// memory is a plain load), then makes 24 FMAs from registers: 14 loads
// for 24 FMAs fits two loads and two FMAs a cycle with room to spare,
// where broadcasting inside each FMA (VFMADD231PS m32bcst) would need 26
// loads and make the loads the bottleneck. 24 independent accumulators
// more than cover the FMA latency (4 cycles × 2 units). Twelve rather than
// fourteen rows (28 accumulators) leaves registers to rotate the
// broadcasts through and keeps the edge kernels to eleven. TBLIS's
// Skylake-X kernels have the same shapes (its sgemm 12x32 and dgemm
// 12x16). The same height for both element types lets packing share its
// code.
const zmr = 12

// zunroll is how many k steps one pass of the AVX-512 main loop takes.
const zunroll = 4

// gemm512Kernels emits the AVX-512 kernels: for each element type the
// packed and strided (A in place) kernels of 1 to 12 rows, for float32
// also the stridedB ones (B in place), the copies that pack an
// untransposed strip of B of 128 bytes a row, and the float32 transpose
// that packs a transposed strip of 32 columns.
func gemm512Kernels() {
	for rows := zmr; rows >= 1; rows-- {
		zkernel(f32, false, false, rows)
		zkernel(f32, true, false, rows)
		zkernel(f32, false, true, rows)
	}
	for rows := zmr; rows >= 1; rows-- {
		zkernel(f64, false, false, rows)
		zkernel(f64, true, false, rows)
	}
	copyRows(f32, "avx512CopyRows128", reg.Z0, reg.Z1)
	copyRows(f64, "avx512CopyRows128", reg.Z0, reg.Z1)
	transposeGen("avx512Transpose32S", 32)
}

// zkernel emits avx512Kernel<rows>x<nr><S|D>[Strided|StridedB]: C =
// alpha·(A·B) + beta·C for the first rows rows of one zmr×nr tile (nr is
// two ZMM vectors: 32 float32, 16 float64). A is a packed strip of zmr
// values a column (only the first rows read) or, when strided, read in
// place: element (i, p) at a[i·rs + p·cs]. B is a packed strip of nr
// values a row or, when stridedB, read in place: row p at b[p·ldb]. C has
// leading dimension ldc and is not read when beta is 0.
//
// Every element of C is computed by the same operations in the same order
// as in the AVX2 kernels: FMAs over k from zero, one multiply by alpha,
// then one FMA of beta·C into it. So the two kernel sets give the same
// bits on the same tile.
func zkernel(e elem, strided, stridedB bool, rows int) {
	lanes := 64 / e.size
	nr := 2 * lanes
	suffix := "S"
	if e.size == 8 {
		suffix = "D"
	}
	name := fmt.Sprintf("avx512Kernel%dx%d%s", rows, nr, suffix)
	tile := fmt.Sprintf("one %d×%d tile", rows, nr)
	packed := fmt.Sprintf("A is a packed strip of k columns of %d values", zmr)
	if rows < zmr {
		packed = fmt.Sprintf("A is a packed strip of k columns of %d values, of which the first %d are read", zmr, rows)
	}
	head := fmt.Sprintf("%%s computes C = alpha·A·B + beta·C for %s of %s with AVX-512F.", tile, e.name)
	switch {
	case stridedB:
		name += "StridedB"
		TEXT(name, NOSPLIT, fmt.Sprintf("func(k int, a, b []%[1]s, ldb int, c []%[1]s, ldc int, alpha, beta %[1]s)", e.name))
		Pragma("noescape")
		Doc(
			fmt.Sprintf(head, name),
			fmt.Sprintf("%s; row p of B, p < k, is the %d values", packed, nr),
			"from b[p·ldb], and C has leading dimension ldc; C is not read when beta is 0.",
			"The caller checks the lengths of a, b and c and that k > 0.",
		)
	case strided:
		name += "Strided"
		TEXT(name, NOSPLIT, fmt.Sprintf("func(k int, a []%[1]s, rs, cs int, b, c []%[1]s, ldc int, alpha, beta %[1]s)", e.name))
		Pragma("noescape")
		Doc(
			fmt.Sprintf(head, name),
			fmt.Sprintf("Element (i, p) of A, i < %d, p < k, is a[i·rs + p·cs]; B is a packed strip of k rows of %d", rows, nr),
			"values, and C has leading dimension ldc; C is not read when beta is 0.",
			"The caller checks the lengths of a, b and c and that k > 0.",
		)
	default:
		TEXT(name, NOSPLIT, fmt.Sprintf("func(k int, a, b, c []%[1]s, ldc int, alpha, beta %[1]s)", e.name))
		Pragma("noescape")
		Doc(
			fmt.Sprintf(head, name),
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
	// In the strided variant, rows 4j to 4j+3 of A are at bases[j],
	// bases[j]+rs, bases[j]+2rs and bases[j]+rs3; every base steps cs
	// bytes.
	var rs, cs, rs3 reg.Register
	bases := []reg.Register{pa}
	if strided {
		rs = Load(Param("rs"), reg.R11)
		SHLQ(U8(log2(e.size)), rs)
		cs = Load(Param("cs"), reg.R12)
		SHLQ(U8(log2(e.size)), cs)
		if rows > 3 {
			rs3 = reg.R13
			LEAQ(Mem{Base: rs, Index: rs, Scale: 2}, rs3)
		}
		for j, r := range []reg.Register{reg.RDX, reg.RBX} {
			if rows <= 4*(j+1) {
				break
			}
			LEAQ(Mem{Base: bases[j], Index: rs, Scale: 4}, r)
			bases = append(bases, r)
		}
	}
	var ldb reg.Register
	if stridedB {
		ldb = Load(Param("ldb"), reg.R11)
		SHLQ(U8(log2(e.size)), ldb)
	}

	acc := make([]reg.VecPhysical, 0, 2*zmr)
	for i := 0; i < 2*rows; i++ {
		acc = append(acc, zmm[i])
	}
	b0, b1 := reg.Z24, reg.Z25
	av := []reg.VecPhysical{reg.Z26, reg.Z27, reg.Z28, reg.Z29}

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
		VPXORD(r, r, r)
	}

	aStep, bStep := zmr*e.size, nr*e.size
	aAddr := func(u, i int) Mem {
		if !strided {
			return Mem{Base: pa, Disp: u*aStep + i*e.size}
		}
		base := bases[i/4]
		switch i % 4 {
		case 1:
			return Mem{Base: base, Index: rs, Scale: 1}
		case 2:
			return Mem{Base: base, Index: rs, Scale: 2}
		case 3:
			return Mem{Base: base, Index: rs3, Scale: 1}
		}
		return Mem{Base: base}
	}
	step := func(u int) {
		if stridedB {
			e.load(Mem{Base: pb}, b0)
			e.load(Mem{Base: pb, Disp: 64}, b1)
			ADDQ(ldb, pb)
		} else {
			e.load(Mem{Base: pb, Disp: u * bStep}, b0)
			e.load(Mem{Base: pb, Disp: u*bStep + 64}, b1)
		}
		for i := 0; i < rows; i++ {
			a := av[i%len(av)]
			e.broadcast(aAddr(u, i), a)
			e.fma(b0, a, acc[2*i])
			e.fma(b1, a, acc[2*i+1])
		}
		if strided {
			for _, b := range bases {
				ADDQ(cs, b)
			}
		}
	}

	kLoop(k, zunroll, func() {
		if !strided {
			// Sixteen steps ahead, every line that one pass reads.
			for off := 0; off < zunroll*aStep; off += 64 {
				PREFETCHT0(Mem{Base: pa, Disp: 16*aStep + off})
			}
		}
	}, step, func(steps int) {
		if !strided {
			ADDQ(U32(steps*aStep), pa)
		}
		if !stridedB {
			ADDQ(U32(steps*bStep), pb)
		}
	})
	alpha, beta := reg.Z30, reg.Z31
	e.broadcast(addr(Param("alpha")), alpha)
	for _, r := range acc {
		e.mul(alpha, r, r)
	}
	// beta == 0 (either sign) stores without reading C: its bits but the
	// sign are all zero. NaN and every other value take the reading path.
	bits := reg.RAX
	if e.size == 4 {
		MOVL(addr(Param("beta")), bits.As32())
		SHLL(U8(1), bits.As32())
	} else {
		MOVQ(addr(Param("beta")), bits)
		SHLQ(U8(1), bits)
	}
	JZ(LabelRef("overwrite"))

	storeTile(e, rows, acc, pc, ldc, beta)
}
