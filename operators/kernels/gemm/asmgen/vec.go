package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// vecKernels emits package vec's kernels: the adds of each element type
// and the float32 kernels of normalization, ReLU, the statistics sums and
// 2×2 max pooling, with their gradients, then the AVX-512 kernels
// (vec512.go).
func vecKernels() {
	add(f32)
	add(f64)
	addScaledS()
	normalizeS()
	normalizeGradS()
	reluS()
	reluGradS()
	sumsS(false)
	sumsS(true)
	sum4S()
	maxPairsS()
	maxPairsGradS()
	vec512Kernels()
}

// add emits add<S|D>: dst[i] += src[i] for i < len(dst), four YMM vectors a
// step, then one, then scalars.
func add(e elem) {
	suffix := "S"
	vadd, sadd, sload := VADDPS, VADDSS, VMOVSS
	if e.size == 8 {
		suffix = "D"
		vadd, sadd, sload = VADDPD, VADDSD, VMOVSD
	}
	name := "add" + suffix
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst, src []%s)", e.name))
	Pragma("noescape")
	Doc(
		fmt.Sprintf("%s sets dst[i] += src[i] for i < len(dst).", name),
		"The caller checks that src is at least as long as dst.",
	)
	n := Load(Param("dst").Len(), reg.RCX)
	dst := Load(Param("dst").Base(), reg.RDI)
	src := Load(Param("src").Base(), reg.RSI)
	y := []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3}
	block := 4 * e.lanes
	Label("block")
	CMPQ(n, U8(block))
	JL(LabelRef("vector"))
	// dst is the first operand of each addition, as in the Go loop's
	// ADDSS: of two NaNs, the sum is dst's.
	for i, r := range y {
		e.load(Mem{Base: dst, Disp: 32 * i}, r)
	}
	for i, r := range y {
		vadd(Mem{Base: src, Disp: 32 * i}, r, r)
	}
	for i, r := range y {
		e.load(r, Mem{Base: dst, Disp: 32 * i})
	}
	ADDQ(U8(4*32), src)
	ADDQ(U8(4*32), dst)
	SUBQ(U8(block), n)
	JMP(LabelRef("block"))
	Label("vector")
	CMPQ(n, U8(e.lanes))
	JL(LabelRef("scalar"))
	e.load(Mem{Base: dst}, reg.Y0)
	vadd(Mem{Base: src}, reg.Y0, reg.Y0)
	e.load(reg.Y0, Mem{Base: dst})
	ADDQ(U8(32), src)
	ADDQ(U8(32), dst)
	SUBQ(U8(e.lanes), n)
	JMP(LabelRef("vector"))
	Label("scalar")
	TESTQ(n, n)
	JZ(LabelRef("done"))
	sload(Mem{Base: dst}, reg.X0)
	sadd(Mem{Base: src}, reg.X0, reg.X0)
	sload(reg.X0, Mem{Base: dst})
	ADDQ(U8(e.size), src)
	ADDQ(U8(e.size), dst)
	DECQ(n)
	JMP(LabelRef("scalar"))
	Label("done")
	VZEROUPPER()
	RET()
}

// countedLoop emits the loop of an element-wise kernel: n is shifted
// right by shift, then body runs n times (not at all for 0); the code after
// it is at label done.
func countedLoop(n reg.Register, shift uint8, body func()) {
	SHRQ(U8(shift), n)
	JZ(LabelRef("done"))
	Label("loop")
	body()
	DECQ(n)
	JNZ(LabelRef("loop"))
	Label("done")
}

// negMax sets dst to −max(a, b) from na = −a and nb = −b, per lane with
// the instructions Go emits for max(a, b) (negate, two MINs, OR, negate
// back, MINPS returning its second operand for a NaN or two zeros), leaving
// out the final negation; t is scratch.
func negMax(na, nb, t, dst reg.VecPhysical) {
	VMINPS(nb, na, t)  // t = min(−a, −b)
	VMINPS(na, t, dst) // min(t, −a)
	VORPS(t, dst, dst)
}

