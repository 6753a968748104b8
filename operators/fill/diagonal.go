package fill

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	register(fillerSchema("DiagonalFill",
		"Fills the output (at least 2-D; beyond 2-D all dimensions equal) with zeros and 'value' on its diagonal: "+
			"every step-th element from the first, step being cols + 1 for a matrix (a tall matrix wraps around, as "+
			"numpy.fill_diagonal(wrap=True)) and 1 + d + d² + … + d^(n-1) for n dimensions of size d.",
		operators.ArgSpec{Name: "value", Default: 0.0, Doc: "the diagonal value, read according to dtype"},
		operators.ArgSpec{Name: "dtype", Default: int64(blob.Float32), Doc: "TensorProto.DataType of the output; when absent, FLOAT for a float value and INT64 for an integer value"},
	), newDiagonalFill)
}

// diagonalFill is DiagonalFill.
type diagonalFill struct {
	filler
	dtype blob.DataType
	f     float64
	i     int64
}

func newDiagonalFill(b *operators.Base) (operators.Operator, error) {
	f, err := newFiller(b)
	if err != nil {
		return nil, err
	}
	o := &diagonalFill{filler: f, dtype: blob.DataType(b.ArgInt("dtype", int64(blob.Float32)))}
	if value := netdef.FindArg(b.Def().Arg, "value"); !b.HasArg("dtype") && value != nil {
		switch {
		case value.F != nil:
			o.dtype = blob.Float32
		case value.I != nil:
			o.dtype = blob.Int64
		default:
			return nil, b.Errorf("argument 'value' is of unexpected type (give f or i, or set dtype)")
		}
	}
	switch o.dtype {
	case blob.Float32, blob.Float64, blob.Bool, blob.Int8, blob.Int16, blob.Int32, blob.Int64, blob.Uint8, blob.Uint16:
		o.f, o.i = float64(b.ArgFloat("value", 0)), b.ArgInt("value", 0)
	default:
		return nil, b.Errorf("unexpected 'dtype' argument value: %d (%v)", int32(o.dtype), o.dtype)
	}
	return o, nil
}

func (o *diagonalFill) Run() error {
	dims, err := o.outputShape()
	if err != nil {
		return err
	}
	if len(dims) < 2 {
		return o.Errorf("the output shape %v (from %s) must have at least 2 dimensions", dims, o.shapeSource())
	}
	for _, d := range dims[2:] {
		if d != dims[0] || dims[1] != dims[0] {
			return o.Errorf("all dimensions of the output shape %v (from %s) must be of equal length", dims, o.shapeSource())
		}
	}
	y, err := o.initOutput(o.dtype, dims)
	if err != nil {
		return err
	}
	// The output exists, so the sums below cannot overflow.
	step := dims[1] + 1
	if len(dims) > 2 {
		step = 1
		for i, p := 1, 1; i < len(dims); i++ {
			p *= dims[0]
			step += p
		}
	}
	switch o.dtype {
	case blob.Float32:
		diagonal(blob.Data[float32](y), step, float32(o.f))
	case blob.Float64:
		diagonal(blob.Data[float64](y), step, o.f)
	case blob.Bool:
		diagonal(blob.Data[bool](y), step, o.i != 0)
	case blob.Int8:
		diagonal(blob.Data[int8](y), step, int8(o.i))
	case blob.Int16:
		diagonal(blob.Data[int16](y), step, int16(o.i))
	case blob.Int32:
		diagonal(blob.Data[int32](y), step, int32(o.i))
	case blob.Int64:
		diagonal(blob.Data[int64](y), step, o.i)
	case blob.Uint8:
		diagonal(blob.Data[uint8](y), step, uint8(o.i))
	case blob.Uint16:
		diagonal(blob.Data[uint16](y), step, uint16(o.i))
	}
	return nil
}

// diagonal zeroes d and sets every step-th element from the first to v.
func diagonal[T blob.Element](d []T, step int, v T) {
	clear(d)
	for i := 0; i < len(d); i += step {
		d[i] = v
	}
}
