package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// winoKernels emits package convpool's AVX kernels of the Winograd
// F(2×2, 3×3) convolution: the input and output transforms of eight tiles
// side by side in a row of tiles, one tile per lane, with the operations
// in the order of the Go code for one tile (winograd.go), so that both give
// the same bits.
func winoKernels() {
	winoIn8S()
	winoOut8S()
	winoIn4x2S()
	winoGrad8S()
	deinterleaveS()
	wino512Kernels()
}

// evenOdd sets even and odd to the even- and odd-numbered of the 8
// float32 at m0 followed by the 8 at m1 (AVX2).
func evenOdd(m0, m1 Mem, t0, t1, even, odd reg.VecPhysical) {
	VMOVUPS(m0, t0)
	VMOVUPS(m1, t1)
	// Per 128-bit lane the order is [lo 0 2, hi 0 2]; VPERMPD puts the
	// 64-bit blocks in order.
	VSHUFPS(U8(0x88), t1, t0, even)
	VSHUFPS(U8(0xDD), t1, t0, odd)
	VPERMPD(U8(0xD8), even, even)
	VPERMPD(U8(0xD8), odd, odd)
}

// deinterleaveS emits deinterleaveS: the even and odd elements of src,
// eight of each a step.
func deinterleaveS() {
	TEXT("deinterleaveS", NOSPLIT, "func(src, even, odd []float32)")
	Pragma("noescape")
	Doc(
		"deinterleaveS sets even[i] = src[2i] and odd[i] = src[2i+1] for i < len(even) (AVX2).",
		"The caller checks that len(even) is a multiple of 8, odd is as long and src twice as long.",
	)
	n := Load(Param("even").Len(), reg.RCX)
	src := Load(Param("src").Base(), reg.RSI)
	even := Load(Param("even").Base(), reg.RDI)
	odd := Load(Param("odd").Base(), reg.RDX)
	countedLoop(n, 3, func() {
		evenOdd(Mem{Base: src}, Mem{Base: src, Disp: 32}, reg.Y0, reg.Y1, reg.Y2, reg.Y3)
		VMOVUPS(reg.Y2, Mem{Base: even})
		VMOVUPS(reg.Y3, Mem{Base: odd})
		ADDQ(U8(64), src)
		ADDQ(U8(32), even)
		ADDQ(U8(32), odd)
	})
	VZEROUPPER()
	RET()
}

// ymm are the sixteen YMM registers in order.
var ymm = []reg.VecPhysical{
	reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7,
	reg.Y8, reg.Y9, reg.Y10, reg.Y11, reg.Y12, reg.Y13, reg.Y14, reg.Y15,
}

// winoGrad8S emits winoGrad8S: the transform A·e·Aᵀ of eight 2×2
// output-gradient tiles side by side.
func winoGrad8S() {
	TEXT("winoGrad8S", NOSPLIT, "func(dy []float32, ld, off int, y []float32, yl int)")
	Pragma("noescape")
	Doc(
		"winoGrad8S transforms eight 2×2 tiles, tile j's top row at dy[2j], dy[2j+1] for j < 4 and",
		"dy[off+2j−8], dy[off+2j−7] for j ≥ 4, its bottom row ld further, into their 4×4 A·e·Aᵀ,",
		"element ξ of tile j to y[ξ·yl+j] (AVX2). With off 8 the tiles are side by side.",
		"The caller checks that dy holds ld+off+8 values and y 15·yl+8.",
	)
	dy := Load(Param("dy").Base(), reg.RSI)
	ld := Load(Param("ld"), reg.RDX)
	off := Load(Param("off"), reg.R10)
	y := Load(Param("y").Base(), reg.RDI)
	yl := Load(Param("yl"), reg.RCX)
	SHLQ(U8(2), yl)
	SHLQ(U8(2), ld)
	SHLQ(U8(2), off)
	r1 := reg.R11
	LEAQ(Mem{Base: dy, Index: ld, Scale: 1}, r1)
	sign := reg.Y15
	MOVL(U32(0x80000000), reg.EAX)
	MOVD(reg.EAX, reg.X15)
	VBROADCASTSS(reg.X15, sign)
	e00, e01, e10, e11 := reg.Y2, reg.Y3, reg.Y4, reg.Y5
	evenOdd(Mem{Base: dy}, Mem{Base: dy, Index: off, Scale: 1}, reg.Y0, reg.Y1, e00, e01)
	evenOdd(Mem{Base: r1}, Mem{Base: r1, Index: off, Scale: 1}, reg.Y0, reg.Y1, e10, e11)
	winoGradRows(ymm, sign, VXORPS, y, yl)
}

