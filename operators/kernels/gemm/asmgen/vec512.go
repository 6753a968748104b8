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
// They also take the 2×2 max pool and its gradient, whose shuffles (to
// take even and odd inputs apart, or to spread outputs to pairs) are one
// two-table permute each at this width.
//
// Left at AVX width: the statistics sums (shiftedSumsS, gradSumsS, sum4S).
// Their results are defined as four interleaved chains, each added in
// order, so each step waits for the last addition of its chain: they are
// bound by the latency of one addition per four elements, which a wider
// register does not shorten. Only more chains would, and that would change
// the results (on every CPU, as the Go loops must match).
func vec512Kernels() {
	add512(f32)
	add512(f64)
	addScaled512S()
	relu512S()
	reluGrad512S()
	normalize512S()
	normalizeGrad512S()
	maxPairs512S()
	maxPairsGrad512S()
}

// zmm are the AVX-512 vector registers in order.
var zmm = []reg.VecPhysical{
	reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7,
	reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15,
	reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20, reg.Z21, reg.Z22, reg.Z23,
	reg.Z24, reg.Z25, reg.Z26, reg.Z27, reg.Z28, reg.Z29, reg.Z30, reg.Z31,
}

// zptr is a pointer that an AVX-512 loop walks, and how many bytes it
// advances per register's worth of elements.
type zptr struct {
	r    reg.Register
	step int
}

// zloop emits the loop of an AVX-512 element-wise kernel over n elements
// (n in RCX) of size bytes each, sixteen or eight (lanes) a register, that
// the pointers ptrs walk, advancing 64 bytes a register: see zloopBy.
func zloop(n reg.Register, size int, ptrs []reg.Register, body func(slot int, k reg.Register)) {
	zp := make([]zptr, len(ptrs))
	for i, p := range ptrs {
		zp[i] = zptr{p, 64}
	}
	lanes := 64 / size
	zloopBy(n, lanes, 4, zp, func() { laneMask(reg.K1, 0) }, body)
}

// laneMask sets k to the lowest RCX−shift lanes (2^(RCX−shift) − 1, with
// RCX − shift in [0, 16]), using RAX.
func laneMask(k reg.Register, shift int) {
	MOVQ(U32(1), reg.RAX)
	SHLQ(reg.CL, reg.RAX)
	DECQ(reg.RAX)
	if shift > 0 {
		SHRQ(U8(shift), reg.RAX)
	}
	KMOVW(reg.EAX, k)
}

