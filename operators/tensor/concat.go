package tensor

import (
	"strings"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	concatArgs := []operators.ArgSpec{
		{Name: "axis", Default: -1, Doc: "axis to concatenate on; negative counts from the end; when absent it comes from order"},
		{Name: "order", Default: "NCHW", Doc: "NCHW concatenates on axis 1, NHWC on axis 3 (used when axis is absent)"},
		{Name: "add_axis", Default: 0, Doc: "1 inserts axis as a new dimension (only with axis)"},
	}
	splitArgs := []operators.ArgSpec{
		{Name: "axis", Doc: "axis to split on; negative counts from the end; when absent it comes from order"},
		{Name: "split", Doc: "length of each output along axis (default: equal parts)"},
		{Name: "order", Default: "NCHW", Doc: "NCHW splits on axis 1, NHWC on axis 3 (used when axis is absent)"},
		{Name: "add_axis", Default: 0, Doc: "1 removes axis from the outputs (only with axis)"},
	}
	for _, typ := range []string{"Concat", "DepthConcat"} {
		operators.MustRegisterCPU(operators.Schema{
			Type: typ, MinInputs: 1, MaxInputs: operators.Unbounded, MinOutputs: 2, MaxOutputs: 2,
			Args: concatArgs,
			Doc:  "Concatenates the inputs along an axis; split_info gets each input's INT32 size along it.",
		}, newConcat)
		operators.MustRegisterGradient(typ, concatGradient)
	}
	for _, typ := range []string{"Split", "DepthSplit"} {
		operators.MustRegisterCPU(operators.Schema{
			Type: typ, MinInputs: 1, MaxInputs: 2, MinOutputs: 1, MaxOutputs: operators.Unbounded,
			Args: splitArgs,
			Doc:  "Splits the input along an axis into the outputs, by the split argument, the INT32 or INT64 input 1, or equally.",
		}, newSplit)
		operators.MustRegisterGradient(typ, splitGradient)
	}
}

// concatGradient is Split(dY, split_info) -> (dX0, dX1, …).
func concatGradient(g *operators.GradientContext) error {
	if !g.HasGO(0) {
		return nil
	}
	grads := make([]string, g.NumInputs())
	for i := range grads {
		grads[i] = g.GI(i)
	}
	g.Op("Split", []string{g.GO(0), g.O(1)}, grads)
	return nil
}

// splitGradient is Concat(dY0, dY1, …) -> (dX, _dX_dims) over the outputs
// that have a gradient.
func splitGradient(g *operators.GradientContext) error {
	var grads []string
	for i := 0; i < g.NumOutputs(); i++ {
		if g.HasGO(i) {
			grads = append(grads, g.GO(i))
		}
	}
	if len(grads) == 0 {
		return nil
	}
	gi := g.GI(0)
	g.Op("Concat", grads, []string{gi, "_" + gi + "_dims"})
	return nil
}

// splitAxis reads axis and add_axis, or derives the axis from order.
func splitAxis(b *operators.Base) (axis int, addAxis bool, err error) {
	if b.HasArg("axis") && b.HasArg("order") {
		return 0, false, b.Errorf("give either the argument axis or order, not both")
	}
	if b.HasArg("axis") {
		return int(b.ArgInt("axis", -1)), b.ArgInt("add_axis", 0) != 0, nil
	}
	switch order := b.ArgString("order", "NCHW"); strings.ToUpper(order) {
	case "NCHW":
		return 1, false, nil
	case "NHWC":
		return 3, false, nil
	default:
		return 0, false, b.Errorf("unsupported storage order %q (want NCHW or NHWC)", order)
	}
}

type concatOp struct {
	*operators.Base
	axis    int
	addAxis bool
	dims    []int
}

func newConcat(b *operators.Base) (operators.Operator, error) {
	axis, addAxis, err := splitAxis(b)
	if err != nil {
		return nil, err
	}
	return &concatOp{Base: b, axis: axis, addAxis: addAxis}, nil
}

