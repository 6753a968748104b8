package ndarray

import (
	"fmt"
	"math"

	"go.starlark.net/starlark"

	"github.com/caffe2go/caffe2go/blob"
)

// Kind groups element types the way NumPy's type promotion does.
type Kind int

// The kinds, in the order of promotion: a kind later in the list holds the
// values of the ones before it.
const (
	KindBool Kind = iota
	KindUint
	KindInt
	KindFloat
	KindString
)

// KindOf returns the kind of an element type (KindString for strings).
func KindOf(dt blob.DataType) Kind {
	switch dt {
	case blob.Bool:
		return KindBool
	case blob.Uint8, blob.Uint16:
		return KindUint
	case blob.Int8, blob.Int16, blob.Int32, blob.Int64:
		return KindInt
	case blob.Float16, blob.Float32, blob.Float64:
		return KindFloat
	}
	return KindString
}

// DTypes lists the NumPy names of the element types, in the order np shows
// them.
var DTypes = []struct {
	Name string
	Type blob.DataType
}{
	{"bool", blob.Bool},
	{"int8", blob.Int8},
	{"int16", blob.Int16},
	{"int32", blob.Int32},
	{"int64", blob.Int64},
	{"uint8", blob.Uint8},
	{"uint16", blob.Uint16},
	{"float16", blob.Float16},
	{"float32", blob.Float32},
	{"float64", blob.Float64},
	{"object", blob.String},
}

// dtypeAliases are the other names a dtype may be given by.
var dtypeAliases = map[string]blob.DataType{
	"bool_": blob.Bool, "float": blob.Float64, "double": blob.Float64, "int": blob.Int64,
	"long": blob.Int64, "half": blob.Float16, "single": blob.Float32, "str": blob.String,
	"bytes": blob.String, "object_": blob.String,
}

// DTypeName returns NumPy's name of an element type.
func DTypeName(dt blob.DataType) string {
	for _, d := range DTypes {
		if d.Type == dt {
			return d.Name
		}
	}
	return dt.String()
}

// A DTypeValue is a Starlark value that names an element type: np's dtype.
type DTypeValue interface {
	starlark.Value
	DataType() blob.DataType
}

// DTypeOf interprets a dtype argument: a DType, a name ("float32"), or the
// built-ins float, int and bool. ok is false for None.
func DTypeOf(v starlark.Value) (dt blob.DataType, ok bool, err error) {
	switch x := v.(type) {
	case nil, starlark.NoneType:
		return 0, false, nil
	case DTypeValue:
		return x.DataType(), true, nil
	case starlark.String:
		for _, d := range DTypes {
			if d.Name == string(x) {
				return d.Type, true, nil
			}
		}
		if dt, ok := dtypeAliases[string(x)]; ok {
			return dt, true, nil
		}
		return 0, false, fmt.Errorf("data type %q not understood", string(x))
	case *starlark.Builtin:
		switch x.Name() {
		case "float":
			return blob.Float64, true, nil
		case "int":
			return blob.Int64, true, nil
		case "bool":
			return blob.Bool, true, nil
		case "str":
			return blob.String, true, nil
		}
	}
	return 0, false, fmt.Errorf("data type %s not understood", v)
}

// FloatsOf returns t's elements as float64s (booleans as 0 or 1).
func FloatsOf(t *blob.Tensor) []float64 {
	if t.DataType() == blob.Float64 {
		return blob.Data[float64](t)
	}
	return t.AsFloat64s()
}

// IntsOf returns t's elements as int64s (floats truncated toward zero,
// booleans as 0 or 1); nil for strings.
func IntsOf(t *blob.Tensor) []int64 {
	switch d := t.Raw().(type) {
	case []int64:
		return d
	case []int32:
		return widen(d)
	case []int16:
		return widen(d)
	case []int8:
		return widen(d)
	case []uint8:
		return widen(d)
	case []uint16:
		return widen(d)
	case []bool:
		out := make([]int64, len(d))
		for i, b := range d {
			if b {
				out[i] = 1
			}
		}
		return out
	case []string:
		return nil
	}
	fs := t.AsFloat64s()
	out := make([]int64, len(fs))
	for i, f := range fs {
		out[i] = floatToInt(f)
	}
	return out
}

func widen[T int8 | int16 | int32 | uint8 | uint16](d []T) []int64 {
	out := make([]int64, len(d))
	for i, v := range d {
		out[i] = int64(v)
	}
	return out
}

// floatToInt truncates toward zero; NaN and out-of-range values give the
// minimum int64, as NumPy's conversion does on x86.
func floatToInt(f float64) int64 {
	if math.IsNaN(f) || f >= math.MaxInt64 || f < math.MinInt64 {
		return math.MinInt64
	}
	return int64(f)
}

