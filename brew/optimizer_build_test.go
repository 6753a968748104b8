package brew_test

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/workspace"
)

// optSig is an operator reduced to what the naming tests compare.
type optSig struct {
	typ     string
	in, out string // inputs and outputs joined with spaces
}

func optSigs(net *netdef.Net) []optSig {
	var out []optSig
	for _, op := range net.Proto().GetOp() {
		out = append(out, optSig{op.GetType(), strings.Join(op.GetInput(), " "), strings.Join(op.GetOutput(), " ")})
	}
	return out
}

// optAfter returns the ops of net from index n on.
func optAfter(net *netdef.Net, n int) []optSig { return optSigs(net)[n:] }

func TestBuildSGDBlobNames(t *testing.T) {
	brew.ResetOptimizerInstanceCount()
	f := optDense(t)
	nInit, nTrain := len(f.m.InitNet.Proto().GetOp()), len(f.m.Net.Proto().GetOp())
	opt, err := brew.BuildSGD(f.m, brew.SGDOptions{BaseLR: 0.1})
	optNoErr(t, err)
	if opt.ClassName() != "SgdOptimizer" || opt.InstanceNum() != 0 {
		t.Errorf("optimizer %s #%d, want SgdOptimizer #0", opt.ClassName(), opt.InstanceNum())
	}
	wantInit := []optSig{
		{"ConstantFill", "", "optimizer_iteration"},
		{"CreateMutex", "", "iteration_mutex"},
		{"ConstantFill", "", "ONE_0_0"},
		{"ConstantFill", "", "ONE_0_0"}, // Caffe2 emits it once per parameter
	}
	if got := optAfter(f.m.InitNet, nInit); !slices.Equal(got, wantInit) {
		t.Errorf("init net ops %v, want %v", got, wantInit)
	}
	wantTrain := []optSig{
		{"AtomicIter", "iteration_mutex optimizer_iteration", "optimizer_iteration"},
		{"LearningRate", "optimizer_iteration", "SgdOptimizer_0_lr_cpu"},
		{"WeightedSum", "fc_w ONE_0_0 fc_w_grad SgdOptimizer_0_lr_cpu", "fc_w"},
		{"WeightedSum", "fc_b ONE_0_0 fc_b_grad SgdOptimizer_0_lr_cpu", "fc_b"},
	}
	if got := optAfter(f.m.Net, nTrain); !slices.Equal(got, wantTrain) {
		t.Errorf("train net ops %v, want %v", got, wantTrain)
	}
	iter := f.m.InitNet.Proto().GetOp()[nInit]
	if optArg(iter, "dtype").GetI() != int64(blob.Int64) || optArg(iter, "value").GetI() != 0 ||
		!slices.Equal(optArg(iter, "shape").GetInts(), []int64{1}) || iter.GetDeviceOption().Type() != netdef.CPU ||
		iter.GetDeviceOption() == nil {
		t.Errorf("iteration counter op %v, want a CPU INT64 [1] ConstantFill of 0", iter)
	}
	lr := optOps(f.m.Net, "LearningRate")[0]
	if optArg(lr, "base_lr").GetF() != -0.1 || string(optArg(lr, "policy").GetS()) != "fixed" {
		t.Errorf("LearningRate %v, want base_lr -0.1 and policy fixed", lr)
	}
	aux := opt.AuxiliaryParameters()
	if !slices.Equal(aux.Shared, []string{"ONE_0_0", "ONE_0_0"}) || len(aux.Local) != 0 {
		t.Errorf("auxiliary parameters %+v", aux)
	}
	aux.Shared[0] = "changed"
	if opt.AuxiliaryParameters().Shared[0] != "ONE_0_0" {
		t.Error("AuxiliaryParameters returned the optimizer's own slice")
	}

	// A second optimizer of the class is number 1; another class counts apart.
	g := optDense(t)
	opt2, err := brew.BuildSGD(g.m, brew.SGDOptions{BaseLR: 0.1})
	optNoErr(t, err)
	adam, err := brew.NewAdam(brew.AdamOptions{BaseLR: 0.1})
	optNoErr(t, err)
	if opt2.InstanceNum() != 1 || adam.InstanceNum() != 0 || brew.OptimizerInstanceCount("SgdOptimizer") != 2 {
		t.Errorf("instance numbers %d and %d, count %d; want 1, 0 and 2", opt2.InstanceNum(), adam.InstanceNum(), brew.OptimizerInstanceCount("SgdOptimizer"))
	}
	if lr := optOps(g.m.Net, "LearningRate"); len(lr) != 1 || lr[0].Output[0] != "SgdOptimizer_1_lr_cpu" {
		t.Errorf("second optimizer's LearningRate ops %v", lr)
	}
	if got := opt2.CPUBlobName("lr", "node"); got != "SgdOptimizer_1_lrnode_cpu" {
		t.Errorf("CPUBlobName = %q", got)
	}
	if got := opt2.GPUBlobName("lr", 3, ""); got != "SgdOptimizer_1_lr_gpu3" {
		t.Errorf("GPUBlobName = %q", got)
	}
}

