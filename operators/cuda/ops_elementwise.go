//go:build cuda && cgo

package cuda

import (
	"fmt"
	"slices"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope/cuda"
	"github.com/caffe2go/caffe2go/operators"
)

// ewImpl runs one operator of the element-wise table.
type ewImpl struct {
	op
	spec ewOp
	k    typed
	vals []float64
	a    *cuda.Args
}

func newElementwise(spec ewOp) operators.Factory {
	return func(b *operators.Base) (operators.Operator, error) {
		base, err := newOp(b)
		if err != nil {
			return nil, err
		}
		o := &ewImpl{op: base, spec: spec, a: cuda.NewArgs(spec.Inputs + 2 + len(spec.Args))}
		if o.k, err = base.g.typedKernel("ew_" + spec.Type); err != nil {
			return nil, err
		}
		for _, a := range spec.Args {
			o.vals = append(o.vals, float64(b.ArgFloat(a.Name, a.Default)))
		}
		o.self = o
		return o, nil
	}
}

func (o *ewImpl) RunOnDevice() error {
	x, err := o.floatInput(0)
	if err != nil {
		return err
	}
	for i := 1; i < o.spec.Inputs; i++ {
		in, err := o.floatInput(i)
		if err != nil {
			return err
		}
		if in.DataType() != x.DataType() || in.Size() != x.Size() {
			return fmt.Errorf("input %d (%q) is %v %v, input 0 (%q) %v %v: they must match", i, o.InputName(i), in.DataType(), in.Dims(),
				o.InputName(0), x.DataType(), x.Dims())
		}
		o.a.Mem(i, in.Storage(), 0)
	}
	y, err := o.output(0, x.DataType(), x.Dims()...)
	if err != nil {
		return err
	}
	o.a.Mem(0, x.Storage(), 0)
	o.a.Mem(o.spec.Inputs, y.Storage(), 0)
	for i, v := range o.vals {
		o.a.Double(o.spec.Inputs+1+i, v)
	}
	n := int64(x.Size())
	o.a.Int64(o.spec.Inputs+1+len(o.vals), n)
	return launch1D(o.k.of(x.DataType()), n, o.a)
}

// binaryOps maps Add, Sub, Mul and Div to the kernels' op codes.
var binaryOps = map[string]int{"Add": 0, "Sub": 1, "Mul": 2, "Div": 3}

// binaryImpl is Add, Sub, Mul or Div. Operands of one shape, and a B of one
// element, run on the GPU; other broadcasts run on the host.
type binaryImpl struct {
	op
	code          int
	same, strided typedNumeric
	a             *cuda.Args
	fallback      operators.Operator
}

func newBinary(typ string) operators.Factory {
	return func(b *operators.Base) (operators.Operator, error) {
		base, err := newOp(b)
		if err != nil {
			return nil, err
		}
		o := &binaryImpl{op: base, code: binaryOps[typ], a: cuda.NewArgs(16)}
		if o.same, err = base.g.numericKernel("binary_same"); err != nil {
			return nil, err
		}
		if o.strided, err = base.g.numericKernel("binary"); err != nil {
			return nil, err
		}
		if o.fallback, err = operators.HostFallback(b); err != nil {
			return nil, err
		}
		o.self = o
		return o, nil
	}
}

func (o *binaryImpl) RunOnDevice() error {
	a, err := o.gpuInput(0)
	if err != nil {
		return err
	}
	b, err := o.gpuInput(1)
	if err != nil {
		return err
	}
	dt := a.DataType()
	k, ok := o.same[dt]
	if !ok || b.DataType() != dt {
		return fmt.Errorf("inputs %q and %q are %v and %v: the CUDA operator takes two inputs of FLOAT, DOUBLE, INT32 or INT64",
			o.InputName(0), o.InputName(1), dt, b.DataType())
	}
	sameShape := slices.Equal(a.Dims(), b.Dims())
	scalar := b.Size() == 1 && a.Size() >= 1 && b.NumDims() <= a.NumDims()
	if !sameShape && !scalar {
		return o.fallback.Run()
	}
	y, err := o.output(0, dt, a.Dims()...)
	if err != nil {
		return err
	}
	n := int64(a.Size())
	if sameShape {
		o.a.Int(0, o.code)
		o.a.Mem(1, a.Storage(), 0)
		o.a.Mem(2, b.Storage(), 0)
		o.a.Mem(3, y.Storage(), 0)
		o.a.Int64(4, n)
		return launch1D(k, n, o.a)
	}
	// B is one element: the strided kernel with B's strides 0.
	o.a.Int(0, o.code)
	o.a.Mem(1, a.Storage(), 0)
	o.a.Mem(2, b.Storage(), 0)
	o.a.Mem(3, y.Storage(), 0)
	o.a.Int64(4, n)
	for i, v := range []int64{1, 1, n, 0, 0, 0, 1, 0, 0, 0, 0} {
		o.a.Int64(5+i, v)
	}
	return launch1D(o.strided[dt], n, o.a)
}

