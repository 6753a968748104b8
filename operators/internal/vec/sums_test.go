package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSumsMatchScalar checks ShiftedSums and GradSums on float32 (the AVX
// kernels) bit for bit against the scalar loops, written out here.
func TestSumsMatchScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 3, 4, 5, 8, 63, 64, 1000, 1027} {
		x, dy := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], dy[i] = float32(r.NormFloat64()*3+1), float32(r.NormFloat64())
		}
		k := r.NormFloat64()
		var a0, a1, a2, a3, b0, b1, b2, b3 float64
		i := 0
		for ; i+4 <= n; i += 4 {
			d0, d1, d2, d3 := float64(x[i])-k, float64(x[i+1])-k, float64(x[i+2])-k, float64(x[i+3])-k
			a0 += d0
			a1 += d1
			a2 += d2
			a3 += d3
			b0 += float64(d0 * d0)
			b1 += float64(d1 * d1)
			b2 += float64(d2 * d2)
			b3 += float64(d3 * d3)
		}
		for ; i < n; i++ {
			d := float64(x[i]) - k
			a0 += d
			b0 += float64(d * d)
		}
		s, s2 := ShiftedSums(x, k)
		if math.Float64bits(s) != math.Float64bits((a0+a1)+(a2+a3)) || math.Float64bits(s2) != math.Float64bits((b0+b1)+(b2+b3)) {
			t.Fatalf("n=%d: ShiftedSums = %v, %v; want %v, %v", n, s, s2, (a0+a1)+(a2+a3), (b0+b1)+(b2+b3))
		}
		a0, a1, a2, a3, b0, b1, b2, b3 = 0, 0, 0, 0, 0, 0, 0, 0
		i = 0
		for ; i+4 <= n; i += 4 {
			g0, g1, g2, g3 := float64(dy[i]), float64(dy[i+1]), float64(dy[i+2]), float64(dy[i+3])
			a0 += g0
			a1 += g1
			a2 += g2
			a3 += g3
			b0 += float64(g0 * (float64(x[i]) - k))
			b1 += float64(g1 * (float64(x[i+1]) - k))
			b2 += float64(g2 * (float64(x[i+2]) - k))
			b3 += float64(g3 * (float64(x[i+3]) - k))
		}
		for ; i < n; i++ {
			g := float64(dy[i])
			a0 += g
			b0 += float64(g * (float64(x[i]) - k))
		}
		g, gx := GradSums(dy, x, k)
		if math.Float64bits(g) != math.Float64bits((a0+a1)+(a2+a3)) || math.Float64bits(gx) != math.Float64bits((b0+b1)+(b2+b3)) {
			t.Fatalf("n=%d: GradSums = %v, %v; want %v, %v", n, g, gx, (a0+a1)+(a2+a3), (b0+b1)+(b2+b3))
		}
	}
}

// TestSum32MatchesScalar checks Sum on float32 (the AVX kernel) bit for
// bit against the scalar loop, written out here.
func TestSum32MatchesScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 3, 4, 5, 8, 63, 64, 1000, 1027} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		var s0, s1, s2, s3 float32
		i := 0
		for ; i+4 <= n; i += 4 {
			s0 += x[i]
			s1 += x[i+1]
			s2 += x[i+2]
			s3 += x[i+3]
		}
		for ; i < n; i++ {
			s0 += x[i]
		}
		if got, want := Sum(x), (s0+s1)+(s2+s3); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("n=%d: Sum = %v, want %v", n, got, want)
		}
	}
}
