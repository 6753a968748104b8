package vec

// ShiftedSums returns Σ d and Σ d² over d = float64(x[i]) − k, summed in
// float64 in four interleaved chains (element i in chain i mod 4, the
// elements past the last multiple of four in chain 0) that are then added
// as (c0 + c1) + (c2 + c3): package norm's statistics. For float32 the AVX
// kernel keeps the four chains in the four lanes of one register, so the
// result is bit for bit the scalar loop's, and faster: the scalar
// loop, a conversion, a subtraction, two additions and a multiplication per
// element, was bound by instruction throughput.
func ShiftedSums[T float32 | float64](x []T, k float64) (s, s2 float64) {
	var a, b [4]float64
	if hasAVX {
		if x32, ok := any(x).([]float32); ok {
			n := len(x) &^ 3
			shiftedSumsS(x32[:n], k, &a, &b)
			x = x[n:]
		}
	}
	a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
	b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		d0, d1, d2, d3 := float64(x[i])-k, float64(x[i+1])-k, float64(x[i+2])-k, float64(x[i+3])-k
		a0 += d0
		a1 += d1
		a2 += d2
		a3 += d3
		b0 += float64(d0 * d0)
		b1 += float64(d1 * d1)
		b2 += float64(d2 * d2)
		b3 += float64(d3 * d3)
	}
	for ; i < len(x); i++ {
		d := float64(x[i]) - k
		a0 += d
		b0 += float64(d * d)
	}
	return (a0 + a1) + (a2 + a3), (b0 + b1) + (b2 + b3)
}

// GradSums returns Σ float64(dy[i]) and Σ float64(dy[i])·(float64(x[i])−m)
// in the four chains of ShiftedSums (AVX kernel for float32); x must be at
// least as long as dy.
func GradSums[T float32 | float64](dy, x []T, m float64) (sdy, sdyx float64) {
	x = x[:len(dy)]
	var a, b [4]float64
	if hasAVX {
		if dy32, ok := any(dy).([]float32); ok {
			n := len(dy) &^ 3
			gradSumsS(dy32[:n], any(x).([]float32), m, &a, &b)
			dy, x = dy[n:], x[n:]
		}
	}
	a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
	b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
	i := 0
	for ; i+4 <= len(dy); i += 4 {
		g0, g1, g2, g3 := float64(dy[i]), float64(dy[i+1]), float64(dy[i+2]), float64(dy[i+3])
		a0 += g0
		a1 += g1
		a2 += g2
		a3 += g3
		b0 += float64(g0 * (float64(x[i]) - m))
		b1 += float64(g1 * (float64(x[i+1]) - m))
		b2 += float64(g2 * (float64(x[i+2]) - m))
		b3 += float64(g3 * (float64(x[i+3]) - m))
	}
	for ; i < len(dy); i++ {
		g := float64(dy[i])
		a0 += g
		b0 += float64(g * (float64(x[i]) - m))
	}
	return (a0 + a1) + (a2 + a3), (b0 + b1) + (b2 + b3)
}

// Sum returns the sum of x in T in four interleaved chains (element i in
// chain i mod 4, the elements past the last multiple of four in chain 0),
// added as (c0 + c1) + (c2 + c3): package convpool's bias-gradient plane
// sums. For float32 the AVX kernel keeps the chains in the lanes of one
// register, bit for bit the scalar loop's result, and faster.
func Sum[T float32 | float64](x []T) T {
	var a [4]float32
	if hasAVX {
		if x32, ok := any(x).([]float32); ok {
			n := len(x) &^ 3
			sum4S(x32[:n], &a)
			x = x[n:]
		}
	}
	s0, s1, s2, s3 := T(a[0]), T(a[1]), T(a[2]), T(a[3])
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := (*[4]T)(x[i:])
		s0 += v[0]
		s1 += v[1]
		s2 += v[2]
		s3 += v[3]
	}
	for ; i < len(x); i++ {
		s0 += x[i]
	}
	return (s0 + s1) + (s2 + s3)
}
