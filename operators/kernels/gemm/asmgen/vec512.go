package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// vec512Kernels emits package vec's AVX-512 kernels (AVX-512F only: ZMM
// registers, 16 float32 or 8 float64 per instruction, and a K-masked tail
// instead of a scalar loop). They are the kernels whose loops are bound by
// instruction throughput while their data sits in L1 or L2: the adds (of
// col2im and the FC bias gradient), ReLU and its gradient, and the
// normalization and its gradient (three or five operations per element).
//
// Left at AVX or AVX2 width:
//   - the statistics sums (shiftedSumsS, gradSumsS, sum4S): their results are
//     defined as four interleaved chains, each added in order, so each step
//     waits for the last addition of its chain (latency-bound); a wider
//     register cannot start the next step sooner, only more chains could,
//     and that would change the results on every CPU;
//   - the 2×2 max pool and its gradient (maxPairsS, maxPairsGradS): they
//     read four inputs or write four gradients per output and run on data
//     streamed once, so they are bound by memory more than by their
//     shuffles.
func vec512Kernels() {
	add512(f32)
	add512(f64)
	relu512S()
	reluGrad512S()
	normalize512S()
	normalizeGrad512S()
}

// zmm are the AVX-512 vector registers in order.
var zmm = []reg.VecPhysical{
	reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7,
	reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15,
	reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20, reg.Z21, reg.Z22, reg.Z23,
	reg.Z24, reg.Z25, reg.Z26, reg.Z27, reg.Z28, reg.Z29, reg.Z30, reg.Z31,
}

// zslots is how many registers' worth of elements the main loop of zloop
// handles a step.
const zslots = 4

// zloop emits the loop of an AVX-512 element-wise kernel over the n
// elements (n in RCX) of size bytes each that the pointers ptrs walk:
// zslots ZMM registers a step, then one a step, then the n mod lanes left
// under the mask K1, and the return. body(slot, disp, k) emits the work of
// one register: slot < zslots picks its registers, disp is the byte offset
// from each pointer, k is nil, or K1 for the tail, whose loads must zero
// and whose stores must skip the lanes past the end (masked lanes are
// neither read nor written, so no fault either).
func zloop(n reg.Register, size int, ptrs []reg.Register, body func(slot, disp int, k reg.Register)) {
	lanes := 64 / size
	Label("block")
	CMPQ(n, U8(zslots*lanes))
	JB(LabelRef("vector"))
	for s := range zslots {
		body(s, 64*s, nil)
	}
	for _, p := range ptrs {
		ADDQ(U32(zslots*64), p)
	}
	SUBQ(U8(zslots*lanes), n)
	JMP(LabelRef("block"))
	Label("vector")
	CMPQ(n, U8(lanes))
	JB(LabelRef("tail"))
	body(0, 0, nil)
	for _, p := range ptrs {
		ADDQ(U8(64), p)
	}
	SUBQ(U8(lanes), n)
	JMP(LabelRef("vector"))
	Label("tail")
	TESTQ(n, n)
	JZ(LabelRef("done"))
	// K1 = 2ⁿ − 1: the n lanes left.
	MOVL(U32(1), reg.EAX)
	SHLL(reg.CL, reg.EAX)
	DECL(reg.EAX)
	KMOVW(reg.EAX, reg.K1)
	body(0, 0, reg.K1)
	Label("done")
	VZEROUPPER()
	RET()
}

// zload emits a load of m into z, under the zeroing mask k unless k is
// nil; wide is VMOVUPS or VMOVUPD, masked its zeroing form.
func zload(wide, masked func(...Op), m Mem, k reg.Register, z reg.VecPhysical) {
	if k == nil {
		wide(m, z)
		return
	}
	masked(m, k, z)
}

// zstore emits a store of z to m, of the lanes in k unless k is nil.
func zstore(wide func(...Op), z reg.VecPhysical, k reg.Register, m Mem) {
	if k == nil {
		wide(z, m)
		return
	}
	wide(z, k, m)
}

// movZ adapts a zeroing-masked move of avo to zload's signature.
func movZ(f func(mxyz, k, mxyz1 Op)) func(...Op) {
	return func(ops ...Op) { f(ops[0], ops[1], ops[2]) }
}

