package brew_test

import (
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/workspace"
)

// Ports of Caffe2's optimizer_test.py (spec §8.6). numpyRand reproduces
// NumPy's legacy generator, so the fixtures hold Caffe2's data and draw
// Caffe2's sequence of examples.

// numpyRand is NumPy's legacy RandomState: MT19937 seeded as
// np.random.seed(seed), with randint's masked rejection sampling.
type numpyRand struct {
	mt  [624]uint32
	pos int
}

func newNumpyRand(seed uint32) *numpyRand {
	r := &numpyRand{pos: 624}
	r.mt[0] = seed
	for i := 1; i < 624; i++ {
		r.mt[i] = 1812433253*(r.mt[i-1]^(r.mt[i-1]>>30)) + uint32(i)
	}
	return r
}

// uint32 returns the generator's next 32-bit output.
func (r *numpyRand) uint32() uint32 {
	if r.pos == 624 {
		for k := range r.mt {
			y := r.mt[k]&0x80000000 | r.mt[(k+1)%624]&0x7fffffff
			v := r.mt[(k+397)%624] ^ y>>1
			if y&1 != 0 {
				v ^= 0x9908b0df
			}
			r.mt[k] = v
		}
		r.pos = 0
	}
	y := r.mt[r.pos]
	r.pos++
	y ^= y >> 11
	y ^= y << 7 & 0x9d2c5680
	y ^= y << 15 & 0xefc60000
	return y ^ y>>18
}

// IntN is np.random.randint(n) for 0 < n <= 2³².
func (r *numpyRand) IntN(n int) int {
	top := uint32(n - 1)
	mask := top
	for s := 1; s < 32; s *= 2 {
		mask |= mask >> s
	}
	for {
		if v := r.uint32() & mask; v <= top {
			return int(v)
		}
	}
}

// float64 is np.random.rand().
func (r *numpyRand) float64() float64 {
	a, b := r.uint32()>>5, r.uint32()>>6
	return (float64(a)*67108864 + float64(b)) / 9007199254740992
}

func TestNumpyRand(t *testing.T) {
	r := newNumpyRand(123) // np.random.seed(123); np.random.rand(3)
	optClose(t, "rand(3)", []float64{r.float64(), r.float64(), r.float64()}, []float64{0.6964691855978616, 0.28613933495037946, 0.2268514535642031}, 1e-15)
}

// optPerfectModel is the weight vector the fixtures' labels come from.
var optPerfectModel = []float32{2, 6, 5, 0, 1}

// optData returns rows×len(weights) random {0,1} floats, drawn as
// np.random.randint(2, size=(rows, len(weights))), and the labels
// data·weights.
func optData(rng *numpyRand, rows int, weights []float32) (data [][]float32, label []float32) {
	data, label = make([][]float32, rows), make([]float32, rows)
	for i := range data {
		data[i] = make([]float32, len(weights))
		for j := range data[i] {
			data[i][j] = float32(rng.IntN(2))
			label[i] += data[i][j] * weights[j]
		}
	}
	return data, label
}

// optFixture is the spec's dense model: fc (5 → 1, ConstantFill weights,
// axis 0) → SquaredL2Distance with "label" → AveragedLoss "avg_loss",
// with its gradient operators, and its data.
type optFixture struct {
	m     *brew.Model
	data  [][]float32
	label []float32
	rng   *numpyRand
}

func optDense(t testing.TB) *optFixture {
	t.Helper()
	rng := newNumpyRand(123)
	data, label := optData(rng, 20, optPerfectModel)
	m := brew.NewModel("test")
	w := m.CreateParam("fc_w", []int64{1, 5}, brew.Init("ConstantFill"), brew.Weight)
	b := m.CreateParam("fc_b", []int64{1}, brew.Init("ConstantFill"), brew.Bias)
	optNoErr(t, m.Err())
	m.Net.Op("FC", []string{"data", w, b}, []string{"fc"}, netdef.ArgInt("axis", 0))
	m.Net.Op("SquaredL2Distance", []string{"fc", "label"}, []string{"sq"})
	m.Net.Op("AveragedLoss", []string{"sq"}, []string{"avg_loss"})
	grads, err := m.AddGradientOperators("avg_loss")
	optNoErr(t, err)
	if g := grads["fc_w"]; g.Dense == "" {
		t.Fatalf("fc_w's gradient is %+v, want a dense one", g)
	}
	return &optFixture{m: m, data: data, label: label, rng: rng}
}

