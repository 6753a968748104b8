//go:build cuda && cgo

package cuda

import (
	"fmt"
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope/cuda"
	"github.com/caffe2go/caffe2go/operators"
)

// floatInputs checks that inputs 0 … len(dst)−1 are GPU tensors of one
// float type and stores them in dst.
func (o *op) floatInputs(dst []*blob.Tensor) error {
	for i := range dst {
		t, err := o.floatInput(i)
		if err != nil {
			return err
		}
		if i > 0 && t.DataType() != dst[0].DataType() {
			return fmt.Errorf("input %d (%q) is %v, input 0 (%q) %v: they must have one float type",
				i, o.InputName(i), t.DataType(), o.InputName(0), dst[0].DataType())
		}
		dst[i] = t
	}
	return nil
}

// sized checks that the inputs idx have n elements.
func (o *op) sized(n int, idx ...int) error {
	for _, i := range idx {
		t, _ := o.Input(i)
		if t.Size() != n {
			return fmt.Errorf("input %d (%q) has shape %v with %d elements, want %d", i, o.InputName(i), t.Dims(), t.Size(), n)
		}
	}
	return nil
}

// like gives output i t's type and shape; with copyData it also copies
// t's elements when the output is another tensor.
func (o *op) like(i int, t *blob.Tensor, copyData bool) (*blob.Tensor, error) {
	y := o.Output(i)
	if y == t {
		return y, nil
	}
	if copyData {
		return y, y.CopyFrom(t)
	}
	return y, y.Init(t.DataType(), t.Dims()...)
}

// momentumImpl is MomentumSGD and MomentumSGDUpdate.
type momentumImpl struct {
	op
	update   bool
	momentum float64
	nesterov bool
	in       [4]*blob.Tensor
	k        typed
	a        *cuda.Args
}

func newMomentum(update bool) operators.Factory {
	return func(b *operators.Base) (operators.Operator, error) {
		base, err := newOp(b)
		if err != nil {
			return nil, err
		}
		o := &momentumImpl{op: base, update: update, momentum: float64(b.ArgFloat("momentum", 0)), nesterov: b.ArgInt("nesterov", 0) != 0,
			a: cuda.NewArgs(9)}
		if o.k, err = base.g.typedKernel("momentum_sgd"); err != nil {
			return nil, err
		}
		o.self = o
		return o, nil
	}
}

func (o *momentumImpl) RunOnDevice() error {
	in := o.in[:3]
	if o.update {
		in = o.in[:4]
	}
	if err := o.floatInputs(in); err != nil {
		return err
	}
	g, m, lr := in[0], in[1], in[2]
	if lr.Size() != 1 {
		return fmt.Errorf("input 2 (%q) must hold one element, has shape %v", o.InputName(2), lr.Dims())
	}
	if err := o.sized(g.Size(), 1); err != nil {
		return err
	}
	if o.update {
		if err := o.sized(g.Size(), 3); err != nil {
			return err
		}
	}
	ng, err := o.like(0, g, false)
	if err != nil {
		return err
	}
	nm, err := o.like(1, m, false)
	if err != nil {
		return err
	}
	var p *blob.Tensor
	if o.update {
		if p, err = o.like(2, in[3], true); err != nil {
			return err
		}
	}
	n := int64(g.Size())
	o.a.Mem(0, g.Storage(), 0)
	o.a.Mem(1, m.Storage(), 0)
	o.a.Mem(2, lr.Storage(), 0)
	o.a.Mem(3, ng.Storage(), 0)
	o.a.Mem(4, nm.Storage(), 0)
	setMem(o.a, 5, p)
	o.a.Double(6, o.momentum)
	o.a.Int(7, int(cBool(o.nesterov)))
	o.a.Int64(8, n)
	return launch1D(o.k.of(g.DataType()), n, o.a)
}

// adamImpl is Adam: (param, moment_1, moment_2, grad, lr, iter) → (param,
// moment_1, moment_2[, effective grad]); iter is the CPU counter, read on
// the host for the bias correction.
type adamImpl struct {
	op
	beta1, beta2, eps float64
	in                [5]*blob.Tensor
	k                 typed
	a                 *cuda.Args
}

