package nn

import (
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

type fcCase struct {
	name       string
	transposed bool
	args       []*netdef.Argument
	x, w       []int // shapes
	m, k, n    int
	y          []int // output shape
}

var fcCases = []fcCase{
	{name: "2d", x: []int{3, 4}, w: []int{5, 4}, m: 3, k: 4, n: 5, y: []int{3, 5}},
	{name: "flatten X", x: []int{2, 3, 4}, w: []int{5, 12}, m: 2, k: 12, n: 5, y: []int{2, 5}},
	{name: "axis 2", args: []*netdef.Argument{argInt("axis", 2)}, x: []int{2, 3, 4}, w: []int{5, 4}, m: 6, k: 4, n: 5, y: []int{2, 3, 5}},
	{name: "axis -1", args: []*netdef.Argument{argInt("axis", -1)}, x: []int{2, 3, 4}, w: []int{5, 4}, m: 6, k: 4, n: 5, y: []int{2, 3, 5}},
	{name: "flatten W", x: []int{2, 12}, w: []int{5, 2, 6}, m: 2, k: 12, n: 5, y: []int{2, 5}},
	{name: "axis_w 2", args: []*netdef.Argument{argInt("axis_w", 2)}, x: []int{3, 6}, w: []int{5, 2, 6}, m: 3, k: 6, n: 10, y: []int{3, 10}},
	{name: "empty batch", x: []int{0, 4}, w: []int{5, 4}, m: 0, k: 4, n: 5, y: []int{0, 5}},
	{name: "no inputs", x: []int{3, 0}, w: []int{5, 0}, m: 3, k: 0, n: 5, y: []int{3, 5}},
	{name: "transposed", transposed: true, x: []int{3, 4}, w: []int{4, 5}, m: 3, k: 4, n: 5, y: []int{3, 5}},
	{name: "transposed axis_w 2", transposed: true, args: []*netdef.Argument{argInt("axis_w", 2)}, x: []int{3, 8}, w: []int{2, 4, 5}, m: 3, k: 8, n: 5, y: []int{3, 5}},
	{name: "transposed axis 2", transposed: true, args: []*netdef.Argument{argInt("axis", 2)}, x: []int{2, 2, 3}, w: []int{3, 7}, m: 4, k: 3, n: 7, y: []int{2, 2, 7}},
}

func (c fcCase) typ() string {
	if c.transposed {
		return "FCTransposed"
	}
	return "FC"
}

func TestFCForward(t *testing.T) {
	for _, dt := range []blob.DataType{blob.Float32, blob.Float64} {
		for _, tc := range fcCases {
			t.Run(tc.name+"/"+dt.String(), func(t *testing.T) {
				r := newRand(11)
				x := rounded(dt, randVals(r, numel(tc.x), -1, 1))
				w := rounded(dt, randVals(r, numel(tc.w), -1, 1))
				b := rounded(dt, randVals(r, tc.n, -1, 1))
				var want []float64
				if tc.transposed {
					want, _, _ = refMatMul(x, tc.m, tc.k, false, w, tc.k, tc.n, false)
				} else {
					want, _, _ = refMatMul(x, tc.m, tc.k, false, w, tc.n, tc.k, true)
				}
				for i := range want {
					want[i] += b[i%tc.n]
				}
				out := optest.MustRunOp(t, opDef(tc.typ(), []string{"X", "W", "b"}, []string{"Y"}, tc.args...),
					tensorOf(dt, x, tc.x...), tensorOf(dt, w, tc.w...), tensorOf(dt, b, tc.n))
				expectTensor(t, "Y", out[0], dt, tc.y, want, tolFor(dt))
			})
		}
	}
}

func TestFCGradientForward(t *testing.T) {
	for _, dt := range []blob.DataType{blob.Float32, blob.Float64} {
		for _, tc := range fcCases {
			t.Run(tc.name+"/"+dt.String(), func(t *testing.T) {
				r := newRand(12)
				x := rounded(dt, randVals(r, numel(tc.x), -1, 1))
				w := rounded(dt, randVals(r, numel(tc.w), -1, 1))
				dy := rounded(dt, randVals(r, tc.m*tc.n, -1, 1))
				var dw, dx []float64
				if tc.transposed {
					dw, _, _ = refMatMul(x, tc.m, tc.k, true, dy, tc.m, tc.n, false) // K×N
					dx, _, _ = refMatMul(dy, tc.m, tc.n, false, w, tc.k, tc.n, true)
				} else {
					dw, _, _ = refMatMul(dy, tc.m, tc.n, true, x, tc.m, tc.k, false) // N×K
					dx, _, _ = refMatMul(dy, tc.m, tc.n, false, w, tc.n, tc.k, false)
				}
				db := make([]float64, tc.n)
				for i, v := range dy {
					db[i%tc.n] += v
				}
				grad := tc.typ() + "Gradient"
				in := []*blob.Tensor{tensorOf(dt, x, tc.x...), tensorOf(dt, w, tc.w...), tensorOf(dt, dy, tc.y...)}
				out := optest.MustRunOp(t, opDef(grad, []string{"X", "W", "dY"}, []string{"dW", "db", "dX"}, tc.args...), in...)
				expectTensor(t, "dW", out[0], dt, tc.w, dw, tolFor(dt))
				expectTensor(t, "db", out[1], dt, []int{tc.n}, db, tolFor(dt))
				expectTensor(t, "dX", out[2], dt, tc.x, dx, tolFor(dt))

				// Without dX.
				out = optest.MustRunOp(t, opDef(grad, []string{"X", "W", "dY"}, []string{"dW", "db"}, tc.args...), in...)
				expectTensor(t, "dW", out[0], dt, tc.w, dw, tolFor(dt))
				expectTensor(t, "db", out[1], dt, []int{tc.n}, db, tolFor(dt))
			})
		}
	}
}

func TestFCErrors(t *testing.T) {
	x := optest.F32(make([]float64, 6), 2, 3)
	cases := []struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
	}{
		{"K mismatch", opDef("FC", []string{"X", "W", "b"}, []string{"Y"}), []*blob.Tensor{x, optest.F32(make([]float64, 8), 2, 4), optest.F32(make([]float64, 2), 2)}},
		{"transposed K mismatch", opDef("FCTransposed", []string{"X", "W", "b"}, []string{"Y"}), []*blob.Tensor{x, optest.F32(make([]float64, 6), 2, 3), optest.F32(make([]float64, 3), 3)}},
		{"bias size", opDef("FC", []string{"X", "W", "b"}, []string{"Y"}), []*blob.Tensor{x, optest.F32(make([]float64, 6), 2, 3), optest.F32(make([]float64, 3), 3)}},
		{"bias rank", opDef("FC", []string{"X", "W", "b"}, []string{"Y"}), []*blob.Tensor{x, optest.F32(make([]float64, 6), 2, 3), optest.F32(make([]float64, 2), 1, 2)}},
		{"axis", opDef("FC", []string{"X", "W", "b"}, []string{"Y"}, argInt("axis", 2)), []*blob.Tensor{x, optest.F32(make([]float64, 6), 2, 3), optest.F32(make([]float64, 2), 2)}},
		{"axis_w", opDef("FC", []string{"X", "W", "b"}, []string{"Y"}, argInt("axis_w", -3)), []*blob.Tensor{x, optest.F32(make([]float64, 6), 2, 3), optest.F32(make([]float64, 2), 2)}},
		{"W type", opDef("FC", []string{"X", "W", "b"}, []string{"Y"}), []*blob.Tensor{x, tensorOf(blob.Float64, make([]float64, 6), 2, 3), optest.F32(make([]float64, 2), 2)}},
		{"dY size", opDef("FCGradient", []string{"X", "W", "dY"}, []string{"dW", "db", "dX"}), []*blob.Tensor{x, optest.F32(make([]float64, 6), 2, 3), optest.F32(make([]float64, 6), 2, 3)}},
		{"one gradient output", opDef("FCGradient", []string{"X", "W", "dY"}, []string{"dW"}), []*blob.Tensor{x, optest.F32(make([]float64, 6), 2, 3), optest.F32(make([]float64, 4), 2, 2)}},
	}
	for _, tc := range cases {
		if _, err := optest.RunOp(tc.def, tc.inputs...); err == nil {
			t.Errorf("%s: no error", tc.name)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
}
