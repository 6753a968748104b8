package devicescope

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
)

// CPU returns a CPU device option (type and id both set, as Caffe2 does).
func CPU() *netdef.DeviceOption { return netdef.NewDeviceOption(netdef.CPU, 0) }

// CPUDevice returns the option of logical CPU device id (cpu_<id>).
func CPUDevice(id int) *netdef.DeviceOption { return netdef.NewDeviceOption(netdef.CPU, int32(id)) }

// CUDA returns the option of GPU id.
func CUDA(id int) *netdef.DeviceOption { return netdef.NewDeviceOption(netdef.CUDA, int32(id)) }

// Clone returns a deep copy of opt (nil stays nil).
func Clone(opt *netdef.DeviceOption) *netdef.DeviceOption {
	if opt == nil {
		return nil
	}
	return proto.Clone(opt).(*netdef.DeviceOption)
}

// EqualOptions selects which fields Equal compares.
type EqualOptions struct {
	// CompareNodeName compares node_name (Caffe2 ignores it by default).
	CompareNodeName bool
	// CompareRandomSeed compares random_seed (Caffe2 ignores it by default).
	CompareRandomSeed bool
}

// Equal reports whether a and b name the same device, following Caffe2's
// device_option_equal with its defaults (node name and seed ignored): if
// either is nil they are equal only if both are; two CPU options are equal
// whatever their ids; otherwise the type and id must match.
func Equal(a, b *netdef.DeviceOption) bool { return EqualWith(a, b, EqualOptions{}) }

// EqualWith is Equal with explicit choices of the fields to compare.
func EqualWith(a, b *netdef.DeviceOption, o EqualOptions) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if o.CompareNodeName && a.GetNodeName() != b.GetNodeName() {
		return false
	}
	if o.CompareRandomSeed && a.GetRandomSeed() != b.GetRandomSeed() {
		return false
	}
	if a.Type() == netdef.CPU || b.Type() == netdef.CPU {
		return a.GetDeviceType() == b.GetDeviceType()
	}
	return a.GetDeviceType() == b.GetDeviceType() && a.GetDeviceId() == b.GetDeviceId()
}

// Key identifies a logical device: its type and index.
type Key struct {
	Type netdef.DeviceType
	ID   int32
}

// KeyOf returns the logical device an option names; nil means cpu_0.
func KeyOf(opt *netdef.DeviceOption) Key {
	return Key{Type: opt.Type(), ID: opt.GetDeviceId()}
}

// String returns the device's name as data-parallel prefixes spell it
// ("cpu_0", "gpu_1"), or "device<type>_<id>" for other types.
func (k Key) String() string {
	switch k.Type {
	case netdef.CPU:
		return fmt.Sprintf("cpu_%d", k.ID)
	case netdef.CUDA:
		return fmt.Sprintf("gpu_%d", k.ID)
	}
	return fmt.Sprintf("device%d_%d", int32(k.Type), k.ID)
}
