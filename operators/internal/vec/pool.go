package vec

import "math"

// MaxPairs32 sets y[i] = max(max(r0[2i], r0[2i+1]), max(r1[2i], r1[2i+1]))
// for every i < len(y), bit for bit as Go's max computes it: one output row
// of a 2×2, stride-2 max pool from its two input rows (at least 2·len(y)
// values each). The AVX2 kernel does eight outputs at a time.
func MaxPairs32(r0, r1, y []float32) {
	r0, r1 = r0[:2*len(y)], r1[:2*len(y)]
	n := 0
	if hasAVX2 {
		n = len(y) &^ 7
		maxPairsS(r0, r1, y[:n])
	}
	for i := n; i < len(y); i++ {
		y[i] = max(max(r0[2*i], r0[2*i+1]), max(r1[2*i], r1[2*i+1]))
	}
}

// MaxPairsGrad32 is the gradient of MaxPairs32: d0[2i+k] = dy[i] where
// x0[2i+k] == y[i] and +0 elsewhere, k < 2, and d1 likewise from x1 (every
// input equal to its window's maximum gets the gradient).
func MaxPairsGrad32(x0, x1, y, dy, d0, d1 []float32) {
	m := 2 * len(y)
	x0, x1, dy, d0, d1 = x0[:m], x1[:m], dy[:len(y)], d0[:m], d1[:m]
	n := 0
	if hasAVX2 {
		n = len(y) &^ 7
		maxPairsGradS(x0, x1, y[:n], dy, d0, d1)
	}
	for i := n; i < len(y); i++ {
		g, v := math.Float32bits(dy[i]), y[i]
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