// feed feeds example i.
func (f *optFixture) feed(t testing.TB, ws *workspace.Workspace, i int) {
	t.Helper()
	optFeed(t, ws, "data", blob.MustFromSlice(slices.Clone(f.data[i])))
	optFeed(t, ws, "label", blob.MustFromSlice([]float32{f.label[i]}))
}

// start feeds the first example, runs the init net and creates the train
// net in a new workspace.
func (f *optFixture) start(t testing.TB) *workspace.Workspace {
	t.Helper()
	ws := workspace.New(t.TempDir())
	f.feed(t, ws, 0)
	optNoErr(t, ws.RunNetOnce(f.m.InitNet))
	optNoErr(t, ws.CreateNet(f.m.Net, true))
	return ws
}

// train runs the train net n times, each on a random example.
func (f *optFixture) train(t testing.TB, ws *workspace.Workspace, n int) {
	t.Helper()
	for range n {
		f.feed(t, ws, f.rng.IntN(len(f.data)))
		optNoErr(t, ws.RunNet(f.m.Net.Name(), 1))
	}
}

func optNoErr(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func optFeed(t testing.TB, ws *workspace.Workspace, name string, x *blob.Tensor) {
	t.Helper()
	optNoErr(t, ws.FeedBlob(name, x))
}

func optFetch(t testing.TB, ws *workspace.Workspace, name string) []float64 {
	t.Helper()
	x, err := ws.FetchBlob(name)
	optNoErr(t, err)
	return x.AsFloat64s()
}

func optClose(t testing.TB, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
	for i := range got {
		if !(math.Abs(got[i]-want[i]) <= tol) {
			t.Fatalf("%s = %v, want %v (±%g)", what, got, want, tol)
		}
	}
}

func optWidened(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// optClass is one of the spec's per-optimizer test classes.
type optClass struct {
	name   string
	build  func(m *brew.Model, b brew.BuildOptions) (*brew.Optimizer, error)
	check  func(t *testing.T, ws *workspace.Workspace, opt *brew.Optimizer)
	sparse bool // runs testSparse
	lr     bool // runs the LRModificationTestBase tests
}

// sharedAreOnes checks Caffe2's "shared non-empty and each == [1.0]".
func sharedAreOnes(t *testing.T, ws *workspace.Workspace, aux brew.AuxParams) {
	t.Helper()
	if len(aux.Shared) == 0 {
		t.Fatal("no shared auxiliary parameters")
	}
	for _, b := range aux.Shared {
		optClose(t, b, optFetch(t, ws, b), []float64{1}, 1e-5)
	}
}

func optClasses() []optClass {
	return []optClass{
		{name: "Sgd", sparse: true, lr: true,
			build: func(m *brew.Model, b brew.BuildOptions) (*brew.Optimizer, error) {
				return brew.BuildSGD(m, brew.SGDOptions{BaseLR: 0.1, BuildOptions: b})
			},
			check: func(t *testing.T, ws *workspace.Workspace, opt *brew.Optimizer) {
				aux := opt.AuxiliaryParameters()
				sharedAreOnes(t, ws, aux)
				if len(aux.Local) != 0 {
					t.Errorf("local auxiliary parameters %v, want none", aux.Local)
				}
			}},
		{name: "MomentumSgd", sparse: true,
			build: func(m *brew.Model, b brew.BuildOptions) (*brew.Optimizer, error) {
				return brew.BuildSGD(m, brew.SGDOptions{BaseLR: 0.1, Momentum: 0.1, BuildOptions: b})
			},
			check: func(t *testing.T, ws *workspace.Workspace, opt *brew.Optimizer) {
				aux := opt.AuxiliaryParameters()
				sharedAreOnes(t, ws, aux)
				if len(aux.Local) == 0 {
					t.Error("no local auxiliary parameters")
				}
			}},
		{name: "Lars",
			build: func(m *brew.Model, b brew.BuildOptions) (*brew.Optimizer, error) {
				return brew.BuildSGD(m, brew.SGDOptions{BaseLR: 0.1, Lars: true, LarsOffset: 0.5, BuildOptions: b})
			},
			check: func(t *testing.T, ws *workspace.Workspace, opt *brew.Optimizer) {
				aux := opt.AuxiliaryParameters()
				sharedAreOnes(t, ws, aux)
				if len(aux.Local) != 0 {
					t.Errorf("local auxiliary parameters %v, want none", aux.Local)
				}
			}},
		{name: "Adagrad", sparse: true, lr: true,
			build: func(m *brew.Model, b brew.BuildOptions) (*brew.Optimizer, error) {
				return brew.BuildAdagrad(m, brew.AdagradOptions{BaseLR: 1, Lars: true, LarsOffset: 0.5, BuildOptions: b})
			},
			check: func(t *testing.T, ws *workspace.Workspace, opt *brew.Optimizer) {
				aux := opt.AuxiliaryParameters()
				if len(aux.Shared) != 0 || len(aux.Local) == 0 {
					t.Errorf("auxiliary parameters %+v, want local ones only", aux)
				}
			}},
		{name: "Adam", sparse: true, lr: true,
			build: func(m *brew.Model, b brew.BuildOptions) (*brew.Optimizer, error) {
				return brew.BuildAdam(m, brew.AdamOptions{BaseLR: 0.1, BuildOptions: b})
			},
			check: func(t *testing.T, ws *workspace.Workspace, opt *brew.Optimizer) {
				aux := opt.AuxiliaryParameters()
				if len(aux.Shared) == 0 || len(aux.Local) == 0 {
					t.Errorf("auxiliary parameters %+v, want shared and local ones", aux)
				}
				if !slices.Contains(aux.Shared, brew.OptimizerIterationBlob) {
					t.Errorf("shared auxiliary parameters %v lack %q", aux.Shared, brew.OptimizerIterationBlob)
				}
				optClose(t, "optimizer_iteration", optFetch(t, ws, brew.OptimizerIterationBlob), []float64{2000}, 0)
			}},
		{name: "RmsProp", lr: true,
			build: func(m *brew.Model, b brew.BuildOptions) (*brew.Optimizer, error) {
				return brew.BuildRMSProp(m, brew.RMSPropOptions{BaseLR: 0.1, Epsilon: 0.1, BuildOptions: b})
			},
			check: func(t *testing.T, ws *workspace.Workspace, opt *brew.Optimizer) {
				aux := opt.AuxiliaryParameters()
				if len(aux.Shared) != 0 || len(aux.Local) == 0 {
					t.Errorf("auxiliary parameters %+v, want local ones only", aux)
				}
			}},
	}
}

// TestOptimizerDense is testDense for every class: 2000 steps on random
// examples bring fc_w to the perfect model (atol 1e-2).
func TestOptimizerDense(t *testing.T) {
	for _, c := range optClasses() {
		t.Run(c.name, func(t *testing.T) {
			f := optDense(t)
			opt, err := c.build(f.m, brew.BuildOptions{})
			optNoErr(t, err)
			ws := f.start(t)
			f.train(t, ws, 2000)
			optClose(t, "fc_w", optFetch(t, ws, "fc_w"), optWidened(optPerfectModel), 1e-2)
			c.check(t, ws, opt)
		})
	}
}

// TestOptimizerSparse is testSparse: w is read through Gather, so its
// gradient is a slice; both index types train w to the perfect model.
func TestOptimizerSparse(t *testing.T) {
	const dup = 2
	for _, c := range optClasses() {
		if !c.sparse {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			rng := newNumpyRand(123)
			repeated := make([]float32, 0, dup*len(optPerfectModel))
			for _, w := range optPerfectModel {
				repeated = append(repeated, w, w)
			}
			data, label := optData(rng, 20, repeated)
			m := brew.NewModel("test")
			m.CreateParam("w", []int64{int64(len(optPerfectModel))}, brew.Init("ConstantFill", netdef.ArgFloat("value", 0)))
			optNoErr(t, m.Err())
			m.Net.Op("Gather", []string{"w", "indices"}, []string{"gather"})
			m.Net.Op("ReduceFrontSum", []string{"gather"}, []string{"sum"})
			m.Net.Op("SquaredL2Distance", []string{"sum", "label"}, []string{"sq"})
			m.Net.Op("AveragedLoss", []string{"sq"}, []string{"avg_loss"})
			grads, err := m.AddGradientOperators("avg_loss")
			optNoErr(t, err)
			if !grads["w"].IsSparse() {
				t.Fatalf("w's gradient is %+v, want a slice", grads["w"])
			}
			opt, err := c.build(m, brew.BuildOptions{})
			optNoErr(t, err)
			ws := workspace.New(t.TempDir())
			ws.CreateBlob("indices")
			ws.CreateBlob("label")
			for _, dtype := range []blob.DataType{blob.Int32, blob.Int64} {
				optNoErr(t, ws.RunNetOnce(m.InitNet))
				optNoErr(t, ws.CreateNet(m.Net, true))
				for range 2000 {
					i := rng.IntN(len(data))
					var i32 []int32
					var i64 []int64
					for k, x := range data[i] {
						if x == 1 {
							i32, i64 = append(i32, int32(k/dup)), append(i64, int64(k/dup))
						}
					}
					if len(i64) == 0 {
						continue
					}
					if dtype == blob.Int32 {
						optFeed(t, ws, "indices", blob.MustFromSlice(i32))
					} else {
						optFeed(t, ws, "indices", blob.MustFromSlice(i64))
					}
					optFeed(t, ws, "label", blob.Scalar(label[i]))
					optNoErr(t, ws.RunNet(m.Net.Name(), 1))
				}
				optClose(t, "w ("+dtype.String()+" indices)", optFetch(t, ws, "w"), optWidened(optPerfectModel), 1e-2)
			}
			c.check(t, ws, opt)
		})
	}
}

// TestGlobalNormGradientClipping is test_global_norm_based_gradient_clipping:
// after one run, norm_ratio = clip/max(clip, ‖all gradients‖₂) < 1.
func TestGlobalNormGradientClipping(t *testing.T) {
	for _, c := range optClasses() {
		if !c.lr {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			const clip = 1.0
			f := optDense(t)
			_, err := c.build(f.m, brew.BuildOptions{MaxGradientNorm: clip})
			optNoErr(t, err)
			ws := f.start(t)
			f.train(t, ws, 1)
			sq := 0.0
			for _, g := range f.m.ParamToGrad() {
				for _, v := range optFetch(t, ws, g) {
					sq += v * v
				}
			}
			ratio := optFetch(t, ws, brew.ClipScope+"/norm_ratio")
			optClose(t, "norm_ratio", ratio, []float64{clip / math.Max(clip, math.Sqrt(sq))}, 1e-7)
			if !(ratio[0] < 1) {
				t.Errorf("norm_ratio = %v, want < 1", ratio[0])
			}
		})
	}
}

