package optim

import (
	"testing"

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

// widen returns the float64 values of float32-rounded v, the exact inputs
// an operator sees.
func widen(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(float32(x))
	}
	return out
}
