package np

import (
	"fmt"
	"math"

	"go.starlark.net/starlark"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/script/internal/ndarray"
)

// reduce implements sum, mean, max, min, argmax and argmin over all
// elements (axis None, giving a scalar) or along one axis.
func reduce(kind string, t *blob.Tensor, axis starlark.Value) (starlark.Value, error) {
	if ndarray.KindOf(t.DataType()) == ndarray.KindString {
		return nil, fmt.Errorf("cannot %s an array of strings", kind)
	}
	dims := t.Dims()
	outer, n, inner := 1, t.Size(), 1
	var outShape []int
	if axis != starlark.None {
		ax, err := starlark.AsInt32(axis)
		if err != nil {
			return nil, fmt.Errorf("axis must be an int or None")
		}
		if ax < 0 {
			ax += len(dims)
		}
		if ax < 0 || ax >= len(dims) {
			return nil, fmt.Errorf("axis %s is out of bounds for array of dimension %d", axis, len(dims))
		}
		outer, n, inner = ndarray.Product(dims[:ax]), dims[ax], ndarray.Product(dims[ax+1:])
		outShape = append(append([]int{}, dims[:ax]...), dims[ax+1:]...)
	}
	if n == 0 && kind != "sum" && kind != "mean" {
		return nil, fmt.Errorf("zero-size array to reduction operation %s which has no identity", kind)
	}
	src := t.DataType()
	var dt blob.DataType
	switch {
	case kind == "argmax" || kind == "argmin":
		dt = blob.Int64
	case kind == "max" || kind == "min":
		dt = src
	case ndarray.KindOf(src) == ndarray.KindFloat:
		dt = src
	case kind == "mean":
		dt = blob.Float64
	default:
		dt = blob.Int64
	}
	m := outer * inner
	useFloat := ndarray.KindOf(src) == ndarray.KindFloat || kind == "mean"
	var fs []float64
	var is []int64
	if useFloat {
		fs = ndarray.FloatsOf(t)
	} else {
		is = ndarray.IntsOf(t)
	}
	outF := make([]float64, m)
	outI := make([]int64, m)
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			at := func(k int) int { return (o*n+k)*inner + i }
			r := o*inner + i
			if useFloat {
				outF[r], outI[r] = reduceFloats(kind, n, func(k int) float64 { return fs[at(k)] })
			} else {
				outF[r], outI[r] = reduceInts(kind, n, func(k int) int64 { return is[at(k)] })
			}
		}
	}
	var res *blob.Tensor
	var err error
	if kind == "argmax" || kind == "argmin" || !useFloat {
		res, err = ndarray.TensorFromInts(dt, outShape, outI)
	} else {
		res, err = ndarray.TensorFromFloats(dt, outShape, outF)
	}
	if err != nil {
		return nil, err
	}
	return scalarOrArray(res), nil
}

// reduceFloats reduces n values; argmax and argmin give their index in the
// second result, the others their value in the first.
func reduceFloats(kind string, n int, at func(int) float64) (float64, int64) {
	switch kind {
	case "sum", "mean":
		s := 0.0
		for k := 0; k < n; k++ {
			s += at(k)
		}
		if kind == "mean" {
			return s / float64(n), 0
		}
		return s, 0
	}
	best, bi := at(0), 0
	for k := 1; k < n && !math.IsNaN(best); k++ {
		v := at(k)
		if math.IsNaN(v) || ((kind == "max" || kind == "argmax") && v > best) || ((kind == "min" || kind == "argmin") && v < best) {
			best, bi = v, k
		}
	}
	return best, int64(bi)
}

func reduceInts(kind string, n int, at func(int) int64) (float64, int64) {
	switch kind {
	case "sum":
		var s int64
		for k := 0; k < n; k++ {
			s += at(k)
		}
		return 0, s
	}
	best, bi := at(0), 0
	for k := 1; k < n; k++ {
		v := at(k)
		if ((kind == "max" || kind == "argmax") && v > best) || ((kind == "min" || kind == "argmin") && v < best) {
			best, bi = v, k
		}
	}
	if kind == "max" || kind == "min" {
		return 0, best
	}
	return 0, int64(bi)
}
