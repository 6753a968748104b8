package sparse

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// The LENGTHS utilities: operators that turn a LENGTHS vector into ranges,
// segment ids or positions, and that tile, pad, gather or split segments.

func init() {
	simple := []struct {
		typ  string
		doc  string
		f    func(o *lengthsUtilOp) error
		sh   operators.ShapeFunc
		outs int
	}{
		{"LengthsToRanges", "LENGTHS [N] -> RANGES INT32 [N, 2]: (offset, length) of each segment.", lengthsToRanges,
			func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
				return []operators.TensorShape{operators.Shape(blob.Int32, dim0(in[0]), 2)}, nil
			}, 1},
		{"LengthsToSegmentIds", "LENGTHS [N] -> INT32 [sum(LENGTHS)]: the segment of each position.", lengthsToSegmentIDs, vectorShape(blob.Int32), 1},
		{"LengthsRangeFill", "LENGTHS [N] -> INT32 [sum(LENGTHS)]: 0, 1, …, l−1 for each segment of length l.", lengthsRangeFill, vectorShape(blob.Int32), 1},
	}
	for _, s := range simple {
		s := s
		operators.MustRegisterCPU(operators.Schema{Type: s.typ, MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1, Doc: s.doc}, lengthsUtil(s.f))
		operators.MustRegisterShapeFunc(s.typ, s.sh)
		operators.MustRegisterNoGradient(s.typ)
	}

	operators.MustRegisterCPU(operators.Schema{
		Type: "LengthsTile", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Doc: "(DATA, LENGTHS) -> OUTPUT: row i of DATA repeated LENGTHS[i] times, in order.",
	}, lengthsUtil(lengthsTile))
	operators.MustRegisterShapeFunc("LengthsTile", shapeRows(0, -1, blob.Undefined))
	operators.MustRegisterGradient("LengthsTile", func(g *operators.GradientContext) error {
		g.Op("LengthsSum", []string{g.GO(0), g.I(1)}, []string{g.GI(0)})
		return nil
	})

	operators.MustRegisterCPU(operators.Schema{
		Type: "LengthsGather", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Doc: "(ITEMS, LENGTHS, INDICES) -> OUTPUT: the segments of ITEMS that INDICES pick, concatenated.",
	}, lengthsUtil(lengthsGather))
	operators.MustRegisterShapeFunc("LengthsGather", shapeRows(0, -1, blob.Undefined))
	operators.MustRegisterNoGradient("LengthsGather")

	operators.MustRegisterCPU(operators.Schema{
		Type: "LengthsPad", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{
			{Name: "padding_value", Default: -1.0, Doc: "the value of the padding"},
			{Name: "target_length", Default: -1, Doc: "the length every segment is padded to (required, >= every length)"},
		},
		Doc: "(DATA, LENGTHS) -> OUTPUT [N·target_length, ...]: each segment of DATA padded to target_length rows.",
	}, func(b *operators.Base) (operators.Operator, error) {
		t := b.ArgInt("target_length", -1)
		if t < 0 {
			return nil, b.Errorf("argument target_length must be set and >= 0, is %d", t)
		}
		return &lengthsUtilOp{Base: b, run: lengthsPad, target: int(t), pad: float64(b.ArgFloat("padding_value", -1))}, nil
	})
	operators.MustRegisterShapeFunc("LengthsPad", shapeRows(0, -1, blob.Undefined))
	operators.MustRegisterNoGradient("LengthsPad")

	operators.MustRegisterCPU(operators.Schema{
		Type: "LengthsSplit", MinInputs: 1, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{{Name: "n_split", Default: 0, Doc: "the number of parts of each length (or input 1)"}},
		Doc: "(LENGTHS[, N_SPLIT]) -> INT32 [N·n_split]: each length split into n_split parts as equal as can be, " +
			"the first ones one longer.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &lengthsUtilOp{Base: b, run: lengthsSplit, target: int(b.ArgInt("n_split", 0))}, nil
	})
	operators.MustRegisterShapeFunc("LengthsSplit", vectorShape(blob.Int32))
	operators.MustRegisterNoGradient("LengthsSplit")
}

