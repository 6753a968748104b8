package brew_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/workspace"
)

// Shared test helpers of the brew helper tests (prefix bt).

func btNoErr(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func btFeed(t testing.TB, ws *workspace.Workspace, name string, x *blob.Tensor) {
	t.Helper()
	btNoErr(t, ws.FeedBlob(name, x))
}

func btFetch(t testing.TB, ws *workspace.Workspace, name string) *blob.Tensor {
	t.Helper()
	x, err := ws.FetchBlob(name)
	btNoErr(t, err)
	return x
}

func btMean(x *blob.Tensor) float64 {
	var s float64
	d := blob.Data[float32](x)
	for _, v := range d {
		s += float64(v)
	}
	return s / float64(len(d))
}

func btFilled(v float32, shape ...int) *blob.Tensor {
	n := 1
	for _, d := range shape {
		n *= d
	}
	x := make([]float32, n)
	for i := range x {
		x[i] = v
	}
	return blob.MustFromSlice(x, shape...)
}

func btRand(r *rand.Rand, shift float32, shape ...int) *blob.Tensor {
	x := btFilled(0, shape...)
	d := blob.Data[float32](x)
	for i := range d {
		d[i] = r.Float32() + shift
	}
	return x
}

// btModel returns a model that declares the given fed blobs.
func btModel(t testing.TB, name string, inputs ...string) *brew.Model {
	t.Helper()
	m := brew.NewModel(name)
	m.AddExternalInputs(inputs...)
	btNoErr(t, m.Err())
	return m
}

// btRun runs the model's init net once and then its net once in a fresh
// workspace holding the fed blobs.
func btRun(t testing.TB, m *brew.Model, feeds map[string]*blob.Tensor) *workspace.Workspace {
	t.Helper()
	ws := workspace.New(t.TempDir())
	for name, x := range feeds {
		btFeed(t, ws, name, x)
	}
	btNoErr(t, ws.RunNetOnce(m.InitNet))
	btNoErr(t, ws.RunNetOnce(m.Net))
	return ws
}

// btValid fails the test if the model has duplicate parameters.
func btValid(t testing.TB, m *brew.Model) {
	t.Helper()
	if dup := m.Validate(); len(dup) != 0 {
		t.Fatalf("Validate = %v, want none", dup)
	}
}

func btShape(x *blob.Tensor) []int {
	s := make([]int, x.NumDims())
	for i := range s {
		s[i] = x.Dim(i)
	}
	return s
}

// myhelper and myhelper2 are brew_test.py's helpers: they return their
// keyword argument val, -1 by default. Like brew's helpers they record
// their error in the model.
func myhelper(m *brew.Model, opts ...brew.Option) int64 {
	return btValHelper(m, "myhelper", opts)
}

func myhelper2(m *brew.Model, opts ...brew.Option) int64 {
	return btValHelper(m, "myhelper2", opts)
}

func btValHelper(m *brew.Model, h brew.Helper, opts []brew.Option) int64 {
	if a := brew.ResolveKwargs(m, h, opts...).Arg("val"); a != nil {
		return a.GetI()
	}
	return -1
}

func val(v int64) brew.Option { return brew.Arg(netdef.ArgInt("val", v)) }

// btRegister registers the test helpers once per process, as brew_test.py's
// setUp does.
func btRegister(t testing.TB) {
	t.Helper()
	for _, h := range []brew.Helper{"myhelper", "myhelper2"} {
		if !brew.HasHelper(h) {
			btNoErr(t, brew.Register(h))
		}
	}
}

func TestBrewDropout(t *testing.T) {
	const p = 0.2
	m := btModel(t, "test_model", "x")
	brew.Dropout(m, "x", "out", brew.IsTest(false))
	btNoErr(t, m.Err())
	ws := btRun(t, m, map[string]*blob.Tensor{"x": btFilled(1-p, 100, 100)})
	if got := btMean(btFetch(t, ws, "out")); math.Abs(got-(1-p)) >= 0.05 {
		t.Errorf("mean of dropout output = %v, want within 0.05 of %v", got, 1-p)
	}
}

func TestBrewFC(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	m := btModel(t, "test_model", "x")
	out := brew.FC(m, "x", "out_1", 15, 15)
	btNoErr(t, m.Err())
	btValid(t, m)
	ws := btRun(t, m, map[string]*blob.Tensor{"x": btRand(r, -0.5, 15, 15)})
	if got := btShape(btFetch(t, ws, out)); !slices.Equal(got, []int{15, 15}) {
		t.Errorf("out_1 shape = %v, want [15 15]", got)
	}
}

func TestBrewRelu(t *testing.T) {
	m := btModel(t, "test_model", "xpos", "xneg")
	brew.Relu(m, "xpos", "out_xpos")
	brew.Relu(m, "xneg", "out_xneg")
	btNoErr(t, m.Err())
	btValid(t, m)
	ws := btRun(t, m, map[string]*blob.Tensor{"xpos": btFilled(0.5, 5, 5), "xneg": btFilled(-0.5, 5, 5)})
	for _, c := range []struct {
		blob string
		want float64
	}{{"out_xpos", 0.5}, {"out_xneg", 0}} {
		if got := btMean(btFetch(t, ws, c.blob)); math.Abs(got-c.want) > 5e-8 {
			t.Errorf("mean of %s = %v, want %v", c.blob, got, c.want)
		}
	}
}

func TestBrewTanh(t *testing.T) {
	m := btModel(t, "test_model", "x")
	brew.Tanh(m, "x", "out_tanh")
	btNoErr(t, m.Err())
	ws := btRun(t, m, map[string]*blob.Tensor{"x": btFilled(0.5, 5, 5)})
	if got := btMean(btFetch(t, ws, "out_tanh")); math.Abs(got-math.Tanh(0.5)) > 5e-6 {
		t.Errorf("mean of tanh output = %v, want %v", got, math.Tanh(0.5))
	}
}

// TestBrewLossHelpers checks that Softmax, LabelCrossEntropy and
// AveragedLoss compute the loss SoftmaxWithLoss fuses, and that their
// gradients reach the logits.
func TestBrewLossHelpers(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	m := btModel(t, "loss", "x", "label")
	logits := brew.FC(m, "x", "logits", 3, 4)
	_, fused := brew.SoftmaxWithLoss(m, logits, "label", "sm", "fused")
	xent := brew.LabelCrossEntropy(m, brew.Softmax(m, logits, "probs"), "label", "xent")
	loss := brew.AveragedLoss(m, xent, "loss")
	btNoErr(t, m.Err())
	grads, err := m.AddGradientOperators(loss)
	btNoErr(t, err)
	ws := btRun(t, m, map[string]*blob.Tensor{"x": btRand(r, -0.5, 6, 3), "label": blob.MustFromSlice([]int32{0, 3, 1, 2, 3, 0}, 6)})
	if got := btShape(btFetch(t, ws, xent)); !slices.Equal(got, []int{6}) {
		t.Errorf("xent shape = %v, want [6]", got)
	}
	got, want := blob.Data[float32](btFetch(t, ws, loss))[0], blob.Data[float32](btFetch(t, ws, fused))[0]
	if want <= 0 || math.Abs(float64(got-want)) > 1e-6 {
		t.Errorf("AveragedLoss(LabelCrossEntropy(Softmax)) = %v, SoftmaxWithLoss = %v", got, want)
	}
	g := blob.Data[float32](btFetch(t, ws, grads["logits_w"].Dense))
	if !slices.ContainsFunc(g, func(v float32) bool { return v != 0 }) {
		t.Errorf("logits_w gradient %v is zero", g)
	}
}

func TestBrewValidate(t *testing.T) {
	m := brew.NewModel("test_model")
	m.AddParameter("aaa")
	m.AddParameter("bbb")
	if got := m.Validate(); len(got) != 0 {
		t.Fatalf("Validate = %v, want []", got)
	}
	m.AddParameter("xxx")
	m.AddParameter("bbb")
	if got := m.Validate(); !slices.Equal(got, []string{"bbb"}) {
		t.Fatalf("Validate = %v, want [bbb]", got)
	}
}

func TestBrewArgScope(t *testing.T) {
	btRegister(t)
	m := brew.NewModel("test_model")
	const n = 15
	btNoErr(t, brew.WithArgScope([]brew.Helper{"myhelper"}, []brew.Option{val(n)}, func() error {
		if res := myhelper(m); res != n {
			t.Errorf("myhelper in arg scope = %d, want %d", res, n)
		}
		return m.Err()
	}))
	btNoErr(t, brew.WithArgScope([]brew.Helper{"myhelper", "myhelper2"}, []brew.Option{val(n)}, func() error {
		if res1, res2 := myhelper(m), myhelper2(m); res1 != n || res2 != n {
			t.Errorf("helpers in arg scope = [%d %d], want [%d %d]", res1, res2, n, n)
		}
		return m.Err()
	}))
	if res := myhelper(m); res != -1 {
		t.Errorf("myhelper after the arg scopes = %d, want -1", res)
	}
	btNoErr(t, m.Err())
}

func TestBrewArgScopeSingle(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	m := btModel(t, "test_model", "x")
	scope := []brew.Option{brew.Stride(2), brew.Pad(2), brew.WeightInit(brew.Init("XavierFill")), brew.BiasInit(brew.Init("ConstantFill"))}
	btNoErr(t, brew.WithArgScope([]brew.Helper{brew.HelperConv}, scope, func() error {
		brew.Conv(m, "x", "out", 3, 64, 3)
		return m.Err()
	}))
	btValid(t, m)
	ws := btRun(t, m, map[string]*blob.Tensor{"x": btRand(r, -0.5, 64, 3, 32, 32)})
	if got := btShape(btFetch(t, ws, "out")); !slices.Equal(got, []int{64, 64, 17, 17}) {
		t.Errorf("out shape = %v, want [64 64 17 17]", got)
	}
}

func TestBrewArgScopeNested(t *testing.T) {
	btRegister(t)
	m := brew.NewModel("test_model")
	const n = 16
	check := func(what string, want int64, opts ...brew.Option) {
		t.Helper()
		res := myhelper(m, opts...)
		btNoErr(t, m.Err())
		if res != want {
			t.Errorf("%s: myhelper = %d, want %d", what, res, want)
		}
	}
	one := []brew.Helper{"myhelper"}
	btNoErr(t, brew.WithArgScope(one, []brew.Option{val(-3)}, func() error {
		return brew.WithArgScope(one, []brew.Option{val(-2)}, func() error {
			err := brew.WithArgScope(one, []brew.Option{val(n)}, func() error {
				check("innermost scope", n)
				check("explicit beats scopes", 15, val(15))
				return nil
			})
			check("after the inner scope", -2)
			return err
		})
	}))
	check("explicit, no scope", 15, val(15))
	check("no scope", -1)
}

func TestBrewDoubleRegister(t *testing.T) {
	btRegister(t)
	if err := brew.Register("myhelper"); err == nil {
		t.Fatal("registering myhelper twice succeeded")
	}
	if err := brew.Register(brew.HelperConv); err == nil {
		t.Fatal("registering conv again succeeded")
	}
}

func TestBrewHasHelper(t *testing.T) {
	if !brew.HasHelper(brew.HelperConv) || !brew.HasHelper("conv") {
		t.Error("conv is not a registered helper")
	}
	if brew.HasHelper("myhelper3") {
		t.Error("myhelper3 is a registered helper")
	}
}

func TestBrewModelHelperArgScope(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	m, err := brew.NewModelWith("test_model", brew.ModelOptions{ArgScope: []brew.Option{brew.Order("NHWC")}})
	btNoErr(t, err)
	m.AddExternalInputs("x")
	btNoErr(t, m.Err())
	scope := []brew.Option{brew.Stride(2), brew.Pad(2), brew.WeightInit(brew.Init("XavierFill")), brew.BiasInit(brew.Init("ConstantFill"))}
	btNoErr(t, brew.WithArgScope([]brew.Helper{brew.HelperConv}, scope, func() error {
		brew.Conv(m, "x", "out", 3, 64, 0, brew.KernelHW(8, 3))
		return m.Err()
	}))
	if got := m.ParamInfo("out_w").Shape; !slices.Equal(got, []int64{64, 8, 3, 3}) {
		t.Errorf("NHWC filter shape = %v, want [64 8 3 3]", got)
	}
	ws := btRun(t, m, map[string]*blob.Tensor{"x": btRand(r, -0.5, 64, 32, 32, 3)})
	if got := btShape(btFetch(t, ws, "out")); !slices.Equal(got, []int{64, 15, 17, 64}) {
		t.Errorf("out shape = %v, want [64 15 17 64]", got)
	}
}

func TestBrewModelArgScopeOrder(t *testing.T) {
	m, err := brew.NewModelWith("test_model", brew.ModelOptions{ArgScope: []brew.Option{brew.Order("NHWC")}})
	btNoErr(t, err)
	if got := string(m.ArgScope().Arg("order").GetS()); got != "NHWC" {
		t.Errorf("arg scope order = %q, want NHWC", got)
	}
	if got := string(brew.NewModel("").ArgScope().Arg("order").GetS()); got != "NCHW" {
		t.Errorf("default arg scope order = %q, want NCHW", got)
	}
	if a := brew.NewModel("").ArgScope().Arg("use_cudnn"); a != nil {
		t.Errorf("default arg scope has use_cudnn = %v; there is no cuDNN", a)
	}
}

func TestBrewGetParams(t *testing.T) {
	m := brew.NewModel("test_model")
	scopedParam := func(name string, tags ...brew.Tag) {
		m.AddParameter(devicescope.Current().Scoped(name), tags...)
	}
	sorted := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
	check := func(what string, got []string, want ...string) {
		t.Helper()
		if !slices.Equal(sorted(got), want) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	scopedParam("a")
	scopedParam("b", brew.ComputedParam)
	devicescope.NameScope("c", func() {
		scopedParam("a")
		scopedParam("d", brew.ComputedParam)
		check("GetParams in c", m.GetParams(), "c/a")
		check("GetComputedParams in c", m.GetComputedParams(), "c/d")
		check("GetAllParams in c", m.GetAllParams(), "c/a", "c/d")
		check("AllParamsIn('') in c", m.AllParamsIn(""), "a", "b", "c/a", "c/d")
	})
	check("GetParams", m.GetParams(), "a", "c/a")
	check("GetComputedParams", m.GetComputedParams(), "b", "c/d")
	check("GetAllParams", m.GetAllParams(), "a", "b", "c/a", "c/d")
	check("AllParamsIn('')", m.AllParamsIn(""), "a", "b", "c/a", "c/d")
	check("AllParamsIn('c')", m.AllParamsIn("c"), "c/a", "c/d")
	check("AllParamsIn('c/')", m.AllParamsIn("c/"), "c/a", "c/d")
}

func TestBrewParamConsistence(t *testing.T) {
	m := btModel(t, "test_mode", "data")
	cnv := brew.Conv(m, "data", "cnv", 32, 32, 4)
	btNoErr(t, m.Err())
	step, err := brew.NewModelWith("step_model", brew.ModelOptions{ParamModel: m})
	btNoErr(t, err)
	step.AddExternalInputs(cnv)
	a := brew.FC(step, cnv, "a", 100, 200)
	btNoErr(t, step.Err())
	// "a" is computed by the step model's net; the model reads it as fed.
	m.AddExternalInputs(a)
	brew.FC(m, a, "b", 200, 5)
	btNoErr(t, m.Err())
	want := []string{"cnv_w", "cnv_b", "a_w", "a_b", "b_w", "b_b"}
	for _, mm := range []*brew.Model{m, step} {
		if got := mm.AllParamsIn(""); !slices.Equal(got, want) {
			t.Errorf("model %s params = %v, want %v", mm.Name, got, want)
		}
	}
	for _, p := range want {
		if m.ParamInfo(p) == nil || m.ParamInfo(p) != step.ParamInfo(p) {
			t.Errorf("ParamInfo(%q) is not shared: %p vs %p", p, m.ParamInfo(p), step.ParamInfo(p))
		}
	}
	if m.InitNet != step.InitNet {
		t.Error("the init net is not shared")
	}
}
