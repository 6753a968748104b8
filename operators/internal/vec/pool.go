package vec

import "math"

// MaxPairs32 sets y[i] = max(max(r0[2i], r0[2i+1]), max(r1[2i], r1[2i+1]))
// for every i < len(y), bit for bit as Go's max computes it: one output row
// of a 2×2, stride-2 max pool from its two input rows (at least 2·len(y)
// values each). The AVX2 kernel does eight outputs at a time, the AVX-512
// one sixteen.
func MaxPairs32(r0, r1, y []float32) {
	r0, r1 = r0[:2*len(y)], r1[:2*len(y)]
	if hasAVX512 {
		maxPairs512S(r0, r1, y)
		return
	}
	n := 0
	if hasAVX2 {
		n = len(y) &^ 7
		maxPairsS(r0, r1, y[:n])
	}
	maxPairsGo(r0[2*n:], r1[2*n:], y[n:])
}

// maxPairsGo is MaxPairs32 in Go.
func maxPairsGo(r0, r1, y []float32) {
	r0, r1 = r0[:2*len(y)], r1[:2*len(y)]
	for i := range y {
		y[i] = max(max(r0[2*i], r0[2*i+1]), max(r1[2*i], r1[2*i+1]))
	}
}

// MaxPairsGrad32 is the gradient of MaxPairs32: d0[2i+k] = dy[i] where
// x0[2i+k] == y[i] and +0 elsewhere, k < 2, and d1 likewise from x1 (every
// input equal to its window's maximum gets the gradient).
func MaxPairsGrad32(x0, x1, y, dy, d0, d1 []float32) {
	m := 2 * len(y)
	x0, x1, dy, d0, d1 = x0[:m], x1[:m], dy[:len(y)], d0[:m], d1[:m]
	if hasAVX512 {
		maxPairsGrad512S(x0, x1, y, dy, d0, d1)
		return
	}
	n := 0
	if hasAVX2 {
		n = len(y) &^ 7
		maxPairsGradS(x0, x1, y[:n], dy, d0, d1)
	}
	maxPairsGradGo(x0[2*n:], x1[2*n:], y[n:], dy[n:], d0[2*n:], d1[2*n:])
}

// maxPairsGradGo is MaxPairsGrad32 in Go.
func maxPairsGradGo(x0, x1, y, dy, d0, d1 []float32) {
	m := 2 * len(y)
	x0, x1, dy, d0, d1 = x0[:m], x1[:m], dy[:len(y)], d0[:m], d1[:m]
	for i, v := range y {
		g := math.Float32bits(dy[i])
		d0[2*i] = math.Float32frombits(g & eqMask(x0[2*i], v))
		d0[2*i+1] = math.Float32frombits(g & eqMask(x0[2*i+1], v))
		d1[2*i] = math.Float32frombits(g & eqMask(x1[2*i], v))
		d1[2*i+1] = math.Float32frombits(g & eqMask(x1[2*i+1], v))
	}
}

// eqMask returns all ones if a == b, else zero.
func eqMask(a, b float32) uint32 {
	var m uint32
	if a == b {
		m = ^uint32(0)
	}
	return m
}