func dim0(s operators.TensorShape) int {
	if s.Rank() < 1 {
		return operators.AnyDim
	}
	return s.Dim(0)
}

// vectorShape: a vector of dt whose length the values decide.
func vectorShape(dt blob.DataType) operators.ShapeFunc {
	return func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		return []operators.TensorShape{operators.Shape(dt, operators.AnyDim)}, nil
	}
}

// lengthsUtilOp runs one of the LENGTHS utilities.
type lengthsUtilOp struct {
	*operators.Base
	run    func(o *lengthsUtilOp) error
	target int
	pad    float64
	lens   []int
	idx    []int
	dims   []int
}

func (o *lengthsUtilOp) Run() error { return o.run(o) }

// lengthsUtil is the factory of a LENGTHS utility without arguments.
func lengthsUtil(run func(o *lengthsUtilOp) error) operators.Factory {
	return func(b *operators.Base) (operators.Operator, error) { return &lengthsUtilOp{Base: b, run: run}, nil }
}

// int32Out gives output i n INT32 elements and returns them.
func (o *lengthsUtilOp) int32Out(i int, dims ...int) ([]int32, error) {
	y := o.Output(i)
	if err := y.Init(blob.Int32, dims...); err != nil {
		return nil, err
	}
	return blob.Data[int32](y), nil
}

func lengthsToRanges(o *lengthsUtilOp) error {
	var err error
	if o.lens, _, err = o.LengthsInput(0, o.lens); err != nil {
		return err
	}
	out, err := o.int32Out(0, len(o.lens), 2)
	if err != nil {
		return err
	}
	off := 0
	for i, l := range o.lens {
		out[2*i], out[2*i+1] = int32(off), int32(l)
		off += l
	}
	return nil
}

func lengthsToSegmentIDs(o *lengthsUtilOp) error { return lengthsFill(o, false) }

func lengthsRangeFill(o *lengthsUtilOp) error { return lengthsFill(o, true) }

// lengthsFill writes an INT32 value for each position of each segment:
// the segment's number (LengthsToSegmentIds) or, with positions, the
// position within the segment (LengthsRangeFill).
func lengthsFill(o *lengthsUtilOp, positions bool) error {
	var err error
	var total int
	if o.lens, total, err = o.LengthsInput(0, o.lens); err != nil {
		return err
	}
	out, err := o.int32Out(0, total)
	if err != nil {
		return err
	}
	k := 0
	for i, l := range o.lens {
		for j := range l {
			if positions {
				out[k] = int32(j)
			} else {
				out[k] = int32(i)
			}
			k++
		}
	}
	return nil
}

// rowsInput returns input i, a tensor of at least one dim, and the size of
// its rows (0 when it has no elements).
func rowsInput(b *operators.Base, i int, what string) (*blob.Tensor, int, error) {
	t, err := b.Input(i)
	if err != nil {
		return nil, 0, err
	}
	if t.NumDims() < 1 {
		return nil, 0, b.Errorf("%s input %d (%q) must have at least 1 dim, has shape %v", what, i, b.InputName(i), t.Dims())
	}
	if t.Size() == 0 {
		return t, 0, nil
	}
	return t, t.Size() / t.Dim(0), nil
}

// segmentedRows reads input 0 (what: "DATA", "ITEMS"; see rowsInput) and
// the LENGTHS input 1, and checks that there is one length per row of it
// (perRow) or that the lengths add up to its rows. total is their sum.
func (o *lengthsUtilOp) segmentedRows(what string, perRow bool) (data *blob.Tensor, block, total int, err error) {
	if data, block, err = rowsInput(o.Base, 0, what); err != nil {
		return nil, 0, 0, err
	}
	if o.lens, total, err = o.LengthsInput(1, o.lens); err != nil {
		return nil, 0, 0, err
	}
	switch {
	case perRow && len(o.lens) != data.Dim(0):
		return nil, 0, 0, o.Errorf("LENGTHS input 1 (%q) has %d elements, %s input 0 (%q) of shape %v has %d rows",
			o.InputName(1), len(o.lens), what, o.InputName(0), data.Dims(), data.Dim(0))
	case !perRow && total != data.Dim(0):
		return nil, 0, 0, o.Errorf("LENGTHS input 1 (%q) adds up to %d, %s input 0 (%q) of shape %v has %d rows",
			o.InputName(1), total, what, o.InputName(0), data.Dims(), data.Dim(0))
	}
	return data, block, total, nil
}