// sumImpl is Sum: the element-wise sum of its inputs, added in input order.
type sumImpl struct {
	op
	add typedNumeric
	a   *cuda.Args
}

// typedNumeric holds a kernel for the four numeric types.
type typedNumeric map[blob.DataType]cuda.Kernel

func (g *gpu) numericKernel(name string) (typedNumeric, error) {
	t := typedNumeric{}
	for dt, s := range map[blob.DataType]string{blob.Float32: "f32", blob.Float64: "f64", blob.Int32: "i32", blob.Int64: "i64"} {
		k, err := g.kernel(kernelName(name, s))
		if err != nil {
			return nil, err
		}
		t[dt] = k
	}
	return t, nil
}

func newSum(b *operators.Base) (operators.Operator, error) {
	base, err := newOp(b)
	if err != nil {
		return nil, err
	}
	o := &sumImpl{op: base, a: cuda.NewArgs(3)}
	if o.add, err = base.g.numericKernel("add_into"); err != nil {
		return nil, err
	}
	o.self = o
	return o, nil
}

func (o *sumImpl) RunOnDevice() error {
	x0, err := o.gpuInput(0)
	if err != nil {
		return err
	}
	k, ok := o.add[x0.DataType()]
	if !ok {
		return fmt.Errorf("input 0 (%q) has type %v; the CUDA Sum takes FLOAT, DOUBLE, INT32 or INT64", o.InputName(0), x0.DataType())
	}
	for i := 1; i < o.NumInputs(); i++ {
		xi, err := o.gpuInput(i)
		if err != nil {
			return err
		}
		if xi.DataType() != x0.DataType() || !slices.Equal(xi.Dims(), x0.Dims()) {
			return fmt.Errorf("input %d (%q) is %v %v, input 0 (%q) %v %v: Sum needs inputs of one type and shape",
				i, o.InputName(i), xi.DataType(), xi.Dims(), o.InputName(0), x0.DataType(), x0.Dims())
		}
	}
	y := o.Output(0)
	inPlace := o.OutputBlob(0) == o.InputBlob(0)
	if !inPlace {
		// y may be another input: copy x0 only after reading that one.
		for i := 1; i < o.NumInputs(); i++ {
			if o.OutputBlob(0) == o.InputBlob(i) {
				return fmt.Errorf("output %q is input %d: Sum works in place only on input 0", o.OutputName(0), i)
			}
		}
		if err := y.CopyFrom(x0); err != nil {
			return err
		}
	}
	n := int64(x0.Size())
	for i := 1; i < o.NumInputs(); i++ {
		xi, _ := o.Input(i)
		o.a.Mem(0, xi.Storage(), 0)
		o.a.Mem(1, y.Storage(), 0)
		o.a.Int64(2, n)
		if err := launch1D(k, n, o.a); err != nil {
			return err
		}
	}
	return nil
}

// weightedSumImpl is WeightedSum: y = Σ wᵢ·xᵢ over pairs (x, w) with w a
// one-element tensor on the device, accumulated in input order.
type weightedSumImpl struct {
	op
	first, add typed
	a          *cuda.Args
}

func newWeightedSum(b *operators.Base) (operators.Operator, error) {
	base, err := newOp(b)
	if err != nil {
		return nil, err
	}
	o := &weightedSumImpl{op: base, a: cuda.NewArgs(4)}
	if o.first, err = base.g.typedKernel("weighted_first"); err != nil {
		return nil, err
	}
	if o.add, err = base.g.typedKernel("weighted_add"); err != nil {
		return nil, err
	}
	o.self = o
	return o, nil
}