// TestLRInjection is test_lr_injection.
func TestLRInjection(t *testing.T) {
	for _, c := range optClasses() {
		if !c.lr {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			f := optDense(t)
			_, err := c.build(f.m, brew.BuildOptions{MaxGradientNorm: 1, AllowLRInjection: true})
			optNoErr(t, err)
			ws := f.start(t)
			v, err := brew.LRInjection(ws)
			optNoErr(t, err)
			if v != 1 {
				t.Errorf("lr_injection after init = %v, want 1", v)
			}
			optNoErr(t, brew.SetLRInjection(ws, 0))
			if v, err = brew.LRInjection(ws); err != nil || v != 0 {
				t.Errorf("lr_injection after setting 0 = %v (%v), want 0", v, err)
			}
			before := optFetch(t, ws, "fc_w")
			f.train(t, ws, 1)
			optClose(t, "lr_multiplier", optFetch(t, ws, "lr_multiplier"), []float64{0}, 0)
			optClose(t, "fc_w after a step with injection 0", optFetch(t, ws, "fc_w"), before, 0)
		})
	}
}

// TestLRInjectionWithoutClipping uses lr_injection itself as the multiplier.
func TestLRInjectionWithoutClipping(t *testing.T) {
	brew.ResetOptimizerInstanceCount()
	f := optDense(t)
	_, err := brew.BuildSGD(f.m, brew.SGDOptions{BaseLR: 0.5, BuildOptions: brew.BuildOptions{AllowLRInjection: true}})
	optNoErr(t, err)
	mul := optOps(f.m.Net, "Mul")
	if len(mul) != 1 || !slices.Equal(mul[0].Input, []string{"SgdOptimizer_0_lr_cpu", brew.LRInjectionBlob}) ||
		mul[0].Output[0] != "SgdOptimizer_0_scaled_lr_cpu" {
		t.Fatalf("Mul ops %v, want one scaling SgdOptimizer_0_lr_cpu by lr_injection", mul)
	}
	ws := f.start(t)
	optNoErr(t, brew.SetLRInjection(ws, 2))
	f.train(t, ws, 1)
	optClose(t, "scaled lr", optFetch(t, ws, "SgdOptimizer_0_scaled_lr_cpu"), []float64{-1}, 1e-7)
	if _, err := brew.LRInjection(workspace.New(t.TempDir())); err == nil {
		t.Error("LRInjection in a workspace without the blob succeeded")
	}
}

