package nn

import (
	"math"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/internal/parallel"
	"github.com/caffe2go/caffe2go/operators/optest"
)

func TestActivationForward(t *testing.T) {
	leaky := func(alpha float64) func(float64) float64 {
		return func(x float64) float64 {
			if x >= 0 {
				return x
			}
			return alpha * x
		}
	}
	cases := []struct {
		typ  string
		args []*netdef.Argument
		f    func(float64) float64
	}{
		{"Relu", nil, func(x float64) float64 { return math.Max(x, 0) }},
		{"LeakyRelu", nil, leaky(float64(float32(0.01)))},
		{"LeakyRelu", []*netdef.Argument{argFloat("alpha", 0.25)}, leaky(float64(float32(0.25)))},
		{"Sigmoid", nil, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }},
		{"Tanh", nil, math.Tanh},
	}
	for _, dt := range []blob.DataType{blob.Float32, blob.Float64} {
		for _, tc := range cases {
			t.Run(tc.typ+"/"+dt.String(), func(t *testing.T) {
				vals := rounded(dt, randVals(newRand(1), 30, -4, 4))
				vals[0] = 0
				want := make([]float64, len(vals))
				for i, v := range vals {
					want[i] = tc.f(v)
				}
				out := optest.MustRunOp(t, opDef(tc.typ, []string{"X"}, []string{"Y"}, tc.args...), tensorOf(dt, vals, 2, 3, 5))
				expectTensor(t, "Y", out[0], dt, []int{2, 3, 5}, want, tolFor(dt))

				// In place.
				w := optest.NewWorkspace()
				w.Feed("X", tensorOf(dt, vals, 2, 3, 5))
				if err := w.Run(opDef(tc.typ, []string{"X"}, []string{"X"}, tc.args...)); err != nil {
					t.Fatal(err)
				}
				expectTensor(t, "X (in place)", w.Tensor("X"), dt, []int{2, 3, 5}, want, tolFor(dt))
			})
		}
	}
}

func TestActivationGradientForward(t *testing.T) {
	cases := []struct {
		typ   string
		args  []*netdef.Argument
		y, dy []float64
		want  []float64
	}{
		{"ReluGradient", nil, []float64{0, 1.5, 0, 2, -0}, []float64{1, 2, 3, 4, 5}, []float64{0, 2, 0, 4, 0}},
		{"LeakyReluGradient", []*netdef.Argument{argFloat("alpha", 0.5)}, []float64{-0.2, 0, 3}, []float64{1, 2, 3}, []float64{0.5, 2, 3}},
		{"LeakyReluGradient", nil, []float64{-1, 1}, []float64{2, 2}, []float64{2 * float64(float32(0.01)), 2}},
		{"SigmoidGradient", nil, []float64{0.25, 0.5}, []float64{2, -1}, []float64{0.375, -0.25}},
		{"TanhGradient", nil, []float64{0.5, -1, 0}, []float64{2, 3, -4}, []float64{1.5, 0, -4}},
	}
	for _, dt := range []blob.DataType{blob.Float32, blob.Float64} {
		for _, tc := range cases {
			t.Run(tc.typ+"/"+dt.String(), func(t *testing.T) {
				n := len(tc.y)
				out := optest.MustRunOp(t, opDef(tc.typ, []string{"Y", "dY"}, []string{"dX"}, tc.args...), tensorOf(dt, tc.y, n), tensorOf(dt, tc.dy, 1, n))
				expectTensor(t, "dX", out[0], dt, []int{n}, tc.want, tolFor(dt))

				// In place over dY, as the schema allows.
				w := optest.NewWorkspace()
				w.Feed("Y", tensorOf(dt, tc.y, n))
				w.Feed("dY", tensorOf(dt, tc.dy, n))
				if err := w.Run(opDef(tc.typ, []string{"Y", "dY"}, []string{"dY"}, tc.args...)); err != nil {
					t.Fatal(err)
				}
				expectTensor(t, "dY (in place)", w.Tensor("dY"), dt, []int{n}, tc.want, tolFor(dt))
			})
		}
	}
}

func TestActivationErrors(t *testing.T) {
	cases := []struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
	}{
		{"int input", opDef("Relu", []string{"X"}, []string{"Y"}), []*blob.Tensor{blob.MustFromSlice([]int32{1, 2}, 2)}},
		{"mixed types", opDef("ReluGradient", []string{"Y", "dY"}, []string{"dX"}),
			[]*blob.Tensor{optest.F32([]float64{1, 2}, 2), tensorOf(blob.Float64, []float64{1, 2}, 2)}},
		{"size mismatch", opDef("TanhGradient", []string{"Y", "dY"}, []string{"dX"}),
			[]*blob.Tensor{optest.F32([]float64{1, 2}, 2), optest.F32([]float64{1, 2, 3}, 3)}},
		{"in place Y→dX not allowed", opDef("SigmoidGradient", []string{"Y", "dY"}, []string{"Y"}),
			[]*blob.Tensor{optest.F32([]float64{1, 2}, 2), optest.F32([]float64{1, 2}, 2)}},
	}
	for _, tc := range cases {
		if _, err := optest.RunOp(tc.def, tc.inputs...); err == nil {
			t.Errorf("%s: no error", tc.name)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
}

// TestActivationJobSplits checks that splitting an activation or its
// gradient over several parts (odd sizes, more parts than cores) gives what
// one pass over all elements gives.
func TestActivationJobSplits(t *testing.T) {
	const n = 3*parallel.MinPartWork + 7
	r := newRand(5)
	y := make([]float32, n)
	dy := make([]float32, n)
	for i := range y {
		y[i], dy[i] = float32(r.Float64()*2-1), float32(r.Float64()*2-1)
	}
	for _, kind := range []activation{actRelu, actLeakyRelu, actSigmoid, actTanh} {
		for _, grad := range []bool{false, true} {
			want := make([]float32, n)
			got := make([]float32, n)
			j := activationJob[float32]{grad: grad, kind: kind, alpha: 0.1}
			if grad {
				activateGrad(kind, 0.1, y, dy, want)
				j.run(3, y, dy, got)
			} else {
				activate(kind, 0.1, y, want)
				j.run(3, y, got, nil)
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("kind %d grad %v: element %d is %v split, %v in one pass", kind, grad, i, got[i], want[i])
				}
			}
			if j.a != nil || j.b != nil || j.c != nil {
				t.Errorf("kind %d grad %v: the job keeps the tensors' memory", kind, grad)
			}
		}
	}
}
