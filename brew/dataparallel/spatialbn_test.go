package dataparallel_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/brew/dataparallel"
	"github.com/caffe2go/caffe2go/netdef"
)

const bnEpsilon = 1e-3

// runBNModel builds Caffe2's multi-device BN test model on devices (data
// [batch,1,1,1] → Tanh → SpatialBN(1 channel, epsilon 1e-3) → Sqr →
// SumElements = loss, SGD 0.1), feeds each device its rows of data, runs
// one step and returns, concatenated over the devices in order, the
// blobs tanh, bn_out, tanh_grad, and the master's bn_out_s_grad and
// bn_out_b_grad.
func runBNModel(t *testing.T, devices []int, combine bool, data []float32) (tanh, bnOut, tanhGrad []float32, sGrad, bGrad float32) {
	t.Helper()
	ws := newWorkspace(t)
	m := brew.NewModel("bn")
	p, err := dataparallel.Parallelize(m, dataparallel.Options{
		Devices: devices, CombineSpatialBN: combine, Workspace: ws,
		ForwardBuilder: func(m *brew.Model, _ float32) ([]string, error) {
			m.AddExternalInputs("data")
			brew.Tanh(m, "data", "tanh")
			spatialBN(m, "tanh", "bn_out", 1, netdef.ArgFloat("epsilon", bnEpsilon))
			m.Op("Sqr", []string{"bn_out"}, []string{"sqr"})
			op := m.Op("SumElements", []string{"sqr"}, []string{"loss"})
			return op.GetOutput(), m.Err()
		},
		OptimizerBuilder: func(m *brew.Model) error {
			_, err := brew.BuildSGD(m, brew.SGDOptions{BaseLR: 0.1})
			return err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Scatter(brew.Dataset{"data": blob.MustFromSlice(data, len(data), 1, 1, 1)}); err != nil {
		t.Fatal(err)
	}
	if err := p.RunInitNet(); err != nil {
		t.Fatal(err)
	}
	if err := p.RunNet(1); err != nil {
		t.Fatal(err)
	}
	fetch := func(d int, name string) []float32 {
		v, err := ws.FetchBlob(p.DeviceBlob(d, name))
		if err != nil {
			t.Fatal(err)
		}
		return blob.Data[float32](v)
	}
	for _, d := range devices {
		tanh = append(tanh, fetch(d, "tanh")...)
		bnOut = append(bnOut, fetch(d, "bn_out")...)
		tanhGrad = append(tanhGrad, fetch(d, "tanh_grad")...)
	}
	return tanh, bnOut, tanhGrad, fetch(devices[0], "bn_out_s_grad")[0], fetch(devices[0], "bn_out_b_grad")[0]
}

func randomData(seed uint64, n int) []float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	data := make([]float32, n)
	for i := range data {
		data[i] = float32(rng.Float64())
	}
	return data
}

// TestMultiDeviceBNOpLevel is Caffe2's test_multi_device_bn_op_level_cpu:
// with CombineSpatialBN on devices [0, 1], bn_out is batch normalization
// over the concatenated batch, and the scale, bias and input gradients
// are those of the whole batch's loss.
func TestMultiDeviceBNOpLevel(t *testing.T) {
	for _, batch := range []int{2, 4, 8} {
		tanh, bnOut, tanhGrad, sGrad, bGrad := runBNModel(t, []int{0, 1}, true, randomData(uint64(batch), 2*batch))
		var mean, variance float64
		for _, v := range tanh {
			mean += float64(v)
		}
		mean /= float64(len(tanh))
		for _, v := range tanh {
			variance += (float64(v) - mean) * (float64(v) - mean)
		}
		variance /= float64(len(tanh))
		invStd := 1 / math.Sqrt(variance+bnEpsilon)
		xhat := make([]float64, len(tanh))
		var wantB, wantS float64
		for i, v := range tanh {
			xhat[i] = (float64(v) - mean) * invStd
			if rel := math.Abs(float64(bnOut[i])-xhat[i]) / math.Max(math.Abs(xhat[i]), 1e-6); rel > 0.005 {
				t.Errorf("batch %d: bn_out[%d] = %g, want %g", batch, i, bnOut[i], xhat[i])
			}
			dy := 2 * xhat[i] // d(Σ y²)/dy
			wantB += dy
			wantS += dy * xhat[i]
		}
		if math.Abs(float64(bGrad)-wantB) > 1e-3 || math.Abs(float64(sGrad)-wantS) > 1e-3 {
			t.Errorf("batch %d: bn_out_s_grad, bn_out_b_grad = %g, %g; want %g, %g", batch, sGrad, bGrad, wantS, wantB)
		}
		n := float64(len(tanh))
		for i := range tanh {
			dx := invStd * (2*xhat[i] - wantB/n - xhat[i]*wantS/n)
			if math.Abs(float64(tanhGrad[i])-dx) > 1e-3 {
				t.Errorf("batch %d: tanh_grad[%d] = %g, want %g", batch, i, tanhGrad[i], dx)
			}
		}
	}
}

// TestMultiDeviceBNNetLevel is Caffe2's test_multi_device_bn_net_lvl_cpu:
// two devices with CombineSpatialBN give one device's results without it
// on the concatenated batch.
func TestMultiDeviceBNNetLevel(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		data := randomData(seed, 16)
		_, bnOut1, tanhGrad1, s1, b1 := runBNModel(t, []int{0}, false, data)
		_, bnOut2, tanhGrad2, s2, b2 := runBNModel(t, []int{0, 1}, true, data)
		if err := allclose(bnOut2, bnOut1, 0, 1e-3); err != nil {
			t.Errorf("seed %d: bn_out: %v", seed, err)
		}
		if err := allclose([]float32{s2, b2}, []float32{s1, b1}, 0, 1e-3); err != nil {
			t.Errorf("seed %d: bn_out_s_grad, bn_out_b_grad: %v", seed, err)
		}
		if err := allclose(tanhGrad2, tanhGrad1, 1e-3, 1e-6); err != nil {
			t.Errorf("seed %d: tanh_grad: %v", seed, err)
		}
	}
}