// zloopBy emits the loop of an AVX-512 kernel over n units (n in RCX),
// lanes of them a register: slots registers' worth a step, then one a
// step, then the n mod lanes left, and the return. Each pointer of ptrs
// advances by its step per register's worth. masks emits the masks of the
// tail from the count left in RCX; body(slot, k) emits the work of one
// register's worth at offset slot·step from each pointer: slot < slots picks
// its registers, and k is nil, or K1 for the tail, whose loads must zero
// and whose stores must skip the lanes past the end (masked lanes are
// neither read nor written, so no fault either).
func zloopBy(n reg.Register, lanes, slots int, ptrs []zptr, masks func(), body func(slot int, k reg.Register)) {
	Label("block")
	CMPQ(n, U8(slots*lanes))
	JB(LabelRef("vector"))
	for s := range slots {
		body(s, nil)
	}
	for _, p := range ptrs {
		ADDQ(U32(slots*p.step), p.r)
	}
	SUBQ(U8(slots*lanes), n)
	JMP(LabelRef("block"))
	Label("vector")
	CMPQ(n, U8(lanes))
	JB(LabelRef("tail"))
	body(0, nil)
	for _, p := range ptrs {
		ADDQ(U32(p.step), p.r)
	}
	SUBQ(U8(lanes), n)
	JMP(LabelRef("vector"))
	Label("tail")
	TESTQ(n, n)
	JZ(LabelRef("done"))
	masks()
	body(0, reg.K1)
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
	zloop(n, e.size, []reg.Register{dst, src}, func(s int, k reg.Register) {
		disp := 64 * s
		a, b := zmm[s], zmm[s+4]
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

// addScaled512S emits addScaled512S: dst += a·src on float32, sixteen at
// a time, the product rounded before the addition, with the operand order
// of the Go loop (see addScaledS).
func addScaled512S() {
	TEXT("addScaled512S", NOSPLIT, "func(dst, src []float32, a float32)")
	Pragma("noescape")
	Doc(
		"addScaled512S sets dst[i] += a·src[i] for i < len(dst), rounding the product before the addition (AVX-512F).",
		"The caller checks that src is at least as long as dst.",
	)
	n := Load(Param("dst").Len(), reg.RCX)
	dst := Load(Param("dst").Base(), reg.RDI)
	src := Load(Param("src").Base(), reg.RSI)
	VBROADCASTSS(addr(Param("a")), reg.Z31)
	zloop(n, 4, []reg.Register{dst, src}, func(s int, k reg.Register) {
		disp := 64 * s
		d, p := zmm[s], zmm[s+4]
		zload(VMOVUPS, movZ(VMOVUPS_Z), Mem{Base: src, Disp: disp}, k, p)
		VMULPS(reg.Z31, p, p) // src first, as in addScaledS
		zload(VMOVUPS, movZ(VMOVUPS_Z), Mem{Base: dst, Disp: disp}, k, d)
		VADDPS(d, p, p) // the product first, as in addScaledS
		zstore(VMOVUPS, p, k, Mem{Base: dst, Disp: disp})
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
	zloop(n, 4, []reg.Register{x, y}, func(s int, k reg.Register) {
		disp := 64 * s
		a, t, d := zmm[s], zmm[s+4], zmm[s+8]
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
	zloop(n, 4, []reg.Register{y, dy, dx}, func(s int, k reg.Register) {
		disp := 64 * s
		a, g, p := zmm[s], zmm[s+4], positive[s]
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
	zloop(n, 4, []reg.Register{x, y}, func(s int, k reg.Register) {
		disp := 64 * s
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
	zloop(n, 4, []reg.Register{dy, x, dx}, func(s int, k reg.Register) {
		disp := 64 * s
		g, u := zmm[s], zmm[s+4]
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

// pairMasks emits the masks of a tail of the 2×2 max pool's kernels from
// the count of outputs left in RCX: K3 the output lanes, K1 and K2 the
// lanes of the first and second register of the twice as many inputs.
func pairMasks() {
	laneMask(reg.K3, 0)
	SHLQ(U8(1), reg.RCX)
	laneMask(reg.K1, 0)
	laneMask(reg.K2, 16)
}

// indexTable emits a read-only table of sixteen int32 lane indexes, the
// i-th f(i), and loads it into z.
func indexTable(name string, f func(i int) int, z reg.VecPhysical) {
	m := GLOBL(name, RODATA|NOPTR)
	for i := range 16 {
		DATA(4*i, U32(f(i)))
	}
	VMOVDQU32(m, z)
}

// negMax512 is negMax on ZMM registers, the OR on integer lanes so that
// AVX-512F suffices.
func negMax512(na, nb, t, dst reg.VecPhysical) {
	VMINPS(nb, na, t)  // t = min(−a, −b)
	VMINPS(na, t, dst) // min(t, −a)
	VPORD(t, dst, dst)
}

// maxPairs512S emits maxPairs512S: y[i] = max(max(r0[2i], r0[2i+1]),
// max(r1[2i], r1[2i+1])) with Go's max, sixteen outputs a register, by the
// instructions of maxPairsS; a two-table permute (VPERMI2PS) takes the
// even and the odd inputs of a row in order.
func maxPairs512S() {
	TEXT("maxPairs512S", NOSPLIT, "func(r0, r1, y []float32)")
	Pragma("noescape")
	Doc(
		"maxPairs512S sets y[i] = max(max(r0[2i], r0[2i+1]), max(r1[2i], r1[2i+1])) for i < len(y), bit for bit as Go computes it (AVX-512F).",
		"The caller checks that r0 and r1 hold 2·len(y) values.",
	)
	n := Load(Param("y").Len(), reg.RCX)
	r0 := Load(Param("r0").Base(), reg.RSI)
	r1 := Load(Param("r1").Base(), reg.RDX)
	y := Load(Param("y").Base(), reg.RDI)
	sign, even, odd := reg.Z31, reg.Z30, reg.Z29
	MOVL(U32(0x80000000), reg.EAX)
	VPBROADCASTD(reg.EAX, sign)
	indexTable("pairEven", func(i int) int { return 2 * i }, even)
	indexTable("pairOdd", func(i int) int { return 2*i + 1 }, odd)
	ptrs := []zptr{{r0, 128}, {r1, 128}, {y, 64}}
	zloopBy(n, 16, 2, ptrs, pairMasks, func(s int, k reg.Register) {
		z := zmm[12*s : 12*s+12]
		// row sets e and o to the negated even and odd elements of the
		// row at p.
		row := func(p reg.Register, e, o reg.VecPhysical) {
			lo, hi := z[0], z[1]
			if k == nil {
				VMOVUPS(Mem{Base: p, Disp: 128 * s}, lo)
				VMOVUPS(Mem{Base: p, Disp: 128*s + 64}, hi)
			} else {
				VMOVUPS_Z(Mem{Base: p}, reg.K1, lo)
				VMOVUPS_Z(Mem{Base: p, Disp: 64}, reg.K2, hi)
			}
			VMOVDQA32(even, e)
			VPERMI2PS(hi, lo, e)
			VMOVDQA32(odd, o)
			VPERMI2PS(hi, lo, o)
			VPXORD(sign, e, e)
			VPXORD(sign, o, o)
		}
		row(r0, z[2], z[3])
		row(r1, z[4], z[5])
		negMax512(z[2], z[3], z[6], z[7])   // −max(r0 pair)
		negMax512(z[4], z[5], z[8], z[9])   // −max(r1 pair)
		negMax512(z[7], z[9], z[10], z[11]) // −max
		VPXORD(sign, z[11], z[11])
		if k == nil {
			VMOVUPS(z[11], Mem{Base: y, Disp: 64 * s})
		} else {
			VMOVUPS(z[11], reg.K3, Mem{Base: y})
		}
	})
}

// maxPairsGrad512S emits maxPairsGrad512S, the gradient of maxPairs512S:
// each of the four inputs of output i gets dy[i] where it equals y[i] (an
// ordered compare, as Go's ==), else +0; a permute (VPERMPS) spreads y and
// dy to pairs, and the compare's mask zeroes the other lanes of dy.
func maxPairsGrad512S() {
	TEXT("maxPairsGrad512S", NOSPLIT, "func(x0, x1, y, dy, d0, d1 []float32)")
	Pragma("noescape")
	Doc(
		"maxPairsGrad512S sets d0[2i+k] = dy[i] where x0[2i+k] == y[i], else +0, and d1 likewise from x1, for i < len(y), k < 2 (AVX-512F).",
		"The caller checks that dy is at least as long as y, and x0, x1, d0 and d1 hold 2·len(y) values.",
	)
	n := Load(Param("y").Len(), reg.RCX)
	x0 := Load(Param("x0").Base(), reg.RSI)
	x1 := Load(Param("x1").Base(), reg.RDX)
	y := Load(Param("y").Base(), reg.R8)
	dy := Load(Param("dy").Base(), reg.R9)
	d0 := Load(Param("d0").Base(), reg.RDI)
	d1 := Load(Param("d1").Base(), reg.R10)
	loIdx, hiIdx := reg.Z31, reg.Z30
	indexTable("pairLo", func(i int) int { return i / 2 }, loIdx)
	indexTable("pairHi", func(i int) int { return 8 + i/2 }, hiIdx)
	ptrs := []zptr{{x0, 128}, {x1, 128}, {d0, 128}, {d1, 128}, {y, 64}, {dy, 64}}
	zloopBy(n, 16, 2, ptrs, pairMasks, func(s int, k reg.Register) {
		z := zmm[12*s : 12*s+12]
		yv, gv := z[0], z[1]
		if k == nil {
			VMOVUPS(Mem{Base: y, Disp: 64 * s}, yv)
			VMOVUPS(Mem{Base: dy, Disp: 64 * s}, gv)
		} else {
			VMOVUPS_Z(Mem{Base: y}, reg.K3, yv)
			VMOVUPS_Z(Mem{Base: dy}, reg.K3, gv)
		}
		// Each of y and dy twice over: [v0 v0 v1 v1 … v7 v7], [v8 v8 … v15 v15].
		spread := [2][2]reg.VecPhysical{{z[2], z[3]}, {z[4], z[5]}} // [half]{y, dy}
		for h, idx := range []reg.VecPhysical{loIdx, hiIdx} {
			VPERMPS(yv, idx, spread[h][0])
			VPERMPS(gv, idx, spread[h][1])
		}
		eq := []reg.Register{reg.K4, reg.K5, reg.K6, reg.K7}
		i := 0
		for _, p := range [][2]reg.Register{{x0, d0}, {x1, d1}} {
			for h, in := range []reg.Register{reg.K1, reg.K2} {
				r, e := z[6+i], eq[i]
				src := Mem{Base: p[0], Disp: 128*s + 64*h}
				dst := Mem{Base: p[1], Disp: 128*s + 64*h}
				if k == nil {
					VCMPPS(U8(0), src, spread[h][0], e) // EQ_OQ: x == y
				} else {
					VMOVUPS_Z(src, in, r)
					VCMPPS(U8(0), r, spread[h][0], in, e)
				}
				VMOVUPS_Z(spread[h][1], e, r)
				if k == nil {
					VMOVUPS(r, dst)
				} else {
					VMOVUPS(r, in, dst)
				}
				i++
			}
		}
	})
}
