package math

import (
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

func TestVariadicHandComputed(t *testing.T) {
	x0, x1, x2 := f32([]int{2, 2}, 1, 5, -3, 0), f32([]int{2, 2}, 2, 4, -3, 1), f32([]int{2, 2}, 0, 9, -4, 1)
	in3 := []string{"X0", "X1", "X2"}
	cases := []struct {
		name string
		def  *netdef.OperatorDef
		in   []*blob.Tensor
		want []float64
	}{
		{"Sum", op("Sum", in3, xy[1]), []*blob.Tensor{x0, x1, x2}, []float64{3, 18, -10, 2}},
		{"Sum/one", op("Sum", in3[:1], xy[1]), []*blob.Tensor{x0}, []float64{1, 5, -3, 0}},
		{"Sum/int32", op("Sum", in3[:2], xy[1]), []*blob.Tensor{blob.MustFromSlice([]int32{1, 2, 3, 4}, 2, 2), blob.MustFromSlice([]int32{10, 20, 30, 40}, 2, 2)}, []float64{11, 22, 33, 44}},
		{"Mean", op("Mean", in3, xy[1]), []*blob.Tensor{x0, x1, x2}, []float64{1, 6, -10.0 / 3, 2.0 / 3}},
		{"Max", op("Max", in3, xy[1]), []*blob.Tensor{x0, x1, x2}, []float64{2, 9, -3, 1}},
		{"Min", op("Min", in3, xy[1]), []*blob.Tensor{x0, x1, x2}, []float64{0, 4, -4, 0}},
		{"Max/float64", op("Max", in3[:2], xy[1]), []*blob.Tensor{f64([]int{2, 2}, 1, 5, -3, 0), f64([]int{2, 2}, 2, 4, -3, 1)}, []float64{2, 5, -3, 1}},
		{"WeightedSum", op("WeightedSum", []string{"X0", "w0", "X1", "w1"}, xy[1]), []*blob.Tensor{x0, f32([]int{1}, 2), x1, f32([]int{1}, 0.5)}, []float64{3, 12, -7.5, 0.5}},
		{"WeightedSum/float64", op("WeightedSum", []string{"X0", "w0"}, xy[1]), []*blob.Tensor{f64([]int{2, 2}, 1, 2, 3, 4), f32([]int{1}, -1)}, []float64{-1, -2, -3, -4}},
		{"WeightedSum/grad_on_w_ignored", op("WeightedSum", []string{"X0", "w0"}, xy[1], netdef.ArgInt("grad_on_w", 1)), []*blob.Tensor{x0, f64([]int{}, 3)}, []float64{3, 15, -9, 0}},
		{"MeanGradient", op("MeanGradient", []string{"dY"}, []string{"dX0"}), []*blob.Tensor{f32([]int{2, 2}, 1, 2, 3, 4)}, []float64{1, 2, 3, 4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkTensor(t, "Y", optest.MustRunOp(t, c.def, c.in...)[0], []int{2, 2}, c.want, 1e-6)
		})
	}
}

func TestVariadicInPlace(t *testing.T) {
	w := optest.NewWorkspace()
	w.Feed("X0", blob.MustFromSlice([]int64{1, 2, 3}))
	w.Feed("X1", blob.MustFromSlice([]int64{10, 20, 30}))
	w.Feed("X2", blob.MustFromSlice([]int64{100, 200, 300}))
	if err := w.Run(op("Sum", []string{"X0", "X1", "X2"}, []string{"X0"})); err != nil {
		t.Fatal(err)
	}
	checkTensor(t, "X0", w.Tensor("X0"), []int{3}, []float64{111, 222, 333}, 0)
	for _, typ := range []string{"Mean", "Max", "Min"} {
		w.Feed("A", f32([]int{2}, 1, 4))
		w.Feed("B", f32([]int{2}, 3, 2))
		if err := w.Run(op(typ, []string{"A", "B"}, []string{"A"})); err != nil {
			t.Fatal(err)
		}
		want := map[string][]float64{"Mean": {2, 3}, "Max": {3, 4}, "Min": {1, 2}}[typ]
		checkTensor(t, typ, w.Tensor("A"), []int{2}, want, 1e-6)
	}
	w.Feed("X0", f32([]int{2}, 1, 2))
	w.Feed("w0", f32([]int{1}, 3))
	w.Feed("X1", f32([]int{2}, 10, 20))
	w.Feed("w1", f32([]int{1}, -1))
	if err := w.Run(op("WeightedSum", []string{"X0", "w0", "X1", "w1"}, []string{"X0"})); err != nil {
		t.Fatal(err)
	}
	checkTensor(t, "X0", w.Tensor("X0"), []int{2}, []float64{-7, -14}, 1e-6)
	w.Feed("dY", f32([]int{2}, 3, 6))
	if err := w.Run(op("MeanGradient", []string{"dY"}, []string{"dY", "dX1", "dX2"})); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"dY", "dX1", "dX2"} {
		checkTensor(t, n, w.Tensor(n), []int{2}, []float64{1, 2}, 1e-6)
	}
	if err := w.Run(op("WeightedSum", []string{"X0", "w0", "X1", "w1"}, []string{"X1"})); err == nil {
		t.Error("WeightedSum in place on X1: want an error")
	}
}