// addScaledS emits addScaledS: dst += a·src on float32, eight at a time,
// the product rounded before the addition (no FMA), with the operand order
// of the Go loop.
func addScaledS() {
	TEXT("addScaledS", NOSPLIT, "func(dst, src []float32, a float32)")
	Pragma("noescape")
	Doc(
		"addScaledS sets dst[i] += a·src[i] for i < len(dst), rounding the product before the addition.",
		"The caller checks that len(dst) is a multiple of 8 and that src is at least as long.",
	)
	n := Load(Param("dst").Len(), reg.RCX)
	dst := Load(Param("dst").Base(), reg.RDI)
	src := Load(Param("src").Base(), reg.RSI)
	VBROADCASTSS(addr(Param("a")), reg.Y2)
	countedLoop(n, 3, func() {
		// src is the first operand of the product and the product that
		// of the sum, as in the Go loop's MULSS and ADDSS: of two NaNs, the
		// result is that operand's.
		VMOVUPS(Mem{Base: src}, reg.Y1)
		VMULPS(reg.Y2, reg.Y1, reg.Y1)
		VADDPS(Mem{Base: dst}, reg.Y1, reg.Y1)
		VMOVUPS(reg.Y1, Mem{Base: dst})
		ADDQ(U8(32), src)
		ADDQ(U8(32), dst)
	})
	VZEROUPPER()
	RET()
}

// normalizeS emits normalizeS: y = (x − m)·a + b on float32, eight at a
// time, with the operations and roundings of the Go expression (no FMA).
func normalizeS() {
	TEXT("normalizeS", NOSPLIT, "func(x, y []float32, m, a, b float32)")
	Pragma("noescape")
	Doc(
		"normalizeS sets y[i] = (x[i]−m)·a + b for i < len(x), rounding after each operation.",
		"The caller checks that len(x) is a multiple of 8 and that y is at least as long.",
	)
	n := Load(Param("x").Len(), reg.RCX)
	x := Load(Param("x").Base(), reg.RSI)
	y := Load(Param("y").Base(), reg.RDI)
	VBROADCASTSS(addr(Param("m")), reg.Y1)
	VBROADCASTSS(addr(Param("a")), reg.Y2)
	VBROADCASTSS(addr(Param("b")), reg.Y3)
	countedLoop(n, 3, func() {
		VMOVUPS(Mem{Base: x}, reg.Y0)
		VSUBPS(reg.Y1, reg.Y0, reg.Y0)
		VMULPS(reg.Y2, reg.Y0, reg.Y0)
		VADDPS(reg.Y3, reg.Y0, reg.Y0)
		VMOVUPS(reg.Y0, Mem{Base: y})
		ADDQ(U8(32), x)
		ADDQ(U8(32), y)
	})
	VZEROUPPER()
	RET()
}

// normalizeGradS emits normalizeGradS: dx = dy·a + (x − m)·c + d on
// float32, eight at a time, in the order and with the roundings of the Go
// expression (no FMA).
func normalizeGradS() {
	TEXT("normalizeGradS", NOSPLIT, "func(dy, x, dx []float32, m, a, c, d float32)")
	Pragma("noescape")
	Doc(
		"normalizeGradS sets dx[i] = (dy[i]·a + (x[i]−m)·c) + d for i < len(dy), rounding after each operation.",
		"The caller checks that len(dy) is a multiple of 8 and that x and dx are at least as long.",
	)
	n := Load(Param("dy").Len(), reg.RCX)
	dy := Load(Param("dy").Base(), reg.RSI)
	x := Load(Param("x").Base(), reg.RDX)
	dx := Load(Param("dx").Base(), reg.RDI)
	VBROADCASTSS(addr(Param("m")), reg.Y1)
	VBROADCASTSS(addr(Param("a")), reg.Y2)
	VBROADCASTSS(addr(Param("c")), reg.Y3)
	VBROADCASTSS(addr(Param("d")), reg.Y4)
	countedLoop(n, 3, func() {
		VMOVUPS(Mem{Base: dy}, reg.Y0)
		VMULPS(reg.Y2, reg.Y0, reg.Y0)
		VMOVUPS(Mem{Base: x}, reg.Y5)
		VSUBPS(reg.Y1, reg.Y5, reg.Y5)
		VMULPS(reg.Y3, reg.Y5, reg.Y5)
		VADDPS(reg.Y5, reg.Y0, reg.Y0)
		VADDPS(reg.Y4, reg.Y0, reg.Y0)
		VMOVUPS(reg.Y0, Mem{Base: dx})
		ADDQ(U8(32), dy)
		ADDQ(U8(32), x)
		ADDQ(U8(32), dx)
	})
	VZEROUPPER()
	RET()
}