// TensorFromFloats builds a tensor of type dt and the given shape from
// float64 values.
func TensorFromFloats(dt blob.DataType, shape []int, vals []float64) (*blob.Tensor, error) {
	switch dt {
	case blob.Float64:
		return blob.FromSlice(vals, Dims(shape)...)
	case blob.Float32:
		return convertSlice(vals, shape, func(v float64) float32 { return float32(v) })
	case blob.Float16:
		return convertSlice(vals, shape, func(v float64) blob.Half { return blob.HalfFromFloat32(float32(v)) })
	case blob.String:
		return nil, fmt.Errorf("cannot convert numbers to strings")
	}
	ints := make([]int64, len(vals))
	for i, v := range vals {
		if dt == blob.Bool {
			if v != 0 {
				ints[i] = 1
			}
			continue
		}
		ints[i] = floatToInt(v)
	}
	return TensorFromInts(dt, shape, ints)
}

// TensorFromInts builds a tensor of type dt from int64 values, wrapping
// around on overflow as NumPy's casts do.
func TensorFromInts(dt blob.DataType, shape []int, vals []int64) (*blob.Tensor, error) {
	switch dt {
	case blob.Int64:
		return blob.FromSlice(vals, Dims(shape)...)
	case blob.Int32:
		return convertSlice(vals, shape, func(v int64) int32 { return int32(v) })
	case blob.Int16:
		return convertSlice(vals, shape, func(v int64) int16 { return int16(v) })
	case blob.Int8:
		return convertSlice(vals, shape, func(v int64) int8 { return int8(v) })
	case blob.Uint8:
		return convertSlice(vals, shape, func(v int64) uint8 { return uint8(v) })
	case blob.Uint16:
		return convertSlice(vals, shape, func(v int64) uint16 { return uint16(v) })
	case blob.Bool:
		return convertSlice(vals, shape, func(v int64) bool { return v != 0 })
	case blob.Float64:
		return convertSlice(vals, shape, func(v int64) float64 { return float64(v) })
	case blob.Float32:
		return convertSlice(vals, shape, func(v int64) float32 { return float32(v) })
	case blob.Float16:
		return convertSlice(vals, shape, func(v int64) blob.Half { return blob.HalfFromFloat32(float32(v)) })
	}
	return nil, fmt.Errorf("cannot convert numbers to strings")
}

func convertSlice[S, D blob.Element](vals []S, shape []int, conv func(S) D) (*blob.Tensor, error) {
	out := make([]D, len(vals))
	for i, v := range vals {
		out[i] = conv(v)
	}
	return blob.FromSlice(out, Dims(shape)...)
}

// Astype converts t to dt (a copy, also when the type is the same).
func Astype(t *blob.Tensor, dt blob.DataType) (*blob.Tensor, error) {
	src := KindOf(t.DataType())
	switch {
	case t.DataType() == dt:
		return t.Clone(), nil
	case src == KindString || dt == blob.String:
		return nil, fmt.Errorf("cannot convert %s to %s", DTypeName(t.DataType()), DTypeName(dt))
	case src == KindFloat:
		return TensorFromFloats(dt, t.Shape(), FloatsOf(t))
	}
	return TensorFromInts(dt, t.Shape(), IntsOf(t))
}

// Promote returns the type NumPy gives the result of combining arrays of
// types a and b.
func Promote(a, b blob.DataType) blob.DataType {
	if a == b {
		return a
	}
	ka, kb := KindOf(a), KindOf(b)
	if ka == KindString || kb == KindString {
		return blob.String
	}
	if ka == KindBool {
		return b
	}
	if kb == KindBool {
		return a
	}
	if ka > kb {
		a, b, ka, kb = b, a, kb, ka
	}
	// Now kind(a) <= kind(b).
	switch {
	case kb == KindFloat && ka == KindFloat:
		return floatOfSize(max(a.ItemSize(), b.ItemSize()))
	case kb == KindFloat:
		// An integer of n bytes needs a float of 2n bytes to be exact.
		return floatOfSize(max(b.ItemSize(), 2*a.ItemSize()))
	case ka == kb:
		if a.ItemSize() > b.ItemSize() {
			return a
		}
		return b
	default:
		// unsigned a, signed b
		return intOfSize(max(b.ItemSize(), 2*a.ItemSize()))
	}
}

func floatOfSize(n int) blob.DataType {
	switch {
	case n <= 2:
		return blob.Float16
	case n <= 4:
		return blob.Float32
	}
	return blob.Float64
}

func intOfSize(n int) blob.DataType {
	switch {
	case n <= 1:
		return blob.Int8
	case n <= 2:
		return blob.Int16
	case n <= 4:
		return blob.Int32
	}
	return blob.Int64
}

// PromoteScalar returns the result type of an array of type a combined with
// a Python-style scalar of kind k: the scalar adopts the array's type unless
// it is of a higher kind (NumPy 2's rules for Python scalars).
func PromoteScalar(a blob.DataType, k Kind) blob.DataType {
	ka := KindOf(a)
	switch {
	case ka == KindString || k == KindBool:
		return a
	case k == KindFloat && ka != KindFloat:
		return blob.Float64
	case k == KindInt && ka == KindBool:
		return blob.Int64
	}
	return a
}

// Dims returns shape, or an empty non-nil shape (a 0-d tensor) for nil:
// blob.FromSlice reads a nil shape as "1-D".
func Dims(shape []int) []int {
	if shape == nil {
		return []int{}
	}
	return shape
}