// add512 emits add512<S|D>: dst[i] += src[i] for i < len(dst), with dst
// the first operand of each addition as in the Go loop (of two NaNs the
// sum is dst's).
func add512(e elem) {
	suffix, vadd, mov, movz := "S", VADDPS, VMOVUPS, movZ(VMOVUPS_Z)
	if e.size == 8 {
		suffix, vadd, mov, movz = "D", VADDPD, VMOVUPD, movZ(VMOVUPD_Z)
	}
	name := "add512" + suffix
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst, src []%s)", e.name))
	Pragma("noescape")
	Doc(
		fmt.Sprintf("%s sets dst[i] += src[i] for i < len(dst) (AVX-512F).", name),
		"The caller checks that src is at least as long as dst.",
	)
	n := Load(Param("dst").Len(), reg.RCX)
	dst := Load(Param("dst").Base(), reg.RDI)
	src := Load(Param("src").Base(), reg.RSI)
	zloop(n, e.size, []reg.Register{dst, src}, func(s, disp int, k reg.Register) {
		a, b := zmm[s], zmm[s+zslots]
		zload(mov, movz, Mem{Base: dst, Disp: disp}, k, a)
		if k == nil {
			vadd(Mem{Base: src, Disp: disp}, a, a)
		} else {
			zload(mov, movz, Mem{Base: src, Disp: disp}, k, b)
			vadd(b, a, a)
		}
		zstore(mov, a, k, Mem{Base: dst, Disp: disp})
	})
}

// relu512S emits relu512S: y = max(x, 0) on float32, sixteen at a time,
// with the instructions the Go compiler emits for max(x, 0) (negate, two
// MINs, OR, negate back; see negMax), the logic on integer lanes so that
// AVX-512F suffices.
func relu512S() {
	TEXT("relu512S", NOSPLIT, "func(x, y []float32)")
	Pragma("noescape")
	Doc(
		"relu512S sets y[i] = max(x[i], 0) for i < len(x), bit for bit as Go computes it (AVX-512F).",
		"The caller checks that y is at least as long as x.",
	)
	n := Load(Param("x").Len(), reg.RCX)
	x := Load(Param("x").Base(), reg.RSI)
	y := Load(Param("y").Base(), reg.RDI)
	// Z31: the sign bit in every lane, which is also −0.
	sign := reg.Z31
	MOVL(U32(0x80000000), reg.EAX)
	VPBROADCASTD(reg.EAX, sign)
	zloop(n, 4, []reg.Register{x, y}, func(s, disp int, k reg.Register) {
		a, t, d := zmm[s], zmm[s+zslots], zmm[s+2*zslots]
		if k == nil {
			VPXORD(Mem{Base: x, Disp: disp}, sign, a) // −x
		} else {
			VMOVUPS_Z(Mem{Base: x, Disp: disp}, k, a)
			VPXORD(sign, a, a)
		}
		VMINPS(sign, a, t) // t = min(−x, −0)
		VMINPS(a, t, d)    // min(t, −x)
		VPORD(t, d, d)     // −max(x, 0)
		VPXORD(sign, d, d)
		zstore(VMOVUPS, d, k, Mem{Base: y, Disp: disp})
	})
}

// reluGrad512S emits reluGrad512S: dx = dy where y, read as an int32, is
// positive (a positive float, not +0, not negative), else +0; the compare
// gives a mask under which dy is loaded, zeroing the other lanes.
func reluGrad512S() {
	TEXT("reluGrad512S", NOSPLIT, "func(y, dy, dx []float32)")
	Pragma("noescape")
	Doc(
		"reluGrad512S sets dx[i] = dy[i] where the bits of y[i] are a positive int32, else +0, for i < len(y) (AVX-512F).",
		"The caller checks that dy and dx are at least as long as y.",
	)
	n := Load(Param("y").Len(), reg.RCX)
	y := Load(Param("y").Base(), reg.RSI)
	dy := Load(Param("dy").Base(), reg.RDX)
	dx := Load(Param("dx").Base(), reg.RDI)
	zero := reg.Z31
	VPXORD(zero, zero, zero)
	positive := []reg.Register{reg.K2, reg.K3, reg.K4, reg.K5}
	zloop(n, 4, []reg.Register{y, dy, dx}, func(s, disp int, k reg.Register) {
		a, g, p := zmm[s], zmm[s+zslots], positive[s]
		if k == nil {
			VMOVDQU32(Mem{Base: y, Disp: disp}, a)
			VPCMPGTD(zero, a, p)
		} else {
			VMOVDQU32_Z(Mem{Base: y, Disp: disp}, k, a)
			VPCMPGTD(zero, a, k, p)
		}
		VMOVDQU32_Z(Mem{Base: dy, Disp: disp}, p, g)
		zstore(VMOVDQU32, g, k, Mem{Base: dx, Disp: disp})
	})
}

