package dataparallel_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/brew/dataparallel"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/comm"
)

// lenetForward is the forward builder of Caffe2's MNIST LeNet
// (brew.LeNet), the loss scaled by lossScale.
func lenetForward(m *brew.Model, lossScale float32) ([]string, error) {
	m.AddExternalInputs("data", "label")
	_, loss := brew.LeNet(m, "data", "label")
	op := m.Op("Scale", []string{loss}, []string{"loss_scaled"}, netdef.ArgFloat("scale", lossScale))
	return op.GetOutput(), m.Err()
}

// lenetOptimizer is weight decay 1e-4 and Nesterov momentum SGD 0.9 at
// 0.01.
func lenetOptimizer(m *brew.Model) error {
	if err := brew.AddWeightDecay(m, 1e-4); err != nil {
		return err
	}
	_, err := brew.BuildSGD(m, brew.SGDOptions{BaseLR: 0.01, Momentum: 0.9})
	return err
}

// lenetBatches returns steps batches of batch random 28×28 images with
// random labels.
func lenetBatches(seed uint64, steps, batch int) []brew.Dataset {
	rng := rand.New(rand.NewPCG(seed, 3))
	out := make([]brew.Dataset, steps)
	for i := range out {
		labels := make([]int32, batch)
		for j := range labels {
			labels[j] = int32(rng.IntN(10))
		}
		out[i] = brew.Dataset{"data": uniformTensor(rng, batch, 1, 28, 28), "label": blob.MustFromSlice(labels, batch)}
	}
	return out
}

// trainLeNet trains LeNet on devices over the batches (initialized with a
// fixed seed) and returns the master's parameters by name.
func trainLeNet(t *testing.T, devices []int, engine string, batches []brew.Dataset) map[string][]float32 {
	t.Helper()
	return trainLeNetOn(t, netdef.CPU, devices, engine, batches)
}

// trainLeNetOn trains LeNet data-parallel on devices of a type and returns
// the master's parameters, after checking that every replica holds the
// same ones.
func trainLeNetOn(t *testing.T, devType netdef.DeviceType, devices []int, engine string, batches []brew.Dataset) map[string][]float32 {
	t.Helper()
	ws := newWorkspace(t)
	brew.ResetOptimizerInstanceCount()
	m := brew.NewModel("lenet")
	p, err := dataparallel.Parallelize(m, dataparallel.Options{
		ForwardBuilder: lenetForward, OptimizerBuilder: lenetOptimizer,
		DeviceType: devType, Devices: devices, AllreduceEngine: engine, Workspace: ws,
	})
	if err != nil {
		t.Fatal(err)
	}
	seed := uint32(5)
	for _, op := range m.InitNet.Proto().GetOp() {
		op.DeviceOption.RandomSeed = &seed
	}
	for i, b := range batches {
		if err := p.Scatter(b); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := p.RunInitNet(); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.RunNet(1); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string][]float32{}
	for _, name := range p.ParamNames() {
		v, err := ws.FetchBlob(p.DeviceBlob(devices[0], name))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = blob.Data[float32](v)
		for _, d := range devices[1:] {
			w, err := ws.FetchBlob(p.DeviceBlob(d, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := allclose(blob.Data[float32](w), out[name], 0, 0); err != nil {
				t.Errorf("%s differs from the master's: %v", p.DeviceBlob(d, name), err)
			}
		}
	}
	return out
}

// TestLeNetEquiv trains LeNet with momentum and weight decay for 50 steps
// of 8 examples on 1, 2 and 4 devices, with both all-reduce engines: every
// parameter ends equal (rtol 1e-5, atol 1e-7: float32 rounding leaves
// differences of about 2e-8 on weights that pass near zero).
func TestLeNetEquiv(t *testing.T) {
	if testing.Short() {
		t.Skip("trains LeNet 5 times")
	}
	batches := lenetBatches(11, 50, 8)
	want := trainLeNet(t, []int{0}, "", batches)
	for _, engine := range []string{comm.SumTree, comm.Ring} {
		for _, n := range []int{2, 4} {
			t.Run(fmt.Sprintf("%s/%d", engine, n), func(t *testing.T) {
				devices := make([]int, n)
				for i := range devices {
					devices[i] = i
				}
				got := trainLeNet(t, devices, engine, batches)
				for name, w := range want {
					if err := allclose(got[name], w, 1e-5, 1e-7); err != nil {
						t.Errorf("%s: %v", name, err)
					}
				}
			})
		}
	}
}
