package dataparallel_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/brew/dataparallel"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// testFailOp copies its input, except on the device whose id is its
// argument fail_on, where it fails (or panics, with panic=1).
type testFailOp struct {
	*operators.Base
	fail, panics bool
}

func (o *testFailOp) Run() error {
	if o.panics && o.fail {
		panic("deliberate panic")
	}
	if o.fail {
		return errors.New("deliberate failure")
	}
	x, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	return o.Output(0).CopyFrom(x)
}

func init() {
	operators.MustRegisterSchema(operators.Schema{Type: "DataParallelTestFail", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1})
	operators.MustRegister("DataParallelTestFail", netdef.CPU, "", func(b *operators.Base) (operators.Operator, error) {
		return &testFailOp{Base: b, fail: int64(b.Def().GetDeviceOption().GetDeviceId()) == b.ArgInt("fail_on", -1),
			panics: b.ArgInt("panic", 0) != 0}, nil
	})
	operators.MustRegisterNoGradient("DataParallelTestFail")
}

// fcForward is a forward builder: FC(data → fc, 4→2), a side operator
// (probe) when probe is set, and the scaled mean squared distance to label.
func fcForward(probe []*netdef.Argument) func(m *brew.Model, lossScale float32) ([]string, error) {
	return func(m *brew.Model, lossScale float32) ([]string, error) {
		m.AddExternalInputs("data", "label")
		fc := brew.FC(m, "data", "fc", 4, 2)
		if probe != nil {
			m.Op("DataParallelTestFail", []string{fc}, []string{"probe"}, probe...)
		}
		m.Op("SquaredL2Distance", []string{fc, "label"}, []string{"sq"})
		m.Op("AveragedLoss", []string{"sq"}, []string{"loss"})
		op := m.Op("Scale", []string{"loss"}, []string{"loss_scaled"}, netdef.ArgFloat("scale", lossScale))
		return op.GetOutput(), m.Err()
	}
}

