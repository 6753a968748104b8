package optim

import (
	"math"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// triangle is the triangular wave of period 2s: 0 at multiples of 2s, 1 at
// odd multiples of s.
func triangle(it, s float64) float64 {
	p := math.Mod(it, 2*s)
	if p <= s {
		return p / s
	}
	return (2*s - p) / s
}

// cosineRestart is the cosine schedule with restarts, written as a walk
// over the periods.
func cosineRestart(it, lo, hi, period, tMult, shrink float64) float64 {
	start, length, k := 0.0, period, 0.0
	for it >= start+length {
		start += length
		length *= tMult
		k++
	}
	s := math.Pow(shrink, k)
	return lo*s + 0.5*(hi-lo)*s*(1+math.Cos(math.Pi*(it-start)/length))
}

func TestLearningRatePolicies(t *testing.T) {
	f := netdef.ArgFloat
	i := netdef.ArgInt
	iters := []int64{0, 1, 2, 3, 4, 5, 7, 9, 10, 13, 20, 31, 50, 77}
	for _, tc := range []struct {
		name string
		base float64
		args []*netdef.Argument
		want func(it float64) float64 // the learning rate, base included
	}{
		{"fixed", -0.1, nil, func(float64) float64 { return -0.1 }},
		{"fixed lr_scale", 0.1, []*netdef.Argument{f("lr_scale", 2.5)}, func(float64) float64 { return 0.25 }},
		{"step", 0.1, []*netdef.Argument{i("stepsize", 10), f("gamma", 0.5)},
			func(it float64) float64 { return 0.1 * math.Pow(0.5, math.Floor(it/10)) }},
		{"step lr_scale", 0.1, []*netdef.Argument{i("stepsize", 4), f("gamma", 0.9), f("lr_scale", 0.5)},
			func(it float64) float64 { return 0.05 * math.Pow(0.9, math.Floor(it/4)) }},
		{"exp", 0.2, []*netdef.Argument{f("gamma", 0.95)},
			func(it float64) float64 { return 0.2 * math.Pow(0.95, it) }},
		{"gate", 1, []*netdef.Argument{f("multiplier_1", 0.3), f("multiplier_2", 2), i("num_iter", 5)},
			func(it float64) float64 { return map[bool]float64{true: 0.3, false: 2}[it < 5] }},
		{"inv", 0.5, []*netdef.Argument{f("gamma", 0.1), f("power", 0.75)},
			func(it float64) float64 { return 0.5 / math.Pow(1+0.1*it, 0.75) }},
		{"poly", 0.3, []*netdef.Argument{f("power", 2), i("max_iter", 100)},
			func(it float64) float64 { return 0.3 * (1 - it/100) * (1 - it/100) }},
		{"linearWarmup", 1, []*netdef.Argument{f("start_multiplier", 0.2), i("num_iter", 10)},
			func(it float64) float64 { return math.Min(1, 0.2+0.8*it/10) }},
		{"constantWarmup", 1, []*netdef.Argument{f("multiplier", 0.3), i("num_iter", 4)},
			func(it float64) float64 { return map[bool]float64{true: 0.3, false: 1}[it < 4] }},
		{"pieceWarmup", 2, []*netdef.Argument{f("m1", 0.1), i("n1", 3), f("m2", 0.5), i("n2", 7), f("m3", 1)},
			func(it float64) float64 {
				switch {
				case it < 3:
					return 0.2
				case it < 7:
					return 1
				}
				return 2
			}},
		{"alter", 1, []*netdef.Argument{i("active_period", 3), i("inactive_period", 2)},
			func(it float64) float64 { return map[bool]float64{true: 1, false: 0}[math.Mod(it, 5) < 3] }},
		{"alter", 1, []*netdef.Argument{i("active_period", 3), i("inactive_period", 2), i("active_first", 0)},
			func(it float64) float64 { return map[bool]float64{true: 0, false: 1}[math.Mod(it, 5) < 2] }},
		{"hill", 1, []*netdef.Argument{i("num_iter", 5), f("start_multiplier", 0.25), f("gamma", 0.5), f("power", 1), f("end_multiplier", 0.2)},
			func(it float64) float64 {
				if it < 5 {
					return 0.25 + 0.75*it/5
				}
				return math.Max(0.2, 1/(1+0.5*(it-5)))
			}},
		{"composite", 0.1, []*netdef.Argument{
			netdef.ArgInts("sub_policy_num_iters", 3, 4, 100),
			netdef.ArgString("sub_policy_0_policy", "fixed"), f("sub_policy_0_lr_scale", 2),
			netdef.ArgString("sub_policy_1_policy", "step"), i("sub_policy_1_stepsize", 2), f("sub_policy_1_gamma", 0.5),
			netdef.ArgString("sub_policy_2_policy", "exp"), f("sub_policy_2_gamma", 0.9), f("sub_policy_2_lr_scale", 3),
			f("lr_scale", 7), // ignored by composite
		}, func(it float64) float64 {
			switch {
			case it < 4: // the first sub-policy covers iterations 1..3 (and 0)
				return 0.2
			case it < 8:
				return 0.1 * math.Pow(0.5, math.Floor(it/2))
			}
			return 0.3 * math.Pow(0.9, it)
		}},
		{"cyclical", 0.01, []*netdef.Argument{f("max_lr", 0.05), i("stepsize", 4), f("decay", 0.9)},
			func(it float64) float64 {
				return 0.01 * (1 + (0.05/0.01-1)*triangle(it, 4)*math.Pow(0.9, math.Floor(it/8)))
			}},
		{"cosine", 2, []*netdef.Argument{f("min_lr", 0.1), f("max_lr", 0.5), i("period", 10), f("lr_shrink", 0.9)},
			func(it float64) float64 { return 2 * cosineRestart(it, 0.1, 0.5, 10, 1, 0.9) }},
		{"cosine", 1, []*netdef.Argument{f("min_lr", 0.2), f("max_lr", 1), i("period", 5), f("t_mult", 2), f("lr_shrink", 0.5)},
			func(it float64) float64 { return cosineRestart(it, 0.2, 1, 5, 2, 0.5) }},
		{"constantThenLinearWarmup", 1, []*netdef.Argument{f("start_warmup_multiplier", 0.1), i("constant_warmup_num_iter", 3), i("linear_warmup_num_iter", 4)},
			func(it float64) float64 {
				switch {
				case it < 3:
					return 0.1
				case it < 7:
					return 0.1 + 0.9*(it-3)/4
				}
				return 1
			}},
		{"compositeCyclical", 0.01, []*netdef.Argument{f("start_warmup_multiplier", 0.5), i("constant_warmup_num_iter", 2), i("linear_warmup_num_iter", 2),
			f("cyclical_max_lr", 0.03), i("cyclical_step_size", 3), f("cyclical_decay", 0.8)},
			func(it float64) float64 {
				switch {
				case it < 2:
					return 0.005
				case it < 4:
					return 0.01 * (0.5 + 0.5*(it-2)/2)
				}
				return 0.01 * (1 + 2*triangle(it-4, 3)*math.Pow(0.8, math.Floor((it-4)/6)))
			}},
		{"compositeCosine", 1, []*netdef.Argument{f("start_warmup_multiplier", 0.2), i("constant_warmup_num_iter", 1), i("linear_warmup_num_iter", 4),
			f("cosine_min_lr", 0.1), f("cosine_max_lr", 0.6), i("cosine_period", 8), f("cosine_lr_shrink", 0.5)},
			func(it float64) float64 {
				switch {
				case it < 1:
					return 0.2
				case it < 5:
					return 0.2 + 0.8*(it-1)/4
				}
				return cosineRestart(it-5, 0.1, 0.6, 8, 1, 0.5)
			}},
		{"multistep", 0.1, []*netdef.Argument{netdef.ArgInts("stepvalue", 3, 7, 8), f("gamma", 0.1)},
			func(it float64) float64 {
				n := 0.0
				for _, s := range []float64{3, 7, 8} {
					if it >= s {
						n++
					}
				}
				return 0.1 * math.Pow(0.1, n)
			}},
		{"multistep", 1, []*netdef.Argument{netdef.ArgInts("stepvalues", 10, 20), f("gamma", 0.5)},
			func(it float64) float64 { return math.Pow(0.5, math.Floor(math.Min(it, 20)/10)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]*netdef.Argument{
				netdef.ArgFloat("base_lr", float32(tc.base)), netdef.ArgString("policy", strings.Fields(tc.name)[0]),
			}, tc.args...)
			w := optest.NewWorkspace()
			w.Feed("it", blob.MustFromSlice([]int64{0}))
			op := create(t, w, netdef.NewOperator("LearningRate", []string{"it"}, []string{"lr"}, args...))
			for _, it := range iters {
				blob.Data[int64](w.Tensor("it"))[0] = it
				run(t, op)
				lr := w.Tensor("lr")
				if lr.DataType() != blob.Float32 || lr.NumDims() != 0 {
					t.Fatalf("lr is %v, want a FLOAT 0-d tensor", lr)
				}
				got, want := float64(blob.Data[float32](lr)[0]), tc.want(float64(it))
				if math.Abs(got-want) > 2e-6*math.Max(1, math.Abs(want)) {
					t.Errorf("iter %d: lr = %.8g, want %.8g", it, got, want)
				}
			}
		})
	}
}

