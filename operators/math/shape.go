package math

import (
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterShapeFunc("Add", binaryShape, "Sub", "Mul", "Div")
	operators.MustRegisterShapeFunc("Sum", sumShape)
	operators.MustRegisterShapeFunc("Exp", operators.SameAsInput0, "Log", "Sqrt", "Sqr", "Abs", "Negative", "Scale", "Clip")
}

// binaryShape infers C of a binary operator under its broadcast rule:
// Caffe2's legacy rule (broadcast=1: C has A's shape, B a block of it) or
// NumPy's, checked wherever the dims are known.
func binaryShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	args, err := parseBroadcastArgs(b)
	if err != nil {
		return nil, err
	}
	x, y := in[0], in[1]
	if args.legacy {
		if x.Unknown || y.Unknown {
			return []operators.TensorShape{x}, nil
		}
		_, aOK := x.Size(0, x.Rank())
		bn, bOK := y.Size(0, y.Rank())
		if aOK && bOK && bn != 1 {
			if _, _, _, err := legacyBlock(x.Dims, y.Dims, args.axis); err != nil {
				return nil, b.InputShapeError(in, "%v", err)
			}
		}
		return []operators.TensorShape{x}, nil
	}
	if x.Unknown || y.Unknown {
		return nil, nil
	}
	n := max(x.Rank(), y.Rank())
	dims := make([]int, n)
	for i := range n {
		da, db := 1, 1
		if j := i - (n - x.Rank()); j >= 0 {
			da = x.Dims[j]
		}
		if j := i - (n - y.Rank()); j >= 0 {
			db = y.Dims[j]
		}
		switch {
		case da == db, db == 1:
			dims[i] = da
		case da == 1:
			dims[i] = db
		case da < 0 || db < 0:
			// The unknown one is 1 or the known one.
			dims[i] = max(da, db)
		default:
			return nil, b.InputShapeError(in, "dimension mismatch - did you forget to set broadcast=1? dimension %d is %d against %d", i, da, db)
		}
	}
	return []operators.TensorShape{operators.Shape(x.Type, dims...)}, nil
}

// sumShape: every input has input 0's shape, and so has the output.
func sumShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	out := in[0]
	for _, s := range in[1:] {
		if !s.Agrees(out) {
			return nil, b.InputShapeError(in, "all inputs must have one shape")
		}
		if out.Unknown {
			out = s
		}
	}
	return []operators.TensorShape{out}, nil
}

func init() {
	operators.MustRegisterShapeFunc("WeightedSum", weightedSumShape)
}

// weightedSumShape: (X0, w0, X1, w1, …) → Y like X0, every Xi of one
// shape.
func weightedSumShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	xs := make([]int, 0, len(in)/2)
	for i := 0; i < len(in); i += 2 {
		xs = append(xs, i)
	}
	return operators.SameShapes(xs, 0)(b, in)
}
