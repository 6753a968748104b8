package quant

import (
	"fmt"
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "Int8Concat", MinInputs: 1, MaxInputs: operators.Unbounded, MinOutputs: 1, MaxOutputs: 2,
		Args: append([]operators.ArgSpec{
			{Name: "axis", Doc: "axis to join along: default 3 with order NHWC, 1 with NCHW, else 0"},
			{Name: "order", Doc: "NHWC or NCHW; picks the default axis and requires 4-D inputs"},
		}, quantArgs...),
		Doc: "Joins int8 tensors along an axis, copying their codes; Y_scale and Y_zero_point must equal the first input's (the others' are not checked, as in Caffe2). Output 1, when given, gets the INT32 sizes along the axis.",
	}, newInt8Concat)
	operators.MustRegisterNoGradient("Int8Concat")
	operators.MustRegisterShapeFunc("Int8Concat", int8ConcatShape)

	operators.MustRegisterCPU(operators.Schema{
		Type: "Int8Reshape", MinInputs: 1, MaxInputs: 2, MinOutputs: 2, MaxOutputs: 2,
		AllowInplace: operators.InplacePairs([2]int{0, 0}),
		Args: append([]operators.ArgSpec{
			{Name: "shape", Doc: "new shape; 0 copies the input dimension, -1 is inferred (or give input 1 instead)"},
		}, quantArgs...),
		Doc: "Reshapes an int8 tensor (Reshape's rules); old_shape gets the input's INT64 dimensions. Y_scale and Y_zero_point must equal X's.",
	}, func(b *operators.Base) (operators.Operator, error) {
		if b.NumInputs() == 2 && b.HasArg("shape") {
			return nil, b.Errorf("the new shape is given by input 1 (%q); do not also pass the argument shape", b.InputName(1))
		}
		if b.NumInputs() == 1 && !b.HasArg("shape") {
			return nil, b.Errorf("argument shape is missing (give it, or the new shape as input 1)")
		}
		return &int8ReshapeOp{Base: b, oq: readOutputQuant(b), shape: b.ArgInts("shape", nil)}, nil
	})
	operators.MustRegisterNoGradient("Int8Reshape")
	operators.MustRegisterShapeFunc("Int8Reshape", int8ReshapeShape)

	operators.MustRegisterCPU(operators.Schema{
		Type: "Int8Flatten", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Args: append([]operators.ArgSpec{{Name: "axis", Default: 1, Doc: "dimensions before axis form the outer dimension"}}, quantArgs...),
		Doc:  "Flattens an int8 tensor to 2-D at axis. Y_scale and Y_zero_point must equal X's.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &int8FlattenOp{Base: b, oq: readOutputQuant(b), axis: int(b.ArgInt("axis", 1))}, nil
	})
	operators.MustRegisterNoGradient("Int8Flatten")
	operators.MustRegisterShapeFunc("Int8Flatten", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		x, axis := in[0], int(b.ArgInt("axis", 1))
		if x.Rank() < 0 || axis < 0 || axis > x.Rank() {
			return nil, nil
		}
		outer, ok1 := x.Size(0, axis)
		inner, ok2 := x.Size(axis, x.Rank())
		out := operators.Shape(blob.Uint8, operators.AnyDim, operators.AnyDim)
		if ok1 {
			out.Dims[0] = outer
		}
		if ok2 {
			out.Dims[1] = inner
		}
		return []operators.TensorShape{out}, nil
	})
}

type int8ConcatOp struct {
	*operators.Base
	axis  int
	order bool // an order was given: inputs must be 4-D
	oq    outputQuant
	dims  []int
	ins   []*Int8Tensor
}

func newInt8Concat(b *operators.Base) (operators.Operator, error) {
	o := &int8ConcatOp{Base: b, oq: readOutputQuant(b)}
	switch b.ArgString("order", "") {
	case "NHWC":
		o.axis, o.order = int(b.ArgInt("axis", 3)), true
	case "NCHW":
		o.axis, o.order = int(b.ArgInt("axis", 1)), true
	default:
		o.axis = int(b.ArgInt("axis", 0))
	}
	if o.order && (o.axis < 0 || o.axis >= 4) {
		return nil, b.Errorf("axis %d must be in [0, 4) for 4-D images", o.axis)
	}
	return o, nil
}

