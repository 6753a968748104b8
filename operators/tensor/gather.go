package tensor

import (
	"fmt"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "Gather", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{
			{Name: "axis", Default: 0, Doc: "axis of DATA that INDICES index; negative counts from the end"},
			{Name: "wrap_indices", Doc: "negative indices count from the end (default: only when axis is 0)"},
			{Name: "dense_gradient", Default: 0, Doc: "1 makes the gradient dense (SparseToDense) instead of a slice"},
		},
		Doc: "Gathers slices of DATA along axis at INDICES (INT32 or INT64): the output shape is DATA.dims[:axis] + INDICES.dims + DATA.dims[axis+1:].",
	}, newGather)
	operators.MustRegisterGradient("Gather", gatherGradient)

	operators.MustRegisterCPU(operators.Schema{
		Type: "BatchGatherGradient", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{{Name: "axis", Default: 1, Doc: "the axis the forward Gather indexed"}},
		Doc:  "Gradient of Gather along an axis > 0: (DATA, INDICES, dOUTPUT) -> dDATA, accumulating repeated indices.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &batchGatherGradOp{Base: b, axis: int(b.ArgInt("axis", 1))}, nil
	})
}

// gatherGradient follows Caffe2: along axis 0 the gradient of DATA is the
// slice (INDICES, dOUTPUT) with no operator, or SparseToDense(INDICES,
// dOUTPUT, DATA) with dense_gradient; along another axis it is
// BatchGatherGradient(DATA, INDICES, dOUTPUT).
func gatherGradient(g *operators.GradientContext) error {
	dense := g.ArgInt("dense_gradient", 0) != 0
	axis := g.ArgInt("axis", 0)
	if axis == 0 {
		if dense {
			g.Op("SparseToDense", []string{g.I(1), g.GO(0), g.I(0)}, []string{g.GI(0)})
			return nil
		}
		g.SetGradient(0, operators.Gradient{Indices: g.I(1), Values: g.GO(0)})
		return nil
	}
	if g.HasArg("dense_gradient") && !dense {
		return fmt.Errorf("Gather with axis %d must use dense_gradient", axis)
	}
	g.Op("BatchGatherGradient", []string{g.I(0), g.I(1), g.GO(0)}, []string{g.GI(0)}, netdef.ArgInt("axis", axis))
	return nil
}

type gatherOp struct {
	*operators.Base
	axis int
	wrap bool
	idx  []int
	dims []int
}

func newGather(b *operators.Base) (operators.Operator, error) {
	if b.ArgBool("match_outer", false) {
		return nil, b.Errorf("argument match_outer is not supported")
	}
	op := &gatherOp{Base: b, axis: int(b.ArgInt("axis", 0))}
	op.wrap = op.axis == 0
	if b.HasArg("wrap_indices") {
		op.wrap = b.ArgBool("wrap_indices", false)
	}
	return op, nil
}

// gatherIndices reads INDICES input i into dst, wrapping negative values
// when wrap is set, and checks them against axisDim.
func gatherIndices(b *operators.Base, dst []int, i int, wrap bool, axisDim int, dataName string) ([]int, error) {
	ind, err := b.Input(i)
	if err != nil {
		return dst, err
	}
	dst, ok := readIndices(dst[:0], ind)
	if !ok {
		return dst, b.Errorf("INDICES input %d (%q) has type %v, want INT32 or INT64", i, b.InputName(i), ind.DataType())
	}
	for k, v := range dst {
		if wrap && v < 0 {
			v += axisDim
		}
		if v < 0 || v >= axisDim {
			return dst, b.Errorf("INDICES input %d (%q) element %d is %d, out of range for %q, whose dimension has size %d",
				i, b.InputName(i), k, dst[k], dataName, axisDim)
		}
		dst[k] = v
	}
	return dst, nil
}

func (o *gatherOp) Run() error {
	data, err := o.Input(0)
	if err != nil {
		return err
	}
	ind, err := o.Input(1)
	if err != nil {
		return err
	}
	axis, ok := operators.CanonicalAxis(o.axis, data.NumDims())
	if !ok {
		return o.Errorf("axis %d is out of range for DATA input 0 (%q) of shape %v", o.axis, o.InputName(0), data.Dims())
	}
	axisDim := data.Dim(axis)
	if axisDim == 0 {
		// An empty batch gathers nothing and keeps DATA's shape.
		o.dims = append(o.dims[:0], data.Dims()...)
	} else {
		o.dims = append(append(append(o.dims[:0], data.Dims()[:axis]...), ind.Dims()...), data.Dims()[axis+1:]...)
	}
	y := o.Output(0)
	if err := y.Init(data.DataType(), o.dims...); err != nil {
		return err
	}
	if y.Size() == 0 {
		return nil
	}
	if o.idx, err = gatherIndices(o.Base, o.idx, 1, o.wrap, axisDim, o.InputName(0)); err != nil {
		return err
	}
	elemsOf(data.DataType()).gather(y, data, o.idx, data.SizeToDim(axis), axisDim, data.SizeFromDim(axis+1))
	return nil
}

type batchGatherGradOp struct {
	*operators.Base
	axis int
	idx  []int
}

func (o *batchGatherGradOp) Run() error {
	data, err := o.Input(0)
	if err != nil {
		return err
	}
	grad, err := o.Input(2)
	if err != nil {
		return err
	}
	nd := data.NumDims()
	if nd < 2 {
		return o.Errorf("DATA input 0 (%q) of shape %v must be at least 2-D", o.InputName(0), data.Dims())
	}
	axis, ok := operators.CanonicalAxis(o.axis, nd)
	if !ok {
		return o.Errorf("axis %d is out of range for DATA input 0 (%q) of shape %v", o.axis, o.InputName(0), data.Dims())
	}
	if grad.DataType() != data.DataType() {
		return o.Errorf("gradient input 2 (%q) has type %v, DATA input 0 (%q) has type %v", o.InputName(2), grad.DataType(), o.InputName(0), data.DataType())
	}
	a := arithOf(data.DataType())
	if a == nil {
		return o.Errorf("DATA input 0 (%q) has type %v; the gradient needs a numeric type", o.InputName(0), data.DataType())
	}
	for k := 0; k < axis; k++ {
		if k >= grad.NumDims() || grad.Dim(k) != data.Dim(k) {
			return o.Errorf("gradient input 2 (%q) of shape %v and DATA input 0 (%q) of shape %v differ before axis %d",
				o.InputName(2), grad.Dims(), o.InputName(0), data.Dims(), axis)
		}
	}
	y := o.Output(0)
	if err := y.Init(data.DataType(), data.Dims()...); err != nil {
		return err
	}
	if y.Size() == 0 {
		return nil
	}
	if o.idx, err = gatherIndices(o.Base, o.idx, 1, false, data.Dim(axis), o.InputName(0)); err != nil {
		return err
	}
	outer, block := data.SizeToDim(axis), data.SizeFromDim(axis+1)
	if want := outer * len(o.idx) * block; grad.Size() != want {
		return o.Errorf("gradient input 2 (%q) of shape %v has %d elements, want %d for DATA of shape %v and %d indices",
			o.InputName(2), grad.Dims(), grad.Size(), want, data.Dims(), len(o.idx))
	}
	a.scatterAdd(y, grad, o.idx, outer, data.Dim(axis), block)
	return nil
}
