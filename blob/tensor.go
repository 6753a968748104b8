package blob

import (
	"fmt"
	"math"

	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
)

// Tensor is a dense array of one element type with a shape, living on a
// device. The zero value is not usable; create tensors with New, FromSlice or
// Blob.Tensor.
//
// A tensor's elements live in its storage (Storage): a Host slice in Go
// memory for CPU tensors, or a block of the device's own memory for a
// tensor on a device that has memory of its own (a GPU: a device that
// implements devicescope.Allocator). Data and Raw reach host storage only;
// CopyFrom, CopyTo and ToHost move elements between host and devices.
type Tensor struct {
	dtype  DataType
	shape  []int
	size   int
	mem    devicescope.Memory // Host[T] of the element type, or a device's block
	device *netdef.DeviceOption
}

// New returns a zero-filled tensor of the given type and shape on the CPU.
// A shape whose storage the memory budget refuses is an error (see
// CheckElements).
func New(dtype DataType, shape ...int) (*Tensor, error) {
	t := &Tensor{shape: []int{}}
	if err := t.Init(dtype, shape...); err != nil {
		return nil, err
	}
	return t, nil
}

// FromSlice returns a tensor that uses data (not a copy) with the given
// shape; no shape means a 1-D tensor of len(data). The shape's element count
// must equal len(data).
func FromSlice[T Element](data []T, shape ...int) (*Tensor, error) {
	if shape == nil {
		shape = []int{len(data)}
	}
	n, err := numElements(shape)
	if err != nil {
		return nil, err
	}
	if n != len(data) {
		return nil, fmt.Errorf("blob: shape %v holds %d elements, data has %d", shape, n, len(data))
	}
	if data == nil {
		data = []T{}
	}
	return &Tensor{dtype: TypeOf[T](), shape: append([]int{}, shape...), size: n, mem: Host[T](data)}, nil
}

