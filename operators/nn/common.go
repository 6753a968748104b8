package nn

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

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

// outputAndGradient returns inputs 0 and 1 of a gradient operator that
// takes a float output Y and its gradient dY, which must have Y's type and
// size.
func outputAndGradient(o *operators.Base) (y, dy *blob.Tensor, err error) {
	if y, err = o.FloatInput(0); err != nil {
		return nil, nil, err
	}
	if dy, err = inputLike(o, 1, 0, y); err != nil {
		return nil, nil, err
	}
	if dy.Size() != y.Size() {
		return nil, nil, o.Errorf("input 1 (%q) has shape %v, but input 0 (%q) has shape %v", o.InputName(1), dy.Dims(), o.InputName(0), y.Dims())
	}
	return y, dy, nil
}

// ld is the leading dimension of a row-major matrix with cols columns, as
// the GEMM kernel wants it (at least 1, even for an empty matrix).
func ld(cols int) int { return max(1, cols) }
