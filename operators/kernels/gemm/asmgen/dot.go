package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Rows of A and of B in one tile of the dot kernel: twelve YMM
// accumulators, three registers for the rows of B and one for a row of A.
const dotRows, dotCols = 4, 3

// dot4x3S emits dot4x3S, the kernel of the dot path (C = A·Bᵀ with few
// columns): the twelve dot products of four rows of A with three rows of
// B, each k long and contiguous, accumulated eight at a time in YMM
// registers and reduced at the end. A last k%8 values are loaded under a
// mask, so nothing past the end of a row is read.
func dot4x3S() {
	mask := GLOBL("dotMask", RODATA|NOPTR)
	for i := 0; i < 16; i++ {
		v := uint32(0)
		if i < 8 {
			v = 0xffffffff
		}
		DATA(4*i, U32(v))
	}

	TEXT("dot4x3S", NOSPLIT, "func(k int, a []float32, lda int, b []float32, ldb int, out []float32)")
	Pragma("noescape")
	Doc(
		"dot4x3S sets out[4·i+j] = Σ_{p<k} a[i·lda+p]·b[j·ldb+p] for i < 4 and j < 3, and out[4·i+3] = 0.",
		"The caller checks the lengths of a, b and out (16) and that k > 0.",
	)
	k := Load(Param("k"), reg.RCX)
	pa := Load(Param("a").Base(), reg.RSI)
	lda := Load(Param("lda"), reg.R8)
	pb := Load(Param("b").Base(), reg.RDI)
	ldb := Load(Param("ldb"), reg.R9)
	out := Load(Param("out").Base(), reg.R11)
	SHLQ(U8(2), lda)
	SHLQ(U8(2), ldb)
	// Rows 2 and 3 of A are at pa2 and pa2+lda.
	pa2 := reg.R10
	LEAQ(Mem{Base: pa, Index: lda, Scale: 2}, pa2)

	acc := []reg.VecPhysical{
		reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5,
		reg.Y6, reg.Y7, reg.Y8, reg.Y9, reg.Y10, reg.Y11,
	}
	bv := []reg.VecPhysical{reg.Y12, reg.Y13, reg.Y14}
	av := reg.Y15
	for _, r := range acc {
		VXORPS(r, r, r)
	}
	aRow := func(i int) Mem {
		switch i {
		case 0:
			return Mem{Base: pa}
		case 1:
			return Mem{Base: pa, Index: lda, Scale: 1}
		case 2:
			return Mem{Base: pa2}
		}
		return Mem{Base: pa2, Index: lda, Scale: 1}
	}
	bRow := func(j int) Mem {
		if j == 0 {
			return Mem{Base: pb}
		}
		return Mem{Base: pb, Index: ldb, Scale: uint8(j)}
	}

	n := reg.RAX
	MOVQ(k, n)
	SHRQ(U8(3), n)
	JZ(LabelRef("tail"))
	Label("loop")
	for j := 0; j < dotCols; j++ {
		VMOVUPS(bRow(j), bv[j])
	}
	for i := 0; i < dotRows; i++ {
		VMOVUPS(aRow(i), av)
		for j := 0; j < dotCols; j++ {
			VFMADD231PS(bv[j], av, acc[dotCols*i+j])
		}
	}
	for _, p := range []reg.Register{pa, pa2, pb} {
		ADDQ(U8(32), p)
	}
	DECQ(n)
	JNZ(LabelRef("loop"))

	Label("tail")
	ANDQ(U8(7), k)
	JZ(LabelRef("reduce"))
	Comment("The last k%8 values, under a mask of k%8 ones: two rows of B, then the third.")
	m := reg.RDX
	MOVQ(U32(8), m)
	SUBQ(k, m)
	LEAQ(mask, reg.RBX)
	VMOVUPS(Mem{Base: reg.RBX, Index: m, Scale: 4}, av)
	VMASKMOVPS(bRow(0), av, bv[0])
	VMASKMOVPS(bRow(1), av, bv[1])
	for i := 0; i < dotRows; i++ {
		VMASKMOVPS(aRow(i), av, bv[2])
		VFMADD231PS(bv[0], bv[2], acc[dotCols*i])
		VFMADD231PS(bv[1], bv[2], acc[dotCols*i+1])
	}
	VMASKMOVPS(bRow(2), av, bv[0])
	for i := 0; i < dotRows; i++ {
		VMASKMOVPS(aRow(i), av, bv[2])
		VFMADD231PS(bv[0], bv[2], acc[dotCols*i+2])
	}

	Label("reduce")
	Comment("Row i: [Σ(i,0), Σ(i,1), Σ(i,2), 0] from its three accumulators and zeros.")
	VXORPS(av, av, av)
	for i := 0; i < dotRows; i++ {
		r0, r1, r2 := acc[dotCols*i], acc[dotCols*i+1], acc[dotCols*i+2]
		VHADDPS(r1, r0, r0) // per lane: r0 01 23, r1 01 23
		VHADDPS(av, r2, r2) // per lane: r2 01 23, 0, 0
		VHADDPS(r2, r0, r0) // per lane: r0, r1, r2, 0
		VEXTRACTF128(U8(1), r0, r1.AsX())
		VADDPS(r1.AsX(), r0.AsX(), r0.AsX())
		VMOVUPS(r0.AsX(), Mem{Base: out, Disp: 16 * i})
	}
	VZEROUPPER()
	RET()
}
