package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMaxPairsMatchesGo checks MaxPairs32 and MaxPairsGrad32 bit for bit
// against the Go expressions, with special values and ties.
func TestMaxPairsMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), -float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1}
	for _, n := range []int{0, 1, 7, 8, 9, 16, 17, 40} {
		r0, r1 := make([]float32, 2*n), make([]float32, 2*n)
		for i := range r0 {
			r0[i], r1[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
			if r.IntN(4) == 0 {
				r0[i] = special[r.IntN(len(special))]
			}
			if r.IntN(4) == 0 {
				r1[i] = special[r.IntN(len(special))]
			}
		}
		y := make([]float32, n+1)
		y[n] = 42
		MaxPairs32(r0, r1, y[:n])
		dy := make([]float32, n)
		for i := range dy {
			dy[i] = float32(r.NormFloat64())
		}
		d0, d1 := make([]float32, 2*n+1), make([]float32, 2*n+1)
		d0[2*n], d1[2*n] = 42, 42
		MaxPairsGrad32(r0, r1, y[:n], dy, d0[:2*n], d1[:2*n])
		for i := range n {
			want := max(max(r0[2*i], r0[2*i+1]), max(r1[2*i], r1[2*i+1]))
			if math.Float32bits(y[i]) != math.Float32bits(want) {
				t.Fatalf("n=%d: y[%d] = %v (%08x), want %v (%08x) from %v %v %v %v", n, i, y[i], math.Float32bits(y[i]), want, math.Float32bits(want), r0[2*i], r0[2*i+1], r1[2*i], r1[2*i+1])
			}
			for k := range 2 {
				for _, c := range []struct{ x, d []float32 }{{r0, d0}, {r1, d1}} {
					w := float32(0)
					if c.x[2*i+k] == y[i] {
						w = dy[i]
					}
					if math.Float32bits(c.d[2*i+k]) != math.Float32bits(w) {
						t.Fatalf("n=%d: gradient at %d = %v, want %v", n, 2*i+k, c.d[2*i+k], w)
					}
				}
			}
		}
		if y[n] != 42 || d0[2*n] != 42 || d1[2*n] != 42 {
			t.Fatalf("n=%d: wrote past the slices", n)
		}
	}
}
