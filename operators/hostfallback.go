package operators

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
)

// HostFallback is a Factory that implements an operator on any device by
// running the operator type's CPU implementation on host copies: each run
// copies the tensor inputs to Go memory, runs the CPU operator there (with
// the same arguments and random seed, so it draws the same numbers), and
// copies its outputs onto the device. A device registers it for operators
// whose work is too small or too rare to deserve a kernel of its own
// (fillers of an init net, shape queries); it is correct everywhere and
// fast nowhere. Inputs that hold something other than a tensor (a DB
// reader, a mutex) are shared with the CPU operator as they are.
func HostFallback(b *Base) (Operator, error) {
	def := proto.Clone(b.def).(*netdef.OperatorDef)
	def.Engine = nil
	def.DeviceOption = nil
	if opt := b.def.GetDeviceOption(); opt != nil && opt.RandomSeed != nil {
		def.DeviceOption = &netdef.DeviceOption{RandomSeed: proto.Uint32(opt.GetRandomSeed())}
	}
	if _, _, ok := lookup(def.GetType(), netdef.CPU, ""); !ok {
		return nil, fmt.Errorf("no CPU implementation of %s to fall back on", def.GetType())
	}
	o := &hostFallback{Base: b, ws: &hostWorkspace{parent: b.ws, blobs: map[string]*blob.Blob{}}}
	for i, name := range def.GetInput() {
		if hb, mirrored := o.ws.blobs[name]; mirrored {
			o.ins = append(o.ins, hb)
			continue
		}
		in := b.inputs[i]
		if v := in.Get(); v != nil && !in.IsTensor() {
			o.ws.blobs[name] = in // shared: not a tensor to copy
			o.ins = append(o.ins, nil)
			continue
		}
		hb := &blob.Blob{}
		o.ws.blobs[name] = hb
		o.ins = append(o.ins, hb)
	}
	for _, name := range def.GetOutput() {
		hb, ok := o.ws.blobs[name]
		if !ok {
			hb = &blob.Blob{}
			o.ws.blobs[name] = hb
		}
		o.outs = append(o.outs, hb)
	}
	cpu, err := CreateWithThreads(def, o.ws, b.index, b.threads)
	if err != nil {
		return nil, err
	}
	o.cpu = cpu
	return o, nil
}

// hostWorkspace holds the host copies a fallback's CPU operator works on;
// other names resolve in the real workspace.
type hostWorkspace struct {
	parent Workspace
	blobs  map[string]*blob.Blob
}

func (w *hostWorkspace) GetBlob(name string) *blob.Blob {
	if b, ok := w.blobs[name]; ok {
		return b
	}
	return w.parent.GetBlob(name)
}

func (w *hostWorkspace) CreateBlob(name string) *blob.Blob {
	if b, ok := w.blobs[name]; ok {
		return b
	}
	return w.parent.CreateBlob(name)
}

func (w *hostWorkspace) RootFolder() string { return w.parent.RootFolder() }

type hostFallback struct {
	*Base
	ws   *hostWorkspace
	cpu  Operator
	ins  []*blob.Blob // host copies of tensor inputs; nil where shared
	outs []*blob.Blob
}

func (o *hostFallback) Run() error {
	for i, hb := range o.ins {
		if hb == nil {
			continue
		}
		x := o.inputs[i].Tensor()
		if x == nil {
			return fmt.Errorf("input %d (%q) holds %s, not a tensor", i, o.def.Input[i], o.inputs[i].TypeName())
		}
		if err := hb.MutableTensor().CopyFrom(x); err != nil {
			return fmt.Errorf("input %d (%q) to the host: %w", i, o.def.Input[i], err)
		}
	}
	if err := RunSafely(o.cpu); err != nil {
		return err
	}
	for j, hb := range o.outs {
		t := hb.Tensor()
		if t == nil {
			o.outputs[j].Set(hb.Get())
			continue
		}
		if err := o.Output(j).CopyFrom(t); err != nil {
			return fmt.Errorf("output %d (%q) to %v: %w", j, o.def.Output[j], o.device.Key(), err)
		}
	}
	return nil
}