func TestBuildSGDMomentum(t *testing.T) {
	brew.ResetOptimizerInstanceCount()
	for _, noNesterov := range []bool{false, true} {
		f := optDense(t)
		nInit := len(f.m.InitNet.Proto().GetOp())
		opt, err := brew.BuildSGD(f.m, brew.SGDOptions{BaseLR: 0.1, Momentum: 0.9, NoNesterov: noNesterov,
			Policy: "step", LRArgs: []*netdef.Argument{netdef.ArgInt("stepsize", 10), netdef.ArgFloat("gamma", 0.5)}})
		optNoErr(t, err)
		lr := optOps(f.m.Net, "LearningRate")[0]
		if optArg(lr, "base_lr").GetF() != 0.1 || string(optArg(lr, "policy").GetS()) != "step" ||
			optArg(lr, "stepsize").GetI() != 10 || optArg(lr, "gamma").GetF() != 0.5 {
			t.Errorf("LearningRate %v, want base_lr +0.1 with the step arguments", lr)
		}
		upd := optOps(f.m.Net, "MomentumSGDUpdate")
		if len(upd) != 2 || strings.Join(upd[0].Input, " ") != "fc_w_grad fc_w_momentum "+lr.Output[0]+" fc_w" ||
			strings.Join(upd[0].Output, " ") != "fc_w_grad fc_w_momentum fc_w" {
			t.Fatalf("MomentumSGDUpdate ops %v", upd)
		}
		wantNesterov := int64(1)
		if noNesterov {
			wantNesterov = 0
		}
		if optArg(upd[0], "momentum").GetF() != 0.9 || optArg(upd[0], "nesterov").GetI() != wantNesterov {
			t.Errorf("MomentumSGDUpdate arguments %v, want momentum 0.9 and nesterov %d", upd[0].Arg, wantNesterov)
		}
		mom := optAfter(f.m.InitNet, nInit)
		if !slices.Contains(mom, optSig{"ConstantFill", "fc_w", "fc_w_momentum"}) {
			t.Errorf("init ops %v lack fc_w_momentum, zeros shaped like fc_w", mom)
		}
		if aux := opt.AuxiliaryParameters(); !slices.Equal(aux.Local, []string{"fc_w_momentum", "fc_b_momentum"}) {
			t.Errorf("local auxiliary parameters %v", aux.Local)
		}
	}
}

