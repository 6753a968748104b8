package tensor

import (
	"math"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestErrors checks that bad shapes, types and arguments are errors (never
// panics) that name the operator and the blob involved.
func TestErrors(t *testing.T) {
	x, y := []string{"X"}, []string{"Y"}
	f := f32(shp(1), 0)
	cases := []struct {
		name  string
		def   *netdef.OperatorDef
		in    []*blob.Tensor
		frags []string
	}{
		{"Concat/axis", op("Concat", []string{"A", "B"}, []string{"Y", "info"}, argI("axis", 2)),
			[]*blob.Tensor{seq(2, 2), seq(2, 2)}, []string{"Concat", "axis 2", `"A"`}},
		{"Concat/negative-axis", op("Concat", []string{"A", "B"}, []string{"Y", "info"}, argI("axis", -3)),
			[]*blob.Tensor{seq(2, 2), seq(2, 2)}, []string{"axis -3", `"A"`}},
		{"Concat/type", op("Concat", []string{"A", "B"}, []string{"Y", "info"}, argI("axis", 0)),
			[]*blob.Tensor{seq(2), i32(shp(2), 1, 2)}, []string{`"B"`, "INT32", "FLOAT"}},
		{"Concat/shape", op("Concat", []string{"A", "B"}, []string{"Y", "info"}, argI("axis", 0)),
			[]*blob.Tensor{seq(2, 2), seq(2, 3)}, []string{`"B"`, "[2 3]", "dimension 1"}},
		{"Concat/rank", op("Concat", []string{"A", "B"}, []string{"Y", "info"}, argI("axis", 0)),
			[]*blob.Tensor{seq(2, 2), seq(2)}, []string{`"B"`, "ranks"}},
		{"Concat/add_axis-shape", op("Concat", []string{"A", "B"}, []string{"Y", "info"}, argI("axis", 0), argI("add_axis", 1)),
			[]*blob.Tensor{seq(2), seq(3)}, []string{`"B"`}},
		{"Concat/axis-and-order", op("Concat", []string{"A"}, []string{"Y", "info"}, argI("axis", 0), argStr("order", "NCHW")),
			[]*blob.Tensor{seq(2)}, []string{"not both"}},
		{"Concat/order", op("Concat", []string{"A"}, []string{"Y", "info"}, argStr("order", "NCWH")),
			[]*blob.Tensor{seq(2)}, []string{"NCWH"}},
		{"Split/axis", op("Split", x, []string{"A", "B"}, argI("axis", 1)), []*blob.Tensor{seq(4)}, []string{"Split", "axis 1", `"X"`}},
		{"Split/sum", op("Split", x, []string{"A", "B"}, argI("axis", 0), argIs("split", 1, 2)), []*blob.Tensor{seq(4)}, []string{`"X"`, "add up to 3"}},
		{"Split/divisible", op("Split", x, []string{"A", "B"}, argI("axis", 0)), []*blob.Tensor{seq(3)}, []string{`"X"`, "divisible"}},
		{"Split/input-count", op("Split", []string{"X", "S"}, []string{"A", "B"}, argI("axis", 0)),
			[]*blob.Tensor{seq(3), i32(shp(3), 1, 1, 1)}, []string{`"S"`, "3 elements for 2 outputs"}},
		{"Split/input-type", op("Split", []string{"X", "S"}, []string{"A", "B"}, argI("axis", 0)),
			[]*blob.Tensor{seq(3), f32(shp(2), 1, 2)}, []string{`"S"`, "FLOAT"}},
		{"Split/negative", op("Split", []string{"X", "S"}, []string{"A", "B"}, argI("axis", 0)),
			[]*blob.Tensor{seq(3), i64(shp(2), 4, -1)}, []string{"negative"}},
		{"Split/arg-count", op("Split", x, []string{"A", "B"}, argI("axis", 0), argIs("split", 3)), []*blob.Tensor{seq(3)}, []string{"1 entries for 2 outputs"}},
		{"Split/arg-and-input", op("Split", []string{"X", "S"}, []string{"A"}, argI("axis", 0), argIs("split", 3)),
			[]*blob.Tensor{seq(3), i32(shp(1), 3)}, []string{`"S"`, "split"}},

		{"Reshape/mismatch", op("Reshape", x, []string{"Y", "old"}, argIs("shape", 4)), []*blob.Tensor{seq(2, 3)}, []string{"Reshape", `"X"`, "[2 3]", "6 elements"}},
		{"Reshape/not-multiple", op("Reshape", x, []string{"Y", "old"}, argIs("shape", 4, -1)), []*blob.Tensor{seq(2, 3)}, []string{`"X"`, "multiple of 4"}},
		{"Reshape/two-unknown", op("Reshape", x, []string{"Y", "old"}, argIs("shape", -1, -1)), []*blob.Tensor{seq(2, 3)}, []string{`"X"`, "more than one -1"}},
		{"Reshape/negative", op("Reshape", x, []string{"Y", "old"}, argIs("shape", -2, 3)), []*blob.Tensor{seq(2, 3)}, []string{`"X"`, "negative dimension -2"}},
		{"Reshape/to-empty", op("Reshape", x, []string{"Y", "old"}, argIs("shape", 6, 1, 0)), []*blob.Tensor{seq(2, 3)}, []string{`"X"`, "empty shape"}},
		{"Reshape/empty-mismatch", op("Reshape", x, []string{"Y", "old"}, argIs("shape", 5)), []*blob.Tensor{f32(shp(0, 3))}, []string{`"X"`}},
		{"Reshape/overflow", op("Reshape", x, []string{"Y", "old"}, argIs("shape", 1<<40, 1<<40)), []*blob.Tensor{seq(2)}, []string{`"X"`, "too large"}},
		{"Reshape/missing", op("Reshape", x, []string{"Y", "old"}), []*blob.Tensor{seq(2)}, []string{"shape is missing"}},
		{"Reshape/both", op("Reshape", []string{"X", "S"}, []string{"Y", "old"}, argIs("shape", 2)),
			[]*blob.Tensor{seq(2), i64(shp(1), 2)}, []string{`"S"`, "not also"}},
		{"Reshape/input-type", op("Reshape", []string{"X", "S"}, []string{"Y", "old"}), []*blob.Tensor{seq(2), f32(shp(1), 2)}, []string{`"S"`, "FLOAT"}},
		{"Reshape/input-rank", op("Reshape", []string{"X", "S"}, []string{"Y", "old"}), []*blob.Tensor{seq(2), i64(shp(1, 1), 2)}, []string{`"S"`, "1-D"}},
		{"Flatten/axis", op("Flatten", x, y, argI("axis", 4)), []*blob.Tensor{seq(2, 3, 4)}, []string{"Flatten", "axis 4", `"X"`}},
		{"Flatten/negative", op("Flatten", x, y, argI("axis", -4)), []*blob.Tensor{seq(2, 3, 4)}, []string{"axis -4", `"X"`}},
		{"FlattenToVec/scalar", op("FlattenToVec", x, y), []*blob.Tensor{f32(shp(), 1)}, []string{`"X"`, "rank"}},
		{"ResizeLike", op("ResizeLike", []string{"X", "L"}, y), []*blob.Tensor{seq(4), seq(5)}, []string{`"X"`, `"L"`, "has 5"}},
		{"ExpandDims/missing", op("ExpandDims", x, y), []*blob.Tensor{seq(2)}, []string{"dims"}},
		{"ExpandDims/negative", op("ExpandDims", x, y, argIs("dims", -1)), []*blob.Tensor{seq(2)}, []string{"non-negative"}},
		{"ExpandDims/range", op("ExpandDims", x, y, argIs("dims", 3)), []*blob.Tensor{seq(2)}, []string{`"X"`, "more than 2 dimensions"}},
		{"ExpandDims/huge", op("ExpandDims", x, y, argIs("dims", math.MaxInt64)), []*blob.Tensor{seq(2)}, []string{`"X"`, "more than 9223372036854775806 dimensions for dims [9223372036854775807]"}},
		{"ExpandDims/huge-pair", op("ExpandDims", x, y, argIs("dims", 0, 1<<62)), []*blob.Tensor{seq(2)}, []string{`"X"`, "more than 4611686018427387902 dimensions"}},
		{"Squeeze/not-one", op("Squeeze", x, y, argIs("dims", 0)), []*blob.Tensor{seq(2, 1)}, []string{`"X"`, "must be 1 instead of 2"}},
		{"Squeeze/range", op("Squeeze", x, y, argIs("dims", 2)), []*blob.Tensor{seq(1, 1)}, []string{`"X"`, "more than 2 dimensions"}},
		{"Squeeze/huge", op("Squeeze", x, y, argIs("dims", math.MaxInt64)), []*blob.Tensor{seq(1, 1)}, []string{`"X"`, "more than 9223372036854775807 dimensions"}},
		{"Shape/axes", op("Shape", x, y, argIs("axes", 2)), []*blob.Tensor{seq(2, 2)}, []string{`"X"`, "axis 2"}},
		{"Shape/negative", op("Shape", x, y, argIs("axes", -1)), []*blob.Tensor{seq(2, 2)}, []string{`"X"`, "axis -1"}},

		{"Transpose/length", op("Transpose", x, y, argIs("axes", 1, 0)), []*blob.Tensor{seq(2, 2, 2)}, []string{"Transpose", `"X"`, "3 dimensions"}},
		{"Transpose/permutation", op("Transpose", x, y, argIs("axes", 0, 2)), []*blob.Tensor{seq(2, 2)}, []string{"not a permutation"}},
		{"Cast/from-string", op("Cast", x, y, argI("to", 1)), []*blob.Tensor{strs(shp(1), "1")}, []string{"Cast", `"X"`, "STRING"}},
		{"Cast/byte", op("Cast", x, y, argI("to", 3)), []*blob.Tensor{f}, []string{"BYTE"}},
		{"Cast/undefined", op("Cast", x, y, argI("to", 0)), []*blob.Tensor{f}, []string{"UNDEFINED"}},
		{"Cast/unknown", op("Cast", x, y, argI("to", 99)), []*blob.Tensor{f}, []string{"99"}},
		{"Cast/unknown-name", op("Cast", x, y, argStr("to", "float128")), []*blob.Tensor{f}, []string{"FLOAT128"}},

		{"Gather/index", op("Gather", []string{"D", "I"}, y), []*blob.Tensor{seq(3, 2), i32(shp(2), 0, 3)}, []string{"Gather", `"I"`, `"D"`, "is 3", "size 3"}},
		{"Gather/negative", op("Gather", []string{"D", "I"}, y), []*blob.Tensor{seq(3, 2), i64(shp(1), -4)}, []string{`"I"`, "-4"}},
		{"Gather/no-wrap", op("Gather", []string{"D", "I"}, y, argI("axis", 1)), []*blob.Tensor{seq(3, 2), i32(shp(1), -1)}, []string{`"I"`, "-1"}},
		{"Gather/axis", op("Gather", []string{"D", "I"}, y, argI("axis", 2)), []*blob.Tensor{seq(3, 2), i32(shp(1), 0)}, []string{`"D"`, "axis 2"}},
		{"Gather/scalar-data", op("Gather", []string{"D", "I"}, y), []*blob.Tensor{f32(shp(), 1), i32(shp(1), 0)}, []string{`"D"`}},
		{"Gather/index-type", op("Gather", []string{"D", "I"}, y), []*blob.Tensor{seq(3), f32(shp(1), 0)}, []string{`"I"`, "FLOAT"}},
		{"Gather/match_outer", op("Gather", []string{"D", "I"}, y, argI("match_outer", 1)), []*blob.Tensor{seq(3), i32(shp(1), 0)}, []string{"match_outer"}},
		{"BatchGatherGradient/rank", op("BatchGatherGradient", []string{"D", "I", "G"}, y), []*blob.Tensor{seq(3), i32(shp(1), 0), seq(1)}, []string{`"D"`, "2-D"}},
		{"BatchGatherGradient/grad-size", op("BatchGatherGradient", []string{"D", "I", "G"}, y), []*blob.Tensor{seq(2, 3), i32(shp(1), 0), seq(2, 2)}, []string{`"G"`, "want 2"}},
		{"BatchGatherGradient/type", op("BatchGatherGradient", []string{"D", "I", "G"}, y), []*blob.Tensor{strs(shp(1, 1), "a"), i32(shp(1), 0), strs(shp(1, 1), "b")}, []string{`"D"`, "numeric"}},
		{"OneHot/index", op("OneHot", []string{"I", "N"}, y), []*blob.Tensor{i64(shp(2), 0, 3), i64(shp(), 3)}, []string{"OneHot", `"I"`, "is 3"}},
		{"OneHot/rank", op("OneHot", []string{"I", "N"}, y), []*blob.Tensor{i64(shp(1, 1), 0), i64(shp(), 3)}, []string{`"I"`, "1-D"}},
		{"OneHot/size-shape", op("OneHot", []string{"I", "N"}, y), []*blob.Tensor{i64(shp(1), 0), i64(shp(2), 3, 3)}, []string{`"N"`, "one element"}},
		{"OneHot/size-negative", op("OneHot", []string{"I", "N"}, y), []*blob.Tensor{i64(shp(0)), i64(shp(), -1)}, []string{`"N"`, "-1"}},
		{"OneHot/type", op("OneHot", []string{"I", "N"}, y), []*blob.Tensor{f32(shp(1), 0), i64(shp(), 2)}, []string{`"I"`, "FLOAT"}},
		{"Tile/no-tiles", op("Tile", x, y, argI("axis", 0)), []*blob.Tensor{seq(2)}, []string{"Tile", "tiles is missing"}},
		{"Tile/no-axis", op("Tile", x, y, argI("tiles", 2)), []*blob.Tensor{seq(2)}, []string{"axis is missing"}},
		{"Tile/no-axis-input", op("Tile", []string{"X", "T"}, y), []*blob.Tensor{seq(2), i32(shp(1), 2)}, []string{"axis is missing"}},
		{"Tile/tiles-shape", op("Tile", []string{"X", "T", "A"}, y), []*blob.Tensor{seq(2), i32(shp(2), 2, 2), i32(shp(1), 0)}, []string{`"T"`, "one element"}},
		{"Tile/tiles-type", op("Tile", []string{"X", "T", "A"}, y), []*blob.Tensor{seq(2), f32(shp(1), 2), i32(shp(1), 0)}, []string{`"T"`, "FLOAT"}},
		{"Tile/axis", op("Tile", x, y, argI("tiles", 2), argI("axis", 1)), []*blob.Tensor{seq(2)}, []string{`"X"`, "axis 1"}},
		{"Tile/negative", op("Tile", x, y, argI("tiles", -1), argI("axis", 0)), []*blob.Tensor{seq(2)}, []string{"tiles is -1"}},
		{"TileGradient/multiple", op("TileGradient", x, y, argI("tiles", 2), argI("axis", 0)), []*blob.Tensor{seq(3)}, []string{`"X"`, "not a multiple of tiles 2"}},
		{"TileGradient/zero", op("TileGradient", x, y, argI("tiles", 0), argI("axis", 0)), []*blob.Tensor{seq(3)}, []string{"tiles is 0"}},
		{"TileGradient/type", op("TileGradient", x, y, argI("tiles", 1), argI("axis", 0)), []*blob.Tensor{strs(shp(1), "a")}, []string{`"X"`, "numeric"}},
		{"Print/every_n", op("Print", x, nil, argI("every_n", 0)), []*blob.Tensor{seq(1)}, []string{"every_n"}},
		{"Print/limit", op("Print", x, nil, argI("limit", -1)), []*blob.Tensor{seq(1)}, []string{"limit"}},
		{"Copy/in-place", op("Copy", x, x), []*blob.Tensor{seq(1)}, []string{"in place"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := optest.RunOp(c.def, c.in...)
			wantErr(t, err, c.frags...)
		})
	}
}

// TestNonTensorInput checks that an input holding something other than a
// tensor is an error naming the blob.
func TestNonTensorInput(t *testing.T) {
	for _, typ := range []string{"Copy", "Alias", "Flatten", "Transpose", "Cast", "Squeeze"} {
		t.Run(typ, func(t *testing.T) {
			w := optest.NewWorkspace()
			w.CreateBlob("X").Set([]byte("not a tensor"))
			err := w.Run(op(typ, []string{"X"}, []string{"Y"}, argIs("dims", 0)))
			wantErr(t, err, typ, `"X"`, "not a tensor")
		})
	}
}