// optOps returns net's operators of type typ, in order.
func optOps(net *netdef.Net, typ string) []*netdef.OperatorDef {
	var out []*netdef.OperatorDef
	for _, op := range net.Proto().GetOp() {
		if op.GetType() == typ {
			out = append(out, op)
		}
	}
	return out
}

// optArg returns the argument name of op, or nil.
func optArg(op *netdef.OperatorDef, name string) *netdef.Argument {
	return netdef.FindArg(op.GetArg(), name)
}

// optFC adds an FC layer with parameters <out>_w and <out>_b.
func optFC(t testing.TB, m *brew.Model, in, out string, dimIn, dimOut int64) {
	t.Helper()
	w := m.CreateParam(out+"_w", []int64{dimOut, dimIn}, brew.Init("XavierFill"), brew.Weight)
	b := m.CreateParam(out+"_b", []int64{dimOut}, brew.Init("ConstantFill"), brew.Bias)
	optNoErr(t, m.Err())
	m.Net.Op("FC", []string{in, w, b}, []string{out})
}

// optConvModel is the model of test_weight_decay and test_optimizer_context:
// conv "cnv" (32 → 32, kernel 4) → fc "a" (100 → 200) → fc "b" (200 → 5) →
// SoftmaxWithLoss. opts, when set, are the optimizers of the conv and of
// fc a's weight and bias.
func optConvModel(t testing.TB) *brew.Model {
	t.Helper()
	m := brew.NewModel("test")
	w := m.CreateParam("cnv_w", []int64{32, 32, 4, 4}, brew.Init("XavierFill"), brew.Weight)
	b := m.CreateParam("cnv_b", []int64{32}, brew.Init("ConstantFill"), brew.Bias)
	optNoErr(t, m.Err())
	m.Net.Op("Conv", []string{"data", w, b}, []string{"cnv"}, netdef.ArgInt("kernel", 4))
	optFC(t, m, "cnv", "a", 100, 200)
	optFC(t, m, "a", "b", 200, 5)
	m.Net.Op("SoftmaxWithLoss", []string{"b", "label"}, []string{"softmax", "loss"})
	_, err := m.AddGradientOperators("loss")
	optNoErr(t, err)
	return m
}

