package sequence

import (
	"math"
	"slices"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "BooleanMask", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 2,
		Doc: "BooleanMask(data, mask) -> (masked_data, [masked_indices]): the rows of data (its first dimension) where the " +
			"BOOL vector mask is true, and their INT64 indices.",
	}, func(b *operators.Base) (operators.Operator, error) { return &booleanMaskOp{Base: b}, nil })
	operators.MustRegisterGradient("BooleanMask", func(g *operators.GradientContext) error {
		g.Op("BooleanMaskGradient", []string{g.I(1), g.GO(0)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterShapeFunc("BooleanMask", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		x, m := in[0], in[1]
		if x.Unknown {
			return []operators.TensorShape{operators.UnknownShape, operators.Shape(blob.Int64, operators.AnyDim)}, nil
		}
		if x.Rank() < 1 || (!m.Unknown && (m.Rank() != 1 || !operators.DimsAgree(m.Dims[0], x.Dims[0]))) {
			return nil, b.InputShapeError(in, "mask must be a vector as long as data's first dimension")
		}
		return []operators.TensorShape{
			operators.Shape(x.Type, withFirst(x.Dims, operators.AnyDim)...),
			operators.Shape(blob.Int64, operators.AnyDim),
		}, nil
	})

	operators.MustRegisterCPU(operators.Schema{
		Type: "BooleanMaskGradient", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Doc: "BooleanMaskGradient(mask, dY) -> dX: the rows of dY go back to where mask is true; the other rows of dX are zero.",
	}, func(b *operators.Base) (operators.Operator, error) { return &booleanMaskGradOp{Base: b}, nil })
	operators.MustRegisterShapeFunc("BooleanMaskGradient", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		m, dy := in[0], in[1]
		if m.Unknown || dy.Unknown || dy.Rank() < 1 {
			return nil, nil
		}
		return []operators.TensorShape{operators.Shape(dy.Type, withFirst(dy.Dims, m.Dim(0))...)}, nil
	})

	operators.MustRegisterCPU(operators.Schema{
		Type: "BooleanMaskLengths", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Doc: "BooleanMaskLengths(lengths, mask) -> masked_lengths: how many rows of each range survive BooleanMask with mask.",
	}, func(b *operators.Base) (operators.Operator, error) { return &booleanMaskLengthsOp{Base: b}, nil })
	operators.MustRegisterShapeFunc("BooleanMaskLengths", operators.SameAsInput0)
	operators.MustRegisterNoGradient("BooleanMaskLengths")

	operators.MustRegisterCPU(operators.Schema{
		Type: "BooleanUnmask", MinInputs: 2, MaxInputs: operators.Unbounded, MinOutputs: 1, MaxOutputs: 1,
		InputsCheck: func(n int) bool { return n > 0 && n%2 == 0 },
		Doc: "BooleanUnmask(mask_1, values_1, mask_2, values_2, …) -> unmasked_data: position i takes the next value of the " +
			"first mask true there; every position needs one, and each values vector must be used up.",
	}, func(b *operators.Base) (operators.Operator, error) { return &booleanUnmaskOp{Base: b}, nil })
	operators.MustRegisterShapeFunc("BooleanUnmask", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		m, v := in[0], in[1]
		if m.Unknown || v.Unknown || m.Rank() != 1 {
			return nil, nil
		}
		return []operators.TensorShape{operators.Shape(v.Type, m.Dims[0])}, nil
	})
	operators.MustRegisterNoGradient("BooleanUnmask")

	operators.MustRegisterCPU(operators.Schema{
		Type: "RemoveDataBlocks", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Doc: "RemoveDataBlocks(data, indices) -> shrunk_data: data without the rows (first dimension) listed in the INT32 or " +
			"INT64 vector indices; repeated indices count once.",
	}, func(b *operators.Base) (operators.Operator, error) { return &removeBlocksOp{Base: b}, nil })
	operators.MustRegisterShapeFunc("RemoveDataBlocks", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		x := in[0]
		if x.Unknown {
			return nil, nil
		}
		if x.Rank() < 1 {
			return nil, b.InputShapeError(in, "data must have at least one dimension")
		}
		return []operators.TensorShape{operators.Shape(x.Type, withFirst(x.Dims, operators.AnyDim)...)}, nil
	})
	operators.MustRegisterGradientForbidden("RemoveDataBlocks")

	operators.MustRegisterCPU(operators.Schema{
		Type: "SequenceMask", MinInputs: 1, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{
			{Name: "mode", Doc: "sequence, window, upper, lower, upperdiag or lowerdiag (required)"},
			{Name: "axis", Default: 1, Doc: "the dimensions before axis index the rows of the 2-D mask, those from it its columns"},
			{Name: "radius", Default: 10, Doc: "half the window width in window mode"},
			{Name: "grad", Default: false, Doc: "gradient mode: masked elements become 0"},
			{Name: "fill_val", Default: math.Inf(-1), Doc: "the value of masked elements"},
			{Name: "batch", Doc: "batch dimension (optional): the dimensions up to it are batches, each masked alike"},
			{Name: "repeat_from_axis", Doc: "sequence mode: the mask repeats over the dimensions from this axis"},
		},
		Doc: "SequenceMask(input, [sequence_lengths or window_centers]) -> masked_tensor: sets to fill_val the elements " +
			"(row i, column j) with j >= lengths[i] (sequence), |j - centers[i]| > radius (window), j > i (upper), " +
			"j < i (lower), j >= i (upperdiag) or j <= i (lowerdiag). FLOAT input, INT32 lengths or centers.",
	}, newSequenceMask)
	operators.MustRegisterShapeFunc("SequenceMask", operators.SameAsInput0)
	operators.MustRegisterGradient("SequenceMask", func(g *operators.GradientContext) error {
		g.CopyArguments = false
		args := make([]*netdef.Argument, 0, len(g.Def().Arg)+1)
		args = append(args, g.Def().Arg...)
		args = append(args, netdef.ArgBool("grad", true))
		ins := []string{g.GO(0)}
		if g.NumInputs() > 1 {
			ins = append(ins, g.I(1))
		}
		g.Op("SequenceMask", ins, []string{g.GI(0)}, args...)
		return nil
	})
}

