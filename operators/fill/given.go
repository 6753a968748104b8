package fill

import (
	"strings"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	given := []struct {
		typ   string
		dtype blob.DataType
	}{
		{"GivenTensorFill", blob.Float32},
		{"GivenTensorDoubleFill", blob.Float64},
		{"GivenTensorBoolFill", blob.Bool},
		{"GivenTensorInt16Fill", blob.Int16},
		{"GivenTensorIntFill", blob.Int32},
		{"GivenTensorInt64Fill", blob.Int64},
		{"GivenTensorStringFill", blob.String},
	}
	for _, g := range given {
		doc := "Fills a " + g.dtype.String() + " tensor with the given 'values' (in storage order); their count must equal the output size."
		args := []operators.ArgSpec{{Name: "values", Doc: "the elements: floats for FLOAT and DOUBLE, ints for integer and BOOL types, strings for STRING"}}
		if g.dtype == blob.Float32 {
			doc += " A 'dtype' argument (a TensorProto.DataType number or name) picks another element type."
			args = append(args, operators.ArgSpec{Name: "dtype", Default: int64(blob.Float32), Doc: "element type of the output"})
		}
		dtype := g.dtype
		register(fillerSchema(g.typ, doc, args...), func(b *operators.Base) (operators.Operator, error) {
			return newGivenTensorFill(b, dtype)
		})
	}
}

// givenTensorFill copies values read once from the "values" argument.
type givenTensorFill struct {
	filler
	dtype  blob.DataType
	values any // a []T of the output's element type
	n      int // len(values)
}

func newGivenTensorFill(b *operators.Base, dtype blob.DataType) (operators.Operator, error) {
	f, err := newFiller(b)
	if err != nil {
		return nil, err
	}
	if dtype == blob.Float32 && b.HasArg("dtype") {
		if dtype, err = castDataType(b, "dtype"); err != nil {
			return nil, err
		}
	}
	a := netdef.FindArg(b.Def().Arg, "values")
	if a == nil {
		a = &netdef.Argument{}
	}
	o := &givenTensorFill{filler: f, dtype: dtype}
	switch dtype {
	case blob.Float32:
		o.values, o.n = convertValues[float32](a.Floats), len(a.Floats)
	case blob.Float64:
		o.values, o.n = convertValues[float64](a.Floats), len(a.Floats)
	case blob.Bool:
		v := make([]bool, len(a.Ints))
		for i, x := range a.Ints {
			v[i] = x != 0
		}
		o.values, o.n = v, len(v)
	case blob.Int16:
		o.values, o.n = convertValues[int16](a.Ints), len(a.Ints)
	case blob.Uint16:
		o.values, o.n = convertValues[uint16](a.Ints), len(a.Ints)
	case blob.Int32:
		o.values, o.n = convertValues[int32](a.Ints), len(a.Ints)
	case blob.Int64:
		o.values, o.n = convertValues[int64](a.Ints), len(a.Ints)
	case blob.String:
		v := b.ArgStrings("values", nil)
		o.values, o.n = v, len(v)
	default:
		return nil, b.Errorf("unexpected 'dtype' argument value: %d (%v)", int32(dtype), dtype)
	}
	if b.NumInputs() == 0 {
		if err := o.checkSize(f.shape); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// convertValues returns a copy of v converted to T.
func convertValues[T int16 | uint16 | int32 | int64 | float32 | float64, S int64 | float32](v []S) []T {
	out := make([]T, len(v))
	for i, x := range v {
		out[i] = T(x)
	}
	return out
}

// castDataType reads a TensorProto.DataType given as a number or a name, the
// way Caffe2's cast::GetCastDataType does.
func castDataType(b *operators.Base, name string) (blob.DataType, error) {
	a := netdef.FindArg(b.Def().Arg, name)
	if a.S != nil {
		v, ok := netdef.TensorProto_DataType_value[strings.ToUpper(string(a.S))]
		if !ok {
			return 0, b.Errorf("argument %q: unknown data type %q", name, a.S)
		}
		return blob.DataType(v), nil
	}
	return blob.DataType(b.ArgInt(name, int64(blob.Float32))), nil
}

func (o *givenTensorFill) checkSize(dims []int) error {
	n := 1
	for _, d := range dims {
		n *= d
	}
	if n != o.n {
		return o.Errorf("output shape %v holds %d elements but %d values are given", dims, n, o.n)
	}
	return nil
}

func (o *givenTensorFill) Run() error {
	dims, err := o.outputShape()
	if err != nil {
		return err
	}
	if err := o.checkSize(dims); err != nil {
		return err
	}
	y, err := o.initOutput(o.dtype, dims)
	if err != nil {
		return err
	}
	switch v := o.values.(type) {
	case []float32:
		copy(blob.Data[float32](y), v)
	case []float64:
		copy(blob.Data[float64](y), v)
	case []bool:
		copy(blob.Data[bool](y), v)
	case []int16:
		copy(blob.Data[int16](y), v)
	case []uint16:
		copy(blob.Data[uint16](y), v)
	case []int32:
		copy(blob.Data[int32](y), v)
	case []int64:
		copy(blob.Data[int64](y), v)
	case []string:
		copy(blob.Data[string](y), v)
	}
	return nil
}
