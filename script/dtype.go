package script

import (
	"fmt"
	"math"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/caffe2go/caffe2go/blob"
)

// dtypeKind groups element types the way NumPy's type promotion does.
type dtypeKind int

const (
	kindBool dtypeKind = iota
	kindUint
	kindInt
	kindFloat
	kindString
)

func kindOf(dt blob.DataType) dtypeKind {
	switch dt {
	case blob.Bool:
		return kindBool
	case blob.Uint8, blob.Uint16:
		return kindUint
	case blob.Int8, blob.Int16, blob.Int32, blob.Int64:
		return kindInt
	case blob.Float16, blob.Float32, blob.Float64:
		return kindFloat
	}
	return kindString
}

// dtypes lists the NumPy names of the element types, in the order np shows
// them.
var dtypes = []struct {
	name string
	dt   blob.DataType
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

func dtypeName(dt blob.DataType) string {
	for _, d := range dtypes {
		if d.dt == dt {
			return d.name
		}
	}
	return dt.String()
}

// DType is a NumPy-style element type value (np.float32, x.dtype). Calling
// it converts a number or an array to that type.
type DType struct{ dt blob.DataType }

var (
	_ starlark.Callable   = DType{}
	_ starlark.Comparable = DType{}
	_ starlark.HasAttrs   = DType{}
)

// String returns the NumPy name ("float32").
func (d DType) String() string { return dtypeName(d.dt) }

// Type returns "dtype".
func (d DType) Type() string { return "dtype" }

// Freeze does nothing: dtypes are immutable.
func (d DType) Freeze() {}

// Truth reports true.
func (d DType) Truth() starlark.Bool { return true }

// Hash hashes the type's name.
func (d DType) Hash() (uint32, error) { return starlark.String(d.String()).Hash() }

// Name returns the NumPy name, for Callable.
func (d DType) Name() string { return d.String() }

// CompareSameType compares two dtypes (== and != only).
func (d DType) CompareSameType(op syntax.Token, y starlark.Value, _ int) (bool, error) {
	eq := d.dt == y.(DType).dt
	switch op {
	case syntax.EQL:
		return eq, nil
	case syntax.NEQ:
		return !eq, nil
	}
	return false, fmt.Errorf("dtype %s dtype not implemented", op)
}

// Attr returns name or itemsize.
func (d DType) Attr(name string) (starlark.Value, error) {
	switch name {
	case "name":
		return starlark.String(d.String()), nil
	case "itemsize":
		return starlark.MakeInt(d.dt.ItemSize()), nil
	}
	return nil, nil
}

// AttrNames lists name and itemsize.
func (d DType) AttrNames() []string { return []string{"itemsize", "name"} }

// CallInternal converts its argument: an array to an array of this type,
// anything else (a number, a list) to a scalar or an array of this type.
func (d DType) CallInternal(_ *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value = starlark.MakeInt(0)
	if err := starlark.UnpackPositionalArgs(d.String(), args, kwargs, 0, &x); err != nil {
		return nil, err
	}
	t, err := toTensor(x, d.dt, true)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", d, err)
	}
	if t.NumDims() == 0 {
		return elemValue(t, 0), nil
	}
	return &Array{t: t}, nil
}

// dtypeOf interprets a dtype argument: a DType, a name ("float32"), or the
// built-ins float, int and bool. ok is false for None.
func dtypeOf(v starlark.Value) (dt blob.DataType, ok bool, err error) {
	switch x := v.(type) {
	case nil, starlark.NoneType:
		return 0, false, nil
	case DType:
		return x.dt, true, nil
	case starlark.String:
		for _, d := range dtypes {
			if d.name == string(x) {
				return d.dt, true, nil
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

// floatsOf returns t's elements as float64s (booleans as 0 or 1).
func floatsOf(t *blob.Tensor) []float64 {
	if t.DataType() == blob.Float64 {
		return blob.Data[float64](t)
	}
	return t.AsFloat64s()
}

// intsOf returns t's elements as int64s (floats truncated toward zero,
// booleans as 0 or 1); nil for strings.
func intsOf(t *blob.Tensor) []int64 {
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

// tensorFromFloats builds a tensor of type dt and the given shape from
// float64 values.
func tensorFromFloats(dt blob.DataType, shape []int, vals []float64) (*blob.Tensor, error) {
	switch dt {
	case blob.Float64:
		return blob.FromSlice(vals, dims(shape)...)
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
	return tensorFromInts(dt, shape, ints)
}

// tensorFromInts builds a tensor of type dt from int64 values, wrapping
// around on overflow as NumPy's casts do.
func tensorFromInts(dt blob.DataType, shape []int, vals []int64) (*blob.Tensor, error) {
	switch dt {
	case blob.Int64:
		return blob.FromSlice(vals, dims(shape)...)
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
	return blob.FromSlice(out, dims(shape)...)
}

// astype converts t to dt (a copy, also when the type is the same).
func astype(t *blob.Tensor, dt blob.DataType) (*blob.Tensor, error) {
	src := kindOf(t.DataType())
	switch {
	case t.DataType() == dt:
		return t.Clone(), nil
	case src == kindString || dt == blob.String:
		return nil, fmt.Errorf("cannot convert %s to %s", dtypeName(t.DataType()), dtypeName(dt))
	case src == kindFloat:
		return tensorFromFloats(dt, t.Shape(), floatsOf(t))
	}
	return tensorFromInts(dt, t.Shape(), intsOf(t))
}

// promote returns the type NumPy gives the result of combining arrays of
// types a and b.
func promote(a, b blob.DataType) blob.DataType {
	if a == b {
		return a
	}
	ka, kb := kindOf(a), kindOf(b)
	if ka == kindString || kb == kindString {
		return blob.String
	}
	if ka == kindBool {
		return b
	}
	if kb == kindBool {
		return a
	}
	if ka > kb {
		a, b, ka, kb = b, a, kb, ka
	}
	// Now kind(a) <= kind(b).
	switch {
	case kb == kindFloat && ka == kindFloat:
		return floatOfSize(max(a.ItemSize(), b.ItemSize()))
	case kb == kindFloat:
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

// promoteScalar returns the result type of an array of type a combined with
// a Python-style scalar of kind k: the scalar adopts the array's type unless
// it is of a higher kind (NumPy 2's rules for Python scalars).
func promoteScalar(a blob.DataType, k dtypeKind) blob.DataType {
	ka := kindOf(a)
	switch {
	case ka == kindString || k == kindBool:
		return a
	case k == kindFloat && ka != kindFloat:
		return blob.Float64
	case k == kindInt && ka == kindBool:
		return blob.Int64
	}
	return a
}

// dims returns shape, or an empty non-nil shape (a 0-d tensor) for nil:
// blob.FromSlice reads a nil shape as "1-D".
func dims(shape []int) []int {
	if shape == nil {
		return []int{}
	}
	return shape
}