func TestOptimizerNothingAndErrors(t *testing.T) {
	f := optDense(t)
	nInit, nTrain := len(f.m.InitNet.Proto().GetOp()), len(f.m.Net.Proto().GetOp())
	for name, build := range map[string]func() error{
		"sgd lr 0":     func() error { _, err := brew.BuildSGD(f.m, brew.SGDOptions{}); return err },
		"adam lr 0":    func() error { _, err := brew.BuildAdam(f.m, brew.AdamOptions{}); return err },
		"adagrad lr 0": func() error { _, err := brew.BuildAdagrad(f.m, brew.AdagradOptions{BaseLR: -1}); return err },
	} {
		optNoErr(t, build())
		if len(f.m.InitNet.Proto().GetOp()) != nInit || len(f.m.Net.Proto().GetOp()) != nTrain {
			t.Errorf("%s added operators", name)
		}
	}
	noGrad := brew.NewModel("nograd")
	noGrad.CreateParam("w", []int64{2}, brew.Init("ConstantFill"))
	optNoErr(t, noGrad.Err())
	sparse := optSparseModel(t)
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{"negative lr", func() error { _, err := brew.BuildSGD(f.m, brew.SGDOptions{BaseLR: -0.1}); return err }, "-0.1"},
		{"negative momentum", func() error { _, err := brew.NewSGD(brew.SGDOptions{BaseLR: 1, Momentum: -1}); return err }, "momentum"},
		{"negative lars", func() error {
			_, err := brew.NewSGD(brew.SGDOptions{BaseLR: 1, Lars: true, LarsOffset: -1})
			return err
		}, "LARS"},
		{"rmsprop lr 0", func() error { _, err := brew.BuildRMSProp(f.m, brew.RMSPropOptions{}); return err }, "RmsPropOptimizer"},
		{"adam beta", func() error { _, err := brew.NewAdam(brew.AdamOptions{BaseLR: 1, Beta1: 1}); return err }, "beta1"},
		{"adagrad epsilon", func() error { _, err := brew.NewAdagrad(brew.AdagradOptions{Epsilon: -1}); return err }, "epsilon"},
		{"before gradients", func() error { _, err := brew.BuildSGD(noGrad, brew.SGDOptions{BaseLR: 1}); return err }, "AddGradientOperators"},
		{"weight decay before gradients", func() error { return brew.AddWeightDecay(noGrad, 0.1) }, "nograd"},
		{"negative clip", func() error {
			_, err := brew.BuildSGD(f.m, brew.SGDOptions{BaseLR: 1, BuildOptions: brew.BuildOptions{MaxGradientNorm: -1}})
			return err
		}, "MaxGradientNorm"},
		{"nil optimizer", func() error { return brew.Build(f.m, nil, brew.BuildOptions{}) }, "nil optimizer"},
		{"nil model", func() error { _, err := brew.BuildSGD(nil, brew.SGDOptions{BaseLR: 1}); return err }, "nil model"},
		{"zero optimizer", func() error { return brew.Build(f.m, &brew.Optimizer{}, brew.BuildOptions{}) }, "NewSGD"},
		{"zero optimizer apply", func() error { return new(brew.Optimizer).Apply(f.m, "fc_w", operators.Gradient{}) }, "NewSGD"},
		{"nil model apply", func() error { return new(brew.Optimizer).Apply(nil, "fc_w", operators.Gradient{}) }, "nil model"},
		{"rmsprop slice", func() error { _, err := brew.BuildRMSProp(sparse, brew.RMSPropOptions{BaseLR: 1}); return err }, `"w"`},
		{"adagrad slice decay", func() error {
			_, err := brew.BuildAdagrad(sparse, brew.AdagradOptions{BaseLR: 1, Decay: 0.5})
			return err
		}, "decay"},
		{"weight decay slice", func() error { return brew.AddWeightDecay(sparse, 0.1) }, "sparse"},
		{"unknown param device", func() error { _, err := brew.ParamDevice(f.m, "nothing"); return err }, "cannot infer device for nothing"},
		{"apply without gradient", func() error {
			opt, err := brew.NewSGD(brew.SGDOptions{BaseLR: 1})
			optNoErr(t, err)
			return opt.Apply(noGrad, "w", operators.Gradient{})
		}, `"w"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.err(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %s", err, tc.want)
			}
		})
	}
}

// optSparseModel is a model whose parameter w has a gradient slice, with
// w tagged Weight so that weight decay sees it.
func optSparseModel(t testing.TB) *brew.Model {
	t.Helper()
	m := brew.NewModel("sparse")
	m.CreateParam("w", []int64{5}, brew.Init("ConstantFill"), brew.Weight)
	optNoErr(t, m.Err())
	m.Net.Op("Gather", []string{"w", "indices"}, []string{"gather"})
	m.Net.Op("ReduceFrontSum", []string{"gather"}, []string{"sum"})
	m.Net.Op("SquaredL2Distance", []string{"sum", "label"}, []string{"sq"})
	m.Net.Op("AveragedLoss", []string{"sq"}, []string{"loss"})
	_, err := m.AddGradientOperators("loss")
	optNoErr(t, err)
	return m
}

// TestOptimizerDevices checks that updates follow the device of the
// parameter's producer: a logical CPU device, a GPU and a node name.
func TestOptimizerDevices(t *testing.T) {
	build := func(dev *netdef.DeviceOption, o brew.SGDOptions) *brew.Model {
		brew.ResetOptimizerInstanceCount()
		m := brew.NewModel("dev")
		devicescope.DeviceScope(dev, func() {
			w := m.CreateParam("w", []int64{1, 3}, brew.Init("ConstantFill"), brew.Weight)
			b := m.CreateParam("b", []int64{1}, brew.Init("ConstantFill"), brew.Bias)
			optNoErr(t, m.Err())
			cur := devicescope.Current()
			cur.Op(m.Net, "FC", []string{"x", w, b}, []string{"y"})
			cur.Op(m.Net, "AveragedLoss", []string{"y"}, []string{"loss"})
		})
		_, err := m.AddGradientOperators("loss")
		optNoErr(t, err)
		_, err = brew.BuildSGD(m, o)
		optNoErr(t, err)
		return m
	}

	m := build(devicescope.CPUDevice(2), brew.SGDOptions{BaseLR: 0.1})
	for _, op := range optOps(m.Net, "WeightedSum") {
		if op.Input[1] != "ONE_0_2" || op.Input[3] != "SgdOptimizer_0_lr_cpu" || op.GetDeviceOption().GetDeviceId() != 2 {
			t.Errorf("update on cpu_2: %v", op)
		}
	}
	if op := optOps(m.Net, "AtomicIter")[0]; op.GetDeviceOption().GetDeviceId() != 0 || op.GetDeviceOption().Type() != netdef.CPU {
		t.Errorf("AtomicIter device %v, want CPU 0", op.GetDeviceOption())
	}

	m = build(devicescope.CUDA(1), brew.SGDOptions{BaseLR: 0.1, BuildOptions: brew.BuildOptions{AllowLRInjection: true}})
	wantGPU := []optSig{
		{"LearningRate", "optimizer_iteration", "SgdOptimizer_0_lr_gpu1"},
		{"CopyFromCPUInput", "lr_injection", "SgdOptimizer_0_lr_multiplier_gpu1"},
		{"Mul", "SgdOptimizer_0_lr_gpu1 SgdOptimizer_0_lr_multiplier_gpu1", "SgdOptimizer_0_scaled_lr_gpu1"},
		{"WeightedSum", "w ONE_1_1 w_grad SgdOptimizer_0_scaled_lr_gpu1", "w"},
		{"WeightedSum", "b ONE_1_1 b_grad SgdOptimizer_0_scaled_lr_gpu1", "b"},
	}
	got := optSigs(m.Net)
	if got = got[len(got)-len(wantGPU):]; !slices.Equal(got, wantGPU) {
		t.Errorf("GPU update ops %v, want %v", got, wantGPU)
	}
	for _, op := range m.Net.Proto().GetOp()[len(m.Net.Proto().GetOp())-len(wantGPU):] {
		if d := op.GetDeviceOption(); d.Type() != netdef.CUDA || d.GetDeviceId() != 1 {
			t.Errorf("%s on %v, want CUDA 1", op.GetType(), d)
		}
	}

	node := devicescope.CPU()
	node.NodeName = new(string)
	*node.NodeName = "n1"
	m = build(node, brew.SGDOptions{BaseLR: 0.1})
	if op := optOps(m.Net, "WeightedSum")[0]; op.Input[1] != "ONE_0_0n1" || op.Input[3] != "SgdOptimizer_0_lrn1_cpu" {
		t.Errorf("update with node name n1: %v", op)
	}
}

// TestOptimizerNameScope checks that names Caffe2 passes as strings are
// resolved in the current name scope, and the counter is found again.
func TestOptimizerNameScope(t *testing.T) {
	brew.ResetOptimizerInstanceCount()
	f := optDense(t)
	devicescope.NameScope("opt", func() {
		_, err := brew.BuildSGD(f.m, brew.SGDOptions{BaseLR: 0.1, Momentum: 0.5})
		optNoErr(t, err)
	})
	upd := optOps(f.m.Net, "MomentumSGDUpdate")
	if len(upd) != 2 || upd[0].Input[1] != "opt/fc_w_momentum" || upd[0].Input[2] != "opt/SgdOptimizer_0_lr_cpu" {
		t.Errorf("updates in name scope opt: %v", upd)
	}
	if n := len(optOps(f.m.Net, "AtomicIter")); n != 1 {
		t.Errorf("%d AtomicIter ops, want 1", n)
	}
	if op := optOps(f.m.Net, "AtomicIter")[0]; op.Output[0] != "opt/optimizer_iteration" {
		t.Errorf("AtomicIter %v", op)
	}
}

func TestClippingOps(t *testing.T) {
	f := optDense(t)
	nInit, nTrain := len(f.m.InitNet.Proto().GetOp()), len(f.m.Net.Proto().GetOp())
	_, err := brew.BuildSGD(f.m, brew.SGDOptions{BaseLR: 0.1, BuildOptions: brew.BuildOptions{MaxGradientNorm: 2}})
	optNoErr(t, err)
	s := brew.ClipScope + "/"
	ensure := s + f.m.Net.Name() + "/EnsureCPUOutput"
	want := []optSig{
		{"SumSqrElements", "fc_w_grad", s + "grad_0_squared_sum"},
		{"EnsureCPUOutput", s + "grad_0_squared_sum", ensure},
		{"SumSqrElements", "fc_b_grad", s + "grad_1_squared_sum"},
		{"EnsureCPUOutput", s + "grad_1_squared_sum", ensure + "_2"},
		{"Sum", ensure + " " + ensure + "_2", s + "grad_squared_full_sum"},
		{"Pow", s + "grad_squared_full_sum", s + "global_norm"},
		{"Max", s + "global_norm " + s + "clip_norm", s + "max_norm"},
		{"Div", s + "clip_norm " + s + "max_norm", s + "norm_ratio"},
	}
	if got := optAfter(f.m.Net, nTrain)[:len(want)]; !slices.Equal(got, want) {
		t.Errorf("clipping ops %v, want %v", got, want)
	}
	clip := f.m.InitNet.Proto().GetOp()[nInit]
	if clip.Output[0] != s+"clip_norm" || optArg(clip, "value").GetF() != 2 || optArg(clip, "shape") == nil || len(optArg(clip, "shape").GetInts()) != 0 {
		t.Errorf("clip_norm op %v, want a 0-d ConstantFill of 2", clip)
	}
	mul := optOps(f.m.Net, "Mul")
	if len(mul) != 1 || strings.Join(mul[0].Input, " ") != "SgdOptimizer_"+optNum(t, f.m)+"_lr_cpu "+s+"norm_ratio" {
		t.Errorf("Mul ops %v, want the learning rate times the norm ratio", mul)
	}
	ws := f.start(t)
	f.train(t, ws, 1)
	if got := optFetch(t, ws, s+"clip_norm"); len(got) != 1 || got[0] != 2 {
		t.Errorf("clip_norm = %v", got)
	}
}

// optNum returns the instance number in the name of the model's one
// LearningRate blob.
func optNum(t testing.TB, m *brew.Model) string {
	lr := optOps(m.Net, "LearningRate")
	if len(lr) != 1 {
		t.Fatalf("LearningRate ops %v", lr)
	}
	return strings.Split(lr[0].Output[0], "_")[1]
}

// TestIterationCounting checks that AtomicIter precedes LearningRate, so
// that run k sees iteration k, and that the counter counts every run.
func TestIterationCounting(t *testing.T) {
	brew.ResetOptimizerInstanceCount()
	f := optDense(t)
	_, err := brew.BuildSGD(f.m, brew.SGDOptions{BaseLR: 1, Policy: "step",
		LRArgs: []*netdef.Argument{netdef.ArgInt("stepsize", 1), netdef.ArgFloat("gamma", 0.5)}, IterVal: 0})
	optNoErr(t, err)
	ws := f.start(t)
	for k := 1; k <= 4; k++ {
		f.train(t, ws, 1)
		optClose(t, "optimizer_iteration", optFetch(t, ws, brew.OptimizerIterationBlob), []float64{float64(k)}, 0)
		optClose(t, "lr", optFetch(t, ws, "SgdOptimizer_0_lr_cpu"), []float64{-math.Pow(0.5, float64(k))}, 0)
	}
	f.train(t, ws, 96)
	optClose(t, "optimizer_iteration", optFetch(t, ws, brew.OptimizerIterationBlob), []float64{100}, 0)

	g := optDense(t)
	_, err = brew.BuildAdam(g.m, brew.AdamOptions{BaseLR: 0.1, IterVal: 41})
	optNoErr(t, err)
	ws = g.start(t)
	g.train(t, ws, 1)
	optClose(t, "optimizer_iteration from IterVal 41", optFetch(t, ws, brew.OptimizerIterationBlob), []float64{42}, 0)
}

// optStepper runs an optimizer applied to the parameter w (given initial
// values) with a fed gradient, one step per call.
type optStepper struct {
	t  *testing.T
	ws *workspace.Workspace
	m  *brew.Model
}

func newOptStepper(t *testing.T, w []float32, opt *brew.Optimizer) *optStepper {
	m := brew.NewModel("step")
	m.CreateParam("w", []int64{int64(len(w))}, brew.Init("GivenTensorFill", netdef.ArgFloats("values", w...)))
	optNoErr(t, m.Err())
	optNoErr(t, opt.Apply(m, "w", operators.Dense("w_grad")))
	ws := workspace.New(t.TempDir())
	optFeed(t, ws, "w_grad", blob.MustFromSlice(make([]float32, len(w))))
	optNoErr(t, ws.RunNetOnce(m.InitNet))
	optNoErr(t, ws.CreateNet(m.Net, false))
	return &optStepper{t: t, ws: ws, m: m}
}

// step feeds g as the gradient, runs the net once and returns w.
func (s *optStepper) step(g []float64) []float64 {
	x := make([]float32, len(g))
	for i, v := range g {
		x[i] = float32(v)
	}
	optFeed(s.t, s.ws, "w_grad", blob.MustFromSlice(x))
	optNoErr(s.t, s.ws.RunNet(s.m.Net.Name(), 1))
	return optFetch(s.t, s.ws, "w")
}

// optFormula is an optimizer and a float64 reference of its update: next
// advances the reference by one step with gradient g at run k (1-based)
// and returns w.
type optFormula struct {
	name string
	opt  func() (*brew.Optimizer, error)
	next func(w, g []float64, k int) []float64
}

// TestUpdateFormulas runs each optimizer's update on fixed inputs and
// checks it against the spec's §5.3 formulas, computed in float64.
func TestUpdateFormulas(t *testing.T) {
	w0 := []float32{1, -2, 0.5}
	grads := [][]float64{{0.5, -1, 2}, {-0.25, 0.75, 1}, {1, 1, -0.5}}
	for _, tc := range []optFormula{
		{"sgd", func() (*brew.Optimizer, error) { return brew.NewSGD(brew.SGDOptions{BaseLR: 0.1}) },
			func(w, g []float64, _ int) []float64 {
				for i := range w {
					w[i] += float64(float32(-0.1)) * g[i] // WeightedSum with lr = −0.1
				}
				return w
			}},
		optMomentumRef("momentum nesterov", false),
		optMomentumRef("momentum plain", true),
		{"adam", func() (*brew.Optimizer, error) {
			return brew.NewAdam(brew.AdamOptions{BaseLR: 0.1, Beta1: 0.8, Beta2: 0.9, Epsilon: 1e-3})
		}, optAdamRef()},
		{"adagrad", func() (*brew.Optimizer, error) {
			return brew.NewAdagrad(brew.AdagradOptions{BaseLR: 0.5, Epsilon: 1e-3, Decay: 0.9})
		}, optAdagradRef()},
		{"rmsprop", func() (*brew.Optimizer, error) {
			return brew.NewRMSProp(brew.RMSPropOptions{BaseLR: 0.1, Decay: 0.8, Momentum: 0.5, Epsilon: 0.01})
		}, optRMSPropRef()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt, err := tc.opt()
			optNoErr(t, err)
			s := newOptStepper(t, w0, opt)
			want := optWidened(w0)
			for k, g := range grads {
				got := s.step(g)
				want = tc.next(want, optWidened(optFloat32s(g)), k+1)
				optClose(t, "w after step "+strconv.Itoa(k+1), got, want, 1e-5)
			}
		})
	}
}

func optFloat32s(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// optMomentumRef is SGD with momentum 0.9 and lr 0.1: base_lr is +0.1 and
// MomentumSGDUpdate subtracts the step.
func optMomentumRef(name string, noNesterov bool) optFormula {
	mu, lr := float64(float32(0.9)), float64(float32(0.1))
	var m []float64
	return optFormula{name, func() (*brew.Optimizer, error) {
		return brew.NewSGD(brew.SGDOptions{BaseLR: 0.1, Momentum: 0.9, NoNesterov: noNesterov})
	}, func(w, g []float64, _ int) []float64 {
		if m == nil {
			m = make([]float64, len(w))
		}
		for i := range w {
			var a float64
			if noNesterov {
				a = lr*g[i] + mu*m[i]
				m[i] = a
			} else {
				mn := mu*m[i] + lr*g[i]
				a = (1+mu)*mn - mu*m[i]
				m[i] = mn
			}
			w[i] -= a
		}
		return w
	}}
}

// optAdamRef is Adam with lr −0.1, β1 0.8, β2 0.9, ε 1e-3; the counter
// reads k at run k, so t = k + 1.
func optAdamRef() func(w, g []float64, k int) []float64 {
	b1, b2, eps, lr := float64(float32(0.8)), float64(float32(0.9)), float64(float32(1e-3)), float64(float32(-0.1))
	var m1, m2 []float64
	return func(w, g []float64, k int) []float64 {
		if m1 == nil {
			m1, m2 = make([]float64, len(w)), make([]float64, len(w))
		}
		t := float64(k + 1)
		corr := math.Sqrt(1-math.Pow(b2, t)) / (1 - math.Pow(b1, t))
		for i := range w {
			m1[i] = b1*m1[i] + (1-b1)*g[i]
			m2[i] = b2*m2[i] + (1-b2)*g[i]*g[i]
			w[i] += lr * corr * m1[i] / (math.Sqrt(m2[i]) + eps)
		}
		return w
	}
}

// optAdagradRef is Adagrad with lr −0.5, ε 1e-3 and decay 0.9.
func optAdagradRef() func(w, g []float64, k int) []float64 {
	eps, decay, lr := float64(float32(1e-3)), float64(float32(0.9)), float64(float32(-0.5))
	var h []float64
	return func(w, g []float64, _ int) []float64 {
		if h == nil {
			h = make([]float64, len(w))
		}
		for i := range w {
			h[i] = decay*h[i] + g[i]*g[i]
			w[i] += lr * g[i] / (math.Sqrt(h[i]) + eps)
		}
		return w
	}
}

// optRMSPropRef is Caffe2's RMSProp with α 0.1, decay 0.8, momentum 0.5
// and ε 0.01: RmsProp with lr ONE, then MomentumSGDUpdate with lr +α and
// its default momentum 0, which also overwrites the momentum blob with the
// step it takes.
func optRMSPropRef() func(w, g []float64, k int) []float64 {
	decay, mu, eps, alpha := float64(float32(0.8)), float64(float32(0.5)), float64(float32(0.01)), float64(float32(0.1))
	var ms, mom []float64
	return func(w, g []float64, _ int) []float64 {
		if ms == nil {
			ms, mom = make([]float64, len(w)), make([]float64, len(w))
		}
		for i := range w {
			ms[i] += (1 - decay) * (g[i]*g[i] - ms[i])
			gradO := mu*mom[i] + g[i]/math.Sqrt(eps+ms[i])
			a := alpha * gradO
			w[i] -= a
			mom[i] = a
		}
		return w
	}
}

// TestWeightDecayFormula checks grad += wd·param on a model whose gradient
// is known: y = w·x + b, loss = ½(y − label)², so ∇w = (y − label)·x.
func TestWeightDecayFormula(t *testing.T) {
	m := brew.NewModel("wd")
	w0 := []float32{0.5, -1, 2, 0, 1}
	m.CreateParam("fc_w", []int64{1, 5}, brew.Init("GivenTensorFill", netdef.ArgFloats("values", w0...)), brew.Weight)
	m.CreateParam("fc_b", []int64{1}, brew.Init("ConstantFill", netdef.ArgFloat("value", 0.25)), brew.Bias)
	optNoErr(t, m.Err())
	m.Net.Op("FC", []string{"data", "fc_w", "fc_b"}, []string{"fc"}, netdef.ArgInt("axis", 0))
	m.Net.Op("SquaredL2Distance", []string{"fc", "label"}, []string{"sq"})
	m.Net.Op("AveragedLoss", []string{"sq"}, []string{"avg_loss"})
	_, err := m.AddGradientOperators("avg_loss")
	optNoErr(t, err)
	const wd, lr = 0.1, 0.5
	optNoErr(t, brew.AddWeightDecay(m, wd))
	_, err = brew.BuildSGD(m, brew.SGDOptions{BaseLR: lr})
	optNoErr(t, err)
	ws := workspace.New(t.TempDir())
	x := []float32{1, 0, 1, 1, 0}
	optFeed(t, ws, "data", blob.MustFromSlice(x))
	optFeed(t, ws, "label", blob.MustFromSlice([]float32{4}))
	optNoErr(t, ws.RunNetOnce(m.InitNet))
	optNoErr(t, ws.CreateNet(m.Net, false))
	optNoErr(t, ws.RunNet(m.Net.Name(), 1))
	// y = 0.5 + 2 + 0 + 0.25 = 2.75, so dy = y − label = −1.25.
	dy := 2.75 - 4.0
	wantW := make([]float64, 5)
	for i := range w0 {
		g := dy*float64(x[i]) + float64(float32(wd))*float64(w0[i])
		wantW[i] = float64(w0[i]) - float64(float32(lr))*g
	}
	optClose(t, "fc_w", optFetch(t, ws, "fc_w"), wantW, 1e-6)
	optClose(t, "fc_b (not decayed)", optFetch(t, ws, "fc_b"), []float64{0.25 - float64(float32(lr))*dy}, 1e-6)
	optClose(t, "wd_0_0", optFetch(t, ws, "wd_0_0"), []float64{float64(float32(wd))}, 0)
}
