package tensor

import (
	"slices"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "Reshape", MinInputs: 1, MaxInputs: 2, MinOutputs: 2, MaxOutputs: 2,
		AllowInplace: operators.InplacePairs([2]int{0, 0}),
		Args:         []operators.ArgSpec{{Name: "shape", Doc: "new shape; 0 copies the input dimension, -1 is inferred (or give input 1 instead)"}},
		Doc:          "Reshapes data to a new shape with the same element count; old_shape gets the input's dimensions.",
	}, newReshape)
	operators.MustRegisterGradient("Reshape", func(g *operators.GradientContext) error {
		g.CopyArguments = false
		gi := g.GI(0)
		g.Op("Reshape", []string{g.GO(0), g.O(1)}, []string{gi, "_" + gi + "_dims"})
		return nil
	})

	operators.MustRegisterCPU(operators.Schema{
		Type: "Flatten", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{{Name: "axis", Default: 1, Doc: "dimensions before axis form the outer dimension"}},
		Doc:  "Flattens the input to 2-D: [d0·…·d(axis-1), d(axis)·…·d(n-1)].",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &flattenOp{Base: b, axis: int(b.ArgInt("axis", 1))}, nil
	})
	operators.MustRegisterGradient("Flatten", resizeLikeGradient)

	operators.MustRegisterCPU(operators.Schema{
		Type: "FlattenToVec", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Doc: "Flattens a tensor of rank >= 1 to a vector.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &flattenToVecOp{Base: b}, nil
	})
	operators.MustRegisterGradient("FlattenToVec", resizeLikeGradient)

	operators.MustRegisterCPU(operators.Schema{
		Type: "ResizeLike", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Doc: "Copies the elements of input 0 into a tensor with the shape of input 1.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &resizeLikeOp{Base: b}, nil
	})
	operators.MustRegisterGradientForbidden("ResizeLike")

	dimsArg := []operators.ArgSpec{{Name: "dims", Doc: "non-negative dimension indices (required)"}}
	operators.MustRegisterCPU(operators.Schema{
		Type: "ExpandDims", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		AllowInplace: operators.InplacePairs([2]int{0, 0}), Args: dimsArg,
		Doc: "Inserts dimensions of size 1 at the given output positions.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return newSqueeze(b, true)
	})
	operators.MustRegisterGradient("ExpandDims", func(g *operators.GradientContext) error {
		g.Op("Squeeze", []string{g.GO(0)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterCPU(operators.Schema{
		Type: "Squeeze", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		AllowInplace: operators.InplacePairs([2]int{0, 0}), Args: dimsArg,
		Doc: "Removes the given dimensions, which must have size 1.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return newSqueeze(b, false)
	})
	operators.MustRegisterGradient("Squeeze", func(g *operators.GradientContext) error {
		g.Op("ExpandDims", []string{g.GO(0)}, []string{g.GI(0)})
		return nil
	})

	operators.MustRegisterCPU(operators.Schema{
		Type: "Shape", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{{Name: "axes", Doc: "non-negative dimensions to report (default: all)"}},
		Doc:  "Produces a 1-D INT64 tensor with the input's dimensions.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &shapeOp{Base: b, axes: b.ArgInts("axes", nil)}, nil
	})
	operators.MustRegisterGradientForbidden("Shape")
}

// resizeLikeGradient is ResizeLike(dY, X) -> dX, the gradient of Flatten
// and FlattenToVec.
func resizeLikeGradient(g *operators.GradientContext) error {
	g.Op("ResizeLike", []string{g.GO(0), g.I(0)}, []string{g.GI(0)})
	return nil
}

type reshapeOp struct {
	*operators.Base
	newShape []int64
	hasShape bool
	target   []int64
	shape    []int
	oldDims  []int
}

func newReshape(b *operators.Base) (operators.Operator, error) {
	op := &reshapeOp{Base: b, newShape: b.ArgInts("shape", nil), hasShape: b.HasArg("shape")}
	if b.NumInputs() == 2 && op.hasShape {
		return nil, b.Errorf("the new shape is given by input 1 (%q); do not also pass the argument shape", b.InputName(1))
	}
	if b.NumInputs() == 1 && !op.hasShape {
		return nil, b.Errorf("argument shape is missing (give it, or the new shape as input 1)")
	}
	return op, nil
}

func (o *reshapeOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	oldType := blob.Int64
	target := o.target[:0]
	if o.NumInputs() == 2 {
		ns, err := o.Input(1)
		if err != nil {
			return err
		}
		if ns.NumDims() != 1 {
			return o.Errorf("new shape input 1 (%q) must be 1-D, has shape %v", o.InputName(1), ns.Dims())
		}
		switch ns.DataType() {
		case blob.Int32:
			for _, v := range blob.Data[int32](ns) {
				target = append(target, int64(v))
			}
		case blob.Int64:
			target = append(target, blob.Data[int64](ns)...)
		default:
			return o.Errorf("new shape input 1 (%q) has type %v, want INT32 or INT64", o.InputName(1), ns.DataType())
		}
		oldType = ns.DataType()
	} else {
		target = append(target, o.newShape...)
	}
	o.target = target

	total := x.Size()
	shape := ints(o.shape, len(target))
	o.shape = shape
	unknown, size := -1, 1
	for i, d := range target {
		switch {
		case d < -1:
			return o.Errorf("new shape %v for input 0 (%q) has the negative dimension %d", target, o.InputName(0), d)
		case d == 0 && total != 0 && i < x.NumDims():
			// Caffe1 compatibility: 0 copies the input dimension.
			shape[i] = x.Dim(i)
		case d == -1:
			if unknown != -1 {
				return o.Errorf("new shape %v for input 0 (%q) has more than one -1 dimension", target, o.InputName(0))
			}
			unknown = i
			shape[i] = -1
			continue
		default:
			shape[i] = int(d)
		}
		if shape[i] > 0 && size > (1<<62)/shape[i] {
			return o.Errorf("new shape %v for input 0 (%q) is too large", target, o.InputName(0))
		}
		size *= shape[i]
	}
	switch {
	case size == 0 && total != 0:
		return o.Errorf("cannot reshape input 0 (%q) of shape %v (%d elements) to the empty shape %v", o.InputName(0), x.Dims(), total, target)
	case unknown != -1 && total == 0:
		shape[unknown] = 0
	case unknown != -1:
		if total%size != 0 {
			return o.Errorf("new shape %v does not agree with input 0 (%q) of shape %v: %d elements are not a multiple of %d", target, o.InputName(0), x.Dims(), total, size)
		}
		shape[unknown] = total / size
	case total != size:
		return o.Errorf("new shape %v does not agree with input 0 (%q) of shape %v: %d elements, not %d", target, o.InputName(0), x.Dims(), total, size)
	}

	// Write old_shape before reshaping: in place, y is x.
	nd := x.NumDims()
	o.oldDims = append(o.oldDims[:0], nd)
	old := o.Output(1)
	if err := old.Init(oldType, o.oldDims...); err != nil {
		return err
	}
	if oldType == blob.Int32 {
		for i, d := range x.Dims() {
			blob.Data[int32](old)[i] = int32(d)
		}
	} else {
		for i, d := range x.Dims() {
			blob.Data[int64](old)[i] = int64(d)
		}
	}
	return copyReshaped(o.Output(0), x, shape)
}

type flattenOp struct {
	*operators.Base
	axis  int
	shape []int
}

func (o *flattenOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	axis := o.axis
	if axis < 0 {
		axis += x.NumDims()
	}
	if axis < 0 || axis > x.NumDims() {
		return o.Errorf("axis %d is out of range for input 0 (%q) of shape %v: the rank must be >= axis", o.axis, o.InputName(0), x.Dims())
	}
	o.shape = append(o.shape[:0], x.SizeToDim(axis), x.SizeFromDim(axis))
	return copyReshaped(o.Output(0), x, o.shape)
}

type flattenToVecOp struct {
	*operators.Base
	shape []int
}

func (o *flattenToVecOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	if x.NumDims() < 1 {
		return o.Errorf("input 0 (%q) is a scalar; the rank must be >= 1", o.InputName(0))
	}
	o.shape = append(o.shape[:0], x.Size())
	return copyReshaped(o.Output(0), x, o.shape)
}

type resizeLikeOp struct{ *operators.Base }

func (o *resizeLikeOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	like, err := o.Input(1)
	if err != nil {
		return err
	}
	if x.Size() != like.Size() {
		return o.Errorf("input 0 (%q) of shape %v has %d elements, input 1 (%q) of shape %v has %d",
			o.InputName(0), x.Dims(), x.Size(), o.InputName(1), like.Dims(), like.Size())
	}
	return copyReshaped(o.Output(0), x, like.Dims())
}

// squeezeOp is ExpandDims (expand) or Squeeze.
type squeezeOp struct {
	*operators.Base
	expand bool
	dims   []int // sorted, unique, non-negative
	shape  []int
}

func newSqueeze(b *operators.Base, expand bool) (operators.Operator, error) {
	raw := b.ArgInts("dims", nil)
	if len(raw) == 0 {
		return nil, b.Errorf("argument dims must be provided")
	}
	dims := make([]int, len(raw))
	for i, d := range raw {
		dims[i] = int(d)
	}
	slices.Sort(dims)
	dims = slices.Compact(dims)
	if dims[0] < 0 {
		return nil, b.Errorf("argument dims %v: dimension ids must be non-negative", raw)
	}
	return &squeezeOp{Base: b, expand: expand, dims: dims}, nil
}

func (o *squeezeOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	nd, last := x.NumDims(), o.dims[len(o.dims)-1]
	shape := o.shape[:0]
	if o.expand {
		// last ≥ the output's rank, written so that no dims value overflows.
		if last >= nd+len(o.dims) {
			return o.Errorf("input 0 (%q) of shape %v needs more than %d dimensions for dims %v", o.InputName(0), x.Dims(), last-len(o.dims), o.dims)
		}
		shape = append(shape, x.Dims()...)
		for _, d := range o.dims {
			shape = slices.Insert(shape, d, 1)
		}
	} else {
		if nd <= last {
			return o.Errorf("input 0 (%q) of shape %v needs more than %d dimensions for dims %v", o.InputName(0), x.Dims(), last, o.dims)
		}
		j := 0
		for i, d := range x.Dims() {
			if j < len(o.dims) && o.dims[j] == i {
				if d != 1 {
					return o.Errorf("dimension %d of input 0 (%q) of shape %v must be 1 instead of %d", i, o.InputName(0), x.Dims(), d)
				}
				j++
				continue
			}
			shape = append(shape, d)
		}
	}
	o.shape = shape
	return copyReshaped(o.Output(0), x, shape)
}

type shapeOp struct {
	*operators.Base
	axes []int64
	dims []int
}

func (o *shapeOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	nd := x.NumDims()
	for _, a := range o.axes {
		if a < 0 || int(a) >= nd {
			return o.Errorf("axis %d in axes %v is out of range for input 0 (%q) of shape %v", a, o.axes, o.InputName(0), x.Dims())
		}
	}
	n := nd
	if len(o.axes) > 0 {
		n = len(o.axes)
	}
	o.dims = append(o.dims[:0], n)
	y := o.Output(0)
	if err := y.Init(blob.Int64, o.dims...); err != nil {
		return err
	}
	out := blob.Data[int64](y)
	if len(o.axes) == 0 {
		for i, d := range x.Dims() {
			out[i] = int64(d)
		}
		return nil
	}
	for i, a := range o.axes {
		out[i] = int64(x.Dim(int(a)))
	}
	return nil
}
