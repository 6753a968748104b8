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
	ys := []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7, reg.Y8, reg.Y9, reg.Y10, reg.Y11, reg.Y12, reg.Y13, reg.Y14, reg.Y15}
	for k := range 4 {
		for i := range 4 {
			m[i][k] = ys[4*k+i]
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

// winoOut8S emits winoOut8S: the output transform Aᵀ·M·A of eight tiles,
// plus a bias, written as two rows of 16 outputs.
func winoOut8S() {
	TEXT("winoOut8S", NOSPLIT, "func(m []float32, ml int, bias float32, y0, y1 []float32)")
	Pragma("noescape")
	Doc(
		"winoOut8S transforms eight 4×4 product tiles side by side, element ξ of tile j at m[ξ·ml+j],",
		"into their 2×2 output tiles plus bias: tile j's top row to y0[2j] and y0[2j+1], its",
		"bottom row to y1[2j] and y1[2j+1] (AVX).",
		"The caller checks that m holds 15·ml+8 values and y0 and y1 16 each.",
	)
	m := Load(Param("m").Base(), reg.RSI)
	ml := Load(Param("ml"), reg.RCX)
	y0 := Load(Param("y0").Base(), reg.RDI)
	y1 := Load(Param("y1").Base(), reg.RDX)
	SHLQ(U8(2), ml)
	// Row r of M starts at rows[r] = m + 4r·ml; column c is c·ml further
	// (3·ml in ml3).
	ml3 := reg.R8
	LEAQ(Mem{Base: ml, Index: ml, Scale: 2}, ml3)
	rows := []reg.Register{m, reg.R9, reg.R10, reg.R11}
	for r := 1; r < 4; r++ {
		LEAQ(Mem{Base: rows[r-1], Index: ml, Scale: 4}, rows[r])
	}
	at := func(r, c int) Mem {
		switch c {
		case 0:
			return Mem{Base: rows[r]}
		case 3:
			return Mem{Base: rows[r], Index: ml3, Scale: 1}
		}
		return Mem{Base: rows[r], Index: ml, Scale: uint8(c)}
	}
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
		VMOVUPS(reg.Y14, Mem{Base: y, Disp: 32})
	}
	VZEROUPPER()
	RET()
}
