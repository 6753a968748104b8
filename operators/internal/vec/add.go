package vec

//go:generate go run -C ../../kernels/gemm/asmgen . -out ../../../internal/vec/add_amd64.s -stubs ../../../internal/vec/add_amd64.go -pkg vec

// Add sets dst[i] += src[i] for every i < len(dst); src must be at least as
// long as dst.
func Add[T float32 | float64](dst, src []T) {
	src = src[:len(dst)]
	if hasAVX512 {
		switch d := any(dst).(type) {
		case []float32:
			add512S(d, any(src).([]float32))
			return
		case []float64:
			add512D(d, any(src).([]float64))
			return
		}
	}
	if hasAVX {
		switch d := any(dst).(type) {
		case []float32:
			addS(d, any(src).([]float32))
			return
		case []float64:
			addD(d, any(src).([]float64))
			return
		}
	}
	addGo(dst, src)
}

// addGo is Add in plain Go, four elements a step.
func addGo[T float32 | float64](dst, src []T) {
	src = src[:len(dst)]
	i := 0
	for ; i+4 <= len(dst); i += 4 {
		d, s := (*[4]T)(dst[i:]), (*[4]T)(src[i:])
		d[0] += s[0]
		d[1] += s[1]
		d[2] += s[2]
		d[3] += s[3]
	}
	for ; i < len(dst); i++ {
		dst[i] += src[i]
	}
}

// AddScaled sets dst[i] += a·src[i] for every i < len(dst), the product
// rounded to T before the addition (no fused multiply-add, so that the
// AVX, AVX-512 and Go paths agree bit for bit); src must be at least as
// long as dst.
func AddScaled[T float32 | float64](dst, src []T, a T) {
	src = src[:len(dst)]
	if d, ok := any(dst).([]float32); ok {
		s, a := any(src).([]float32), float32(a)
		switch {
		case hasAVX512:
			addScaled512S(d, s, a)
			return
		case hasAVX:
			n := len(d) &^ 7
			addScaledS(d[:n], s, a)
			addScaledGo(d[n:], s[n:], a)
			return
		}
	}
	addScaledGo(dst, src, a)
}

// addScaledGo is AddScaled in Go.
func addScaledGo[T float32 | float64](dst, src []T, a T) {
	src = src[:len(dst)]
	for i, v := range src {
		dst[i] += T(a * v)
	}
}
