package blob

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/devicescope/devicetest"
	"github.com/caffe2go/caffe2go/netdef"
)

// TestDeviceMemory moves tensors between Go memory and a device with
// memory of its own (the test device), checking that device elements are
// never visible as a Go slice and that copies in every direction keep them.
func TestDeviceMemory(t *testing.T) {
	host := MustFromSlice([]float32{1, -2, 3.5, 4, 5, 6}, 2, 3)
	d1, d2 := devicetest.Option(1), devicetest.Option(2)

	on1, err := host.CopyTo(d1)
	if err != nil {
		t.Fatal(err)
	}
	if on1.OnHost() || Data[float32](on1) != nil || on1.Raw() != nil {
		t.Fatal("a device tensor's elements are visible as a Go slice")
	}
	if _, ok := on1.Storage().(*devicetest.Memory); !ok || on1.Storage().Bytes() != 24 {
		t.Fatalf("storage %T of %d bytes, want 24 bytes of test device memory", on1.Storage(), on1.Storage().Bytes())
	}
	if !sameDevice(on1.Device(), d1) || !slices.Equal(on1.Dims(), []int{2, 3}) {
		t.Fatalf("copy is %v on %v", on1, on1.Device())
	}

	on2, err := on1.CopyTo(d2) // device to device
	if err != nil {
		t.Fatal(err)
	}
	back, err := on2.ToHost()
	if err != nil {
		t.Fatal(err)
	}
	if back.Device() != nil || !back.OnHost() || !slices.Equal(Data[float32](back), Data[float32](host)) {
		t.Fatalf("round trip gave %v on %v: %v", back, back.Device(), Data[float32](back))
	}
	if d := equalTensors(on1, on1.Clone()); d != "" {
		t.Error("Clone on a device:", d)
	}

	// CopyFrom into a device tensor reuses its block while it is large
	// enough, in either direction.
	dev := devicetest.Get(1)
	before := dev.Allocations()
	small := MustFromSlice([]float32{7, 8}, 2)
	if err := on1.CopyFrom(small); err != nil {
		t.Fatal(err)
	}
	if got := dev.Allocations() - before; got != 0 {
		t.Errorf("CopyFrom into a large enough block allocated %d blocks", got)
	}
	allocs := testing.AllocsPerRun(10, func() {
		if err := on1.Init(Float32, 2); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Init of a device tensor in steady state: %v allocations", allocs)
	}
	if err := host.CopyFrom(on1); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(Data[float32](host), []float32{7, 8}) {
		t.Errorf("CopyFrom a device tensor gave %v", Data[float32](host))
	}

	// SetDevice without a copy drops storage that lives elsewhere.
	x := MustFromSlice([]int32{1, 2, 3})
	x.SetDevice(d1)
	if x.Storage() != nil || Data[int32](x) != nil {
		t.Fatal("SetDevice kept host storage for a device with memory of its own")
	}
	if err := x.Init(Int32, 3); err != nil || x.OnHost() {
		t.Fatalf("Init after SetDevice: %v, on host %v", err, x.OnHost())
	}
	x.SetDevice(nil)
	if x.Storage() != nil {
		t.Fatal("SetDevice(nil) kept device storage")
	}
}

func TestDeviceMemoryErrors(t *testing.T) {
	strs := MustFromSlice([]string{"a"})
	if _, err := strs.CopyTo(devicetest.Option(1)); err == nil || !strings.Contains(err.Error(), "STRING") {
		t.Errorf("strings on a device: %v", err)
	}

	dev := devicetest.Get(3)
	broken := errors.New("device lost")
	dev.FailWith(broken)
	defer dev.FailWith(nil)
	_, err := MustFromSlice([]float32{1}).CopyTo(devicetest.Option(3))
	if !errors.Is(err, broken) || !strings.Contains(err.Error(), "device1000_3") {
		t.Errorf("a failing device gave %v", err)
	}
	if _, err := TensorToProto("w", MustFromSlice([]float32{1}, 1)); err != nil {
		t.Fatal(err)
	}
	dev.FailWith(nil)
	on3, err := MustFromSlice([]float32{1}).CopyTo(devicetest.Option(3))
	if err != nil {
		t.Fatal(err)
	}
	dev.FailWith(broken)
	if _, err := TensorToProto("w", on3); !errors.Is(err, broken) || !strings.Contains(err.Error(), `"w"`) {
		t.Errorf("serializing from a failing device: %v", err)
	}
	if _, err := on3.ToHost(); !errors.Is(err, broken) {
		t.Errorf("ToHost from a failing device: %v", err)
	}
}

// TestDeviceTensorProto serializes a tensor in a device's memory: the proto
// names the device and holds the elements, and deserializing it puts them
// back on that device.
func TestDeviceTensorProto(t *testing.T) {
	src, err := MustFromSlice([]float64{1.5, -2, 3}).CopyTo(devicetest.Option(2))
	if err != nil {
		t.Fatal(err)
	}
	p, err := TensorToProto("w", src)
	if err != nil {
		t.Fatal(err)
	}
	if p.GetDeviceDetail().Type() != devicetest.Type || p.GetDeviceDetail().GetDeviceId() != 2 || !slices.Equal(p.DoubleData, []float64{1.5, -2, 3}) {
		t.Fatalf("proto %v", p)
	}
	var b Blob
	if err := BlobFromProto(&netdef.BlobProto{Name: p.Name, Type: proto.String("Tensor"), Tensor: p}, &b); err != nil {
		t.Fatal(err)
	}
	if b.Tensor().OnHost() {
		t.Fatal("deserialized into Go memory, not onto the device")
	}
	if d := equalTensors(src, b.Tensor()); d != "" {
		t.Fatal(d)
	}
}
