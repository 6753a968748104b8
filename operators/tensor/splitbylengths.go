package tensor

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "SplitByLengths", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: operators.Unbounded,
		Args: []operators.ArgSpec{
			{Name: "axis", Default: 0, Doc: "axis to split on; negative counts from the end"},
			{Name: "use_scaling", Default: false, Doc: "scale the lengths by (size along axis) / sum(lengths), which must divide"},
		},
		Doc: "SplitByLengths(input, lengths) -> (out_1, …): the INT32 lengths fall into one equal group per output; output i " +
			"takes the sum of group i along axis. Without use_scaling the lengths add up to the size along axis.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &splitByLengthsOp{Base: b, axis: int(b.ArgInt("axis", 0)), scaling: b.ArgBool("use_scaling", false)}, nil
	})
	operators.MustRegisterGradient("SplitByLengths", splitByLengthsGradient)
	operators.MustRegisterShapeFunc("SplitByLengths", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		x := in[0]
		out := make([]operators.TensorShape, b.NumOutputs())
		if x.Unknown {
			for i := range out {
				out[i] = operators.UnknownShape
			}
			return out, nil
		}
		axis, ok := operators.CanonicalAxis(int(b.ArgInt("axis", 0)), x.Rank())
		if !ok {
			return nil, b.InputShapeError(in, "axis %d is out of range", b.ArgInt("axis", 0))
		}
		for i := range out {
			dims := append([]int{}, x.Dims...)
			dims[axis] = operators.AnyDim
			out[i] = operators.Shape(x.Type, dims...)
		}
		return out, nil
	})
}

// splitByLengthsGradient is Caffe2's: Concat(dY_1, …) -> (dX, _dX_dims)
// over the outputs that have a gradient, with the forward arguments. When
// the forward operator has no axis argument, Concat gets axis 0, the
// default of SplitByLengths: Caffe2's Concat would fall back on its own
// default (axis 1, from order).
func splitByLengthsGradient(g *operators.GradientContext) error {
	var grads []string
	for i := 0; i < g.NumOutputs(); i++ {
		if g.HasGO(i) {
			grads = append(grads, g.GO(i))
		}
	}
	if len(grads) == 0 {
		return nil
	}
	var args []*netdef.Argument
	if !g.HasArg("axis") {
		args = append(args, netdef.ArgInt("axis", 0))
	}
	gi := g.GI(0)
	g.Op("Concat", grads, []string{gi, "_" + gi + "_dims"}, args...)
	return nil
}

// splitByLengthsOp is SplitByLengths.
type splitByLengthsOp struct {
	*operators.Base
	axis    int
	scaling bool
	dims    []int
}

func (o *splitByLengthsOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	lt, err := o.InputOf(1, blob.Int32)
	if err != nil {
		return err
	}
	if lt.NumDims() != 1 {
		return o.Errorf("lengths (%q) must be a vector, has shape %v", o.InputName(1), lt.Dims())
	}
	lengths, nOut := blob.Data[int32](lt), o.NumOutputs()
	if len(lengths)%nOut != 0 {
		return o.Errorf("len(lengths) %d (%q) should be divisible by the number of outputs %d", len(lengths), o.InputName(1), nOut)
	}
	axis, ok := operators.CanonicalAxis(o.axis, x.NumDims())
	if !ok {
		return o.Errorf("axis %d is out of range for input 0 (%q) of shape %v", o.axis, o.InputName(0), x.Dims())
	}
	channels, sum := x.Dim(axis), 0
	for i, l := range lengths {
		if l < 0 {
			return o.Errorf("length %d (%q) is negative: %d", i, o.InputName(1), l)
		}
		sum += int(l)
	}
	mult := 1
	switch {
	case o.scaling && sum > 0:
		if channels%sum != 0 {
			return o.Errorf("input channels %d (input 0 %q of shape %v, axis %d) should be divisible by the sum of the lengths %d",
				channels, o.InputName(0), x.Dims(), axis, sum)
		}
		mult = channels / sum
	case o.scaling:
	case sum != channels:
		return o.Errorf("input channels should be equal to the sum of the lengths: input 0 (%q) of shape %v has %d along axis %d, the lengths (%q) add up to %d",
			o.InputName(0), x.Dims(), channels, axis, o.InputName(1), sum)
	}
	group := len(lengths) / nOut
	before, after := x.SizeToDim(axis), x.SizeFromDim(axis+1)
	e := elemsOf(x.DataType())
	o.dims = append(o.dims[:0], x.Dims()...)
	off := 0
	for i := range nOut {
		s := 0
		for _, l := range lengths[i*group : (i+1)*group] {
			s += int(l)
		}
		s *= mult
		o.dims[axis] = s
		y := o.Output(i)
		if y == x {
			return o.Errorf("output %d (%q) is the input: SplitByLengths cannot work in place", i, o.OutputName(i))
		}
		if err := y.Init(x.DataType(), o.dims...); err != nil {
			return o.Errorf("output %d (%q): %w", i, o.OutputName(i), err)
		}
		w := s * after
		if y.Size() > 0 {
			e.copyMatrix(y, 0, w, x, off, channels*after, before, w)
		}
		off += w
	}
	return nil
}
