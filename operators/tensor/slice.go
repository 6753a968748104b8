package tensor

import (
	"slices"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	sliceArgs := []operators.ArgSpec{
		{Name: "starts", Doc: "start of the slice in each leading dimension (or give them as input 1)"},
		{Name: "ends", Doc: "end (exclusive) of the slice in each leading dimension; -1 is the end of the dimension (or input 2)"},
	}
	operators.MustRegisterCPU(operators.Schema{
		Type: "Slice", MinInputs: 1, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1, Args: sliceArgs,
		InputsCheck: func(n int) bool { return n == 1 || n == 3 },
		Doc: "Slice(data, [starts, ends]) -> output: data[starts[0]:ends[0], starts[1]:ends[1], …] over the first " +
			"len(starts) dimensions. A negative index i means dim + 1 + i, so -1 is the end; indices past the end are clamped.",
	}, func(b *operators.Base) (operators.Operator, error) { return newSlice(b, false) })
	operators.MustRegisterCPU(operators.Schema{
		Type: "SliceGradient", MinInputs: 2, MaxInputs: 4, MinOutputs: 1, MaxOutputs: 1, Args: sliceArgs,
		InputsCheck: func(n int) bool { return n == 2 || n == 4 },
		Doc:         "SliceGradient(data, [starts, ends], dY) -> dX: dX has data's shape, dY in the slice and zeros elsewhere.",
	}, func(b *operators.Base) (operators.Operator, error) { return newSlice(b, true) })
	operators.MustRegisterGradient("Slice", func(g *operators.GradientContext) error {
		ins := []string{g.I(0)}
		if g.NumInputs() > 1 {
			ins = append(ins, g.I(1), g.I(2))
		}
		g.Op("SliceGradient", append(ins, g.GO(0)), []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterShapeFunc("Slice", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		x := in[0]
		if x.Unknown {
			return nil, nil
		}
		dims := append([]int{}, x.Dims...)
		starts, ends := b.ArgInts("starts", nil), b.ArgInts("ends", nil)
		if len(in) > 1 || len(starts) != len(ends) || len(starts) > len(dims) {
			for i := range dims {
				if len(in) > 1 || i < len(starts) {
					dims[i] = operators.AnyDim
				}
			}
			return []operators.TensorShape{operators.Shape(x.Type, dims...)}, nil
		}
		for i := range starts {
			if dims[i] < 0 {
				continue
			}
			s, e, ok := sliceRange(dims[i], int(starts[i]), int(ends[i]))
			if !ok {
				return nil, b.InputShapeError(in, "slice [%d, %d) is out of range for dimension %d", starts[i], ends[i], i)
			}
			dims[i] = e - s
		}
		return []operators.TensorShape{operators.Shape(x.Type, dims...)}, nil
	})
	operators.MustRegisterShapeFunc("SliceGradient", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		return []operators.TensorShape{in[0].WithType(in[len(in)-1].Type)}, nil
	})
}

// sliceRange maps Caffe2's start and end of one dimension of size dim to
// [s, e): negative values count from dim + 1, values past dim are clamped.
func sliceRange(dim, start, end int) (s, e int, ok bool) {
	if dim == 0 {
		return 0, 0, true
	}
	if start < 0 {
		start += dim + 1
	}
	if end < 0 {
		end += dim + 1
	}
	start, end = min(start, dim), min(end, dim)
	return start, end, start >= 0 && end >= start
}

// sliceOp is Slice, or SliceGradient when grad is set.
type sliceOp struct {
	*operators.Base
	grad               bool
	fromArgs           bool // starts and ends are arguments, not inputs
	argStarts, argEnds []int
	inStarts, inEnds   []int // scratch for starts and ends given as inputs
	starts, ends, dims []int
	idx                []int
}

func newSlice(b *operators.Base, grad bool) (*sliceOp, error) {
	o := &sliceOp{Base: b, grad: grad}
	o.fromArgs = (!grad && b.NumInputs() == 1) || (grad && b.NumInputs() == 2)
	if o.fromArgs {
		if !b.HasArg("starts") || !b.HasArg("ends") {
			return nil, b.Errorf("arguments starts and ends are required when they are not inputs")
		}
		for _, v := range b.ArgInts("starts", nil) {
			o.argStarts = append(o.argStarts, int(v))
		}
		for _, v := range b.ArgInts("ends", nil) {
			o.argEnds = append(o.argEnds, int(v))
		}
		if len(o.argStarts) != len(o.argEnds) {
			return nil, b.Errorf("arguments starts %v and ends %v differ in length", o.argStarts, o.argEnds)
		}
	}
	return o, nil
}

// bounds reads starts and ends (arguments or inputs 1 and 2) into o.starts
// and o.ends, one per dimension of data.
func (o *sliceOp) bounds(data *blob.Tensor) error {
	starts, ends := o.argStarts, o.argEnds
	if !o.fromArgs {
		var ok bool
		for k, p := range [2]*[]int{&o.inStarts, &o.inEnds} {
			t, err := o.Input(1 + k)
			if err != nil {
				return err
			}
			if t.NumDims() != 1 {
				return o.Errorf("input %d (%q) must be a vector, has shape %v", 1+k, o.InputName(1+k), t.Dims())
			}
			if *p, ok = readIndices((*p)[:0], t); !ok {
				return o.Errorf("input %d (%q) has type %v, want INT32 or INT64", 1+k, o.InputName(1+k), t.DataType())
			}
		}
		starts, ends = o.inStarts, o.inEnds
		if len(starts) != len(ends) {
			return o.Errorf("starts (%q) has %d elements, ends (%q) %d", o.InputName(1), len(starts), o.InputName(2), len(ends))
		}
	}
	dims := data.Dims()
	if len(starts) > len(dims) {
		return o.Errorf("starts has %d elements, more than the %d dimensions of data (%q) of shape %v", len(starts), len(dims), o.InputName(0), dims)
	}
	o.starts, o.ends, o.dims = o.starts[:0], o.ends[:0], o.dims[:0]
	for i, d := range dims {
		s, e, ok := 0, d, true
		if i < len(starts) {
			if s, e, ok = sliceRange(d, starts[i], ends[i]); !ok {
				return o.Errorf("slice [%d, %d) is out of range for dimension %d of data (%q) of shape %v", starts[i], ends[i], i, o.InputName(0), dims)
			}
		}
		o.starts, o.ends, o.dims = append(o.starts, s), append(o.ends, e), append(o.dims, e-s)
	}
	return nil
}

func (o *sliceOp) Run() error {
	data, err := o.Input(0)
	if err != nil {
		return err
	}
	if err := o.bounds(data); err != nil {
		return err
	}
	if !o.grad {
		y := o.Output(0)
		if y == data {
			return o.Errorf("output %q is input 0: Slice cannot work in place", o.OutputName(0))
		}
		if err := y.Init(data.DataType(), o.dims...); err != nil {
			return o.Errorf("output %q of shape %v: %w", o.OutputName(0), o.dims, err)
		}
		if y.Size() > 0 {
			o.copy(y, data, data.Dims(), false)
		}
		return nil
	}
	dy, err := o.Input(o.NumInputs() - 1)
	if err != nil {
		return err
	}
	if !slices.Equal(dy.Dims(), o.dims) {
		return o.Errorf("dY (%q) has shape %v; the slice of data (%q) of shape %v has shape %v", o.InputName(o.NumInputs()-1), dy.Dims(), o.InputName(0), data.Dims(), o.dims)
	}
	dx := o.Output(0)
	if dx == dy || dx == data {
		return o.Errorf("output %q is an input: SliceGradient cannot work in place", o.OutputName(0))
	}
	if err := dx.Init(dy.DataType(), data.Dims()...); err != nil {
		return o.Errorf("output %q: %w", o.OutputName(0), err)
	}
	if dx.Size() == 0 {
		return nil
	}
	zeroTensor(dx)
	if dy.Size() > 0 {
		o.copy(dx, dy, data.Dims(), true)
	}
	return nil
}

// copy moves the slice, row by row over the last dimension: from the full
// tensor (of dims full) into the sliced one, or back when scatter is set.
// The slice must not be empty.
func (o *sliceOp) copy(dst, src *blob.Tensor, full []int, scatter bool) {
	e := elemsOf(src.DataType())
	n := len(full)
	if n == 0 {
		e.copyMatrix(dst, 0, 1, src, 0, 1, 1, 1)
		return
	}
	// Strides of the full tensor.
	o.idx = append(o.idx[:0], make([]int, 2*n)...)
	stride, pos := o.idx[:n], o.idx[n:]
	st := 1
	for i := n - 1; i >= 0; i-- {
		stride[i] = st
		st *= full[i]
	}
	off := 0
	for i, s := range o.starts {
		off += s * stride[i]
	}
	inner := o.dims[n-1]
	for row := range o.size() / inner {
		if scatter {
			e.copyMatrix(dst, off, inner, src, row*inner, inner, 1, inner)
		} else {
			e.copyMatrix(dst, row*inner, inner, src, off, inner, 1, inner)
		}
		// Advance the odometer over the sliced outer dimensions.
		for k := n - 2; k >= 0; k-- {
			pos[k]++
			off += stride[k]
			if pos[k] < o.dims[k] {
				break
			}
			off -= stride[k] * o.dims[k]
			pos[k] = 0
		}
	}
}

// size is the number of elements of the slice.
func (o *sliceOp) size() int {
	n := 1
	for _, d := range o.dims {
		n *= d
	}
	return n
}

// zeroTensor sets every element of t to its type's zero value.
func zeroTensor(t *blob.Tensor) {
	switch t.DataType() {
	case blob.Float32:
		clear(blob.Data[float32](t))
	case blob.Float64:
		clear(blob.Data[float64](t))
	case blob.Float16:
		clear(blob.Data[blob.Half](t))
	case blob.Int8:
		clear(blob.Data[int8](t))
	case blob.Int16:
		clear(blob.Data[int16](t))
	case blob.Int32:
		clear(blob.Data[int32](t))
	case blob.Int64:
		clear(blob.Data[int64](t))
	case blob.Uint8:
		clear(blob.Data[uint8](t))
	case blob.Uint16:
		clear(blob.Data[uint16](t))
	case blob.Bool:
		clear(blob.Data[bool](t))
	case blob.String:
		clear(blob.Data[string](t))
	}
}
