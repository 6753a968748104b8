package devicescope_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
)

func TestEqual(t *testing.T) {
	withNode := func(o *netdef.DeviceOption, node string) *netdef.DeviceOption {
		o.NodeName = proto.String(node)
		return o
	}
	withSeed := func(o *netdef.DeviceOption, seed uint32) *netdef.DeviceOption {
		o.RandomSeed = proto.Uint32(seed)
		return o
	}
	cases := []struct {
		name string
		a, b *netdef.DeviceOption
		opts devicescope.EqualOptions
		want bool
	}{
		{"both nil", nil, nil, devicescope.EqualOptions{}, true},
		{"one nil", nil, devicescope.CPU(), devicescope.EqualOptions{}, false},
		{"cpu ids ignored", devicescope.CPUDevice(0), devicescope.CPUDevice(3), devicescope.EqualOptions{}, true},
		{"cpu vs cuda", devicescope.CPU(), devicescope.CUDA(0), devicescope.EqualOptions{}, false},
		{"cuda same id", devicescope.CUDA(1), devicescope.CUDA(1), devicescope.EqualOptions{}, true},
		{"cuda other id", devicescope.CUDA(1), devicescope.CUDA(2), devicescope.EqualOptions{}, false},
		{"node ignored", withNode(devicescope.CUDA(1), "a"), withNode(devicescope.CUDA(1), "b"), devicescope.EqualOptions{}, true},
		{"node compared", withNode(devicescope.CUDA(1), "a"), withNode(devicescope.CUDA(1), "b"), devicescope.EqualOptions{CompareNodeName: true}, false},
		{"seed ignored", withSeed(devicescope.CPU(), 1), withSeed(devicescope.CPU(), 2), devicescope.EqualOptions{}, true},
		{"seed compared", withSeed(devicescope.CPU(), 1), withSeed(devicescope.CPU(), 2), devicescope.EqualOptions{CompareRandomSeed: true}, false},
	}
	for _, c := range cases {
		if got := devicescope.EqualWith(c.a, c.b, c.opts); got != c.want {
			t.Errorf("%s: EqualWith = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestKeyString(t *testing.T) {
	for opt, want := range map[*netdef.DeviceOption]string{
		nil:                          "cpu_0",
		devicescope.CPUDevice(5):     "cpu_5",
		devicescope.CUDA(2):          "gpu_2",
		netdef.NewDeviceOption(7, 1): "device7_1",
	} {
		if got := devicescope.KeyOf(opt).String(); got != want {
			t.Errorf("KeyOf(%v) = %q, want %q", opt, got, want)
		}
	}
	for typ, want := range map[netdef.DeviceType]string{
		netdef.CPU: "CPU", netdef.CUDA: "CUDA", netdef.HIP: "HIP", 42: "UNKNOWN_DEVICE_42",
	} {
		if got := typ.String(); got != want {
			t.Errorf("DeviceType(%d).String() = %q, want %q", int32(typ), got, want)
		}
	}
}

func TestNameScopes(t *testing.T) {
	var s devicescope.Scope
	foo := s.WithName("foo")
	if foo.Name() != "foo/" {
		t.Fatalf("foo scope %q", foo.Name())
	}
	if got := foo.WithName("bar").Scoped("x"); got != "foo/bar/x" {
		t.Fatalf("nested: %q", got)
	}
	if got := foo.WithNameReset("bar").Scoped("x"); got != "bar/x" {
		t.Fatalf("reset: %q", got)
	}
	if got := foo.WithName("").Scoped("x"); got != "foo/x" {
		t.Fatalf("empty prefix: %q", got)
	}
	if got := devicescope.NameScopeOf("gpu_0/fc_w"); got != "gpu_0/" {
		t.Fatalf("NameScopeOf = %q", got)
	}
	if got := devicescope.NameScopeOf("fc_w"); got != "" {
		t.Fatalf("NameScopeOf = %q", got)
	}
}

func TestDeviceScopeNodeNames(t *testing.T) {
	var s devicescope.Scope
	outer, err := s.WithDeviceNode(devicescope.CUDA(0), "node1")
	if err != nil {
		t.Fatal(err)
	}
	inner := outer.WithDevice(devicescope.CUDA(1))
	if got := inner.Device().GetNodeName(); got != "node1" {
		t.Fatalf("inner scope without node name should inherit node1, got %q", got)
	}
	if inner.Device().GetDeviceId() != 1 {
		t.Fatal("inner device not replaced")
	}
	if _, err := s.WithDeviceNode(nil, ""); err == nil {
		t.Fatal("a device scope with neither option nor node name was accepted")
	}
	nodeOnly, err := s.WithDeviceNode(nil, "n")
	if err != nil || nodeOnly.Device().GetNodeName() != "n" {
		t.Fatalf("node-only scope: %v %v", nodeOnly.Device(), err)
	}
	if s.WithDevice(devicescope.CUDA(1)).WithoutDevice().Device() != nil {
		t.Fatal("WithoutDevice kept a device")
	}
	// The scope holds a copy: changing the option afterwards changes nothing.
	opt := devicescope.CUDA(4)
	scoped := s.WithDevice(opt)
	opt.DeviceId = proto.Int32(9)
	if scoped.Device().GetDeviceId() != 4 {
		t.Fatal("scope shares the caller's option")
	}
}

func TestCurrentScopeRestores(t *testing.T) {
	devicescope.NameScope("a", func() {
		devicescope.DeviceScope(devicescope.CUDA(1), func() {
			cur := devicescope.Current()
			if cur.Name() != "a/" || cur.Device().GetDeviceId() != 1 {
				t.Fatalf("inside: %q %v", cur.Name(), cur.Device())
			}
		})
		if devicescope.Current().Device() != nil {
			t.Fatal("device scope not restored")
		}
	})
	if devicescope.Current().Name() != "" {
		t.Fatal("name scope not restored")
	}
	func() {
		defer func() { _ = recover() }()
		devicescope.NameScope("p", func() { panic("boom") })
	}()
	if devicescope.Current().Name() != "" {
		t.Fatal("name scope not restored after a panic")
	}
}

type countTask struct {
	n  *atomic.Int64
	wg *sync.WaitGroup
}

func (c countTask) Run() { c.n.Add(1); c.wg.Done() }

func TestCPUDevicesRunTasks(t *testing.T) {
	var n atomic.Int64
	var wg sync.WaitGroup
	for id := 0; id < 4; id++ {
		d, err := devicescope.Get(devicescope.CPUDevice(id))
		if err != nil {
			t.Fatal(err)
		}
		if d.Key().ID != int32(id) || d.Option().GetDeviceId() != int32(id) {
			t.Fatalf("device %d has key %v", id, d.Key())
		}
		d.EnsureWorkers(2)
		// More tasks than the queue holds: the overflow runs beside the pool.
		for i := 0; i < 3000; i++ {
			wg.Add(1)
			d.Submit(countTask{&n, &wg})
		}
	}
	wg.Wait()
	if n.Load() != 4*3000 {
		t.Fatalf("ran %d tasks", n.Load())
	}
	same, _ := devicescope.Get(devicescope.CPUDevice(2))
	again, _ := devicescope.Get(devicescope.CPUDevice(2))
	if same != again {
		t.Fatal("Get returned two devices for cpu_2")
	}
	if _, err := devicescope.Get(netdef.NewDeviceOption(netdef.CPU, -1)); err == nil {
		t.Fatal("negative device id accepted")
	}
	if devicescope.NumDevices(netdef.CPU) < 1 {
		t.Fatal("no CPU devices counted")
	}
}

func TestUnsupportedDevice(t *testing.T) {
	_, err := devicescope.Get(netdef.NewDeviceOption(netdef.DeviceType(netdef.DeviceTypeProto_PROTO_OPENGL), 0))
	if err == nil {
		t.Fatal("OPENGL device created")
	}
}
