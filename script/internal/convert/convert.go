package convert

import (
	"fmt"
	"math"
	"strconv"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// IntOf returns v as an int64 when it is an int or a bool.
func IntOf(v starlark.Value) (int64, bool) {
	switch x := v.(type) {
	case starlark.Int:
		return x.Int64()
	case starlark.Bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// BytesOf returns the bytes of bytes or a string.
func BytesOf(v starlark.Value) ([]byte, bool) {
	switch x := v.(type) {
	case starlark.Bytes:
		return []byte(x), true
	case starlark.String:
		return []byte(x), true
	}
	return nil, false
}

// IsStringLike reports whether v is a string or bytes.
func IsStringLike(v starlark.Value) bool {
	switch v.(type) {
	case starlark.String, starlark.Bytes:
		return true
	}
	return false
}

// Float unpacks a float parameter that also accepts an int, as Python's
// float parameters do.
type Float float64

// Unpack implements starlark.Unpacker.
func (f *Float) Unpack(v starlark.Value) error {
	x, ok := starlark.AsFloat(v)
	if !ok {
		return fmt.Errorf("got %s, want float", v.Type())
	}
	*f = Float(x)
	return nil
}

// Float32Value converts f to the Starlark float whose shortest decimal form
// is f's, so that a float32 0.1 prints as 0.1, as NumPy prints it.
func Float32Value(f float32) starlark.Float {
	if math.IsInf(float64(f), 0) || math.IsNaN(float64(f)) {
		return starlark.Float(f)
	}
	d, _ := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', -1, 32), 64)
	return starlark.Float(d)
}

// IterValues returns the elements of seq.
func IterValues(seq starlark.Indexable) []starlark.Value {
	out := make([]starlark.Value, seq.Len())
	for i := range out {
		out[i] = seq.Index(i)
	}
	return out
}

// StringList returns names as a Starlark list of strings.
func StringList(names []string) *starlark.List {
	vals := make([]starlark.Value, len(names))
	for i, s := range names {
		vals[i] = starlark.String(s)
	}
	return starlark.NewList(vals)
}

// StructOf builds a read-only struct value (used for small records such as
// core.DataType).
func StructOf(name string, fields starlark.StringDict) *starlarkstruct.Struct {
	return starlarkstruct.FromStringDict(starlark.String(name), fields)
}