// winoGradRows emits the end of winoGrad8S and winoGrad16S on the vector
// registers regs (YMM or ZMM): from the even and odd columns of the two
// input rows in regs[2], regs[3] and regs[4], regs[5], the rows of A·e
// (regs[6:12]) and their columns (regs[12:15] scratch), stored to
// y + (4i+l)·yl; sign holds the sign bit in each lane and xor flips it.
func winoGradRows(regs []reg.VecPhysical, sign reg.VecPhysical, xor func(...Op), y, yl reg.Register) {
	e00, e01, e10, e11 := regs[2], regs[3], regs[4], regs[5]
	// Rows of A·e: e0, e0+e1, e0−e1, −e1 (a sign flip, as Go negates).
	rows := [4][2]reg.VecPhysical{{e00, e01}, {regs[6], regs[7]}, {regs[8], regs[9]}, {regs[10], regs[11]}}
	VADDPS(e10, e00, regs[6])
	VADDPS(e11, e01, regs[7])
	VSUBPS(e10, e00, regs[8])
	VSUBPS(e11, e01, regs[9])
	xor(sign, e10, regs[10])
	xor(sign, e11, regs[11])
	// Columns of each row (x0, x1): x0, x0+x1, x0−x1, −x1, to y + (4i+l)·yl.
	a, b := reg.R8, reg.R9
	MOVQ(y, a)
	for _, r := range rows {
		x0, x1 := r[0], r[1]
		LEAQ(Mem{Base: a, Index: yl, Scale: 2}, b)
		VMOVUPS(x0, Mem{Base: a})
		VADDPS(x1, x0, regs[12])
		VMOVUPS(regs[12], Mem{Base: a, Index: yl, Scale: 1})
		VSUBPS(x1, x0, regs[13])
		VMOVUPS(regs[13], Mem{Base: b})
		xor(sign, x1, regs[14])
		VMOVUPS(regs[14], Mem{Base: b, Index: yl, Scale: 1})
		LEAQ(Mem{Base: a, Index: yl, Scale: 4}, a)
	}
	VZEROUPPER()
	RET()
}

// winoIn8S emits winoIn8S: the input transform Bᵀ·d·B of eight tiles.
func winoIn8S() {
	TEXT("winoIn8S", NOSPLIT, "func(e, o []float32, ld int, v []float32, vl int)")
	Pragma("noescape")
	Doc(
		"winoIn8S transforms eight 4×4 input tiles side by side: column k of row r of tile j",
		"is e[r·ld+j+k/2] for even k and o[r·ld+j+k/2] for odd k (the even and odd columns of",
		"the padded plane), and element ξ = 4i+l of its Bᵀ·d·B goes to v[ξ·vl+j] (AVX).",
		"The caller checks that e and o hold 3·ld+9 values and v 15·vl+8.",
	)
	winoInBody(ymm)
}

