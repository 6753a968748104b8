package vec

// Fill sets every element of d to v.
func Fill[T any](d []T, v T) {
	// A plain loop is fastest on short slices; on long ones, doubling the
	// filled prefix with copy (a memmove) is several times faster.
	n := min(len(d), 64)
	for i := range d[:n] {
		d[i] = v
	}
	for ; n < len(d); n *= 2 {
		copy(d[n:], d[:n])
	}
}
