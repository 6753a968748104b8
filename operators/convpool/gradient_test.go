package convpool

import (
	"fmt"
	"github.com/caffe2go/caffe2go/operators/internal/convargs"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestNumericGradients checks every gradient against central finite
// differences, one row per operator configuration and input, in float64.
func TestNumericGradients(t *testing.T) {
	r := newRand(7)
	f := blob.Float64
	type row struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
	}
	rows := []row{
		{"Conv NCHW stride pad group", op("Conv", []string{"X", "W", "b"}, []string{"Y"}, ai("kernel", 3), ai("stride", 2), ai("pad", 1), ai("group", 2)),
			[]*blob.Tensor{randTensor(r, f, 2, 4, 5, 6), randTensor(r, f, 4, 2, 3, 3), randTensor(r, f, 4)}},
		{"Conv NHWC dilation asym pads", op("Conv", []string{"X", "W", "b"}, []string{"Y"}, astr("order", "NHWC"), ai("kernel_h", 2), ai("kernel_w", 3), ai("dilation", 2),
			ai("pad_t", 1), ai("pad_l", 0), ai("pad_b", 0), ai("pad_r", 2)),
			[]*blob.Tensor{randTensor(r, f, 2, 5, 5, 3), randTensor(r, f, 2, 2, 3, 3), randTensor(r, f, 2)}},
		{"Conv NHWC group", op("Conv", []string{"X", "W", "b"}, []string{"Y"}, astr("order", "NHWC"), ai("kernel", 2), ai("group", 3)),
			[]*blob.Tensor{randTensor(r, f, 2, 4, 3, 6), randTensor(r, f, 3, 2, 2, 2), randTensor(r, f, 3)}},
		{"Conv no bias 1x1", op("Conv", []string{"X", "W"}, []string{"Y"}, ai("kernel", 1)),
			[]*blob.Tensor{randTensor(r, f, 2, 3, 3, 4), randTensor(r, f, 2, 3, 1, 1)}},
		{"Conv NHWC 1x1 group", op("Conv", []string{"X", "W", "b"}, []string{"Y"}, astr("order", "NHWC"), ai("kernel", 1), ai("group", 2)),
			[]*blob.Tensor{randTensor(r, f, 2, 3, 2, 4), randTensor(r, f, 4, 1, 1, 2), randTensor(r, f, 4)}},
		{"Conv1D", op("Conv1D", []string{"X", "W", "b"}, []string{"Y"}, ais("kernels", 3), ais("strides", 2), ais("pads", 1, 0)),
			[]*blob.Tensor{randTensor(r, f, 2, 2, 7), randTensor(r, f, 3, 2, 3), randTensor(r, f, 3)}},
		{"Conv3D NHWC", op("Conv3D", []string{"X", "W", "b"}, []string{"Y"}, astr("order", "NHWC"), ais("kernels", 2, 2, 2), ais("pads", 1, 0, 0, 0, 1, 0)),
			[]*blob.Tensor{randTensor(r, f, 1, 3, 3, 3, 2), randTensor(r, f, 2, 2, 2, 2, 2), randTensor(r, f, 2)}},
		{"Conv legacy SAME", op("Conv", []string{"X", "W", "b"}, []string{"Y"}, ai("kernel", 3), ai("stride", 2), ai("legacy_pad", convargs.PadSame)),
			[]*blob.Tensor{randTensor(r, f, 1, 2, 6, 5), randTensor(r, f, 2, 2, 3, 3), randTensor(r, f, 2)}},
		{"ConvTranspose NCHW", op("ConvTranspose", []string{"X", "W", "b"}, []string{"Y"}, ai("kernel", 3), ai("stride", 2), ai("pad", 1), ai("adj", 1)),
			[]*blob.Tensor{randTensor(r, f, 2, 3, 3, 2), randTensor(r, f, 3, 2, 3, 3), randTensor(r, f, 2)}},
		{"ConvTranspose NHWC group", op("ConvTranspose", []string{"X", "W", "b"}, []string{"Y"}, astr("order", "NHWC"), ai("kernel_h", 2), ai("kernel_w", 3), ai("stride", 2), ai("group", 2),
			ai("pad_t", 0), ai("pad_l", 1), ai("pad_b", 1), ai("pad_r", 0)),
			[]*blob.Tensor{randTensor(r, f, 2, 2, 3, 4), randTensor(r, f, 4, 2, 3, 1), randTensor(r, f, 2)}},
		{"ConvTranspose no bias", op("ConvTranspose", []string{"X", "W"}, []string{"Y"}, ai("kernel", 2), ai("stride", 2)),
			[]*blob.Tensor{randTensor(r, f, 1, 2, 2, 3), randTensor(r, f, 2, 3, 2, 2)}},
		{"MaxPool NCHW", op("MaxPool", []string{"X"}, []string{"Y"}, ai("kernel", 3), ai("stride", 2), ai("pad", 1)),
			[]*blob.Tensor{randTensor(r, f, 2, 2, 5, 6)}},
		{"MaxPool NHWC legacy", op("MaxPool", []string{"X"}, []string{"Y"}, astr("order", "NHWC"), ai("kernel", 3), ai("stride", 2), ai("legacy_pad", convargs.PadCaffeLegacyPool)),
			[]*blob.Tensor{randTensor(r, f, 2, 6, 5, 3)}},
		{"MaxPool3D", op("MaxPool3D", []string{"X"}, []string{"Y"}, ais("kernels", 2, 2, 2), ais("strides", 1, 2, 2)),
			[]*blob.Tensor{randTensor(r, f, 1, 2, 3, 4, 4)}},
		{"MaxPool global", op("MaxPool", []string{"X"}, []string{"Y"}, ai("global_pooling", 1)),
			[]*blob.Tensor{randTensor(r, f, 2, 3, 3, 4)}},
		{"AveragePool NCHW", op("AveragePool", []string{"X"}, []string{"Y"}, ai("kernel", 3), ai("stride", 2), ai("pad", 1)),
			[]*blob.Tensor{randTensor(r, f, 2, 2, 5, 6)}},
		{"AveragePool count_include_pad", op("AveragePool", []string{"X"}, []string{"Y"}, ai("kernel", 3), ai("stride", 2), ai("pad", 1), ai("count_include_pad", 1)),
			[]*blob.Tensor{randTensor(r, f, 1, 2, 5, 6)}},
		{"AveragePool NHWC", op("AveragePool2D", []string{"X"}, []string{"Y"}, astr("order", "NHWC"), ai("kernel_h", 2), ai("kernel_w", 3), ai("stride", 1)),
			[]*blob.Tensor{randTensor(r, f, 2, 4, 5, 3)}},
		{"AveragePool1D", op("AveragePool1D", []string{"X"}, []string{"Y"}, ais("kernels", 3), ais("strides", 2), ais("pads", 1, 1)),
			[]*blob.Tensor{randTensor(r, f, 2, 2, 7)}},
		{"AveragePool global NHWC", op("AveragePool", []string{"X"}, []string{"Y"}, astr("order", "NHWC"), ai("global_pooling", 1)),
			[]*blob.Tensor{randTensor(r, f, 2, 3, 4, 3)}},
		{"MaxPoolWithIndex", op("MaxPoolWithIndex", []string{"X"}, []string{"Y", "I"}, ai("kernel", 2), ai("stride", 2), ai("pad", 1)),
			[]*blob.Tensor{randTensor(r, f, 2, 2, 5, 4)}},
		{"MaxPool 2x2 stride 2 odd sizes", op("MaxPool", []string{"X"}, []string{"Y"}, ai("kernel", 2), ai("stride", 2)),
			[]*blob.Tensor{randTensor(r, f, 2, 2, 5, 7)}},
		{"PadImage constant", op("PadImage", []string{"X"}, []string{"Y"}, ai("pad_t", 1), ai("pad_l", 2), ai("pad_b", 0), ai("pad_r", -1), af("value", 0.5)),
			[]*blob.Tensor{randTensor(r, f, 2, 2, 3, 4)}},
		{"PadImage reflect NHWC", op("PadImage", []string{"X"}, []string{"Y"}, astr("order", "NHWC"), ai("pad", 2), astr("mode", "reflect")),
			[]*blob.Tensor{randTensor(r, f, 2, 3, 4, 2)}},
		{"PadImage edge", op("PadImage", []string{"X"}, []string{"Y"}, ai("pad", 2), astr("mode", "edge")),
			[]*blob.Tensor{randTensor(r, f, 1, 2, 3, 3)}},
	}
	for _, c := range rows {
		for i := range c.inputs {
			t.Run(fmt.Sprintf("%s/d%s", c.name, c.def.Input[i]), func(t *testing.T) {
				cfg := optest.GradientCheck{Step: 1e-4, Threshold: 1e-5}
				if _, err := optest.CheckGradient(c.def, c.inputs, i, cfg); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestGradientDefs checks that the gradient makers emit Caffe2's gradient
// operators: type, inputs, outputs and arguments (the maker's own, then the
// forward operator's).
func TestGradientDefs(t *testing.T) {
	k := ai("kernel", 3)
	noBias := ai("no_bias", 1)
	noDX := ai("no_gradient_to_input", 1)
	for _, c := range []struct {
		fwd  *netdef.OperatorDef
		want *netdef.OperatorDef
	}{
		{op("Conv", []string{"X", "W", "b"}, []string{"Y"}, k),
			optest.GradOp("ConvGradient", []string{"X", "W", "Y_grad"}, []string{"W_grad", "b_grad", "X_grad"}, k)},
		{op("Conv2D", []string{"X", "W"}, []string{"Y"}, k),
			optest.GradOp("Conv2DGradient", []string{"X", "W", "Y_grad"}, []string{"W_grad", "X_grad"}, noBias, k)},
		{op("Conv", []string{"X", "W", "b"}, []string{"Y"}, k, noDX),
			optest.GradOp("ConvGradient", []string{"X", "W", "Y_grad"}, []string{"W_grad", "b_grad"}, k, noDX)},
		{op("Conv3D", []string{"X", "W"}, []string{"Y"}, k, noDX),
			optest.GradOp("Conv3DGradient", []string{"X", "W", "Y_grad"}, []string{"W_grad"}, noBias, k, noDX)},
		{op("Conv1D", []string{"X", "W", "b"}, []string{"Y"}, k),
			optest.GradOp("Conv1DGradient", []string{"X", "W", "Y_grad"}, []string{"W_grad", "b_grad", "X_grad"}, k)},
		{op("ConvTranspose", []string{"X", "W", "b"}, []string{"Y"}, k),
			optest.GradOp("ConvTransposeGradient", []string{"X", "W", "Y_grad"}, []string{"W_grad", "b_grad", "X_grad"}, k)},
		{op("ConvTranspose", []string{"X", "W"}, []string{"Y"}, k),
			optest.GradOp("ConvTransposeGradient", []string{"X", "W", "Y_grad"}, []string{"W_grad", "X_grad"}, noBias, k)},
		{op("MaxPool", []string{"X"}, []string{"Y"}, k),
			optest.GradOp("MaxPoolGradient", []string{"X", "Y", "Y_grad"}, []string{"X_grad"}, k)},
		{op("AveragePool2D", []string{"X"}, []string{"Y"}, k),
			optest.GradOp("AveragePool2DGradient", []string{"X", "Y", "Y_grad"}, []string{"X_grad"}, k)},
		{op("MaxPool3D", []string{"X"}, []string{"Y"}, k),
			optest.GradOp("MaxPool3DGradient", []string{"X", "Y", "Y_grad"}, []string{"X_grad"}, k)},
		{op("MaxPoolWithIndex", []string{"X"}, []string{"Y", "I"}, k),
			optest.GradOp("MaxPoolWithIndexGradient", []string{"X", "Y_grad", "I"}, []string{"X_grad"}, k)},
		{op("PadImage", []string{"X"}, []string{"Y"}, ai("pad", 1)),
			optest.GradOp("PadImageGradient", []string{"Y_grad"}, []string{"X_grad"}, ai("pad", 1))},
	} {
		gd, err := operators.GetGradientDefs(c.fwd, optest.DenseGradients(c.fwd))
		if err != nil {
			t.Errorf("%s: %v", c.fwd.GetType(), err)
			continue
		}
		if len(gd.Ops) != 1 || !proto.Equal(gd.Ops[0], c.want) {
			t.Errorf("%s: gradient ops %v, want %v", c.fwd.GetType(), gd.Ops, c.want)
		}
	}
}

// TestMaxPool2x2Ties checks the 2×2 stride-2 fast paths on a plane with a
// row and a column that no window covers and with tied maxima: the gradient
// goes to every input equal to its window's maximum, as in Caffe2.
func TestMaxPool2x2Ties(t *testing.T) {
	x := []float64{
		1, 1, 2, 0, 5,
		0, 1, 2, 2, 5,
		-3, -3, 4, 9, 5,
		-3, -3, 9, 9, 5,
		7, 7, 7, 7, 7,
	}
	wantY := []float64{1, 2, -3, 9}
	wantDX := []float64{
		1, 1, 2, 0, 0,
		0, 1, 2, 2, 0,
		3, 3, 0, 4, 0,
		3, 3, 4, 4, 0,
		0, 0, 0, 0, 0,
	}
	for _, f := range []blob.DataType{blob.Float32, blob.Float64} {
		def := op("MaxPool", []string{"X"}, []string{"Y"}, ai("kernel", 2), ai("stride", 2))
		in := tensorOf(f, x, 1, 1, 5, 5)
		y := optest.MustRunOp(t, def, in)[0]
		checkTensor(t, fmt.Sprintf("%v Y", f), y, tensorOf(f, wantY, 1, 1, 2, 2), 0)
		// dX starts dirty: the operator must clear what no window covers.
		ws := optest.NewWorkspace()
		ws.Feed("X", in)
		ws.Feed("Y", y)
		ws.Feed("dY", tensorOf(f, []float64{1, 2, 3, 4}, 1, 1, 2, 2))
		ws.Feed("dX", tensorOf(f, slices.Repeat([]float64{-1}, 25), 1, 1, 5, 5))
		g := op("MaxPoolGradient", []string{"X", "Y", "dY"}, []string{"dX"}, ai("kernel", 2), ai("stride", 2))
		if err := ws.Run(g); err != nil {
			t.Fatal(err)
		}
		checkTensor(t, fmt.Sprintf("%v dX", f), ws.Tensor("dX"), tensorOf(f, wantDX, 1, 1, 5, 5), 0)
	}
}
