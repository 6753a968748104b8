package vec

// ShiftedSums32 returns Σ d and Σ d² over d = float64(x[i]) − k, summed in
// float64 in four interleaved chains (element i in chain i mod 4, the
// elements past the last multiple of four in chain 0) that are then added
// as (c0 + c1) + (c2 + c3): package norm's shiftedSums for float32, which
// calls it. The AVX kernel keeps the four chains in the four lanes of one
// register, so the result is bit for bit the scalar loop's, about twice as
// fast: the scalar loop, a conversion, a subtraction, two additions and a
// multiplication per element, was bound by instruction throughput.
func ShiftedSums32(x []float32, k float64) (s, s2 float64) {
	var a, b [4]float64
	n := 0
	if hasAVX {
		n = len(x) &^ 3
		shiftedSumsS(x[:n], k, &a, &b)
	}
	for ; n+4 <= len(x); n += 4 {
		for j := range 4 {
			d := float64(x[n+j]) - k
			a[j] += d
			b[j] += d * d
		}
	}
	for ; n < len(x); n++ {
		d := float64(x[n]) - k
		a[0] += d
		b[0] += d * d
	}
	return (a[0] + a[1]) + (a[2] + a[3]), (b[0] + b[1]) + (b[2] + b[3])
}

// GradSums32 returns Σ float64(dy[i]) and Σ float64(dy[i])·(float64(x[i])−m)
// in the four chains of ShiftedSums32: package norm's gradSums for float32.
func GradSums32(dy, x []float32, m float64) (sdy, sdyx float64) {
	x = x[:len(dy)]
	var a, b [4]float64
	n := 0
	if hasAVX {
		n = len(dy) &^ 3
		gradSumsS(dy[:n], x, m, &a, &b)
	}
	for ; n+4 <= len(dy); n += 4 {
		for j := range 4 {
			g := float64(dy[n+j])
			a[j] += g
			b[j] += g * (float64(x[n+j]) - m)
		}
	}
	for ; n < len(dy); n++ {
		g := float64(dy[n])
		a[0] += g
		b[0] += g * (float64(x[n]) - m)
	}
	return (a[0] + a[1]) + (a[2] + a[3]), (b[0] + b[1]) + (b[2] + b[3])
}

// Sum32 returns the sum of x in float32 in four interleaved chains
// (element i in chain i mod 4, the elements past the last multiple of four
// in chain 0), added as (c0 + c1) + (c2 + c3): package convpool's sum for
// float32. The AVX kernel keeps the chains in the lanes of one register,
// bit for bit the scalar loop's result at about twice its speed.
func Sum32(x []float32) float32 {
	var a [4]float32
	n := 0
	if hasAVX {
		n = len(x) &^ 3
		sum4S(x[:n], &a)
	}
	for ; n+4 <= len(x); n += 4 {
		for j := range 4 {
			a[j] += x[n+j]
		}
	}
	for ; n < len(x); n++ {
		a[0] += x[n]
	}
	return (a[0] + a[1]) + (a[2] + a[3])
}