// maskInput reads input i, a BOOL vector.
func maskInput(b *operators.Base, i int) ([]bool, error) {
	m, err := b.InputOf(i, blob.Bool)
	if err != nil {
		return nil, err
	}
	if m.NumDims() != 1 {
		return nil, b.Errorf("input %d (%q) must be a BOOL vector, has shape %v", i, b.InputName(i), m.Dims())
	}
	return blob.Data[bool](m), nil
}

// booleanMaskOp is BooleanMask.
type booleanMaskOp struct {
	*operators.Base
	dims []int
}

func (o *booleanMaskOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	mask, err := maskInput(o.Base, 1)
	if err != nil {
		return err
	}
	if x.NumDims() < 1 || x.Dim(0) != len(mask) {
		return o.Errorf("the mask (%q) of %d elements must be as long as the first dimension of data (%q) of shape %v", o.InputName(1), len(mask), o.InputName(0), x.Dims())
	}
	n := 0
	for _, v := range mask {
		if v {
			n++
		}
	}
	o.dims = append(o.dims[:0], x.Dims()...)
	o.dims[0] = n
	y := o.Output(0)
	if y == x {
		return o.Errorf("output %q is input 0: BooleanMask cannot work in place", o.OutputName(0))
	}
	if err := y.Init(x.DataType(), o.dims...); err != nil {
		return o.Errorf("output 0 (%q): %w", o.OutputName(0), err)
	}
	var idx []int64
	if o.NumOutputs() == 2 {
		ix := o.Output(1)
		if err := ix.Init(blob.Int64, n); err != nil {
			return o.Errorf("output 1 (%q): %w", o.OutputName(1), err)
		}
		idx = blob.Data[int64](ix)[:0]
	}
	block := x.SizeFromDim(1)
	out := 0
	for i, v := range mask {
		if !v {
			continue
		}
		if idx != nil {
			idx = append(idx, int64(i))
		}
		copyElems(y, out*block, x, i*block, block)
		out++
	}
	return nil
}

