package reduce

import (
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

func TestSumElements(t *testing.T) {
	x := []float64{7, 2, 5, 9, 4, 2, 1, 2, 5}
	for _, tc := range []struct {
		typ     string
		average bool
		want    float64
	}{
		{"SumElements", false, 37},
		{"SumElements", true, 37.0 / 9},
		{"SumSqrElements", false, 209},
		{"SumSqrElements", true, 209.0 / 9},
	} {
		def := netdef.NewOperator(tc.typ, []string{"X"}, []string{"Y"}, netdef.ArgBool("average", tc.average))
		for _, in := range []*blob.Tensor{optest.F32(x, 3, 3), blob.MustFromSlice(append([]float64(nil), x...), 3, 3)} {
			out, err := optest.RunOp(def, in)
			if err != nil {
				t.Fatal(err)
			}
			checkDims(t, tc.typ, out[0].Dims(), []int{})
			if out[0].DataType() != in.DataType() {
				t.Errorf("%s: output type %v, want %v", tc.typ, out[0].DataType(), in.DataType())
			}
			optest.CheckClose(t, tc.typ, out[0].AsFloat64s(), []float64{tc.want}, 1e-6)
		}
	}
	out, err := optest.RunOp(netdef.NewOperator("SumElementsInt", []string{"X"}, []string{"Y"}), blob.MustFromSlice([]int32{3, -4, 10}))
	if err != nil {
		t.Fatal(err)
	}
	if out[0].DataType() != blob.Int32 || out[0].NumDims() != 0 || blob.Data[int32](out[0])[0] != 9 {
		t.Errorf("SumElementsInt = %v %v, want int32 scalar 9", out[0], out[0].AsFloat64s())
	}
	out, err = optest.RunOp(netdef.NewOperator("SumElements", []string{"X"}, []string{"Y"}, netdef.ArgBool("average", true)), optest.F32(nil, 0))
	if err != nil {
		t.Fatal(err)
	}
	optest.CheckClose(t, "average of nothing", out[0].AsFloat64s(), []float64{0}, 0)
}

func TestMatrixMax(t *testing.T) {
	// Caffe2's documented examples for RowwiseMax and ColwiseMax.
	x := []float64{
		5, 12, 10, 1, 4, 16, 2, 15, 5, 11, 12, 15, 15, 4, 17, 19,
		16, 5, 5, 13, 17, 2, 1, 17, 18, 3, 19, 5, 14, 16, 10, 16,
	}
	for _, tc := range []struct {
		typ  string
		want []float64
	}{
		{"RowwiseMax", []float64{12, 16, 15, 19, 16, 17, 19, 16}},
		{"ColwiseMax", []float64{15, 16, 17, 19, 18, 16, 19, 17}},
	} {
		out, err := optest.RunOp(netdef.NewOperator(tc.typ, []string{"X"}, []string{"Y"}), optest.F32(x, 2, 4, 4))
		if err != nil {
			t.Fatal(err)
		}
		checkDims(t, tc.typ, out[0].Dims(), []int{2, 4})
		optest.CheckClose(t, tc.typ, out[0].AsFloat64s(), tc.want, 0)
	}
	if _, err := optest.RunOp(netdef.NewOperator("RowwiseMax", []string{"X"}, []string{"Y"}), optest.F32(x, 8, 4)); err == nil ||
		!strings.Contains(err.Error(), `"X"`) {
		t.Errorf("2-D input: error %v, want one naming \"X\"", err)
	}
}

func TestElementsGradientDefs(t *testing.T) {
	avg := netdef.ArgInt("average", 1)
	checkGradientDef(t, netdef.NewOperator("SumElements", []string{"X"}, []string{"Y"}, avg),
		optest.GradOp("SumElementsGradient", []string{"X", "Y_grad"}, []string{"X_grad"}, avg))
	for _, typ := range []string{"RowwiseMax", "ColwiseMax"} {
		checkGradientDef(t, netdef.NewOperator(typ, []string{"X"}, []string{"Y"}),
			optest.GradOp(typ+"Gradient", []string{"X", "Y", "Y_grad"}, []string{"X_grad"}))
	}
	if operators.HasGradient("SumSqrElements") {
		t.Error("SumSqrElements has a gradient entry; Caffe2 registers none")
	}
	def := netdef.NewOperator("SumElementsInt", []string{"X"}, []string{"Y"})
	if _, err := operators.GetGradientDefs(def, []operators.Gradient{operators.Dense("Y_grad")}); err == nil {
		t.Error("SumElementsInt gradient allowed, want it forbidden")
	}
}

func TestElementsGradients(t *testing.T) {
	x := optest.F32(distinct(24, 4), 2, 3, 4)
	runGradientChecks(t, []gradientCase{
		{name: "SumElements", def: netdef.NewOperator("SumElements", []string{"X"}, []string{"Y"}), inputs: []*blob.Tensor{x}},
		{name: "SumElements average", def: netdef.NewOperator("SumElements", []string{"X"}, []string{"Y"}, netdef.ArgInt("average", 1)), inputs: []*blob.Tensor{x}},
		{name: "RowwiseMax", def: netdef.NewOperator("RowwiseMax", []string{"X"}, []string{"Y"}), inputs: []*blob.Tensor{x}},
		{name: "ColwiseMax", def: netdef.NewOperator("ColwiseMax", []string{"X"}, []string{"Y"}), inputs: []*blob.Tensor{x}},
	})
}

func TestSumElementsGradientValues(t *testing.T) {
	def := netdef.NewOperator("SumElementsGradient", []string{"X", "dY"}, []string{"dX"}, netdef.ArgInt("average", 1))
	out, err := optest.RunOp(def, optest.F32(make([]float64, 4), 2, 2), optest.F32([]float64{2}))
	if err != nil {
		t.Fatal(err)
	}
	checkDims(t, "dX", out[0].Dims(), []int{2, 2})
	optest.CheckClose(t, "dX", out[0].AsFloat64s(), []float64{0.5, 0.5, 0.5, 0.5}, 0)
	if _, err := optest.RunOp(def, optest.F32(make([]float64, 4)), optest.F32([]float64{1, 2})); err == nil || !strings.Contains(err.Error(), `"dY"`) {
		t.Errorf("two-element dY: error %v, want one naming \"dY\"", err)
	}
}
