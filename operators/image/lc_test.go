package image

import (
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

//go:generate /usr/bin/python3 testdata/gen_lc.py

// permute returns t with its axes reordered: axis i of the result is axis
// perm[i] of t.
func permute(t *blob.Tensor, perm ...int) *blob.Tensor {
	d := t.Dims()
	v := t.AsFloat64s()
	nd := len(d)
	out := make([]int, nd)
	for i, p := range perm {
		out[i] = d[p]
	}
	stride := make([]int, nd)
	s := 1
	for i := nd - 1; i >= 0; i-- {
		stride[i] = s
		s *= d[i]
	}
	res := make([]float64, len(v))
	idx := make([]int, nd)
	for k := range res {
		src := 0
		for i := range nd {
			src += idx[i] * stride[perm[i]]
		}
		res[k] = v[src]
		for i := nd - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < out[i] {
				break
			}
			idx[i] = 0
		}
	}
	return optest.F32(res, out...)
}

// TestLocallyConnectedGolden compares LC, LC1D, LC2D and LC3D and their
// gradients with testdata/gen_lc.py's PyTorch results, NCHW with and
// without groups and bias, and the 2-D case in NHWC.
func TestLocallyConnectedGolden(t *testing.T) {
	ais := netdef.ArgInts
	for _, c := range []struct {
		name, typ string
		args      []*netdef.Argument
		bias      bool
	}{
		{"lc2d", "LC", []*netdef.Argument{ais("kernels", 3, 2), ais("strides", 1, 2), ais("pads", 1, 0, 1, 0)}, true},
		{"lc2d_group", "LC2D", []*netdef.Argument{netdef.ArgInt("kernel", 2), ais("strides", 2, 1), netdef.ArgInt("pad", 1), ais("dilations", 1, 2), netdef.ArgInt("group", 2)}, true},
		{"lc1d", "LC1D", []*netdef.Argument{ais("kernels", 3), ais("strides", 2), ais("pads", 1, 1)}, false},
		{"lc3d", "LC3D", []*netdef.Argument{ais("kernels", 2, 2, 3), ais("strides", 1, 2, 1), ais("pads", 0, 1, 1, 0, 1, 1)}, true},
	} {
		x, w, b := golden(t, c.name+"_x"), golden(t, c.name+"_w"), golden(t, c.name+"_b")
		y, dy := golden(t, c.name+"_y"), golden(t, c.name+"_dy")
		dx, dw, db := golden(t, c.name+"_dx"), golden(t, c.name+"_dw"), golden(t, c.name+"_db")
		in := []string{"X", "W"}
		feeds := map[string]*blob.Tensor{"X": f32of(x), "W": f32of(w), "Y_grad": f32of(dy)}
		inputs := []*blob.Tensor{f32of(x), f32of(w)}
		if c.bias {
			in = append(in, "b")
			feeds["b"] = f32of(b)
			inputs = append(inputs, f32of(b))
		}
		def := netdef.NewOperator(c.typ, in, []string{"Y"}, c.args...)
		checkLike(t, c.name+" Y", optest.MustRunOp(t, def, inputs...)[0], blob.Float32, y, 1e-5)
		g := runGradient(t, def, feeds)
		checkLike(t, c.name+" dX", g.Tensor("X_grad"), blob.Float32, dx, 1e-5)
		checkLike(t, c.name+" dfilter", g.Tensor("W_grad"), blob.Float32, dw, 1e-5)
		if c.bias {
			checkLike(t, c.name+" dbias", g.Tensor("b_grad"), blob.Float32, db, 1e-5)
		}
		if c.name != "lc2d" {
			continue
		}
		// NHWC: X (N, H, W, C), filter (YH, YW, M, kH, kW, C), Y (N, YH, YW, M).
		nhwc := append(c.args, netdef.ArgString("order", "NHWC"))
		xn, wn := permute(f32of(x), 0, 2, 3, 1), permute(f32of(w), 0, 1, 2, 4, 5, 3)
		defn := netdef.NewOperator("LC", in, []string{"Y"}, nhwc...)
		checkLike(t, "NHWC Y", optest.MustRunOp(t, defn, xn, wn, f32of(b))[0], blob.Float32, permute(y, 0, 2, 3, 1), 1e-5)
		gn := runGradient(t, defn, map[string]*blob.Tensor{"X": xn, "W": wn, "b": f32of(b), "Y_grad": permute(f32of(dy), 0, 2, 3, 1)})
		checkLike(t, "NHWC dX", gn.Tensor("X_grad"), blob.Float32, permute(dx, 0, 2, 3, 1), 1e-5)
		checkLike(t, "NHWC dfilter", gn.Tensor("W_grad"), blob.Float32, permute(dw, 0, 1, 2, 4, 5, 3), 1e-5)
		checkLike(t, "NHWC dbias", gn.Tensor("b_grad"), blob.Float32, db, 1e-5)
	}
}

