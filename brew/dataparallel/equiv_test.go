package dataparallel_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/brew/dataparallel"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/comm"
	"github.com/caffe2go/caffe2go/workspace"
)

// newWorkspace returns a fresh workspace in a temporary root folder,
// closed when the test ends.
func newWorkspace(t testing.TB) *workspace.Workspace {
	t.Helper()
	ws := workspace.New(t.TempDir())
	t.Cleanup(func() { ws.Close() })
	return ws
}

// allclose reports the first element where |a − b| > atol + rtol·|b|.
func allclose(a, b []float32, rtol, atol float64) error {
	if len(a) != len(b) {
		return fmt.Errorf("lengths %d and %d differ", len(a), len(b))
	}
	for i := range a {
		if d := math.Abs(float64(a[i]) - float64(b[i])); d > atol+rtol*math.Abs(float64(b[i])) || math.IsNaN(d) {
			return fmt.Errorf("element %d: %g vs %g (difference %g)", i, a[i], b[i], d)
		}
	}
	return nil
}

func uniformTensor(rng *rand.Rand, shape ...int) *blob.Tensor {
	n := 1
	for _, d := range shape {
		n *= d
	}
	data := make([]float32, n)
	for i := range data {
		data[i] = float32(rng.Float64())
	}
	return blob.MustFromSlice(data, shape...)
}

// equivOptions select the variant of Caffe2's test_equiv to run.
type equivOptions struct {
	devices []int
	// caffe2 is the spec's CPU branch: shared model, combined SpatialBN,
	// the optimizer builder build_sgd(0.1, max_gradient_norm=5,
	// allow_lr_injection). Otherwise each device has its own parameters,
	// all-reduced with engine, and updates them itself.
	caffe2 bool
	engine string
}

