package workspace_test

import (
	"errors"
	"sync/atomic"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// Test-only operators, registered under names no real operator uses.
//
//	TestInc   X -> Y      Y = X + 1 (float32), counting runs in incRuns
//	TestPanic X -> Y      panics
//	TestFail  X -> Y      returns an error
//	TestStop  -> stop     sets a bool scalar to true once the counter blob
//	                      "counter" reaches arg "at"
//	TestCancel X -> X     calls cancelHook (set by the test) and passes X on
var incRuns atomic.Int64

// cancelHook is what TestCancel calls; tests that use it set it and do not
// run in parallel.
var cancelHook func()

type cancelOp struct{ *operators.Base }

func (o *cancelOp) Run() error {
	cancelHook()
	return nil
}

type incOp struct{ *operators.Base }

func (o *incOp) Run() error {
	incRuns.Add(1)
	x, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	y := o.Output(0)
	if err := y.Init(blob.Float32, x.Dims()...); err != nil {
		return err
	}
	xs, ys := blob.Data[float32](x), blob.Data[float32](y)
	for i := range xs {
		ys[i] = xs[i] + 1
	}
	return nil
}

type panicOp struct{ *operators.Base }

func (o *panicOp) Run() error { panic("kernel bug") }

type failOp struct{ *operators.Base }

func (o *failOp) Run() error { return errors.New("deliberate failure") }

type stopOp struct {
	*operators.Base
	at float32
}

func (o *stopOp) Run() error {
	c, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	out := o.Output(0)
	if err := out.Init(blob.Bool); err != nil {
		return err
	}
	blob.Data[bool](out)[0] = blob.Data[float32](c)[0] >= o.at
	return nil
}

func init() {
	operators.MustRegisterSchema(operators.Schema{Type: "TestInc", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1, AllowInplace: operators.InplaceAny})
	operators.MustRegister("TestInc", netdef.CPU, "", func(b *operators.Base) (operators.Operator, error) { return &incOp{b}, nil })
	operators.MustRegister("TestPanic", netdef.CPU, "", func(b *operators.Base) (operators.Operator, error) { return &panicOp{b}, nil })
	operators.MustRegister("TestFail", netdef.CPU, "", func(b *operators.Base) (operators.Operator, error) { return &failOp{b}, nil })
	operators.MustRegisterSchema(operators.Schema{Type: "TestCancel", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1, AllowInplace: operators.InplaceAny})
	operators.MustRegister("TestCancel", netdef.CPU, "", func(b *operators.Base) (operators.Operator, error) { return &cancelOp{b}, nil })
	operators.MustRegister("TestStop", netdef.CPU, "", func(b *operators.Base) (operators.Operator, error) {
		return &stopOp{b, b.ArgFloat("at", 1)}, nil
	})
}
