package sequence

import (
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestSteadyStateAllocs checks that a second run allocates nothing.
func TestSteadyStateAllocs(t *testing.T) {
	x := f32(sh(5, 2), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	mask := bools(sh(5), true, false, true, true, false)
	for _, c := range []struct {
		def *netdef.OperatorDef
		in  []*blob.Tensor
	}{
		{opdef("AddPadding", "X L S", "Y Lo"), []*blob.Tensor{x, i32(2, 3), f32(sh(2), 1, 1)}},
		{opdef("RemovePadding", "X L", "Y Lo"), []*blob.Tensor{x, i32(2, 3)}},
		{opdef("GatherPadding", "X L", "S E"), []*blob.Tensor{x, i32(2, 3)}},
		{opdef("PadEmptySamples", "L F", "Lo Fo"), []*blob.Tensor{i32(0, 5), x}},
		{opdef("PackSegments", "L X", "P M", netdef.ArgBool("return_presence_mask", true)), []*blob.Tensor{i32(2, 3), x}},
		{opdef("UnpackSegments", "L P", "X"), []*blob.Tensor{i32(2, 1), f32(sh(2, 2, 1), 1, 2, 3, 4)}},
		{opdef("PackRNNSequence", "V L", "P"), []*blob.Tensor{x, i32(2, 3)}},
		{opdef("UnpackRNNSequence", "P L", "V"), []*blob.Tensor{f32(sh(2, 2, 1), 1, 2, 3, 4), i32(2, 1)}},
		{opdef("ReversePackedSegs", "D L", "R"), []*blob.Tensor{f32(sh(2, 2, 1), 1, 2, 3, 4), i32(2, 1)}},
		{opdef("SequenceMask", "X L", "Y", netdef.ArgString("mode", "sequence")), []*blob.Tensor{x, i32(1, 2, 0, 1, 2)}},
		{opdef("BooleanMask", "D M", "Y I"), []*blob.Tensor{x, mask}},
		{opdef("BooleanMaskGradient", "M dY", "dX"), []*blob.Tensor{mask, f32(sh(3, 2), 1, 2, 3, 4, 5, 6)}},
		{opdef("BooleanMaskLengths", "L M", "Y"), []*blob.Tensor{i32(2, 3), mask}},
		{opdef("BooleanUnmask", "M V", "Y"), []*blob.Tensor{bools(sh(2), true, true), f32(sh(2), 1, 2)}},
		{opdef("RemoveDataBlocks", "D I", "Y"), []*blob.Tensor{x, i64(1, 3)}},
	} {
		t.Run(c.def.GetType(), func(t *testing.T) { optest.AssertNoAllocs(t, c.def, c.in...) })
	}
}