func lengthsTile(o *lengthsUtilOp) error {
	data, block, total, err := o.segmentedRows("DATA", true)
	if err != nil {
		return err
	}
	if err := blob.CheckElements(blob.Int64, total); err != nil {
		return o.Errorf("LengthsTile to %d rows: %w", total, err)
	}
	o.idx = o.idx[:0]
	for i, l := range o.lens {
		for range l {
			o.idx = append(o.idx, i)
		}
	}
	return gatherRows(o.Base, data, block, o.idx, outDims(o.dims, total, data.Dims()))
}

// gatherRows writes rows idx of data (rows of block elements) to output 0
// of shape dims.
func gatherRows(b *operators.Base, data *blob.Tensor, block int, idx []int, dims []int) error {
	y := b.Output(0)
	if err := y.Init(data.DataType(), dims...); err != nil {
		return err
	}
	if y.Size() == 0 {
		return nil
	}
	copyRows(y, data, block, idx)
	return nil
}

// copyRows copies row idx[k] of src into row k of dst, any element type.
func copyRows(dst, src *blob.Tensor, block int, idx []int) { moveRows(dst, src, block, nil, idx) }

// scatterRows copies row k of src into row idx[k] of dst.
func scatterRows(dst, src *blob.Tensor, block int, idx []int) { moveRows(dst, src, block, idx, nil) }

// moveRows copies row from[k] of src into row to[k] of dst, for every k
// (a nil list stands for 0, 1, …; they are not both nil).
func moveRows(dst, src *blob.Tensor, block int, to, from []int) {
	switch dst.DataType() {
	case blob.Float32:
		moveRowsOf(blob.Data[float32](dst), blob.Data[float32](src), block, to, from)
	case blob.Float64:
		moveRowsOf(blob.Data[float64](dst), blob.Data[float64](src), block, to, from)
	case blob.Int32:
		moveRowsOf(blob.Data[int32](dst), blob.Data[int32](src), block, to, from)
	case blob.Int64:
		moveRowsOf(blob.Data[int64](dst), blob.Data[int64](src), block, to, from)
	case blob.Float16:
		moveRowsOf(blob.Data[blob.Half](dst), blob.Data[blob.Half](src), block, to, from)
	case blob.Int8:
		moveRowsOf(blob.Data[int8](dst), blob.Data[int8](src), block, to, from)
	case blob.Int16:
		moveRowsOf(blob.Data[int16](dst), blob.Data[int16](src), block, to, from)
	case blob.Uint8:
		moveRowsOf(blob.Data[uint8](dst), blob.Data[uint8](src), block, to, from)
	case blob.Uint16:
		moveRowsOf(blob.Data[uint16](dst), blob.Data[uint16](src), block, to, from)
	case blob.Bool:
		moveRowsOf(blob.Data[bool](dst), blob.Data[bool](src), block, to, from)
	case blob.String:
		moveRowsOf(blob.Data[string](dst), blob.Data[string](src), block, to, from)
	}
}

func moveRowsOf[T blob.Element](dst, src []T, block int, to, from []int) {
	n := len(to)
	if to == nil {
		n = len(from)
	}
	for k := range n {
		d, s := k, k
		if to != nil {
			d = to[k]
		}
		if from != nil {
			s = from[k]
		}
		copy(dst[d*block:(d+1)*block], src[s*block:(s+1)*block])
	}
}

