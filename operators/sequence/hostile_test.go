package sequence

import (
	"strings"
	"testing"
	"time"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestHugeEmptyInputs runs the operators on tensors with no elements but
// huge dims, and with huge widths and lengths: each must return (an output
// or an error, not a recovered panic) at once, looping over elements
// rather than over dims.
func TestHugeEmptyInputs(t *testing.T) {
	empty := func(d ...int) *blob.Tensor {
		x, err := blob.New(blob.Float32, d...)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	huge := 1 << 31
	mode := func(m string) *netdef.Argument { return netdef.ArgString("mode", m) }
	for _, c := range []struct {
		name string
		def  *netdef.OperatorDef
		in   []*blob.Tensor
	}{
		{"AddPadding wide", opdef("AddPadding", "X", "Y L", ai("padding_width", 1<<31-1)), []*blob.Tensor{empty(huge, 0)}},
		{"RemovePadding", opdef("RemovePadding", "X L", "Y", ai("padding_width", 1<<30)), []*blob.Tensor{empty(huge, 0), i32(1<<31 - 1)}},
		{"GatherPadding", opdef("GatherPadding", "X L", "S E", ai("padding_width", 1<<30)), []*blob.Tensor{empty(1<<31-1, 0), i32(1<<31 - 1)}},
		{"PackSegments", opdef("PackSegments", "L X", "P"), []*blob.Tensor{i64(1 << 50), empty(1<<50, 0)}},
		{"PackSegments mask", opdef("PackSegments", "L X", "P M", netdef.ArgBool("return_presence_mask", true)), []*blob.Tensor{i64(1 << 50), empty(1<<50, 0)}},
		{"UnpackSegments", opdef("UnpackSegments", "L P", "X"), []*blob.Tensor{i32(1<<31 - 1), empty(1, 1<<31-1, 0)}},
		{"PackRNNSequence", opdef("PackRNNSequence", "V L", "P"), []*blob.Tensor{empty(1<<31-1, 0), i32(1<<31 - 1)}},
		{"ReversePackedSegs", opdef("ReversePackedSegs", "D L", "R"), []*blob.Tensor{empty(huge, 1, 0), i64(1 << 31)}},
		{"SequenceMask", opdef("SequenceMask", "X", "Y", mode("upper")), []*blob.Tensor{empty(huge, huge, 0)}},
		{"BooleanMaskGradient", opdef("BooleanMaskGradient", "M dY", "dX"), []*blob.Tensor{bools(sh(1), true), empty(1, huge, 0)}},
		{"PadEmptySamples", opdef("PadEmptySamples", "L F", "Lo Fo"), []*blob.Tensor{i32(0, 0), empty(0, huge, 0)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, err := optest.RunOp(c.def, c.in...)
			if err != nil && strings.Contains(err.Error(), "panic") {
				t.Errorf("recovered panic: %v", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}