// winoInBody emits the body of winoIn8S and winoIn16S, after their
// declarations, on the sixteen vector registers regs (YMM or ZMM).
func winoInBody(regs []reg.VecPhysical) {
	e := Load(Param("e").Base(), reg.RSI)
	o := Load(Param("o").Base(), reg.RDX)
	ld := Load(Param("ld"), reg.RCX)
	v := Load(Param("v").Base(), reg.RDI)
	vl := Load(Param("vl"), reg.R8)
	SHLQ(U8(2), ld)
	SHLQ(U8(2), vl)
	// Row r of the tiles starts ld·r bytes in: rows 0 and 1 off e and o,
	// rows 2 and 3 off e2 = e + 2·ld and o2 = o + 2·ld.
	e2, o2 := reg.R9, reg.R10
	LEAQ(Mem{Base: e, Index: ld, Scale: 2}, e2)
	LEAQ(Mem{Base: o, Index: ld, Scale: 2}, o2)
	d := func(r, k int) Mem {
		base := e
		if k%2 == 1 {
			base = o
		}
		if r >= 2 {
			base = e2
			if k%2 == 1 {
				base = o2
			}
		}
		m := Mem{Base: base, Disp: 4 * (k / 2)}
		if r%2 == 1 {
			m.Index, m.Scale = ld, 1
		}
		return m
	}
	// m[i][k], i the row of Bᵀ·d: d0−d2, d1+d2, d2−d1, d1−d3 of column k.
	var m [4][4]reg.VecPhysical
	for k := range 4 {
		for i := range 4 {
			m[i][k] = regs[4*k+i]
		}
		VMOVUPS(d(0, k), m[0][k])
		VSUBPS(d(2, k), m[0][k], m[0][k])
		VMOVUPS(d(1, k), m[1][k])
		VADDPS(d(2, k), m[1][k], m[1][k])
		VMOVUPS(d(2, k), m[2][k])
		VSUBPS(d(1, k), m[2][k], m[2][k])
		VMOVUPS(d(1, k), m[3][k])
		VSUBPS(d(3, k), m[3][k], m[3][k])
	}
	// Row i of (Bᵀ·d)·B: m0−m2, m1+m2, m2−m1, m1−m3, to v + (4i+l)·vl.
	// a walks v by vl; b = a + 2·vl.
	a, b := reg.R11, reg.R12
	MOVQ(v, a)
	for i := range 4 {
		r := m[i]
		LEAQ(Mem{Base: a, Index: vl, Scale: 2}, b)
		VSUBPS(r[2], r[0], r[0])
		VMOVUPS(r[0], Mem{Base: a})
		VSUBPS(r[1], r[2], r[0])
		VADDPS(r[2], r[1], r[2])
		VMOVUPS(r[2], Mem{Base: a, Index: vl, Scale: 1})
		VMOVUPS(r[0], Mem{Base: b})
		VSUBPS(r[3], r[1], r[3])
		VMOVUPS(r[3], Mem{Base: b, Index: vl, Scale: 1})
		LEAQ(Mem{Base: a, Index: vl, Scale: 4}, a)
	}
	VZEROUPPER()
	RET()
}

