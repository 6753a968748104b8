package tensor

import (
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestAllTypes runs the element-moving operators on every element type:
// inputs hold element ids, and the expected outputs are the ids each output
// element must come from.
func TestAllTypes(t *testing.T) {
	type tensorIDs struct {
		shape []int
		ids   []int
	}
	cases := []struct {
		name  string
		def   *netdef.OperatorDef
		in    []tensorIDs
		extra []*blob.Tensor // index inputs, appended after the typed ones
		want  []tensorIDs
	}{
		{name: "Copy", def: op("Copy", []string{"X"}, []string{"Y"}),
			in: []tensorIDs{{shp(2, 2), upto(4)}}, want: []tensorIDs{{shp(2, 2), upto(4)}}},
		{name: "Alias", def: op("Alias", []string{"X"}, []string{"Y"}),
			in: []tensorIDs{{shp(3), upto(3)}}, want: []tensorIDs{{shp(3), upto(3)}}},
		{name: "StopGradient", def: op("StopGradient", []string{"X"}, []string{"Y"}),
			in: []tensorIDs{{shp(3), upto(3)}}, want: []tensorIDs{{shp(3), upto(3)}}},
		{name: "EnsureCPUOutput", def: op("EnsureCPUOutput", []string{"X"}, []string{"Y"}),
			in: []tensorIDs{{shp(3), upto(3)}}, want: []tensorIDs{{shp(3), upto(3)}}},
		{name: "Reshape", def: op("Reshape", []string{"X"}, []string{"Y", "old"}, argIs("shape", 3, -1)),
			in: []tensorIDs{{shp(2, 3), upto(6)}}, want: []tensorIDs{{shp(3, 2), upto(6)}}},
		{name: "Flatten", def: op("Flatten", []string{"X"}, []string{"Y"}),
			in: []tensorIDs{{shp(2, 1, 3), upto(6)}}, want: []tensorIDs{{shp(2, 3), upto(6)}}},
		{name: "FlattenToVec", def: op("FlattenToVec", []string{"X"}, []string{"Y"}),
			in: []tensorIDs{{shp(2, 3), upto(6)}}, want: []tensorIDs{{shp(6), upto(6)}}},
		{name: "ExpandDims", def: op("ExpandDims", []string{"X"}, []string{"Y"}, argIs("dims", 0)),
			in: []tensorIDs{{shp(3), upto(3)}}, want: []tensorIDs{{shp(1, 3), upto(3)}}},
		{name: "Squeeze", def: op("Squeeze", []string{"X"}, []string{"Y"}, argIs("dims", 1)),
			in: []tensorIDs{{shp(3, 1), upto(3)}}, want: []tensorIDs{{shp(3), upto(3)}}},
		{name: "ResizeLike", def: op("ResizeLike", []string{"X", "L"}, []string{"Y"}),
			in: []tensorIDs{{shp(4), upto(4)}}, extra: []*blob.Tensor{i32(shp(2, 2), 0, 0, 0, 0)},
			want: []tensorIDs{{shp(2, 2), upto(4)}}},
		{name: "Concat", def: op("Concat", []string{"A", "B"}, []string{"Y", "info"}, argI("axis", 1)),
			in:   []tensorIDs{{shp(2, 2), []int{0, 1, 2, 3}}, {shp(2, 1), []int{4, 5}}},
			want: []tensorIDs{{shp(2, 3), []int{0, 1, 4, 2, 3, 5}}}},
		{name: "Split", def: op("Split", []string{"X"}, []string{"A", "B"}, argI("axis", 1), argIs("split", 1, 2)),
			in:   []tensorIDs{{shp(2, 3), upto(6)}},
			want: []tensorIDs{{shp(2, 1), []int{0, 3}}, {shp(2, 2), []int{1, 2, 4, 5}}}},
		{name: "Transpose", def: op("Transpose", []string{"X"}, []string{"Y"}),
			in: []tensorIDs{{shp(2, 3), upto(6)}}, want: []tensorIDs{{shp(3, 2), []int{0, 3, 1, 4, 2, 5}}}},
		{name: "Gather", def: op("Gather", []string{"D", "I"}, []string{"Y"}),
			in: []tensorIDs{{shp(3, 2), upto(6)}}, extra: []*blob.Tensor{i64(shp(3), 2, 0, 2)},
			want: []tensorIDs{{shp(3, 2), []int{4, 5, 0, 1, 4, 5}}}},
		{name: "Gather/axis1", def: op("Gather", []string{"D", "I"}, []string{"Y"}, argI("axis", 1)),
			in: []tensorIDs{{shp(2, 3), upto(6)}}, extra: []*blob.Tensor{i32(shp(1), 1)},
			want: []tensorIDs{{shp(2, 1), []int{1, 4}}}},
		{name: "Tile", def: op("Tile", []string{"X"}, []string{"Y"}, argI("tiles", 2), argI("axis", 1)),
			in: []tensorIDs{{shp(2, 2), upto(4)}}, want: []tensorIDs{{shp(2, 4), []int{0, 1, 0, 1, 2, 3, 2, 3}}}},
	}
	for _, dt := range allTypes {
		for _, c := range cases {
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				var in []*blob.Tensor
				for _, x := range c.in {
					in = append(in, ids(dt, x.shape, x.ids...))
				}
				in = append(in, c.extra...)
				got := optest.MustRunOp(t, c.def, in...)
				for i, w := range c.want {
					if d := equalTensor(got[i], ids(dt, w.shape, w.ids...)); d != "" {
						t.Errorf("output %d: %s", i, d)
					}
				}
			})
		}
	}
}

// TestCastAllPairs casts small non-negative integers between every pair of
// numeric and boolean types and back to float64.
func TestCastAllPairs(t *testing.T) {
	numeric := []blob.DataType{blob.Float32, blob.Float64, blob.Float16, blob.Int8, blob.Int16,
		blob.Int32, blob.Int64, blob.Uint8, blob.Uint16}
	for _, from := range append(numeric, blob.Bool) {
		for _, to := range append(numeric, blob.Bool) {
			t.Run(from.String()+"-"+to.String(), func(t *testing.T) {
				vals := []int{0, 1, 5, 100}
				if from == blob.Bool {
					vals = []int{0, 1, 2, 3} // false, true, false, true
				}
				x := ids(from, shp(2, 2), vals...)
				y := optest.MustRunOp(t, op("Cast", []string{"X"}, []string{"Y"}, argI("to", int64(to))), x)[0]
				want := vals
				if from == blob.Bool {
					want = []int{0, 1, 0, 1}
				}
				if to == blob.Bool {
					want = []int{0, 1, 1, 1}
					if from == blob.Bool {
						want = []int{0, 1, 0, 1}
					}
				}
				if d := equalTensor(y, ids(to, shp(2, 2), want...)); d != "" {
					t.Error(d)
				}
			})
		}
	}
}