func f32of(t *blob.Tensor) *blob.Tensor { return optest.F32(t.AsFloat64s(), t.Shape()...) }

func TestLocallyConnectedGradientDefs(t *testing.T) {
	k := netdef.ArgInt("kernel", 2)
	checkGradDefs(t, netdef.NewOperator("LC", []string{"X", "W", "b"}, []string{"Y"}, k),
		optest.GradOp("LCGradient", []string{"X", "W", "Y_grad"}, []string{"W_grad", "b_grad", "X_grad"}, k))
	checkGradDefs(t, netdef.NewOperator("LC2D", []string{"X", "W"}, []string{"Y"}, k),
		optest.GradOp("LC2DGradient", []string{"X", "W", "Y_grad"}, []string{"W_grad", "X_grad"}, k, netdef.ArgInt("no_bias", 1)))
	noDX := netdef.ArgInt("no_gradient_to_input", 1)
	checkGradDefs(t, netdef.NewOperator("LC3D", []string{"X", "W", "b"}, []string{"Y"}, k, noDX),
		optest.GradOp("LC3DGradient", []string{"X", "W", "Y_grad"}, []string{"W_grad", "b_grad"}, k, noDX))
}

func TestLocallyConnectedErrors(t *testing.T) {
	k := netdef.ArgInt("kernel", 2)
	x := optest.F32(make([]float64, 2*3*3), 1, 2, 3, 3)
	lc := netdef.NewOperator("LC", []string{"X", "W"}, []string{"Y"}, k)
	expectError(t, "filter shape", lc, "want [2 2 4 2 2 2]", x, optest.F32(make([]float64, 4*4*3*2*2), 2, 2, 4, 3, 2, 2))
	expectError(t, "filter rank", lc, "want rank 6", x, optest.F32(make([]float64, 8), 2, 2, 2))
	expectError(t, "bias", netdef.NewOperator("LC", []string{"X", "W", "b"}, []string{"Y"}, k), "want [2 2 1]",
		x, optest.F32(make([]float64, 2*2*1*2*2*2), 2, 2, 1, 2, 2, 2), optest.F32(make([]float64, 4), 4))
	expectError(t, "NHWC 1-D", netdef.NewOperator("LC1D", []string{"X", "W"}, []string{"Y"}, netdef.ArgInts("kernels", 2), netdef.ArgString("order", "NHWC")),
		"only 2-D", optest.F32(make([]float64, 6), 1, 3, 2), optest.F32(make([]float64, 4), 2, 1, 2, 1))
	expectError(t, "no kernel", netdef.NewOperator("LC", []string{"X", "W"}, []string{"Y"}), "kernel size", x, x)
}

// TestLocallyConnectedNumericGradients checks the gradients against
// finite differences.
func TestLocallyConnectedNumericGradients(t *testing.T) {
	r := newRand(13)
	def := netdef.NewOperator("LC", []string{"X", "W", "b"}, []string{"Y"}, netdef.ArgInt("kernel", 2), netdef.ArgInt("pad", 1), netdef.ArgInt("stride", 2))
	in := []*blob.Tensor{randF32(r, 2, 2, 3, 3), randF32(r, 2, 2, 3, 2, 2, 2), randF32(r, 2, 2, 3)}
	for i := range in {
		if _, err := optest.CheckGradient(def, in, i, optest.GradientCheck{}); err != nil {
			t.Errorf("input %d: %v", i, err)
		}
	}
}
