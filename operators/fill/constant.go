package fill

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/internal/vec"
)

func init() {
	register(fillerSchema("ConstantFill",
		"Fills the output with the constant 'value' of element type 'dtype'.",
		operators.ArgSpec{Name: "value", Default: 0.0, Doc: "the fill value, read according to dtype"},
		operators.ArgSpec{Name: "dtype", Default: int64(blob.Float32), Doc: "TensorProto.DataType of the output; when absent, FLOAT for a float value and INT64 for an integer value"},
	), newConstantFill)
}

type constantFill struct {
	filler
	dtype blob.DataType
	f     float64 // the value, for float types
	i     int64   // the value, for integer and boolean types
	s     string  // the value, for strings
}

func newConstantFill(b *operators.Base) (operators.Operator, error) {
	f, err := newFiller(b)
	if err != nil {
		return nil, err
	}
	o := &constantFill{filler: f, dtype: blob.DataType(b.ArgInt("dtype", int64(blob.Float32)))}
	value := netdef.FindArg(b.Def().Arg, "value")
	if !b.HasArg("dtype") && value != nil {
		// Caffe2 infers the type from the value: float → FLOAT, integer → INT64.
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
		o.f = float64(b.ArgFloat("value", 0))
		o.i = b.ArgInt("value", 0)
	case blob.String:
		o.s = b.ArgString("value", "")
	case blob.Undefined:
		return nil, b.Errorf("ConstantFill cannot have an undefined 'dtype' argument")
	default:
		return nil, b.Errorf("unexpected 'dtype' argument value: %d (%v)", int32(o.dtype), o.dtype)
	}
	return o, nil
}

func (o *constantFill) Run() error {
	y, err := o.output(o.dtype)
	if err != nil {
		return err
	}
	switch o.dtype {
	case blob.Float32:
		vec.Fill(blob.Data[float32](y), float32(o.f))
	case blob.Float64:
		vec.Fill(blob.Data[float64](y), o.f)
	case blob.Bool:
		vec.Fill(blob.Data[bool](y), o.i != 0)
	case blob.Int8:
		vec.Fill(blob.Data[int8](y), int8(o.i))
	case blob.Int16:
		vec.Fill(blob.Data[int16](y), int16(o.i))
	case blob.Int32:
		vec.Fill(blob.Data[int32](y), int32(o.i))
	case blob.Int64:
		vec.Fill(blob.Data[int64](y), o.i)
	case blob.Uint8:
		vec.Fill(blob.Data[uint8](y), uint8(o.i))
	case blob.Uint16:
		vec.Fill(blob.Data[uint16](y), uint16(o.i))
	case blob.String:
		vec.Fill(blob.Data[string](y), o.s)
	}
	return nil
}
