package blob

import (
	"fmt"
	"reflect"

	"github.com/caffe2go/caffe2go/netdef"
)

// Tensor is a dense array of one element type with a shape, living on a
// device. The zero value is not usable; create tensors with New, FromSlice or
// Blob.Tensor.
type Tensor struct {
	dtype  DataType
	shape  []int
	size   int
	data   any // a []T of the element type, len ≥ size
	device *netdef.DeviceOption
}

// New returns a zero-filled tensor of the given type and shape on the CPU.
func New(dtype DataType, shape ...int) (*Tensor, error) {
	if !dtype.Valid() {
		return nil, fmt.Errorf("blob: cannot create a tensor of type %v", dtype)
	}
	n, err := numElements(shape)
	if err != nil {
		return nil, err
	}
	if err := checkCapacity(dtype, n, shape); err != nil {
		return nil, err
	}
	return &Tensor{dtype: dtype, shape: append([]int{}, shape...), size: n, data: makeSlice(dtype, n)}, nil
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
	return &Tensor{dtype: TypeOf[T](), shape: append([]int{}, shape...), size: n, data: data}, nil
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
	return &Tensor{dtype: TypeOf[T](), shape: []int{}, size: 1, data: []T{v}}
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

// maxStorageBytes bounds the storage one tensor may ask for, so that an
// absurd shape is an error instead of a runtime panic in make.
const maxStorageBytes = 1 << 40

// checkCapacity rejects element counts whose storage would exceed
// maxStorageBytes (string elements are counted at their header size).
func checkCapacity(dtype DataType, n int, shape []int) error {
	size := dtype.ItemSize()
	if size == 0 {
		size = 16
	}
	if n > maxStorageBytes/size {
		return shapeError("shape %v needs more than 1 TiB of storage", shape)
	}
	return nil
}

// shapeError formats a copy of shape, so that the caller's shape slice does
// not escape to the heap on the success path.
func shapeError(format string, shape []int) error {
	return fmt.Errorf("blob: "+format, append([]int(nil), shape...))
}

// Data returns t's elements as a []T without copying, or nil when T is not
// t's element type. Writes through the slice change the tensor.
func Data[T Element](t *Tensor) []T {
	s, ok := t.data.([]T)
	if !ok {
		return nil
	}
	return s[:t.size]
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

// Raw returns the element slice as an any (a []T of the element type).
func (t *Tensor) Raw() any { return reflect.ValueOf(t.data).Slice(0, t.size).Interface() }

// Device returns a copy of the device option, nil for CPU.
func (t *Tensor) Device() *netdef.DeviceOption {
	if t.device == nil {
		return nil
	}
	return netdef.NewDeviceOption(t.device.GetDeviceType(), t.device.GetDeviceId())
}

// SetDevice records the device the tensor lives on (nil = CPU).
func (t *Tensor) SetDevice(opt *netdef.DeviceOption) {
	if opt == nil || opt.GetDeviceType() == netdef.CPU {
		t.device = nil
		return
	}
	t.device = netdef.NewDeviceOption(opt.GetDeviceType(), opt.GetDeviceId())
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
// operator whose output shape does not grow allocates nothing.
func (t *Tensor) Init(dtype DataType, shape ...int) error {
	if !dtype.Valid() {
		return fmt.Errorf("blob: cannot create a tensor of type %v", dtype)
	}
	n, err := numElements(shape)
	if err != nil {
		return err
	}
	// t.data always keeps its full length; t.size says how much is in use.
	if dtype != t.dtype || t.data == nil || reflect.ValueOf(t.data).Len() < n {
		if err := checkCapacity(dtype, n, shape); err != nil {
			return err
		}
		t.data = makeSlice(dtype, n)
		t.dtype = dtype
	}
	t.size = n
	if len(shape) == len(t.shape) {
		copy(t.shape, shape)
	} else {
		t.shape = append(t.shape[:0], shape...)
	}
	return nil
}

// Clone returns a deep copy of t.
func (t *Tensor) Clone() *Tensor {
	c := &Tensor{dtype: t.dtype, shape: append([]int{}, t.shape...), size: t.size, data: makeSlice(t.dtype, t.size)}
	copyElements(c.data, t.data, t.size)
	c.SetDevice(t.device)
	return c
}

// CopyFrom makes t an exact copy of src (type, shape and elements), reusing
// t's storage when it can.
func (t *Tensor) CopyFrom(src *Tensor) error {
	if t == src {
		return nil
	}
	if err := t.Init(src.dtype, src.shape...); err != nil {
		return err
	}
	copyElements(t.data, src.data, src.size)
	return nil
}

// copyElements copies the first n elements of src into dst, two slices of
// the same element type. A type switch, unlike reflect, allocates nothing.
func copyElements(dst, src any, n int) {
	switch d := dst.(type) {
	case []float32:
		copy(d, src.([]float32)[:n])
	case []float64:
		copy(d, src.([]float64)[:n])
	case []Half:
		copy(d, src.([]Half)[:n])
	case []int8:
		copy(d, src.([]int8)[:n])
	case []int16:
		copy(d, src.([]int16)[:n])
	case []int32:
		copy(d, src.([]int32)[:n])
	case []int64:
		copy(d, src.([]int64)[:n])
	case []uint8:
		copy(d, src.([]uint8)[:n])
	case []uint16:
		copy(d, src.([]uint16)[:n])
	case []bool:
		copy(d, src.([]bool)[:n])
	case []string:
		copy(d, src.([]string)[:n])
	}
}

// ShareData makes t a view of src's storage with src's type and shape, the
// way Caffe2's Alias shares memory.
func (t *Tensor) ShareData(src *Tensor) {
	t.dtype, t.size, t.data = src.dtype, src.size, src.data
	t.shape = append(t.shape[:0], src.shape...)
	t.device = src.device
}

// String summarizes the tensor's type and shape.
func (t *Tensor) String() string { return fmt.Sprintf("Tensor(%v, %v)", t.dtype, t.shape) }

// AsFloat64s converts any numeric tensor's elements to float64 (booleans as
// 0 or 1, halves widened); for strings it returns nil.
func (t *Tensor) AsFloat64s() []float64 {
	out := make([]float64, t.size)
	switch s := t.data.(type) {
	case []float32:
		for i := range out {
			out[i] = float64(s[i])
		}
	case []float64:
		copy(out, s)
	case []Half:
		for i := range out {
			out[i] = float64(s[i].Float32())
		}
	case []int8:
		convert(out, s)
	case []int16:
		convert(out, s)
	case []int32:
		convert(out, s)
	case []int64:
		convert(out, s)
	case []uint8:
		convert(out, s)
	case []uint16:
		convert(out, s)
	case []bool:
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
