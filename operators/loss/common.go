package loss

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// logThreshold is the smallest probability whose logarithm is taken
// (Caffe2's kLOG_THRESHOLD).
const logThreshold = 1e-20

// batchShape splits x into N rows of D elements the way Caffe2's cross
// entropy operators do: N = dim0 and D = the rest, or N = 1 for a 1-D x.
func batchShape(b *operators.Base, x *blob.Tensor) (n, d int, err error) {
	switch x.NumDims() {
	case 0:
		return 0, 0, b.Errorf("input 0 (%q) must have at least 1 dimension, got a scalar", b.InputName(0))
	case 1:
		return 1, x.Dim(0), nil
	}
	return x.Dim(0), x.SizeFromDim(1), nil
}

// classLabels returns input i's int32 labels after checking that each is a
// class index in [0, d).
func classLabels(b *operators.Base, i, d int) ([]int32, error) {
	t, err := b.InputOf(i, blob.Int32)
	if err != nil {
		return nil, err
	}
	labels := blob.Data[int32](t)
	for k, l := range labels {
		if l < 0 || int(l) >= d {
			return nil, b.Errorf("label %d of %q is %d, outside the supported range [0, %d)", k, b.InputName(i), l, d)
		}
	}
	return labels, nil
}

// rowGradient returns input i, the gradient of a per-row output: a 1-D
// tensor of n elements of type dtype.
func rowGradient(b *operators.Base, i int, dtype blob.DataType, n int) (*blob.Tensor, error) {
	t, err := b.InputOf(i, dtype)
	if err != nil {
		return nil, err
	}
	if t.NumDims() != 1 || t.Dim(0) != n {
		return nil, b.Errorf("input %d (%q) has shape %v, want [%d]", i, b.InputName(i), t.Dims(), n)
	}
	return t, nil
}

// scalarGradient returns input i, the gradient of a scalar output: a
// one-element tensor of type dtype, as a float64.
func scalarGradient(b *operators.Base, i int, dtype blob.DataType) (float64, error) {
	t, err := b.InputOf(i, dtype)
	if err != nil {
		return 0, err
	}
	if t.Size() != 1 {
		return 0, b.Errorf("input %d (%q) must hold one element, got shape %v", i, b.InputName(i), t.Dims())
	}
	if dtype == blob.Float32 {
		return float64(blob.Data[float32](t)[0]), nil
	}
	return blob.Data[float64](t)[0], nil
}

// initOutput gives output i the element type and shape.
func initOutput(b *operators.Base, i int, dtype blob.DataType, dims ...int) (*blob.Tensor, error) {
	y := b.Output(i)
	if err := y.Init(dtype, dims...); err != nil {
		return nil, b.Errorf("output %d (%q): %v", i, b.OutputName(i), err)
	}
	return y, nil
}
