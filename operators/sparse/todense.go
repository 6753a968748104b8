package sparse

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "SparseToDense", MinInputs: 2, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Doc: "(INDICES, VALUES[, DATA_TO_INFER_DIM]) -> OUTPUT: zeros of shape [N] + VALUES.dims[1:], where N is dim 0 of " +
			"DATA_TO_INFER_DIM (or max(INDICES)+1), with VALUES[i] added into row INDICES[i] (repeated indices add up).",
	}, func(b *operators.Base) (operators.Operator, error) { return &sparseToDenseOp{Base: b}, nil })
	operators.MustRegisterGradient("SparseToDense", func(g *operators.GradientContext) error {
		g.Op("Gather", []string{g.GO(0), g.I(0)}, []string{g.GI(1)})
		return nil
	})
	operators.MustRegisterShapeFunc("SparseToDense", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		rowsFrom := -1
		if len(in) == 3 {
			rowsFrom = 2
		}
		return shapeRows(1, rowsFrom, blob.Undefined)(b, in)
	})
}

type sparseToDenseOp struct {
	*operators.Base
	idx  []int
	dims []int
}

func (o *sparseToDenseOp) Run() error {
	vals, err := o.Input(1)
	if err != nil {
		return err
	}
	dt := vals.DataType()
	switch dt {
	case blob.Float32, blob.Float64, blob.Int32, blob.Int64:
	default:
		return o.Errorf("VALUES input 1 (%q) has type %v, want FLOAT, DOUBLE, INT32 or INT64", o.InputName(1), dt)
	}
	if vals.NumDims() < 1 {
		return o.Errorf("VALUES input 1 (%q) must have at least 1 dim, has shape %v", o.InputName(1), vals.Dims())
	}
	o.idx, _, err = readInts(o.Base, 0, "INDICES", o.idx)
	if err != nil {
		return err
	}
	if len(o.idx) != vals.Dim(0) {
		return o.Errorf("INDICES input 0 (%q) has %d elements, VALUES input 1 (%q) of shape %v has %d rows",
			o.InputName(0), len(o.idx), o.InputName(1), vals.Dims(), vals.Dim(0))
	}
	rows := 0
	if o.NumInputs() == 3 {
		d, err := o.Input(2)
		if err != nil {
			return err
		}
		if d.NumDims() < 1 {
			return o.Errorf("DATA_TO_INFER_DIM input 2 (%q) must have at least 1 dim, has shape %v", o.InputName(2), d.Dims())
		}
		rows = d.Dim(0)
	} else {
		for _, v := range o.idx {
			rows = max(rows, v+1)
		}
	}
	for k, v := range o.idx {
		if v < 0 || v >= rows {
			return o.Errorf("INDICES input 0 (%q) element %d is %d, out of range for an output of %d rows", o.InputName(0), k, v, rows)
		}
	}
	o.dims = outDims(o.dims, rows, vals.Dims())
	y := o.Output(0)
	if err := y.Init(dt, o.dims...); err != nil {
		return err
	}
	if y.Size() == 0 {
		return nil
	}
	block := y.Size() / rows
	switch dt {
	case blob.Float32:
		scatterAdd(blob.Data[float32](y), blob.Data[float32](vals), o.idx, block)
	case blob.Float64:
		scatterAdd(blob.Data[float64](y), blob.Data[float64](vals), o.idx, block)
	case blob.Int32:
		scatterAdd(blob.Data[int32](y), blob.Data[int32](vals), o.idx, block)
	case blob.Int64:
		scatterAdd(blob.Data[int64](y), blob.Data[int64](vals), o.idx, block)
	}
	return nil
}

// scatterAdd zeroes out and adds block k of vals into block idx[k].
func scatterAdd[T float32 | float64 | int32 | int64](out, vals []T, idx []int, block int) {
	clear(out)
	for k, r := range idx {
		dst, src := out[r*block:(r+1)*block], vals[k*block:(k+1)*block]
		for j, v := range src {
			dst[j] += v
		}
	}
}
