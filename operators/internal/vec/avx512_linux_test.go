package vec

import (
	"math"
	"math/rand/v2"
	"syscall"
	"testing"
	"unsafe"
)

// TestAVX512TailsAtPageEnd runs the AVX-512 kernels on slices that end
// where a page without access begins: the masked tail loads 64 bytes'
// worth of lanes, and only the lanes under the mask may be touched (a load
// of the rest would fault here). Results are checked against the Go loops.
func TestAVX512TailsAtPageEnd(t *testing.T) {
	if !hasAVX512 {
		t.Skip("this CPU has no AVX-512F (or GODEBUG=cpu.avx512f=off): no masked tails to check")
	}
	page := syscall.Getpagesize()
	// pageEnd returns a page's worth of float32 followed by a page that
	// faults when touched.
	pageEnd := func() []float32 {
		m, err := syscall.Mmap(-1, 0, 2*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			t.Skipf("mmap: %v", err)
		}
		t.Cleanup(func() { syscall.Munmap(m) })
		if err := syscall.Mprotect(m[page:], syscall.PROT_NONE); err != nil {
			t.Skipf("mprotect: %v", err)
		}
		return unsafe.Slice((*float32)(unsafe.Pointer(&m[0])), page/4)
	}
	p, q, o, o2, o3 := pageEnd(), pageEnd(), pageEnd(), pageEnd(), pageEnd()
	r := rand.New(rand.NewPCG(4096, 512))
	// Parameters known only at run time: with constants the compiler may
	// turn the Go loop's x·(−1) into −x, which flips a NaN's sign where
	// MULSS keeps it.
	var c [4]float32
	for i := range c {
		c[i] = float32(r.NormFloat64())
	}
	c[2] = -float32(1 + r.IntN(1)) // −1, which a multiplication keeps the NaN sign of
	for n := 0; n <= 33; n++ {
		x, dy, out := p[len(p)-n:], q[len(q)-n:], o[len(o)-n:]
		specials(r, x, 0x10)
		specials(r, dy, 0x20)
		want := make([]float32, n)

		reluGo(x, want)
		Relu32(x, out)
		sameBits(t, "Relu32 at page end", n, 0, out, want)

		reluGradGo(x, dy, want)
		ReluGrad32(x, dy, out)
		sameBits(t, "ReluGrad32 at page end", n, 0, out, want)

		normalizeGo(x, want, c[0], c[1], c[2])
		Normalize(x, out, c[0], c[1], c[2])
		sameBits(t, "Normalize at page end", n, 0, out, want)

		normalizeGradGo(dy, x, want, c[0], c[1], c[2], c[3])
		NormalizeGrad(dy, x, out, c[0], c[1], c[2], c[3])
		sameBits(t, "NormalizeGrad at page end", n, 0, out, want)

		r0, r1 := p[len(p)-2*n:], q[len(q)-2*n:]
		specials(r, r0, 0x10)
		specials(r, r1, 0x20)
		maxPairsGo(r0, r1, want)
		MaxPairs32(r0, r1, out)
		sameBits(t, "MaxPairs32 at page end", n, 0, out, want)

		y := append([]float32(nil), want...)
		d0, d1 := o2[len(o2)-2*n:], o3[len(o3)-2*n:]
		w0, w1 := make([]float32, 2*n), make([]float32, 2*n)
		maxPairsGradGo(r0, r1, y, out, w0, w1)
		MaxPairsGrad32(r0, r1, y, out, d0, d1)
		sameBits(t, "MaxPairsGrad32 d0 at page end", n, 0, d0, w0)
		sameBits(t, "MaxPairsGrad32 d1 at page end", n, 0, d1, w1)

		x, dy = p[len(p)-n:], q[len(q)-n:]
		copy(want, x)
		addGo(want, dy)
		Add(x, dy)
		sameBits(t, "Add at page end", n, 0, x, want)

		x64 := unsafe.Slice((*float64)(unsafe.Pointer(&p[0])), len(p)/2)
		d64 := unsafe.Slice((*float64)(unsafe.Pointer(&q[0])), len(q)/2)
		x64, d64 = x64[len(x64)-n/2:], d64[len(d64)-n/2:]
		w64 := append([]float64(nil), x64...)
		addGo(w64, d64)
		Add(x64, d64)
		for i := range w64 {
			if math.Float64bits(x64[i]) != math.Float64bits(w64[i]) {
				t.Fatalf("Add float64 at page end n=%d: [%d] = %#x, want %#x", n/2, i, math.Float64bits(x64[i]), math.Float64bits(w64[i]))
			}
		}
	}
}
