package tensor

import (
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestNoPanics runs the operators over a grid of shapes and argument values,
// valid or not: each run must succeed or return an error, never panic (a
// recovered panic shows up as an error starting with "panic").
func TestNoPanics(t *testing.T) {
	shapes := [][]int{{}, {0}, {1}, {3}, {2, 0}, {2, 3}, {1, 2, 3}, {2, 1, 2, 2}}
	axes := []int64{-5, -2, -1, 0, 1, 2, 4}
	x, y := []string{"X"}, []string{"Y"}
	var defs []*netdef.OperatorDef
	for _, a := range axes {
		defs = append(defs,
			op("Concat", []string{"X", "X"}, []string{"Y", "info"}, argI("axis", a)),
			op("Concat", []string{"X", "X"}, []string{"Y", "info"}, argI("axis", a), argI("add_axis", 1)),
			op("Split", x, []string{"A", "B"}, argI("axis", a)),
			op("Split", x, []string{"A", "B"}, argI("axis", a), argIs("split", 1, a)),
			op("Split", x, []string{"A", "B"}, argI("axis", a), argI("add_axis", 1)),
			op("Flatten", x, y, argI("axis", a)),
			op("Tile", x, y, argI("tiles", a), argI("axis", a)),
			op("TileGradient", x, y, argI("tiles", a), argI("axis", a)),
			op("Gather", []string{"X", "I"}, y, argI("axis", a)),
			op("BatchGatherGradient", []string{"X", "I", "X"}, y, argI("axis", a)),
			op("Reshape", x, []string{"Y", "old"}, argIs("shape", a, -1)),
			op("Reshape", x, []string{"Y", "old"}, argIs("shape", 0, a, 0)),
			op("ExpandDims", x, y, argIs("dims", a)),
			op("Squeeze", x, y, argIs("dims", a)),
			op("Shape", x, y, argIs("axes", a)),
			op("Transpose", x, y, argIs("axes", 1, 0)),
		)
	}
	defs = append(defs, op("Transpose", x, y), op("FlattenToVec", x, y), op("OneHot", []string{"I", "X"}, y),
		op("Cast", x, y, argI("to", 4)), op("ResizeLike", []string{"X", "I"}, y))
	for _, def := range defs {
		for _, s := range shapes {
			in := []*blob.Tensor{seq(s...)}
			for _, name := range def.Input[1:] {
				if name == "I" {
					in = append(in, i64(shp(2), 1, -1))
				} else {
					in = append(in, seq(s...))
				}
			}
			_, err := optest.RunOp(def, in...)
			if err != nil && strings.Contains(err.Error(), "panic") {
				t.Errorf("%v on shape %v: %v", def, s, err)
			}
		}
	}
}
