package sequence

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "PackSegments", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 2,
		Args: []operators.ArgSpec{
			{Name: "max_length", Default: -1, Doc: "length of the packed segments; longer segments are cut (-1: the longest length)"},
			{Name: "pad_minf", Default: false, Doc: "pad FLOAT and DOUBLE with -infinity instead of zeros"},
			{Name: "return_presence_mask", Default: false, Doc: "write the BOOL presence mask (batch × max length) to output 1"},
		},
		Doc: "PackSegments(lengths, tensor) -> (packed_tensor, [presence_mask]): the ranges of tensor's first dimension given " +
			"by the INT32 or INT64 lengths become the rows of a (batch, max length, …) tensor, padded with zeros.",
	}, newPackSegments)
	operators.MustRegisterCPU(operators.Schema{
		Type: "UnpackSegments", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{{Name: "max_length", Default: -1, Doc: "the max_length the segments were packed with (-1: none)"}},
		Doc:  "UnpackSegments(lengths, packed_tensor) -> tensor: the inverse of PackSegments.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &unpackSegmentsOp{Base: b, maxLength: int(b.ArgInt("max_length", -1))}, nil
	})
	operators.MustRegisterGradient("PackSegments", func(g *operators.GradientContext) error {
		g.CopyArguments = false
		g.Op("UnpackSegments", []string{g.I(0), g.GO(0)}, []string{g.GI(1)})
		return nil
	})
	operators.MustRegisterGradient("UnpackSegments", func(g *operators.GradientContext) error {
		g.CopyArguments = false
		g.Op("PackSegments", []string{g.I(0), g.GO(0)}, []string{g.GI(1)})
		return nil
	})
	operators.MustRegisterShapeFunc("PackSegments", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		l, x := in[0], in[1]
		if x.Unknown || l.Unknown {
			return nil, nil
		}
		if x.Rank() < 1 || l.Rank() != 1 {
			return nil, b.InputShapeError(in, "lengths must be a vector and tensor have at least one dimension")
		}
		maxLen := operators.AnyDim
		if m := b.ArgInt("max_length", -1); m >= 0 && m <= math.MaxInt32 {
			maxLen = int(m)
		}
		dims := append([]int{l.Dims[0], maxLen}, x.Dims[1:]...)
		return []operators.TensorShape{operators.Shape(x.Type, dims...), operators.Shape(blob.Bool, l.Dims[0], maxLen)}, nil
	})
	operators.MustRegisterShapeFunc("UnpackSegments", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		l, x := in[0], in[1]
		if x.Unknown || l.Unknown {
			return nil, nil
		}
		if x.Rank() < 2 || l.Rank() != 1 || !operators.DimsAgree(x.Dims[0], l.Dims[0]) {
			return nil, b.InputShapeError(in, "lengths must be a vector as long as the packed tensor's first dimension, which has at least two")
		}
		return []operators.TensorShape{operators.Shape(x.Type, append([]int{operators.AnyDim}, x.Dims[2:]...)...)}, nil
	})

	for _, s := range []struct {
		typ, inverse string
		forward      bool
		doc          string
	}{
		{"PackRNNSequence", "UnpackRNNSequence", true, "PackRNNSequence(values, lengths) -> packed: the ranges of values' first dimension " +
			"given by the lengths become the columns of a time-major (max length, batch, …) tensor, padded with zeros."},
		{"UnpackRNNSequence", "PackRNNSequence", false, "UnpackRNNSequence(packed, lengths) -> values: the inverse of PackRNNSequence."},
	} {
		forward, inverse := s.forward, s.inverse
		operators.MustRegisterCPU(operators.Schema{
			Type: s.typ, MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1, Doc: s.doc,
		}, func(b *operators.Base) (operators.Operator, error) {
			return &packRNNOp{Base: b, forward: forward}, nil
		})
		operators.MustRegisterGradient(s.typ, func(g *operators.GradientContext) error {
			g.Op(inverse, []string{g.GO(0), g.I(1)}, []string{g.GI(0)})
			return nil
		})
		operators.MustRegisterShapeFunc(s.typ, func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
			x, l := in[0], in[1]
			if x.Unknown || l.Unknown {
				return nil, nil
			}
			if l.Rank() != 1 || (forward && x.Rank() < 1) || (!forward && x.Rank() < 2) {
				return nil, b.InputShapeError(in, "lengths must be a vector, and the values have too few dimensions")
			}
			if forward {
				return []operators.TensorShape{operators.Shape(x.Type, append([]int{operators.AnyDim, l.Dims[0]}, x.Dims[1:]...)...)}, nil
			}
			return []operators.TensorShape{operators.Shape(x.Type, append([]int{operators.AnyDim}, x.Dims[2:]...)...)}, nil
		})
	}

	operators.MustRegisterCPU(operators.Schema{
		Type: "ReversePackedSegs", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Doc: "ReversePackedSegs(data, lengths) -> reversed_data: data is (max length, batch, block); the first lengths[i] " +
			"rows of column i are reversed, the padding after them kept.",
	}, func(b *operators.Base) (operators.Operator, error) { return &reversePackedOp{Base: b}, nil })
	operators.MustRegisterGradient("ReversePackedSegs", func(g *operators.GradientContext) error {
		g.Op("ReversePackedSegs", []string{g.GO(0), g.I(1)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterShapeFunc("ReversePackedSegs", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		if !in[0].Unknown && in[0].Rank() != 3 {
			return nil, b.InputShapeError(in, "data must be 3-D (max length, batch, block)")
		}
		return in[:1], nil
	})
}

func newPackSegments(b *operators.Base) (operators.Operator, error) {
	o := &packSegmentsOp{
		Base: b, maxLength: int(b.ArgInt("max_length", -1)),
		padMinf: b.ArgBool("pad_minf", false), mask: b.ArgBool("return_presence_mask", false),
	}
	if o.mask && b.NumOutputs() < 2 {
		return nil, b.Errorf("return_presence_mask is set but there is no output for the mask")
	}
	if o.maxLength < -1 || o.maxLength > math.MaxInt32 {
		return nil, b.Errorf("argument max_length is %d, must be -1 or in [0, 2^31)", o.maxLength)
	}
	return o, nil
}

// packSegmentsOp is PackSegments.
type packSegmentsOp struct {
	*operators.Base
	maxLength int
	padMinf   bool
	mask      bool
	lengths   []int
	dims      []int
}

func (o *packSegmentsOp) Run() error {
	lengths, sum, err := o.LengthsInput(0, o.lengths)
	if err != nil {
		return err
	}
	o.lengths = lengths
	x, err := o.Input(1)
	if err != nil {
		return err
	}
	if x.NumDims() < 1 {
		return o.Errorf("input 1 (%q) must have at least one dimension, is a scalar", o.InputName(1))
	}
	if x.Dim(0) != sum {
		return o.Errorf("PackSegments requires that the sum of the lengths (%q), %d, equal the first dimension of input 1 (%q) of shape %v",
			o.InputName(0), sum, o.InputName(1), x.Dims())
	}
	maxLen := 0
	for _, l := range lengths {
		maxLen = max(maxLen, l)
	}
	if o.maxLength >= 0 {
		maxLen = o.maxLength
	}
	o.dims = append(append(o.dims[:0], len(lengths), maxLen), x.Dims()[1:]...)
	y := o.Output(0)
	if err := y.Init(x.DataType(), o.dims...); err != nil {
		return o.Errorf("output 0 (%q) of shape %v: %w", o.OutputName(0), o.dims, err)
	}
	var mask []bool
	if o.mask {
		m := o.Output(1)
		if err := m.Init(blob.Bool, len(lengths), maxLen); err != nil {
			return o.Errorf("output 1 (%q): %w", o.OutputName(1), err)
		}
		mask = blob.Data[bool](m)
		clear(mask)
	}
	block := x.SizeFromDim(1)
	if y.Size() == 0 && mask == nil {
		return nil
	}
	o.pad(y)
	start := 0
	for i, l := range lengths {
		n := min(l, maxLen)
		if block > 0 {
			copyElems(y, i*maxLen*block, x, start*block, n*block)
		}
		if mask != nil {
			for j := range n {
				mask[i*maxLen+j] = true
			}
		}
		start += l
	}
	return nil
}

// pad fills y with the padding value: -infinity for floats with pad_minf,
// else zeros.
func (o *packSegmentsOp) pad(y *blob.Tensor) {
	switch {
	case o.padMinf && y.DataType() == blob.Float32:
		d := blob.Data[float32](y)
		for i := range d {
			d[i] = float32(math.Inf(-1))
		}
	case o.padMinf && y.DataType() == blob.Float64:
		d := blob.Data[float64](y)
		for i := range d {
			d[i] = math.Inf(-1)
		}
	default:
		zeroElems(y, 0, y.Size())
	}
}

// unpackSegmentsOp is UnpackSegments.
type unpackSegmentsOp struct {
	*operators.Base
	maxLength int
	lengths   []int
	dims      []int
}

func (o *unpackSegmentsOp) Run() error {
	lengths, _, err := o.LengthsInput(0, o.lengths)
	if err != nil {
		return err
	}
	o.lengths = lengths
	x, err := o.Input(1)
	if err != nil {
		return err
	}
	if x.NumDims() < 2 {
		return o.Errorf("input 1 (%q) must have at least two dimensions, has shape %v", o.InputName(1), x.Dims())
	}
	if x.Dim(0) != len(lengths) {
		return o.Errorf("the lengths (%q) must have one entry per row of input 1 (%q) of shape %v, have %d", o.InputName(0), o.InputName(1), x.Dims(), len(lengths))
	}
	if o.maxLength >= 0 && o.maxLength != x.Dim(1) {
		return o.Errorf("max_length %d should be equal to the second dimension of the packed segments (%q) of shape %v", o.maxLength, o.InputName(1), x.Dims())
	}
	total := 0
	for i, l := range lengths {
		if o.maxLength >= 0 {
			l = min(l, o.maxLength)
		}
		if l > x.Dim(1) {
			return o.Errorf("length %d (%d) is longer than the packed segments (%q) of shape %v", i, l, o.InputName(1), x.Dims())
		}
		lengths[i] = l
		total += l
	}
	o.dims = append(append(o.dims[:0], total), x.Dims()[2:]...)
	y := o.Output(0)
	if err := y.Init(x.DataType(), o.dims...); err != nil {
		return o.Errorf("output 0 (%q) of shape %v: %w", o.OutputName(0), o.dims, err)
	}
	if y.Size() == 0 {
		return nil
	}
	block, rows := x.SizeFromDim(2), x.Dim(1)
	start := 0
	for i, l := range lengths {
		copyElems(y, start*block, x, i*rows*block, l*block)
		start += l
	}
	return nil
}

// packRNNOp is PackRNNSequence (forward) or UnpackRNNSequence.
type packRNNOp struct {
	*operators.Base
	forward bool
	lengths []int
	dims    []int
}

func (o *packRNNOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	lengths, sum, err := o.LengthsInput(1, o.lengths)
	if err != nil {
		return err
	}
	o.lengths = lengths
	cols := len(lengths)
	rows := 0
	for _, l := range lengths {
		rows = max(rows, l)
	}
	offset := 1
	if !o.forward {
		offset = 2
	}
	if x.NumDims() < offset {
		return o.Errorf("input 0 (%q) must have at least %d dimensions, has shape %v", o.InputName(0), offset, x.Dims())
	}
	if o.forward {
		if x.Dim(0) != sum {
			return o.Errorf("the lengths (%q) add up to %d, but the values (%q) of shape %v have %d rows", o.InputName(1), sum, o.InputName(0), x.Dims(), x.Dim(0))
		}
		o.dims = append(append(o.dims[:0], rows, cols), x.Dims()[1:]...)
	} else {
		if x.Dim(1) != cols || x.Dim(0) < rows {
			return o.Errorf("the packed values (%q) of shape %v must be at least %d × %d for the lengths (%q)", o.InputName(0), x.Dims(), rows, cols, o.InputName(1))
		}
		o.dims = append(append(o.dims[:0], sum), x.Dims()[2:]...)
	}
	y := o.Output(0)
	if err := y.Init(x.DataType(), o.dims...); err != nil {
		return o.Errorf("output 0 (%q) of shape %v: %w", o.OutputName(0), o.dims, err)
	}
	block := x.SizeFromDim(offset)
	if y.Size() == 0 || block == 0 {
		return nil
	}
	zeroElems(y, 0, y.Size())
	off := 0
	for c, l := range lengths {
		for r := 0; r < l; r++ {
			seq, packed := (off+r)*block, (r*cols+c)*block
			if o.forward {
				copyElems(y, packed, x, seq, block)
			} else {
				copyElems(y, seq, x, packed, block)
			}
		}
		off += l
	}
	return nil
}

// reversePackedOp is ReversePackedSegs.
type reversePackedOp struct {
	*operators.Base
	lengths []int
}

func (o *reversePackedOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	if x.NumDims() != 3 {
		return o.Errorf("input 0 (%q) must be 3-D (max length, batch, block), has shape %v", o.InputName(0), x.Dims())
	}
	lengths, _, err := o.LengthsInput(1, o.lengths)
	if err != nil {
		return err
	}
	o.lengths = lengths
	maxLen, batch, block := x.Dim(0), x.Dim(1), x.Dim(2)
	if len(lengths) != batch {
		return o.Errorf("the lengths (%q) must have one entry per column of input 0 (%q) of shape %v, have %d", o.InputName(1), o.InputName(0), x.Dims(), len(lengths))
	}
	for i, l := range lengths {
		if l > maxLen {
			return o.Errorf("length %d (%d) is longer than input 0 (%q) of shape %v", i, l, o.InputName(0), x.Dims())
		}
	}
	y := o.Output(0)
	if y == x {
		return o.Errorf("output %q is input 0: ReversePackedSegs cannot work in place", o.OutputName(0))
	}
	if err := y.Init(x.DataType(), x.Dims()...); err != nil {
		return o.Errorf("output 0 (%q): %w", o.OutputName(0), err)
	}
	if y.Size() == 0 {
		return nil
	}
	for i, l := range lengths {
		for j := 0; j < maxLen; j++ {
			dst := j
			if j < l {
				dst = l - 1 - j
			}
			copyElems(y, (dst*batch+i)*block, x, (j*batch+i)*block, block)
		}
	}
	return nil
}