// booleanMaskGradOp is BooleanMaskGradient.
type booleanMaskGradOp struct {
	*operators.Base
	dims []int
}

func (o *booleanMaskGradOp) Run() error {
	mask, err := maskInput(o.Base, 0)
	if err != nil {
		return err
	}
	dy, err := o.Input(1)
	if err != nil {
		return err
	}
	n := 0
	for _, v := range mask {
		if v {
			n++
		}
	}
	if dy.NumDims() < 1 || dy.Dim(0) != n {
		return o.Errorf("dY (%q) of shape %v must have one row per true element of the mask (%q), %d", o.InputName(1), dy.Dims(), o.InputName(0), n)
	}
	if !isNumeric(dy.DataType()) && dy.DataType() != blob.Bool {
		return o.Errorf("dY (%q) has type %v, want a numeric type or BOOL", o.InputName(1), dy.DataType())
	}
	o.dims = append(o.dims[:0], dy.Dims()...)
	o.dims[0] = len(mask)
	dx := o.Output(0)
	if dx == dy {
		return o.Errorf("output %q is input 1: BooleanMaskGradient cannot work in place", o.OutputName(0))
	}
	if err := dx.Init(dy.DataType(), o.dims...); err != nil {
		return o.Errorf("output 0 (%q): %w", o.OutputName(0), err)
	}
	block := dy.SizeFromDim(1)
	if block == 0 {
		return nil
	}
	k := 0
	for i, v := range mask {
		if v {
			copyElems(dx, i*block, dy, k*block, block)
			k++
		} else {
			zeroElems(dx, i*block, block)
		}
	}
	return nil
}

// booleanMaskLengthsOp is BooleanMaskLengths.
type booleanMaskLengthsOp struct {
	*operators.Base
	lengths []int
}

func (o *booleanMaskLengthsOp) Run() error {
	lengths, sum, err := o.LengthsInput(0, o.lengths)
	if err != nil {
		return err
	}
	o.lengths = lengths
	mask, err := maskInput(o.Base, 1)
	if err != nil {
		return err
	}
	if len(mask) != sum {
		return o.Errorf("the mask (%q) has %d elements, the lengths (%q) add up to %d", o.InputName(1), len(mask), o.InputName(0), sum)
	}
	l, _ := o.Input(0)
	y := o.Output(0)
	if err := y.Init(l.DataType(), len(lengths)); err != nil {
		return o.Errorf("output 0 (%q): %w", o.OutputName(0), err)
	}
	p := 0
	for i, n := range lengths {
		c := 0
		for _, v := range mask[p : p+n] {
			if v {
				c++
			}
		}
		p += n
		if y.DataType() == blob.Int32 {
			blob.Data[int32](y)[i] = int32(c)
		} else {
			blob.Data[int64](y)[i] = int64(c)
		}
	}
	return nil
}

// booleanUnmaskOp is BooleanUnmask.
type booleanUnmaskOp struct {
	*operators.Base
	next []int
}

