package tensor

import "github.com/caffe2go/caffe2go/blob"

// elems holds the kernels that move elements without looking at them, for
// one element type. elemsOf picks the implementation once per run, so the
// inner loops work on typed slices.
type elems interface {
	// copyMatrix copies a rows×cols block: row r of src starts at
	// srcOff+r*srcStride and goes to dstOff+r*dstStride in dst.
	copyMatrix(dst *blob.Tensor, dstOff, dstStride int, src *blob.Tensor, srcOff, srcStride, rows, cols int)
	// transpose writes dst in order, reading src at the offset given by the
	// per-dimension source strides; idx is scratch of len(dims).
	transpose(dst, src *blob.Tensor, dims, strides, idx []int)
	// gather copies, for each of outer batches, the blocks idx[i] of a
	// src batch of axisDim blocks into consecutive blocks of dst.
	gather(dst, src *blob.Tensor, idx []int, outer, axisDim, block int)
	// tile repeats each of the outer inner-sized blocks of src tiles times.
	tile(dst, src *blob.Tensor, outer, inner, tiles int)
}

type typed[T blob.Element] struct{}

// elemsOf returns the element kernels for dt, or nil for an invalid type.
func elemsOf(dt blob.DataType) elems {
	switch dt {
	case blob.Float32:
		return typed[float32]{}
	case blob.Float64:
		return typed[float64]{}
	case blob.Float16:
		return typed[blob.Half]{}
	case blob.Int8:
		return typed[int8]{}
	case blob.Int16:
		return typed[int16]{}
	case blob.Int32:
		return typed[int32]{}
	case blob.Int64:
		return typed[int64]{}
	case blob.Uint8:
		return typed[uint8]{}
	case blob.Uint16:
		return typed[uint16]{}
	case blob.Bool:
		return typed[bool]{}
	case blob.String:
		return typed[string]{}
	}
	return nil
}

func (typed[T]) copyMatrix(dst *blob.Tensor, dstOff, dstStride int, src *blob.Tensor, srcOff, srcStride, rows, cols int) {
	if rows == 0 || cols == 0 {
		return
	}
	d, s := blob.Data[T](dst), blob.Data[T](src)
	if dstStride == cols && srcStride == cols {
		n := rows * cols
		copy(d[dstOff:dstOff+n], s[srcOff:srcOff+n])
		return
	}
	for r := 0; r < rows; r++ {
		copy(d[dstOff:dstOff+cols], s[srcOff:srcOff+cols])
		dstOff += dstStride
		srcOff += srcStride
	}
}

func (typed[T]) transpose(dst, src *blob.Tensor, dims, strides, idx []int) {
	d, s := blob.Data[T](dst), blob.Data[T](src)
	if len(d) == 0 {
		return
	}
	last := len(dims) - 1
	if last < 0 {
		d[0] = s[0]
		return
	}
	inner, step := dims[last], strides[last]
	clear(idx)
	off := 0
	for o := 0; ; o += inner {
		row := d[o : o+inner]
		if step == 1 {
			copy(row, s[off:off+inner])
		} else {
			k := off
			for j := range row {
				row[j] = s[k]
				k += step
			}
		}
		// Advance the odometer over the outer output dimensions.
		k := last - 1
		for ; k >= 0; k-- {
			idx[k]++
			off += strides[k]
			if idx[k] < dims[k] {
				break
			}
			off -= strides[k] * dims[k]
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

func (typed[T]) gather(dst, src *blob.Tensor, idx []int, outer, axisDim, block int) {
	d, s := blob.Data[T](dst), blob.Data[T](src)
	n := len(idx)
	for b := 0; b < outer; b++ {
		sb, db := s[b*axisDim*block:(b+1)*axisDim*block], d[b*n*block:(b+1)*n*block]
		if block == 1 {
			for i, k := range idx {
				db[i] = sb[k]
			}
			continue
		}
		for i, k := range idx {
			copy(db[i*block:(i+1)*block], sb[k*block:(k+1)*block])
		}
	}
}

func (typed[T]) tile(dst, src *blob.Tensor, outer, inner, tiles int) {
	d, s := blob.Data[T](dst), blob.Data[T](src)
	o := 0
	for i := 0; i < outer; i++ {
		x := s[i*inner : (i+1)*inner]
		for t := 0; t < tiles; t++ {
			copy(d[o:o+inner], x)
			o += inner
		}
	}
}

// arith holds the kernels that add elements, for one numeric type.
type arith interface {
	// tileSum sums, for each of outer blocks of dst, the tiles consecutive
	// inner-sized blocks of src (the gradient of tile).
	tileSum(dst, src *blob.Tensor, outer, inner, tiles int)
	// scatterAdd zeroes dst and adds each block i of each grad batch into
	// block idx[i] of the matching dst batch (the gradient of gather).
	scatterAdd(dst, grad *blob.Tensor, idx []int, outer, axisDim, block int)
}

type numeric[T blob.Number] struct{}

// arithOf returns the arithmetic kernels for dt, or nil when dt is not a
// native numeric type.
func arithOf(dt blob.DataType) arith {
	switch dt {
	case blob.Float32:
		return numeric[float32]{}
	case blob.Float64:
		return numeric[float64]{}
	case blob.Int8:
		return numeric[int8]{}
	case blob.Int16:
		return numeric[int16]{}
	case blob.Int32:
		return numeric[int32]{}
	case blob.Int64:
		return numeric[int64]{}
	case blob.Uint8:
		return numeric[uint8]{}
	case blob.Uint16:
		return numeric[uint16]{}
	}
	return nil
}

func (numeric[T]) tileSum(dst, src *blob.Tensor, outer, inner, tiles int) {
	d, s := blob.Data[T](dst), blob.Data[T](src)
	o := 0
	for i := 0; i < outer; i++ {
		x := d[i*inner : (i+1)*inner]
		copy(x, s[o:o+inner])
		o += inner
		for t := 1; t < tiles; t++ {
			for j, v := range s[o : o+inner] {
				x[j] += v
			}
			o += inner
		}
	}
}

func (numeric[T]) scatterAdd(dst, grad *blob.Tensor, idx []int, outer, axisDim, block int) {
	d, g := blob.Data[T](dst), blob.Data[T](grad)
	clear(d)
	n := len(idx)
	for b := 0; b < outer; b++ {
		db, gb := d[b*axisDim*block:(b+1)*axisDim*block], g[b*n*block:(b+1)*n*block]
		for i, k := range idx {
			x := db[k*block : (k+1)*block]
			for j, v := range gb[i*block : (i+1)*block] {
				x[j] += v
			}
		}
	}
}

// ints returns s resized to n elements, reusing its storage when it can.
func ints(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}

// readIndices appends the values of an INT32 or INT64 tensor to dst as
// ints; ok is false for any other element type.
func readIndices(dst []int, t *blob.Tensor) ([]int, bool) {
	switch t.DataType() {
	case blob.Int32:
		for _, v := range blob.Data[int32](t) {
			dst = append(dst, int(v))
		}
	case blob.Int64:
		for _, v := range blob.Data[int64](t) {
			dst = append(dst, int(v))
		}
	default:
		return dst, false
	}
	return dst, true
}
