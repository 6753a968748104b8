package math

import (
	"math"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

var xy = [][]string{{"X"}, {"Y"}}

func TestUnaryAgainstReference(t *testing.T) {
	r := newRand()
	cases := []struct {
		typ    string
		args   []*netdef.Argument
		lo, hi float64
		ref    func(float64) float64
	}{
		{"Negative", nil, -3, 3, func(x float64) float64 { return -x }},
		{"Exp", nil, -3, 3, math.Exp},
		{"Log", nil, 0.01, 5, math.Log},
		{"Sqrt", nil, 0, 5, math.Sqrt},
		{"Sqr", nil, -3, 3, func(x float64) float64 { return x * x }},
		{"Abs", nil, -3, 3, math.Abs},
		{"Ceil", nil, -3, 3, math.Ceil},
		{"Erf", nil, -3, 3, math.Erf},
		{"Scale", []*netdef.Argument{netdef.ArgFloat("scale", -2.5)}, -3, 3, func(x float64) float64 { return -2.5 * x }},
		{"Scale", nil, -3, 3, func(x float64) float64 { return x }},
		{"Clip", []*netdef.Argument{netdef.ArgFloat("min", -0.5), netdef.ArgFloat("max", 1)}, -3, 3, func(x float64) float64 { return math.Min(math.Max(x, -0.5), 1) }},
		{"Clip", []*netdef.Argument{netdef.ArgFloat("min", 0)}, -3, 3, func(x float64) float64 { return math.Max(x, 0) }},
		{"Pow", []*netdef.Argument{netdef.ArgFloat("exponent", 3)}, -3, 3, func(x float64) float64 { return x * x * x }},
		{"Pow", []*netdef.Argument{netdef.ArgFloat("exponent", 0.5)}, 0, 3, math.Sqrt},
		{"Pow", []*netdef.Argument{netdef.ArgInt("exponent", -1)}, 0.5, 3, func(x float64) float64 { return 1 / x }},
		{"Pow", nil, 0.5, 3, func(x float64) float64 { return 1 }},
	}
	for _, c := range cases {
		t.Run(c.typ, func(t *testing.T) {
			x32 := randT(r, c.lo, c.hi, 3, 4)
			x64 := blob.MustFromSlice(x32.AsFloat64s(), 3, 4)
			for _, x := range []*blob.Tensor{x32, x64} {
				want := make([]float64, x.Size())
				for i, v := range x.AsFloat64s() {
					want[i] = c.ref(v)
				}
				out := optest.MustRunOp(t, op(c.typ, xy[0], xy[1], c.args...), x)
				checkTensor(t, c.typ, out[0], []int{3, 4}, want, 1e-6)
				if out[0].DataType() != x.DataType() {
					t.Errorf("type %v, want %v", out[0].DataType(), x.DataType())
				}
			}
		})
	}
}

func TestUnaryHandComputed(t *testing.T) {
	inf := math.Inf(1)
	cases := []struct {
		name  string
		def   *netdef.OperatorDef
		x     *blob.Tensor
		shape []int
		want  []float64
	}{
		{"Negative/int32", op("Negative", xy[0], xy[1]), blob.MustFromSlice([]int32{1, -2, 0}), []int{3}, []float64{-1, 2, 0}},
		{"Negative/int64", op("Negative", xy[0], xy[1]), blob.MustFromSlice([]int64{1 << 50}), []int{1}, []float64{-(1 << 50)}},
		{"Sqr", op("Sqr", xy[0], xy[1]), f32([]int{2}, 3, -0.5), []int{2}, []float64{9, 0.25}},
		{"Ceil", op("Ceil", xy[0], xy[1]), f32([]int{4}, -1.5, 1.2, 2, -0.2), []int{4}, []float64{-1, 2, 2, 0}},
		{"Abs", op("Abs", xy[0], xy[1]), f32([]int{2, 1}, -2, 3), []int{2, 1}, []float64{2, 3}},
		{"Clip/defaults32", op("Clip", xy[0], xy[1]), f32([]int{3}, float32(-inf), 1, float32(inf)), []int{3}, []float64{-math.MaxFloat32, 1, math.MaxFloat32}},
		{"Clip/defaults64", op("Clip", xy[0], xy[1]), f64([]int{2}, -1e300, 1e300), []int{2}, []float64{-1e300, 1e300}},
		{"Pow/two_inputs", op("Pow", []string{"X", "E"}, xy[1]), f32([]int{3}, 2, 3, 4), []int{3}, []float64{8, 9, 2}},
		{"Scale/0-d", op("Scale", xy[0], xy[1], netdef.ArgFloat("scale", 3)), blob.Scalar[float64](1.5), []int{}, []float64{4.5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := []*blob.Tensor{c.x}
			if len(c.def.Input) == 2 {
				in = append(in, f32([]int{3}, 3, 2, 0.5))
			}
			checkTensor(t, "Y", optest.MustRunOp(t, c.def, in...)[0], c.shape, c.want, 1e-6)
		})
	}
}

func TestPowTwoInputsBroadcast(t *testing.T) {
	out := optest.MustRunOp(t, op("Pow", []string{"X", "E"}, xy[1], netdef.ArgInt("broadcast", 1)), f32([]int{2, 2}, 2, 3, 4, 5), f32([]int{2}, 2, 0.5))
	checkTensor(t, "Y", out[0], []int{2, 2}, []float64{4, math.Sqrt(3), 16, math.Sqrt(5)}, 1e-6)
	out = optest.MustRunOp(t, op("Pow", []string{"X", "E"}, xy[1]), f32([]int{2, 1}, 2, 3), f32([]int{3}, 0, 1, 2))
	checkTensor(t, "Y", out[0], []int{2, 3}, []float64{1, 2, 4, 1, 3, 9}, 1e-6)
	err := runErr(t, op("Pow", []string{"X", "E"}, xy[1], netdef.ArgFloat("exponent", 2)), f32([]int{1}, 2), f32([]int{1}, 2))
	wantErrContains(t, err, "exponent", `"E"`)
	err = runErr(t, op("Pow", []string{"X", "E"}, xy[1]), blob.MustFromSlice([]int32{2}), blob.MustFromSlice([]int32{2}))
	wantErrContains(t, err, `"X"`, "INT32")
}

func TestUnaryInPlace(t *testing.T) {
	for _, c := range []struct {
		def  *netdef.OperatorDef
		want []float64
	}{
		{op("Exp", xy[0], xy[0]), []float64{1, math.E}},
		{op("Negative", xy[0], xy[0]), []float64{0, -1}},
		{op("Scale", xy[0], xy[0], netdef.ArgFloat("scale", 4)), []float64{0, 4}},
		{op("Clip", xy[0], xy[0], netdef.ArgFloat("max", 0.5)), []float64{0, 0.5}},
		{op("Pow", xy[0], xy[0], netdef.ArgFloat("exponent", 2)), []float64{0, 1}},
	} {
		w := optest.NewWorkspace()
		w.Feed("X", f32([]int{2}, 0, 1))
		if err := w.Run(c.def); err != nil {
			t.Fatal(err)
		}
		checkTensor(t, c.def.GetType(), w.Tensor("X"), []int{2}, c.want, 1e-6)
	}
	w := optest.NewWorkspace()
	w.Feed("X", f32([]int{2}, 0, 1))
	err := w.Run(op("Abs", xy[0], xy[0]))
	if err == nil {
		t.Fatal("Abs in place: want an error")
	}
	wantErrContains(t, err, "in place")
}

func TestUnaryGradientOps(t *testing.T) {
	k := 2 / math.Sqrt(math.Pi)
	cases := []struct {
		name string
		def  *netdef.OperatorDef
		x, g *blob.Tensor
		want []float64
	}{
		{"AbsGradient", op("AbsGradient", []string{"X", "dY"}, []string{"dX"}), f32([]int{3}, -2, 0, 3), f32([]int{3}, 1, 2, 3), []float64{-1, 0, 3}},
		{"ErfGradient", op("ErfGradient", []string{"X", "dY"}, []string{"dX"}), f32([]int{3}, 0, 1, -1), f32([]int{3}, 1, 2, 3), []float64{k, 2 * k * math.Exp(-1), 3 * k * math.Exp(-1)}},
		{"ClipGradient", op("ClipGradient", []string{"Y", "dY"}, []string{"dX"}, netdef.ArgFloat("min", 0), netdef.ArgFloat("max", 1)), f32([]int{3}, 0, 0.5, 1), f32([]int{3}, 4, 5, 6), []float64{0, 5, 0}},
		{"ClipGradient/defaults", op("ClipGradient", []string{"Y", "dY"}, []string{"dX"}), f32([]int{2}, -math.MaxFloat32, 7), f32([]int{2}, 4, 5), []float64{0, 5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkTensor(t, "dX", optest.MustRunOp(t, c.def, c.x, c.g)[0], c.x.Dims(), c.want, 1e-6)
		})
	}
	err := runErr(t, op("AbsGradient", []string{"X", "dY"}, []string{"dX"}), f32([]int{2}, 1, 2), f32([]int{3}, 1, 2, 3))
	wantErrContains(t, err, `"X"`, `"dY"`)
	err = runErr(t, op("Exp", xy[0], xy[1]), blob.MustFromSlice([]int32{1}))
	wantErrContains(t, err, `"X"`, "INT32")
}