func (o *booleanUnmaskOp) Run() error {
	n := o.NumInputs() / 2
	masks := make([][]bool, n)
	values := make([]*blob.Tensor, n)
	for k := range n {
		m, err := maskInput(o.Base, 2*k)
		if err != nil {
			return err
		}
		if k > 0 && len(m) != len(masks[0]) {
			return o.Errorf("mask %d (%q) has %d elements, mask 0 (%q) has %d", k, o.InputName(2*k), len(m), o.InputName(0), len(masks[0]))
		}
		v, err := o.Input(2*k + 1)
		if err != nil {
			return err
		}
		if v.NumDims() != 1 {
			return o.Errorf("values %d (%q) must be a vector, has shape %v", k, o.InputName(2*k+1), v.Dims())
		}
		if k > 0 && v.DataType() != values[0].DataType() {
			return o.Errorf("values %d (%q) has type %v, values 0 (%q) has type %v", k, o.InputName(2*k+1), v.DataType(), o.InputName(1), values[0].DataType())
		}
		masks[k], values[k] = m, v
	}
	for k := range n {
		if o.OutputBlob(0) == o.InputBlob(2*k+1) {
			return o.Errorf("output %q is an input: BooleanUnmask cannot work in place", o.OutputName(0))
		}
	}
	size := len(masks[0])
	y := o.Output(0)
	if err := y.Init(values[0].DataType(), size); err != nil {
		return o.Errorf("output 0 (%q): %w", o.OutputName(0), err)
	}
	o.next = append(o.next[:0], make([]int, n)...)
	for i := 0; i < size; i++ {
		found := false
		for k, m := range masks {
			if !m[i] {
				continue
			}
			j := o.next[k]
			if j >= values[k].Size() {
				return o.Errorf("mask %d (%q) has more true elements than values %d (%q) of shape %v", k, o.InputName(2*k), k, o.InputName(2*k+1), values[k].Dims())
			}
			copyElems(y, i, values[k], j, 1)
			o.next[k]++
			found = true
			break
		}
		if !found {
			return o.Errorf("all masks have False at position %d", i)
		}
	}
	for k, v := range values {
		if o.next[k] != v.Size() {
			return o.Errorf("the number of true at mask %d (%q), %d, does not match the size of values %d (%q), %d", k, o.InputName(2*k), o.next[k], k, o.InputName(2*k+1), v.Size())
		}
	}
	return nil
}

// removeBlocksOp is RemoveDataBlocks.
type removeBlocksOp struct {
	*operators.Base
	idx  []int
	dims []int
}

func (o *removeBlocksOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	ind, err := o.Input(1)
	if err != nil {
		return err
	}
	if x.NumDims() < 1 {
		return o.Errorf("data (%q) should be at least 1-D, is a scalar", o.InputName(0))
	}
	if ind.NumDims() != 1 {
		return o.Errorf("indices (%q) should be 1-D, has shape %v", o.InputName(1), ind.Dims())
	}
	o.idx = o.idx[:0]
	switch {
	case ind.Size() == 0:
		// As in Caffe2, no indices remove nothing whatever their type
		// (NumPy makes an empty list FLOAT64).
	case ind.DataType() == blob.Int32:
		for _, v := range blob.Data[int32](ind) {
			o.idx = append(o.idx, int(v))
		}
	case ind.DataType() == blob.Int64:
		for _, v := range blob.Data[int64](ind) {
			o.idx = append(o.idx, int(v))
		}
	default:
		return o.Errorf("indices (%q) has type %v, want INT32 or INT64", o.InputName(1), ind.DataType())
	}
	outer := x.Dim(0)
	slices.Sort(o.idx)
	o.idx = slices.Compact(o.idx)
	if len(o.idx) > 0 && (o.idx[0] < 0 || o.idx[len(o.idx)-1] >= outer) {
		return o.Errorf("indices (%q) must be in [0, %d), the rows of data (%q) of shape %v; they range over [%d, %d]",
			o.InputName(1), outer, o.InputName(0), x.Dims(), o.idx[0], o.idx[len(o.idx)-1])
	}
	o.dims = append(o.dims[:0], x.Dims()...)
	o.dims[0] -= len(o.idx)
	y := o.Output(0)
	if y == x {
		return o.Errorf("output %q is input 0: RemoveDataBlocks cannot work in place", o.OutputName(0))
	}
	if err := y.Init(x.DataType(), o.dims...); err != nil {
		return o.Errorf("output 0 (%q): %w", o.OutputName(0), err)
	}
	block := x.SizeFromDim(1)
	if y.Size() == 0 {
		return nil
	}
	o.idx = append(o.idx, outer)
	out, start := 0, 0
	for _, r := range o.idx {
		n := (r - start) * block
		copyElems(y, out, x, start*block, n)
		out += n
		start = r + 1
	}
	return nil
}
