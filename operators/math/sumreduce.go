package math

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "SumReduceLike", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{
			{Name: "axis", Default: -1, Doc: "the dimension of A where B's shape starts (-1: B is aligned with A's last dimensions, NumPy-style)"},
			{Name: "axis_str", Default: "", Doc: "the axis named by a letter of order"},
			{Name: "order", Default: "NCHW", Doc: "the layout that axis_str refers to"},
		},
		Doc: "SumReduceLike(A, B) -> C: sums A down to B's shape (C has B's shape and A's type), undoing a broadcast of B over A. " +
			"A B of one element receives the sum of all of A. With axis, B's shape (without leading and trailing 1s) must equal " +
			"A's dimensions from axis on, as in Caffe2; without, B must broadcast to A the NumPy way.",
	}, func(b *operators.Base) (operators.Operator, error) {
		axis, err := resolveAxis(int(b.ArgInt("axis", -1)), b.ArgString("axis_str", ""), b.ArgString("order", "NCHW"))
		if err != nil {
			return nil, err
		}
		return &sumReduceLikeOp{Base: b, axis: axis}, nil
	})
}

// sumReduceLikeOp is SumReduceLike(A, B) -> C.
type sumReduceLikeOp struct {
	*operators.Base
	axis int
	p    plan
}

func (o *sumReduceLikeOp) Run() error {
	a, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	b, err := o.Input(1)
	if err != nil {
		return err
	}
	dt := a.DataType()
	switch {
	case b.Size() == 1:
		o.p.buildScalar(a.Size())
	case o.axis == -1:
		if !broadcastsTo(b.Dims(), a.Dims()) {
			return o.Errorf("cannot reduce A (%q, shape %v) like B (%q, shape %v): B does not broadcast to A", o.InputName(0), a.Dims(), o.InputName(1), b.Dims())
		}
		o.p.build(a.Dims(), b.Dims())
	default:
		pre, n, post, err := legacyBlock(a.Dims(), b.Dims(), o.axis)
		if err != nil {
			return o.Errorf("%v: A (%q) has shape %v, B (%q) has shape %v", err, o.InputName(0), a.Dims(), o.InputName(1), b.Dims())
		}
		o.p.buildBlock(pre, n, post)
	}
	c := o.Output(0)
	if err := c.Init(dt, b.Dims()...); err != nil {
		return err
	}
	if dt == blob.Float32 {
		reduceKernel(&o.p, blob.Data[float32](c), blob.Data[float32](a))
	} else {
		reduceKernel(&o.p, blob.Data[float64](c), blob.Data[float64](a))
	}
	return nil
}

// broadcastsTo reports whether shape b broadcasts to shape a the NumPy way
// (a is the broadcast of a and b).
func broadcastsTo(b, a []int) bool {
	if len(b) > len(a) {
		return false
	}
	off := len(a) - len(b)
	for i, d := range b {
		if d != 1 && d != a[i+off] {
			return false
		}
	}
	return true
}