// winoIn4x2S emits winoIn4x2S: winoIn8S for two rows of four tiles, each
// operand put together from two 128-bit halves.
func winoIn4x2S() {
	TEXT("winoIn4x2S", NOSPLIT, "func(e, o []float32, ld, off int, v []float32, vl int)")
	Pragma("noescape")
	Doc(
		"winoIn4x2S is winoIn8S for tiles j < 4 as there and tiles j ≥ 4 off values further in e and o",
		"than tile j−4 (the next row of tiles, for rows of four) (AVX).",
		"The caller checks that e and o hold off+3·ld+5 values and v 15·vl+8.",
	)
	e := Load(Param("e").Base(), reg.RSI)
	o := Load(Param("o").Base(), reg.RDX)
	ld := Load(Param("ld"), reg.RCX)
	off := Load(Param("off"), reg.RBX)
	v := Load(Param("v").Base(), reg.RDI)
	vl := Load(Param("vl"), reg.R8)
	SHLQ(U8(2), ld)
	SHLQ(U8(2), off)
	SHLQ(U8(2), vl)
	// Row r of the tiles off rows[r] (even columns) and odd[r]; lanes 4–7
	// off bytes further. ld's register becomes odd[3].
	rows := []reg.Register{e, reg.R9, reg.R11, reg.R13}
	odd := []reg.Register{o, reg.R10, reg.R12, reg.RCX}
	for r := 1; r < 4; r++ {
		LEAQ(Mem{Base: rows[r-1], Index: ld, Scale: 1}, rows[r])
	}
	for r := 1; r < 4; r++ {
		LEAQ(Mem{Base: odd[r-1], Index: ld, Scale: 1}, odd[r])
	}
	load := func(r, k int, dst reg.VecPhysical) {
		base := rows[r]
		if k%2 == 1 {
			base = odd[r]
		}
		VMOVUPS(Mem{Base: base, Disp: 4 * (k / 2)}, dst.AsX())
		VINSERTF128(U8(1), Mem{Base: base, Index: off, Scale: 1, Disp: 4 * (k / 2)}, dst, dst)
	}
	// Column k of Bᵀ·d into c[k] = (d0−d2, d1+d2, d2−d1, d1−d3), with a
	// scratch register t; the register of d1 is left free.
	column := func(k int, d [4]reg.VecPhysical, t reg.VecPhysical) [4]reg.VecPhysical {
		for r := range 4 {
			load(r, k, d[r])
		}
		VSUBPS(d[2], d[0], d[0])
		VADDPS(d[2], d[1], t)
		VSUBPS(d[1], d[2], d[2])
		VSUBPS(d[3], d[1], d[3])
		return [4]reg.VecPhysical{d[0], t, d[2], d[3]}
	}
	a := reg.RAX
	store := func(i, l int, x reg.VecPhysical) {
		// v + (4i+l)·vl.
		if i == 0 && l == 0 {
			VMOVUPS(x, Mem{Base: v})
			return
		}
		IMUL3Q(U8(4*i+l), vl, a)
		VMOVUPS(x, Mem{Base: v, Index: a, Scale: 1})
	}
	// Columns 0 and 2, then element 0 of each row: m0 − m2.
	c0 := column(0, [4]reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3}, reg.Y4)
	c2 := column(2, [4]reg.VecPhysical{reg.Y5, reg.Y1, reg.Y6, reg.Y7}, reg.Y8)
	for i := range 4 {
		VSUBPS(c2[i], c0[i], c0[i])
		store(i, 0, c0[i])
	}
	// Column 1: elements 1 and 2, m1 + m2 and m2 − m1.
	c1 := column(1, [4]reg.VecPhysical{reg.Y9, reg.Y1, reg.Y10, reg.Y11}, reg.Y12)
	for i := range 4 {
		VADDPS(c2[i], c1[i], reg.Y13)
		store(i, 1, reg.Y13)
		VSUBPS(c1[i], c2[i], reg.Y13)
		store(i, 2, reg.Y13)
	}
	// Column 3: element 3, m1 − m3.
	c3 := column(3, [4]reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3}, reg.Y4)
	for i := range 4 {
		VSUBPS(c3[i], c1[i], reg.Y13)
		store(i, 3, reg.Y13)
	}
	VZEROUPPER()
	RET()
}

