//go:build cuda && cgo

package tests

import (
	"math"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/devicescope/cuda"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/workspace"
)

// mlpPlan builds a Caffe2-style training plan: an init net (parameters
// filled with seeded random numbers, the iteration counter on the CPU) and a
// train net — FC, ReLU, FC, SoftmaxWithLoss, the backward pass, LearningRate
// and a plain SGD update with WeightedSum — every train operator carrying
// dev's device option, as Caffe2's GPU training plans do. Steps: init once,
// train 30 times.
func mlpPlan(t *testing.T, dev *netdef.DeviceOption) *netdef.PlanDef {
	t.Helper()
	on := func(op *netdef.OperatorDef, d *netdef.DeviceOption) *netdef.OperatorDef {
		op.DeviceOption = proto.Clone(d).(*netdef.DeviceOption)
		return op
	}
	seeded := func(op *netdef.OperatorDef, seed uint32) *netdef.OperatorDef {
		op = on(op, dev)
		op.DeviceOption.RandomSeed = proto.Uint32(seed)
		return op
	}
	init := netdef.NewNet("mlp_init")
	for i, p := range []struct {
		name string
		dims []int64
	}{{"fc1_w", []int64{16, 8}}, {"fc2_w", []int64{4, 16}}} {
		init.Proto().Op = append(init.Proto().Op, seeded(netdef.NewOperator("XavierFill", nil, []string{p.name}, netdef.ArgInts("shape", p.dims...)), uint32(i+1)))
	}
	for _, p := range []struct {
		name string
		n    int64
		v    float32
	}{{"fc1_b", 16, 0}, {"fc2_b", 4, 0}, {"ONE", 1, 1}} {
		init.Proto().Op = append(init.Proto().Op, on(netdef.NewOperator("ConstantFill", nil, []string{p.name},
			netdef.ArgInts("shape", p.n), netdef.ArgFloat("value", p.v)), dev))
	}
	init.Proto().Op = append(init.Proto().Op, netdef.NewOperator("ConstantFill", nil, []string{"ITER"},
		netdef.ArgInts("shape", 1), netdef.ArgInt("value", 0), netdef.ArgInt("dtype", int64(netdef.TensorProto_INT64))))

	train := netdef.NewNet("mlp_train")
	train.Op("FC", []string{"data", "fc1_w", "fc1_b"}, []string{"fc1"})
	train.Op("Relu", []string{"fc1"}, []string{"fc1"})
	train.Op("FC", []string{"fc1", "fc2_w", "fc2_b"}, []string{"pred"})
	train.Op("SoftmaxWithLoss", []string{"pred", "label"}, []string{"softmax", "loss"})
	grads, err := operators.AddGradientOperators(train.Proto(), []string{"loss"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	train.Op("Iter", []string{"ITER"}, []string{"ITER"})
	train.Op("LearningRate", []string{"ITER"}, []string{"LR"}, netdef.ArgFloat("base_lr", -0.1), netdef.ArgString("policy", "fixed"))
	for _, p := range []string{"fc1_w", "fc1_b", "fc2_w", "fc2_b"} {
		train.Op("WeightedSum", []string{p, "ONE", grads[p].Dense, "LR"}, []string{p})
	}
	for _, op := range train.Proto().Op {
		on(op, dev)
	}
	plan := netdef.NewPlan("mlp")
	if err := plan.AddNets(init.Proto(), train.Proto()); err != nil {
		t.Fatal(err)
	}
	if err := plan.AddStep(netdef.NewExecutionStep("init", init.Proto())); err != nil {
		t.Fatal(err)
	}
	if err := plan.AddStep(netdef.NewExecutionStep("train", train.Proto()).SetIter(30)); err != nil {
		t.Fatal(err)
	}
	return plan.Proto()
}

// TestCUDAPlanTrains runs the same training plan on the CPU and, with every
// train operator on gpu_0, through RunPlan unchanged: the loss falls and the
// parameters agree.
func TestCUDAPlanTrains(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	data := make([]float32, 32*8)
	for i := range data {
		data[i] = float32(rng.NormFloat64())
	}
	labels := make([]int32, 32)
	for i := range labels {
		labels[i] = int32(rng.IntN(4))
	}
	params := map[string][]float32{}
	for _, dev := range []*netdef.DeviceOption{netdef.NewDeviceOption(netdef.CPU, 0), netdef.NewDeviceOption(netdef.CUDA, 0)} {
		ws := workspace.New("")
		if err := ws.FeedBlob("data", blob.MustFromSlice(data, 32, 8), workspace.OnDevice(dev)); err != nil {
			t.Fatal(err)
		}
		if err := ws.FeedBlob("label", blob.MustFromSlice(labels), workspace.OnDevice(dev)); err != nil {
			t.Fatal(err)
		}
		if err := ws.RunPlan(mlpPlan(t, dev)); err != nil {
			t.Fatalf("%v: %v", dev.Type(), err)
		}
		if w := ws.GetBlob("fc1_w").Tensor(); (dev.Type() == netdef.CUDA) == w.OnHost() {
			t.Fatalf("%v: fc1_w lives on the host: %v", dev.Type(), w.OnHost())
		}
		loss, err := ws.FetchBlob("loss")
		if err != nil {
			t.Fatal(err)
		}
		if l := blob.Data[float32](loss)[0]; !(l < float32(math.Log(4))) {
			t.Errorf("%v: the loss after 30 steps is %v, not below chance (%v)", dev.Type(), l, math.Log(4))
		}
		for _, p := range []string{"fc1_w", "fc1_b", "fc2_w", "fc2_b"} {
			v, err := ws.FetchBlob(p)
			if err != nil {
				t.Fatal(err)
			}
			got := blob.Data[float32](v)
			want, seen := params[p]
			if !seen {
				params[p] = got
				continue
			}
			for i := range got {
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*math.Max(1, math.Abs(float64(want[i]))) {
					t.Fatalf("%s[%d]: %v on the GPU, %v on the CPU", p, i, got[i], want[i])
				}
			}
		}
	}
}

// TestCUDASteadyStateAllocatesNothing runs the train net of mlpPlan on
// gpu_0 again and again: once warm, a run allocates nothing on the Go heap
// and takes no new memory from the device.
func TestCUDASteadyStateAllocatesNothing(t *testing.T) {
	dev := netdef.NewDeviceOption(netdef.CUDA, 0)
	plan := mlpPlan(t, dev)
	ws := workspace.New("")
	rng := rand.New(rand.NewPCG(1, 1))
	data := make([]float32, 32*8)
	for i := range data {
		data[i] = float32(rng.NormFloat64())
	}
	if err := ws.FeedBlob("data", blob.MustFromSlice(data, 32, 8), workspace.OnDevice(dev)); err != nil {
		t.Fatal(err)
	}
	if err := ws.FeedBlob("label", blob.MustFromSlice(make([]int32, 32)), workspace.OnDevice(dev)); err != nil {
		t.Fatal(err)
	}
	if err := ws.RunNetOnce(plan.Network[0]); err != nil {
		t.Fatal(err)
	}
	if err := ws.CreateNet(plan.Network[1], false); err != nil {
		t.Fatal(err)
	}
	name := plan.Network[1].GetName()
	for range 3 {
		if err := ws.RunNet(name, 1); err != nil {
			t.Fatal(err)
		}
	}
	d, err := devicescope.Get(dev)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := d.(*cuda.Device).MemoryStats()
	var runErr error
	allocs := testing.AllocsPerRun(10, func() {
		if err := ws.RunNet(name, 1); err != nil && runErr == nil {
			runErr = err
		}
	})
	if runErr != nil {
		t.Fatal(runErr)
	}
	if allocs != 0 {
		t.Errorf("a warm run allocates %v times on the Go heap", allocs)
	}
	if after, _ := d.(*cuda.Device).MemoryStats(); after != before {
		t.Errorf("device memory in use went from %d to %d bytes over warm runs", before, after)
	}
}
