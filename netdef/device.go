package netdef

import (
	"fmt"
	"strings"
)

// DeviceType is a kind of device, the device_type field of a DeviceOption:
// Caffe2's DeviceTypeProto values (CPU 0, CUDA 1, …).
type DeviceType int32

// The device types Caffe2's Python layer names (caffe2_pb2.CPU, .CUDA,
// .HIP).
const (
	CPU  = DeviceType(DeviceTypeProto_PROTO_CPU)
	CUDA = DeviceType(DeviceTypeProto_PROTO_CUDA)
	HIP  = DeviceType(DeviceTypeProto_PROTO_HIP)
)

// String returns Caffe2's name of the type ("CPU", "CUDA", "HIP", …), or
// "UNKNOWN_DEVICE_<n>" for a value the proto does not name.
func (t DeviceType) String() string {
	if name, ok := DeviceTypeProto_name[int32(t)]; ok {
		return strings.TrimPrefix(name, "PROTO_")
	}
	return fmt.Sprintf("UNKNOWN_DEVICE_%d", int32(t))
}

// Type returns the option's device type; a nil option or an unset field is
// the CPU, as everywhere in Caffe2.
func (x *DeviceOption) Type() DeviceType { return DeviceType(x.GetDeviceType()) }
