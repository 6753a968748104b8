package vec

// Normalize sets y[i] = (x[i]−m)·a + b for every i < len(x); y must be at
// least as long as x. Each operation is rounded to T, as in the Go
// expression, so that the result does not depend on the kernel: the AVX
// kernel computes eight float32 at a time, the AVX-512 one sixteen, with
// exactly those operations (no fused multiply-add).
func Normalize[T float32 | float64](x, y []T, m, a, b T) {
	y = y[:len(x)]
	if xs, ok := any(x).([]float32); ok && hasAVX512 {
		normalize512S(xs, any(y).([]float32), float32(m), float32(a), float32(b))
		return
	}
	if hasAVX {
		if xs, ok := any(x).([]float32); ok {
			n := len(x) &^ 7
			normalizeS(xs[:n], any(y).([]float32), float32(m), float32(a), float32(b))
			x, y = x[n:], y[n:]
		}
	}
	normalizeGo(x, y, m, a, b)
}

// normalizeGo is Normalize in Go.
func normalizeGo[T float32 | float64](x, y []T, m, a, b T) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = T((v-m)*a) + b
	}
}

// NormalizeGrad sets dx[i] = dy[i]·a + (x[i]−m)·c + d for every
// i < len(dy), evaluated left to right with each operation rounded to T
// (see Normalize); x and dx must be at least as long as dy.
func NormalizeGrad[T float32 | float64](dy, x, dx []T, m, a, c, d T) {
	x, dx = x[:len(dy)], dx[:len(dy)]
	if ds, ok := any(dy).([]float32); ok && hasAVX512 {
		normalizeGrad512S(ds, any(x).([]float32), any(dx).([]float32), float32(m), float32(a), float32(c), float32(d))
		return
	}
	if hasAVX {
		if ds, ok := any(dy).([]float32); ok {
			n := len(dy) &^ 7
			normalizeGradS(ds[:n], any(x).([]float32), any(dx).([]float32), float32(m), float32(a), float32(c), float32(d))
			dy, x, dx = dy[n:], x[n:], dx[n:]
		}
	}
	normalizeGradGo(dy, x, dx, m, a, c, d)
}

// normalizeGradGo is NormalizeGrad in Go.
func normalizeGradGo[T float32 | float64](dy, x, dx []T, m, a, c, d T) {
	x, dx = x[:len(dy)], dx[:len(dy)]
	for i, g := range dy {
		dx[i] = T(T(g*a)+T((x[i]-m)*c)) + d
	}
}
