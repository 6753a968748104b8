package image

import (
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestPReluGolden compares PRelu and PReluGradient with PyTorch's F.prelu
// (forward, dX and dslope), per-channel and shared slopes, both orders, in
// float32 and float64.
func TestPReluGolden(t *testing.T) {
	for _, c := range []struct{ name, order string }{
		{"prelu_nchw_c", "NCHW"},
		{"prelu_nchw_s", "NCHW"},
		{"prelu_nhwc_c", "NHWC"},
		{"prelu_nhwc_s", "NHWC"},
		{"prelu_nc_c", "NCHW"},
	} {
		x, w := golden(t, c.name+"_x"), golden(t, c.name+"_w")
		y, dy := golden(t, c.name+"_y"), golden(t, c.name+"_dy")
		dx, dw := golden(t, c.name+"_dx"), golden(t, c.name+"_dw")
		def := netdef.NewOperator("PRelu", []string{"X", "slope"}, []string{"Y"}, netdef.ArgString("order", c.order))
		for _, dc := range []struct {
			dtype blob.DataType
			conv  func(*blob.Tensor) *blob.Tensor
			tol   float64
		}{
			{blob.Float32, func(t *blob.Tensor) *blob.Tensor { return optest.F32(t.AsFloat64s(), t.Shape()...) }, 1e-6},
			{blob.Float64, toF64, 1e-12},
		} {
			what := c.name + " " + dc.dtype.String()
			xs, ws := dc.conv(x), dc.conv(w)
			got := optest.MustRunOp(t, def, xs, ws)[0]
			checkLike(t, what+" Y", got, dc.dtype, y, dc.tol)
			g := runGradient(t, def, map[string]*blob.Tensor{"X": xs, "slope": ws, "Y": got, "Y_grad": dc.conv(dy)})
			checkLike(t, what+" dX", g.Tensor("X_grad"), dc.dtype, dx, dc.tol)
			checkLike(t, what+" dslope", g.Tensor("slope_grad"), dc.dtype, dw, dc.tol)
		}
	}
}

// TestPReluHand checks a hand-worked NCHW example with two channels,
// including the x = 0 boundary (the slope side, as in Caffe2).
func TestPReluHand(t *testing.T) {
	x := optest.F32([]float64{1, -2, 0, -4, 3, -1}, 1, 2, 3)
	w := optest.F32([]float64{0.5, -2}, 2)
	def := netdef.NewOperator("PRelu", []string{"X", "slope"}, []string{"Y"})
	y := optest.MustRunOp(t, def, x, w)[0]
	checkTensor(t, "Y", y, blob.Float32, []int{1, 2, 3}, []float64{1, -1, 0, 8, 3, 2}, 0)
	dy := optest.F32([]float64{1, 2, 3, 4, 5, 6}, 1, 2, 3)
	grad := netdef.NewOperator("PReluGradient", []string{"Y", "dY", "X", "slope"}, []string{"dX", "dslope"})
	out := optest.MustRunOp(t, grad, y, dy, x, w)
	checkTensor(t, "dX", out[0], blob.Float32, []int{1, 2, 3}, []float64{1, 1, 1.5, -8, 5, -12}, 0)
	// channel 0: x ≤ 0 at -2 (dy 2) and 0 (dy 3): 2·(-2) + 3·0 = -4;
	// channel 1: -4 (dy 4) and -1 (dy 6): -16 - 6 = -22.
	checkTensor(t, "dslope", out[1], blob.Float32, []int{2}, []float64{-4, -22}, 0)

	// In place: Y = X works forward; its gradient cannot be taken.
	inplace := netdef.NewOperator("PRelu", []string{"X", "slope"}, []string{"X"})
	checkTensor(t, "in place", optest.MustRunOp(t, inplace, x, w)[0], blob.Float32, []int{1, 2, 3}, []float64{1, -1, 0, 8, 3, 2}, 0)
	expectError(t, "in-place gradient", netdef.NewOperator("PReluGradient", []string{"X", "dY", "X", "slope"}, []string{"dX", "dslope"}),
		"in-place PRelu", x, dy, x, w)
}

func TestPReluErrors(t *testing.T) {
	def := netdef.NewOperator("PRelu", []string{"X", "slope"}, []string{"Y"})
	x := optest.F32(make([]float64, 12), 2, 3, 2)
	expectError(t, "slope count", def, "has 2 slopes", x, optest.F32([]float64{1, 2}, 2))
	expectError(t, "NHWC slope count", netdef.NewOperator("PRelu", []string{"X", "slope"}, []string{"Y"}, netdef.ArgString("order", "NHWC")), "has 3 slopes", x, optest.F32([]float64{1, 2, 3}, 3))
	expectError(t, "slope type", def, "has type", x, blob.MustFromSlice([]float64{1}, 1))
	expectError(t, "integer X", def, "want FLOAT", blob.MustFromSlice([]int32{1, 2}, 1, 2), blob.MustFromSlice([]int32{1}, 1))
	expectError(t, "rank 1 NCHW", def, "channel dimension", optest.F32([]float64{1, 2}, 2), optest.F32([]float64{1}, 1))
	expectError(t, "bad order", netdef.NewOperator("PRelu", []string{"X", "slope"}, []string{"Y"}, netdef.ArgString("order", "nchw")), "order", x, optest.F32([]float64{1}, 1))

	grad := netdef.NewOperator("PReluGradient", []string{"Y", "dY", "X", "slope"}, []string{"dX", "dslope"})
	expectError(t, "gradient sizes", grad, "one size", x, optest.F32(make([]float64, 6), 6), x, optest.F32([]float64{1}, 1))
	expectError(t, "gradient types", grad, "has type", x, blob.MustFromSlice(make([]float64, 12), 2, 3, 2), x, optest.F32([]float64{1}, 1))

	// NHWC accepts a rank-1 X (the channels), NCHW a rank-2 one.
	y := optest.MustRunOp(t, netdef.NewOperator("PRelu", []string{"X", "slope"}, []string{"Y"}, netdef.ArgString("order", "NHWC")),
		optest.F32([]float64{-1, 2}, 2), optest.F32([]float64{0.5, 3}, 2))[0]
	checkTensor(t, "NHWC rank 1", y, blob.Float32, []int{2}, []float64{-0.5, 2}, 0)
}

func TestPReluGradientDefs(t *testing.T) {
	order := netdef.ArgString("order", "NHWC")
	checkGradDefs(t, netdef.NewOperator("PRelu", []string{"X", "slope"}, []string{"Y"}, order),
		optest.GradOp("PReluGradient", []string{"Y", "Y_grad", "X", "slope"}, []string{"X_grad", "slope_grad"}, order))
}
