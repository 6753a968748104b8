package vec

import (
	"math/rand/v2"
	"testing"
)

// TestNormalizeMatchesGo checks that the kernels are bit-identical to the
// Go expressions, for lengths around the vector width.
func TestNormalizeMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 64, 1000, 1027} {
		x, dy := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], dy[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		m, a, b, c := float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64())
		y := make([]float32, n+1)
		y[n] = 42
		Normalize(x, y[:n], m, a, b)
		dx := make([]float32, n+1)
		dx[n] = 42
		NormalizeGrad(dy, x, dx[:n], m, a, c, b)
		for i := range x {
			if want := float32((x[i]-m)*a) + b; y[i] != want {
				t.Fatalf("n=%d: Normalize y[%d] = %v, want %v", n, i, y[i], want)
			}
			if want := float32(float32(dy[i]*a)+float32((x[i]-m)*c)) + b; dx[i] != want {
				t.Fatalf("n=%d: NormalizeGrad dx[%d] = %v, want %v", n, i, dx[i], want)
			}
		}
		if y[n] != 42 || dx[n] != 42 {
			t.Fatalf("n=%d: wrote past the slice", n)
		}
	}
}
