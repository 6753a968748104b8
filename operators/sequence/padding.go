package sequence

import (
	"fmt"
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

var paddingArgs = []operators.ArgSpec{
	{Name: "padding_width", Default: 1, Doc: "number of padding rows at the start of each range (and at its end, without end_padding_width)"},
	{Name: "end_padding_width", Default: -1, Doc: "number of padding rows at the end of each range; negative: padding_width"},
}

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "AddPadding", MinInputs: 1, MaxInputs: 4, MinOutputs: 1, MaxOutputs: 2, Args: paddingArgs,
		Doc: "AddPadding(data_in, [lengths], [start_padding], [end_padding]) -> (data_out, [lengths_out]): adds padding rows " +
			"around each range of data_in's first dimension (INT32 or INT64 lengths summing to it; no lengths: one range). The padding is " +
			"start_padding (and end_padding, else start_padding), each of data_in's block shape, or zeros.",
	}, newPadding(padAdd))
	operators.MustRegisterCPU(operators.Schema{
		Type: "RemovePadding", MinInputs: 1, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 2, Args: paddingArgs,
		Doc: "RemovePadding(data_in, [lengths]) -> (data_out, [lengths_out]): removes the padding rows that AddPadding added around each range.",
	}, newPadding(padRemove))
	operators.MustRegisterCPU(operators.Schema{
		Type: "GatherPadding", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 2, Args: paddingArgs,
		Doc: "GatherPadding(data_in, lengths) -> (padding_sum, [end_padding_sum]): sums the start padding rows (and the end ones, " +
			"into the second output or else the first) of every range: the gradient of AddPadding's padding inputs.",
	}, newPadding(padGather))
	operators.MustRegisterGradient("AddPadding", func(g *operators.GradientContext) error {
		ins := []string{g.GO(0)}
		if g.NumInputs() > 1 {
			if g.NumOutputs() < 2 {
				return errNeedLengthsOut("AddPadding")
			}
			ins = append(ins, g.O(1))
		}
		g.Op("RemovePadding", ins, []string{g.GI(0)})
		if g.NumInputs() >= 3 {
			outs := []string{g.GI(2)}
			if g.NumInputs() == 4 {
				outs = append(outs, g.GI(3))
			}
			g.Op("GatherPadding", ins, outs)
		}
		return nil
	})
	operators.MustRegisterGradient("RemovePadding", func(g *operators.GradientContext) error {
		ins := []string{g.GO(0)}
		if g.NumInputs() > 1 {
			if g.NumOutputs() < 2 {
				return errNeedLengthsOut("RemovePadding")
			}
			ins = append(ins, g.O(1))
		}
		g.Op("AddPadding", ins, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterGradientForbidden("GatherPadding")
	operators.MustRegisterShapeFunc("AddPadding", paddingShape(padAdd))
	operators.MustRegisterShapeFunc("RemovePadding", paddingShape(padRemove))
	operators.MustRegisterShapeFunc("GatherPadding", paddingShape(padGather))

	operators.MustRegisterCPU(operators.Schema{
		Type: "PadEmptySamples", MinInputs: 1, MaxInputs: operators.Unbounded, MinOutputs: 1, MaxOutputs: operators.Unbounded,
		Doc: "PadEmptySamples(lengths, field_1, …) -> (out_lengths, out_field_1, …): every empty sample (length 0) gets length 1 " +
			"and one zero row inserted in each field, whose first dimension is the sum of the lengths.",
	}, func(b *operators.Base) (operators.Operator, error) {
		if b.NumOutputs() != b.NumInputs() {
			return nil, b.Errorf("PadEmptySamples needs one output per input: has %d inputs and %d outputs", b.NumInputs(), b.NumOutputs())
		}
		return &padEmptyOp{Base: b}, nil
	})
	operators.MustRegisterShapeFunc("PadEmptySamples", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		out := []operators.TensorShape{in[0]}
		for _, s := range in[1:] {
			if s.Unknown || s.Rank() < 1 {
				out = append(out, operators.UnknownShape)
				continue
			}
			out = append(out, operators.Shape(s.Type, withFirst(s.Dims, operators.AnyDim)...))
		}
		return out, nil
	})
	operators.MustRegisterNoGradient("PadEmptySamples")
}

func errNeedLengthsOut(typ string) error {
	return fmt.Errorf("the gradient of %s needs its lengths_out output when lengths are given", typ)
}

// padKind selects AddPadding, RemovePadding or GatherPadding.
type padKind uint8

const (
	padAdd padKind = iota
	padRemove
	padGather
)

// paddingWidths reads padding_width and end_padding_width.
func paddingWidths(b *operators.Base) (start, end int, err error) {
	s, e := b.ArgInt("padding_width", 1), b.ArgInt("end_padding_width", -1)
	if s < 0 || s > math.MaxInt32 {
		return 0, 0, b.Errorf("argument padding_width is %d, must be in [0, 2^31)", s)
	}
	if e < 0 {
		e = s
	}
	if e > math.MaxInt32 {
		return 0, 0, b.Errorf("argument end_padding_width is %d, must be below 2^31", e)
	}
	return int(s), int(e), nil
}

// paddingShape infers the outputs' shapes. The number of ranges is known
// only without a lengths input (one range).
func paddingShape(kind padKind) operators.ShapeFunc {
	return func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		start, end, err := paddingWidths(b)
		if err != nil {
			return nil, err
		}
		x := in[0]
		if x.Unknown {
			return nil, nil
		}
		if x.Rank() < 1 {
			return nil, b.InputShapeError(in, "data_in must have at least one dimension")
		}
		if kind == padGather {
			out := operators.Shape(x.Type, x.Dims[1:]...)
			return []operators.TensorShape{out, out}, nil
		}
		rows, ranges := operators.AnyDim, operators.AnyDim
		if len(in) == 1 {
			ranges = 1
			if n := x.Dims[0]; n >= 0 {
				if kind == padAdd {
					rows = n + start + end
				} else if rows = n - start - end; rows < 0 {
					return nil, b.InputShapeError(in, "data_in has fewer rows than the padding (%d + %d)", start, end)
				}
			}
		} else if !in[1].Unknown {
			if in[1].Rank() != 1 {
				return nil, b.InputShapeError(in, "lengths must be a vector")
			}
			ranges = in[1].Dims[0]
		}
		return []operators.TensorShape{
			operators.Shape(x.Type, withFirst(x.Dims, rows)...),
			operators.Shape(blob.Int32, ranges),
		}, nil
	}
}

