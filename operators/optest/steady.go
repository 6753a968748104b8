package optest

import (
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// Steady creates def in a fresh workspace fed with inputs (by the
// operator's input names, in order) and runs it once, so that later runs are
// in steady state. It fails tb on an error.
func Steady(tb testing.TB, def *netdef.OperatorDef, inputs ...*blob.Tensor) operators.Operator {
	tb.Helper()
	w := NewWorkspace()
	for i, t := range inputs {
		w.Feed(def.Input[i], t)
	}
	op, err := operators.Create(def, w, -1)
	if err != nil {
		tb.Fatalf("%s: %v", def.GetType(), err)
	}
	if err := op.Run(); err != nil {
		tb.Fatalf("%s: %v", def.GetType(), err)
	}
	return op
}

// AssertNoAllocs fails tb when def, run once on inputs, allocates when it
// runs again: operators keep their outputs' storage and scratch buffers.
func AssertNoAllocs(tb testing.TB, def *netdef.OperatorDef, inputs ...*blob.Tensor) {
	tb.Helper()
	AssertOpNoAllocs(tb, Steady(tb, def, inputs...))
}

// AssertOpNoAllocs fails tb when a run of op, which has run before,
// allocates (or fails).
func AssertOpNoAllocs(tb testing.TB, op operators.Operator) {
	tb.Helper()
	var err error
	allocs := testing.AllocsPerRun(20, func() {
		if e := op.Run(); e != nil && err == nil {
			err = e
		}
	})
	if err != nil {
		tb.Fatalf("%s: %v", op.OpBase().Type(), err)
	}
	if allocs != 0 {
		tb.Errorf("%s: %v allocations per run, want 0", op.OpBase().Type(), allocs)
	}
}

// Benchmark runs op b.N times, reporting allocations.
func Benchmark(b *testing.B, op operators.Operator) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := op.Run(); err != nil {
			b.Fatal(err)
		}
	}
}
