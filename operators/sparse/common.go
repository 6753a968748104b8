package sparse

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// readInts reads input i, an INT32 or INT64 tensor, into dst (reused
// between runs); what names the input in errors ("INDICES", "LENGTHS").
func readInts(b *operators.Base, i int, what string, dst []int) ([]int, *blob.Tensor, error) {
	t, err := b.Input(i)
	if err != nil {
		return dst, nil, err
	}
	dst = dst[:0]
	switch t.DataType() {
	case blob.Int32:
		for _, v := range blob.Data[int32](t) {
			dst = append(dst, int(v))
		}
	case blob.Int64:
		for _, v := range blob.Data[int64](t) {
			dst = append(dst, int(v))
		}
	default:
		return dst, nil, b.Errorf("%s input %d (%q) has type %v, want INT32 or INT64", what, i, b.InputName(i), t.DataType())
	}
	return dst, t, nil
}

// readIndices reads the 1-D INDICES input i and checks every index against
// rows, the number of rows of the table it indexes (named table).
func readIndices(b *operators.Base, i int, rows int, table string, dst []int) ([]int, error) {
	dst, t, err := readInts(b, i, "INDICES", dst)
	if err != nil {
		return dst, err
	}
	if t.NumDims() != 1 {
		return dst, b.Errorf("INDICES input %d (%q) must be a vector, has shape %v", i, b.InputName(i), t.Dims())
	}
	for k, v := range dst {
		if v < 0 || v >= rows {
			return dst, b.Errorf("INDICES input %d (%q) element %d is %d, out of range for %q with %d rows", i, b.InputName(i), k, v, table, rows)
		}
	}
	return dst, nil
}

// floatVector returns input i as a FLOAT vector of n elements (the
// per-index weights of the weighted reductions).
func floatVector(b *operators.Base, i int, n int, what string) ([]float32, error) {
	t, err := b.InputOf(i, blob.Float32)
	if err != nil {
		return nil, err
	}
	if t.NumDims() != 1 || t.Size() != n {
		return nil, b.Errorf("%s input %d (%q) has shape %v, want [%d]", what, i, b.InputName(i), t.Dims(), n)
	}
	return blob.Data[float32](t), nil
}

// outDims returns [first] followed by dims[1:] in dst.
func outDims(dst []int, first int, dims []int) []int {
	dst = append(dst[:0], first)
	if len(dims) > 1 {
		dst = append(dst, dims[1:]...)
	}
	return dst
}

// shapeRows is the shape function of operators whose output 0 is
// [rows] + in[like].dims[1:], of type dt (blob.Undefined: in[like]'s),
// where rows is dim 0 of in[rowsFrom] (rowsFrom < 0: unknown).
func shapeRows(like, rowsFrom int, dt blob.DataType) operators.ShapeFunc {
	return func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		if like >= len(in) || in[like].Unknown || in[like].Rank() < 1 {
			return nil, nil
		}
		rows := operators.AnyDim
		if rowsFrom >= 0 && rowsFrom < len(in) && in[rowsFrom].Rank() >= 1 {
			rows = in[rowsFrom].Dim(0)
		}
		t := dt
		if t == blob.Undefined {
			t = in[like].Type
		}
		return []operators.TensorShape{operators.Shape(t, outDims(nil, rows, in[like].Dims)...)}, nil
	}
}
