package optim

import (
	"math"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestLearningRateHandValues checks every policy of the spec's table, plus
// the multistep and piecewise extensions, against values worked out by
// hand (the comments show the arithmetic).
func TestLearningRateHandValues(t *testing.T) {
	f, i := netdef.ArgFloat, netdef.ArgInt
	type point struct {
		iter int64
		lr   float64
	}
	for _, tc := range []struct {
		policy string
		base   float32
		args   []*netdef.Argument
		points []point
	}{
		{"fixed", -0.1, nil, []point{{0, -0.1}, {1, -0.1}, {123456, -0.1}}},
		// 0.1·0.5^⌊iter/10⌋
		{"step", 0.1, []*netdef.Argument{i("stepsize", 10), f("gamma", 0.5)},
			[]point{{0, 0.1}, {9, 0.1}, {10, 0.05}, {25, 0.025}, {30, 0.0125}}},
		// 0.5^iter
		{"exp", 1, []*netdef.Argument{f("gamma", 0.5)}, []point{{0, 1}, {1, 0.5}, {3, 0.125}, {10, 1.0 / 1024}}},
		// 2·(1 + iter)^−2
		{"inv", 2, []*netdef.Argument{f("gamma", 1), f("power", 2)}, []point{{0, 2}, {1, 0.5}, {3, 0.125}, {9, 0.02}}},
		// (1 − iter/10)^2
		{"poly", 1, []*netdef.Argument{f("power", 2), i("max_iter", 10)}, []point{{0, 1}, {5, 0.25}, {8, 0.04}, {10, 0}}},
		// 0.5 + 0.5·iter/4 up to 1
		{"linearWarmup", 1, []*netdef.Argument{f("start_multiplier", 0.5), i("num_iter", 4)},
			[]point{{0, 0.5}, {1, 0.625}, {2, 0.75}, {4, 1}, {100, 1}}},
		// 2·0.25 before iteration 3, then 2
		{"constantWarmup", 2, []*netdef.Argument{f("multiplier", 0.25), i("num_iter", 3)}, []point{{0, 0.5}, {2, 0.5}, {3, 2}, {50, 2}}},
		// active_first: 1 for 2 iterations, 0 for 3, period 5
		{"alter", 1, []*netdef.Argument{i("active_period", 2), i("inactive_period", 3)},
			[]point{{0, 1}, {1, 1}, {2, 0}, {4, 0}, {5, 1}, {7, 0}}},
		// not active_first: 0 for the 3 inactive iterations, then 1 for 2
		{"alter", 1, []*netdef.Argument{i("active_period", 2), i("inactive_period", 3), i("active_first", 0)},
			[]point{{0, 0}, {2, 0}, {3, 1}, {4, 1}, {5, 0}, {8, 1}}},
		// warmup 0.2 → 1 over 4 iterations, then max(0.3, (1 + (iter−4))^−1)
		{"hill", 1, []*netdef.Argument{i("num_iter", 4), f("start_multiplier", 0.2), f("gamma", 1), f("power", 1), f("end_multiplier", 0.3)},
			[]point{{0, 0.2}, {2, 0.6}, {4, 1}, {5, 0.5}, {6, 1.0 / 3}, {7, 0.3}, {100, 0.3}}},
		// sub-policy 0 (fixed ×2) for iterations ≤ 2, then step (0.5 every 2) from 3 on
		{"composite", 0.1, []*netdef.Argument{netdef.ArgInts("sub_policy_num_iters", 2, 10),
			netdef.ArgString("sub_policy_0_policy", "fixed"), f("sub_policy_0_lr_scale", 2),
			netdef.ArgString("sub_policy_1_policy", "step"), i("sub_policy_1_stepsize", 2), f("sub_policy_1_gamma", 0.5)},
			[]point{{1, 0.2}, {2, 0.2}, {3, 0.05}, {4, 0.025}, {100, 0.1 * math.Pow(0.5, 50)}}},
		// Caffe1's multistep: 0.1 at each of 5 and 8
		{"multistep", 1, []*netdef.Argument{netdef.ArgInts("stepvalue", 5, 8), f("gamma", 0.1)},
			[]point{{0, 1}, {4, 1}, {5, 0.1}, {7, 0.1}, {8, 0.01}, {1000, 0.01}}},
		// MATLAB's piecewise: runs 1…3 at 0.1, 4…6 at 0.05, 7…9 at 0.025
		{"piecewise", 0.1, []*netdef.Argument{f("drop_factor", 0.5), i("drop_period", 3)},
			[]point{{0, 0.1}, {1, 0.1}, {3, 0.1}, {4, 0.05}, {6, 0.05}, {7, 0.025}, {10, 0.0125}}},
		// piecewise defaults: drop_factor 0.1 every 10 iterations
		{"piecewise", 1, nil, []point{{1, 1}, {10, 1}, {11, 0.1}, {20, 0.1}, {21, 0.01}}},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			args := append([]*netdef.Argument{f("base_lr", tc.base), netdef.ArgString("policy", tc.policy)}, tc.args...)
			w := optest.NewWorkspace()
			w.Feed("it", blob.MustFromSlice([]int64{0}))
			op := create(t, w, netdef.NewOperator("LearningRate", []string{"it"}, []string{"lr"}, args...))
			for _, p := range tc.points {
				blob.Data[int64](w.Tensor("it"))[0] = p.iter
				run(t, op)
				got := float64(blob.Data[float32](w.Tensor("lr"))[0])
				if math.Abs(got-p.lr) > 1e-6*math.Max(1, math.Abs(p.lr)) {
					t.Errorf("iter %d: lr = %.8g, want %.8g", p.iter, got, p.lr)
				}
			}
		})
	}
}

func TestPiecewiseArgumentErrors(t *testing.T) {
	for _, tc := range []struct {
		arg  *netdef.Argument
		want string
	}{
		{netdef.ArgFloat("drop_factor", 1.5), `"drop_factor"`},
		{netdef.ArgFloat("drop_factor", -0.1), `"drop_factor"`},
		{netdef.ArgInt("drop_period", 0), `"drop_period"`},
	} {
		def := netdef.NewOperator("LearningRate", []string{"it"}, []string{"lr"},
			netdef.ArgFloat("base_lr", 0.1), netdef.ArgString("policy", "piecewise"), tc.arg)
		if _, err := optest.RunOp(def, blob.MustFromSlice([]int64{1})); err == nil || !containsAll(err.Error(), tc.want, "piecewise") {
			t.Errorf("%s: error %v, want one naming %s and the policy", tc.arg.GetName(), err, tc.want)
		}
	}
}

// containsAll reports whether s contains every one of parts.
func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
