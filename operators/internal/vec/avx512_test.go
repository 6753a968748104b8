package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAVX512MatchesGo checks the AVX-512 kernels (through the exported
// functions, which take them on such a CPU) bit for bit against the Go
// loops: lengths 0 to 70 (every tail under the mask, one to four whole
// registers and the four-register loop), starts off 64-byte alignment, NaNs
// with payloads, infinities, signed zeros and subnormals, and nothing
// written outside the slices.
func TestAVX512MatchesGo(t *testing.T) {
	if !hasAVX512 {
		t.Skip("this CPU has no AVX-512F (or GODEBUG=cpu.avx512f=off): the AVX-512 kernels cannot run here; TestAVX512OffMatchesGo checks the other paths")
	}
	checkKernelBits(t)
}

// specialBits are float32 values at the edges of the kernels' semantics:
// ±0, ±Inf, quiet and signalling NaNs of both signs with payloads, the
// smallest subnormals and the largest finite values.
var specialBits = []uint32{
	0, 0x80000000, 0x7f800000, 0xff800000,
	0x7fc00000, 0xffc00000, 0x7fc12345, 0xffc54321, 0x7f800001, 0xff800123,
	1, 0x80000001, 0x7f7fffff, 0xff7fffff, 0x3f800000, 0xbf800000,
}

// specials fills s with standard normal values, a third of them (at
// random) replaced by special values; tag is ORed into the special values'
// low bits so that NaNs from different inputs have different payloads.
func specials(r *rand.Rand, s []float32, tag uint32) {
	for i := range s {
		if r.IntN(3) == 0 {
			b := specialBits[r.IntN(len(specialBits))]
			if b&0x7f800000 == 0x7f800000 && b&0x7fffff != 0 {
				b |= tag
			}
			s[i] = math.Float32frombits(b)
			continue
		}
		s[i] = float32(r.NormFloat64())
	}
}

// sentinel marks the elements around a slice under test.
const sentinel = 0x7fbadbad

// guarded returns a slice of n elements at element offset off into a
// buffer whose other elements hold sentinel, and the buffer.
func guarded(n, off int) (s, buf []float32) {
	buf = make([]float32, off+n+17)
	for i := range buf {
		buf[i] = math.Float32frombits(sentinel)
	}
	return buf[off : off+n], buf
}

// intact fails the test if an element of buf outside [off, off+n) changed.
func intact(t *testing.T, what string, buf []float32, n, off int) {
	t.Helper()
	for i, v := range buf {
		if (i < off || i >= off+n) && math.Float32bits(v) != sentinel {
			t.Fatalf("%s n=%d off=%d: wrote element %d outside the slice", what, n, off, i-off)
		}
	}
}

// sameBits fails the test at the first element whose bits differ.
func sameBits(t *testing.T, what string, n, off int, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s n=%d off=%d: [%d] = %#x, want %#x (Go loop)", what, n, off, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
		}
	}
}