// checkWeightDecay checks that the WeightedSum ops reading wd_0_0 write
// exactly the weights' gradients.
func checkWeightDecay(t *testing.T, m *brew.Model) {
	t.Helper()
	var got []string
	for _, op := range optOps(m.Net, "WeightedSum") {
		if slices.Contains(op.Input, "wd_0_0") {
			got = append(got, op.Output[0])
		}
	}
	slices.Sort(got)
	if want := []string{"a_w_grad", "b_w_grad", "cnv_w_grad"}; !slices.Equal(got, want) {
		t.Errorf("weight decay writes %v, want %v", got, want)
	}
}

// TestWeightDecay is test_weight_decay.
func TestWeightDecay(t *testing.T) {
	m := optConvModel(t)
	optNoErr(t, brew.AddWeightDecay(m, 1e-4))
	_, err := brew.BuildSGD(m, brew.SGDOptions{BaseLR: 0.11})
	optNoErr(t, err)
	checkWeightDecay(t, m)
}

// TestOptimizerContext is test_optimizer_context, with per-parameter
// optimizers given through BuildOptions.ParamOptimizers.
func TestOptimizerContext(t *testing.T) {
	m := optConvModel(t)
	c := brew.OptimizerInstanceCount("SgdOptimizer")
	sgd := func(lr float32) *brew.Optimizer {
		opt, err := brew.NewSGD(brew.SGDOptions{BaseLR: lr})
		optNoErr(t, err)
		return opt
	}
	conv, weight, bias := sgd(0.15), sgd(0.2), sgd(0.1)
	optNoErr(t, brew.AddWeightDecay(m, 1e-4))
	_, err := brew.BuildSGD(m, brew.SGDOptions{BaseLR: 0.11, BuildOptions: brew.BuildOptions{
		ParamOptimizers: map[string]*brew.Optimizer{"cnv_w": conv, "cnv_b": conv, "a_w": weight, "a_b": bias},
	}})
	optNoErr(t, err)
	want := map[string]float32{}
	for i, lr := range []float32{-0.15, -0.2, -0.1, -0.11} {
		want["SgdOptimizer_"+strconv.Itoa(c+i)+"_lr_cpu"] = lr
	}
	got := map[string]float32{}
	for _, op := range optOps(m.Net, "LearningRate") {
		got[op.Output[0]] = optArg(op, "base_lr").GetF()
	}
	if len(got) != len(want) {
		t.Fatalf("LearningRate ops %v, want %v", got, want)
	}
	for name, lr := range want {
		if got[name] != lr {
			t.Errorf("LearningRate %q has base_lr %v, want %v (all: %v)", name, got[name], lr, got)
		}
	}
	checkWeightDecay(t, m)
}