// runEquivModel is run_model of Caffe2's DataParallelModelTest.test_equiv
// (CPU branch): FC(16→1) from zeros, sigmoid, squared distance to the
// rounded first feature, 10 iterations of SGD at 0.1 on batches of 64
// drawn from a generator seeded 2603, split evenly over the devices. It
// returns the master's fc_w.
func runEquivModel(t *testing.T, o equivOptions) []float32 {
	t.Helper()
	ws := newWorkspace(t)
	brew.ResetOptimizerInstanceCount()
	m := brew.NewModel(fmt.Sprintf("test%v", o.devices))
	forward := func(m *brew.Model, lossScale float32) ([]string, error) {
		m.AddExternalInputs("data", "label")
		fc := brew.FC(m, "data", "fc", 16, 1,
			brew.WeightInit(brew.Init("ConstantFill")), brew.BiasInit(brew.Init("ConstantFill")))
		steps := []struct {
			typ     string
			in, out []string
			args    []*netdef.Argument
		}{
			{"FlattenToVec", []string{fc}, []string{"fc_fl"}, nil},
			{"Sigmoid", []string{"fc_fl"}, []string{"sigm"}, nil},
			{"SquaredL2Distance", []string{"sigm", "label"}, []string{"sq"}, nil},
			{"AveragedLoss", []string{"sq"}, []string{"loss"}, nil},
			{"Scale", []string{"loss"}, []string{"loss_scaled"}, []*netdef.Argument{netdef.ArgFloat("scale", lossScale)}},
		}
		var op *netdef.OperatorDef
		for _, s := range steps {
			op = m.Op(s.typ, s.in, s.out, s.args...)
		}
		devicescope.Current().Op(m.InitNet, "UniformFill", nil, []string{"sync_num"}, netdef.ArgInts("shape", 1))
		return op.GetOutput(), m.Err()
	}
	opts := dataparallel.Options{
		ForwardBuilder:  forward,
		InputBuilder:    func(*brew.Model) error { return nil },
		Devices:         o.devices,
		AllreduceEngine: o.engine,
		Workspace:       ws,
	}
	if o.caffe2 {
		opts.SharedModel, opts.CombineSpatialBN = true, true
		opts.OptimizerBuilder = func(m *brew.Model) error {
			_, err := brew.BuildSGD(m, brew.SGDOptions{BaseLR: 0.1, Policy: "fixed",
				BuildOptions: brew.BuildOptions{MaxGradientNorm: 5, AllowLRInjection: true}})
			return err
		}
	} else {
		opts.ParamUpdateBuilder = perDeviceSGD(0.1)
	}
	p, err := dataparallel.Parallelize(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AddBlobSync(nil, "sync_num"); err != nil {
		t.Fatal(err)
	}
	if len(p.LearningRateBlobNames()) == 0 {
		t.Fatal("no learning-rate blobs")
	}

	rng := rand.New(rand.NewPCG(2603, 0))
	const batch = 64
	for i := range 10 {
		data := uniformTensor(rng, batch, 16)
		labels := make([]float32, batch)
		for r := range labels {
			labels[r] = float32(math.Round(float64(blob.Data[float32](data)[r*16])))
		}
		if err := p.Scatter(brew.Dataset{"data": data, "label": blob.MustFromSlice(labels, batch)}); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := p.RunInitNet(); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.FeedDevice(o.devices[0], "sync_num", []float32{float32(2 * i)}); err != nil {
			t.Fatal(err)
		}
		if err := p.RunNet(1); err != nil {
			t.Fatal(err)
		}
		for _, d := range o.devices {
			v, err := ws.FetchBlob(p.DeviceBlob(d, "sync_num"))
			if err != nil {
				t.Fatal(err)
			}
			if got := blob.Data[float32](v)[0]; math.Abs(float64(got)-float64(2*i)) > 0.01 {
				t.Fatalf("iteration %d: %s = %g, want %d", i, p.DeviceBlob(d, "sync_num"), got, 2*i)
			}
		}
	}
	w, err := ws.FetchBlob(p.DeviceBlob(o.devices[0], "fc_w"))
	if err != nil {
		t.Fatal(err)
	}
	return blob.Data[float32](w)
}

// perDeviceSGD is a per-device update builder: Iter, a fixed learning rate
// of −lr and param += lr·grad with WeightedSum, as Caffe2's
// test_equiv_recurrent builds it.
func perDeviceSGD(lr float32) func(m *brew.Model) error {
	return func(m *brew.Model) error {
		s := devicescope.Current()
		s.Op(m.InitNet, "ConstantFill", nil, []string{"ITER"}, netdef.ArgInts("shape", 1),
			netdef.ArgInt("value", 0), netdef.ArgInt("dtype", int64(netdef.TensorProto_INT64)))
		s.Op(m.InitNet, "ConstantFill", nil, []string{"ONE"}, netdef.ArgInts("shape", 1), netdef.ArgFloat("value", 1))
		it := m.Op("Iter", []string{"ITER"}, []string{"ITER"})
		lrOp := m.Op("LearningRate", it.GetOutput(), []string{"LR"},
			netdef.ArgFloat("base_lr", -lr), netdef.ArgString("policy", "fixed"))
		if err := m.Err(); err != nil {
			return err
		}
		for _, param := range m.GetParams() {
			grad := m.ParamToGrad()[param]
			m.Op("WeightedSum", []string{param, "ONE", grad, lrOp.GetOutput()[0]}, []string{param})
		}
		return m.Err()
	}
}

// TestEquiv is Caffe2's test_equiv, CPU branch: whatever the number of
// devices, the same total batch gives the same parameters (cpu_0/fc_w,
// rtol 1e-5, atol 1e-8). Besides the spec's configuration (shared model),
// it runs the same model with per-device parameters all-reduced by both
// engines.
func TestEquiv(t *testing.T) {
	variants := []struct {
		name string
		o    equivOptions
	}{
		{"caffe2", equivOptions{caffe2: true}},
		{"sum_tree", equivOptions{engine: comm.SumTree}},
		{"ring", equivOptions{engine: comm.Ring}},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			o := v.o
			o.devices = []int{0}
			want := runEquivModel(t, o)
			for _, n := range []int{2, 4, 8, 16} {
				o.devices = make([]int, n)
				for i := range o.devices {
					o.devices[i] = i
				}
				got := runEquivModel(t, o)
				if err := allclose(got, want, 1e-5, 1e-8); err != nil {
					t.Errorf("%d devices vs 1: cpu_0/fc_w: %v", n, err)
				}
			}
		})
	}
}
