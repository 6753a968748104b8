package vec

import "math"

// Relu32 sets y[i] = max(x[i], 0) for every i < len(x), bit for bit as
// Go's max computes it; y must be at least as long as x and may be x. The
// AVX2 kernel does eight at a time, the AVX-512 one sixteen: the Go loop
// ran well below the speed of a copy.
func Relu32(x, y []float32) {
	y = y[:len(x)]
	if hasAVX512 {
		relu512S(x, y)
		return
	}
	n := 0
	if hasAVX2 {
		n = len(x) &^ 7
		reluS(x[:n], y)
	}
	reluGo(x[n:], y[n:])
}

// reluGo is Relu32 in Go.
func reluGo(x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = max(v, 0)
	}
}

// ReluGrad32 sets dx to dy where y > 0 and to +0 elsewhere (also where y
// is a NaN with the sign bit set, or any zero); dy and dx must be at least
// as long as y. It masks the bits instead of branching: a ReLU's outputs
// are positive about half the time at random, and the mispredicted branch
// made ReluGradient a visible part of the convnet benchmark's step. With
// AVX2 it masks eight at a time, with AVX-512 sixteen.
func ReluGrad32(y, dy, dx []float32) {
	dy, dx = dy[:len(y)], dx[:len(y)]
	if hasAVX512 {
		reluGrad512S(y, dy, dx)
		return
	}
	n := 0
	if hasAVX2 {
		n = len(y) &^ 7
		reluGradS(y[:n], dy, dx)
	}
	reluGradGo(y[n:], dy[n:], dx[n:])
}

// reluGradGo is ReluGrad32 in Go.
func reluGradGo(y, dy, dx []float32) {
	dy, dx = dy[:len(y)], dx[:len(y)]
	for i, v := range y {
		b := int32(math.Float32bits(v))
		// All ones when b > 0 (a positive float), zero for +0 and for any
		// value with the sign bit set.
		keep := ^((b - 1) | b) >> 31
		dx[i] = math.Float32frombits(math.Float32bits(dy[i]) & uint32(keep))
	}
}
