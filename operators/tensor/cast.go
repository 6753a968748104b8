package tensor

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "Cast", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{
			{Name: "to", Default: int(netdef.TensorProto_FLOAT), Doc: "TensorProto.DataType number or name to cast to"},
			{Name: "from_type", Doc: "the input's TensorProto.DataType; required for the gradient"},
		},
		Doc: "Converts the elements to the type given by to (C casts; booleans are x != 0; strings are printf'd).",
	}, newCast)
	operators.MustRegisterGradient("Cast", castGradient)
}

// castGradient is Cast(dY) -> dX with to and from_type swapped; the forward
// arguments are not copied.
func castGradient(g *operators.GradientContext) error {
	to, err := castType(g.Def(), "to")
	if err != nil {
		return err
	}
	a := g.Arg("from_type")
	if a == nil || (a.S == nil && a.I == nil) {
		return fmt.Errorf("argument from_type of type int or string is required to get the gradient of Cast")
	}
	from, err := castType(g.Def(), "from_type")
	if err != nil {
		return err
	}
	g.CopyArguments = false
	g.Op("Cast", []string{g.GO(0)}, []string{g.GI(0)},
		netdef.ArgInt("to", int64(from)), netdef.ArgInt("from_type", int64(to)))
	return nil
}

// castType reads a data-type argument given as a TensorProto.DataType number
// or as its name (any case); it is FLOAT when absent.
func castType(def *netdef.OperatorDef, name string) (blob.DataType, error) {
	a := netdef.FindArg(def.GetArg(), name)
	switch {
	case a == nil:
		return blob.Float32, nil
	case a.S != nil:
		s := strings.ToUpper(string(a.S))
		v, ok := netdef.TensorProto_DataType_value[s]
		if !ok {
			return 0, fmt.Errorf("unknown data type %q in argument %s", s, name)
		}
		return blob.DataType(v), nil
	case a.I != nil:
		return blob.DataType(a.GetI()), nil
	}
	return blob.Float32, nil
}

type castOp struct {
	*operators.Base
	to blob.DataType
	// Scratch for half and bool inputs, which convert through float32
	// and uint8.
	f32 []float32
	u8  []uint8
}

func newCast(b *operators.Base) (operators.Operator, error) {
	to, err := castType(b.Def(), "to")
	if err != nil {
		return nil, err
	}
	switch {
	case to == blob.Undefined:
		return nil, b.Errorf("argument to must name a data type, got UNDEFINED")
	case to == blob.DataType(netdef.TensorProto_BYTE):
		return nil, b.Errorf("argument to: BYTE is deprecated")
	case !to.Valid():
		return nil, b.Errorf("argument to: unexpected data type %v", to)
	}
	return &castOp{Base: b, to: to}, nil
}

func (o *castOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	if x.DataType() == blob.String {
		return o.Errorf("input 0 (%q) holds strings; casting from STRING is not supported", o.InputName(0))
	}
	y := o.Output(0)
	if err := y.Init(o.to, x.Dims()...); err != nil {
		return err
	}
	switch x.DataType() {
	case blob.Float32:
		castFrom(y, blob.Data[float32](x))
	case blob.Float64:
		castFrom(y, blob.Data[float64](x))
	case blob.Int8:
		castFrom(y, blob.Data[int8](x))
	case blob.Int16:
		castFrom(y, blob.Data[int16](x))
	case blob.Int32:
		castFrom(y, blob.Data[int32](x))
	case blob.Int64:
		castFrom(y, blob.Data[int64](x))
	case blob.Uint8:
		castFrom(y, blob.Data[uint8](x))
	case blob.Uint16:
		castFrom(y, blob.Data[uint16](x))
	case blob.Float16:
		o.castFromHalf(y, blob.Data[blob.Half](x))
	case blob.Bool:
		o.castFromBool(y, blob.Data[bool](x))
	}
	return nil
}

func convert[D, S blob.Number](dst []D, src []S) {
	for i, v := range src {
		dst[i] = D(v)
	}
}

// castFrom converts numeric src into y, which already has its type and shape.
func castFrom[S blob.Number](y *blob.Tensor, src []S) {
	switch y.DataType() {
	case blob.Float32:
		convert(blob.Data[float32](y), src)
	case blob.Float64:
		convert(blob.Data[float64](y), src)
	case blob.Int8:
		convert(blob.Data[int8](y), src)
	case blob.Int16:
		convert(blob.Data[int16](y), src)
	case blob.Int32:
		convert(blob.Data[int32](y), src)
	case blob.Int64:
		convert(blob.Data[int64](y), src)
	case blob.Uint8:
		convert(blob.Data[uint8](y), src)
	case blob.Uint16:
		convert(blob.Data[uint16](y), src)
	case blob.Float16:
		d := blob.Data[blob.Half](y)
		for i, v := range src {
			d[i] = blob.HalfFromFloat32(float32(v))
		}
	case blob.Bool:
		d := blob.Data[bool](y)
		for i, v := range src {
			d[i] = v != 0
		}
	case blob.String:
		d := blob.Data[string](y)
		for i, v := range src {
			d[i] = formatNumber(v)
		}
	}
}

// formatNumber renders v as C++'s std::to_string does: integers in
// decimal, floating-point values with six decimals.
func formatNumber[S blob.Number](v S) string {
	switch x := any(v).(type) {
	case float32:
		return strconv.FormatFloat(float64(x), 'f', 6, 32)
	case float64:
		return strconv.FormatFloat(x, 'f', 6, 64)
	}
	return strconv.FormatInt(int64(v), 10)
}

func (o *castOp) castFromHalf(y *blob.Tensor, src []blob.Half) {
	switch y.DataType() {
	case blob.Float16:
		copy(blob.Data[blob.Half](y), src)
	case blob.Bool:
		d := blob.Data[bool](y)
		for i, h := range src {
			d[i] = h.Float32() != 0
		}
	case blob.String:
		d := blob.Data[string](y)
		for i, h := range src {
			d[i] = formatNumber(h.Float32())
		}
	default:
		o.f32 = o.f32[:0]
		for _, h := range src {
			o.f32 = append(o.f32, h.Float32())
		}
		castFrom(y, o.f32)
	}
}

func (o *castOp) castFromBool(y *blob.Tensor, src []bool) {
	switch y.DataType() {
	case blob.Bool:
		copy(blob.Data[bool](y), src)
	case blob.String:
		d := blob.Data[string](y)
		for i, b := range src {
			d[i] = "0"
			if b {
				d[i] = "1"
			}
		}
	default:
		o.u8 = o.u8[:0]
		for _, b := range src {
			var u uint8
			if b {
				u = 1
			}
			o.u8 = append(o.u8, u)
		}
		castFrom(y, o.u8)
	}
}