func (o *concatOp) Run() error {
	x0, err := o.Input(0)
	if err != nil {
		return err
	}
	nd := x0.NumDims()
	adj := nd
	if o.addAxis {
		adj++
	}
	axis, ok := operators.CanonicalAxis(o.axis, adj)
	if !ok {
		return o.Errorf("axis %d is out of range for input 0 (%q) of shape %v", o.axis, o.InputName(0), x0.Dims())
	}
	n := o.NumInputs()
	for i := 1; i < n; i++ {
		xi, err := o.Input(i)
		if err != nil {
			return err
		}
		if xi.DataType() != x0.DataType() {
			return o.Errorf("input %d (%q) has type %v, but input 0 (%q) has type %v; all inputs must have the same type",
				i, o.InputName(i), xi.DataType(), o.InputName(0), x0.DataType())
		}
		if xi.NumDims() != nd {
			return o.Errorf("input %d (%q) of shape %v and input 0 (%q) of shape %v have different ranks",
				i, o.InputName(i), xi.Dims(), o.InputName(0), x0.Dims())
		}
		for j, d := range x0.Dims() {
			if (j != axis || o.addAxis) && xi.Dim(j) != d {
				return o.Errorf("input %d (%q) of shape %v does not match input 0 (%q) of shape %v at dimension %d; only axis %d may differ (and none with add_axis)",
					i, o.InputName(i), xi.Dims(), o.InputName(0), x0.Dims(), j, axis)
			}
		}
	}

	o.dims = append(o.dims[:0], n)
	info := o.Output(1)
	if err := info.Init(blob.Int32, o.dims...); err != nil {
		return err
	}
	sizes := blob.Data[int32](info)
	total := 0
	for i := range sizes {
		c := 1
		if !o.addAxis {
			xi, _ := o.Input(i)
			c = xi.Dim(axis)
		}
		sizes[i] = int32(c)
		total += c
	}
	o.dims = append(o.dims[:0], x0.Dims()...)
	before, after := x0.SizeToDim(axis), 1
	if o.addAxis {
		after = x0.SizeFromDim(axis)
		o.dims = append(o.dims, 0)
		copy(o.dims[axis+1:], o.dims[axis:])
	} else {
		after = x0.SizeFromDim(axis + 1)
	}
	o.dims[axis] = total
	y := o.Output(0)
	if err := y.Init(x0.DataType(), o.dims...); err != nil {
		return err
	}
	e := elemsOf(x0.DataType())
	off := 0
	for i, c := range sizes {
		xi, _ := o.Input(i)
		w := int(c) * after
		e.copyMatrix(y, off, total*after, xi, 0, w, before, w)
		off += w
	}
	return nil
}

type splitOp struct {
	*operators.Base
	axis    int
	addAxis bool
	split   []int
	sizes   []int
	dims    []int
}

func newSplit(b *operators.Base) (operators.Operator, error) {
	axis, addAxis, err := splitAxis(b)
	if err != nil {
		return nil, err
	}
	op := &splitOp{Base: b, axis: axis, addAxis: addAxis}
	for _, s := range b.ArgInts("split", nil) {
		op.split = append(op.split, int(s))
	}
	if b.NumInputs() == 2 && len(op.split) > 0 {
		return nil, b.Errorf("the split is given by input 1 (%q); do not also pass the argument split", b.InputName(1))
	}
	if b.NumInputs() == 1 && len(op.split) > 0 && len(op.split) != b.NumOutputs() {
		return nil, b.Errorf("argument split %v has %d entries for %d outputs", op.split, len(op.split), b.NumOutputs())
	}
	return op, nil
}

func (o *splitOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	axis, ok := operators.CanonicalAxis(o.axis, x.NumDims())
	if !ok {
		return o.Errorf("axis %d is out of range for input 0 (%q) of shape %v", o.axis, o.InputName(0), x.Dims())
	}
	channels, nOut := x.Dim(axis), o.NumOutputs()
	sizes := o.sizes[:0]
	switch {
	case o.NumInputs() == 2:
		st, err := o.Input(1)
		if err != nil {
			return err
		}
		if st.Size() != nOut {
			return o.Errorf("split input 1 (%q) has %d elements for %d outputs", o.InputName(1), st.Size(), nOut)
		}
		if sizes, ok = readIndices(sizes, st); !ok {
			return o.Errorf("split input 1 (%q) has type %v, want INT32 or INT64", o.InputName(1), st.DataType())
		}
	case len(o.split) == 0:
		if channels%nOut != 0 {
			return o.Errorf("input 0 (%q) of shape %v has %d elements along axis %d, not divisible into %d equal outputs",
				o.InputName(0), x.Dims(), channels, axis, nOut)
		}
		for range nOut {
			sizes = append(sizes, channels/nOut)
		}
	default:
		sizes = append(sizes, o.split...)
	}
	o.sizes = sizes
	sum := 0
	for _, s := range sizes {
		if s < 0 {
			return o.Errorf("split sizes %v have a negative entry", sizes)
		}
		sum += s
	}
	if o.addAxis {
		sum = nOut
	}
	if sum != channels {
		return o.Errorf("split sizes %v add up to %d, but input 0 (%q) of shape %v has %d along axis %d",
			sizes, sum, o.InputName(0), x.Dims(), channels, axis)
	}

	o.dims = append(o.dims[:0], x.Dims()...)
	if o.addAxis {
		o.dims = append(o.dims[:axis], o.dims[axis+1:]...)
	}
	before, after := x.SizeToDim(axis), x.SizeFromDim(axis+1)
	e := elemsOf(x.DataType())
	off := 0
	for i, s := range sizes {
		if o.addAxis {
			s = 1
		} else {
			o.dims[axis] = s
		}
		y := o.Output(i)
		if err := y.Init(x.DataType(), o.dims...); err != nil {
			return err
		}
		w := s * after
		e.copyMatrix(y, 0, w, x, off, channels*after, before, w)
		off += w
	}
	return nil
}
