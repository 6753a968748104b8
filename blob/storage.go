package blob

import (
	"unsafe"

	"github.com/caffe2go/caffe2go/devicescope"
)

// Host is tensor storage in Go memory: the elements themselves. It is the
// devicescope.Memory of every tensor that lives on the host; Data returns
// it as a []T. Tensors on a device with memory of its own (a
// devicescope.Allocator) keep that device's Memory instead, which no Go
// slice can reach.
type Host[T Element] []T

// Bytes returns the storage's size in bytes; a string element counts its
// header, not its text.
func (h Host[T]) Bytes() int {
	var z T
	return len(h) * int(unsafe.Sizeof(z))
}

// hostMemory is what the tensor code needs of a Host of any element type.
type hostMemory interface {
	devicescope.Memory
	// length is the number of elements.
	length() int
	// slice returns the first n elements as a []T.
	slice(n int) any
	// copyFrom copies the first n elements of src, a Host of the same
	// element type.
	copyFrom(src hostMemory, n int)
	// bytes returns the first n elements' bytes, aliasing the storage.
	// Strings have no byte image: nil.
	bytes(n int) []byte
}

func (h Host[T]) length() int { return len(h) }

func (h Host[T]) slice(n int) any { return []T(h[:n]) }

func (h Host[T]) copyFrom(src hostMemory, n int) { copy(h, src.(Host[T])[:n]) }

func (h Host[T]) bytes(n int) []byte {
	var z T
	if _, isString := any(z).(string); isString || n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(h))), n*int(unsafe.Sizeof(z)))
}

// makeHost returns zeroed host storage for n elements of type d.
func makeHost(d DataType, n int) hostMemory {
	switch d {
	case Float32:
		return make(Host[float32], n)
	case Float64:
		return make(Host[float64], n)
	case Float16:
		return make(Host[Half], n)
	case Int8:
		return make(Host[int8], n)
	case Int16:
		return make(Host[int16], n)
	case Int32:
		return make(Host[int32], n)
	case Int64:
		return make(Host[int64], n)
	case Uint8:
		return make(Host[uint8], n)
	case Uint16:
		return make(Host[uint16], n)
	case Bool:
		return make(Host[bool], n)
	case String:
		return make(Host[string], n)
	}
	return nil
}
