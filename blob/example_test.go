package blob_test

import (
	"fmt"

	"github.com/caffe2go/caffe2go/blob"
)

// FromSlice wraps a Go slice as a tensor without copying it, and Data gives
// the slice back, so kernels and callers work on plain Go slices.
func ExampleFromSlice() {
	pixels := []float32{1, 2, 3, 4, 5, 6}
	t, err := blob.FromSlice(pixels, 2, 3)
	if err != nil {
		panic(err)
	}
	fmt.Println(t, t.Size(), t.Dim(-1))

	// No copy: writes through either slice change the tensor.
	pixels[0] = 10
	data := blob.Data[float32](t)
	data[5] = 60
	fmt.Println(data, pixels[5])

	// The shape must match the data.
	_, err = blob.FromSlice([]int64{1, 2, 3}, 2, 2)
	fmt.Println(err)
	// Output:
	// Tensor(FLOAT, [2 3]) 6 3
	// [10 2 3 4 5 60] 60
	// blob: shape [2 2] holds 4 elements, data has 3
}

// Data returns nil when asked for the wrong element type, so a type check
// and the access are one step.
func ExampleData() {
	t := blob.MustFromSlice([]int32{7, 8, 9})
	if d := blob.Data[float32](t); d == nil {
		fmt.Println("not a float32 tensor; it holds", t.DataType())
	}
	fmt.Println(blob.Data[int32](t))

	s := blob.Scalar("caffe2")
	fmt.Println(s.Shape(), blob.Data[string](s))
	// Output:
	// not a float32 tensor; it holds INT32
	// [7 8 9]
	// [] [caffe2]
}

// SerializeBlob writes the BlobProto bytes Caffe2 writes for the same blob,
// and DeserializeBlob reads them back.
func ExampleSerializeBlob() {
	var src blob.Blob
	src.Set(blob.MustFromSlice([]int8{-1, 2}))
	data, err := blob.SerializeBlob("w", &src)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%x\n", data)

	var dst blob.Blob
	name, err := blob.DeserializeBlob(data, &dst)
	fmt.Println(name, dst.Tensor(), blob.Data[int8](dst.Tensor()), err)
	// Output:
	// 0a0177120654656e736f721a1a08021007220bffffffffffffffffff01023a01775a0408001002
	// w Tensor(INT8, [2]) [-1 2] <nil>
}

// Save splits large tensors into chunks, each its own record under the key
// name#%index; they can be applied in any order.
func ExampleTensorChunksToProtos() {
	t := blob.MustFromSlice([]float64{1, 2, 3, 4, 5}, 5)
	chunks, err := blob.TensorChunksToProtos("w", t, 2)
	if err != nil {
		panic(err)
	}
	for i, c := range chunks {
		fmt.Println(blob.ChunkKey("w", i), c.GetSegment().GetBegin(), c.GetSegment().GetEnd(), c.GetDoubleData())
	}

	dst := new(blob.Tensor)
	for _, i := range []int{2, 0, 1} {
		if _, _, err := blob.ApplyTensorChunk(dst, chunks[i]); err != nil {
			panic(err)
		}
	}
	fmt.Println(blob.Data[float64](dst), blob.BlobNameFromKey("w#%2"))
	// Output:
	// w#%0 0 2 [1 2]
	// w#%1 2 4 [3 4]
	// w#%2 4 5 [5]
	// [1 2 3 4 5] w
}
