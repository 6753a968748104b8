package devicescope

import "github.com/caffe2go/caffe2go/netdef"

// Memory is a block of memory that tensors keep their elements in. Host
// memory is a Go slice (blob.Host); a device whose tensors live in memory
// of its own, such as a GPU, implements Allocator and hands out its own
// Memory values, which are never visible as Go slices.
type Memory interface {
	// Bytes returns the block's size in bytes.
	Bytes() int
}

// Allocator is the optional interface of a Device whose tensors live in
// memory of its own rather than in Go memory. Code that needs memory on a
// device finds it by type assertion, the way database/sql finds a driver's
// optional interfaces; a device without it keeps tensors in Go memory.
type Allocator interface {
	// Allocate returns a zero-filled block of at least nbytes bytes. The
	// block goes back to the device once nothing references it.
	Allocate(nbytes int) (Memory, error)
}

// Copier is the optional interface that goes with Allocator:
// it moves bytes between the host and its memory. Every copy returns once
// it is complete and is ordered after the work already submitted to the
// device, so a copy back to the host sees the results of the operators
// that ran before it.
type Copier interface {
	// CopyFromHost copies src into dst from byte offset dstOff on.
	CopyFromHost(dst Memory, dstOff int, src []byte) error
	// CopyToHost fills dst with the bytes of src from byte offset srcOff
	// on.
	CopyToHost(dst []byte, src Memory, srcOff int) error
	// CopyDevice copies nbytes bytes of src from byte offset srcOff into
	// dst from byte offset dstOff. src may belong to another device of the
	// same type (a peer copy).
	CopyDevice(dst Memory, dstOff int, src Memory, srcOff, nbytes int) error
}

// MemoryDevice is a device with its own memory: both optional interfaces.
type MemoryDevice interface {
	Device
	Allocator
	Copier
}

// MemoryOf returns the device opt names when that device keeps tensors in
// memory of its own (it implements Allocator and Copier); ok is false for
// the CPU, for a device type this build does not have, and for a device
// whose tensors live in Go memory.
func MemoryOf(opt *netdef.DeviceOption) (d MemoryDevice, ok bool) {
	if opt.Type() == netdef.CPU {
		return nil, false
	}
	dev, err := Get(opt)
	if err != nil {
		return nil, false
	}
	d, ok = dev.(MemoryDevice)
	return d, ok
}