// TestReplicaFailure checks that a failing operator on one replica stops
// the step with an error naming its device and the operator, without
// hanging, and that the next step fails the same way; a replica fed data
// of the wrong shape fails earlier, when RunInitNet creates the nets.
func TestReplicaFailure(t *testing.T) {
	tests := []struct {
		name       string
		probe      []*netdef.Argument
		badDevice  int // gets data of the wrong width
		wantDevice string
		wantText   []string
	}{
		{"error", []*netdef.Argument{netdef.ArgInt("fail_on", 1)}, -1, "cpu_1", []string{"DataParallelTestFail", "deliberate failure"}},
		{"panic", []*netdef.Argument{netdef.ArgInt("fail_on", 2), netdef.ArgInt("panic", 1)}, -1, "cpu_2", []string{"DataParallelTestFail", "deliberate panic"}},
		{"shape", nil, 3, "cpu_3", []string{"FC"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws := newWorkspace(t)
			m := brew.NewModel("failing")
			p, err := dataparallel.Parallelize(m, dataparallel.Options{
				ForwardBuilder: fcForward(tc.probe), ParamUpdateBuilder: perDeviceSGD(0.1),
				Devices: []int{0, 1, 2, 3}, Workspace: ws,
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range p.Devices() {
				width := 4
				if d == tc.badDevice {
					width = 3
				}
				if err := p.FeedDevice(d, "data", blob.MustFromSlice(make([]float32, 2*width), 2, width)); err != nil {
					t.Fatal(err)
				}
				if err := p.FeedDevice(d, "label", blob.MustFromSlice(make([]float32, 4), 2, 2)); err != nil {
					t.Fatal(err)
				}
			}
			err = p.RunInitNet()
			if tc.badDevice >= 0 {
				// Shape inference finds the bad width when the nets are
				// created, before any step runs.
				if err == nil || !strings.Contains(err.Error(), "device "+tc.wantDevice) || !strings.Contains(err.Error(), "[2 3]") {
					t.Fatalf("RunInitNet = %v; want a shape error naming device %s and [2 3]", err, tc.wantDevice)
				}
				for _, s := range tc.wantText {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("RunInitNet error does not mention %q: %v", s, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for step := range 2 {
				done := make(chan error, 1)
				go func() { done <- p.RunNet(1) }()
				select {
				case err = <-done:
				case <-time.After(time.Minute):
					t.Fatalf("step %d: RunNet hangs after a replica failed", step)
				}
				if err == nil {
					t.Fatalf("step %d: RunNet succeeded", step)
				}
				msg := err.Error()
				if !strings.Contains(msg, "device "+tc.wantDevice) {
					t.Errorf("step %d: error does not name device %s: %v", step, tc.wantDevice, err)
				}
				for _, s := range tc.wantText {
					if !strings.Contains(msg, s) {
						t.Errorf("step %d: error does not mention %q: %v", step, s, err)
					}
				}
				var opErr *operators.OpError
				if !errors.As(err, &opErr) {
					t.Errorf("step %d: error does not wrap an operators.OpError: %v", step, err)
				}
			}
		})
	}
}

// TestDeviceScopeCheck is Caffe2's test_device_scope_check: Parallelize
// inside a CUDA device scope is an error.
func TestDeviceScopeCheck(t *testing.T) {
	var err error
	devicescope.DeviceScope(devicescope.CUDA(0), func() {
		_, err = dataparallel.Parallelize(nil, dataparallel.Options{DeviceType: netdef.CUDA})
	})
	if err == nil || !strings.Contains(err.Error(), "device scope") {
		t.Fatalf("Parallelize in a CUDA device scope: err = %v, want a device-scope error", err)
	}
	// A CPU device scope is allowed.
	devicescope.DeviceScope(devicescope.CPUDevice(3), func() {
		_, err = dataparallel.Parallelize(brew.NewModel("cpu_scope"), dataparallel.Options{
			ForwardBuilder: fcForward(nil), ParamUpdateBuilder: perDeviceSGD(0.1), Devices: []int{0, 1}})
	})
	if err != nil {
		t.Fatalf("Parallelize in a CPU device scope: %v", err)
	}
}

// TestOptionErrors checks the argument checks of Parallelize.
func TestOptionErrors(t *testing.T) {
	update := perDeviceSGD(0.1)
	optimizer := func(m *brew.Model) error { return nil }
	tests := []struct {
		name string
		o    dataparallel.Options
		want string
	}{
		{"no forward builder", dataparallel.Options{Devices: []int{0}}, "ForwardBuilder"},
		{"no devices", dataparallel.Options{ForwardBuilder: fcForward(nil)}, "Devices is empty"},
		{"negative device", dataparallel.Options{ForwardBuilder: fcForward(nil), Devices: []int{0, -1}}, "invalid device id -1"},
		{"repeated device", dataparallel.Options{ForwardBuilder: fcForward(nil), Devices: []int{1, 0, 1}}, "listed twice"},
		{"two update builders", dataparallel.Options{ForwardBuilder: fcForward(nil), Devices: []int{0},
			ParamUpdateBuilder: update, OptimizerBuilder: optimizer}, "at most one"},
		{"shared GPU model", dataparallel.Options{ForwardBuilder: fcForward(nil), Devices: []int{0},
			DeviceType: netdef.CUDA, SharedModel: true}, "SharedModel"},
		{"GPU combined BN", dataparallel.Options{ForwardBuilder: fcForward(nil), Devices: []int{0},
			DeviceType: netdef.CUDA, CombineSpatialBN: true, ParamUpdateBuilder: update}, "CombineSpatialBN"},
		{"combined BN without training", dataparallel.Options{ForwardBuilder: fcForward(nil), Devices: []int{0},
			CombineSpatialBN: true}, "training model"},
		{"unknown engine", dataparallel.Options{ForwardBuilder: fcForward(nil), Devices: []int{0},
			AllreduceEngine: "NO_SUCH_ENGINE"}, "NO_SUCH_ENGINE"},
		{"unknown device type", dataparallel.Options{ForwardBuilder: fcForward(nil), Devices: []int{0},
			DeviceType: 7}, "not supported"},
		{"forward builder error", dataparallel.Options{Devices: []int{0, 1},
			ForwardBuilder: func(*brew.Model, float32) ([]string, error) { return nil, errors.New("no layers today") }},
			"forward builder on cpu_0: no layers today"},
		{"input builder error", dataparallel.Options{Devices: []int{2, 1}, ForwardBuilder: fcForward(nil),
			InputBuilder: func(*brew.Model) error { return errors.New("no data") }}, "input builder on cpu_2: no data"},
		{"error left in the model", dataparallel.Options{Devices: []int{0, 1},
			ForwardBuilder: func(m *brew.Model, _ float32) ([]string, error) {
				return []string{brew.FC(m, "no_such_blob", "fc", 4, 2)}, nil
			}},
			`forward builder on cpu_0: brew: FC("cpu_0/fc")`},
		{"error left by the input builder", dataparallel.Options{Devices: []int{1}, ForwardBuilder: fcForward(nil),
			InputBuilder: func(m *brew.Model) error { m.AddExternalInputs(""); return nil }},
			"input builder on cpu_1: brew: model \"bad\": AddExternalInputs: empty blob name"},
		{"no loss", dataparallel.Options{Devices: []int{0}, ParamUpdateBuilder: update,
			ForwardBuilder: func(*brew.Model, float32) ([]string, error) { return nil, nil }}, "returned no loss"},
		{"update builder error", dataparallel.Options{Devices: []int{0, 1}, ForwardBuilder: fcForward(nil),
			ParamUpdateBuilder: func(*brew.Model) error { return errors.New("diverged") }}, "param update builder on cpu_0: diverged"},
		{"optimizer error", dataparallel.Options{Devices: []int{0, 1}, ForwardBuilder: fcForward(nil),
			OptimizerBuilder: func(*brew.Model) error { return errors.New("bad lr") }}, "optimizer builder: bad lr"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := dataparallel.Parallelize(brew.NewModel("bad"), tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

// TestModelWithError checks that Parallelize refuses a model that has
// recorded an error, returning that error and building nothing.
func TestModelWithError(t *testing.T) {
	m := brew.NewModel("failed")
	brew.Relu(m, "no_such_blob", "r")
	_, err := dataparallel.Parallelize(m, dataparallel.Options{Devices: []int{0}, ForwardBuilder: fcForward(nil)})
	if err == nil || err != m.Err() {
		t.Fatalf("Parallelize = %v, want the model's error %v", err, m.Err())
	}
	if n := len(m.Net.Proto().GetOp()); n != 0 {
		t.Errorf("the net has %d operators", n)
	}
}

// TestParamOutsideDeviceScope checks that a parameter the forward builder
// creates outside the device's name scope is an error naming it.
func TestParamOutsideDeviceScope(t *testing.T) {
	_, err := dataparallel.Parallelize(brew.NewModel("outside"), dataparallel.Options{
		Devices: []int{0, 1}, ParamUpdateBuilder: perDeviceSGD(0.1),
		ForwardBuilder: func(m *brew.Model, s float32) ([]string, error) {
			devicescope.With(devicescope.Current().WithNameReset("elsewhere"), func() {
				m.CreateParam("w", []int64{1}, brew.Init("ConstantFill"))
			})
			return fcForward(nil)(m, s)
		},
	})
	if err == nil || !strings.Contains(err.Error(), `"elsewhere/w"`) {
		t.Fatalf("err = %v, want one naming elsewhere/w", err)
	}
}

// TestGPUNets checks the nets GPU mode builds (they need the CUDA backend
// to run): gpu_<d>/ names, CUDA device options, the Allreduce on the
// master GPU, the initial broadcast on the destination GPUs.
func TestGPUNets(t *testing.T) {
	m := brew.NewModel("gpu")
	p, err := dataparallel.Parallelize(m, dataparallel.Options{
		ForwardBuilder: fcForward(nil), ParamUpdateBuilder: perDeviceSGD(0.1),
		Devices: []int{1, 0}, DeviceType: netdef.CUDA, AllreduceEngine: "NCCL",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Blobs("fc_w"); got[0] != "gpu_0/fc_w" || got[1] != "gpu_1/fc_w" {
		t.Errorf("fc_w group = %v", got)
	}
	var allreduces int
	for i, op := range m.Net.Proto().GetOp() {
		dev := op.GetDeviceOption()
		if dev.Type() != netdef.CUDA {
			t.Errorf("train op %d (%s) runs on %v", i, op.GetType(), devicescope.KeyOf(dev))
		}
		if op.GetType() == "Allreduce" {
			allreduces++
			if dev.GetDeviceId() != 1 || op.GetEngine() != "NCCL" || !slices.Equal(op.GetInput(), []string{"gpu_1/" + op.GetName(), "gpu_0/" + op.GetName()}) {
				t.Errorf("Allreduce %v on %v with engine %q", op.GetInput(), devicescope.KeyOf(dev), op.GetEngine())
			}
		}
	}
	if allreduces != 2 {
		t.Errorf("%d Allreduce operators, want 2 (fc_w, fc_b)", allreduces)
	}
	var copies int
	for _, op := range m.InitNet.Proto().GetOp() {
		if op.GetType() == "Copy" {
			copies++
			if devicescope.KeyOf(op.GetDeviceOption()).String() != "gpu_0" || !strings.HasPrefix(op.GetInput()[0], "gpu_1/") {
				t.Errorf("initial sync %v → %v on %v", op.GetInput(), op.GetOutput(), devicescope.KeyOf(op.GetDeviceOption()))
			}
		}
	}
	if copies != 4 { // fc_w, fc_b, ITER, ONE
		t.Errorf("%d initial copies, want 4", copies)
	}
	if len(p.Warnings()) == 0 {
		t.Error("no warning about the missing GPUs")
	}
	if err := p.RunInitNet(); err == nil {
		t.Error("running GPU nets without the CUDA backend succeeded")
	}
}

// TestNetSettings checks the train net's executor settings and the
// stripped-name bookkeeping.
func TestNetSettings(t *testing.T) {
	tests := []struct {
		name        string
		o           dataparallel.Options
		wantType    string
		wantWorkers int32
	}{
		{"defaults", dataparallel.Options{Devices: []int{0, 1, 2}}, "dag", 12},
		{"explicit", dataparallel.Options{Devices: []int{0, 1}, NetType: "simple", NumThreadsPerDevice: 1}, "simple", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := brew.NewModel("settings")
			tc.o.ForwardBuilder, tc.o.ParamUpdateBuilder = fcForward(nil), perDeviceSGD(0.1)
			p, err := dataparallel.Parallelize(m, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			def := m.Net.Proto()
			if def.GetType() != tc.wantType || def.GetNumWorkers() != tc.wantWorkers {
				t.Errorf("net type %q with %d workers, want %q with %d", def.GetType(), def.GetNumWorkers(), tc.wantType, tc.wantWorkers)
			}
			if a := netdef.FindArg(def.GetArg(), "first_iter_only_one_worker"); a.GetI() != 1 {
				t.Errorf("first_iter_only_one_worker = %v", a)
			}
			if got := p.ParamNames(); !slices.Equal(got, []string{"fc_w", "fc_b"}) {
				t.Errorf("ParamNames = %v", got)
			}
			if got := p.GradNames(); !slices.Equal(got, []string{"fc_w_grad", "fc_b_grad"}) {
				t.Errorf("GradNames = %v", got)
			}
			if got := p.Losses(1); !slices.Equal(got, []string{"cpu_1/loss_scaled"}) {
				t.Errorf("Losses(1) = %v", got)
			}
			if got := p.LearningRateBlobNames(); len(got) != len(tc.o.Devices) {
				t.Errorf("LearningRateBlobNames = %v", got)
			}
		})
	}
}
