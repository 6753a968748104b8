package tensor

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "Size", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Doc: "Size(X) -> size: the number of elements of X, an INT64 scalar.",
	}, func(b *operators.Base) (operators.Operator, error) { return &sizeOp{b}, nil })
	operators.MustRegisterShapeFunc("Size", func(*operators.Base, []operators.TensorShape) ([]operators.TensorShape, error) {
		return []operators.TensorShape{operators.Shape(blob.Int64)}, nil
	})
	operators.MustRegisterGradientForbidden("Size")

	operators.MustRegisterCPU(operators.Schema{
		Type: "LengthsToShape", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Doc: "LengthsToShape(lengths) -> shape: for an INT32 vector of n equal lengths l, the INT32 shape [n, l] to pass to Reshape.",
	}, func(b *operators.Base) (operators.Operator, error) { return &lengthsToShapeOp{b}, nil })
	operators.MustRegisterShapeFunc("LengthsToShape", func(*operators.Base, []operators.TensorShape) ([]operators.TensorShape, error) {
		return []operators.TensorShape{operators.Shape(blob.Int32, 2)}, nil
	})
	operators.MustRegisterGradientForbidden("LengthsToShape")

	operators.MustRegisterCPU(operators.Schema{
		Type: "Range", MinInputs: 1, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Doc: "Range([start], stop, [step]) -> output: numpy.arange(start, stop, step) from scalar inputs of one type (INT32, " +
			"INT64, FLOAT or DOUBLE): one input is stop, two are start and stop.",
	}, func(b *operators.Base) (operators.Operator, error) { return &rangeOp{Base: b}, nil })
	operators.MustRegisterShapeFunc("Range", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		if in[0].Unknown {
			return nil, nil
		}
		return []operators.TensorShape{operators.Shape(in[0].Type, operators.AnyDim)}, nil
	})
	operators.MustRegisterNoGradient("Range")
}

// sizeOp is Size.
type sizeOp struct{ *operators.Base }

func (o *sizeOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	n := x.Size()
	y := o.Output(0)
	if err := y.Init(blob.Int64); err != nil {
		return o.Errorf("output %q: %w", o.OutputName(0), err)
	}
	blob.Data[int64](y)[0] = int64(n)
	return nil
}

// lengthsToShapeOp is LengthsToShape.
type lengthsToShapeOp struct{ *operators.Base }

func (o *lengthsToShapeOp) Run() error {
	l, err := o.InputOf(0, blob.Int32)
	if err != nil {
		return err
	}
	if l.NumDims() != 1 {
		return o.Errorf("input must be a vector: %q has shape %v", o.InputName(0), l.Dims())
	}
	v := blob.Data[int32](l)
	if len(v) == 0 {
		return o.Errorf("input %q is empty; LengthsToShape needs at least one length", o.InputName(0))
	}
	if len(v) > math.MaxInt32 {
		return o.Errorf("input %q has %d lengths, more than INT32 holds", o.InputName(0), len(v))
	}
	for _, x := range v[1:] {
		if x != v[0] {
			return o.Errorf("all elements of input %q must be the same, has %d and %d", o.InputName(0), v[0], x)
		}
	}
	y := o.Output(0)
	if err := y.Init(blob.Int32, 2); err != nil {
		return o.Errorf("output %q: %w", o.OutputName(0), err)
	}
	d := blob.Data[int32](y)
	d[0], d[1] = int32(len(v)), v[0]
	return nil
}

// rangeOp is Range.
type rangeOp struct{ *operators.Base }

func (o *rangeOp) Run() error {
	var buf [3]*blob.Tensor
	in := buf[:o.NumInputs()]
	for i := range in {
		t, err := o.Input(i)
		if err != nil {
			return err
		}
		in[i] = t
	}
	dt := in[0].DataType()
	for i, t := range in {
		if t.NumDims() != 0 {
			return o.Errorf("all inputs must be scalar: input %d (%q) has shape %v", i, o.InputName(i), t.Dims())
		}
		if t.DataType() != dt {
			return o.Errorf("input %d (%q) has type %v, input 0 (%q) has type %v: they must match", i, o.InputName(i), t.DataType(), o.InputName(0), dt)
		}
	}
	switch dt {
	case blob.Int32:
		return runRange[int32](o, in)
	case blob.Int64:
		return runRange[int64](o, in)
	case blob.Float32:
		return runRange[float32](o, in)
	case blob.Float64:
		return runRange[float64](o, in)
	}
	return o.Errorf("input 0 (%q) has type %v, want INT32, INT64, FLOAT or DOUBLE", o.InputName(0), dt)
}

func runRange[T int32 | int64 | float32 | float64](o *rangeOp, in []*blob.Tensor) error {
	var start, stop, step T = 0, 0, 1
	v := func(i int) T { return blob.Data[T](in[i])[0] }
	switch len(in) {
	case 1:
		stop = v(0)
	case 2:
		start, stop = v(0), v(1)
	default:
		start, stop, step = v(0), v(1), v(2)
	}
	if step == 0 {
		return o.Errorf("step size cannot be 0")
	}
	// numpy.arange's length: ceil((stop - start) / step), at least 0; for
	// floats the quotient is taken in T, as Caffe2 does.
	var n float64
	if isInt[T]() {
		d, s := int64(stop)-int64(start), int64(step)
		q := d / s
		if q*s != d && (d < 0) == (s < 0) {
			q++
		}
		n = float64(q)
	} else {
		n = math.Ceil(float64((stop - start) / step))
	}
	if math.IsNaN(n) || n > math.MaxInt32 {
		return o.Errorf("range from %v to %v by %v has too many elements", start, stop, step)
	}
	length := max(int(n), 0)
	y := o.Output(0)
	if err := y.Init(in[0].DataType(), length); err != nil {
		return o.Errorf("output %q of %d elements: %w", o.OutputName(0), length, err)
	}
	d := blob.Data[T](y)
	for i := range d {
		d[i] = T(i)*step + start
	}
	return nil
}

// isInt reports whether T is an integer type.
func isInt[T int32 | int64 | float32 | float64]() bool {
	var one T = 1
	return one/2 == 0
}
