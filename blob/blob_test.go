package blob

import (
	"slices"
	"sync"
	"testing"
)

func TestBlob(t *testing.T) {
	var b Blob
	if !b.IsEmpty() || b.Get() != nil || b.IsTensor() || b.Tensor() != nil || b.TypeName() != "nullptr" || b.String() != "nullptr" {
		t.Errorf("zero Blob: %v %v %q", b.IsEmpty(), b.Get(), b.TypeName())
	}
	if _, ok := b.Bytes(); ok {
		t.Error("empty blob has bytes")
	}

	x := MustFromSlice([]int32{1, 2}, 2)
	b.Set(x)
	if b.IsEmpty() || !b.IsTensor() || b.Tensor() != x || b.MutableTensor() != x || b.TypeName() != "Tensor" || b.String() != "Tensor(INT32, [2])" {
		t.Errorf("tensor blob: %v %q %q", b.Tensor(), b.TypeName(), b.String())
	}

	b.Set([]byte("hi\x00"))
	if s, ok := b.Bytes(); !ok || string(s) != "hi\x00" || b.IsTensor() || b.Tensor() != nil {
		t.Errorf("bytes blob: %q %v", s, ok)
	}
	if b.TypeName() != "std::string" || b.String() != "std::string(3 bytes)" {
		t.Errorf("bytes blob: %q %q", b.TypeName(), b.String())
	}

	// MutableTensor replaces other content with an empty float tensor.
	mt := b.MutableTensor()
	if mt.DataType() != Float32 || !slices.Equal(mt.Shape(), []int{0}) || mt.Size() != 0 || b.Tensor() != mt {
		t.Errorf("MutableTensor: %v", mt)
	}
	if err := mt.Resize(3); err != nil || len(Data[float32](mt)) != 3 {
		t.Errorf("MutableTensor then Resize: %v", err)
	}

	b.Set(&sync.Mutex{})
	if b.TypeName() != "*sync.Mutex" || b.String() != "*sync.Mutex" {
		t.Errorf("other content: %q %q", b.TypeName(), b.String())
	}
	b.Set(&counter{})
	if b.TypeName() != "test.Counter" {
		t.Errorf("BlobTypeName not used: %q", b.TypeName())
	}

	b.Reset()
	if !b.IsEmpty() {
		t.Error("Reset did not empty the blob")
	}
	var e Blob
	if mt := e.MutableTensor(); mt == nil || e.Tensor() != mt {
		t.Error("MutableTensor on an empty blob")
	}
}
