package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// wino512Kernels emits package convpool's AVX-512F kernels of the Winograd
// F(2×2, 3×3) transforms: the input and output transforms of sixteen
// tiles side by side in a row of tiles (a whole strip of the GEMM's packed
// V), one tile per lane, with the operations of the Go code for one tile
// in its order, as the AVX kernels of eight do, and the transform of
// sixteen output-gradient tiles. They need rows of at least sixteen tiles
// (planes 32 wide); rows of four tiles stay with the AVX kernels.
func wino512Kernels() {
	winoIn16S()
	winoOut16S()
	winoGrad16S()
}

// winoIn16S emits winoIn16S: winoIn8S on ZMM registers, sixteen tiles.
func winoIn16S() {
	TEXT("winoIn16S", NOSPLIT, "func(e, o []float32, ld int, v []float32, vl int)")
	Pragma("noescape")
	Doc(
		"winoIn16S transforms sixteen 4×4 input tiles side by side as winoIn8S does eight (AVX-512F).",
		"The caller checks that e and o hold 3·ld+17 values and v 15·vl+16.",
	)
	winoInBody(zmm[:16])
}

// winoOut16S emits winoOut16S: winoOut8S on ZMM registers for sixteen
// tiles side by side; a two-table permute interleaves the tiles' two
// columns into 32 outputs a row.
func winoOut16S() {
	TEXT("winoOut16S", NOSPLIT, "func(m []float32, ml int, bias float32, y []float32, ld int)")
	Pragma("noescape")
	Doc(
		"winoOut16S transforms sixteen 4×4 product tiles, element ξ of tile j at m[ξ·ml+j], into their",
		"2×2 output tiles plus bias: the top row of tile j to y[2j], y[2j+1], the bottom row ld further",
		"(AVX-512F). The caller checks that m holds 15·ml+16 values and y ld+32.",
	)
	m := Load(Param("m").Base(), reg.RSI)
	ml := Load(Param("ml"), reg.RCX)
	y0 := Load(Param("y").Base(), reg.RDI)
	ld := Load(Param("ld"), reg.RDX)
	SHLQ(U8(2), ml)
	SHLQ(U8(2), ld)
	y1 := reg.R13
	LEAQ(Mem{Base: y0, Index: ld, Scale: 1}, y1)
	at := productTile(m, ml)
	// Aᵀ·M: s_c = (m0c+m1c)+m2c in Z0…Z3, d_c = (m1c−m2c)−m3c in Z4…Z7.
	s := zmm[0:4]
	d := zmm[4:8]
	for c := range 4 {
		VMOVUPS(at(0, c), s[c])
		VADDPS(at(1, c), s[c], s[c])
		VADDPS(at(2, c), s[c], s[c])
		VMOVUPS(at(1, c), d[c])
		VSUBPS(at(2, c), d[c], d[c])
		VSUBPS(at(3, c), d[c], d[c])
	}
	bias := reg.Z8
	VBROADCASTSS(addr(Param("bias")), bias)
	// Output 2j of a row from lane j of the left column, 2j+1 from lane j
	// of the right one (table entries 16 and up).
	zipLo, zipHi := reg.Z28, reg.Z29
	indexTable("winoZipLo", func(i int) int { return i/2 + 16*(i%2) }, zipLo)
	indexTable("winoZipHi", func(i int) int { return 8 + i/2 + 16*(i%2) }, zipHi)
	// (Aᵀ·M)·A + bias, per row x of Aᵀ·M: ((x0+x1)+x2)+bias and
	// ((x1−x2)−x3)+bias, interleaved into 32 outputs at y.
	for i, x := range [][]reg.VecPhysical{s, d} {
		y := y0
		if i == 1 {
			y = y1
		}
		VADDPS(x[1], x[0], reg.Z9)
		VADDPS(x[2], reg.Z9, reg.Z9)
		VADDPS(bias, reg.Z9, reg.Z9)
		VSUBPS(x[2], x[1], reg.Z10)
		VSUBPS(x[3], reg.Z10, reg.Z10)
		VADDPS(bias, reg.Z10, reg.Z10)
		VMOVDQA32(zipLo, reg.Z11)
		VPERMI2PS(reg.Z10, reg.Z9, reg.Z11)
		VMOVDQA32(zipHi, reg.Z12)
		VPERMI2PS(reg.Z10, reg.Z9, reg.Z12)
		VMOVUPS(reg.Z11, Mem{Base: y})
		VMOVUPS(reg.Z12, Mem{Base: y, Disp: 64})
	}
	VZEROUPPER()
	RET()
}

// winoGrad16S emits winoGrad16S: winoGrad8S on ZMM registers for sixteen
// tiles side by side; a two-table permute takes the even and odd elements
// of each row of 32 apart.
func winoGrad16S() {
	TEXT("winoGrad16S", NOSPLIT, "func(dy []float32, ld int, y []float32, yl int)")
	Pragma("noescape")
	Doc(
		"winoGrad16S transforms sixteen 2×2 tiles side by side, tile j's top row at dy[2j], dy[2j+1],",
		"its bottom row ld further, into their 4×4 A·e·Aᵀ, element ξ of tile j to y[ξ·yl+j] (AVX-512F).",
		"The caller checks that dy holds ld+32 values and y 15·yl+16.",
	)
	dy := Load(Param("dy").Base(), reg.RSI)
	ld := Load(Param("ld"), reg.RDX)
	y := Load(Param("y").Base(), reg.RDI)
	yl := Load(Param("yl"), reg.RCX)
	SHLQ(U8(2), yl)
	SHLQ(U8(2), ld)
	r1 := reg.R11
	LEAQ(Mem{Base: dy, Index: ld, Scale: 1}, r1)
	sign, even, odd := reg.Z31, reg.Z30, reg.Z29
	MOVL(U32(0x80000000), reg.EAX)
	VPBROADCASTD(reg.EAX, sign)
	indexTable("winoEven", func(i int) int { return 2 * i }, even)
	indexTable("winoOdd", func(i int) int { return 2*i + 1 }, odd)
	// evenOdd16 sets e and o to the even and odd elements of the 32 at p.
	evenOdd16 := func(p reg.Register, e, o reg.VecPhysical) {
		VMOVUPS(Mem{Base: p}, reg.Z0)
		VMOVUPS(Mem{Base: p, Disp: 64}, reg.Z1)
		VMOVDQA32(even, e)
		VPERMI2PS(reg.Z1, reg.Z0, e)
		VMOVDQA32(odd, o)
		VPERMI2PS(reg.Z1, reg.Z0, o)
	}
	e00, e01, e10, e11 := reg.Z2, reg.Z3, reg.Z4, reg.Z5
	evenOdd16(dy, e00, e01)
	evenOdd16(r1, e10, e11)
	winoGradRows(zmm, sign, VPXORD, y, yl)
}