// reluS emits reluS (AVX2): y = max(x, 0) on float32, eight at a time,
// with the instructions the Go compiler emits for max(x, 0) (negate, two
// MINs, OR, negate back), so that every result, a NaN's bits included, is
// the Go expression's.
func reluS() {
	TEXT("reluS", NOSPLIT, "func(x, y []float32)")
	Pragma("noescape")
	Doc(
		"reluS sets y[i] = max(x[i], 0) for i < len(x), bit for bit as Go computes it (AVX2).",
		"The caller checks that len(x) is a multiple of 8 and that y is at least as long.",
	)
	n := Load(Param("x").Len(), reg.RCX)
	x := Load(Param("x").Base(), reg.RSI)
	y := Load(Param("y").Base(), reg.RDI)
	// Y15: the sign bit in every lane, which is also −0.
	MOVL(U32(0x80000000), reg.EAX)
	MOVD(reg.EAX, reg.X15)
	VBROADCASTSS(reg.X15, reg.Y15)
	countedLoop(n, 3, func() {
		VXORPS(Mem{Base: x}, reg.Y15, reg.Y0)   // −x
		negMax(reg.Y0, reg.Y15, reg.Y1, reg.Y2) // −max(x, 0)
		VXORPS(reg.Y15, reg.Y2, reg.Y2)
		VMOVUPS(reg.Y2, Mem{Base: y})
		ADDQ(U8(32), x)
		ADDQ(U8(32), y)
	})
	VZEROUPPER()
	RET()
}

// reluGradS emits reluGradS (AVX2): dx = dy where y, read as an int32, is
// positive (a positive float, not +0, not negative), else +0.
func reluGradS() {
	TEXT("reluGradS", NOSPLIT, "func(y, dy, dx []float32)")
	Pragma("noescape")
	Doc(
		"reluGradS sets dx[i] = dy[i] where the bits of y[i] are a positive int32, else +0, for i < len(y) (AVX2).",
		"The caller checks that len(y) is a multiple of 8 and that dy and dx are at least as long.",
	)
	n := Load(Param("y").Len(), reg.RCX)
	y := Load(Param("y").Base(), reg.RSI)
	dy := Load(Param("dy").Base(), reg.RDX)
	dx := Load(Param("dx").Base(), reg.RDI)
	VPXOR(reg.Y15, reg.Y15, reg.Y15)
	countedLoop(n, 3, func() {
		VMOVDQU(Mem{Base: y}, reg.Y0)
		VPCMPGTD(reg.Y15, reg.Y0, reg.Y0)
		VPAND(Mem{Base: dy}, reg.Y0, reg.Y0)
		VMOVDQU(reg.Y0, Mem{Base: dx})
		ADDQ(U8(32), y)
		ADDQ(U8(32), dy)
		ADDQ(U8(32), dx)
	})
	VZEROUPPER()
	RET()
}