func (o *int8ConcatOp) Run() error {
	x0, err := int8Input(o.Base, 0)
	if err != nil {
		return err
	}
	if err := o.oq.same(o.Base, x0); err != nil {
		return err
	}
	nd := x0.T.NumDims()
	if o.order && nd != 4 {
		return o.Errorf("with an order, input %q %v must be 4-D", o.InputName(0), x0.T.Dims())
	}
	axis, ok := operators.CanonicalAxis(o.axis, nd)
	if !ok {
		return o.Errorf("axis %d is out of range for input %q %v", o.axis, o.InputName(0), x0.T.Dims())
	}
	ins := o.ins[:0]
	o.dims = append(o.dims[:0], x0.T.Dims()...)
	o.dims[axis] = 0
	for i := range o.NumInputs() {
		xi, err := int8Input(o.Base, i)
		if err != nil {
			return err
		}
		d := xi.T.Dims()
		if len(d) != nd {
			return o.Errorf("input %q %v and input %q %v have different ranks", o.InputName(0), x0.T.Dims(), o.InputName(i), d)
		}
		for j := range d {
			if j != axis && d[j] != o.dims[j] {
				return o.Errorf("input %q %v and input %q %v differ outside axis %d", o.InputName(0), x0.T.Dims(), o.InputName(i), d, axis)
			}
		}
		if o.dims[axis] > math.MaxInt32-d[axis] {
			return o.Errorf("the inputs' sizes along axis %d add up past 2^31", axis)
		}
		o.dims[axis] += d[axis]
		ins = append(ins, xi)
	}
	o.ins = ins
	scale, zero := x0.Scale, x0.ZeroPoint
	before := x0.T.SizeToDim(axis)
	after := x0.T.SizeFromDim(axis + 1)
	if o.NumOutputs() == 2 {
		split := o.Output(1)
		if err := split.Init(blob.Int32, len(ins)); err != nil {
			return err
		}
		for i, xi := range ins {
			blob.Data[int32](split)[i] = int32(xi.T.Dim(axis))
		}
	}
	y := int8Output(o.Base, 0)
	for _, xi := range ins {
		if xi == y {
			return o.Errorf("output %q is also an input", o.OutputName(0))
		}
	}
	if err := y.T.Init(blob.Uint8, o.dims...); err != nil {
		return o.Errorf("output %q %v: %w", o.OutputName(0), o.dims, err)
	}
	y.Scale, y.ZeroPoint = scale, zero
	yd := blob.Data[uint8](y.T)
	if len(yd) == 0 {
		return nil
	}
	total := o.dims[axis] * after
	off := 0
	for _, xi := range ins {
		w := xi.T.Dim(axis) * after
		src := blob.Data[uint8](xi.T)
		for r := range before {
			copy(yd[r*total+off:r*total+off+w], src[r*w:(r+1)*w])
		}
		off += w
	}
	return nil
}

// int8ConcatShape joins the known dims of the inputs.
func int8ConcatShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	x0 := in[0]
	if x0.Rank() < 0 {
		return nil, nil
	}
	axis := int(b.ArgInt("axis", 0))
	switch b.ArgString("order", "") {
	case "NHWC":
		axis = int(b.ArgInt("axis", 3))
	case "NCHW":
		axis = int(b.ArgInt("axis", 1))
	}
	axis, ok := operators.CanonicalAxis(axis, x0.Rank())
	if !ok {
		return nil, nil
	}
	out := operators.Shape(blob.Uint8, append([]int{}, x0.Dims...)...)
	sum := 0
	for _, s := range in {
		if s.Rank() != x0.Rank() || s.Dim(axis) < 0 || sum > math.MaxInt32 {
			sum = operators.AnyDim
			break
		}
		sum += s.Dim(axis)
	}
	out.Dims[axis] = sum
	res := []operators.TensorShape{out}
	if len(b.Def().GetOutput()) == 2 {
		res = append(res, operators.Shape(blob.Int32, len(in)))
	}
	return res, nil
}

type int8ReshapeOp struct {
	*operators.Base
	oq     outputQuant
	shape  []int64
	target []int
}

func (o *int8ReshapeOp) Run() error {
	x, err := int8Input(o.Base, 0)
	if err != nil {
		return err
	}
	if err := o.oq.same(o.Base, x); err != nil {
		return err
	}
	o.target = o.target[:0]
	if o.NumInputs() == 2 {
		s, err := o.Input(1)
		if err != nil {
			return err
		}
		if s.NumDims() != 1 {
			return o.Errorf("shape input %q %v must be 1-D", o.InputName(1), s.Dims())
		}
		switch s.DataType() {
		case blob.Int32:
			for _, v := range blob.Data[int32](s) {
				o.target = append(o.target, int(v))
			}
		case blob.Int64:
			for _, v := range blob.Data[int64](s) {
				o.target = append(o.target, int(v))
			}
		default:
			return o.Errorf("shape input %q has type %v, want INT32 or INT64", o.InputName(1), s.DataType())
		}
	} else {
		for _, v := range o.shape {
			o.target = append(o.target, int(v))
		}
	}
	xd := x.T.Dims()
	if err := resolveShape(o.target, xd, x.T.Size()); err != nil {
		return o.Errorf("%v", err)
	}
	old := o.Output(1)
	if err := old.Init(blob.Int64, len(xd)); err != nil {
		return err
	}
	for i, d := range xd {
		blob.Data[int64](old)[i] = int64(d)
	}
	scale, zero := x.Scale, x.ZeroPoint
	y := int8Output(o.Base, 0)
	if y != x {
		if err := y.T.Init(blob.Uint8, xd...); err != nil {
			return o.Errorf("output %q %v: %w", o.OutputName(0), xd, err)
		}
		copy(blob.Data[uint8](y.T), blob.Data[uint8](x.T))
	}
	if err := y.T.Reshape(o.target...); err != nil {
		return o.Errorf("%v", err)
	}
	y.Scale, y.ZeroPoint = scale, zero
	return nil
}

