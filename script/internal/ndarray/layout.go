package ndarray

import (
	"fmt"

	"github.com/caffe2go/caffe2go/blob"
)

// Gather returns a tensor of t's type and the given shape holding t's
// elements at the flat indices idx.
func Gather(t *blob.Tensor, idx []int, shape []int) *blob.Tensor {
	switch d := t.Raw().(type) {
	case []float32:
		return gatherT(d, idx, shape)
	case []float64:
		return gatherT(d, idx, shape)
	case []blob.Half:
		return gatherT(d, idx, shape)
	case []int8:
		return gatherT(d, idx, shape)
	case []int16:
		return gatherT(d, idx, shape)
	case []int32:
		return gatherT(d, idx, shape)
	case []int64:
		return gatherT(d, idx, shape)
	case []uint8:
		return gatherT(d, idx, shape)
	case []uint16:
		return gatherT(d, idx, shape)
	case []bool:
		return gatherT(d, idx, shape)
	case []string:
		return gatherT(d, idx, shape)
	}
	panic(fmt.Sprintf("gather: unsupported tensor type %s", t.DataType()))
}

func gatherT[T blob.Element](d []T, idx []int, shape []int) *blob.Tensor {
	out := make([]T, len(idx))
	for i, j := range idx {
		out[i] = d[j]
	}
	return blob.MustFromSlice(out, Dims(shape)...)
}

// Scatter writes src's elements (already of dst's type, one per index) into
// dst at the flat indices idx.
func Scatter(dst, src *blob.Tensor, idx []int) {
	switch d := dst.Raw().(type) {
	case []float32:
		scatterT(d, src, idx)
	case []float64:
		scatterT(d, src, idx)
	case []blob.Half:
		scatterT(d, src, idx)
	case []int8:
		scatterT(d, src, idx)
	case []int16:
		scatterT(d, src, idx)
	case []int32:
		scatterT(d, src, idx)
	case []int64:
		scatterT(d, src, idx)
	case []uint8:
		scatterT(d, src, idx)
	case []uint16:
		scatterT(d, src, idx)
	case []bool:
		scatterT(d, src, idx)
	case []string:
		scatterT(d, src, idx)
	}
}

func scatterT[T blob.Element](d []T, src *blob.Tensor, idx []int) {
	s := blob.Data[T](src)
	for i, j := range idx {
		d[j] = s[i]
	}
}

// RangeIdx returns [start, start+n).
func RangeIdx(start, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = start + i
	}
	return out
}

// Transpose reverses the axes of t.
func Transpose(t *blob.Tensor) *blob.Tensor {
	dims := t.Dims()
	n := len(dims)
	out := make([]int, n)
	for i := range dims {
		out[i] = dims[n-1-i]
	}
	inStrides := make([]int, n)
	s := 1
	for i := n - 1; i >= 0; i-- {
		inStrides[i] = s
		s *= dims[i]
	}
	// Output axis i is input axis n-1-i.
	revStrides := make([]int, n)
	for i := range revStrides {
		revStrides[i] = inStrides[n-1-i]
	}
	idx := make([]int, 0, t.Size())
	var rec func(axis, base int)
	rec = func(axis, base int) {
		if axis == n {
			idx = append(idx, base)
			return
		}
		for i := 0; i < out[axis]; i++ {
			rec(axis+1, base+i*revStrides[axis])
		}
	}
	rec(0, 0)
	return Gather(t, idx, out)
}

// ConcatFlat concatenates the elements of tensors of one type into a 1-D
// tensor.
func ConcatFlat(ts []*blob.Tensor) *blob.Tensor {
	switch ts[0].Raw().(type) {
	case []float32:
		return concatT[float32](ts)
	case []float64:
		return concatT[float64](ts)
	case []blob.Half:
		return concatT[blob.Half](ts)
	case []int8:
		return concatT[int8](ts)
	case []int16:
		return concatT[int16](ts)
	case []int32:
		return concatT[int32](ts)
	case []int64:
		return concatT[int64](ts)
	case []uint8:
		return concatT[uint8](ts)
	case []uint16:
		return concatT[uint16](ts)
	case []bool:
		return concatT[bool](ts)
	}
	return concatT[string](ts)
}

func concatT[T blob.Element](ts []*blob.Tensor) *blob.Tensor {
	var out []T
	for _, t := range ts {
		out = append(out, blob.Data[T](t)...)
	}
	return blob.MustFromSlice(out)
}