// sumsS emits shiftedSumsS (grad false) or gradSumsS (grad true): the
// four-lane float64 accumulations of package norm's shiftedSums and
// gradSums over float32 input, lane j taking the elements 4i+j, with the
// operations and roundings of the Go loop (no FMA), so that the lanes
// hold exactly what its four scalar accumulators would.
func sumsS(grad bool) {
	if grad {
		TEXT("gradSumsS", NOSPLIT, "func(dy, x []float32, m float64, a, b *[4]float64)")
		Doc(
			"gradSumsS sets a[j] = Σ float64(dy[4i+j]) and b[j] = Σ float64(dy[4i+j])·(float64(x[4i+j])−m), in order of i, rounding after each operation (AVX).",
			"The caller checks that len(dy) is a multiple of 4 and that x is at least as long.",
		)
	} else {
		TEXT("shiftedSumsS", NOSPLIT, "func(x []float32, k float64, a, b *[4]float64)")
		Doc(
			"shiftedSumsS sets a[j] = Σ d and b[j] = Σ d·d, d = float64(x[4i+j])−k, in order of i, rounding after each operation (AVX).",
			"The caller checks that len(x) is a multiple of 4.",
		)
	}
	Pragma("noescape")
	var n, p, q reg.Register
	var shift Mem
	if grad {
		n = Load(Param("dy").Len(), reg.RCX)
		p = Load(Param("dy").Base(), reg.RSI)
		q = Load(Param("x").Base(), reg.RDX)
		shift = addr(Param("m"))
	} else {
		n = Load(Param("x").Len(), reg.RCX)
		p = Load(Param("x").Base(), reg.RSI)
		shift = addr(Param("k"))
	}
	VBROADCASTSD(shift, reg.Y15)
	VXORPD(reg.Y0, reg.Y0, reg.Y0) // a
	VXORPD(reg.Y1, reg.Y1, reg.Y1) // b
	countedLoop(n, 2, func() {
		VCVTPS2PD(Mem{Base: p}, reg.Y2)
		if grad {
			VCVTPS2PD(Mem{Base: q}, reg.Y3)
			VSUBPD(reg.Y15, reg.Y3, reg.Y3) // x − m
			VMULPD(reg.Y3, reg.Y2, reg.Y3)  // g·(x − m)
			VADDPD(reg.Y2, reg.Y0, reg.Y0)
			VADDPD(reg.Y3, reg.Y1, reg.Y1)
			ADDQ(U8(16), q)
		} else {
			VSUBPD(reg.Y15, reg.Y2, reg.Y2) // d
			VMULPD(reg.Y2, reg.Y2, reg.Y3)  // d·d
			VADDPD(reg.Y2, reg.Y0, reg.Y0)
			VADDPD(reg.Y3, reg.Y1, reg.Y1)
		}
		ADDQ(U8(16), p)
	})
	pa := Load(Param("a"), reg.RAX)
	pb := Load(Param("b"), reg.RBX)
	VMOVUPD(reg.Y0, Mem{Base: pa})
	VMOVUPD(reg.Y1, Mem{Base: pb})
	VZEROUPPER()
	RET()
}

// sum4S emits sum4S: the four float32 chains of package convpool's sum,
// lane j of one XMM register taking the elements 4i+j, in order of i.
func sum4S() {
	TEXT("sum4S", NOSPLIT, "func(x []float32, acc *[4]float32)")
	Pragma("noescape")
	Doc(
		"sum4S sets acc[j] = Σ x[4i+j], summed in float32 in order of i (AVX).",
		"The caller checks that len(x) is a multiple of 4.",
	)
	n := Load(Param("x").Len(), reg.RCX)
	x := Load(Param("x").Base(), reg.RSI)
	VXORPS(reg.X0, reg.X0, reg.X0)
	countedLoop(n, 2, func() {
		VADDPS(Mem{Base: x}, reg.X0, reg.X0)
		ADDQ(U8(16), x)
	})
	p := Load(Param("acc"), reg.RAX)
	VMOVUPS(reg.X0, Mem{Base: p})
	RET()
}

// maxPairsS emits maxPairsS (AVX2): y[i] = max(max(r0[2i], r0[2i+1]),
// max(r1[2i], r1[2i+1])) with Go's max, eight outputs at a time. Go
// computes max(a, b) as −(min(t, −a) | t), t = min(−a, −b) (MINSS
// returning its second operand for a NaN or two zeros); the kernel does
// the same per lane, staying negated between the inner and outer max.
func maxPairsS() {
	TEXT("maxPairsS", NOSPLIT, "func(r0, r1, y []float32)")
	Pragma("noescape")
	Doc(
		"maxPairsS sets y[i] = max(max(r0[2i], r0[2i+1]), max(r1[2i], r1[2i+1])) for i < len(y), bit for bit as Go computes it (AVX2).",
		"The caller checks that len(y) is a multiple of 8 and that r0 and r1 hold 2·len(y) values.",
	)
	n := Load(Param("y").Len(), reg.RCX)
	r0 := Load(Param("r0").Base(), reg.RSI)
	r1 := Load(Param("r1").Base(), reg.RDX)
	y := Load(Param("y").Base(), reg.RDI)
	MOVL(U32(0x80000000), reg.EAX)
	MOVD(reg.EAX, reg.X15)
	VBROADCASTSS(reg.X15, reg.Y15)
	countedLoop(n, 3, func() {
		VXORPS(Mem{Base: r0}, reg.Y15, reg.Y0)
		VXORPS(Mem{Base: r0, Disp: 32}, reg.Y15, reg.Y1)
		VXORPS(Mem{Base: r1}, reg.Y15, reg.Y2)
		VXORPS(Mem{Base: r1, Disp: 32}, reg.Y15, reg.Y3)
		// Even and odd elements; per 128-bit lane the order is [lo 0 2, hi 0 2].
		VSHUFPS(U8(0x88), reg.Y1, reg.Y0, reg.Y4)
		VSHUFPS(U8(0xDD), reg.Y1, reg.Y0, reg.Y5)
		VSHUFPS(U8(0x88), reg.Y3, reg.Y2, reg.Y6)
		VSHUFPS(U8(0xDD), reg.Y3, reg.Y2, reg.Y7)
		negMax(reg.Y4, reg.Y5, reg.Y8, reg.Y9)   // −max(r0 pair)
		negMax(reg.Y6, reg.Y7, reg.Y10, reg.Y11) // −max(r1 pair)
		negMax(reg.Y9, reg.Y11, reg.Y12, reg.Y13)
		VXORPS(reg.Y15, reg.Y13, reg.Y13)
		VPERMPD(U8(0xD8), reg.Y13, reg.Y13) // 64-bit blocks 0 2 1 3: outputs in order
		VMOVUPS(reg.Y13, Mem{Base: y})
		ADDQ(U8(64), r0)
		ADDQ(U8(64), r1)
		ADDQ(U8(32), y)
	})
	VZEROUPPER()
	RET()
}

