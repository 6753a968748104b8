package sparse

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "SegmentOneHot", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Doc: "(LENGTHS, INDICES, INDEX_SIZE) -> FLOAT [len(LENGTHS), INDEX_SIZE]: row m has 1 at the indices of segment m.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &oneHotOp{Base: b, run: segmentOneHot}, nil
	})
	operators.MustRegisterShapeFunc("SegmentOneHot", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		return []operators.TensorShape{operators.Shape(blob.Float32, dim0(in[0]), operators.AnyDim)}, nil
	})
	operators.MustRegisterCPU(operators.Schema{
		Type: "BatchOneHot", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Doc: "(X [N, D], LENS [D], VALS [sum(LENS)]) -> [N, sum(LENS)] of X's type: column j of X one-hot encoded against its LENS[j] values.",
	}, func(b *operators.Base) (operators.Operator, error) { return &oneHotOp{Base: b, run: batchOneHot}, nil })
	operators.MustRegisterShapeFunc("BatchOneHot", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		return []operators.TensorShape{operators.Shape(in[0].Type, dim0(in[0]), dim0(in[2]))}, nil
	})
	operators.MustRegisterCPU(operators.Schema{
		Type: "BatchBucketOneHot", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Doc: "(X [N, D], LENS [D], BOUNDARIES) -> FLOAT [N, sum(LENS)+D]: column j of X bucketized by its LENS[j] boundaries " +
			"(right-inclusive buckets) and one-hot encoded.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &oneHotOp{Base: b, run: batchBucketOneHot}, nil
	})
	operators.MustRegisterShapeFunc("BatchBucketOneHot", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		return []operators.TensorShape{operators.Shape(blob.Float32, dim0(in[0]), operators.AnyDim)}, nil
	})
	for _, t := range []string{"SegmentOneHot", "BatchOneHot", "BatchBucketOneHot"} {
		operators.MustRegisterNoGradient(t)
	}
}

type oneHotOp struct {
	*operators.Base
	run  func(*oneHotOp) error
	lens []int
	idx  []int
}

func (o *oneHotOp) Run() error { return o.run(o) }

func segmentOneHot(o *oneHotOp) error {
	var err error
	var total int
	if o.lens, total, err = o.LengthsInput(0, o.lens); err != nil {
		return err
	}
	size, _, err := readInts(o.Base, 2, "INDEX_SIZE", nil)
	if err != nil {
		return err
	}
	if len(size) != 1 || size[0] <= 0 {
		return o.Errorf("INDEX_SIZE input 2 (%q) must hold one value > 0, holds %v", o.InputName(2), size)
	}
	n := size[0]
	if o.idx, err = readIndices(o.Base, 1, n, "the index", o.idx); err != nil {
		return err
	}
	if len(o.idx) != total {
		return o.Errorf("LENGTHS input 0 (%q) adds up to %d, INDICES input 1 (%q) has %d elements", o.InputName(0), total, o.InputName(1), len(o.idx))
	}
	y := o.Output(0)
	if err := y.Init(blob.Float32, len(o.lens), n); err != nil {
		return err
	}
	out := blob.Data[float32](y)
	clear(out)
	k := 0
	for m, l := range o.lens {
		for range l {
			out[m*n+o.idx[k]] = 1
			k++
		}
	}
	return nil
}

// columns checks X (input 0, at least 1-D) against LENS (input 1) and
// returns N, D and the lengths.
func (o *oneHotOp) columns() (x *blob.Tensor, n, d int, err error) {
	if x, err = o.Input(0); err != nil {
		return nil, 0, 0, err
	}
	if x.NumDims() < 1 {
		return nil, 0, 0, o.Errorf("X input 0 (%q) must have at least 1 dim, has shape %v", o.InputName(0), x.Dims())
	}
	if o.lens, _, err = o.LengthsInput(1, o.lens); err != nil {
		return nil, 0, 0, err
	}
	n = x.Dim(0)
	d = len(o.lens)
	if x.Size() != n*d && !(x.Size() == 0 && (n == 0 || d == 0)) {
		return nil, 0, 0, o.Errorf("LENS input 1 (%q) has %d elements, X input 0 (%q) of shape %v has rows of another size", o.InputName(1), d, o.InputName(0), x.Dims())
	}
	return x, n, d, nil
}

func batchOneHot(o *oneHotOp) error {
	x, n, d, err := o.columns()
	if err != nil {
		return err
	}
	vals, err := o.InputOf(2, x.DataType())
	if err != nil {
		return err
	}
	width := 0
	for _, l := range o.lens {
		width += l
	}
	if vals.Size() != width {
		return o.Errorf("VALS input 2 (%q) has %d elements, want sum(LENS) = %d", o.InputName(2), vals.Size(), width)
	}
	y := o.Output(0)
	if err := y.Init(x.DataType(), n, width); err != nil {
		return err
	}
	switch x.DataType() {
	case blob.Float32:
		oneHotColumns(blob.Data[float32](y), blob.Data[float32](x), blob.Data[float32](vals), n, d, o.lens)
	case blob.Int32:
		oneHotColumns(blob.Data[int32](y), blob.Data[int32](x), blob.Data[int32](vals), n, d, o.lens)
	case blob.Int64:
		oneHotColumns(blob.Data[int64](y), blob.Data[int64](x), blob.Data[int64](vals), n, d, o.lens)
	default:
		return o.Errorf("X input 0 (%q) has type %v, want FLOAT, INT32 or INT64", o.InputName(0), x.DataType())
	}
	return nil
}

func oneHotColumns[T float32 | int32 | int64](out, x, vals []T, n, d int, lens []int) {
	width := len(vals)
	for i := range n {
		p := 0
		for j, l := range lens {
			for range l {
				out[i*width+p] = 0
				if x[i*d+j] == vals[p] {
					out[i*width+p] = 1
				}
				p++
			}
		}
	}
}

func batchBucketOneHot(o *oneHotOp) error {
	x, n, d, err := o.columns()
	if err != nil {
		return err
	}
	if x.DataType() != blob.Float32 {
		return o.Errorf("X input 0 (%q) has type %v, want FLOAT", o.InputName(0), x.DataType())
	}
	bt, err := o.InputOf(2, blob.Float32)
	if err != nil {
		return err
	}
	bounds := blob.Data[float32](bt)
	width, total := 0, 0
	for j, l := range o.lens {
		if l == 0 {
			return o.Errorf("LENS input 1 (%q) element %d is 0, must be > 0", o.InputName(1), j)
		}
		total += l
		width += l + 1
	}
	if total != len(bounds) {
		return o.Errorf("LENS input 1 (%q) adds up to %d, BOUNDARIES input 2 (%q) has %d elements", o.InputName(1), total, o.InputName(2), len(bounds))
	}
	y := o.Output(0)
	if err := y.Init(blob.Float32, n, width); err != nil {
		return err
	}
	out, in := blob.Data[float32](y), blob.Data[float32](x)
	clear(out)
	for i := range n {
		bo, oo := 0, 0
		for j, l := range o.lens {
			out[i*width+oo+lowerBound(bounds[bo:bo+l], in[i*d+j])] = 1
			bo += l
			oo += l + 1
		}
	}
	return nil
}