// resolveShape applies Caffe2's Reshape rules to target in place: a 0
// copies the input's dimension at its index, a single -1 is inferred
// from the element count total (0 when there are none).
func resolveShape(target, xd []int, total int) error {
	for i := range target {
		if target[i] == 0 && i < len(xd) {
			target[i] = xd[i]
		}
	}
	size, unknown := 1, -1
	for i, d := range target {
		switch {
		case d == -1:
			if unknown != -1 {
				return fmt.Errorf("shape %v has more than one missing dimension", target)
			}
			unknown = i
		case d < 0:
			return fmt.Errorf("shape %v has a negative dimension", target)
		case d != 0 && size > math.MaxInt64/d:
			return fmt.Errorf("shape %v holds more than 2^63 elements", target)
		default:
			size *= d
		}
	}
	switch {
	case size == 0 && total != 0:
		return fmt.Errorf("cannot reshape %v, %d elements, to zero size %v", xd, total, target)
	case total != 0 && unknown != -1:
		if total%size != 0 {
			return fmt.Errorf("cannot reshape %v to %v: %d elements do not divide into %d", xd, target, total, size)
		}
		target[unknown] = total / size
	case total != 0 && size != total:
		return fmt.Errorf("cannot reshape %v (%d elements) to %v (%d elements)", xd, total, target, size)
	case unknown != -1:
		target[unknown] = 0
	}
	return nil
}

// int8ReshapeShape is Int8Reshape's output shape when the shape argument
// and X's dims are known.
func int8ReshapeShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	x := in[0]
	old := operators.UnknownShape
	if x.Rank() >= 0 {
		old = operators.Shape(blob.Int64, x.Rank())
	}
	if len(in) != 1 || x.Rank() < 0 {
		return []operators.TensorShape{operators.UnknownShape, old}, nil
	}
	total, ok := x.Size(0, x.Rank())
	if !ok {
		return []operators.TensorShape{operators.UnknownShape, old}, nil
	}
	v := b.ArgInts("shape", nil)
	if len(v) > 64 {
		return []operators.TensorShape{operators.UnknownShape, old}, nil
	}
	target := make([]int, len(v))
	for i, d := range v {
		target[i] = int(d)
	}
	if err := resolveShape(target, x.Dims, total); err != nil {
		return nil, b.InputShapeError(in, "%v", err)
	}
	return []operators.TensorShape{operators.Shape(blob.Uint8, target...), old}, nil
}

type int8FlattenOp struct {
	*operators.Base
	oq   outputQuant
	axis int
}

func (o *int8FlattenOp) Run() error {
	x, err := int8Input(o.Base, 0)
	if err != nil {
		return err
	}
	if err := o.oq.same(o.Base, x); err != nil {
		return err
	}
	if o.axis < 0 || o.axis > x.T.NumDims() {
		return o.Errorf("axis %d must be in [0, %d], the rank of X %v", o.axis, x.T.NumDims(), x.T.Dims())
	}
	outer, inner := x.T.SizeToDim(o.axis), x.T.SizeFromDim(o.axis)
	if x.T.Size() == 0 {
		// A tensor with no elements may have huge dims beside its 0.
		outer, inner = 0, 0
		if dims := x.T.Dims(); o.axis < len(dims) {
			inner = productOrZero(dims[o.axis:])
			outer = productOrZero(dims[:o.axis])
		}
	}
	y := int8Output(o.Base, 0)
	scale, zero := x.Scale, x.ZeroPoint
	if err := y.T.Init(blob.Uint8, outer, inner); err != nil {
		return o.Errorf("output %q [%d %d]: %w", o.OutputName(0), outer, inner, err)
	}
	copy(blob.Data[uint8](y.T), blob.Data[uint8](x.T))
	y.Scale, y.ZeroPoint = scale, zero
	return nil
}

// productOrZero multiplies dims, giving 0 when one is 0 and saturating at
// MaxInt32 otherwise (the dims of an empty tensor may be huge).
func productOrZero(dims []int) int {
	p := 1
	for _, d := range dims {
		if d == 0 {
			return 0
		}
	}
	for _, d := range dims {
		if p > math.MaxInt32/max(d, 1) {
			return math.MaxInt32
		}
		p *= d
	}
	return p
}
