package tensor

import (
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestShapingSteadyStateAllocs checks that a second run of the shaping
// operators allocates nothing.
func TestShapingSteadyStateAllocs(t *testing.T) {
	x := seq(3, 4)
	for _, c := range []struct {
		def *netdef.OperatorDef
		in  []*blob.Tensor
	}{
		{op("Slice", []string{"X"}, []string{"Y"}, netdef.ArgInts("starts", 1, 1), netdef.ArgInts("ends", 3, 3)), []*blob.Tensor{x}},
		{op("Slice", []string{"X", "s", "e"}, []string{"Y"}), []*blob.Tensor{x, i32(shp(1), 1), i32(shp(1), 2)}},
		{op("SliceGradient", []string{"X", "dY"}, []string{"dX"}, netdef.ArgInts("starts", 1), netdef.ArgInts("ends", 2)), []*blob.Tensor{x, seq(1, 4)}},
		{op("Size", []string{"X"}, []string{"n"}), []*blob.Tensor{x}},
		{op("Expand", []string{"X", "s"}, []string{"Y"}), []*blob.Tensor{seq(3, 1), i64(shp(3), 2, 3, 4)}},
		{op("ExpandGradient", []string{"dY", "X"}, []string{"dX"}), []*blob.Tensor{seq(2, 3, 4), seq(3, 1)}},
		{op("NumpyTile", []string{"X", "r"}, []string{"Y"}), []*blob.Tensor{x, i64(shp(2), 2, 3)}},
		{op("LengthsToShape", []string{"L"}, []string{"s"}), []*blob.Tensor{i32(shp(2), 3, 3)}},
		{op("Range", []string{"a"}, []string{"Y"}), []*blob.Tensor{blob.Scalar(int32(5))}},
		{op("Summarize", []string{"X"}, []string{"Y"}), []*blob.Tensor{x}},
		{op("SplitByLengths", []string{"X", "L"}, []string{"a", "b"}), []*blob.Tensor{x, i32(shp(2), 1, 2)}},
	} {
		t.Run(c.def.GetType(), func(t *testing.T) { optest.AssertNoAllocs(t, c.def, c.in...) })
	}
}
