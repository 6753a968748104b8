package nn

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterShapeFunc("FC", fcShape(false))
	operators.MustRegisterShapeFunc("FCTransposed", fcShape(true))
	operators.MustRegisterShapeFunc("Relu", operators.SameAsInput0, "LeakyRelu", "Sigmoid", "Tanh", "Softmax")
	operators.MustRegisterShapeFunc("Dropout", dropoutShape)
}

// fcShape infers Y = X·Wᵀ + b: X flattened at axis is M×K, W flattened at
// axis_w is N×K (K×N transposed), b has N elements, and Y is X's dims
// before axis followed by N. K is checked wherever both sides know it, so a
// mismatch between layers shows before the batch size is known.
func fcShape(transposed bool) operators.ShapeFunc {
	return func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		x, w := in[0], in[1]
		if w.Unknown {
			return nil, nil
		}
		axw, ok := operators.CanonicalAxis(int(b.ArgInt("axis_w", 1)), w.Rank())
		if !ok {
			return nil, b.InputShapeError(in, "axis_w %d is out of range for W", b.ArgInt("axis_w", 1))
		}
		n, nOK := w.Size(0, axw)
		wk, wkOK := w.Size(axw, w.Rank())
		if transposed {
			n, nOK, wk, wkOK = wk, wkOK, n, nOK
		}
		if !nOK {
			n = operators.AnyDim
		}
		if len(in) > 2 && !in[2].Unknown && nOK {
			if size, ok := in[2].Size(0, in[2].Rank()); ok && (in[2].Rank() != 1 || size != n) {
				return nil, b.InputShapeError(in, "b must have shape [%d] for W", n)
			}
		}
		if x.Unknown {
			// Y is X's dims before axis, then N: with a non-negative axis
			// its rank is known even when X's is not.
			if dims, ok := operators.AnyDims(int(b.ArgInt("axis", 1))); ok {
				return []operators.TensorShape{operators.Shape(w.Type, append(dims, n)...)}, nil
			}
			return nil, nil
		}
		ax, ok := operators.CanonicalAxis(int(b.ArgInt("axis", 1)), x.Rank())
		if !ok {
			return nil, b.InputShapeError(in, "axis %d is out of range for X", b.ArgInt("axis", 1))
		}
		if k, ok := x.Size(ax, x.Rank()); ok && wkOK && k != wk {
			return nil, b.InputShapeError(in, "dimension mismatch: X flattened at axis %d has %d columns, but W flattened at axis_w %d has %d inputs",
				ax, k, axw, wk)
		}
		dims := append(append([]int{}, x.Dims[:ax]...), n)
		return []operators.TensorShape{operators.Shape(x.Type, dims...)}, nil
	}
}

// dropoutShape: Y has X's shape and the mask, written in training mode
// only, X's dims as bools.
func dropoutShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	if b.ArgBool("is_test", false) {
		return []operators.TensorShape{in[0]}, nil
	}
	return []operators.TensorShape{in[0], in[0].WithType(blob.Bool)}, nil
}

func init() {
	// (Y, dY) → dX.
	operators.MustRegisterShapeFunc("ReluGradient", operators.SameShapes([]int{0, 1}, 0),
		"LeakyReluGradient", "SigmoidGradient", "TanhGradient", "SoftmaxGradient")
	// (dY[, mask]) → dX.
	operators.MustRegisterShapeFunc("DropoutGrad", operators.SameShapes([]int{0, 1}, 0))
	operators.MustRegisterShapeFunc("FCGradient", fcGradShape(false))
	operators.MustRegisterShapeFunc("FCTransposedGradient", fcGradShape(true))
}

// fcGradShape: (X, W, dY) → (dW like W, db with one element per output,
// dX like X), dY being what the forward pass gives for X and W.
func fcGradShape(transposed bool) operators.ShapeFunc {
	forward := fcShape(transposed)
	return func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		y, err := forward(b, in[:2])
		if err != nil {
			return nil, err
		}
		db := operators.UnknownShape
		if len(y) == 1 && y[0].Rank() > 0 {
			db = operators.Shape(in[1].Type, y[0].Dim(y[0].Rank()-1))
			if !y[0].Agrees(in[2]) {
				return nil, b.InputShapeError(in, "dY must have the forward output's shape %v", y[0])
			}
		}
		return []operators.TensorShape{in[1], db, in[0]}, nil
	}
}
