package optim

import (
	"math"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

func TestRmsPropSteps(t *testing.T) {
	grads := [][]float64{{0.5, -1, 2, 0.25, -0.75, 1.5}, {-0.2, 0.4, 1, -2, 0.1, 0.3}, {1, 1, -1, 0.5, 0, -0.5}}
	for _, tc := range []struct {
		name    string
		args    []*netdef.Argument
		decay   float64
		mom     float64
		eps     float64
		inPlace bool
	}{
		{"defaults", nil, 0.9, 0, 1e-5, true},
		{"momentum", []*netdef.Argument{netdef.ArgFloat("decay", 0.8), netdef.ArgFloat("momentum", 0.5), netdef.ArgFloat("epsilon", 0.1)}, 0.8, 0.5, 0.1, true},
		{"out of place", []*netdef.Argument{netdef.ArgFloat("momentum", 0.9)}, 0.9, 0.9, 1e-5, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			decay, mu, eps := float64(float32(tc.decay)), float64(float32(tc.mom)), float64(float32(tc.eps))
			lr := float64(float32(0.05))
			w := optest.NewWorkspace()
			ms, mom := make([]float64, 6), make([]float64, 6)
			w.Feed("ms", optest.F32(ms, 2, 3))
			w.Feed("mom", optest.F32(mom, 2, 3))
			w.Feed("lr", optest.F32([]float64{lr}))
			w.Feed("g", optest.F32(grads[0], 2, 3))
			outs := []string{"g", "ms", "mom"}
			if !tc.inPlace {
				outs = []string{"g_out", "ms_out", "mom_out"}
			}
			op := create(t, w, netdef.NewOperator("RmsProp", []string{"g", "ms", "mom", "lr"}, outs, tc.args...))
			for _, g := range grads {
				w.Feed("g", optest.F32(g, 2, 3))
				run(t, op)
				g = widen(g)
				for i := range g {
					ms[i] += (1 - decay) * (g[i]*g[i] - ms[i])
					mom[i] = mu*mom[i] + lr*g[i]/math.Sqrt(eps+ms[i])
				}
				optest.CheckClose(t, "output grad", values(t, w, outs[0]), mom, 1e-5)
				optest.CheckClose(t, "mean squares", values(t, w, outs[1]), ms, 1e-5)
				optest.CheckClose(t, "momentum", values(t, w, outs[2]), mom, 1e-5)
				if !tc.inPlace { // the next step starts from the outputs
					w.Feed("ms", optest.F32(ms, 2, 3))
					w.Feed("mom", optest.F32(mom, 2, 3))
				}
			}
			if x := w.Tensor(outs[0]); len(x.Dims()) != 2 || x.Dim(0) != 2 || x.Dim(1) != 3 {
				t.Errorf("output grad has shape %v, want [2 3]", x.Dims())
			}
		})
	}
}

// TestRmsPropHandValues checks one step against values worked out by hand:
// g = 2, ms = 0, mom = 0, decay 0.75, lr 0.5, ε 0: ms₁ = 0.25·4 = 1,
// mom₁ = 0.5·2/1 = 1; then g = 0: ms₂ = 0.75, mom₂ = momentum·1 = 0.5.
func TestRmsPropHandValues(t *testing.T) {
	def := netdef.NewOperator("RmsProp", []string{"g", "ms", "mom", "lr"}, []string{"g", "ms", "mom"},
		netdef.ArgFloat("decay", 0.75), netdef.ArgFloat("momentum", 0.5), netdef.ArgFloat("epsilon", 0))
	out := optest.MustRunOp(t, def, blob.MustFromSlice([]float32{2}), blob.MustFromSlice([]float32{0}),
		blob.MustFromSlice([]float32{0}), blob.MustFromSlice([]float32{0.5}))
	optest.CheckClose(t, "step 1", []float64{out[0].AsFloat64s()[0], out[1].AsFloat64s()[0], out[2].AsFloat64s()[0]}, []float64{1, 1, 1}, 0)
	out = optest.MustRunOp(t, def, blob.MustFromSlice([]float32{0}), out[1], out[2], blob.MustFromSlice([]float32{0.5}))
	optest.CheckClose(t, "step 2", []float64{out[0].AsFloat64s()[0], out[1].AsFloat64s()[0], out[2].AsFloat64s()[0]}, []float64{0.5, 0.75, 0.5}, 0)
}

func TestRmsPropFloat64AndErrors(t *testing.T) {
	def := netdef.NewOperator("RmsProp", []string{"g", "ms", "mom", "lr"}, []string{"g", "ms", "mom"}, netdef.ArgFloat("momentum", 0.25))
	out := optest.MustRunOp(t, def, blob.MustFromSlice([]float64{3, -4}), blob.MustFromSlice([]float64{1, 2}),
		blob.MustFromSlice([]float64{0.5, -0.5}), blob.MustFromSlice([]float64{0.1}))
	eps, a := float64(float32(1e-5)), 1-float64(float32(0.9)) // the arguments are float32
	ms := []float64{1 + a*(9-1), 2 + a*(16-2)}
	mom := []float64{0.25*0.5 + 0.1*3/math.Sqrt(eps+ms[0]), -0.25*0.5 - 0.1*4/math.Sqrt(eps+ms[1])}
	optest.CheckClose(t, "float64 mean squares", out[1].AsFloat64s(), ms, 1e-7)
	optest.CheckClose(t, "float64 momentum", out[2].AsFloat64s(), mom, 1e-7)

	v2 := blob.MustFromSlice([]float32{1, 2})
	v3 := blob.MustFromSlice([]float32{1, 2, 3})
	lr := blob.MustFromSlice([]float32{0.1})
	for _, tc := range []struct {
		name   string
		inputs []*blob.Tensor
		want   string
	}{
		{"mean squares size", []*blob.Tensor{v2, v3, v2, lr}, `"ms"`},
		{"momentum size", []*blob.Tensor{v2, v2, v3, lr}, `"mom"`},
		{"lr size", []*blob.Tensor{v2, v2, v2, v2}, `"lr"`},
		{"mixed types", []*blob.Tensor{v2, blob.MustFromSlice([]float64{1, 2}), v2, lr}, `"ms"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := optest.RunOp(def, tc.inputs...); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming %s", err, tc.want)
			}
		})
	}
}