func newAdam(b *operators.Base) (operators.Operator, error) {
	base, err := newOp(b)
	if err != nil {
		return nil, err
	}
	o := &adamImpl{op: base, beta1: float64(b.ArgFloat("beta1", 0.9)), beta2: float64(b.ArgFloat("beta2", 0.999)),
		eps: float64(b.ArgFloat("epsilon", 1e-5)), a: cuda.NewArgs(14)}
	if o.k, err = base.g.typedKernel("adam"); err != nil {
		return nil, err
	}
	o.self = o
	return o, nil
}

func (o *adamImpl) RunOnDevice() error {
	if err := o.floatInputs(o.in[:]); err != nil {
		return err
	}
	p, m1, m2, g, lr := o.in[0], o.in[1], o.in[2], o.in[3], o.in[4]
	if lr.Size() != 1 {
		return fmt.Errorf("input 4 (%q) must hold one element, has shape %v", o.InputName(4), lr.Dims())
	}
	if err := o.sized(g.Size(), 0, 1, 2); err != nil {
		return err
	}
	it, err := o.InputOf(5, blob.Int64)
	if err != nil {
		return err
	}
	if it.Size() < 1 || !it.OnHost() {
		return fmt.Errorf("iteration input %q must be a non-empty INT64 tensor on the CPU", o.InputName(5))
	}
	// The float32 path rounds the correction to float32 first, as the CPU
	// does.
	t := float64(blob.Data[int64](it)[0] + 1)
	corr := math.Sqrt(1-math.Pow(o.beta2, t)) / (1 - math.Pow(o.beta1, t))
	if g.DataType() == blob.Float32 {
		corr = float64(float32(corr))
	}
	np, err := o.like(0, p, false)
	if err != nil {
		return err
	}
	nm1, err := o.like(1, m1, false)
	if err != nil {
		return err
	}
	nm2, err := o.like(2, m2, false)
	if err != nil {
		return err
	}
	var ng *blob.Tensor
	if o.NumOutputs() > 3 {
		if ng, err = o.like(3, g, false); err != nil {
			return err
		}
	}
	n := int64(g.Size())
	for i, t := range []*blob.Tensor{p, g, m1, m2, lr, np, nm1, nm2, ng} {
		setMem(o.a, i, t)
	}
	o.a.Double(9, o.beta1)
	o.a.Double(10, o.beta2)
	o.a.Double(11, o.eps)
	o.a.Double(12, corr)
	o.a.Int64(13, n)
	return launch1D(o.k.of(g.DataType()), n, o.a)
}

// adagradImpl is Adagrad: (param, moment, grad, lr) → (param, moment[,
// effective lr[, update]]).
type adagradImpl struct {
	op
	eps, decay float64
	in         [4]*blob.Tensor
	k          typed
	a          *cuda.Args
}

func newAdagrad(b *operators.Base) (operators.Operator, error) {
	base, err := newOp(b)
	if err != nil {
		return nil, err
	}
	o := &adagradImpl{op: base, eps: float64(b.ArgFloat("epsilon", 1e-5)), decay: float64(b.ArgFloat("decay", 1)), a: cuda.NewArgs(11)}
	if o.k, err = base.g.typedKernel("adagrad"); err != nil {
		return nil, err
	}
	o.self = o
	return o, nil
}

func (o *adagradImpl) RunOnDevice() error {
	if err := o.floatInputs(o.in[:]); err != nil {
		return err
	}
	p, h, g, lr := o.in[0], o.in[1], o.in[2], o.in[3]
	if lr.Size() != 1 {
		return fmt.Errorf("input 3 (%q) must hold one element, has shape %v", o.InputName(3), lr.Dims())
	}
	if err := o.sized(g.Size(), 0, 1); err != nil {
		return err
	}
	np, err := o.like(0, p, false)
	if err != nil {
		return err
	}
	nh, err := o.like(1, h, false)
	if err != nil {
		return err
	}
	var elr, upd *blob.Tensor
	if o.NumOutputs() > 2 {
		if elr, err = o.like(2, g, false); err != nil {
			return err
		}
	}
	if o.NumOutputs() > 3 {
		if upd, err = o.like(3, g, false); err != nil {
			return err
		}
	}
	n := int64(g.Size())
	for i, t := range []*blob.Tensor{p, g, h, lr, np, nh, elr, upd} {
		setMem(o.a, i, t)
	}
	o.a.Double(8, o.eps)
	o.a.Double(9, o.decay)
	o.a.Int64(10, n)
	return launch1D(o.k.of(g.DataType()), n, o.a)
}
