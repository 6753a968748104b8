package selftest

// addMasked stores a[i]+b[i] into dst[i] for each i whose bit is set in
// mask and leaves the other elements of dst as they are (VADDPS on ZMM
// registers, then a store under the opmask K1). It needs AVX512F.
//
//go:noescape
func addMasked(dst, a, b *[16]float32, mask uint16)
