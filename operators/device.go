package operators

import (
	"fmt"
	"slices"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
)

// hostMemory is the memory domain of everything in Go memory: the CPU's
// logical devices, and devices without memory of their own.
var hostMemory = devicescope.Key{Type: netdef.CPU}

// placedAtRunTime stands for the memory of an output that its operator
// places at run time (Schema.DynamicOutputDevices): not checked.
var placedAtRunTime = devicescope.Key{Type: AnyDevice}

// memoryOf returns the memory domain tensors placed on opt live in: the
// device itself when it has memory of its own, else the host.
func memoryOf(opt *netdef.DeviceOption) devicescope.Key {
	if _, ok := devicescope.MemoryOf(opt); ok {
		return devicescope.KeyOf(opt)
	}
	return hostMemory
}

// tensorMemory returns the memory domain a blob's tensor lives in; ok is
// false when the blob holds no tensor with storage (nothing to check).
func tensorMemory(b *blob.Blob) (devicescope.Key, bool) {
	t := b.Tensor()
	if t == nil || t.Storage() == nil || t.Size() == 0 {
		return devicescope.Key{}, false
	}
	if t.OnHost() {
		return hostMemory, true
	}
	return devicescope.KeyOf(t.Device()), true
}

// inputMemory is where the operator reads input i: Go memory for the
// schema's CPU inputs, else its device's memory.
func (b *Base) inputMemory(s *Schema, i int) devicescope.Key {
	if b.place == nil || (s != nil && slices.Contains(s.CPUInputs, i)) {
		return hostMemory
	}
	return memoryOf(b.place)
}

// outputMemory is where the operator puts output i.
func (b *Base) outputMemory(i int) devicescope.Key {
	if b.outPlace(i) == nil {
		return hostMemory
	}
	return memoryOf(b.place)
}

// outPlace is the placement of output i: the operator's device, or nil
// (the CPU) for the schema's CPU outputs.
func (b *Base) outPlace(i int) *netdef.DeviceOption {
	if i < len(b.hostOut) && b.hostOut[i] {
		return nil
	}
	return b.place
}

// CheckDevices enforces Caffe2's rule that data crosses devices only
// through explicit copy operators: walking ops in order (a net's operators,
// already created), it follows where each blob will live — in the memory
// its latest producer in ops writes it to, else where its tensor lives now —
// and reports the first operator that would read an input from another
// device's memory than the one it reads from. The error names the operator
// (its index in the net, type and name), the blob and both devices. Blobs that hold no tensor
// yet are not checked, nor are the inputs of operators whose schema lets
// inputs cross devices.
func CheckDevices(ops []Operator) error {
	where := map[*blob.Blob]devicescope.Key{}
	for _, op := range ops {
		b := op.OpBase()
		s, _ := SchemaOf(b.Type())
		if s == nil || !s.InputsCanCrossDevices {
			for j, in := range b.inputs {
				got, known := where[in]
				if !known {
					got, known = tensorMemory(in)
				}
				if want := b.inputMemory(s, j); known && got != want && got != placedAtRunTime {
					return &OpError{Index: b.index, Type: b.Type(), Name: b.def.GetName(), Err: fmt.Errorf(
						"input %d (%q) lives on %v, but the operator reads it on %v; copy it there first (%s): data crosses devices only through copy operators",
						j, b.InputName(j), got, want, copyHint(got, want))}
				}
			}
		}
		for j, out := range b.outputs {
			where[out] = b.outputMemory(j)
			if s != nil && s.DynamicOutputDevices {
				where[out] = placedAtRunTime
			}
		}
	}
	return nil
}

// copyHint names the operator that moves data from one memory to another.
func copyHint(from, to devicescope.Key) string {
	switch {
	case from == hostMemory:
		return "CopyCPUToGPU, CopyFromCPUInput"
	case to == hostMemory:
		return "CopyGPUToCPU, EnsureCPUOutput"
	}
	return "Copy with the destination's device option"
}