func (o *weightedSumImpl) RunOnDevice() error {
	x0, err := o.floatInput(0)
	if err != nil {
		return err
	}
	dt := x0.DataType()
	for i := 0; i < o.NumInputs(); i++ {
		t, err := o.floatInput(i)
		if err != nil {
			return err
		}
		switch {
		case t.DataType() != dt:
			return fmt.Errorf("input %d (%q) is %v, input 0 (%q) %v", i, o.InputName(i), t.DataType(), o.InputName(0), dt)
		case i%2 == 0 && t.Size() != x0.Size():
			return fmt.Errorf("input %d (%q) has shape %v, input 0 (%q) %v: the weighted inputs must match", i, o.InputName(i), t.Dims(), o.InputName(0), x0.Dims())
		case i%2 == 1 && t.Size() != 1:
			return fmt.Errorf("weight %d (%q) has shape %v; weights have one element", i, o.InputName(i), t.Dims())
		}
	}
	// Writing y must not clobber an input read later: y may be input 0
	// (read first) but no other.
	for i := 1; i < o.NumInputs(); i++ {
		if o.OutputBlob(0) == o.InputBlob(i) {
			return fmt.Errorf("output %q is input %d: WeightedSum works in place only on input 0", o.OutputName(0), i)
		}
	}
	y, err := o.output(0, dt, x0.Dims()...)
	if err != nil {
		return err
	}
	n := int64(x0.Size())
	for i := 0; i < o.NumInputs(); i += 2 {
		x, _ := o.Input(i)
		w, _ := o.Input(i + 1)
		o.a.Mem(0, x.Storage(), 0)
		o.a.Mem(1, w.Storage(), 0)
		o.a.Mem(2, y.Storage(), 0)
		o.a.Int64(3, n)
		k := o.add
		if i == 0 {
			k = o.first
		}
		if err := launch1D(k.of(dt), n, o.a); err != nil {
			return err
		}
	}
	return nil
}

// reduceImpl is SumElements (average or not) and AveragedLoss, a scalar
// y = scale·Σx summed in double in one block, and their gradients, dX =
// scale·dY everywhere; scale is 1/|X| when averaging, else 1.
type reduceImpl struct {
	op
	average, grad bool
	k             typed
	a             *cuda.Args
}

func newReduce(average, grad bool) operators.Factory {
	return func(b *operators.Base) (operators.Operator, error) {
		base, err := newOp(b)
		if err != nil {
			return nil, err
		}
		o := &reduceImpl{op: base, average: average || b.ArgBool("average", false), grad: grad, a: cuda.NewArgs(4)}
		name := "mean"
		if grad {
			name = "fill_scaled"
		}
		if o.k, err = base.g.typedKernel(name); err != nil {
			return nil, err
		}
		o.self = o
		return o, nil
	}
}

func (o *reduceImpl) RunOnDevice() error {
	x, err := o.floatInput(0)
	if err != nil {
		return err
	}
	n := int64(x.Size())
	scale := 1.0
	if o.average && n > 0 {
		scale = 1 / float64(n)
	}
	if !o.grad {
		y, err := o.output(0, x.DataType())
		if err != nil {
			return err
		}
		o.a.Mem(0, x.Storage(), 0)
		o.a.Int64(1, n)
		o.a.Double(2, scale)
		o.a.Mem(3, y.Storage(), 0)
		return o.k.of(x.DataType()).Launch(cuda.Dim3{X: 1}, cuda.Dim3{X: rowThreads}, 0, o.a)
	}
	dy, err := o.floatInput(1)
	if err != nil {
		return err
	}
	if dy.Size() != 1 || dy.DataType() != x.DataType() {
		return fmt.Errorf("gradient %q is %v %v; it must be a scalar of X's type %v", o.InputName(1), dy.DataType(), dy.Dims(), x.DataType())
	}
	dx, err := o.output(0, x.DataType(), x.Dims()...)
	if err != nil {
		return err
	}
	o.a.Mem(0, dy.Storage(), 0)
	o.a.Double(1, scale)
	o.a.Mem(2, dx.Storage(), 0)
	o.a.Int64(3, n)
	return launch1D(o.k.of(x.DataType()), n, o.a)
}

// fallbackImpl runs an operator's CPU implementation on host copies
// (operators.HostFallback) on the device's worker, where the copies to and
// from the GPU go straight to its stream.
type fallbackImpl struct {
	op
	inner operators.Operator
}

func newFallback(b *operators.Base) (operators.Operator, error) {
	base, err := newOp(b)
	if err != nil {
		return nil, err
	}
	inner, err := operators.HostFallback(b)
	if err != nil {
		return nil, err
	}
	o := &fallbackImpl{op: base, inner: inner}
	o.self = o
	return o, nil
}

func (o *fallbackImpl) RunOnDevice() error { return o.inner.Run() }