// normalize512S emits normalize512S: y = (x − m)·a + b on float32,
// sixteen at a time, with the operations and roundings of the Go
// expression (no FMA).
func normalize512S() {
	TEXT("normalize512S", NOSPLIT, "func(x, y []float32, m, a, b float32)")
	Pragma("noescape")
	Doc(
		"normalize512S sets y[i] = (x[i]−m)·a + b for i < len(x), rounding after each operation (AVX-512F).",
		"The caller checks that y is at least as long as x.",
	)
	n := Load(Param("x").Len(), reg.RCX)
	x := Load(Param("x").Base(), reg.RSI)
	y := Load(Param("y").Base(), reg.RDI)
	zm, za, zb := reg.Z28, reg.Z29, reg.Z30
	VBROADCASTSS(addr(Param("m")), zm)
	VBROADCASTSS(addr(Param("a")), za)
	VBROADCASTSS(addr(Param("b")), zb)
	zloop(n, 4, []reg.Register{x, y}, func(s, disp int, k reg.Register) {
		v := zmm[s]
		zload(VMOVUPS, movZ(VMOVUPS_Z), Mem{Base: x, Disp: disp}, k, v)
		VSUBPS(zm, v, v)
		VMULPS(za, v, v)
		VADDPS(zb, v, v)
		zstore(VMOVUPS, v, k, Mem{Base: y, Disp: disp})
	})
}

// normalizeGrad512S emits normalizeGrad512S: dx = dy·a + (x − m)·c + d on
// float32, sixteen at a time, in the order and with the roundings of the
// Go expression (no FMA).
func normalizeGrad512S() {
	TEXT("normalizeGrad512S", NOSPLIT, "func(dy, x, dx []float32, m, a, c, d float32)")
	Pragma("noescape")
	Doc(
		"normalizeGrad512S sets dx[i] = (dy[i]·a + (x[i]−m)·c) + d for i < len(dy), rounding after each operation (AVX-512F).",
		"The caller checks that x and dx are at least as long as dy.",
	)
	n := Load(Param("dy").Len(), reg.RCX)
	dy := Load(Param("dy").Base(), reg.RSI)
	x := Load(Param("x").Base(), reg.RDX)
	dx := Load(Param("dx").Base(), reg.RDI)
	zm, za, zc, zd := reg.Z27, reg.Z28, reg.Z29, reg.Z30
	VBROADCASTSS(addr(Param("m")), zm)
	VBROADCASTSS(addr(Param("a")), za)
	VBROADCASTSS(addr(Param("c")), zc)
	VBROADCASTSS(addr(Param("d")), zd)
	zloop(n, 4, []reg.Register{dy, x, dx}, func(s, disp int, k reg.Register) {
		g, u := zmm[s], zmm[s+zslots]
		zload(VMOVUPS, movZ(VMOVUPS_Z), Mem{Base: dy, Disp: disp}, k, g)
		VMULPS(za, g, g)
		zload(VMOVUPS, movZ(VMOVUPS_Z), Mem{Base: x, Disp: disp}, k, u)
		VSUBPS(zm, u, u)
		VMULPS(zc, u, u)
		VADDPS(u, g, g)
		VADDPS(zd, g, g)
		zstore(VMOVUPS, g, k, Mem{Base: dx, Disp: disp})
	})
}
