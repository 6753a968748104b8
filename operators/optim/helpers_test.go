package optim

import (
	"math"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// create instantiates def in w, failing the test on error.
func create(t testing.TB, w *optest.Workspace, def *netdef.OperatorDef) operators.Operator {
	t.Helper()
	op, err := operators.Create(def, w, -1)
	if err != nil {
		t.Fatalf("create %s: %v", def.GetType(), err)
	}
	return op
}

// run runs op once, failing the test on error.
func run(t testing.TB, op operators.Operator) {
	t.Helper()
	if err := op.Run(); err != nil {
		t.Fatalf("run %s: %v", op.OpBase().Type(), err)
	}
}

// values returns a float tensor's elements as float64.
func values(t testing.TB, w *optest.Workspace, name string) []float64 {
	t.Helper()
	x := w.Tensor(name)
	if x == nil {
		t.Fatalf("blob %q holds no tensor", name)
	}
	return x.AsFloat64s()
}

// checkClose compares got with want elementwise, relative to max(1, |want|).
func checkClose(t testing.TB, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); d > tol*math.Max(1, math.Abs(want[i])) || math.IsNaN(got[i]) {
			t.Fatalf("%s[%d] = %.9g, want %.9g", what, i, got[i], want[i])
		}
	}
}

// f32s converts float64 values to a float32 tensor of the given shape.
func f32s(v []float64, shape ...int) *blob.Tensor {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return blob.MustFromSlice(out, shape...)
}

// widen returns the float64 values of float32-rounded v, the exact inputs
// an operator sees.
func widen(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(float32(x))
	}
	return out
}
