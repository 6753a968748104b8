package np

import (
	"fmt"
	"math"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/script/internal/ndarray"
)

// operand is an argument of element-wise arithmetic: an array, or a
// Starlark scalar (weak), whose kind defers to the array's type.
type operand struct {
	t    *blob.Tensor
	weak bool
	kind ndarray.Kind
}

func toOperand(v starlark.Value) (operand, bool) {
	switch x := v.(type) {
	case *Array:
		return operand{t: x.t}, true
	case starlark.Int:
		i, ok := x.Int64()
		if !ok {
			return operand{}, false
		}
		return operand{t: blob.Scalar(i), weak: true, kind: ndarray.KindInt}, true
	case starlark.Float:
		return operand{t: blob.Scalar(float64(x)), weak: true, kind: ndarray.KindFloat}, true
	case starlark.Bool:
		return operand{t: blob.Scalar(bool(x)), weak: true, kind: ndarray.KindBool}, true
	}
	return operand{}, false
}

func resultType(x, y operand) blob.DataType {
	switch {
	case x.weak && y.weak:
		return ndarray.Promote(x.t.DataType(), y.t.DataType())
	case x.weak:
		return ndarray.PromoteScalar(y.t.DataType(), x.kind)
	case y.weak:
		return ndarray.PromoteScalar(x.t.DataType(), y.kind)
	}
	return ndarray.Promote(x.t.DataType(), y.t.DataType())
}

func arith(op syntax.Token, x, y operand) (*blob.Tensor, error) {
	dt := resultType(x, y)
	if ndarray.KindOf(dt) == ndarray.KindString {
		return nil, fmt.Errorf("unsupported operand types for %s: %s and %s arrays", op, ndarray.DTypeName(x.t.DataType()), ndarray.DTypeName(y.t.DataType()))
	}
	shape, ok := ndarray.BroadcastShape(x.t.Dims(), y.t.Dims())
	if !ok {
		return nil, fmt.Errorf("operands could not be broadcast together with shapes %s %s", ndarray.ShapeString(x.t.Dims()), ndarray.ShapeString(y.t.Dims()))
	}
	xi, yi := ndarray.BroadcastIndex(x.t.Dims(), shape), ndarray.BroadcastIndex(y.t.Dims(), shape)
	if op == syntax.SLASH && ndarray.KindOf(dt) != ndarray.KindFloat {
		dt = blob.Float64
	}
	if ndarray.KindOf(dt) == ndarray.KindFloat {
		xs, ys := ndarray.FloatsOf(x.t), ndarray.FloatsOf(y.t)
		out := make([]float64, len(xi))
		for i := range out {
			out[i] = floatOp(op, xs[xi[i]], ys[yi[i]])
		}
		return ndarray.TensorFromFloats(dt, shape, out)
	}
	xs, ys := ndarray.IntsOf(x.t), ndarray.IntsOf(y.t)
	out := make([]int64, len(xi))
	for i := range out {
		out[i] = intOp(op, xs[xi[i]], ys[yi[i]])
	}
	return ndarray.TensorFromInts(dt, shape, out)
}

func floatOp(op syntax.Token, a, b float64) float64 {
	switch op {
	case syntax.PLUS:
		return a + b
	case syntax.MINUS:
		return a - b
	case syntax.STAR:
		return a * b
	case syntax.SLASH:
		return a / b
	case syntax.SLASHSLASH:
		return math.Floor(a / b)
	}
	m := math.Mod(a, b)
	if m != 0 && (m < 0) != (b < 0) {
		m += b
	}
	return m
}

// intOp applies op with Python's floor semantics; division by zero gives 0,
// as NumPy's integer division does.
func intOp(op syntax.Token, a, b int64) int64 {
	switch op {
	case syntax.PLUS:
		return a + b
	case syntax.MINUS:
		return a - b
	case syntax.STAR:
		return a * b
	}
	if b == 0 {
		return 0
	}
	q, r := a/b, a%b
	if r != 0 && (r < 0) != (b < 0) {
		q--
		r += b
	}
	if op == syntax.SLASHSLASH {
		return q
	}
	return r
}
