package workspace_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope/devicetest"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/workspace"
)

// devIncOp is TestInc on the test device: it brings X to the host, adds
// one and puts Y back on its device, so that nets can compute on a device
// with memory of its own.
type devIncOp struct {
	*operators.Base
	host *blob.Tensor
}

func (o *devIncOp) Run() error {
	incRuns.Add(1)
	x, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	if x.OnHost() {
		return errors.New("TestInc on the test device was given a tensor in Go memory")
	}
	if err := o.host.CopyFrom(x); err != nil {
		return err
	}
	for i := range blob.Data[float32](o.host) {
		blob.Data[float32](o.host)[i]++
	}
	return o.Output(0).CopyFrom(o.host)
}

func init() {
	operators.MustRegister("TestInc", devicetest.Type, "", func(b *operators.Base) (operators.Operator, error) {
		return &devIncOp{Base: b, host: blob.MustFromSlice([]float32{})}, nil
	})
	for _, typ := range []string{"Relu", "UniformFill", "Add", "FC"} {
		operators.MustRegister(typ, devicetest.Type, "", operators.HostFallback)
	}
}

// TestHostFallback runs CPU implementations on the test device through
// operators.HostFallback: results equal the CPU's (random fillers draw the
// same numbers from the same seed), outputs live on the device, in-place
// use works, and a steady-state run allocates nothing on the device.
func TestHostFallback(t *testing.T) {
	dev := devicetest.Option(0)
	build := func(ws *workspace.Workspace, opt *netdef.DeviceOption) *netdef.Net {
		n := netdef.NewNet("fallback")
		fill := n.Op("UniformFill", nil, []string{"w"}, netdef.ArgInts("shape", 3, 4), netdef.ArgFloat("min", -1), netdef.ArgFloat("max", 1))
		fill.DeviceOption = &netdef.DeviceOption{}
		if opt != nil {
			fill.DeviceOption = proto.Clone(opt).(*netdef.DeviceOption)
		}
		fill.DeviceOption.RandomSeed = proto.Uint32(7)
		for _, op := range []*netdef.OperatorDef{
			n.Op("FC", []string{"x", "w", "b"}, []string{"y"}),
			n.Op("Relu", []string{"y"}, []string{"y"}),
			n.Op("Add", []string{"y", "y"}, []string{"z"}),
		} {
			op.DeviceOption = opt
		}
		for name, v := range map[string][]float32{"x": {1, -2, 3, 0.5, -1, 2, 0, 1}, "b": {0.1, -0.2, 0.3}} {
			shape := []int{2, 4}
			if name == "b" {
				shape = []int{3}
			}
			if err := ws.FeedBlob(name, blob.MustFromSlice(v, shape...), workspace.OnDevice(opt)); err != nil {
				t.Fatal(err)
			}
		}
		return n
	}
	cpuWS, devWS := workspace.New(""), workspace.New("")
	cpuNet, devNet := build(cpuWS, nil), build(devWS, dev)
	for _, c := range []struct {
		ws  *workspace.Workspace
		net *netdef.Net
	}{{cpuWS, cpuNet}, {devWS, devNet}} {
		if err := c.ws.CreateNet(c.net, false); err != nil {
			t.Fatal(err)
		}
		if err := c.ws.RunNet(c.net.Name(), 1); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"w", "y", "z"} {
		if devWS.GetBlob(name).Tensor().OnHost() {
			t.Errorf("%s is in Go memory, not on the device", name)
		}
		want, _ := cpuWS.FetchBlob(name)
		got, err := devWS.FetchBlob(name)
		if err != nil || !slices.Equal(blob.Data[float32](got), blob.Data[float32](want)) || !slices.Equal(got.Dims(), want.Dims()) {
			t.Errorf("%s on the device = %v %v (%v), on the CPU %v %v", name, got.Dims(), blob.Data[float32](got), err, want.Dims(), blob.Data[float32](want))
		}
	}
	before := devicetest.Get(0).Allocations()
	if err := devWS.RunNet(devNet.Name(), 3); err != nil {
		t.Fatal(err)
	}
	if n := devicetest.Get(0).Allocations() - before; n != 0 {
		t.Errorf("steady-state runs allocated %d device blocks", n)
	}
}