func TestVariadicErrors(t *testing.T) {
	a, b := f32([]int{2, 2}, 1, 2, 3, 4), f32([]int{4}, 1, 2, 3, 4)
	cases := []struct {
		name  string
		def   *netdef.OperatorDef
		in    []*blob.Tensor
		frags []string
	}{
		{"Sum/shape", op("Sum", []string{"P", "Q"}, xy[1]), []*blob.Tensor{a, b}, []string{`"P"`, `"Q"`, "[2 2]", "[4]"}},
		{"Sum/type", op("Sum", []string{"P", "Q"}, xy[1]), []*blob.Tensor{a, f64([]int{2, 2}, 1, 2, 3, 4)}, []string{`"Q"`, "DOUBLE"}},
		{"Mean/int", op("Mean", []string{"P"}, xy[1]), []*blob.Tensor{blob.MustFromSlice([]int32{1})}, []string{`"P"`, "INT32"}},
		{"Max/shape", op("Max", []string{"P", "Q"}, xy[1]), []*blob.Tensor{a, b}, []string{`"Q"`}},
		{"WeightedSum/weight", op("WeightedSum", []string{"P", "w"}, xy[1]), []*blob.Tensor{a, f32([]int{2}, 1, 2)}, []string{`"w"`}},
		{"WeightedSum/size", op("WeightedSum", []string{"P", "w", "Q", "v"}, xy[1]), []*blob.Tensor{a, f32([]int{1}, 1), f32([]int{3}, 1, 2, 3), f32([]int{1}, 1)}, []string{`"Q"`, `"P"`}},
		{"WeightedSum/empty", op("WeightedSum", []string{"P", "w"}, xy[1]), []*blob.Tensor{f32([]int{0}), f32([]int{1}, 1)}, []string{`"P"`, "empty"}},
		{"WeightedSum/odd", op("WeightedSum", []string{"P", "w", "Q"}, xy[1]), []*blob.Tensor{a, f32([]int{1}, 1), a}, []string{"3 inputs"}},
		{"WeightedSumGradient/outputs", op("WeightedSumGradient", []string{"dY", "P", "w"}, []string{"a", "b"}), []*blob.Tensor{a, a, f32([]int{1}, 1)}, []string{"2 outputs"}},
		{"MaxGradient/outputs", op("MaxGradient", []string{"Y", "dY", "P", "Q"}, []string{"a"}), []*blob.Tensor{a, a, a, a}, []string{"1 outputs"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantErrContains(t, runErr(t, c.def, c.in...), c.frags...)
		})
	}
}

func TestVariadicGradientOps(t *testing.T) {
	y, dy := f32([]int{3}, 5, 2, 7), f32([]int{3}, 1, 2, 3)
	x0, x1 := f32([]int{3}, 5, 1, 7), f32([]int{3}, 5, 2, 0)
	out := optest.MustRunOp(t, op("MaxGradient", []string{"Y", "dY", "X0", "X1"}, []string{"dX0", "dX1"}), y, dy, x0, x1)
	checkTensor(t, "dX0", out[0], []int{3}, []float64{1, 0, 3}, 0)
	checkTensor(t, "dX1", out[1], []int{3}, []float64{1, 2, 0}, 0)

	out = optest.MustRunOp(t, op("MeanGradient", []string{"dY"}, []string{"a", "b", "c", "d"}), f32([]int{2}, 4, -8))
	for i := range out {
		checkTensor(t, "dX", out[i], []int{2}, []float64{1, -2}, 1e-7)
	}

	def := op("WeightedSumGradient", []string{"dY", "X0", "w0", "X1", "w1"}, []string{"dX0", "dX1", "dw0", "dw1"}, netdef.ArgInt("grad_on_w", 1))
	out = optest.MustRunOp(t, def, f32([]int{2}, 1, 2), f32([]int{2}, 3, 4), f32([]int{1}, 2), f32([]int{2}, 5, 6), f64([]int{1}, -1))
	checkTensor(t, "dX0", out[0], []int{2}, []float64{2, 4}, 0)
	checkTensor(t, "dX1", out[1], []int{2}, []float64{-1, -2}, 0)
	checkTensor(t, "dw0", out[2], []int{1}, []float64{11}, 0)
	checkTensor(t, "dw1", out[3], []int{1}, []float64{17}, 0)
	if out[3].DataType() != blob.Float64 {
		t.Errorf("dw1 has type %v, want w1's DOUBLE", out[3].DataType())
	}
	out = optest.MustRunOp(t, op("WeightedSumGradient", []string{"dY", "X0", "w0"}, []string{"dX0"}), f32([]int{2}, 1, 2), f32([]int{2}, 3, 4), f32([]int{1}, 3))
	checkTensor(t, "dX0", out[0], []int{2}, []float64{3, 6}, 0)
}