// winoOut8S emits winoOut8S: the output transform Aᵀ·M·A of eight tiles,
// plus a bias, written as two rows of 16 outputs.
func winoOut8S() {
	TEXT("winoOut8S", NOSPLIT, "func(m []float32, ml int, bias float32, y []float32, ld, off int)")
	Pragma("noescape")
	Doc(
		"winoOut8S transforms eight 4×4 product tiles, element ξ of tile j at m[ξ·ml+j], into their",
		"2×2 output tiles plus bias: the top row of tile j to y[2j], y[2j+1] for j < 4 and",
		"y[off+2j−8], y[off+2j−7] for j ≥ 4, the bottom row ld further (AVX). With off 8 the",
		"tiles are side by side. The caller checks that m holds 15·ml+8 values and y ld+off+8.",
	)
	m := Load(Param("m").Base(), reg.RSI)
	ml := Load(Param("ml"), reg.RCX)
	y0 := Load(Param("y").Base(), reg.RDI)
	ld := Load(Param("ld"), reg.RDX)
	off := Load(Param("off"), reg.R12)
	SHLQ(U8(2), ml)
	SHLQ(U8(2), ld)
	SHLQ(U8(2), off)
	y1 := reg.R13
	LEAQ(Mem{Base: y0, Index: ld, Scale: 1}, y1)
	at := productTile(m, ml)
	// Aᵀ·M: s_c = (m0c+m1c)+m2c in Y0…Y3, d_c = (m1c−m2c)−m3c in Y4…Y7.
	s := []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3}
	d := []reg.VecPhysical{reg.Y4, reg.Y5, reg.Y6, reg.Y7}
	for c := range 4 {
		VMOVUPS(at(0, c), s[c])
		VADDPS(at(1, c), s[c], s[c])
		VADDPS(at(2, c), s[c], s[c])
		VMOVUPS(at(1, c), d[c])
		VSUBPS(at(2, c), d[c], d[c])
		VSUBPS(at(3, c), d[c], d[c])
	}
	bias := reg.Y8
	VBROADCASTSS(addr(Param("bias")), bias)
	// (Aᵀ·M)·A + bias, per row x of Aᵀ·M: ((x0+x1)+x2)+bias and
	// ((x1−x2)−x3)+bias, interleaved into 16 outputs at y.
	for i, x := range [][]reg.VecPhysical{s, d} {
		y := y0
		if i == 1 {
			y = y1
		}
		VADDPS(x[1], x[0], reg.Y9)
		VADDPS(x[2], reg.Y9, reg.Y9)
		VADDPS(bias, reg.Y9, reg.Y9)
		VSUBPS(x[2], x[1], reg.Y10)
		VSUBPS(x[3], reg.Y10, reg.Y10)
		VADDPS(bias, reg.Y10, reg.Y10)
		VUNPCKLPS(reg.Y10, reg.Y9, reg.Y11) // tiles 0 1 | 4 5
		VUNPCKHPS(reg.Y10, reg.Y9, reg.Y12) // tiles 2 3 | 6 7
		VPERM2F128(U8(0x20), reg.Y12, reg.Y11, reg.Y13)
		VPERM2F128(U8(0x31), reg.Y12, reg.Y11, reg.Y14)
		VMOVUPS(reg.Y13, Mem{Base: y})
		VMOVUPS(reg.Y14, Mem{Base: y, Index: off, Scale: 1})
	}
	VZEROUPPER()
	RET()
}

// productTile emits the addressing of a 4×4 product tile whose element
// 4r+c lies at m + (4r+c)·ml bytes (ml already scaled): row r starts in
// m, R9, R10 or R11, and 3·ml is in R8. It returns the address of element
// (r, c).
func productTile(m, ml reg.Register) func(r, c int) Mem {
	ml3 := reg.R8
	LEAQ(Mem{Base: ml, Index: ml, Scale: 2}, ml3)
	rows := []reg.Register{m, reg.R9, reg.R10, reg.R11}
	for r := 1; r < 4; r++ {
		LEAQ(Mem{Base: rows[r-1], Index: ml, Scale: 4}, rows[r])
	}
	return func(r, c int) Mem {
		switch c {
		case 0:
			return Mem{Base: rows[r]}
		case 3:
			return Mem{Base: rows[r], Index: ml3, Scale: 1}
		}
		return Mem{Base: rows[r], Index: ml, Scale: uint8(c)}
	}
}
