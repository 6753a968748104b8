package image

import (
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

//go:generate /usr/bin/python3 testdata/gen_resize.py

// TestResizeGolden compares ResizeNearest and UpsampleBilinear, and their
// gradients, with testdata/gen_resize.py's NumPy and PyTorch results, the
// scales given as arguments and as the scales input.
func TestResizeGolden(t *testing.T) {
	for _, c := range []struct {
		name, typ string
		hs, ws    float32
		nhwc      bool
	}{
		{"nearest_2x", "ResizeNearest", 2, 2, false},
		{"nearest_frac", "ResizeNearest", 1.5, 2.5, false},
		{"nearest_down", "ResizeNearest", 0.5, 0.75, false},
		{"nearest_nhwc", "ResizeNearest", 2, 3, true},
		{"nearest_nhwc_frac", "ResizeNearest", 1.5, 0.5, true},
		{"bilinear_2x", "UpsampleBilinear", 2, 2, false},
		{"bilinear_frac", "UpsampleBilinear", 1.5, 2.5, false},
		{"bilinear_down", "UpsampleBilinear", 0.5, 0.75, false},
		{"bilinear_one", "UpsampleBilinear", 0.4, 0.3, false},
	} {
		x, y := golden(t, c.name+"_x"), golden(t, c.name+"_y")
		dy, dx := golden(t, c.name+"_dy"), golden(t, c.name+"_dx")
		xs := optest.F32(x.AsFloat64s(), x.Shape()...)
		dys := optest.F32(dy.AsFloat64s(), dy.Shape()...)
		var args []*netdef.Argument
		if c.nhwc {
			args = append(args, netdef.ArgString("order", "NHWC"))
		}
		byArg := netdef.NewOperator(c.typ, []string{"X"}, []string{"Y"},
			append(args, netdef.ArgFloat("height_scale", c.hs), netdef.ArgFloat("width_scale", c.ws))...)
		byInput := netdef.NewOperator(c.typ, []string{"X", "scales"}, []string{"Y"}, args...)
		scales := blob.MustFromSlice([]float32{c.hs, c.ws}, 2)
		for _, v := range []struct {
			what   string
			def    *netdef.OperatorDef
			inputs []*blob.Tensor
			feeds  map[string]*blob.Tensor
		}{
			{"arguments", byArg, []*blob.Tensor{xs}, map[string]*blob.Tensor{"X": xs, "Y_grad": dys}},
			{"scales input", byInput, []*blob.Tensor{xs, scales}, map[string]*blob.Tensor{"X": xs, "scales": scales, "Y_grad": dys}},
		} {
			what := c.name + " " + v.what
			got := optest.MustRunOp(t, v.def, v.inputs...)[0]
			checkLike(t, what+" Y", got, blob.Float32, y, 1e-5)
			g := runGradient(t, v.def, v.feeds)
			checkLike(t, what+" dX", g.Tensor("X_grad"), blob.Float32, dx, 1e-5)
		}
	}
}

// TestResizeHand checks a hand-worked 2×2 → 4×4 nearest case, whose
// gradient sums each 2×2 block of dY, and a 1×2 → 1×3 bilinear row.
func TestResizeHand(t *testing.T) {
	x := optest.F32([]float64{1, 2, 3, 4}, 1, 1, 2, 2)
	def := netdef.NewOperator("ResizeNearest", []string{"X"}, []string{"Y"}, netdef.ArgFloat("height_scale", 2), netdef.ArgFloat("width_scale", 2))
	y := optest.MustRunOp(t, def, x)[0]
	checkTensor(t, "nearest", y, blob.Float32, []int{1, 1, 4, 4}, []float64{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}, 0)
	dy := optest.F32([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, 1, 1, 4, 4)
	grad := netdef.NewOperator("ResizeNearestGradient", []string{"dY", "X"}, []string{"dX"}, netdef.ArgFloat("height_scale", 2), netdef.ArgFloat("width_scale", 2))
	checkTensor(t, "nearest dX", optest.MustRunOp(t, grad, dy, x)[0], blob.Float32, []int{1, 1, 2, 2}, []float64{14, 22, 46, 54}, 0)

	row := optest.F32([]float64{2, 6}, 1, 1, 1, 2)
	bil := netdef.NewOperator("UpsampleBilinear", []string{"X"}, []string{"Y"}, netdef.ArgFloat("width_scale", 1.5))
	checkTensor(t, "bilinear", optest.MustRunOp(t, bil, row)[0], blob.Float32, []int{1, 1, 1, 3}, []float64{2, 4, 6}, 0)
}

func TestResizeErrors(t *testing.T) {
	x := optest.F32(make([]float64, 8), 1, 2, 2, 2)
	nearest := netdef.NewOperator("ResizeNearest", []string{"X", "scales"}, []string{"Y"})
	expectError(t, "rank", netdef.NewOperator("ResizeNearest", []string{"X"}, []string{"Y"}), "rank 4", optest.F32(make([]float64, 4), 2, 2))
	expectError(t, "scales shape", nearest, "want [2]", x, blob.MustFromSlice([]float32{2}, 1))
	expectError(t, "negative scale", nearest, "positive", x, blob.MustFromSlice([]float32{2, -1}, 2))
	expectError(t, "huge scale", nearest, "too large", x, blob.MustFromSlice([]float32{1e30, 1}, 2))
	expectError(t, "scale argument", netdef.NewOperator("UpsampleBilinear", []string{"X"}, []string{"Y"}, netdef.ArgFloat("width_scale", 0)), "positive", x)
	expectError(t, "double", netdef.NewOperator("UpsampleBilinear", []string{"X"}, []string{"Y"}), "want FLOAT", blob.MustFromSlice(make([]float64, 8), 1, 2, 2, 2))
}

func TestResizeGradientDefs(t *testing.T) {
	scale := netdef.ArgFloat("height_scale", 2)
	checkGradDefs(t, netdef.NewOperator("ResizeNearest", []string{"X"}, []string{"Y"}, scale),
		optest.GradOp("ResizeNearestGradient", []string{"Y_grad", "X"}, []string{"X_grad"}, scale))
	checkGradDefs(t, netdef.NewOperator("UpsampleBilinear", []string{"X", "s"}, []string{"Y"}),
		optest.GradOp("UpsampleBilinearGradient", []string{"Y_grad", "X", "s"}, []string{"X_grad"}))
}

// TestResizeNumericGradients checks the gradients against finite
// differences.
func TestResizeNumericGradients(t *testing.T) {
	r := newRand(11)
	for _, def := range []*netdef.OperatorDef{
		netdef.NewOperator("ResizeNearest", []string{"X"}, []string{"Y"}, netdef.ArgFloat("height_scale", 1.5), netdef.ArgFloat("width_scale", 0.7)),
		netdef.NewOperator("ResizeNearest", []string{"X"}, []string{"Y"}, netdef.ArgFloat("height_scale", 2), netdef.ArgFloat("width_scale", 3), netdef.ArgString("order", "NHWC")),
		netdef.NewOperator("UpsampleBilinear", []string{"X"}, []string{"Y"}, netdef.ArgFloat("height_scale", 1.5), netdef.ArgFloat("width_scale", 2)),
		netdef.NewOperator("UpsampleBilinear", []string{"X"}, []string{"Y"}, netdef.ArgFloat("height_scale", 0.6), netdef.ArgFloat("width_scale", 0.5)),
	} {
		if _, err := optest.CheckGradient(def, []*blob.Tensor{randF32(r, 2, 2, 4, 4)}, 0, optest.GradientCheck{}); err != nil {
			t.Errorf("%s %v: %v", def.GetType(), def.Arg, err)
		}
	}
}

// TestResizeEdgeInputs runs the resizing and locally connected operators on zero-element tensors
// with huge dims, an empty X for a gradient and a one-pixel output: each
// must return a result or an error, never panic.
func TestResizeEdgeInputs(t *testing.T) {
	empty := func(dims ...int) *blob.Tensor {
		x, err := blob.New(blob.Float32, dims...)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	x := optest.F32([]float64{1, 2, 3, 4, 5, 6, 7, 8}, 1, 2, 2, 2)
	for _, c := range []struct {
		name string
		def  *netdef.OperatorDef
		in   []*blob.Tensor
	}{
		{"ResizeNearest 0 rows", netdef.NewOperator("ResizeNearest", []string{"X"}, []string{"Y"}, netdef.ArgFloat("height_scale", 3)), []*blob.Tensor{empty(1<<40, 0, 0, 3)}},
		{"ResizeNearest NHWC huge channels", netdef.NewOperator("ResizeNearest", []string{"X"}, []string{"Y"}, netdef.ArgString("order", "NHWC")), []*blob.Tensor{empty(1, 0, 2, 1<<40)}},
		{"ResizeNearestGradient empty X", netdef.NewOperator("ResizeNearestGradient", []string{"dY", "X"}, []string{"dX"}), []*blob.Tensor{x, empty(1, 2, 0, 0)}},
		{"UpsampleBilinearGradient empty X", netdef.NewOperator("UpsampleBilinearGradient", []string{"dY", "X"}, []string{"dX"}), []*blob.Tensor{x, empty(1, 2, 0, 0)}},
		{"UpsampleBilinearGradient one-pixel X", netdef.NewOperator("UpsampleBilinearGradient", []string{"dY", "X"}, []string{"dX"}), []*blob.Tensor{x, empty(1, 2, 1, 1)}},
		{"LC no images", netdef.NewOperator("LC", []string{"X", "W"}, []string{"Y"}, netdef.ArgInt("kernel", 2)), []*blob.Tensor{empty(0, 2, 3, 3), empty(2, 2, 4, 2, 2, 2)}},
		{"LC no channels", netdef.NewOperator("LC", []string{"X", "W"}, []string{"Y"}, netdef.ArgInt("kernel", 2)), []*blob.Tensor{empty(1<<40, 0, 3, 3), empty(2, 2, 4, 0, 2, 2)}},
		{"LCGradient no channels", netdef.NewOperator("LCGradient", []string{"X", "W", "dY"}, []string{"dW", "db", "dX"}, netdef.ArgInt("kernel", 2)), []*blob.Tensor{empty(1, 0, 3, 3), empty(2, 2, 4, 0, 2, 2), empty(1, 4, 2, 2)}},
		{"LC huge dilation", netdef.NewOperator("LC", []string{"X", "W"}, []string{"Y"}, netdef.ArgInt("kernel", 2), netdef.ArgInt("dilation", 1<<62)), []*blob.Tensor{x, x}},
		{"UpsampleBilinear to one pixel", netdef.NewOperator("UpsampleBilinear", []string{"X"}, []string{"Y"}, netdef.ArgFloat("height_scale", 0.5), netdef.ArgFloat("width_scale", 0.5)), []*blob.Tensor{x}},
	} {
		if _, err := optest.RunOp(c.def, c.in...); err != nil && strings.Contains(err.Error(), "panic") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
