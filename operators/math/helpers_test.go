package math

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

func op(typ string, in, out []string, args ...*netdef.Argument) *netdef.OperatorDef {
	return netdef.NewOperator(typ, in, out, args...)
}

func f32(shape []int, v ...float32) *blob.Tensor { return blob.MustFromSlice(v, shape...) }
func f64(shape []int, v ...float64) *blob.Tensor { return blob.MustFromSlice(v, shape...) }

// randT returns a float32 tensor with values uniform in [lo, hi).
func randT(r *rand.Rand, lo, hi float64, shape ...int) *blob.Tensor {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(lo + (hi-lo)*r.Float64())
	}
	return blob.MustFromSlice(v, shape...)
}

// randAway is randT with every |value| at least gap.
func randAway(r *rand.Rand, lo, hi, gap float64, shape ...int) *blob.Tensor {
	t := randT(r, lo, hi, shape...)
	for i, v := range blob.Data[float32](t) {
		for math.Abs(float64(v)) < gap {
			v = float32(lo + (hi-lo)*r.Float64())
		}
		blob.Data[float32](t)[i] = v
	}
	return t
}

func newRand() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

func runErr(t *testing.T, def *netdef.OperatorDef, in ...*blob.Tensor) error {
	t.Helper()
	_, err := optest.RunOp(def, in...)
	if err == nil {
		t.Fatalf("%s: want an error", def.GetType())
	}
	return err
}

// wantErrContains checks err mentions every fragment.
func wantErrContains(t *testing.T, err error, frags ...string) {
	t.Helper()
	for _, f := range frags {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not mention %q", err, f)
		}
	}
}

// checkTensor compares got with the wanted shape and values (tolerance
// relative to max(1, |want|)).
func checkTensor(t *testing.T, name string, got *blob.Tensor, shape []int, want []float64, tol float64) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: no tensor", name)
	}
	if !slices.Equal(got.Dims(), shape) {
		t.Fatalf("%s: shape %v, want %v", name, got.Dims(), shape)
	}
	g := got.AsFloat64s()
	if len(g) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(g), len(want))
	}
	for i := range want {
		if d := math.Abs(g[i] - want[i]); d > tol*math.Max(1, math.Abs(want[i])) || math.IsNaN(g[i]) != math.IsNaN(want[i]) {
			t.Fatalf("%s[%d] = %v, want %v (all: %v)", name, i, g[i], want[i], g)
		}
	}
}

// unravel returns the multi-index of flat index k in shape.
func unravel(k int, shape []int) []int {
	idx := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			idx[d] = k % shape[d]
			k /= shape[d]
		}
	}
	return idx
}

// flatIn returns the flat index in a (right-aligned, broadcast) operand
// of shape s of the output multi-index idx.
func flatIn(idx, s []int) int {
	off := len(idx) - len(s)
	f := 0
	for d, n := range s {
		i := idx[d+off]
		if n == 1 {
			i = 0
		}
		f = f*n + i
	}
	return f
}

// refBroadcast is a naive NumPy-broadcast reference: out[k] =
// f(a[...], b[...]) over the output shape.
func refBroadcast(a, b []float64, as, bs, out []int, f func(x, y float64) float64) []float64 {
	n := 1
	for _, d := range out {
		n *= d
	}
	r := make([]float64, n)
	for k := range r {
		idx := unravel(k, out)
		r[k] = f(a[flatIn(idx, as)], b[flatIn(idx, bs)])
	}
	return r
}

// registerTestConstantFill registers a minimal ConstantFill (FLOAT, shaped
// like its input, filled with value) when no package linked into the test
// provides one; the two-input Pow gradient emits it.
func registerTestConstantFill() {
	if operators.IsOperator("ConstantFill") {
		return
	}
	operators.MustRegister("ConstantFill", netdef.CPU, "", func(b *operators.Base) (operators.Operator, error) {
		return &testConstantFill{Base: b, value: b.ArgFloat("value", 0)}, nil
	})
}

type testConstantFill struct {
	*operators.Base
	value float32
}

func (o *testConstantFill) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	y := o.Output(0)
	if err := y.Init(blob.Float32, x.Dims()...); err != nil {
		return err
	}
	for i := range blob.Data[float32](y) {
		blob.Data[float32](y)[i] = o.value
	}
	return nil
}
