package ndarray

import (
	"fmt"

	"go.starlark.net/starlark"
)

// Product returns the number of elements of an array of shape dims.
func Product(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}

// SameShape reports whether two shapes are equal.
func SameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// BroadcastShape returns the shape NumPy broadcasts a and b to.
func BroadcastShape(a, b []int) ([]int, bool) {
	n := max(len(a), len(b))
	out := make([]int, n)
	for i := 0; i < n; i++ {
		da, db := 1, 1
		if j := len(a) - n + i; j >= 0 {
			da = a[j]
		}
		if j := len(b) - n + i; j >= 0 {
			db = b[j]
		}
		switch {
		case da == db || db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, false
		}
	}
	return out, true
}

// BroadcastIndex returns, for each flat index of an array of shape out, the
// flat index of the element of an array of shape in that broadcasts to it.
func BroadcastIndex(in, out []int) []int {
	n := Product(out)
	strides := make([]int, len(out))
	s := 1
	for i := len(in) - 1; i >= 0; i-- {
		j := len(out) - len(in) + i
		if in[i] != 1 {
			strides[j] = s
		}
		s *= in[i]
	}
	idx := make([]int, n)
	counter := make([]int, len(out))
	off := 0
	for k := 0; k < n; k++ {
		idx[k] = off
		for d := len(out) - 1; d >= 0; d-- {
			counter[d]++
			off += strides[d]
			if counter[d] < out[d] {
				break
			}
			off -= strides[d] * counter[d]
			counter[d] = 0
		}
	}
	return idx
}

// ShapeArgs reads a shape given as separate ints or as one tuple or list.
func ShapeArgs(args starlark.Tuple) ([]int, error) {
	if len(args) == 1 {
		if _, ok := args[0].(starlark.Int); !ok {
			return ShapeOf(args[0])
		}
	}
	return ShapeOf(args)
}

// ShapeOf reads a shape: an int, or a sequence of ints.
func ShapeOf(v starlark.Value) ([]int, error) {
	if i, ok := v.(starlark.Int); ok {
		n, err := starlark.AsInt32(i)
		return []int{n}, err
	}
	seq, ok := v.(starlark.Indexable)
	if !ok {
		return nil, fmt.Errorf("shape must be an int or a tuple of ints, not %s", v.Type())
	}
	out := make([]int, seq.Len())
	for i := range out {
		n, err := starlark.AsInt32(seq.Index(i))
		if err != nil {
			return nil, fmt.Errorf("shape must be a tuple of ints: %v", err)
		}
		out[i] = n
	}
	return out, nil
}

// ResolveShape fills in one -1 dimension so that shape holds size elements.
func ResolveShape(shape []int, size int) ([]int, error) {
	shape = append([]int{}, shape...)
	unknown, known := -1, 1
	for i, d := range shape {
		switch {
		case d == -1 && unknown < 0:
			unknown = i
		case d < 0:
			return nil, fmt.Errorf("can only specify one unknown dimension, and dimensions must be non-negative")
		default:
			known *= d
		}
	}
	if unknown >= 0 && known > 0 && size%known == 0 {
		shape[unknown] = size / known
	}
	if Product(shape) != size || (unknown >= 0 && shape[unknown] < 0) {
		return nil, fmt.Errorf("cannot reshape array of size %d into shape %s", size, ShapeString(shape))
	}
	return shape, nil
}
