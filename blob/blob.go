package blob

import (
	"fmt"
	"reflect"
)

// Blob is a named slot's content: empty, a *Tensor, a byte string, or any
// other value (a mutex, a DB cursor, …).
type Blob struct {
	value any
}

// Get returns the blob's content (nil when empty).
func (b *Blob) Get() any { return b.value }

// Set replaces the content.
func (b *Blob) Set(v any) { b.value = v }

// Reset empties the blob.
func (b *Blob) Reset() { b.value = nil }

// IsEmpty reports whether the blob holds nothing.
func (b *Blob) IsEmpty() bool { return b.value == nil }

// IsTensor reports whether the blob holds a tensor.
func (b *Blob) IsTensor() bool {
	_, ok := b.value.(*Tensor)
	return ok
}

// Tensor returns the blob's tensor, or nil when it holds something else.
func (b *Blob) Tensor() *Tensor {
	t, _ := b.value.(*Tensor)
	return t
}

// MutableTensor returns the blob's tensor, first replacing any other content
// with an empty float32 tensor, as Caffe2's GetMutable<Tensor> does.
func (b *Blob) MutableTensor() *Tensor {
	if t, ok := b.value.(*Tensor); ok {
		return t
	}
	t := &Tensor{dtype: Float32, shape: []int{0}, mem: Host[float32]{}}
	b.value = t
	return t
}

// Bytes returns the blob's byte string and whether it holds one.
func (b *Blob) Bytes() ([]byte, bool) {
	s, ok := b.value.([]byte)
	return s, ok
}

// TypeName returns Caffe2's name for the content's type: "Tensor",
// "std::string", "nullptr" when empty, or the Go type name.
func (b *Blob) TypeName() string {
	switch v := b.value.(type) {
	case nil:
		return "nullptr"
	case *Tensor:
		return "Tensor"
	case []byte:
		return "std::string"
	case interface{ BlobTypeName() string }:
		return v.BlobTypeName()
	default:
		return reflect.TypeOf(v).String()
	}
}

// String describes the blob's content.
func (b *Blob) String() string {
	switch v := b.value.(type) {
	case *Tensor:
		return v.String()
	case []byte:
		return fmt.Sprintf("std::string(%d bytes)", len(v))
	}
	return b.TypeName()
}
