package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestFCGradientBiasBits checks db of FCGradient bit for bit against the
// column sums of dY added row by row in T, the order the vector kernel
// keeps, with widths that leave every tail of its eight-wide steps.
func TestFCGradientBiasBits(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 7, 8, 9, 31, 45, 512} {
		const m, k = 37, 5
		dy := make([]float64, m*n)
		for i := range dy {
			dy[i] = r.NormFloat64()
		}
		in := []*blob.Tensor{optest.F32(make([]float64, m*k), m, k), optest.F32(make([]float64, n*k), n, k), optest.F32(dy, m, n)}
		out := optest.MustRunOp(t, opDef("FCGradient", []string{"X", "W", "dY"}, []string{"dW", "db"}), in...)
		got := blob.Data[float32](out[1])
		for j := 0; j < n; j++ {
			var want float32
			for i := 0; i < m; i++ {
				want += float32(dy[i*n+j])
			}
			if math.Float32bits(got[j]) != math.Float32bits(want) {
				t.Fatalf("n=%d: db[%d] = %v, want %v (bit for bit)", n, j, got[j], want)
			}
		}
	}
}
