package math

import (
	"fmt"
	"math"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// distinct returns float32 tensors of one shape whose values are pairwise
// at least 0.1 apart across all of them (for Max and Min).
func distinct(n int, shape ...int) []*blob.Tensor {
	size := 1
	for _, d := range shape {
		size *= d
	}
	r := newRand()
	perm := r.Perm(n * size)
	out := make([]*blob.Tensor, n)
	for k := range out {
		v := make([]float32, size)
		for i := range v {
			v[i] = float32(perm[k*size+i])*0.1 - 1
		}
		out[k] = blob.MustFromSlice(v, shape...)
	}
	return out
}

// awayFrom returns a float32 tensor uniform in [lo, hi) with no value
// within gap of any of the given points.
func awayFrom(lo, hi, gap float64, points []float64, shape ...int) *blob.Tensor {
	r := newRand()
	t := randT(r, lo, hi, shape...)
	d := blob.Data[float32](t)
	for i := range d {
	retry:
		for _, p := range points {
			if math.Abs(float64(d[i])-p) < gap {
				d[i] = float32(lo + (hi-lo)*r.Float64())
				goto retry
			}
		}
	}
	return t
}

func TestGradientNumeric(t *testing.T) {
	registerTestConstantFill()
	r := newRand()
	bc := netdef.ArgInt("broadcast", 1)
	in2 := []string{"A", "B"}
	type row struct {
		name string
		def  *netdef.OperatorDef
		in   []*blob.Tensor
		idx  []int
	}
	var rows []row
	binary := func(name string, args []*netdef.Argument, as, bs []int) {
		for _, typ := range []string{"Add", "Sub", "Mul", "Div"} {
			a := randAway(r, -2, 2, 0.5, as...)
			b := randAway(r, -2, 2, 0.5, bs...)
			rows = append(rows, row{typ + "/" + name, op(typ, in2, []string{"C"}, args...), []*blob.Tensor{a, b}, []int{0, 1}})
		}
	}
	binary("same", nil, []int{2, 3}, []int{2, 3})
	for _, typ := range []string{"Add", "Sub", "Mul"} {
		for _, c := range []struct {
			name   string
			args   []*netdef.Argument
			as, bs []int
		}{
			{"legacy_suffix", []*netdef.Argument{bc}, []int{2, 3, 4}, []int{3, 4}},
			{"legacy_axis", []*netdef.Argument{bc, netdef.ArgInt("axis", 1)}, []int{2, 3, 4}, []int{3}},
			{"legacy_axis_str", []*netdef.Argument{bc, netdef.ArgString("axis_str", "C"), netdef.ArgString("order", "NHWC")}, []int{2, 2, 3, 2}, []int{2}},
			{"legacy_scalar", []*netdef.Argument{bc}, []int{2, 3}, []int{1}},
			{"legacy_trailing_one", []*netdef.Argument{bc}, []int{2, 3, 2}, []int{3, 1}},
			{"numpy_broadcast0", []*netdef.Argument{netdef.ArgInt("broadcast", 0)}, []int{2, 3, 4}, []int{3, 1}},
		} {
			a, b := randAway(r, -2, 2, 0.3, c.as...), randAway(r, -2, 2, 0.3, c.bs...)
			rows = append(rows, row{typ + "/" + c.name, op(typ, in2, []string{"C"}, c.args...), []*blob.Tensor{a, b}, []int{0, 1}})
		}
	}
	rows = append(rows,
		row{"Add/float64", op("Add", in2, []string{"C"}, bc), []*blob.Tensor{f64([]int{2, 2}, 1, 2, 3, 4), f64([]int{2}, 0.5, -1)}, []int{0, 1}},
		row{"Div/float64", op("Div", in2, []string{"C"}), []*blob.Tensor{f64([]int{3}, 1, -2, 3), f64([]int{3}, 0.5, 2, -1.5)}, []int{0, 1}},
	)

	x := randT(r, -1, 1, 2, 3)
	pos := randT(r, 0.3, 2, 2, 3)
	rows = append(rows,
		row{"Negative", op("Negative", xy[0], xy[1]), []*blob.Tensor{x}, []int{0}},
		row{"Exp", op("Exp", xy[0], xy[1]), []*blob.Tensor{x}, []int{0}},
		row{"Log", op("Log", xy[0], xy[1]), []*blob.Tensor{pos}, []int{0}},
		row{"Sqrt", op("Sqrt", xy[0], xy[1]), []*blob.Tensor{pos}, []int{0}},
		row{"Sqr", op("Sqr", xy[0], xy[1]), []*blob.Tensor{x}, []int{0}},
		row{"Abs", op("Abs", xy[0], xy[1]), []*blob.Tensor{awayFrom(-1, 1, 0.05, []float64{0}, 2, 3)}, []int{0}},
		row{"Erf", op("Erf", xy[0], xy[1]), []*blob.Tensor{x}, []int{0}},
		row{"Scale", op("Scale", xy[0], xy[1], netdef.ArgFloat("scale", -1.7)), []*blob.Tensor{x}, []int{0}},
		row{"Clip", op("Clip", xy[0], xy[1], netdef.ArgFloat("min", -0.4), netdef.ArgFloat("max", 0.5)),
			[]*blob.Tensor{awayFrom(-1, 1, 0.02, []float64{-0.4, 0.5}, 3, 4)}, []int{0}},
		row{"Clip/defaults", op("Clip", xy[0], xy[1]), []*blob.Tensor{x}, []int{0}},
		row{"Pow/exponent", op("Pow", xy[0], xy[1], netdef.ArgFloat("exponent", 3)), []*blob.Tensor{x}, []int{0}},
		row{"Pow/fractional", op("Pow", xy[0], xy[1], netdef.ArgFloat("exponent", -1.5)), []*blob.Tensor{pos}, []int{0}},
		row{"Pow/tensor", op("Pow", []string{"X", "E"}, xy[1]), []*blob.Tensor{pos, randT(r, -2, 2, 2, 3)}, []int{0, 1}},
		row{"Pow/tensor_legacy", op("Pow", []string{"X", "E"}, xy[1], bc, netdef.ArgInt("axis", 0)), []*blob.Tensor{pos, randT(r, -2, 2, 2)}, []int{0, 1}},
	)

	three := distinct(3, 2, 3)
	rows = append(rows,
		row{"Sum", op("Sum", []string{"X0", "X1", "X2"}, xy[1]), []*blob.Tensor{x, pos, three[0]}, []int{0, 1, 2}},
		row{"Mean", op("Mean", []string{"X0", "X1", "X2"}, xy[1]), []*blob.Tensor{x, pos, three[0]}, []int{0, 1, 2}},
		row{"Max", op("Max", []string{"X0", "X1", "X2"}, xy[1]), three, []int{0, 1, 2}},
		row{"Min", op("Min", []string{"X0", "X1", "X2"}, xy[1]), three, []int{0, 1, 2}},
		row{"WeightedSum", op("WeightedSum", []string{"X0", "w0", "X1", "w1"}, xy[1]),
			[]*blob.Tensor{x, f32([]int{1}, 0.7), pos, f32([]int{1}, -1.3)}, []int{0, 2}},
		row{"WeightedSum/grad_on_w", op("WeightedSum", []string{"X0", "w0", "X1", "w1"}, xy[1], netdef.ArgInt("grad_on_w", 1)),
			[]*blob.Tensor{x, f32([]int{1}, 0.7), pos, f32([]int{1}, -1.3)}, []int{0, 1, 2, 3}},
	)

	for _, rw := range rows {
		for _, i := range rw.idx {
			t.Run(fmt.Sprintf("%s/d%s", rw.name, rw.def.Input[i]), func(t *testing.T) {
				if _, err := optest.CheckGradient(rw.def, rw.in, i, optest.GradientCheck{}); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestPowInPlaceGradient checks the in-place Pow gradient, which reads
// the output through the input's name. CheckGradient cannot: it names the
// output gradient X_grad, the very blob the first gradient op writes (as
// in Caffe2, where the gradient of an in-place op only works when its
// output gradient has another name, such as a loss's X_autogen_grad).
func TestPowInPlaceGradient(t *testing.T) {
	const e = 2.5
	def := op("Pow", xy[0], xy[0], netdef.ArgFloat("exponent", e))
	x := f64([]int{3}, 0.5, 1.5, 2)
	dy := f64([]int{3}, 1, -2, 0.5)
	w := optest.NewWorkspace()
	w.Feed("X", x)
	w.Feed("X_autogen_grad", dy)
	if err := w.Run(def); err != nil {
		t.Fatal(err)
	}
	gd, err := operators.GetGradientDefs(def, []operators.Gradient{operators.Dense("X_autogen_grad")})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gd.Ops {
		if err := w.Run(g); err != nil {
			t.Fatal(err)
		}
	}
	want := make([]float64, 3)
	for i, v := range x.AsFloat64s() {
		want[i] = e * math.Pow(v, e-1) * dy.AsFloat64s()[i]
	}
	checkTensor(t, gd.InputGrad[0].Dense, w.Tensor(gd.InputGrad[0].Dense), []int{3}, want, 1e-6)
}

var gop = optest.GradOp

func withName(o *netdef.OperatorDef, name string) *netdef.OperatorDef {
	o.Name = proto.String(name)
	return o
}

func TestGradientDefs(t *testing.T) {
	bc, ax := netdef.ArgInt("broadcast", 1), netdef.ArgInt("axis", 1)
	dflt := func() []*netdef.Argument {
		return []*netdef.Argument{netdef.ArgInt("axis", -1), netdef.ArgString("axis_str", ""), netdef.ArgString("order", "NCHW")}
	}
	cases := []struct {
		name  string
		def   *netdef.OperatorDef
		ops   []*netdef.OperatorDef
		grads []string
	}{
		{"Add", op("Add", []string{"A", "B"}, []string{"C"}), nil, []string{"C_grad", "C_grad"}},
		{"Add/broadcast", op("Add", []string{"A", "B"}, []string{"C"}, bc, ax),
			[]*netdef.OperatorDef{gop("SumReduceLike", []string{"C_grad", "B"}, []string{"B_grad"}, bc, ax)}, []string{"C_grad", "B_grad"}},
		{"Sub", op("Sub", []string{"A", "B"}, []string{"C"}, netdef.ArgInt("other", 3)),
			[]*netdef.OperatorDef{gop("Negative", []string{"C_grad"}, []string{"B_grad"})}, []string{"C_grad", "B_grad"}},
		{"Sub/broadcast", op("Sub", []string{"A", "B"}, []string{"C"}, bc),
			[]*netdef.OperatorDef{
				gop("Negative", []string{"C_grad"}, []string{"B_grad_autogen_pre_red"}),
				gop("SumReduceLike", []string{"B_grad_autogen_pre_red", "B"}, []string{"B_grad"}, dflt()...),
			}, []string{"C_grad", "B_grad"}},
		{"Mul", op("Mul", []string{"A", "B"}, []string{"C"}, netdef.ArgInt("other", 3)),
			[]*netdef.OperatorDef{
				gop("Mul", []string{"C_grad", "B"}, []string{"A_grad"}),
				gop("Mul", []string{"C_grad", "A"}, []string{"B_grad"}),
			}, []string{"A_grad", "B_grad"}},
		{"Mul/broadcast", op("Mul", []string{"A", "B"}, []string{"C"}, bc, ax),
			[]*netdef.OperatorDef{
				withName(gop("Mul", []string{"C_grad", "B"}, []string{"A_grad"}, bc, ax, netdef.ArgString("axis_str", ""), netdef.ArgString("order", "NCHW")), "mul_grad_1st_op"),
				withName(gop("Mul", []string{"C_grad", "A"}, []string{"B_grad_autogen_pre_red"}), "mul_gradient_2nd_op"),
				withName(gop("SumReduceLike", []string{"B_grad_autogen_pre_red", "B"}, []string{"B_grad"}, ax, netdef.ArgString("axis_str", ""), netdef.ArgString("order", "NCHW")), "mul_with_broadcast_grad_3"),
			}, []string{"A_grad", "B_grad"}},
		{"Div", op("Div", []string{"A", "B"}, []string{"C"}),
			[]*netdef.OperatorDef{gop("DivGradient", []string{"B", "C", "C_grad"}, []string{"A_grad", "B_grad"})}, []string{"A_grad", "B_grad"}},
		{"Sum", op("Sum", []string{"X0", "X1", "X2"}, []string{"X0"}), nil, []string{"X0_grad", "X0_grad", "X0_grad"}},
		{"Mean", op("Mean", []string{"X0", "X1"}, []string{"Y"}),
			[]*netdef.OperatorDef{gop("MeanGradient", []string{"Y_grad"}, []string{"X0_grad", "X1_grad"})}, []string{"X0_grad", "X1_grad"}},
		{"Max", op("Max", []string{"X0", "X1"}, []string{"Y"}),
			[]*netdef.OperatorDef{gop("MaxGradient", []string{"Y", "Y_grad", "X0", "X1"}, []string{"X0_grad", "X1_grad"})}, []string{"X0_grad", "X1_grad"}},
		{"Min", op("Min", []string{"X0"}, []string{"Y"}),
			[]*netdef.OperatorDef{gop("MinGradient", []string{"Y", "Y_grad", "X0"}, []string{"X0_grad"})}, []string{"X0_grad"}},
		{"Scale", op("Scale", []string{"X"}, []string{"Y"}, netdef.ArgFloat("scale", 3)),
			[]*netdef.OperatorDef{gop("Scale", []string{"Y_grad"}, []string{"X_grad"}, netdef.ArgFloat("scale", 3))}, []string{"X_grad"}},
		{"WeightedSum", op("WeightedSum", []string{"X0", "w0", "X1", "w1"}, []string{"Y"}),
			[]*netdef.OperatorDef{gop("WeightedSumGradient", []string{"Y_grad", "X0", "w0", "X1", "w1"}, []string{"X0_grad", "X1_grad"})}, []string{"X0_grad", "", "X1_grad", ""}},
		{"WeightedSum/grad_on_w", op("WeightedSum", []string{"X0", "w0", "X1", "w1"}, []string{"Y"}, netdef.ArgInt("grad_on_w", 1)),
			[]*netdef.OperatorDef{gop("WeightedSumGradient", []string{"Y_grad", "X0", "w0", "X1", "w1"}, []string{"X0_grad", "X1_grad", "w0_grad", "w1_grad"}, netdef.ArgInt("grad_on_w", 1))},
			[]string{"X0_grad", "w0_grad", "X1_grad", "w1_grad"}},
		{"Negative", op("Negative", xy[0], xy[1]), []*netdef.OperatorDef{gop("Negative", []string{"Y_grad"}, []string{"X_grad"})}, []string{"X_grad"}},
		{"Exp", op("Exp", xy[0], xy[1]), []*netdef.OperatorDef{gop("Mul", []string{"Y", "Y_grad"}, []string{"X_grad"})}, []string{"X_grad"}},
		{"Log", op("Log", xy[0], xy[1]), []*netdef.OperatorDef{gop("Div", []string{"Y_grad", "X"}, []string{"X_grad"})}, []string{"X_grad"}},
		{"Sqrt", op("Sqrt", xy[0], xy[1]),
			[]*netdef.OperatorDef{
				gop("Scale", []string{"Y_grad"}, []string{"X_grad"}, netdef.ArgFloat("scale", 0.5)),
				gop("Div", []string{"X_grad", "Y"}, []string{"X_grad"}),
			}, []string{"X_grad"}},
		{"Sqr", op("Sqr", xy[0], xy[1]),
			[]*netdef.OperatorDef{
				gop("Scale", []string{"Y_grad"}, []string{"Y_grad"}, netdef.ArgFloat("scale", 2)),
				gop("Mul", []string{"Y_grad", "X"}, []string{"X_grad"}),
			}, []string{"X_grad"}},
		{"Abs", op("Abs", xy[0], xy[1]), []*netdef.OperatorDef{gop("AbsGradient", []string{"X", "Y_grad"}, []string{"X_grad"})}, []string{"X_grad"}},
		{"Erf", op("Erf", xy[0], xy[1]), []*netdef.OperatorDef{gop("ErfGradient", []string{"X", "Y_grad"}, []string{"X_grad"})}, []string{"X_grad"}},
		{"Clip", op("Clip", xy[0], xy[1], netdef.ArgFloat("min", 1)),
			[]*netdef.OperatorDef{gop("ClipGradient", []string{"Y", "Y_grad"}, []string{"X_grad"}, netdef.ArgFloat("min", 1))}, []string{"X_grad"}},
		{"Pow", op("Pow", xy[0], xy[1], netdef.ArgFloat("exponent", 3)),
			[]*netdef.OperatorDef{
				gop("Pow", []string{"X"}, []string{"X_grad"}, netdef.ArgFloat("exponent", 2)),
				gop("Mul", []string{"X_grad", "Y_grad"}, []string{"X_grad"}),
				gop("Scale", []string{"X_grad"}, []string{"X_grad"}, netdef.ArgFloat("scale", 3)),
			}, []string{"X_grad"}},
		{"Pow/in_place", op("Pow", xy[0], xy[0], netdef.ArgFloat("exponent", 4)),
			[]*netdef.OperatorDef{
				gop("Pow", []string{"X"}, []string{"X_grad"}, netdef.ArgFloat("exponent", 0.75)),
				gop("Mul", []string{"X_grad", "X_grad"}, []string{"X_grad"}),
				gop("Scale", []string{"X_grad"}, []string{"X_grad"}, netdef.ArgFloat("scale", 4)),
			}, []string{"X_grad"}},
		{"Pow/tensor", op("Pow", []string{"X", "E"}, xy[1]),
			[]*netdef.OperatorDef{
				gop("ConstantFill", []string{"E"}, []string{"E_grad"}, netdef.ArgFloat("value", 1)),
				gop("Sub", []string{"E", "E_grad"}, []string{"E_grad"}),
				gop("Pow", []string{"X", "E_grad"}, []string{"X_grad"}),
				gop("Mul", []string{"X_grad", "Y_grad"}, []string{"X_grad"}),
				gop("Mul", []string{"X_grad", "E"}, []string{"X_grad"}),
				gop("Log", []string{"X"}, []string{"E_grad_autogen_pre_red"}),
				gop("Mul", []string{"E_grad_autogen_pre_red", "Y"}, []string{"E_grad_autogen_pre_red"}),
				gop("Mul", []string{"E_grad_autogen_pre_red", "Y_grad"}, []string{"E_grad"}),
			}, []string{"X_grad", "E_grad"}},
		{"Pow/tensor_broadcast", op("Pow", []string{"X", "E"}, xy[1], bc),
			[]*netdef.OperatorDef{
				gop("ConstantFill", []string{"E"}, []string{"E_grad"}, netdef.ArgFloat("value", 1)),
				gop("Sub", []string{"E", "E_grad"}, []string{"E_grad"}),
				gop("Pow", []string{"X", "E_grad"}, []string{"X_grad"}, append([]*netdef.Argument{bc}, dflt()...)...),
				gop("Mul", []string{"X_grad", "Y_grad"}, []string{"X_grad"}),
				gop("Mul", []string{"X_grad", "E"}, []string{"X_grad"}, append([]*netdef.Argument{bc}, dflt()...)...),
				gop("Log", []string{"X"}, []string{"E_grad_autogen_pre_red"}),
				gop("Mul", []string{"E_grad_autogen_pre_red", "Y"}, []string{"E_grad_autogen_pre_red"}),
				gop("Mul", []string{"E_grad_autogen_pre_red", "Y_grad"}, []string{"E_grad_autogen_pre_red"}),
				gop("SumReduceLike", []string{"E_grad_autogen_pre_red", "E"}, []string{"E_grad"}, dflt()...),
			}, []string{"X_grad", "E_grad"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gd, err := operators.GetGradientDefs(c.def, optest.DenseGradients(c.def))
			if err != nil {
				t.Fatal(err)
			}
			if len(gd.Ops) != len(c.ops) {
				t.Fatalf("%d gradient ops, want %d: %v", len(gd.Ops), len(c.ops), gd.Ops)
			}
			for i := range c.ops {
				if got, want := optest.SortedArgs(gd.Ops[i]), optest.SortedArgs(c.ops[i]); !proto.Equal(got, want) {
					t.Errorf("op %d:\n got %v\nwant %v", i, got, want)
				}
			}
			for i, g := range gd.InputGrad {
				if g.Dense != c.grads[i] || g.IsSparse() {
					t.Errorf("input %d gradient %+v, want dense %q", i, g, c.grads[i])
				}
			}
		})
	}
}

func TestGradientDefErrors(t *testing.T) {
	for _, c := range []struct {
		def  *netdef.OperatorDef
		frag string
	}{
		{op("Mul", []string{"A", "B"}, []string{"A"}), "in-place"},
		{op("Mul", []string{"A", "B"}, []string{"B"}, netdef.ArgInt("broadcast", 1)), "in-place"},
		{op("Div", []string{"A", "B"}, []string{"C"}, netdef.ArgInt("broadcast", 1)), "broadcasting"},
		{op("Pow", []string{"X", "E"}, []string{"X"}), "in-place"},
		{op("Pow", []string{"X"}, []string{"X"}, netdef.ArgFloat("exponent", 0)), "non-zero exponent"},
		{op("Ceil", xy[0], xy[1]), "not implemented"},
	} {
		gradOut := []operators.Gradient{operators.Dense(c.def.Output[0] + "_grad")}
		_, err := operators.GetGradientDefs(c.def, gradOut)
		if err == nil {
			t.Errorf("%v: want an error", c.def)
			continue
		}
		wantErrContains(t, err, c.frag)
	}
	if operators.HasGradient("SumReduceLike") {
		t.Error("SumReduceLike has a gradient entry; Caffe2 registers none")
	}
}
