package nn

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
)

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// randVals returns n values uniform in [lo, hi).
func randVals(r *rand.Rand, n int, lo, hi float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = lo + (hi-lo)*r.Float64()
	}
	return v
}

// awayFromZero returns n values with |v| in [0.1, 1), random sign, so that
// kinks at 0 stay out of finite-difference reach.
func awayFromZero(r *rand.Rand, n int) []float64 {
	v := randVals(r, n, 0.1, 1)
	for i := range v {
		if r.IntN(2) == 0 {
			v[i] = -v[i]
		}
	}
	return v
}

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// tensorOf builds a tensor of dtype (Float32 or Float64) from values.
func tensorOf(dtype blob.DataType, vals []float64, shape ...int) *blob.Tensor {
	if dtype == blob.Float64 {
		return blob.MustFromSlice(slices.Clone(vals), shape...)
	}
	f := make([]float32, len(vals))
	for i, v := range vals {
		f[i] = float32(v)
	}
	return blob.MustFromSlice(f, shape...)
}

// rounded returns vals rounded to float32 when dtype is Float32, so that
// references see the same inputs as the operator.
func rounded(dtype blob.DataType, vals []float64) []float64 {
	if dtype == blob.Float64 {
		return vals
	}
	out := make([]float64, len(vals))
	for i, v := range vals {
		out[i] = float64(float32(v))
	}
	return out
}

// expectTensor checks got's type, shape and values (|got − want| ≤ tol·(1 + |want|)).
func expectTensor(t *testing.T, name string, got *blob.Tensor, dtype blob.DataType, shape []int, want []float64, tol float64) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: no tensor", name)
	}
	if got.DataType() != dtype {
		t.Fatalf("%s: type %v, want %v", name, got.DataType(), dtype)
	}
	if !slices.Equal(got.Dims(), shape) {
		t.Fatalf("%s: shape %v, want %v", name, got.Dims(), shape)
	}
	g := got.AsFloat64s()
	if len(g) != len(want) {
		t.Fatalf("%s: %d elements, want %d", name, len(g), len(want))
	}
	for i := range want {
		if math.IsNaN(g[i]) || math.Abs(g[i]-want[i]) > tol*(1+math.Abs(want[i])) {
			t.Fatalf("%s[%d] = %v, want %v", name, i, g[i], want[i])
		}
	}
}

func tolFor(dtype blob.DataType) float64 {
	if dtype == blob.Float64 {
		return 1e-12
	}
	return 2e-6
}

// refMatMul multiplies op(a)·op(b) naively, where a is stored ar×ac and b
// br×bc (row-major) and op transposes when asked.
func refMatMul(a []float64, ar, ac int, transA bool, b []float64, br, bc int, transB bool) (c []float64, m, n int) {
	at := func(i, p int) float64 {
		if transA {
			return a[p*ac+i]
		}
		return a[i*ac+p]
	}
	bt := func(p, j int) float64 {
		if transB {
			return b[j*bc+p]
		}
		return b[p*bc+j]
	}
	m, k := ar, ac
	if transA {
		m, k = ac, ar
	}
	n = bc
	if transB {
		n = br
	}
	c = make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < k; p++ {
				s += at(i, p) * bt(p, j)
			}
			c[i*n+j] = s
		}
	}
	return c, m, n
}

func argInt(name string, v int64) *netdef.Argument     { return netdef.ArgInt(name, v) }
func argFloat(name string, v float32) *netdef.Argument { return netdef.ArgFloat(name, v) }

func opDef(typ string, in, out []string, args ...*netdef.Argument) *netdef.OperatorDef {
	return netdef.NewOperator(typ, in, out, args...)
}
