package convpool

import (
	"math"
	"testing"
)

// TestAVX512WinoKernelsMatchGo checks the AVX-512 transforms of the input,
// the output and the output's gradient (sixteen tiles side by side) bit for
// bit against the Go code for one tile, on data with
// signed zeros, infinities and NaNs among normal values, with strides that
// are not multiples of sixteen. The NaNs all have one bit pattern: where
// two NaNs meet in an addition the result is the first operand's, and the
// Go compiler may put either operand of a commutative operation first (it
// does in winoInputTile, where the AVX kernels of eight can keep the other
// NaN).
func TestAVX512WinoKernelsMatchGo(t *testing.T) {
	if !hasWinoAVX512 {
		t.Skip("this CPU has no AVX-512F (or GODEBUG=cpu.avx512f=off), or the build has no assembly: the AVX-512 transforms cannot run here")
	}
	r := newRand(512)
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), math.Float32frombits(0x7fc12345), math.SmallestNonzeroFloat32}
	rnd := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.NormFloat64())
			if r.IntN(8) == 0 {
				s[i] = special[r.IntN(len(special))]
			}
		}
		return s
	}
	same := func(what string, got, want []float32) {
		t.Helper()
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s: [%d] = %#x, want %#x (Go, one tile at a time)", what, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
			}
		}
	}
	const ld, vl = 21, 37
	e, o := rnd(3*ld+17), rnd(3*ld+17)
	got, want := make([]float32, 15*vl+16), make([]float32, 15*vl+16)
	winoIn16S(e, o, ld, got, vl)
	for j := range 16 {
		winoInputTile(e[j:], o[j:], ld, want[j:], vl)
	}
	same("winoIn16S", got, want)

	m := rnd(15*vl + 16)
	const w = 35 // two rows of 32 outputs in a plane 35 wide
	p := &winoPlan{outW: w, outH: 2}
	y, wantY := rnd(w+32), make([]float32, w+32)
	copy(wantY, y)
	winoOut16S(m, vl, -0.75, y, w)
	for j := range 16 {
		winoOutputTile(p, m[j:], vl, -0.75, wantY, 2*j, 0)
	}
	same("winoOut16S", y, wantY)

	plane := rnd(w + 32)
	plane[3] = float32(math.Copysign(0, -1)) // −0 and +0 negate to different bits
	plane[w+5] = 0
	clear(got)
	clear(want)
	winoGrad16S(plane, w, got, vl)
	for j := range 16 {
		winoGradTile(p, plane, 2*j, 0, want[j:], vl)
	}
	same("winoGrad16S", got, want)
}