// TestDeviceFeedFetch feeds onto a device with memory of its own, runs a
// net there and fetches the result back to Go memory.
func TestDeviceFeedFetch(t *testing.T) {
	ws := workspace.New("")
	dev := devicetest.Option(1)
	if err := ws.FeedBlob("x", []float32{1, 2, 3}, workspace.OnDevice(dev)); err != nil {
		t.Fatal(err)
	}
	if x := ws.GetBlob("x").Tensor(); x.OnHost() || x.Device().GetDeviceId() != 1 {
		t.Fatalf("fed tensor on host %v, device %v", x.OnHost(), x.Device())
	}
	net := netdef.NewNet("dev_inc")
	net.Op("TestInc", []string{"x"}, []string{"y"}).DeviceOption = dev
	net.Op("TestInc", []string{"y"}, []string{"y"}).DeviceOption = dev
	if err := ws.RunNetOnce(net); err != nil {
		t.Fatal(err)
	}
	y, err := ws.FetchBlob("y")
	if err != nil {
		t.Fatal(err)
	}
	if !y.OnHost() || y.Device() != nil || !slices.Equal(blob.Data[float32](y), []float32{3, 4, 5}) {
		t.Fatalf("fetched %v on %v: %v", y, y.Device(), blob.Data[float32](y))
	}
	v, err := ws.FetchValue("y")
	if err != nil || !v.(*blob.Tensor).OnHost() {
		t.Fatalf("FetchValue gave %v, %v", v, err)
	}
}

// TestCopyOperatorsAcrossDevices moves data host -> device -> device ->
// host with Caffe2's copy operators, computing on the device in between,
// and checks the gradient makers pair CopyCPUToGPU with CopyGPUToCPU.
func TestCopyOperatorsAcrossDevices(t *testing.T) {
	ws := workspace.New("")
	if err := ws.FeedBlob("x", []float32{1, -1}); err != nil {
		t.Fatal(err)
	}
	d0, d2 := devicetest.Option(0), devicetest.Option(2)
	net := netdef.NewNet("copies")
	on := func(op *netdef.OperatorDef, dev *netdef.DeviceOption) { op.DeviceOption = dev }
	on(net.Op("CopyCPUToGPU", []string{"x"}, []string{"x_d0"}), d0)
	on(net.Op("TestInc", []string{"x_d0"}, []string{"y_d0"}), d0)
	on(net.Op("Copy", []string{"y_d0"}, []string{"y_d2"}), d2)
	on(net.Op("CopyOnDeviceLike", []string{"y_d2", "x_d0"}, []string{"z_d0"}), d2)
	on(net.Op("CopyGPUToCPU", []string{"y_d2"}, []string{"y"}), d2)
	on(net.Op("EnsureCPUOutput", []string{"z_d0"}, []string{"z"}), d0)
	on(net.Op("CopyFromCPUInput", []string{"y"}, []string{"w_d0"}), d0)
	if err := ws.RunNetOnce(net); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]struct {
		dev  *netdef.DeviceOption
		vals []float32
	}{
		"x_d0": {d0, []float32{1, -1}}, "y_d0": {d0, []float32{2, 0}}, "y_d2": {d2, []float32{2, 0}},
		"z_d0": {d0, []float32{2, 0}}, "y": {nil, []float32{2, 0}}, "z": {nil, []float32{2, 0}}, "w_d0": {d0, []float32{2, 0}},
	} {
		raw := ws.GetBlob(name).Tensor()
		if (want.dev == nil) != raw.OnHost() || (want.dev != nil && raw.Device().GetDeviceId() != want.dev.GetDeviceId()) {
			t.Errorf("%s lives on %v (host %v), want %v", name, raw.Device(), raw.OnHost(), want.dev)
		}
		got, err := ws.FetchBlob(name)
		if err != nil || !slices.Equal(blob.Data[float32](got), want.vals) {
			t.Errorf("%s = %v (%v), want %v", name, blob.Data[float32](got), err, want.vals)
		}
	}

	for fwd, want := range map[string]string{"CopyCPUToGPU": "CopyGPUToCPU", "CopyGPUToCPU": "CopyCPUToGPU", "Copy": "CopyOnDeviceLike"} {
		g, err := operators.GetGradientDefs(netdef.NewOperator(fwd, []string{"a"}, []string{"b"}), []operators.Gradient{operators.Dense("b_grad")})
		if err != nil || len(g.Ops) != 1 || g.Ops[0].GetType() != want {
			t.Errorf("gradient of %s: %v %v, want one %s", fwd, g, err, want)
		}
	}
}

