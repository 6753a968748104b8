package norm

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestNumericGradients checks the registered gradient of every operator
// against finite differences: one row per operator, configuration and
// differentiable input. The loss covers output 0 only: the other outputs
// (running and saved statistics, LRN's scale) have no gradient in Caffe2.
func TestNumericGradients(t *testing.T) {
	type row struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
		input  int
	}
	var rows []row
	add := func(name string, def *netdef.OperatorDef, inputs []*blob.Tensor, idx ...int) {
		for _, i := range idx {
			rows = append(rows, row{fmt.Sprintf("%s/d%s", name, def.Input[i]), def, inputs, i})
		}
	}
	r := newRand(7)
	for _, dtype := range []blob.DataType{blob.Float32, blob.Float64} {
		x := func(lo, hi float64, shape ...int) *blob.Tensor { return randT(r, dtype, lo, hi, shape...) }
		for _, order := range []string{"NCHW", "NHWC"} {
			name := func(s string) string { return fmt.Sprintf("%s %v %s", s, dtype, order) }
			ord := argStr("order", order)
			shape := []int{2, 3, 2, 3} // C = 3 in either order
			if order == "NHWC" {
				shape = []int{2, 2, 3, 3}
			}
			bnIn := []string{"X", "scale", "bias", "mean", "var"}
			add(name("SpatialBN training"), op("SpatialBN", bnIn, []string{"Y", "mean", "var", "saved_mean", "saved_inv_var"}, ord),
				[]*blob.Tensor{x(-1, 2, shape...), x(0.5, 1.5, 3), x(-1, 1, 3), x(-1, 1, 3), x(0.5, 2, 3)}, 0, 1, 2)
			c3 := 3 // channels of a [3, 3, 2] X: dimension 1 (NCHW) or the last (NHWC)
			if order == "NHWC" {
				c3 = 2
			}
			add(name("SpatialBN training 3-D epsilon"), op("SpatialBN", bnIn, []string{"Y", "mean", "var", "saved_mean", "saved_inv_var"}, ord, argFloat("epsilon", 0.1)),
				[]*blob.Tensor{x(-1, 2, 3, 3, 2), x(0.5, 1.5, c3), x(-1, 1, c3), x(-1, 1, c3), x(0.5, 2, c3)}, 0, 1, 2)
			add(name("SpatialBN test"), op("SpatialBN", bnIn, []string{"Y"}, ord, argInt("is_test", 1)),
				[]*blob.Tensor{x(-1, 2, shape...), x(0.5, 1.5, 3), x(-1, 1, 3), x(-1, 1, 3), x(0.5, 2, 3)}, 0, 1, 2)
			inIn := []string{"X", "scale", "bias"}
			add(name("InstanceNorm"), op("InstanceNorm", inIn, []string{"Y"}, ord),
				[]*blob.Tensor{x(-1, 2, shape...), x(0.5, 1.5, 3), x(-1, 1, 3)}, 0, 1, 2)
			add(name("InstanceNorm saved statistics"), op("InstanceNorm", inIn, []string{"Y", "mean", "inv_stdev"}, ord, argFloat("epsilon", 1e-3)),
				[]*blob.Tensor{x(-1, 2, shape...), x(0.5, 1.5, 3), x(-1, 1, 3)}, 0, 1, 2)
			add(name("InstanceNorm saved mean"), op("InstanceNorm", inIn, []string{"Y", "mean"}, ord),
				[]*blob.Tensor{x(-1, 2, shape...), x(0.5, 1.5, 3), x(-1, 1, 3)}, 0)
			gnShape := []int{2, 4, 3, 2}
			if order == "NHWC" {
				gnShape = []int{2, 3, 2, 4}
			}
			add(name("GroupNorm"), op("GroupNorm", inIn, []string{"Y", "mean", "inv_std"}, ord, argInt("group", 2)),
				[]*blob.Tensor{x(-1, 2, gnShape...), x(0.5, 1.5, 4), x(-1, 1, 4)}, 0, 1, 2)
			add(name("GroupNorm one group"), op("GroupNorm", inIn, []string{"Y", "mean", "inv_std"}, ord, argInt("group", 1), argInt("is_test", 0)),
				[]*blob.Tensor{x(-1, 2, gnShape...), x(0.5, 1.5, 4), x(-1, 1, 4)}, 0, 1)
			lrnShape := []int{2, 5, 2, 3}
			if order == "NHWC" {
				lrnShape = []int{2, 2, 3, 5}
			}
			for _, size := range []int64{1, 3, 4} {
				add(name(fmt.Sprintf("LRN size %d", size)), op("LRN", []string{"X"}, []string{"Y", "scale"}, ord, argInt("size", size), argFloat("alpha", 0.6), argFloat("beta", 0.75), argFloat("bias", 1)),
					[]*blob.Tensor{x(-2, 2, lrnShape...)}, 0)
			}
			add(name("LRN beta 0.6"), op("LRN", []string{"X"}, []string{"Y"}, ord, argInt("size", 5), argFloat("alpha", 0.4), argFloat("beta", 0.6), argFloat("bias", 2)),
				[]*blob.Tensor{x(-2, 2, lrnShape...)}, 0)
		}
		name := func(s string) string { return fmt.Sprintf("%s %v", s, dtype) }
		add(name("LayerNorm"), op("LayerNorm", []string{"X"}, []string{"Y", "mean", "std"}),
			[]*blob.Tensor{x(-1, 2, 3, 4)}, 0)
		add(name("LayerNorm axis 2 of 3-D"), op("LayerNorm", []string{"X"}, []string{"Y", "mean", "std"}, argInt("axis", 2), argFloat("epsilon", 1e-2)),
			[]*blob.Tensor{x(-1, 2, 2, 2, 4)}, 0)
		add(name("LayerNorm axis 0"), op("LayerNorm", []string{"X"}, []string{"Y", "mean", "std"}, argInt("axis", 0)),
			[]*blob.Tensor{x(-1, 2, 3, 2)}, 0)
		add(name("LayerNorm affine axis -1"), op("LayerNorm", []string{"X", "gamma", "beta"}, []string{"Y", "mean", "std"}, argInt("axis", -1), argInt("elementwise_affine", 1)),
			[]*blob.Tensor{x(-1, 2, 2, 3, 4), x(0.5, 1.5, 4), x(-1, 1, 4)}, 0, 1, 2)
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			if _, err := optest.CheckGradient(row.def, row.inputs, row.input, optest.GradientCheck{OutputsWithGrad: []int{0}}); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestGradientDefs checks the gradient operators each forward operator's
// gradient maker emits against Caffe2's.
func TestGradientDefs(t *testing.T) {
	bnIn := []string{"X", "s", "b", "rm", "rv"}
	bnOut := []string{"Y", "rm", "rv", "sm", "siv"}
	dsdb := []string{"X_grad", "s_grad", "b_grad"}
	train := argInt("is_test", 0)
	cases := []struct {
		name string
		def  *netdef.OperatorDef
		want []*netdef.OperatorDef
	}{
		{"SpatialBN training", op("SpatialBN", bnIn, bnOut, train, argFloat("epsilon", 1e-3)),
			[]*netdef.OperatorDef{optest.GradOp("SpatialBNGradient", []string{"X", "s", "Y_grad", "sm", "siv"}, dsdb, train, argFloat("epsilon", 1e-3))}},
		{"SpatialBN default is_test", op("SpatialBN", bnIn, bnOut),
			[]*netdef.OperatorDef{optest.GradOp("SpatialBNGradient", []string{"X", "s", "Y_grad", "sm", "siv"}, dsdb)}},
		{"SpatialBN test", op("SpatialBN", bnIn, []string{"Y"}, argInt("is_test", 1), argStr("order", "NHWC")),
			[]*netdef.OperatorDef{optest.GradOp("SpatialBNGradient", []string{"X", "s", "Y_grad", "rm", "rv"}, dsdb, argInt("is_test", 1), argStr("order", "NHWC"))}},
		{"SpatialBN num_batches 2", op("SpatialBN", append(bnIn, "sums", "sumsq"), bnOut, argInt("num_batches", 2)),
			[]*netdef.OperatorDef{optest.GradOp("SpatialBNGradient", []string{"X", "s", "Y_grad", "sm", "siv", "s_grad", "b_grad"}, dsdb, argInt("num_batches", 2))}},
		{"InstanceNorm", op("InstanceNorm", []string{"X", "s", "b"}, []string{"Y"}, argFloat("epsilon", 1e-3)),
			[]*netdef.OperatorDef{optest.GradOp("InstanceNormGradient", []string{"X", "s", "b", "Y_grad"}, dsdb, argFloat("epsilon", 1e-3))}},
		{"InstanceNorm saved mean", op("InstanceNorm", []string{"X", "s", "b"}, []string{"Y", "m"}),
			[]*netdef.OperatorDef{optest.GradOp("InstanceNormGradient", []string{"X", "s", "b", "Y_grad", "m"}, dsdb)}},
		{"InstanceNorm saved statistics", op("InstanceNorm", []string{"X", "s", "b"}, []string{"Y", "m", "r"}, argStr("order", "NHWC")),
			[]*netdef.OperatorDef{optest.GradOp("InstanceNormGradient", []string{"X", "s", "b", "Y_grad", "m", "r"}, dsdb, argStr("order", "NHWC"))}},
		{"LayerNorm", op("LayerNorm", []string{"X"}, []string{"Y", "m", "sd"}, argInt("axis", 2)),
			[]*netdef.OperatorDef{optest.GradOp("LayerNormGradient", []string{"Y_grad", "Y", "m", "sd", "X"}, []string{"X_grad"}, argInt("axis", 2))}},
		{"LayerNorm elementwise_affine 0", op("LayerNorm", []string{"X"}, []string{"Y", "m", "sd"}, argInt("elementwise_affine", 0)),
			[]*netdef.OperatorDef{optest.GradOp("LayerNormGradient", []string{"Y_grad", "Y", "m", "sd", "X"}, []string{"X_grad"}, argInt("elementwise_affine", 0))}},
		{"LayerNorm affine", op("LayerNorm", []string{"X", "g", "b"}, []string{"Y", "m", "sd"}, argInt("elementwise_affine", 1)),
			[]*netdef.OperatorDef{optest.GradOp("LayerNormGradient", []string{"Y_grad", "Y", "m", "sd", "X", "g"}, []string{"X_grad", "g_grad", "b_grad"}, argInt("elementwise_affine", 1))}},
		{"GroupNorm", op("GroupNorm", []string{"X", "g", "b"}, []string{"Y", "m", "r"}, argInt("group", 4)),
			[]*netdef.OperatorDef{optest.GradOp("GroupNormGradient", []string{"Y_grad", "X", "g", "b", "m", "r"}, []string{"X_grad", "g_grad", "b_grad"}, argInt("group", 4))}},
		{"LRN", op("LRN", []string{"X"}, []string{"Y", "scale"}, argInt("size", 5)),
			[]*netdef.OperatorDef{optest.GradOp("LRNGradient", []string{"X", "Y", "Y_grad"}, []string{"X_grad"}, argInt("size", 5))}},
		{"LRN without scale", op("LRN", []string{"X"}, []string{"Y"}, argInt("size", 3)),
			[]*netdef.OperatorDef{optest.GradOp("LRNGradient", []string{"X", "Y", "Y_grad"}, []string{"X_grad"}, argInt("size", 3))}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gd, err := operators.GetGradientDefs(c.def, optest.DenseGradients(c.def))
			if err != nil {
				t.Fatal(err)
			}
			if len(gd.Ops) != len(c.want) {
				t.Fatalf("%d gradient ops, want %d", len(gd.Ops), len(c.want))
			}
			for i, want := range c.want {
				if got := optest.SortedArgs(gd.Ops[i]); !proto.Equal(got, optest.SortedArgs(want)) {
					t.Errorf("gradient op %d:\n got %s\nwant %s", i, prototext.Format(got), prototext.Format(want))
				}
			}
			for i, in := range c.def.Input {
				written := false
				for _, o := range gd.Ops[0].Output {
					written = written || o == operators.GradientName(in)
				}
				if got := gd.InputGrad[i]; written && got != operators.Dense(operators.GradientName(in)) || !written && !got.IsNone() {
					t.Errorf("input %d (%q): gradient %+v", i, in, got)
				}
			}
		})
	}
}

