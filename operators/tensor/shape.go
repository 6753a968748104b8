package tensor

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterShapeFunc("Concat", concatShape, "DepthConcat")
	operators.MustRegisterShapeFunc("Flatten", flattenShape)
	operators.MustRegisterShapeFunc("Copy", operators.SameAsInput0, "StopGradient", "Alias")
}

// concatShape: the inputs agree on every dim but the axis (every dim with
// add_axis); the output's axis is the sum of theirs (the input count, with
// add_axis), and split_info holds one INT32 per input.
func concatShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	axisArg, addAxis, err := splitAxis(b)
	if err != nil {
		return nil, err
	}
	info := operators.Shape(blob.Int32, len(in))
	x0 := in[0]
	for _, s := range in {
		if s.Unknown {
			return []operators.TensorShape{operators.UnknownShape, info}, nil
		}
		if s.Rank() != x0.Rank() {
			return nil, b.InputShapeError(in, "the inputs have different ranks")
		}
	}
	adj := x0.Rank()
	if addAxis {
		adj++
	}
	axis, ok := operators.CanonicalAxis(axisArg, adj)
	if !ok {
		return nil, b.InputShapeError(in, "axis %d is out of range", axisArg)
	}
	dims := append([]int{}, x0.Dims...)
	total := 0
	for _, s := range in {
		for j, d := range s.Dims {
			if (j != axis || addAxis) && !operators.DimsAgree(d, dims[j]) {
				return nil, b.InputShapeError(in, "the inputs differ at dimension %d; only axis %d may differ (and none with add_axis)", j, axis)
			}
			if dims[j] < 0 {
				dims[j] = d
			}
		}
		switch {
		case addAxis:
			total++
		case total >= 0 && s.Dims[axis] >= 0:
			total += s.Dims[axis]
		default:
			total = operators.AnyDim
		}
	}
	if addAxis {
		dims = append(dims[:axis], append([]int{total}, dims[axis:]...)...)
	} else {
		dims[axis] = total
	}
	return []operators.TensorShape{operators.Shape(x0.Type, dims...), info}, nil
}

// flattenShape: the dims before axis, then the ones from axis, multiplied.
func flattenShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	x := in[0]
	if x.Unknown {
		return nil, nil
	}
	axis := int(b.ArgInt("axis", 1))
	if axis < 0 {
		axis += x.Rank()
	}
	if axis < 0 || axis > x.Rank() {
		return nil, b.InputShapeError(in, "axis %d is out of range: the rank must be ≥ axis", b.ArgInt("axis", 1))
	}
	dims := []int{operators.AnyDim, operators.AnyDim}
	if n, ok := x.Size(0, axis); ok {
		dims[0] = n
	}
	if n, ok := x.Size(axis, x.Rank()); ok {
		dims[1] = n
	}
	return []operators.TensorShape{operators.Shape(x.Type, dims...)}, nil
}
