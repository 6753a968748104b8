package ndarray

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/script/internal/convert"
)

// A TensorValue is a Starlark value that wraps a tensor: np's ndarray.
type TensorValue interface {
	starlark.Value
	Tensor() *blob.Tensor
}

// ToTensor converts a Starlark value to a tensor: an ndarray (copied, or
// converted to dt), a number, a bool, a string, or nested lists and tuples
// of those (rectangular). Without hasDT the type is inferred as NumPy does:
// bool, then int64, then float64 (or the arrays' own types), and object
// for strings.
func ToTensor(v starlark.Value, dt blob.DataType, hasDT bool) (*blob.Tensor, error) {
	if a, ok := v.(TensorValue); ok {
		if !hasDT {
			return a.Tensor().Clone(), nil
		}
		return Astype(a.Tensor(), dt)
	}
	var leaves []starlark.Value
	var arrayType blob.DataType
	sawArray := false
	var walk func(v starlark.Value, depth int) ([]int, error)
	walk = func(v starlark.Value, depth int) ([]int, error) {
		switch x := v.(type) {
		case TensorValue:
			t := x.Tensor()
			if !sawArray {
				arrayType, sawArray = t.DataType(), true
			} else {
				arrayType = Promote(arrayType, t.DataType())
			}
			for i := 0; i < t.Size(); i++ {
				leaves = append(leaves, ElemValue(t, i))
			}
			return t.Shape(), nil
		case *starlark.List, starlark.Tuple:
			seq := x.(starlark.Indexable)
			if depth > 32 {
				return nil, fmt.Errorf("nesting too deep")
			}
			if seq.Len() == 0 {
				return []int{0}, nil
			}
			var inner []int
			for i := 0; i < seq.Len(); i++ {
				s, err := walk(seq.Index(i), depth+1)
				if err != nil {
					return nil, err
				}
				if i == 0 {
					inner = s
				} else if !SameShape(s, inner) {
					return nil, fmt.Errorf("setting an array element with a sequence: the requested array has an inhomogeneous shape after %d dimensions", depth+1)
				}
			}
			return append([]int{seq.Len()}, inner...), nil
		case starlark.Int, starlark.Float, starlark.Bool, starlark.String:
			leaves = append(leaves, v)
			return nil, nil
		}
		return nil, fmt.Errorf("cannot make an array element of a %s", v.Type())
	}
	shape, err := walk(v, 0)
	if err != nil {
		return nil, err
	}
	if !hasDT {
		dt = InferType(leaves, arrayType, sawArray)
	}
	switch KindOf(dt) {
	case KindString:
		strs := make([]string, len(leaves))
		for i, l := range leaves {
			s, ok := l.(starlark.String)
			if !ok {
				return nil, fmt.Errorf("cannot mix strings and numbers in an array")
			}
			strs[i] = string(s)
		}
		return blob.FromSlice(strs, Dims(shape)...)
	case KindFloat:
		vals := make([]float64, len(leaves))
		for i, l := range leaves {
			f, ok := starlark.AsFloat(l)
			if !ok {
				if b, isBool := l.(starlark.Bool); isBool && bool(b) {
					f, ok = 1, true
				} else if isBool {
					ok = true
				}
			}
			if !ok {
				return nil, fmt.Errorf("could not convert %s to float", l.Type())
			}
			vals[i] = f
		}
		return TensorFromFloats(dt, shape, vals)
	}
	vals := make([]int64, len(leaves))
	for i, l := range leaves {
		switch x := l.(type) {
		case starlark.Int:
			n, ok := x.Int64()
			if !ok {
				return nil, fmt.Errorf("integer %s is too large", x)
			}
			vals[i] = n
		case starlark.Bool:
			if x {
				vals[i] = 1
			}
		case starlark.Float:
			if dt == blob.Bool {
				if x != 0 {
					vals[i] = 1
				}
			} else {
				vals[i] = floatToInt(float64(x))
			}
		default:
			return nil, fmt.Errorf("could not convert %s to %s", l.Type(), DTypeName(dt))
		}
	}
	return TensorFromInts(dt, shape, vals)
}

// InferType returns the element type NumPy gives an array of leaves (and
// of arrays of type arrayType, when sawArray): bool, then int64, then
// float64, or object when a leaf is a string.
func InferType(leaves []starlark.Value, arrayType blob.DataType, sawArray bool) blob.DataType {
	k := KindBool
	strs := false
	for _, l := range leaves {
		switch l.(type) {
		case starlark.String:
			strs = true
		case starlark.Float:
			k = max(k, KindFloat)
		case starlark.Int:
			k = max(k, KindInt)
		}
	}
	switch {
	case strs:
		return blob.String
	case sawArray:
		return arrayType
	case len(leaves) == 0 || k == KindFloat:
		return blob.Float64
	case k == KindInt:
		return blob.Int64
	}
	return blob.Bool
}

// TensorArg converts an argument that should be an array (an ndarray, or
// anything np.array accepts).
func TensorArg(fnName string, v starlark.Value) (*blob.Tensor, error) {
	if a, ok := v.(TensorValue); ok {
		return a.Tensor(), nil
	}
	t, err := ToTensor(v, 0, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", fnName, err)
	}
	return t, nil
}

// ShapeTuple returns dims as a Starlark tuple, as x.shape gives it.
func ShapeTuple(dims []int) starlark.Tuple {
	t := make(starlark.Tuple, len(dims))
	for i, d := range dims {
		t[i] = starlark.MakeInt(d)
	}
	return t
}

// ElemValue returns element i of t as a Starlark scalar.
func ElemValue(t *blob.Tensor, i int) starlark.Value {
	switch d := t.Raw().(type) {
	case []float64:
		return starlark.Float(d[i])
	case []float32:
		return convert.Float32Value(d[i])
	case []blob.Half:
		return convert.Float32Value(d[i].Float32())
	case []bool:
		return starlark.Bool(d[i])
	case []string:
		return starlark.String(d[i])
	}
	return starlark.MakeInt64(IntsOf(t)[i])
}

// ToList converts t's elements from flat offset off with the given shape
// to nested Starlark lists.
func ToList(t *blob.Tensor, off int, shape []int) starlark.Value {
	if len(shape) == 0 {
		return ElemValue(t, off)
	}
	inner := Product(shape[1:])
	items := make([]starlark.Value, shape[0])
	for i := range items {
		items[i] = ToList(t, off+i*inner, shape[1:])
	}
	return starlark.NewList(items)
}