func newPadding(kind padKind) operators.Factory {
	return func(b *operators.Base) (operators.Operator, error) {
		start, end, err := paddingWidths(b)
		if err != nil {
			return nil, err
		}
		return &paddingOp{Base: b, kind: kind, start: start, end: end}, nil
	}
}

// paddingOp is AddPadding, RemovePadding or GatherPadding.
type paddingOp struct {
	*operators.Base
	kind       padKind
	start, end int
	lengths    []int
	dims       []int
}

func (o *paddingOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	if x.NumDims() < 1 {
		return o.Errorf("input 0 (%q) must have at least one dimension, is a scalar", o.InputName(0))
	}
	outer, block := x.Dim(0), x.SizeFromDim(1)
	lengths := append(o.lengths[:0], outer)
	if o.NumInputs() > 1 {
		var sum int
		if lengths, sum, err = o.LengthsInput(1, o.lengths); err != nil {
			return err
		}
		if sum != outer {
			return o.Errorf("the lengths (%q) add up to %d, but data_in (%q) of shape %v has %d rows", o.InputName(1), sum, o.InputName(0), x.Dims(), outer)
		}
	}
	o.lengths = lengths
	pad := o.start + o.end
	if o.kind != padAdd {
		for i, l := range lengths {
			if l < pad {
				return o.Errorf("range %d of data_in (%q) has %d rows, fewer than its padding %d + %d", i, o.InputName(0), l, o.start, o.end)
			}
		}
	}
	switch o.kind {
	case padAdd:
		return o.add(x, lengths, block)
	case padRemove:
		return o.remove(x, lengths, block)
	}
	return o.gather(x, lengths, block)
}

// lengthsOut writes output 1, when there is one: each length plus delta.
func (o *paddingOp) lengthsOut(lengths []int, delta int) error {
	if o.NumOutputs() < 2 {
		return nil
	}
	out := o.Output(1)
	if err := out.Init(blob.Int32, len(lengths)); err != nil {
		return o.Errorf("output 1 (%q): %w", o.OutputName(1), err)
	}
	d := blob.Data[int32](out)
	for i, l := range lengths {
		v := l + delta
		if v > math.MaxInt32 {
			return o.Errorf("range %d: padded length %d does not fit INT32", i, v)
		}
		d[i] = int32(v)
	}
	return nil
}

func (o *paddingOp) add(x *blob.Tensor, lengths []int, block int) error {
	var padStart, padEnd *blob.Tensor
	for i := 2; i < o.NumInputs(); i++ {
		p, err := o.Input(i)
		if err != nil {
			return err
		}
		if p.DataType() != x.DataType() || p.Size() != block {
			return o.Errorf("padding input %d (%q) is %v; it must hold %d elements of data_in's type %v (data_in %q has shape %v)",
				i, o.InputName(i), p, block, x.DataType(), o.InputName(0), x.Dims())
		}
		if i == 2 {
			padStart, padEnd = p, p
		} else {
			padEnd = p
		}
	}
	pad := o.start + o.end
	if pad > 0 && len(lengths) > (1<<53)/pad {
		return o.Errorf("padding %d ranges by %d rows each is too large", len(lengths), pad)
	}
	o.dims = append(o.dims[:0], x.Dims()...)
	o.dims[0] += pad * len(lengths)
	y := o.Output(0)
	if err := y.Init(x.DataType(), o.dims...); err != nil {
		return o.Errorf("output 0 (%q) of shape %v: %w", o.OutputName(0), o.dims, err)
	}
	if y.Size() > 0 {
		in, out := 0, 0
		for _, l := range lengths {
			out = o.padRows(y, out, padStart, o.start, block)
			copyElems(y, out, x, in, l*block)
			in, out = in+l*block, out+l*block
			out = o.padRows(y, out, padEnd, o.end, block)
		}
	}
	return o.lengthsOut(lengths, pad)
}