func lengthsGather(o *lengthsUtilOp) error {
	items, block, _, err := o.segmentedRows("ITEMS", false)
	if err != nil {
		return err
	}
	var segs []int
	if segs, err = readIndices(o.Base, 2, len(o.lens), o.InputName(1), nil); err != nil {
		return err
	}
	// The offsets of the segments, then the rows of the picked ones.
	o.idx = o.idx[:0]
	offsets := make([]int, len(o.lens)+1)
	for i, l := range o.lens {
		offsets[i+1] = offsets[i] + l
	}
	n := 0
	for _, s := range segs {
		n += o.lens[s]
	}
	if err := blob.CheckElements(blob.Int64, n); err != nil {
		return o.Errorf("LengthsGather of %d rows: %w", n, err)
	}
	for _, s := range segs {
		for r := offsets[s]; r < offsets[s+1]; r++ {
			o.idx = append(o.idx, r)
		}
	}
	return gatherRows(o.Base, items, block, o.idx, outDims(o.dims, n, items.Dims()))
}

func lengthsPad(o *lengthsUtilOp) error {
	data, block, _, err := o.segmentedRows("DATA", false)
	if err != nil {
		return err
	}
	for i, l := range o.lens {
		if l > o.target {
			return o.Errorf("LENGTHS input 1 (%q) element %d is %d, longer than target_length %d", o.InputName(1), i, l, o.target)
		}
	}
	rows := len(o.lens) * o.target
	if o.target != 0 && rows/o.target != len(o.lens) {
		return o.Errorf("%d segments of target_length %d overflow", len(o.lens), o.target)
	}
	y := o.Output(0)
	if err := y.Init(data.DataType(), outDims(o.dims, rows, data.Dims())...); err != nil {
		return err
	}
	if y.Size() == 0 {
		return nil
	}
	block = y.Size() / rows
	switch data.DataType() {
	case blob.Float32:
		padSegments(blob.Data[float32](y), blob.Data[float32](data), block, o.lens, o.target, float32(o.pad))
	case blob.Float64:
		padSegments(blob.Data[float64](y), blob.Data[float64](data), block, o.lens, o.target, o.pad)
	case blob.Int32:
		padSegments(blob.Data[int32](y), blob.Data[int32](data), block, o.lens, o.target, int32(o.pad))
	case blob.Int64:
		padSegments(blob.Data[int64](y), blob.Data[int64](data), block, o.lens, o.target, int64(o.pad))
	default:
		return o.Errorf("DATA input 0 (%q) has type %v, want FLOAT, DOUBLE, INT32 or INT64", o.InputName(0), data.DataType())
	}
	return nil
}

func padSegments[T float32 | float64 | int32 | int64](out, data []T, block int, lens []int, target int, pad T) {
	for i := range out {
		out[i] = pad
	}
	src := 0
	for i, l := range lens {
		copy(out[i*target*block:], data[src*block:(src+l)*block])
		src += l
	}
}

func lengthsSplit(o *lengthsUtilOp) error {
	var err error
	if o.lens, _, err = o.LengthsInput(0, o.lens); err != nil {
		return err
	}
	n := o.target
	if o.NumInputs() == 2 {
		var v []int
		if v, _, err = readInts(o.Base, 1, "N_SPLIT", nil); err != nil {
			return err
		}
		if len(v) != 1 {
			return o.Errorf("N_SPLIT input 1 (%q) must hold one value, has %d", o.InputName(1), len(v))
		}
		n = v[0]
	}
	if n <= 0 {
		return o.Errorf("n_split is %d, must be > 0", n)
	}
	if len(o.lens) > 0 && n > (1<<40)/len(o.lens) {
		return o.Errorf("n_split %d for %d lengths is too large", n, len(o.lens))
	}
	out, err := o.int32Out(0, len(o.lens)*n)
	if err != nil {
		return err
	}
	for i, l := range o.lens {
		for j := range n {
			part := l / n
			if j < l%n {
				part++
			}
			out[i*n+j] = int32(part)
		}
	}
	return nil
}
