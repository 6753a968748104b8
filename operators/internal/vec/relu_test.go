package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestReluMatchesGo checks the kernels bit for bit against the Go
// expressions, special values included, in place too.
func TestReluMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), -float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32}
	for _, n := range []int{0, 1, 7, 8, 9, 16, 17, 100, 1027} {
		x, dy := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], dy[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
			if i%5 == 0 {
				x[i] = special[r.IntN(len(special))]
			}
		}
		y := make([]float32, n+1)
		y[n] = 42
		Relu32(x, y[:n])
		in := append([]float32(nil), x...)
		Relu32(in, in)
		dx := make([]float32, n+1)
		dx[n] = 42
		ReluGrad32(x, dy, dx[:n])
		for i, v := range x {
			if want := max(v, 0); math.Float32bits(y[i]) != math.Float32bits(want) || math.Float32bits(in[i]) != math.Float32bits(want) {
				t.Fatalf("n=%d: Relu32(%v) = %v (in place %v), want %v", n, v, y[i], in[i], want)
			}
			want := float32(0)
			if b := int32(math.Float32bits(v)); b > 0 {
				want = dy[i]
			}
			if math.Float32bits(dx[i]) != math.Float32bits(want) {
				t.Fatalf("n=%d: ReluGrad32 at y=%v: %v, want %v", n, v, dx[i], want)
			}
		}
		if y[n] != 42 || dx[n] != 42 {
			t.Fatalf("n=%d: wrote past the slice", n)
		}
	}
}
