package nn

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// floatInput returns input i, which must be a float32 or float64 tensor.
func floatInput(o *operators.Base, i int) (*blob.Tensor, error) {
	t, err := o.Input(i)
	if err != nil {
		return nil, err
	}
	if dt := t.DataType(); dt != blob.Float32 && dt != blob.Float64 {
		return nil, o.Errorf("input %d (%q) has type %v; %s takes FLOAT or DOUBLE tensors", i, o.InputName(i), dt, o.Type())
	}
	return t, nil
}

// inputLike returns input i, which must have the element type of input ref
// (already checked to be t).
func inputLike(o *operators.Base, i int, ref int, t *blob.Tensor) (*blob.Tensor, error) {
	u, err := o.Input(i)
	if err != nil {
		return nil, err
	}
	if u.DataType() != t.DataType() {
		return nil, o.Errorf("input %d (%q) has type %v, but input %d (%q) has type %v", i, o.InputName(i), u.DataType(), ref, o.InputName(ref), t.DataType())
	}
	return u, nil
}

// canonicalAxis maps axis, which may count from the end, into [0, ndim).
// It reports false when axis is out of range.
func canonicalAxis(axis, ndim int) (int, bool) {
	if axis < -ndim || axis >= ndim {
		return 0, false
	}
	if axis < 0 {
		axis += ndim
	}
	return axis, true
}

// ld is the leading dimension of a row-major matrix with cols columns, as
// the GEMM kernel wants it (at least 1, even for an empty matrix).
func ld(cols int) int { return max(1, cols) }

// intArg reads an integer argument of a forward operator definition, as
// gradient makers do: the value when present, def otherwise.
func intArg(def *netdef.OperatorDef, name string, dflt int64) int64 {
	a := netdef.FindArg(def.GetArg(), name)
	if a == nil {
		return dflt
	}
	return a.GetI()
}
