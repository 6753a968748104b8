package norm

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// orderArg documents the storage order argument of the spatial operators.
var orderArg = operators.ArgSpec{Name: "order", Default: "NCHW", Doc: `"NCHW" (channels at dimension 1) or "NHWC" (channels last)`}

// readOrder reads the order argument; nhwc is true for "NHWC".
func readOrder(b *operators.Base) (nhwc bool, err error) {
	switch order := b.ArgString("order", "NCHW"); order {
	case "NCHW":
		return false, nil
	case "NHWC":
		return true, nil
	default:
		return false, b.Errorf(`order should be either "NCHW" or "NHWC", got %q`, order)
	}
}

// layout is a batch of n images of c channels and hw spatial positions,
// stored NCHW (image, channel, position) or NHWC (image, position,
// channel), and the kernel thread budget of the operator working on it
// (operators.Base.Threads).
type layout struct {
	n, c, hw int
	nhwc     bool
	threads  int
}

// spatialLayout reads the layout of input i, which must have at least
// minDims dimensions: N = dim 0, C = dim 1 (NCHW) or the last dimension
// (NHWC), and HxW the product of the others.
func spatialLayout(b *operators.Base, i int, x *blob.Tensor, nhwc bool, minDims int) (layout, error) {
	if x.NumDims() < minDims {
		return layout{}, b.Errorf("input %d (%q) has shape %v; it needs at least %d dimensions", i, b.InputName(i), x.Dims(), minDims)
	}
	l := layout{n: x.Dim(0), c: x.Dim(1), nhwc: nhwc, threads: b.Threads()}
	if nhwc {
		l.c = x.Dim(x.NumDims() - 1)
	}
	if l.c > 0 {
		l.hw = x.SizeFromDim(1) / l.c
	}
	return l, nil
}

// inputLike returns input i after checking that it has ref's element type
// and, when size ≥ 0, size elements.
func inputLike(b *operators.Base, i int, ref *blob.Tensor, size int) (*blob.Tensor, error) {
	t, err := b.InputOf(i, ref.DataType())
	if err != nil {
		return nil, err
	}
	if size >= 0 && t.Size() != size {
		return nil, b.Errorf("input %d (%q) has shape %v (%d elements), want %d elements", i, b.InputName(i), t.Dims(), t.Size(), size)
	}
	return t, nil
}

// initOutput gives output i the element type and shape.
func initOutput(b *operators.Base, i int, dtype blob.DataType, dims ...int) (*blob.Tensor, error) {
	y := b.Output(i)
	if err := y.Init(dtype, dims...); err != nil {
		return nil, b.Errorf("output %d (%q): %w", i, b.OutputName(i), err)
	}
	return y, nil
}

// grow returns s resized to n elements, reusing its storage when it is
// large enough.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// at returns x[i] as a float64, or 0 when x is too short: the shift of the
// sums of an empty group.
func at[T blob.Float](x []T, i int) float64 {
	if i < len(x) {
		return float64(x[i])
	}
	return 0
}

// rsqrt is 1/√v.
func rsqrt(v float64) float64 { return 1 / math.Sqrt(v) }

// moments turns shifted sums over n elements (vec.ShiftedSums, in
// float64) into the mean and the biased variance (never negative). Shifting
// by a value k near the mean (such as one of the elements) keeps the
// one-pass variance Σ(x−k)²/n − (Σ(x−k)/n)² accurate.
func moments(s, s2 float64, n int, k float64) (mean, variance float64) {
	if n == 0 {
		return 0, 0
	}
	m := s / float64(n)
	return k + m, math.Max(s2/float64(n)-m*m, 0)
}