// padRows writes rows padding rows (copies of p, or zeros without it) into
// y from out, and returns the offset after them.
func (o *paddingOp) padRows(y *blob.Tensor, out int, p *blob.Tensor, rows, block int) int {
	if p == nil {
		zeroElems(y, out, rows*block)
		return out + rows*block
	}
	for j := 0; j < rows; j++ {
		copyElems(y, out, p, 0, block)
		out += block
	}
	return out
}

func (o *paddingOp) remove(x *blob.Tensor, lengths []int, block int) error {
	pad := o.start + o.end
	o.dims = append(o.dims[:0], x.Dims()...)
	o.dims[0] -= pad * len(lengths)
	y := o.Output(0)
	if err := y.Init(x.DataType(), o.dims...); err != nil {
		return o.Errorf("output 0 (%q) of shape %v: %w", o.OutputName(0), o.dims, err)
	}
	if y.Size() > 0 {
		in, out := 0, 0
		for _, l := range lengths {
			n := (l - pad) * block
			copyElems(y, out, x, in+o.start*block, n)
			in, out = in+l*block, out+n
		}
	}
	return o.lengthsOut(lengths, -pad)
}

func (o *paddingOp) gather(x *blob.Tensor, lengths []int, block int) error {
	if !isNumeric(x.DataType()) {
		return o.Errorf("input 0 (%q) has type %v; GatherPadding adds, and needs a numeric type", o.InputName(0), x.DataType())
	}
	padDims := x.Dims()[1:]
	sums := [2]*blob.Tensor{o.Output(0), nil}
	if err := sums[0].Init(x.DataType(), padDims...); err != nil {
		return o.Errorf("output 0 (%q): %w", o.OutputName(0), err)
	}
	zeroElems(sums[0], 0, block)
	sums[1] = sums[0]
	if o.NumOutputs() == 2 {
		sums[1] = o.Output(1)
		if err := sums[1].Init(x.DataType(), padDims...); err != nil {
			return o.Errorf("output 1 (%q): %w", o.OutputName(1), err)
		}
		zeroElems(sums[1], 0, block)
	}
	if block == 0 {
		return nil
	}
	in := 0
	for _, l := range lengths {
		for j := 0; j < o.start; j++ {
			addElems(sums[0], 0, x, in+j*block, block)
		}
		for j := l - o.end; j < l; j++ {
			addElems(sums[1], 0, x, in+j*block, block)
		}
		in += l * block
	}
	return nil
}

// padEmptyOp is PadEmptySamples.
type padEmptyOp struct {
	*operators.Base
	lengths []int
	fields  []*blob.Tensor
	dims    []int
}

func (o *padEmptyOp) Run() error {
	lengths, sum, err := o.LengthsInput(0, o.lengths)
	if err != nil {
		return err
	}
	o.lengths = lengths
	empty := 0
	for _, l := range lengths {
		if l == 0 {
			empty++
		}
	}
	o.fields = o.fields[:0]
	for k := range o.NumInputs() - 1 {
		f, err := o.Input(k + 1)
		if err != nil {
			return err
		}
		if f.NumDims() < 1 || f.Dim(0) != sum {
			return o.Errorf("field %d (%q) has shape %v; its first dimension must be the sum of the lengths (%q), %d", k, o.InputName(k+1), f.Dims(), o.InputName(0), sum)
		}
		o.fields = append(o.fields, f)
	}
	outLengths := o.Output(0)
	if err := outLengths.Init(blob.Int32, len(lengths)); err != nil {
		return o.Errorf("output 0 (%q): %w", o.OutputName(0), err)
	}
	for i, l := range lengths {
		blob.Data[int32](outLengths)[i] = int32(max(l, 1))
	}
	for k, f := range o.fields {
		y := o.Output(k + 1)
		if y == f {
			return o.Errorf("output %d (%q) is input %d: PadEmptySamples cannot work in place", k+1, o.OutputName(k+1), k+1)
		}
		o.dims = append(o.dims[:0], f.Dims()...)
		o.dims[0] = sum + empty
		if err := y.Init(f.DataType(), o.dims...); err != nil {
			return o.Errorf("output %d (%q): %w", k+1, o.OutputName(k+1), err)
		}
		if y.Size() == 0 {
			continue
		}
		block := f.SizeFromDim(1)
		in, out := 0, 0
		for _, l := range lengths {
			if l == 0 {
				zeroElems(y, out, block)
				out += block
				continue
			}
			copyElems(y, out, f, in, l*block)
			in, out = in+l*block, out+l*block
		}
	}
	return nil
}
