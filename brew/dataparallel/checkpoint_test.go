package dataparallel_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/brew/dataparallel"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/workspace"
)

// spatialBN adds Caffe2's brew.spatial_bn in training mode: scale <out>_s
// (1, Weight), bias <out>_b (0, Bias), running mean <out>_rm (0) and
// inverse variance <out>_riv (1), both computed parameters, then
// SpatialBN([in, s, b, rm, riv]) → [out, rm, riv, out_sm, out_siv]. Like
// brew's helpers it records its error in the model.
func spatialBN(m *brew.Model, in, out string, channels int, args ...*netdef.Argument) {
	params := []struct {
		suffix string
		value  float32
		tag    brew.Tag
	}{{"_s", 1, brew.Weight}, {"_b", 0, brew.Bias}, {"_rm", 0, brew.ComputedParam}, {"_riv", 1, brew.ComputedParam}}
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = m.CreateParam(out+p.suffix, []int64{int64(channels)},
			brew.Init("ConstantFill", netdef.ArgFloat("value", p.value)), p.tag)
	}
	m.Op("SpatialBN", append([]string{in}, names...),
		[]string{out, names[2], names[3], out + "_sm", out + "_siv"}, append(args, netdef.ArgInt("is_test", 0))...)
}

// TestCheckpointParams is Caffe2's test_checkpoint_params: on devices
// [1, 2, 3] the checkpoint holds the master cpu_1's parameters, their
// momentum and its computed parameters, plus optimizer_iteration, and no
// blob of another device nor the input.
func TestCheckpointParams(t *testing.T) {
	forward := func(m *brew.Model, lossScale float32) ([]string, error) {
		m.AddExternalInputs("data", "label")
		m.Op("NHWC2NCHW", []string{"data"}, []string{"data_nchw"})
		brew.Conv(m, "data_nchw", "conv1", 3, 64, 7,
			brew.WeightInit(brew.Init("MSRAFill")), brew.Stride(2), brew.Pad(3))
		spatialBN(m, "conv1", "conv1_spatbn_relu", 64, netdef.ArgFloat("epsilon", 1e-3))
		brew.Relu(m, "conv1_spatbn_relu", "conv1_spatbn_relu")
		brew.MaxPool(m, "conv1_spatbn_relu", "pool1", brew.Kernel(3), brew.Stride(2))
		brew.FC(m, "pool1", "fc", 64*56*56, 100)
		brew.Sigmoid(m, "fc", "fc_sigm")
		brew.Softmax(m, "fc_sigm", "softmax")
		m.Op("LabelCrossEntropy", []string{"softmax", "label"}, []string{"xent"})
		op := m.Op("AveragedLoss", []string{"xent"}, []string{"loss"})
		// A duplicate parameter initialization must be harmless.
		devicescope.Current().Op(m.InitNet, "ConstantFill", nil, []string{"fc_w"}, netdef.ArgInts("shape", 64*56*56, 1000))
		return op.GetOutput(), m.Err()
	}
	m, err := brew.NewModelWith("test", brew.ModelOptions{ArgScope: []brew.Option{brew.Order("NHWC")}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := dataparallel.Parallelize(m, dataparallel.Options{
		ForwardBuilder: forward, Devices: []int{1, 2, 3},
		OptimizerBuilder: func(m *brew.Model) error {
			_, err := brew.BuildSGD(m, brew.SGDOptions{BaseLR: 0.1, Policy: "fixed", Momentum: 0.9})
			return err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ckpt := p.CheckpointParams()
	has := func(b string) bool { return slices.Contains(ckpt, b) }
	if len(m.ParamsIn("cpu_1/")) == 0 || len(m.ComputedParamsIn("cpu_1/")) == 0 {
		t.Fatalf("no parameters on cpu_1: %v", m.AllParamsIn(""))
	}
	for _, param := range m.ParamsIn("cpu_1/") {
		if !has(param) || !has(param+"_momentum") {
			t.Errorf("checkpoint lacks %s or its momentum", param)
		}
	}
	for _, c := range m.ComputedParamsIn("cpu_1/") {
		if !has(c) {
			t.Errorf("checkpoint lacks computed param %s", c)
		}
	}
	for _, b := range ckpt {
		if strings.HasPrefix(b, "cpu_2/") || strings.HasPrefix(b, "cpu_3/") {
			t.Errorf("checkpoint holds %s of another device", b)
		}
	}
	if has("cpu_1/data") {
		t.Error("checkpoint holds the input cpu_1/data")
	}
	if !has("optimizer_iteration") {
		t.Errorf("checkpoint lacks optimizer_iteration: %v", ckpt)
	}
}

// TestNetConversionAndAppendNet is Caffe2's
// test_net_conversion_and_append_net: a net built elsewhere, converted
// for each device and appended inside the forward builder, trains on 4
// devices.
func TestNetConversionAndAppendNet(t *testing.T) {
	other := brew.NewModel("other")
	other.AddExternalInputs("data")
	fc1 := brew.FC(other, "data", "other_fc1", 8, 10)
	fc2 := brew.FC(other, fc1, "other_fc2", 10, 10)
	brew.FC(other, fc2, "other_fc3", 10, 10)
	if err := other.Err(); err != nil {
		t.Fatal(err)
	}

	ws := newWorkspace(t)
	m := brew.NewModel("convert")
	p, err := dataparallel.Parallelize(m, dataparallel.Options{
		Devices: []int{0, 1, 2, 3}, Workspace: ws,
		InputBuilder: func(m *brew.Model) error {
			devicescope.Current().Op(m.InitNet, "UniformFill", nil, []string{"data"}, netdef.ArgInts("shape", 32, 8))
			return nil
		},
		ForwardBuilder: func(m *brew.Model, lossScale float32) ([]string, error) {
			net, err := dataparallel.ConvertNetForDevice(other.Net.Proto(), nil)
			if err != nil {
				return nil, err
			}
			init, err := dataparallel.ConvertNetForDevice(other.InitNet.Proto(), nil)
			if err != nil {
				return nil, err
			}
			m.Net.AppendNet(net)
			m.InitNet.AppendNet(init)
			m.Op("AveragedLoss", []string{"other_fc3"}, []string{"loss"})
			op := m.Op("Scale", []string{"loss"}, []string{"loss_scaled"}, netdef.ArgFloat("scale", lossScale))
			return op.GetOutput(), m.Err()
		},
		OptimizerBuilder: func(m *brew.Model) error {
			_, err := brew.BuildSGD(m, brew.SGDOptions{BaseLR: 0.1, Policy: "fixed"})
			return err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range m.Net.Proto().GetOp() {
		if op.GetType() == "FC" {
			d := devicescope.KeyOf(op.GetDeviceOption()).String() + "/"
			if !strings.HasPrefix(op.GetInput()[1], d) || !strings.HasPrefix(op.GetOutput()[0], d) {
				t.Errorf("converted FC %v → %v runs on %s", op.GetInput(), op.GetOutput(), d)
			}
		}
	}
	if err := p.RunInitNet(); err != nil {
		t.Fatal(err)
	}
	if err := p.RunNet(1); err != nil {
		t.Fatal(err)
	}
}

// TestConvertNetForDevice checks the renaming and the errors of
// ConvertNetForDevice.
func TestConvertNetForDevice(t *testing.T) {
	net := netdef.NewNet("convert_me")
	op := net.Op("Relu", []string{"x"}, []string{"y"})
	op.ControlInput = []string{"c"}
	if err := net.AddExternalOutput("y"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		device *netdef.DeviceOption
		scope  *netdef.DeviceOption
		prefix string
		err    string
	}{
		{"cpu", devicescope.CPUDevice(2), nil, "cpu_2/", ""},
		{"gpu", devicescope.CUDA(1), nil, "gpu_1/", ""},
		{"scope", nil, devicescope.CPUDevice(5), "cpu_5/", ""},
		{"no device", nil, nil, "", "no device"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got *netdef.NetDef
			var err error
			devicescope.With(devicescope.Current().WithDevice(tc.scope), func() {
				got, err = dataparallel.ConvertNetForDevice(net.Proto(), tc.device)
			})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := got.GetOp()[0]
			want := func(names ...string) []string {
				for i := range names {
					names[i] = tc.prefix + names[i]
				}
				return names
			}
			if !slices.Equal(c.GetInput(), want("x")) || !slices.Equal(c.GetOutput(), want("y")) ||
				!slices.Equal(c.GetControlInput(), want("c")) || !slices.Equal(got.GetExternalInput(), want("x")) ||
				!slices.Equal(got.GetExternalOutput(), want("y")) {
				t.Errorf("converted: %v", got)
			}
			if devicescope.KeyOf(c.GetDeviceOption()).String()+"/" != tc.prefix {
				t.Errorf("device %v, want %s", c.GetDeviceOption(), tc.prefix)
			}
			if net.Proto().GetOp()[0].GetInput()[0] != "x" {
				t.Error("the original net changed")
			}
		})
	}
	rnn := netdef.NewNet("rnn")
	rnn.Op("RecurrentNetwork", nil, []string{"h"})
	if _, err := dataparallel.ConvertNetForDevice(rnn.Proto(), devicescope.CPUDevice(0)); err == nil {
		t.Error("converting a RecurrentNetwork net succeeded")
	}
}

// TestCheckpointResume trains 2 devices for 4 steps and saves the
// checkpoint blobs to the workspace's store; a fresh workspace on the same
// store, whose replicas start from other random values, loads the latest
// checkpoint and finalizes it: every device then holds the master's
// state, and 6 more steps give exactly the parameters of 10 uninterrupted
// steps.
func TestCheckpointResume(t *testing.T) {
	batches := rand.New(rand.NewPCG(7, 7))
	var stream []brew.Dataset
	for range 10 {
		stream = append(stream, brew.Dataset{"data": uniformTensor(batches, 8, 4), "label": uniformTensor(batches, 8, 2)})
	}
	build := func(t *testing.T, ws *workspace.Workspace, seed uint32) *dataparallel.Parallel {
		brew.ResetOptimizerInstanceCount()
		m := brew.NewModel("resume")
		p, err := dataparallel.Parallelize(m, dataparallel.Options{
			ForwardBuilder: fcForward(nil), Devices: []int{0, 1}, Workspace: ws,
			OptimizerBuilder: func(m *brew.Model) error {
				_, err := brew.BuildSGD(m, brew.SGDOptions{BaseLR: 0.05, Momentum: 0.9})
				return err
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range m.InitNet.Proto().GetOp() {
			op.DeviceOption.RandomSeed = &seed
		}
		if err := p.Scatter(stream[0]); err != nil { // CreateNet needs the inputs
			t.Fatal(err)
		}
		if err := p.RunInitNet(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	train := func(t *testing.T, p *dataparallel.Parallel, batches []brew.Dataset) {
		for _, b := range batches {
			if err := p.Scatter(b); err != nil {
				t.Fatal(err)
			}
			if err := p.RunNet(1); err != nil {
				t.Fatal(err)
			}
		}
	}

	straight := build(t, newWorkspace(t), 1)
	train(t, straight, stream)
	want := fetchAll(t, straight, "fc_w")[0]

	root := t.TempDir()
	ws := workspace.New(root)
	first := build(t, ws, 1)
	train(t, first, stream[:4])
	ckpt := first.CheckpointParams()
	if err := ws.SaveCheckpoint(4, ckpt); err != nil {
		t.Fatal(err)
	}
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}

	ws = workspace.New(root)
	t.Cleanup(func() { ws.Close() })
	second := build(t, ws, 2)
	if w := fetchAll(t, second, "fc_w"); allclose(w[0], want, 0, 0) == nil {
		t.Fatal("the second model starts where the first ended: the test proves nothing")
	}
	id, ok, err := ws.LatestCheckpoint()
	if err != nil || !ok || id != 4 {
		t.Fatalf("LatestCheckpoint = %d, %v, %v", id, ok, err)
	}
	if err := ws.LoadCheckpoint(id); err != nil {
		t.Fatal(err)
	}
	if err := second.FinalizeAfterCheckpoint(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fc_w", "fc_b", "fc_w_momentum"} {
		w := fetchAll(t, second, name)
		if err := allclose(w[1], w[0], 0, 0); err != nil {
			t.Errorf("after FinalizeAfterCheckpoint cpu_1/%s differs from cpu_0's: %v", name, err)
		}
	}
	train(t, second, stream[4:])
	if err := allclose(fetchAll(t, second, "fc_w")[0], want, 0, 0); err != nil {
		t.Errorf("resumed training differs from uninterrupted training: %v", err)
	}
	// A second call only runs the sync net again.
	if err := second.FinalizeAfterCheckpoint(); err != nil {
		t.Fatal(err)
	}
}

func fetchAll(t *testing.T, p *dataparallel.Parallel, name string) [][]float32 {
	t.Helper()
	var out [][]float32
	for _, d := range p.Devices() {
		v, err := p.Workspace().FetchBlob(p.DeviceBlob(d, name))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, blob.Data[float32](v))
	}
	return out
}