// TestGradientMakerErrors checks the operators whose gradient Caffe2
// refuses or forbids.
func TestGradientMakerErrors(t *testing.T) {
	for _, def := range []*netdef.OperatorDef{
		op("GroupNorm", []string{"X", "g", "b"}, []string{"Y"}),
		op("SpatialBN", []string{"X", "s", "b", "rm", "rv", "sums", "sumsq"}, []string{"Y", "rm", "rv", "sm", "siv"}),
		op("SpatialBN", []string{"X", "s", "b", "rm", "rv"}, []string{"Y", "rm", "rv", "sm", "siv"}, argInt("num_batches", 2)),
		op("SpatialBN", []string{"X", "s", "b", "rm", "rv"}, []string{"Y", "rm", "rv", "sm", "siv"}, argInt("is_test", 1)),
		op("ChannelStats", []string{"X"}, []string{"sum", "sumsq"}),
		op("ChannelBackpropStats", []string{"X", "m", "r", "dY"}, []string{"ds", "db"}),
	} {
		if _, err := operators.GetGradientDefs(def, optest.DenseGradients(def)); err == nil {
			t.Errorf("%s %v → %v: no error", def.GetType(), def.Input, def.Output)
		}
	}
}

// TestAutodiffChain builds a net of several normalization operators
// (training-mode SpatialBN with its in-place running statistics first), lets
// operators.AddGradientOperators append the backward pass, and compares the
// gradient of X with central differences of Σ V·R, R a fixed upstream
// gradient.
func TestAutodiffChain(t *testing.T) {
	r := newRand(23)
	x := randT(r, blob.Float64, -1, 2, 2, 3, 2, 2)
	feeds := map[string]*blob.Tensor{
		"s": randT(r, blob.Float64, 0.5, 1.5, 3), "b": randT(r, blob.Float64, -1, 1, 3),
		"rm": randT(r, blob.Float64, -1, 1, 3), "rv": randT(r, blob.Float64, 0.5, 2, 3),
		"g": randT(r, blob.Float64, 0.5, 1.5, 3), "beta": randT(r, blob.Float64, -1, 1, 3),
		"s2": randT(r, blob.Float64, 0.5, 1.5, 3), "b2": randT(r, blob.Float64, -1, 1, 3),
		"V_grad": randT(r, blob.Float64, -1, 1, 2, 3, 2, 2),
	}
	forward := []*netdef.OperatorDef{
		op("SpatialBN", []string{"X", "s", "b", "rm", "rv"}, []string{"Y", "rm", "rv", "sm", "siv"}),
		op("GroupNorm", []string{"Y", "g", "beta"}, []string{"Z", "zm", "zr"}, argInt("group", 3)),
		op("InstanceNorm", []string{"Z", "s2", "b2"}, []string{"W", "wm", "wr"}),
		op("LRN", []string{"W"}, []string{"U", "scale"}, argInt("size", 3), argFloat("alpha", 0.5), argFloat("beta", 0.75)),
		op("LayerNorm", []string{"U"}, []string{"V", "vm", "vs"}, argInt("axis", 2)),
	}
	run := func(x *blob.Tensor, ops []*netdef.OperatorDef) *optest.Workspace {
		ws := optest.NewWorkspace()
		ws.Feed("X", x)
		for name, v := range feeds {
			ws.Feed(name, v)
		}
		for _, o := range ops {
			if err := ws.Run(o); err != nil {
				t.Fatal(err)
			}
		}
		return ws
	}
	net := &netdef.NetDef{Op: append([]*netdef.OperatorDef{}, forward...)}
	grads, err := operators.AddGradientOperators(net, []string{"V"}, map[string]operators.Gradient{"V": operators.Dense("V_grad")})
	if err != nil {
		t.Fatal(err)
	}
	analytic := run(x, net.Op).Tensor(grads["X"].Dense).AsFloat64s()
	loss := func(x *blob.Tensor) float64 {
		v, rr := run(x, forward).Tensor("V").AsFloat64s(), feeds["V_grad"].AsFloat64s()
		var l float64
		for i := range v {
			l += v[i] * rr[i]
		}
		return l
	}
	const h = 1e-6
	for i := range x.Size() {
		xp, xm := x.Clone(), x.Clone()
		blob.Data[float64](xp)[i] += h
		blob.Data[float64](xm)[i] -= h
		numeric := (loss(xp) - loss(xm)) / (2 * h)
		if d := analytic[i] - numeric; d > 1e-6 || d < -1e-6 {
			t.Fatalf("dX[%d] = %v, numeric %v", i, analytic[i], numeric)
		}
	}
}