// TestMultipleOptimizers is test_multiple_optimizers: each optimizer has
// its own learning-rate blob, shared by the parameters it updates.
func TestMultipleOptimizers(t *testing.T) {
	m := brew.NewModel("test")
	optFC(t, m, "data", "fc1", 100, 50)
	optFC(t, m, "fc1", "fc2", 50, 25)
	optFC(t, m, "fc2", "fc3", 25, 10)
	m.Net.Op("SoftmaxWithLoss", []string{"fc3", "label"}, []string{"softmax", "loss"})
	_, err := m.AddGradientOperators("loss")
	optNoErr(t, err)
	sgd1, err := brew.NewSGD(brew.SGDOptions{BaseLR: 0.1})
	optNoErr(t, err)
	sgd2, err := brew.NewSGD(brew.SGDOptions{BaseLR: 0.2})
	optNoErr(t, err)
	adagrad, err := brew.NewAdagrad(brew.AdagradOptions{BaseLR: 0.01})
	optNoErr(t, err)
	apply := func(opt *brew.Optimizer, params ...string) {
		for _, p := range params {
			dev, err := brew.ParamDevice(m, p)
			optNoErr(t, err)
			var applyErr error
			devicescope.DeviceScope(dev, func() { applyErr = opt.Apply(m, p, operators.Dense(p+"_grad")) })
			optNoErr(t, applyErr)
		}
	}
	apply(sgd1, "fc1_w", "fc1_b")
	apply(sgd2, "fc2_w", "fc2_b")
	apply(adagrad, "fc3_w", "fc3_b")
	lrOf := map[string]string{}
	for _, op := range optOps(m.Net, "WeightedSum") {
		lrOf[op.Input[0]] = op.Input[3]
	}
	for _, op := range optOps(m.Net, "Adagrad") {
		lrOf[op.Input[0]] = op.Input[3]
	}
	if lrOf["fc1_w"] == "" || lrOf["fc1_w"] != lrOf["fc1_b"] {
		t.Errorf("fc1 learning rates %q and %q, want one shared blob", lrOf["fc1_w"], lrOf["fc1_b"])
	}
	if lrOf["fc2_w"] == "" || lrOf["fc2_w"] != lrOf["fc2_b"] || lrOf["fc2_w"] == lrOf["fc1_w"] {
		t.Errorf("fc2 learning rates %q and %q, want one shared blob other than fc1's %q", lrOf["fc2_w"], lrOf["fc2_b"], lrOf["fc1_w"])
	}
	if lrOf["fc3_w"] == "" || lrOf["fc3_w"] != lrOf["fc3_b"] || lrOf["fc3_w"] == lrOf["fc1_w"] || lrOf["fc3_w"] == lrOf["fc2_w"] {
		t.Errorf("fc3 learning rates %q and %q, want one shared blob of their own", lrOf["fc3_w"], lrOf["fc3_b"])
	}
	if n := len(optOps(m.Net, "AtomicIter")); n != 1 {
		t.Errorf("%d AtomicIter ops, want 1", n)
	}
}