// TestCreateNetRejectsCrossDeviceInputs checks Caffe2's rule that data
// crosses devices only through copy operators: an operator reading a blob
// that lives (or will live) in another device's memory fails at CreateNet,
// naming the operator, the blob and both devices.
func TestCreateNetRejectsCrossDeviceInputs(t *testing.T) {
	d0, d1 := devicetest.Option(0), devicetest.Option(1)
	cases := []struct {
		name  string
		feed  *netdef.DeviceOption // where x is fed
		ops   func(n *netdef.Net)
		wants []string // substrings of the error, none for success
	}{
		{"cpu blob into device op", nil, func(n *netdef.Net) {
			n.Op("TestInc", []string{"x"}, []string{"y"}).DeviceOption = d0
		}, []string{"operator 0 TestInc", `input 0 ("x")`, "cpu_0", "device1000_0", "CopyCPUToGPU"}},
		{"device blob into cpu op", d1, func(n *netdef.Net) {
			n.Op("TestInc", []string{"x"}, []string{"y"})
		}, []string{"operator 0 TestInc", `"x"`, "device1000_1", "cpu_0", "CopyGPUToCPU"}},
		{"device blob into another device", d1, func(n *netdef.Net) {
			n.Op("TestInc", []string{"x"}, []string{"y"}).DeviceOption = d0
		}, []string{`"x"`, "device1000_1", "device1000_0"}},
		{"produced on a device, read on the cpu", d0, func(n *netdef.Net) {
			n.Op("TestInc", []string{"x"}, []string{"y"}).DeviceOption = d0
			n.Op("TestInc", []string{"y"}, []string{"z"})
		}, []string{"operator 1 TestInc", `"y"`, "device1000_0", "cpu_0"}},
		{"copied to the cpu first", d0, func(n *netdef.Net) {
			n.Op("TestInc", []string{"x"}, []string{"y"}).DeviceOption = d0
			n.Op("CopyGPUToCPU", []string{"y"}, []string{"y_cpu"}).DeviceOption = d0
			n.Op("TestInc", []string{"y_cpu"}, []string{"z"})
		}, nil},
		{"stale cpu tensor overwritten on the device first", d0, func(n *netdef.Net) {
			// "y" holds a CPU tensor (fed below) until the first op writes it.
			n.Op("TestInc", []string{"x"}, []string{"y"}).DeviceOption = d0
			n.Op("TestInc", []string{"y"}, []string{"z"}).DeviceOption = d0
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := workspace.New("")
			if err := ws.FeedBlob("x", []float32{1}, workspace.OnDevice(c.feed)); err != nil {
				t.Fatal(err)
			}
			if err := ws.FeedBlob("y", []float32{7}); err != nil {
				t.Fatal(err)
			}
			n := netdef.NewNet("cross")
			c.ops(n)
			err := ws.CreateNet(n, false)
			if c.wants == nil {
				if err != nil {
					t.Fatal(err)
				}
				if err := ws.RunNet(n.Name(), 1); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("CreateNet accepted an input on the wrong device")
			}
			for _, w := range c.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}

	// A single operator is checked too, and a CPU operator never reads a
	// device's memory at run time either.
	ws := workspace.New("")
	if err := ws.FeedBlob("x", []float32{1}, workspace.OnDevice(d1)); err != nil {
		t.Fatal(err)
	}
	err := ws.RunOperatorOnce(netdef.NewOperator("TestInc", []string{"x"}, []string{"y"}))
	if err == nil || !strings.Contains(err.Error(), "device1000_1") {
		t.Errorf("RunOperatorOnce on the wrong device: %v", err)
	}
}