// maxPairsGradS emits maxPairsGradS (AVX2), the gradient of maxPairsS:
// each of the four inputs of output i gets dy[i] where it equals y[i] (an
// ordered compare, as Go's ==), else +0.
func maxPairsGradS() {
	TEXT("maxPairsGradS", NOSPLIT, "func(x0, x1, y, dy, d0, d1 []float32)")
	Pragma("noescape")
	Doc(
		"maxPairsGradS sets d0[2i+k] = dy[i] where x0[2i+k] == y[i], else +0, and d1 likewise from x1, for i < len(y), k < 2 (AVX2).",
		"The caller checks that len(y) is a multiple of 8, dy at least as long, and x0, x1, d0 and d1 hold 2·len(y) values.",
	)
	n := Load(Param("y").Len(), reg.RCX)
	x0 := Load(Param("x0").Base(), reg.RSI)
	x1 := Load(Param("x1").Base(), reg.RDX)
	y := Load(Param("y").Base(), reg.R8)
	dy := Load(Param("dy").Base(), reg.R9)
	d0 := Load(Param("d0").Base(), reg.RDI)
	d1 := Load(Param("d1").Base(), reg.R10)
	countedLoop(n, 3, func() {
		// Each of y and dy twice over: [v0 v0 v1 v1 v2 v2 v3 v3], [v4 v4 … v7 v7].
		spread := func(src Mem, lo, hi, t0, t1 reg.VecPhysical) {
			VMOVUPS(src, t0)
			VUNPCKLPS(t0, t0, t1) // [0 0 1 1 | 4 4 5 5]
			VUNPCKHPS(t0, t0, t0) // [2 2 3 3 | 6 6 7 7]
			VPERM2F128(U8(0x20), t0, t1, lo)
			VPERM2F128(U8(0x31), t0, t1, hi)
		}
		spread(Mem{Base: y}, reg.Y0, reg.Y1, reg.Y8, reg.Y9)
		spread(Mem{Base: dy}, reg.Y2, reg.Y3, reg.Y8, reg.Y9)
		for i, p := range []struct {
			src, dst reg.Register
			disp     int
		}{{x0, d0, 0}, {x0, d0, 32}, {x1, d1, 0}, {x1, d1, 32}} {
			yv, gv := reg.Y0, reg.Y2
			if p.disp != 0 {
				yv, gv = reg.Y1, reg.Y3
			}
			r := []reg.VecPhysical{reg.Y4, reg.Y5, reg.Y6, reg.Y7}[i]
			VCMPPS(U8(0), Mem{Base: p.src, Disp: p.disp}, yv, r) // EQ_OQ: x == y
			VANDPS(gv, r, r)
			VMOVUPS(r, Mem{Base: p.dst, Disp: p.disp})
		}
		ADDQ(U8(64), x0)
		ADDQ(U8(64), x1)
		ADDQ(U8(64), d0)
		ADDQ(U8(64), d1)
		ADDQ(U8(32), y)
		ADDQ(U8(32), dy)
	})
	VZEROUPPER()
	RET()
}
