package tensor

import (
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

var (
	argI   = netdef.ArgInt
	argIs  = netdef.ArgInts
	argStr = netdef.ArgString
)

func strs(shape []int, v ...string) *blob.Tensor { return blob.MustFromSlice(v, shape...) }
func bools(shape []int, v ...bool) *blob.Tensor  { return blob.MustFromSlice(v, shape...) }

func halves(shape []int, v ...float32) *blob.Tensor {
	h := make([]blob.Half, len(v))
	for i, f := range v {
		h[i] = blob.HalfFromFloat32(f)
	}
	return blob.MustFromSlice(h, shape...)
}

func TestForward(t *testing.T) {
	x := []string{"X"}
	y := []string{"Y"}
	cases := []struct {
		name string
		def  *netdef.OperatorDef
		in   []*blob.Tensor
		want []*blob.Tensor
	}{
		{"Copy", op("Copy", x, y), []*blob.Tensor{f32(shp(2, 2), 1, 2, 3, 4)}, []*blob.Tensor{f32(shp(2, 2), 1, 2, 3, 4)}},
		{"Copy/empty", op("Copy", x, y), []*blob.Tensor{f32(shp(0, 3))}, []*blob.Tensor{f32(shp(0, 3))}},
		{"CopyOnDeviceLike", op("CopyOnDeviceLike", []string{"X", "L"}, y),
			[]*blob.Tensor{i64(shp(3), 7, 8, 9), f32(shp(1), 0)}, []*blob.Tensor{i64(shp(3), 7, 8, 9)}},
		{"EnsureCPUOutput", op("EnsureCPUOutput", x, y), []*blob.Tensor{strs(shp(2), "a", "b")}, []*blob.Tensor{strs(shp(2), "a", "b")}},
		{"StopGradient", op("StopGradient", x, y), []*blob.Tensor{f32(shp(), 3)}, []*blob.Tensor{f32(shp(), 3)}},
		{"Alias", op("Alias", x, y), []*blob.Tensor{f32(shp(2), 1, 2)}, []*blob.Tensor{f32(shp(2), 1, 2)}},

		{"Reshape/shape", op("Reshape", x, []string{"Y", "old"}, argIs("shape", 3, 2)),
			[]*blob.Tensor{seq(2, 3)}, []*blob.Tensor{f32(shp(3, 2), 0, 1, 2, 3, 4, 5), i64(shp(2), 2, 3)}},
		{"Reshape/zero-and-infer", op("Reshape", x, []string{"Y", "old"}, argIs("shape", 0, -1)),
			[]*blob.Tensor{seq(2, 3, 2)}, []*blob.Tensor{seq(2, 6), i64(shp(3), 2, 3, 2)}},
		{"Reshape/infer-only", op("Reshape", x, []string{"Y", "old"}, argIs("shape", -1)),
			[]*blob.Tensor{seq(2, 3)}, []*blob.Tensor{seq(6), i64(shp(2), 2, 3)}},
		{"Reshape/to-scalar", op("Reshape", x, []string{"Y", "old"}, argIs("shape")),
			[]*blob.Tensor{f32(shp(1, 1), 4)}, []*blob.Tensor{f32(shp(), 4), i64(shp(2), 1, 1)}},
		{"Reshape/input-int32", op("Reshape", []string{"X", "S"}, []string{"Y", "old"}),
			[]*blob.Tensor{seq(6), i32(shp(2), 3, -1)}, []*blob.Tensor{seq(3, 2), i32(shp(1), 6)}},
		{"Reshape/input-int64", op("Reshape", []string{"X", "S"}, []string{"Y", "old"}),
			[]*blob.Tensor{seq(2, 2), i64(shp(3), 1, 0, 2)}, []*blob.Tensor{seq(1, 2, 2), i64(shp(2), 2, 2)}},
		{"Reshape/empty-infers-zero", op("Reshape", x, []string{"Y", "old"}, argIs("shape", 0, -1)),
			[]*blob.Tensor{f32(shp(4, 0))}, []*blob.Tensor{f32(shp(0, 0)), i64(shp(2), 4, 0)}},
		{"Reshape/empty", op("Reshape", x, []string{"Y", "old"}, argIs("shape", -1, 3)),
			[]*blob.Tensor{f32(shp(2, 0, 3))}, []*blob.Tensor{f32(shp(0, 3)), i64(shp(3), 2, 0, 3)}},

		{"Flatten/default", op("Flatten", x, y), []*blob.Tensor{seq(2, 3, 4)}, []*blob.Tensor{seq(2, 12)}},
		{"Flatten/axis2", op("Flatten", x, y, argI("axis", 2)), []*blob.Tensor{seq(2, 3, 4)}, []*blob.Tensor{seq(6, 4)}},
		{"Flatten/axis0", op("Flatten", x, y, argI("axis", 0)), []*blob.Tensor{seq(2, 3, 4)}, []*blob.Tensor{seq(1, 24)}},
		{"Flatten/axis-rank", op("Flatten", x, y, argI("axis", 3)), []*blob.Tensor{seq(2, 3, 4)}, []*blob.Tensor{seq(24, 1)}},
		{"Flatten/negative", op("Flatten", x, y, argI("axis", -1)), []*blob.Tensor{seq(2, 3, 4)}, []*blob.Tensor{seq(6, 4)}},
		{"Flatten/empty", op("Flatten", x, y), []*blob.Tensor{f32(shp(0, 3, 2))}, []*blob.Tensor{f32(shp(0, 6))}},
		{"FlattenToVec", op("FlattenToVec", x, y), []*blob.Tensor{seq(2, 3)}, []*blob.Tensor{seq(6)}},
		{"FlattenToVec/empty", op("FlattenToVec", x, y), []*blob.Tensor{f32(shp(2, 0))}, []*blob.Tensor{f32(shp(0))}},
		{"ResizeLike", op("ResizeLike", []string{"X", "L"}, y),
			[]*blob.Tensor{seq(6), i32(shp(2, 3), 0, 0, 0, 0, 0, 0)}, []*blob.Tensor{seq(2, 3)}},

		{"ExpandDims", op("ExpandDims", x, y, argIs("dims", 3, 0)), []*blob.Tensor{seq(2, 3)}, []*blob.Tensor{seq(1, 2, 3, 1)}},
		{"ExpandDims/middle", op("ExpandDims", x, y, argIs("dims", 1)), []*blob.Tensor{seq(2, 3)}, []*blob.Tensor{seq(2, 1, 3)}},
		{"ExpandDims/repeated", op("ExpandDims", x, y, argIs("dims", 0, 0)), []*blob.Tensor{seq(2, 3)}, []*blob.Tensor{seq(1, 2, 3)}},
		{"ExpandDims/scalar", op("ExpandDims", x, y, argIs("dims", 0, 1)), []*blob.Tensor{f32(shp(), 5)}, []*blob.Tensor{f32(shp(1, 1), 5)}},
		{"Squeeze", op("Squeeze", x, y, argIs("dims", 2, 0)), []*blob.Tensor{seq(1, 2, 1, 3)}, []*blob.Tensor{seq(2, 3)}},
		{"Squeeze/empty", op("Squeeze", x, y, argIs("dims", 0)), []*blob.Tensor{f32(shp(1, 0))}, []*blob.Tensor{f32(shp(0))}},
		{"Shape", op("Shape", x, y), []*blob.Tensor{seq(2, 3, 4)}, []*blob.Tensor{i64(shp(3), 2, 3, 4)}},
		{"Shape/axes", op("Shape", x, y, argIs("axes", 2, 0)), []*blob.Tensor{seq(2, 3, 4)}, []*blob.Tensor{i64(shp(2), 4, 2)}},
		{"Shape/scalar", op("Shape", x, y), []*blob.Tensor{f32(shp(), 1)}, []*blob.Tensor{i64(shp(0))}},
		{"Shape/empty", op("Shape", x, y), []*blob.Tensor{f32(shp(0, 2))}, []*blob.Tensor{i64(shp(2), 0, 2)}},

		{"Concat/axis0", op("Concat", []string{"A", "B"}, []string{"Y", "info"}, argI("axis", 0)),
			[]*blob.Tensor{f32(shp(1, 2), 1, 2), f32(shp(2, 2), 3, 4, 5, 6)},
			[]*blob.Tensor{f32(shp(3, 2), 1, 2, 3, 4, 5, 6), i32(shp(2), 1, 2)}},
		{"Concat/axis1", op("Concat", []string{"A", "B"}, []string{"Y", "info"}, argI("axis", 1)),
			[]*blob.Tensor{f32(shp(2, 2), 1, 2, 3, 4), f32(shp(2, 1), 5, 6)},
			[]*blob.Tensor{f32(shp(2, 3), 1, 2, 5, 3, 4, 6), i32(shp(2), 2, 1)}},
		{"Concat/negative", op("Concat", []string{"A", "B"}, []string{"Y", "info"}, argI("axis", -1)),
			[]*blob.Tensor{f32(shp(2, 2), 1, 2, 3, 4), f32(shp(2, 1), 5, 6)},
			[]*blob.Tensor{f32(shp(2, 3), 1, 2, 5, 3, 4, 6), i32(shp(2), 2, 1)}},
		{"Concat/order-default", op("Concat", []string{"A", "B"}, []string{"Y", "info"}),
			[]*blob.Tensor{f32(shp(2, 2), 1, 2, 3, 4), f32(shp(2, 1), 5, 6)},
			[]*blob.Tensor{f32(shp(2, 3), 1, 2, 5, 3, 4, 6), i32(shp(2), 2, 1)}},
		{"Concat/NHWC", op("Concat", []string{"A", "B"}, []string{"Y", "info"}, argStr("order", "NHWC")),
			[]*blob.Tensor{f32(shp(2, 1, 1, 2), 1, 2, 3, 4), f32(shp(2, 1, 1, 1), 5, 6)},
			[]*blob.Tensor{f32(shp(2, 1, 1, 3), 1, 2, 5, 3, 4, 6), i32(shp(2), 2, 1)}},
		{"Concat/add_axis", op("Concat", []string{"A", "B"}, []string{"Y", "info"}, argI("axis", 1), argI("add_axis", 1)),
			[]*blob.Tensor{f32(shp(2, 2), 1, 2, 3, 4), f32(shp(2, 2), 5, 6, 7, 8)},
			[]*blob.Tensor{f32(shp(2, 2, 2), 1, 2, 5, 6, 3, 4, 7, 8), i32(shp(2), 1, 1)}},
		{"Concat/add_axis-last", op("Concat", []string{"A", "B"}, []string{"Y", "info"}, argI("axis", -1), argI("add_axis", 1)),
			[]*blob.Tensor{f32(shp(2, 2), 1, 2, 3, 4), f32(shp(2, 2), 5, 6, 7, 8)},
			[]*blob.Tensor{f32(shp(2, 2, 2), 1, 5, 2, 6, 3, 7, 4, 8), i32(shp(2), 1, 1)}},
		{"Concat/empty-input", op("Concat", []string{"A", "B"}, []string{"Y", "info"}, argI("axis", 1)),
			[]*blob.Tensor{f32(shp(2, 0)), f32(shp(2, 1), 5, 6)},
			[]*blob.Tensor{f32(shp(2, 1), 5, 6), i32(shp(2), 0, 1)}},
		{"Concat/one", op("Concat", []string{"A"}, []string{"Y", "info"}, argI("axis", 0)),
			[]*blob.Tensor{i64(shp(2), 1, 2)}, []*blob.Tensor{i64(shp(2), 1, 2), i32(shp(1), 2)}},

		{"Split/arg", op("Split", x, []string{"A", "B"}, argI("axis", 1), argIs("split", 2, 3)),
			[]*blob.Tensor{seq(2, 5)},
			[]*blob.Tensor{f32(shp(2, 2), 0, 1, 5, 6), f32(shp(2, 3), 2, 3, 4, 7, 8, 9)}},
		{"Split/negative", op("Split", x, []string{"A", "B"}, argI("axis", -1), argIs("split", 2, 3)),
			[]*blob.Tensor{seq(2, 5)},
			[]*blob.Tensor{f32(shp(2, 2), 0, 1, 5, 6), f32(shp(2, 3), 2, 3, 4, 7, 8, 9)}},
		{"Split/equal", op("Split", x, []string{"A", "B"}, argI("axis", 0)),
			[]*blob.Tensor{seq(4)}, []*blob.Tensor{f32(shp(2), 0, 1), f32(shp(2), 2, 3)}},
		{"Split/input", op("Split", []string{"X", "S"}, []string{"A", "B"}, argI("axis", 0)),
			[]*blob.Tensor{seq(4), i32(shp(2), 1, 3)}, []*blob.Tensor{f32(shp(1), 0), f32(shp(3), 1, 2, 3)}},
		{"Split/order-default", op("Split", x, []string{"A", "B"}),
			[]*blob.Tensor{seq(1, 4, 1, 1)}, []*blob.Tensor{f32(shp(1, 2, 1, 1), 0, 1), f32(shp(1, 2, 1, 1), 2, 3)}},
		{"Split/add_axis", op("Split", x, []string{"A", "B"}, argI("axis", 1), argI("add_axis", 1)),
			[]*blob.Tensor{seq(2, 2, 3)},
			[]*blob.Tensor{f32(shp(2, 3), 0, 1, 2, 6, 7, 8), f32(shp(2, 3), 3, 4, 5, 9, 10, 11)}},
		{"Split/empty-part", op("Split", x, []string{"A", "B"}, argI("axis", 0), argIs("split", 0, 2)),
			[]*blob.Tensor{seq(2, 1)}, []*blob.Tensor{f32(shp(0, 1)), f32(shp(2, 1), 0, 1)}},

		{"Transpose/default", op("Transpose", x, y), []*blob.Tensor{seq(2, 3)}, []*blob.Tensor{f32(shp(3, 2), 0, 3, 1, 4, 2, 5)}},
		{"Transpose/102", op("Transpose", x, y, argIs("axes", 1, 0, 2)), []*blob.Tensor{seq(2, 3, 4)},
			[]*blob.Tensor{f32(shp(3, 2, 4), 0, 1, 2, 3, 12, 13, 14, 15, 4, 5, 6, 7, 16, 17, 18, 19, 8, 9, 10, 11, 20, 21, 22, 23)}},
		{"Transpose/reverse3", op("Transpose", x, y), []*blob.Tensor{seq(2, 3, 4)},
			[]*blob.Tensor{f32(shp(4, 3, 2), 0, 12, 4, 16, 8, 20, 1, 13, 5, 17, 9, 21, 2, 14, 6, 18, 10, 22, 3, 15, 7, 19, 11, 23)}},
		{"Transpose/201", op("Transpose", x, y, argIs("axes", 2, 0, 1)), []*blob.Tensor{seq(2, 3, 4)},
			[]*blob.Tensor{f32(shp(4, 2, 3), 0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23)}},
		{"Transpose/1d", op("Transpose", x, y), []*blob.Tensor{seq(3)}, []*blob.Tensor{seq(3)}},
		{"Transpose/scalar", op("Transpose", x, y), []*blob.Tensor{f32(shp(), 5)}, []*blob.Tensor{f32(shp(), 5)}},
		{"Transpose/empty", op("Transpose", x, y), []*blob.Tensor{f32(shp(0, 3))}, []*blob.Tensor{f32(shp(3, 0))}},

		{"Cast/f32-int32", op("Cast", x, y, argI("to", int64(netdef.TensorProto_INT32))),
			[]*blob.Tensor{f32(shp(3), 1.5, -2.7, 0)}, []*blob.Tensor{i32(shp(3), 1, -2, 0)}},
		{"Cast/name", op("Cast", x, y, argStr("to", "int64")),
			[]*blob.Tensor{f32(shp(2), 3.9, -1)}, []*blob.Tensor{i64(shp(2), 3, -1)}},
		{"Cast/default-float", op("Cast", x, y), []*blob.Tensor{i64(shp(1, 2), 3, -4)}, []*blob.Tensor{f32(shp(1, 2), 3, -4)}},
		{"Cast/to-bool", op("Cast", x, y, argI("to", int64(netdef.TensorProto_BOOL))),
			[]*blob.Tensor{f32(shp(3), 1.5, -2.7, 0)}, []*blob.Tensor{bools(shp(3), true, true, false)}},
		{"Cast/from-bool", op("Cast", x, y, argI("to", int64(netdef.TensorProto_DOUBLE))),
			[]*blob.Tensor{bools(shp(2), true, false)}, []*blob.Tensor{f64(shp(2), 1, 0)}},
		{"Cast/to-string", op("Cast", x, y, argI("to", int64(netdef.TensorProto_STRING))),
			[]*blob.Tensor{f32(shp(2), 1.5, -2)}, []*blob.Tensor{strs(shp(2), "1.500000", "-2.000000")}},
		{"Cast/int-string", op("Cast", x, y, argI("to", int64(netdef.TensorProto_STRING))),
			[]*blob.Tensor{blob.MustFromSlice([]uint8{7, 200})}, []*blob.Tensor{strs(shp(2), "7", "200")}},
		{"Cast/bool-string", op("Cast", x, y, argI("to", int64(netdef.TensorProto_STRING))),
			[]*blob.Tensor{bools(shp(2), true, false)}, []*blob.Tensor{strs(shp(2), "1", "0")}},
		{"Cast/to-half", op("Cast", x, y, argI("to", int64(netdef.TensorProto_FLOAT16))),
			[]*blob.Tensor{f64(shp(2), 1.5, -0.25)}, []*blob.Tensor{halves(shp(2), 1.5, -0.25)}},
		{"Cast/from-half", op("Cast", x, y, argI("to", int64(netdef.TensorProto_INT16))),
			[]*blob.Tensor{halves(shp(2), 2.5, -3)}, []*blob.Tensor{blob.MustFromSlice([]int16{2, -3})}},
		{"Cast/f64-uint8", op("Cast", x, y, argI("to", int64(netdef.TensorProto_UINT8))),
			[]*blob.Tensor{f64(shp(1), 200.7)}, []*blob.Tensor{blob.MustFromSlice([]uint8{200})}},
		{"Cast/empty", op("Cast", x, y, argI("to", int64(netdef.TensorProto_INT8))),
			[]*blob.Tensor{f32(shp(0, 2))}, []*blob.Tensor{blob.MustFromSlice([]int8{}, 0, 2)}},

		{"Gather/2d-indices", op("Gather", []string{"D", "I"}, y),
			[]*blob.Tensor{f32(shp(3, 2), 1, 1.2, 2.3, 3.4, 4.5, 5.7), i32(shp(2, 2), 0, 1, 1, 2)},
			[]*blob.Tensor{f32(shp(2, 2, 2), 1, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7)}},
		{"Gather/negative-index", op("Gather", []string{"D", "I"}, y),
			[]*blob.Tensor{seq(3, 2), i64(shp(2), -1, 0)}, []*blob.Tensor{f32(shp(2, 2), 4, 5, 0, 1)}},
		{"Gather/axis1", op("Gather", []string{"D", "I"}, y, argI("axis", 1)),
			[]*blob.Tensor{seq(2, 3), i32(shp(2), 2, 0)}, []*blob.Tensor{f32(shp(2, 2), 2, 0, 5, 3)}},
		{"Gather/axis-negative-wrap", op("Gather", []string{"D", "I"}, y, argI("axis", -1), argI("wrap_indices", 1)),
			[]*blob.Tensor{seq(2, 3), i32(shp(1), -1)}, []*blob.Tensor{f32(shp(2, 1), 2, 5)}},
		{"Gather/no-indices", op("Gather", []string{"D", "I"}, y),
			[]*blob.Tensor{seq(1, 10, 20), i32(shp(0))}, []*blob.Tensor{f32(shp(0, 10, 20))}},
		{"Gather/empty-data", op("Gather", []string{"D", "I"}, y),
			[]*blob.Tensor{f32(shp(0, 3)), i32(shp(0))}, []*blob.Tensor{f32(shp(0, 3))}},
		{"BatchGatherGradient", op("BatchGatherGradient", []string{"D", "I", "G"}, y, argI("axis", 1)),
			[]*blob.Tensor{f32(shp(2, 3), 0, 0, 0, 0, 0, 0), i64(shp(3), 2, 0, 2), f32(shp(2, 3), 1, 2, 3, 4, 5, 6)},
			[]*blob.Tensor{f32(shp(2, 3), 2, 0, 4, 5, 0, 10)}},

		{"OneHot", op("OneHot", []string{"I", "N"}, y),
			[]*blob.Tensor{i64(shp(3), 0, 2, 1), i64(shp(), 3)},
			[]*blob.Tensor{f32(shp(3, 3), 1, 0, 0, 0, 0, 1, 0, 1, 0)}},
		{"OneHot/int32", op("OneHot", []string{"I", "N"}, y),
			[]*blob.Tensor{i32(shp(1), 1), i32(shp(1), 2)}, []*blob.Tensor{f32(shp(1, 2), 0, 1)}},
		{"OneHot/empty", op("OneHot", []string{"I", "N"}, y),
			[]*blob.Tensor{i64(shp(0)), i64(shp(), 4)}, []*blob.Tensor{f32(shp(0, 4))}},

		{"Tile/axis0", op("Tile", x, y, argI("tiles", 2), argI("axis", 0)),
			[]*blob.Tensor{seq(2, 2)}, []*blob.Tensor{f32(shp(4, 2), 0, 1, 2, 3, 0, 1, 2, 3)}},
		{"Tile/axis1", op("Tile", x, y, argI("tiles", 2), argI("axis", 1)),
			[]*blob.Tensor{seq(2, 2)}, []*blob.Tensor{f32(shp(2, 4), 0, 1, 0, 1, 2, 3, 2, 3)}},
		{"Tile/negative", op("Tile", x, y, argI("tiles", 2), argI("axis", -1)),
			[]*blob.Tensor{seq(2, 2)}, []*blob.Tensor{f32(shp(2, 4), 0, 1, 0, 1, 2, 3, 2, 3)}},
		{"Tile/inputs", op("Tile", []string{"X", "T", "A"}, y),
			[]*blob.Tensor{seq(1, 2), i32(shp(1), 3), i32(shp(1), 1)}, []*blob.Tensor{f32(shp(1, 6), 0, 1, 0, 1, 0, 1)}},
		{"Tile/int64-tiles-resets-axis", op("Tile", []string{"X", "T"}, y, argI("axis", 1)),
			[]*blob.Tensor{seq(1, 2), i64(shp(1), 2)}, []*blob.Tensor{f32(shp(2, 2), 0, 1, 0, 1)}},
		{"Tile/int32-tiles-keeps-axis", op("Tile", []string{"X", "T"}, y, argI("axis", 1)),
			[]*blob.Tensor{seq(1, 2), i32(shp(1), 2)}, []*blob.Tensor{f32(shp(1, 4), 0, 1, 0, 1)}},
		{"Tile/zero", op("Tile", x, y, argI("tiles", 0), argI("axis", 0)),
			[]*blob.Tensor{seq(2, 2)}, []*blob.Tensor{f32(shp(0, 2))}},
		{"TileGradient", op("TileGradient", x, y, argI("tiles", 2), argI("axis", 1)),
			[]*blob.Tensor{seq(2, 4)}, []*blob.Tensor{f32(shp(2, 2), 2, 4, 10, 12)}},
		{"TileGradient/inputs", op("TileGradient", []string{"X", "T", "A"}, y),
			[]*blob.Tensor{i32(shp(3, 1), 1, 2, 3), i64(shp(1), 3), i64(shp(1), 0)}, []*blob.Tensor{i32(shp(1, 1), 6)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := optest.MustRunOp(t, c.def, c.in...)
			if len(got) != len(c.want) {
				t.Fatalf("%d outputs, want %d", len(got), len(c.want))
			}
			for i, w := range c.want {
				if d := equalTensor(got[i], w); d != "" {
					t.Errorf("output %d (%s): %s", i, c.def.Output[i], d)
				}
			}
		})
	}
}