// checkKernelBits checks Add, AddScaled, Relu32, ReluGrad32, Normalize,
// NormalizeGrad, MaxPairs32 and MaxPairsGrad32, on whichever kernels this CPU selects, bit for bit
// against the Go loops (see TestAVX512MatchesGo).
func checkKernelBits(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 512))
	f := func(b uint32) float32 { return math.Float32frombits(b) }
	params := [][4]float32{
		{float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64())},
		{f(0x80000000), f(0x7fc0dead), f(0x7f800000), f(0xffc0beef)},
	}
	for n := 0; n <= 70; n++ {
		for _, off := range []int{0, 1, 3} {
			x, dy := make([]float32, n), make([]float32, n)
			specials(r, x, 0x10)
			specials(r, dy, 0x20)

			dst, buf := guarded(n, off)
			copy(dst, x)
			want := append([]float32(nil), x...)
			addGo(want, dy)
			Add(dst, dy)
			sameBits(t, "Add", n, off, dst, want)
			intact(t, "Add", buf, n, off)

			for _, p := range params {
				dst, buf := guarded(n, off)
				copy(dst, x)
				want := append([]float32(nil), x...)
				addScaledGo(want, dy, p[1])
				AddScaled(dst, dy, p[1])
				sameBits(t, "AddScaled", n, off, dst, want)
				intact(t, "AddScaled", buf, n, off)
			}

			x64, dy64 := make([]float64, n), make([]float64, n)
			for i := range x {
				// float64 NaNs with payloads, tagged by their input.
				x64[i], dy64[i] = float64(x[i]), float64(dy[i])
				if x[i] != x[i] {
					x64[i] = math.Float64frombits(math.Float64bits(x64[i]) | 0x10)
				}
				if dy[i] != dy[i] {
					dy64[i] = math.Float64frombits(math.Float64bits(dy64[i]) | 0x20)
				}
			}
			want64 := append([]float64(nil), x64...)
			addGo(want64, dy64)
			buf64 := make([]float64, off+n+9)
			for i := range buf64 {
				buf64[i] = math.Float64frombits(sentinel)
			}
			copy(buf64[off:], x64)
			Add(buf64[off:off+n], dy64)
			for i, v := range buf64 {
				w := uint64(sentinel)
				if i >= off && i < off+n {
					w = math.Float64bits(want64[i-off])
				}
				if math.Float64bits(v) != w {
					t.Fatalf("Add float64 n=%d off=%d: [%d] = %#x, want %#x", n, off, i-off, math.Float64bits(v), w)
				}
			}

			y, buf := guarded(n, off)
			want = make([]float32, n)
			reluGo(x, want)
			Relu32(x, y)
			sameBits(t, "Relu32", n, off, y, want)
			intact(t, "Relu32", buf, n, off)
			copy(y, x)
			Relu32(y, y)
			sameBits(t, "Relu32 in place", n, off, y, want)
			intact(t, "Relu32 in place", buf, n, off)

			dx, buf := guarded(n, off)
			reluGradGo(x, dy, want)
			ReluGrad32(x, dy, dx)
			sameBits(t, "ReluGrad32", n, off, dx, want)
			intact(t, "ReluGrad32", buf, n, off)

			checkPoolBits(t, r, n, off)

			for _, p := range params {
				y, buf := guarded(n, off)
				normalizeGo(x, want, p[0], p[1], p[2])
				Normalize(x, y, p[0], p[1], p[2])
				sameBits(t, "Normalize", n, off, y, want)
				intact(t, "Normalize", buf, n, off)

				dx, buf := guarded(n, off)
				normalizeGradGo(dy, x, want, p[0], p[1], p[2], p[3])
				NormalizeGrad(dy, x, dx, p[0], p[1], p[2], p[3])
				sameBits(t, "NormalizeGrad", n, off, dx, want)
				intact(t, "NormalizeGrad", buf, n, off)
			}
		}
	}
}

// checkPoolBits checks MaxPairs32 and MaxPairsGrad32 on n outputs at
// element offset off against the Go loops, with special values, ties
// (inputs repeated across and within the rows) and nothing written
// outside the slices.
func checkPoolBits(t *testing.T, r *rand.Rand, n, off int) {
	r0, r1 := make([]float32, 2*n), make([]float32, 2*n)
	specials(r, r0, 0x10)
	specials(r, r1, 0x20)
	for i := range r1 {
		switch r.IntN(6) {
		case 0:
			r1[i] = r0[i]
		case 1:
			r1[i] = r0[i^1]
		}
	}
	y, buf := guarded(n, off)
	want := make([]float32, n)
	maxPairsGo(r0, r1, want)
	MaxPairs32(r0, r1, y)
	sameBits(t, "MaxPairs32", n, off, y, want)
	intact(t, "MaxPairs32", buf, n, off)

	dy := make([]float32, n)
	specials(r, dy, 0x40)
	yv := append([]float32(nil), want...)
	for i := range yv {
		if r.IntN(8) == 0 {
			yv[i] = r0[2*i+1] // another tie, or none where it is a NaN
		}
	}
	d0, buf0 := guarded(2*n, off)
	d1, buf1 := guarded(2*n, off)
	w0, w1 := make([]float32, 2*n), make([]float32, 2*n)
	maxPairsGradGo(r0, r1, yv, dy, w0, w1)
	MaxPairsGrad32(r0, r1, yv, dy, d0, d1)
	sameBits(t, "MaxPairsGrad32 d0", n, off, d0, w0)
	sameBits(t, "MaxPairsGrad32 d1", n, off, d1, w1)
	intact(t, "MaxPairsGrad32 d0", buf0, 2*n, off)
	intact(t, "MaxPairsGrad32 d1", buf1, 2*n, off)
}
