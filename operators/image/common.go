package image

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// orderArg is the order argument of the layout-aware operators.
var orderArg = operators.ArgSpec{Name: "order", Default: "NCHW", Doc: `storage order, "NCHW" (channels along dimension 1) or "NHWC" (channels last)`}

// channelsLast reads the order argument: false for "NCHW", true for "NHWC".
// Other values are an error, as in Caffe2.
func channelsLast(b *operators.Base) (bool, error) {
	switch s := b.ArgString("order", "NCHW"); s {
	case "NCHW":
		return false, nil
	case "NHWC":
		return true, nil
	default:
		return false, b.Errorf("argument order is %q; want \"NCHW\" or \"NHWC\"", s)
	}
}

// transposeTensor transposes, for each of batch consecutive blocks of x,
// the rows×cols matrix whose elements are runs of inner values, into y:
// y[b][j][i][:] = x[b][i][j][:]. x and y hold the same element type and
// batch·rows·cols·inner elements; they must not overlap.
func transposeTensor(x, y *blob.Tensor, batch, rows, cols, inner int) {
	switch x.DataType() {
	case blob.Float32:
		transposeBlocks(blob.Data[float32](x), blob.Data[float32](y), batch, rows, cols, inner)
	case blob.Float64:
		transposeBlocks(blob.Data[float64](x), blob.Data[float64](y), batch, rows, cols, inner)
	case blob.Float16:
		transposeBlocks(blob.Data[blob.Half](x), blob.Data[blob.Half](y), batch, rows, cols, inner)
	case blob.Int8:
		transposeBlocks(blob.Data[int8](x), blob.Data[int8](y), batch, rows, cols, inner)
	case blob.Int16:
		transposeBlocks(blob.Data[int16](x), blob.Data[int16](y), batch, rows, cols, inner)
	case blob.Int32:
		transposeBlocks(blob.Data[int32](x), blob.Data[int32](y), batch, rows, cols, inner)
	case blob.Int64:
		transposeBlocks(blob.Data[int64](x), blob.Data[int64](y), batch, rows, cols, inner)
	case blob.Uint8:
		transposeBlocks(blob.Data[uint8](x), blob.Data[uint8](y), batch, rows, cols, inner)
	case blob.Uint16:
		transposeBlocks(blob.Data[uint16](x), blob.Data[uint16](y), batch, rows, cols, inner)
	case blob.Bool:
		transposeBlocks(blob.Data[bool](x), blob.Data[bool](y), batch, rows, cols, inner)
	case blob.String:
		transposeBlocks(blob.Data[string](x), blob.Data[string](y), batch, rows, cols, inner)
	}
}

// transposeBlocks is transposeTensor over slices.
func transposeBlocks[T any](x, y []T, batch, rows, cols, inner int) {
	m := rows * cols * inner
	for b := range batch {
		xb, yb := x[b*m:(b+1)*m], y[b*m:(b+1)*m]
		if inner == 1 {
			transpose2D(xb, yb, rows, cols)
			continue
		}
		for i := range rows {
			for j := range cols {
				src := (i*cols + j) * inner
				dst := (j*rows + i) * inner
				copy(yb[dst:dst+inner], xb[src:src+inner])
			}
		}
	}
}

// transposeTile is the side of the square tiles transpose2D works in, so
// that the rows it reads and the rows it writes both stay in cache.
const transposeTile = 32

// transpose2D writes the transpose of the row-major rows×cols matrix x to y.
func transpose2D[T any](x, y []T, rows, cols int) {
	x, y = x[:rows*cols], y[:rows*cols]
	for i0 := 0; i0 < rows; i0 += transposeTile {
		i1 := min(i0+transposeTile, rows)
		for j0 := 0; j0 < cols; j0 += transposeTile {
			j1 := min(j0+transposeTile, cols)
			for i := i0; i < i1; i++ {
				xr := x[i*cols+j0 : i*cols+j1]
				for j, v := range xr {
					y[(j0+j)*rows+i] = v
				}
			}
		}
	}
}
