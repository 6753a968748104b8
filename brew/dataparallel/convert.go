package dataparallel

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
)

// ConvertNetForDevice returns a copy of net for device (nil: the current
// device scope's) in a data-parallel model: every operator input, output
// and control input and every external input and output gets the device's
// prefix ("cpu_<id>/" or "gpu_<id>/"), and every operator the device
// option. Inside a forward builder it lets a net built elsewhere join a
// replica (Caffe2's ConvertNetForDevice):
//
//	m.Net.AppendNet(dataparallel.ConvertNetForDevice(other.Net.Proto(), nil))
//
// Nets with RecurrentNetwork operators, whose step nets would need renaming
// too, are refused.
func ConvertNetForDevice(net *netdef.NetDef, device *netdef.DeviceOption) (*netdef.NetDef, error) {
	if device == nil {
		device = devicescope.Current().Device()
		if device == nil {
			return nil, errors.New("dataparallel: ConvertNetForDevice: no device given and no device scope")
		}
	}
	var prefix string
	switch device.Type() {
	case netdef.CPU:
		prefix = "cpu"
	case netdef.CUDA:
		prefix = "gpu"
	default:
		return nil, fmt.Errorf("dataparallel: ConvertNetForDevice: device type %s is not supported", device.Type())
	}
	scope := fmt.Sprintf("%s_%d/", prefix, device.GetDeviceId())
	c := proto.Clone(net).(*netdef.NetDef)
	addPrefix := func(names []string) {
		for i, n := range names {
			names[i] = scope + n
		}
	}
	for i, op := range c.GetOp() {
		if strings.Contains(op.GetType(), "RecurrentNetwork") {
			return nil, fmt.Errorf("dataparallel: ConvertNetForDevice: net %q, operator %d: %s is not supported", net.GetName(), i, op.GetType())
		}
		addPrefix(op.Input)
		addPrefix(op.Output)
		addPrefix(op.ControlInput)
		op.DeviceOption = devicescope.Clone(device)
	}
	addPrefix(c.ExternalInput)
	addPrefix(c.ExternalOutput)
	return c, nil
}
