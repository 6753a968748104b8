package sequence

import (
	"github.com/caffe2go/caffe2go/blob"
)

// copyElems copies n elements of src from sOff to dst at dOff; both have
// one element type.
func copyElems(dst *blob.Tensor, dOff int, src *blob.Tensor, sOff, n int) {
	if n <= 0 {
		return
	}
	switch dst.DataType() {
	case blob.Float32:
		cp[float32](dst, dOff, src, sOff, n)
	case blob.Float64:
		cp[float64](dst, dOff, src, sOff, n)
	case blob.Float16:
		cp[blob.Half](dst, dOff, src, sOff, n)
	case blob.Int8:
		cp[int8](dst, dOff, src, sOff, n)
	case blob.Int16:
		cp[int16](dst, dOff, src, sOff, n)
	case blob.Int32:
		cp[int32](dst, dOff, src, sOff, n)
	case blob.Int64:
		cp[int64](dst, dOff, src, sOff, n)
	case blob.Uint8:
		cp[uint8](dst, dOff, src, sOff, n)
	case blob.Uint16:
		cp[uint16](dst, dOff, src, sOff, n)
	case blob.Bool:
		cp[bool](dst, dOff, src, sOff, n)
	case blob.String:
		cp[string](dst, dOff, src, sOff, n)
	}
}

func cp[T blob.Element](dst *blob.Tensor, dOff int, src *blob.Tensor, sOff, n int) {
	copy(blob.Data[T](dst)[dOff:dOff+n], blob.Data[T](src)[sOff:sOff+n])
}

// zeroElems sets n elements of t from off to the zero value of its type
// (false, "").
func zeroElems(t *blob.Tensor, off, n int) {
	if n <= 0 {
		return
	}
	switch t.DataType() {
	case blob.Float32:
		clear(blob.Data[float32](t)[off : off+n])
	case blob.Float64:
		clear(blob.Data[float64](t)[off : off+n])
	case blob.Float16:
		clear(blob.Data[blob.Half](t)[off : off+n])
	case blob.Int8:
		clear(blob.Data[int8](t)[off : off+n])
	case blob.Int16:
		clear(blob.Data[int16](t)[off : off+n])
	case blob.Int32:
		clear(blob.Data[int32](t)[off : off+n])
	case blob.Int64:
		clear(blob.Data[int64](t)[off : off+n])
	case blob.Uint8:
		clear(blob.Data[uint8](t)[off : off+n])
	case blob.Uint16:
		clear(blob.Data[uint16](t)[off : off+n])
	case blob.Bool:
		clear(blob.Data[bool](t)[off : off+n])
	case blob.String:
		clear(blob.Data[string](t)[off : off+n])
	}
}

// addElems adds n elements of src from sOff into dst at dOff; it reports
// false for a type without arithmetic.
func addElems(dst *blob.Tensor, dOff int, src *blob.Tensor, sOff, n int) bool {
	switch dst.DataType() {
	case blob.Float32:
		add[float32](dst, dOff, src, sOff, n)
	case blob.Float64:
		add[float64](dst, dOff, src, sOff, n)
	case blob.Int8:
		add[int8](dst, dOff, src, sOff, n)
	case blob.Int16:
		add[int16](dst, dOff, src, sOff, n)
	case blob.Int32:
		add[int32](dst, dOff, src, sOff, n)
	case blob.Int64:
		add[int64](dst, dOff, src, sOff, n)
	case blob.Uint8:
		add[uint8](dst, dOff, src, sOff, n)
	case blob.Uint16:
		add[uint16](dst, dOff, src, sOff, n)
	default:
		return false
	}
	return true
}

func add[T blob.Number](dst *blob.Tensor, dOff int, src *blob.Tensor, sOff, n int) {
	d, s := blob.Data[T](dst)[dOff:dOff+n], blob.Data[T](src)[sOff:sOff+n]
	for i, v := range s {
		d[i] += v
	}
}

// isNumeric reports whether dt has arithmetic (addElems accepts it).
func isNumeric(dt blob.DataType) bool {
	switch dt {
	case blob.Float32, blob.Float64, blob.Int8, blob.Int16, blob.Int32, blob.Int64, blob.Uint8, blob.Uint16:
		return true
	}
	return false
}

// withFirst returns dims with dims[0] replaced by n (a new slice).
func withFirst(dims []int, n int) []int {
	out := append([]int{}, dims...)
	out[0] = n
	return out
}
