package dataparallel

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
)

// copyOption is the device a broadcast copy to device d runs on: the
// destination GPU, or on CPU the CPU (Caffe2's _Broadcast).
func (p *Parallel) copyOption(d int) *netdef.DeviceOption {
	if p.opts.isGPU() {
		return devicescope.CUDA(d)
	}
	return devicescope.CPU()
}

// broadcast appends to net a Copy of the master's blob of the group name
// to every other device's (Caffe2's _Broadcast).
func (p *Parallel) broadcast(net *netdef.Net, name string) error {
	g := p.groups[name]
	src, ok := g[p.devices[0]]
	if !ok {
		return fmt.Errorf("cannot broadcast %q: the master %s has no copy of it", name, p.deviceName(p.devices[0]))
	}
	for _, d := range p.devices[1:] {
		dst, ok := g[d]
		if !ok {
			return fmt.Errorf("cannot broadcast %q: %s has no copy of it", name, p.deviceName(d))
		}
		op := netdef.NewOperator("Copy", []string{src}, []string{dst})
		op.DeviceOption = p.copyOption(d)
		net.AddOp(op)
	}
	return nil
}

// groupBlobs returns the group's blobs in device order, or an error unless
// every device has one.
func (p *Parallel) groupBlobs(name string) ([]string, error) {
	g := p.groups[name]
	blobs := make([]string, 0, len(p.devices))
	for _, d := range p.devices {
		b, ok := g[d]
		if !ok {
			return nil, fmt.Errorf("each device of %v should have a copy of %q; %s has none", p.devices, name, p.deviceName(d))
		}
		blobs = append(blobs, b)
	}
	return blobs, nil
}

// allReduceGradients sums every gradient over the devices, last-created
// parameter first, so that the all-reduce of the last layers' gradients
// can start while earlier layers still back-propagate (Caffe2's
// _AllReduceBlobsSingleHost). Each gradient gets one in-place Allreduce
// operator on the master device with the chosen engine; with a shared
// model the gradients are only summed into the master's copy. Across
// processes, see allReduceAcrossHosts.
func (p *Parallel) allReduceGradients() error {
	if len(p.devices) == 1 && !p.multiHost() {
		return nil
	}
	if p.multiHost() && p.rdv.Coalesce {
		return p.allReduceCoalesced(p.gradNames)
	}
	for _, name := range slices.Backward(p.gradNames) {
		if p.multiHost() {
			if err := p.allReduceAcrossHosts(name); err != nil {
				return err
			}
			continue
		}
		if len(p.groups[name]) == 1 {
			continue
		}
		blobs, err := p.groupBlobs(name)
		if err != nil {
			return err
		}
		var op *netdef.OperatorDef
		if p.opts.SharedModel {
			op = netdef.NewOperator("Sum", blobs, blobs[:1])
			op.Name = proto.String("dpm")
		} else {
			op = netdef.NewOperator("Allreduce", blobs, blobs)
			op.Name = proto.String(name)
			op.Engine = proto.String(p.opts.AllreduceEngine)
		}
		op.DeviceOption = p.DeviceOption(p.devices[0])
		p.model.Net.AddOp(op)
	}
	return nil
}

// interleaveOps reorders the train net so that operator j of every device
// come together, in device order (Caffe2's _InterleaveOps). Every device
// must have the same operators.
func (p *Parallel) interleaveOps() error {
	def := p.model.Net.Proto()
	byDevice := map[int][]*netdef.OperatorDef{}
	for i, op := range def.GetOp() {
		d := int(op.GetDeviceOption().GetDeviceId())
		if op.GetDeviceOption().Type() != p.opts.DeviceType || !slices.Contains(p.devices, d) {
			return fmt.Errorf("CombineSpatialBN: operator %d (%s) does not run on one of the devices %v", i, op.GetType(), p.devices)
		}
		byDevice[d] = append(byDevice[d], op)
	}
	n := len(byDevice[p.devices[0]])
	ops := make([]*netdef.OperatorDef, 0, len(def.Op))
	for _, d := range p.devices {
		if len(byDevice[d]) != n {
			return fmt.Errorf("CombineSpatialBN: %s has %d operators, %s has %d: the replicas must be identical",
				p.deviceName(p.devices[0]), n, p.deviceName(d), len(byDevice[d]))
		}
	}
	for j := range n {
		for _, d := range p.devices {
			op := byDevice[d][j]
			if want := byDevice[p.devices[0]][j].GetType(); op.GetType() != want {
				return fmt.Errorf("CombineSpatialBN: operator %d is %s on %s but %s on %s: the replicas must be identical",
					j, want, p.deviceName(p.devices[0]), op.GetType(), p.deviceName(d))
			}
			ops = append(ops, op)
		}
	}
	def.Op = ops
	return nil
}