// MustFromSlice is FromSlice that panics on a shape mismatch, for tests and
// examples with literal data.
func MustFromSlice[T Element](data []T, shape ...int) *Tensor {
	t, err := FromSlice(data, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// Scalar returns a 0-d tensor holding v.
func Scalar[T Element](v T) *Tensor {
	return &Tensor{dtype: TypeOf[T](), shape: []int{}, size: 1, mem: Host[T]{v}}
}

func numElements(shape []int) (int, error) {
	n := 1
	for _, d := range shape {
		if d < 0 {
			return 0, shapeError("negative dimension in shape %v", shape)
		}
		if d != 0 && n > (1<<62)/d {
			return 0, shapeError("shape %v is too large", shape)
		}
		n *= d
	}
	return n, nil
}

// checkCapacity checks the storage of n elements of dtype for a tensor of
// the given shape against the memory budget (CheckElements): every tensor
// allocation in Go memory is sized by it, so that no shape, whatever input
// it came from, asks for more memory than the process may use.
func checkCapacity(dtype DataType, n int, shape []int) error {
	if err := CheckElements(dtype, n); err != nil {
		return shapeError("shape %v of %v: %w", shape, dtype, err)
	}
	return nil
}

// shapeError formats a copy of shape, so that the caller's shape slice does
// not escape to the heap on the success path.
func shapeError(format string, shape []int, args ...any) error {
	return fmt.Errorf("blob: "+format, append([]any{append([]int(nil), shape...)}, args...)...)
}

// Data returns t's elements as a []T without copying, or nil when T is not
// t's element type or the elements live in a device's memory. Writes
// through the slice change the tensor.
func Data[T Element](t *Tensor) []T {
	s, ok := t.mem.(Host[T])
	if !ok {
		return nil
	}
	return s[:t.size]
}

// Storage returns the memory the elements live in: a Host[T] for a tensor
// in Go memory, a device's own block otherwise (nil before the tensor
// has storage). A device's operators reach their tensors' memory through
// it.
func (t *Tensor) Storage() devicescope.Memory { return t.mem }

// OnHost reports whether the elements live in Go memory, where Data and Raw
// reach them: true for CPU tensors, false for a tensor in a device's own
// memory.
func (t *Tensor) OnHost() bool {
	_, host := t.mem.(hostMemory)
	return host || t.mem == nil
}

// DataType returns the element type.
func (t *Tensor) DataType() DataType { return t.dtype }

// Shape returns a copy of the dimensions.
func (t *Tensor) Shape() []int { return append([]int{}, t.shape...) }

// Dims returns the dimensions without copying; callers must not modify them.
func (t *Tensor) Dims() []int { return t.shape }

// Dim returns dimension i; a negative i counts from the end.
func (t *Tensor) Dim(i int) int {
	if i < 0 {
		i += len(t.shape)
	}
	return t.shape[i]
}

// NumDims returns the number of dimensions.
func (t *Tensor) NumDims() int { return len(t.shape) }

// Size returns the number of elements.
func (t *Tensor) Size() int { return t.size }

// SizeFromDim returns the product of the dimensions from k on.
func (t *Tensor) SizeFromDim(k int) int {
	n := 1
	for _, d := range t.shape[k:] {
		n *= d
	}
	return n
}

// SizeToDim returns the product of the dimensions before k.
func (t *Tensor) SizeToDim(k int) int {
	n := 1
	for _, d := range t.shape[:k] {
		n *= d
	}
	return n
}

// Raw returns the elements as an any holding a []T of the element type, or
// nil when they live in a device's memory.
func (t *Tensor) Raw() any {
	h, ok := t.mem.(hostMemory)
	if !ok {
		return nil
	}
	return h.slice(t.size)
}

// Device returns a copy of the device option, nil for CPU.
func (t *Tensor) Device() *netdef.DeviceOption {
	if t.device == nil {
		return nil
	}
	return netdef.NewDeviceOption(t.device.Type(), t.device.GetDeviceId())
}

// SetDevice places the tensor on the device opt names (nil = CPU) without
// moving its elements: when that device keeps tensors in memory of its own
// and the storage lives elsewhere, or the other way round, the storage is
// dropped, and the next Init, Resize or CopyFrom allocates it on the new
// device (the shape is kept, the elements are lost). Devices without memory
// of their own, and device types this build does not have, only record the
// placement. Use CopyTo to move the elements.
func (t *Tensor) SetDevice(opt *netdef.DeviceOption) {
	if opt.Type() == netdef.CPU {
		opt = nil
	}
	if sameDevice(t.device, opt) {
		return
	}
	_, onDevice := devicescope.MemoryOf(opt)
	if t.mem != nil && (onDevice || !t.OnHost()) {
		t.mem = nil
	}
	if opt == nil {
		t.device = nil
		return
	}
	t.device = netdef.NewDeviceOption(opt.Type(), opt.GetDeviceId())
}

// NBytes returns the size of the elements in bytes; string elements count
// their lengths.
func (t *Tensor) NBytes() int {
	if t.dtype == String {
		n := 0
		for _, s := range Data[string](t) {
			n += len(s)
		}
		return n
	}
	return t.size * t.dtype.ItemSize()
}

// Reshape changes the dimensions to shape, which must hold the same number
// of elements. The data is untouched.
func (t *Tensor) Reshape(shape ...int) error {
	n, err := numElements(shape)
	if err != nil {
		return err
	}
	if n != t.size {
		return fmt.Errorf("blob: cannot reshape %v (%d elements) to %v (%d elements)", t.Shape(), t.size, append([]int(nil), shape...), n)
	}
	t.shape = append(t.shape[:0], shape...)
	return nil
}

// Resize sets the shape, keeping the element type. The storage is kept when
// it is large enough (element values are then unspecified); otherwise new
// zeroed storage is allocated.
func (t *Tensor) Resize(shape ...int) error { return t.Init(t.dtype, shape...) }

// ResizeLike gives t the shape of other, keeping t's element type.
func (t *Tensor) ResizeLike(other *Tensor) error { return t.Init(t.dtype, other.shape...) }

// Init sets the element type and the shape. Storage is kept when the type
// is unchanged and the storage holds enough elements, so that re-running an
// operator whose output shape does not grow allocates nothing. New storage
// in Go memory must fit the memory budget (CheckElements); on error t is
// unchanged.
func (t *Tensor) Init(dtype DataType, shape ...int) error {
	if !dtype.Valid() {
		return fmt.Errorf("blob: cannot create a tensor of type %v", dtype)
	}
	n, err := numElements(shape)
	if err != nil {
		return err
	}
	// The storage keeps its full capacity; t.size says how much is in use.
	if dtype != t.dtype || t.mem == nil || t.capacity() < n {
		if err := t.allocate(dtype, n, shape); err != nil {
			return err
		}
	}
	t.size = n
	if len(shape) == len(t.shape) {
		copy(t.shape, shape)
	} else {
		t.shape = append(t.shape[:0], shape...)
	}
	return nil
}

// capacity returns how many elements of t's type its storage holds (0
// before it has storage).
func (t *Tensor) capacity() int {
	switch m := t.mem.(type) {
	case nil:
		return 0
	case hostMemory:
		return m.length()
	}
	return t.mem.Bytes() / max(t.dtype.ItemSize(), 1)
}

// allocate gives t new zeroed storage for n elements of dtype on its
// device (shape is for errors): Go memory, within the memory budget, or
// the device's own memory when it has some, which its allocator bounds.
func (t *Tensor) allocate(dtype DataType, n int, shape []int) error {
	md, onDevice := devicescope.MemoryOf(t.device)
	if !onDevice {
		if err := checkCapacity(dtype, n, shape); err != nil {
			return err
		}
		t.mem, t.dtype = makeHost(dtype, n), dtype
		return nil
	}
	if dtype.ItemSize() == 0 {
		return fmt.Errorf("blob: a tensor of %v cannot live on %v", dtype, md.Key())
	}
	if n > math.MaxInt/dtype.ItemSize() {
		return shapeError("shape %v of %v is too large for %v", shape, dtype, md.Key())
	}
	m, err := md.Allocate(n * dtype.ItemSize())
	if err != nil {
		return fmt.Errorf("blob: allocating %d elements of %v on %v: %w", n, dtype, md.Key(), err)
	}
	t.mem, t.dtype = m, dtype
	return nil
}

// Clone returns a deep copy of t on t's device. A tensor in Go memory
// cannot fail to copy: its copy is sized by elements that exist, not by
// input, so the memory budget does not apply. For one in a device's memory
// Clone panics when the device cannot allocate or copy, so code handling
// device tensors calls CopyTo, which returns that error.
func (t *Tensor) Clone() *Tensor {
	if t.OnHost() {
		c := &Tensor{dtype: t.dtype, shape: append([]int{}, t.shape...), size: t.size, device: t.Device()}
		if h, ok := t.mem.(hostMemory); ok {
			m := makeHost(t.dtype, t.size)
			m.copyFrom(h, t.size)
			c.mem = m
		}
		return c
	}
	c, err := t.CopyTo(t.device)
	if err != nil {
		panic(err)
	}
	return c
}

// CopyTo returns a copy of t on the device opt names (nil = CPU): the
// elements are copied between Go memory and the devices' memories as
// needed.
func (t *Tensor) CopyTo(opt *netdef.DeviceOption) (*Tensor, error) {
	c := &Tensor{dtype: t.dtype, shape: make([]int, 0, len(t.shape))}
	c.SetDevice(opt)
	if err := c.CopyFrom(t); err != nil {
		return nil, err
	}
	return c, nil
}

// ToHost returns a copy of t in Go memory: a CPU tensor when t lives in a
// device's memory, otherwise a copy that keeps t's recorded device.
func (t *Tensor) ToHost() (*Tensor, error) {
	if t.OnHost() {
		return t.CopyTo(t.device)
	}
	return t.CopyTo(nil)
}

// CopyFrom makes t an exact copy of src (type, shape and elements), reusing
// t's storage when it can. t stays on its device; src may live on another
// one, and the elements are copied across (host to device, device to host,
// or between two devices of one type).
func (t *Tensor) CopyFrom(src *Tensor) error {
	if t == src {
		return nil
	}
	if err := t.Init(src.dtype, src.shape...); err != nil {
		return err
	}
	dst, dstHost := t.mem.(hostMemory)
	s, srcHost := src.mem.(hostMemory)
	switch {
	case dstHost && srcHost:
		dst.copyFrom(s, src.size)
	case src.size == 0:
	case srcHost:
		md, _ := devicescope.MemoryOf(t.device)
		if err := md.CopyFromHost(t.mem, 0, s.bytes(src.size)); err != nil {
			return fmt.Errorf("blob: copying %v to %v: %w", src, md.Key(), err)
		}
	case dstHost:
		md, _ := devicescope.MemoryOf(src.device)
		if err := md.CopyToHost(dst.bytes(src.size), src.mem, 0); err != nil {
			return fmt.Errorf("blob: copying %v from %v: %w", src, md.Key(), err)
		}
	default:
		md, _ := devicescope.MemoryOf(t.device)
		if err := md.CopyDevice(t.mem, 0, src.mem, 0, src.NBytes()); err != nil {
			return fmt.Errorf("blob: copying %v from %v to %v: %w", src, devicescope.KeyOf(src.device), md.Key(), err)
		}
	}
	return nil
}

// ShareData makes t a view of src's storage with src's type, shape and
// device, the way Caffe2's Alias shares memory.
func (t *Tensor) ShareData(src *Tensor) {
	t.dtype, t.size, t.mem = src.dtype, src.size, src.mem
	t.shape = append(t.shape[:0], src.shape...)
	t.device = src.device
}

// String summarizes the tensor's type and shape.
func (t *Tensor) String() string { return fmt.Sprintf("Tensor(%v, %v)", t.dtype, t.shape) }

// AsFloat64s converts any numeric tensor's elements to float64 (booleans as
// 0 or 1, halves widened); for strings it returns nil.
func (t *Tensor) AsFloat64s() []float64 {
	out := make([]float64, t.size)
	switch s := t.mem.(type) {
	case Host[float32]:
		for i := range out {
			out[i] = float64(s[i])
		}
	case Host[float64]:
		copy(out, s)
	case Host[Half]:
		for i := range out {
			out[i] = float64(s[i].Float32())
		}
	case Host[int8]:
		convert(out, s)
	case Host[int16]:
		convert(out, s)
	case Host[int32]:
		convert(out, s)
	case Host[int64]:
		convert(out, s)
	case Host[uint8]:
		convert(out, s)
	case Host[uint16]:
		convert(out, s)
	case Host[bool]:
		for i := range out {
			if s[i] {
				out[i] = 1
			}
		}
	default:
		return nil
	}
	return out
}

func convert[T Number](dst []float64, src []T) {
	for i := range dst {
		dst[i] = float64(src[i])
	}
}