func TestLearningRateArgumentErrors(t *testing.T) {
	base := netdef.ArgFloat("base_lr", 0.1)
	pol := func(p string) *netdef.Argument { return netdef.ArgString("policy", p) }
	f := netdef.ArgFloat
	i := netdef.ArgInt
	for _, tc := range []struct {
		name string
		args []*netdef.Argument
		want string // part of the error
	}{
		{"no base_lr", []*netdef.Argument{pol("fixed")}, "base_lr"},
		{"no policy", []*netdef.Argument{base}, "policy"},
		{"unknown policy", []*netdef.Argument{base, pol("sometimes")}, "sometimes"},
		{"step stepsize", []*netdef.Argument{base, pol("step"), f("gamma", 0.5)}, `"stepsize"`},
		{"step gamma", []*netdef.Argument{base, pol("step"), i("stepsize", 3)}, `"gamma"`},
		{"exp gamma", []*netdef.Argument{base, pol("exp"), f("gamma", -1)}, `"gamma"`},
		{"inv power", []*netdef.Argument{base, pol("inv"), f("gamma", 0.1)}, `"power"`},
		{"poly max_iter", []*netdef.Argument{base, pol("poly"), f("power", 1)}, `"max_iter"`},
		{"linearWarmup start", []*netdef.Argument{base, pol("linearWarmup"), f("start_multiplier", -0.5)}, `"start_multiplier"`},
		{"constantWarmup multiplier", []*netdef.Argument{base, pol("constantWarmup"), f("multiplier", 0)}, `"multiplier"`},
		{"alter periods", []*netdef.Argument{base, pol("alter")}, `"active_period"`},
		{"alter both zero", []*netdef.Argument{base, pol("alter"), i("active_period", 0), i("inactive_period", 0)}, `"inactive_period"`},
		{"hill start", []*netdef.Argument{base, pol("hill"), i("num_iter", 3), f("start_multiplier", 2), f("gamma", 1), f("power", 1)}, `"start_multiplier"`},
		{"hill num_iter", []*netdef.Argument{base, pol("hill"), f("gamma", 1), f("power", 1)}, `"num_iter"`},
		{"composite empty", []*netdef.Argument{base, pol("composite")}, `"sub_policy_num_iters"`},
		{"composite zero iters", []*netdef.Argument{base, pol("composite"), netdef.ArgInts("sub_policy_num_iters", 0),
			netdef.ArgString("sub_policy_0_policy", "fixed")}, "positive"},
		{"composite nested", []*netdef.Argument{base, pol("composite"), netdef.ArgInts("sub_policy_num_iters", 5),
			netdef.ArgString("sub_policy_0_policy", "composite")}, "not allowed"},
		{"composite bad sub-policy arg", []*netdef.Argument{base, pol("composite"), netdef.ArgInts("sub_policy_num_iters", 5),
			netdef.ArgString("sub_policy_0_policy", "step"), f("sub_policy_0_gamma", 0.5)}, `"sub_policy_0_stepsize"`},
		{"composite unknown sub-policy", []*netdef.Argument{base, pol("composite"), netdef.ArgInts("sub_policy_num_iters", 5)}, `"sub_policy_0_policy"`},
		{"cyclical stepsize", []*netdef.Argument{base, pol("cyclical")}, `"stepsize"`},
		{"cyclical max_lr", []*netdef.Argument{base, pol("cyclical"), i("stepsize", 2), f("max_lr", 0.01)}, `"max_lr"`},
		{"cosine bounds", []*netdef.Argument{base, pol("cosine"), f("min_lr", 1), f("max_lr", 0.5)}, `"max_lr"`},
		{"cosine period", []*netdef.Argument{base, pol("cosine"), i("period", 0)}, `"period"`},
		{"cosine t_mult", []*netdef.Argument{base, pol("cosine"), f("t_mult", 0)}, `"t_mult"`},
		{"compositeCosine bounds", []*netdef.Argument{base, pol("compositeCosine"), f("cosine_min_lr", 0.9)}, `"cosine_max_lr"`},
		{"compositeCyclical step", []*netdef.Argument{base, pol("compositeCyclical"), i("cyclical_step_size", 0)}, `"cyclical_step_size"`},
		{"multistep values", []*netdef.Argument{base, pol("multistep"), f("gamma", 0.1)}, `"stepvalue`},
		{"multistep gamma", []*netdef.Argument{base, pol("multistep"), netdef.ArgInts("stepvalue", 5)}, `"gamma"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := optest.NewWorkspace()
			w.Feed("it", blob.MustFromSlice([]int64{0}))
			_, err := operators.Create(netdef.NewOperator("LearningRate", []string{"it"}, []string{"lr"}, tc.args...), w, -1)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "LearningRate") {
				t.Errorf("error %v, want one naming LearningRate and %s", err, tc.want)
			}
		})
	}
}

func TestLearningRateIterInput(t *testing.T) {
	def := netdef.NewOperator("LearningRate", []string{"it"}, []string{"lr"},
		netdef.ArgFloat("base_lr", 1), netdef.ArgString("policy", "fixed"))
	for _, in := range []*blob.Tensor{blob.MustFromSlice([]float32{3}), blob.MustFromSlice([]int64{})} {
		if _, err := optest.RunOp(def, in); err == nil || !strings.Contains(err.Error(), `"it"`) {
			t.Errorf("iteration input %v: error %v, want one naming \"it\"", in, err)
		}
	}
}