// combineSpatialBN rewrites every group of interleaved training SpatialBN
// operators, and of their gradients, to use statistics over all devices
// (Caffe2's _InterDeviceBatchNormalization):
//
//   - before the SpatialBNs, each device's ChannelStats(x) → x_sums,
//     x_sumsq, summed into <x of the master>_sums_combined and
//     _sumsq_combined, which become each SpatialBN's inputs 5 and 6, with
//     num_batches = the number of devices;
//   - before the SpatialBNGradients, each device's ChannelBackpropStats
//     writes its scale and bias gradient; they are summed into
//     <master prefix><name>_combined and copied back to every device, and
//     become each gradient operator's inputs 5 and 6, with num_batches.
func (p *Parallel) combineSpatialBN() error {
	def := p.model.Net.Proto()
	nd := len(p.devices)
	master := p.DeviceOption(p.devices[0])
	newOp := func(typ string, in, out []string, dev *netdef.DeviceOption) *netdef.OperatorDef {
		op := netdef.NewOperator(typ, in, out)
		op.DeviceOption = devicescope.Clone(dev)
		return op
	}
	var ops []*netdef.OperatorDef
	for start := 0; start < len(def.Op); start += nd {
		block := def.Op[start : start+nd]
		switch typ := block[0].GetType(); {
		case typ == "SpatialBN" && netdef.FindArg(block[0].GetArg(), "is_test").GetI() == 0:
			var sums, sumsqs []string
			for _, op := range block {
				if len(op.GetInput()) != 5 || len(op.GetOutput()) != 5 {
					return fmt.Errorf("CombineSpatialBN: training SpatialBN %v → %v needs 5 inputs and 5 outputs", op.GetInput(), op.GetOutput())
				}
				x := op.GetInput()[0]
				sums, sumsqs = append(sums, x+"_sums"), append(sumsqs, x+"_sumsq")
				ops = append(ops, newOp("ChannelStats", []string{x}, []string{x + "_sums", x + "_sumsq"}, op.GetDeviceOption()))
			}
			first := block[0].GetInput()[0]
			ops = append(ops,
				newOp("Sum", sums, []string{first + "_sums_combined"}, master),
				newOp("Sum", sumsqs, []string{first + "_sumsq_combined"}, master))
			for _, op := range block {
				op.Input = append(op.Input, first+"_sums_combined", first+"_sumsq_combined")
				op.Arg = append(op.Arg, netdef.ArgInt("num_batches", int64(nd)))
				ops = append(ops, op)
			}
		case typ == "SpatialBNGradient" && netdef.FindArg(block[0].GetArg(), "is_test").GetI() == 0:
			var scaleGrads, biasGrads []string
			for _, op := range block {
				if len(op.GetInput()) != 5 || len(op.GetOutput()) != 3 {
					return fmt.Errorf("CombineSpatialBN: SpatialBNGradient %v → %v needs 5 inputs and 3 outputs", op.GetInput(), op.GetOutput())
				}
				in, out := op.GetInput(), op.GetOutput()
				scaleGrads, biasGrads = append(scaleGrads, out[1]), append(biasGrads, out[2])
				ops = append(ops, newOp("ChannelBackpropStats", []string{in[0], in[3], in[4], in[2]}, []string{out[1], out[2]}, op.GetDeviceOption()))
			}
			for _, grads := range [][]string{scaleGrads, biasGrads} {
				_, name, ok := p.split(grads[0])
				if !ok {
					return fmt.Errorf("CombineSpatialBN: gradient %q is not in a device's name scope", grads[0])
				}
				combined := p.masterPrefix() + name + "_combined"
				ops = append(ops, newOp("Sum", grads, []string{combined}, master))
				for i, g := range grads {
					ops = append(ops, newOp("Copy", []string{combined}, []string{g}, block[i].GetDeviceOption()))
				}
			}
			for _, op := range block {
				op.Input = append(op.Input, op.Output[1], op.Output[2])
				op.Arg = append(op.Arg, netdef.ArgInt("num_batches", int64(nd)))
				ops = append(ops, op)
			}
		default:
			ops = append(ops, block...)
		}
	}
	def.Op = ops
	return nil
}
