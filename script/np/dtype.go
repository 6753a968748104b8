package np

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/script/internal/ndarray"
)

// DType is a NumPy-style element type value (np.float32, x.dtype). Calling
// it converts a number or an array to that type.
type DType struct{ dt blob.DataType }

var (
	_ starlark.Callable   = DType{}
	_ starlark.Comparable = DType{}
	_ starlark.HasAttrs   = DType{}
)

// DataType returns the element type.
func (d DType) DataType() blob.DataType { return d.dt }

// String returns the NumPy name ("float32").
func (d DType) String() string { return ndarray.DTypeName(d.dt) }

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
	t, err := ndarray.ToTensor(x, d.dt, true)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", d, err)
	}
	if t.NumDims() == 0 {
		return ndarray.ElemValue(t, 0), nil
	}
	return &Array{t: t}, nil
}
