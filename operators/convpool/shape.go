package convpool

import (
	"fmt"
	"github.com/caffe2go/caffe2go/operators/internal/convargs"
	"slices"

	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterShapeFunc("Conv", convShape, "Conv1D", "Conv2D", "Conv3D")
	operators.MustRegisterShapeFunc("MaxPool", poolShape,
		"MaxPool1D", "MaxPool2D", "MaxPool3D", "AveragePool", "AveragePool1D", "AveragePool2D", "AveragePool3D")
}

// outSpatialDims applies the output-size rule to each spatial size that is
// known (AnyDim stays AnyDim; global pooling gives 1s).
func outSpatialDims(a *convargs.Args, sp []int) ([]int, error) {
	out := make([]int, len(sp))
	nd := len(sp)
	if !a.Global && nd != len(a.Kernel) {
		return nil, fmt.Errorf("a %d-D kernel %v for %d spatial dimensions", len(a.Kernel), a.Kernel, nd)
	}
	for i, in := range sp {
		switch {
		case a.Global:
			out[i] = 1
		case in < 0:
			out[i] = operators.AnyDim
		default:
			o, _, _, err := a.SizeAndPad(i, nd, in)
			if err != nil {
				return nil, err
			}
			out[i] = o
		}
	}
	return out, nil
}

// convShape checks X, the filter and the bias against each other wherever
// their dims are known (channels, group, kernel, bias length) and infers
// Y's shape: the batch, the filter's output channels and the output-size
// rule's spatial sizes. Without the filter's shape (weights not loaded
// yet) the spatial sizes still follow from X and the kernel arguments, so
// an image too small for the net is found before any weight exists.
func convShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	a, err := convargs.Parse(b, convargs.KindConv)
	if err != nil {
		return nil, err
	}
	x, w := in[0], in[1]
	if w.Unknown {
		if x.Unknown {
			return nil, nil
		}
		if x.Rank() < 3 {
			return nil, b.InputShapeError(in, "X must have N, C and at least one spatial dimension")
		}
		n, _, sp := convargs.Spatial(x.Dims, a.Order)
		osp, err := outSpatialDims(a, sp)
		if err != nil {
			return nil, b.InputShapeError(in, "%v", err)
		}
		return []operators.TensorShape{operators.Shape(x.Type, convargs.ImageShape(nil, a.Order, n, operators.AnyDim, osp)...)}, nil
	}
	if x.Unknown {
		// X has the filter's rank; Y has the filter's output channels.
		x = operators.Shape(w.Type, slices.Repeat([]int{operators.AnyDim}, w.Rank())...)
	}
	if x.Rank() < 3 {
		return nil, b.InputShapeError(in, "X must have N, C and at least one spatial dimension")
	}
	if w.Rank() != x.Rank() {
		return nil, b.InputShapeError(in, "the filter and X need the same number of dimensions")
	}
	n, c, sp := convargs.Spatial(x.Dims, a.Order)
	m, wc, wsp := convargs.Spatial(w.Dims, a.Order)
	g := a.Group
	if (c >= 0 && c%g != 0) || (m >= 0 && m%g != 0) {
		return nil, b.InputShapeError(in, "group %d does not divide the input channels of X and the output channels of the filter", g)
	}
	ok := c < 0 || wc < 0 || wc*g == c
	for i, k := range wsp {
		ok = ok && i < len(a.Kernel) && operators.DimsAgree(k, a.Kernel[i])
	}
	if !ok {
		return nil, b.InputShapeError(in, "the filter must be [M, C/group, kernel…] (order %v) for X's %d channels, group %d and kernel %v", a.Order, c, g, a.Kernel)
	}
	if len(in) > 2 && !in[2].Unknown && (in[2].Rank() != 1 || !operators.DimsAgree(in[2].Dim(0), m)) {
		return nil, b.InputShapeError(in, "the bias must be [%d], one per output channel of the filter", m)
	}
	osp, err := outSpatialDims(a, sp)
	if err != nil {
		return nil, b.InputShapeError(in, "%v", err)
	}
	return []operators.TensorShape{operators.Shape(x.Type, convargs.ImageShape(nil, a.Order, n, m, osp)...)}, nil
}

// poolShape infers Y's shape: X's batch and channels, the output-size
// rule's spatial sizes.
func poolShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	a, err := convargs.Parse(b, convargs.KindPool)
	if err != nil {
		return nil, err
	}
	x := in[0]
	if x.Unknown {
		return nil, nil
	}
	if x.Rank() < 3 {
		return nil, b.InputShapeError(in, "X must have N, C and at least one spatial dimension")
	}
	n, c, sp := convargs.Spatial(x.Dims, a.Order)
	osp, err := outSpatialDims(a, sp)
	if err != nil {
		return nil, b.InputShapeError(in, "%v", err)
	}
	return []operators.TensorShape{operators.Shape(x.Type, convargs.ImageShape(nil, a.Order, n, c, osp)...)}, nil
}

func init() {
	operators.MustRegisterShapeFunc("ConvGradient", convGradShape, "Conv1DGradient", "Conv2DGradient", "Conv3DGradient")
	// (X, Y, dY) → dX.
	operators.MustRegisterShapeFunc("MaxPoolGradient", operators.SameShapes([]int{1, 2}, 0),
		"MaxPool1DGradient", "MaxPool2DGradient", "MaxPool3DGradient",
		"AveragePoolGradient", "AveragePool1DGradient", "AveragePool2DGradient", "AveragePool3DGradient")
}

// convGradShape: (X, filter, dY) → (dfilter, dbias, dX), or without dbias
// (no_bias), dY having the forward output's shape.
func convGradShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	if len(in) < 3 {
		return nil, nil // no dY: the operator says so when it runs
	}
	y, err := convShape(b, in[:2])
	if err != nil {
		return nil, err
	}
	if len(y) == 1 && !y[0].Agrees(in[2]) {
		return nil, b.InputShapeError(in, "dY must have the forward output's shape %v", y[0])
	}
	if b.ArgBool("no_bias", false) {
		return []operators.TensorShape{in[1], in[0]}, nil
	}
	m := operators.AnyDim
	if !in[1].Unknown && in[1].Rank() > 0 {
		m = in[1].Dims[0]
	}
	return []operators.TensorShape{in[1], operators.Shape(in[1].Type, m), in[0]}, nil
}
