package nn

import (
	"math"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

func TestSoftmaxHandValues(t *testing.T) {
	// softmax(0, ln 3) = (1/4, 3/4); large inputs must not overflow.
	out := optest.MustRunOp(t, opDef("Softmax", []string{"X"}, []string{"Y"}), tensorOf(blob.Float64, []float64{0, math.Log(3), 1000, 1000}, 2, 2))
	expectTensor(t, "Y", out[0], blob.Float64, []int{2, 2}, []float64{0.25, 0.75, 0.5, 0.5}, 1e-15)

	// dX = Y·(dY − ⟨Y, dY⟩): Y = (1/4, 3/4), dY = (1, 0), ⟨Y, dY⟩ = 1/4.
	out = optest.MustRunOp(t, opDef("SoftmaxGradient", []string{"Y", "dY"}, []string{"dX"}),
		optest.F32([]float64{0.25, 0.75}, 1, 2), optest.F32([]float64{1, 0}, 1, 2))
	expectTensor(t, "dX", out[0], blob.Float32, []int{1, 2}, []float64{0.1875, -0.1875}, 1e-7)
}

func TestSoftmaxForward(t *testing.T) {
	shape := []int{2, 3, 4}
	cases := []struct {
		args []*netdef.Argument
		d    int
	}{
		{nil, 12},
		{[]*netdef.Argument{argInt("axis", 2)}, 4},
		{[]*netdef.Argument{argInt("axis", -1)}, 4},
		{[]*netdef.Argument{argInt("axis", 0)}, 24},
		{[]*netdef.Argument{argInt("axis", -2)}, 12},
	}
	for _, dt := range []blob.DataType{blob.Float32, blob.Float64} {
		for _, tc := range cases {
			x := rounded(dt, randVals(newRand(3), 24, -5, 5))
			out := optest.MustRunOp(t, opDef("Softmax", []string{"X"}, []string{"Y"}, tc.args...), tensorOf(dt, x, shape...))
			expectTensor(t, "Y", out[0], dt, shape, optest.RefSoftmax(x, tc.d), tolFor(dt))
		}
	}
}

func TestSoftmaxEmpty(t *testing.T) {
	out := optest.MustRunOp(t, opDef("Softmax", []string{"X"}, []string{"Y"}), optest.F32(nil, 0, 4))
	expectTensor(t, "Y", out[0], blob.Float32, []int{0, 4}, nil, 0)
	out = optest.MustRunOp(t, opDef("SoftmaxGradient", []string{"Y", "dY"}, []string{"dX"}), optest.F32(nil, 0, 4), optest.F32(nil, 0, 4))
	expectTensor(t, "dX", out[0], blob.Float32, []int{0, 4}, nil, 0)
}

func TestSoftmaxErrors(t *testing.T) {
	cases := []struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
	}{
		{"axis out of range", opDef("Softmax", []string{"X"}, []string{"Y"}, argInt("axis", 2)), []*blob.Tensor{optest.F32([]float64{1, 2}, 1, 2)}},
		{"1-D input with default axis", opDef("Softmax", []string{"X"}, []string{"Y"}), []*blob.Tensor{optest.F32([]float64{1, 2}, 2)}},
		{"negative axis out of range", opDef("Softmax", []string{"X"}, []string{"Y"}, argInt("axis", -3)), []*blob.Tensor{optest.F32([]float64{1, 2}, 1, 2)}},
		{"gradient size mismatch", opDef("SoftmaxGradient", []string{"Y", "dY"}, []string{"dX"}),
			[]*blob.Tensor{optest.F32([]float64{1, 2}, 1, 2), optest.F32([]float64{1}, 1, 1)}},
		{"not in place", opDef("Softmax", []string{"X"}, []string{"X"}), []*blob.Tensor{optest.F32([]float64{1, 2}, 1, 2)}},
		{"string input", opDef("Softmax", []string{"X"}, []string{"Y"}), []*blob.Tensor{blob.MustFromSlice([]string{"a"}, 1, 1)}},
	}
	for _, tc := range cases {
		if _, err := optest.RunOp(tc.def, tc.inputs...); err == nil {
			t.Errorf("%s: no error", tc.name)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
}
