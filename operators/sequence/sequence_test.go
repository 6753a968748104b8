package sequence

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// The expected values below are Caffe2's, worked out by hand from its
// operator documentation and kernels (caffe2/operators/sequence_ops.cc,
// pack_segments.cc, pack_rnn_sequence_op.h, reverse_packed_segs_op.h,
// boolean_mask_ops.cc, boolean_unmask_ops.cc, remove_data_blocks_op.h);
// several are the examples of its documentation.

func f32(shape []int, v ...float32) *blob.Tensor { return blob.MustFromSlice(v, shape...) }
func i32(v ...int32) *blob.Tensor                { return blob.MustFromSlice(v, len(v)) }
func i64(v ...int64) *blob.Tensor                { return blob.MustFromSlice(v, len(v)) }
func bools(shape []int, v ...bool) *blob.Tensor  { return blob.MustFromSlice(v, shape...) }
func sh(d ...int) []int                          { return d }

var inf = float32(math.Inf(-1))

type tableCase struct {
	name string
	def  *netdef.OperatorDef
	in   []*blob.Tensor
	want []*blob.Tensor // nil entries are not checked
}

func opdef(typ string, in, out string, args ...*netdef.Argument) *netdef.OperatorDef {
	return netdef.NewOperator(typ, strings.Fields(in), strings.Fields(out), args...)
}

func ai(name string, v int64) *netdef.Argument { return netdef.ArgInt(name, v) }

func runTable(t *testing.T, cases []tableCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := optest.RunOp(c.def, c.in...)
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range c.want {
				if w == nil {
					continue
				}
				if d := diff(out[i], w); d != "" {
					t.Errorf("output %d: %s", i, d)
				}
			}
		})
	}
}

func diff(got, want *blob.Tensor) string {
	if got == nil {
		return "no tensor"
	}
	if got.DataType() != want.DataType() || !reflect.DeepEqual(got.Shape(), want.Shape()) {
		return fmt.Sprintf("got %v, want %v", got, want)
	}
	if !reflect.DeepEqual(got.Raw(), want.Raw()) {
		return fmt.Sprintf("got %v, want %v", got.Raw(), want.Raw())
	}
	return ""
}

func TestPadding(t *testing.T) {
	x := f32(sh(3, 2), 1, 2, 3, 4, 5, 6)
	runTable(t, []tableCase{
		{"add, one range", opdef("AddPadding", "X", "Y L"), []*blob.Tensor{x},
			[]*blob.Tensor{f32(sh(5, 2), 0, 0, 1, 2, 3, 4, 5, 6, 0, 0), i32(5)}},
		{"add, ranges and paddings", opdef("AddPadding", "X L S E", "Y Lo", ai("padding_width", 1), ai("end_padding_width", 2)),
			[]*blob.Tensor{x, i32(1, 2), f32(sh(2), -1, -2), f32(sh(2), 8, 9)},
			[]*blob.Tensor{f32(sh(9, 2), -1, -2, 1, 2, 8, 9, 8, 9, -1, -2, 3, 4, 5, 6, 8, 9, 8, 9), i32(4, 5)}},
		{"add, start padding only", opdef("AddPadding", "X L S", "Y", ai("padding_width", 2), ai("end_padding_width", 0)),
			[]*blob.Tensor{x, i32(0, 3), f32(sh(2), 7, 7)},
			[]*blob.Tensor{f32(sh(7, 2), 7, 7, 7, 7, 7, 7, 7, 7, 1, 2, 3, 4, 5, 6)}},
		{"add, no padding", opdef("AddPadding", "X L", "Y Lo", ai("padding_width", 0)), []*blob.Tensor{x, i32(2, 1)},
			[]*blob.Tensor{x, i32(2, 1)}},
		{"remove", opdef("RemovePadding", "X L", "Y Lo"), []*blob.Tensor{f32(sh(6, 1), 0, 1, 0, 0, 2, 0), i32(3, 3)},
			[]*blob.Tensor{f32(sh(2, 1), 1, 2), i32(1, 1)}},
		{"remove, one range", opdef("RemovePadding", "X", "Y", ai("padding_width", 1), ai("end_padding_width", 2)),
			[]*blob.Tensor{f32(sh(4), 9, 1, 8, 8)}, []*blob.Tensor{f32(sh(1), 1)}},
		{"gather", opdef("GatherPadding", "X L", "S E", ai("padding_width", 1)),
			[]*blob.Tensor{f32(sh(6, 1), 1, 10, 2, 3, 20, 4), i32(3, 3)}, []*blob.Tensor{f32(sh(1), 4), f32(sh(1), 6)}},
		{"gather into one", opdef("GatherPadding", "X L", "S", ai("padding_width", 1)),
			[]*blob.Tensor{f32(sh(6, 1), 1, 10, 2, 3, 20, 4), i32(3, 3)}, []*blob.Tensor{f32(sh(1), 10)}},
		{"pad empty samples", opdef("PadEmptySamples", "L F G", "Lo Fo Go"),
			[]*blob.Tensor{i32(0, 2, 0), f32(sh(2, 2), 1, 2, 3, 4), blob.MustFromSlice([]int64{5, 6}, 2)},
			[]*blob.Tensor{i32(1, 2, 1), f32(sh(4, 2), 0, 0, 1, 2, 3, 4, 0, 0), blob.MustFromSlice([]int64{0, 5, 6, 0}, 4)}},
	})
}

func TestPacking(t *testing.T) {
	x := f32(sh(3, 2), 1, 2, 3, 4, 5, 6)
	runTable(t, []tableCase{
		{"pack", opdef("PackSegments", "L X", "P M", netdef.ArgBool("return_presence_mask", true)), []*blob.Tensor{i32(2, 0, 1), x},
			[]*blob.Tensor{f32(sh(3, 2, 2), 1, 2, 3, 4, 0, 0, 0, 0, 5, 6, 0, 0), bools(sh(3, 2), true, true, false, false, true, false)}},
		{"pack -inf, int64 lengths", opdef("PackSegments", "L X", "P", netdef.ArgBool("pad_minf", true)), []*blob.Tensor{i64(1, 2), x},
			[]*blob.Tensor{f32(sh(2, 2, 2), 1, 2, inf, inf, 3, 4, 5, 6)}},
		{"pack max_length", opdef("PackSegments", "L X", "P", ai("max_length", 1)), []*blob.Tensor{i32(2, 1), x},
			[]*blob.Tensor{f32(sh(2, 1, 2), 1, 2, 5, 6)}},
		{"pack strings", opdef("PackSegments", "L X", "P"), []*blob.Tensor{i32(1, 2), blob.MustFromSlice([]string{"a", "b", "c"}, 3)},
			[]*blob.Tensor{blob.MustFromSlice([]string{"a", "", "b", "c"}, 2, 2)}},
		{"unpack", opdef("UnpackSegments", "L P", "X"), []*blob.Tensor{i32(2, 0, 1), f32(sh(3, 2, 2), 1, 2, 3, 4, 0, 0, 0, 0, 5, 6, 0, 0)},
			[]*blob.Tensor{x}},
		{"unpack max_length", opdef("UnpackSegments", "L P", "X", ai("max_length", 1)), []*blob.Tensor{i32(2, 1), f32(sh(2, 1, 2), 1, 2, 5, 6)},
			[]*blob.Tensor{f32(sh(2, 2), 1, 2, 5, 6)}},
		{"pack RNN", opdef("PackRNNSequence", "V L", "P"), []*blob.Tensor{f32(sh(5), 1, 2, 3, 4, 5), i32(2, 3)},
			[]*blob.Tensor{f32(sh(3, 2), 1, 3, 2, 4, 0, 5)}},
		{"unpack RNN", opdef("UnpackRNNSequence", "P L", "V"), []*blob.Tensor{f32(sh(3, 2, 1), 1, 3, 2, 4, 9, 5), i32(2, 3)},
			[]*blob.Tensor{f32(sh(5, 1), 1, 2, 3, 4, 5)}},
		{"reverse", opdef("ReversePackedSegs", "D L", "R"), []*blob.Tensor{f32(sh(3, 2, 1), 10, 20, 11, 21, 12, 22), i64(2, 3)},
			[]*blob.Tensor{f32(sh(3, 2, 1), 11, 22, 10, 21, 12, 20)}},
	})
}

func TestMasks(t *testing.T) {
	x := f32(sh(2, 3), 1, 2, 3, 4, 5, 6)
	mode := func(m string) *netdef.Argument { return netdef.ArgString("mode", m) }
	runTable(t, []tableCase{
		{"sequence", opdef("SequenceMask", "X L", "Y", mode("sequence")), []*blob.Tensor{x, i32(1, 2)},
			[]*blob.Tensor{f32(sh(2, 3), 1, inf, inf, 4, 5, inf)}},
		{"sequence grad", opdef("SequenceMask", "X L", "Y", mode("sequence"), netdef.ArgBool("grad", true)), []*blob.Tensor{x, i32(1, 2)},
			[]*blob.Tensor{f32(sh(2, 3), 1, 0, 0, 4, 5, 0)}},
		{"window", opdef("SequenceMask", "X C", "Y", mode("window"), ai("radius", 0), netdef.ArgFloat("fill_val", -7)), []*blob.Tensor{x, i32(1, 2)},
			[]*blob.Tensor{f32(sh(2, 3), -7, 2, -7, -7, -7, 6)}},
		{"upper", opdef("SequenceMask", "X", "Y", mode("upper")), []*blob.Tensor{x}, []*blob.Tensor{f32(sh(2, 3), 1, inf, inf, 4, 5, inf)}},
		{"lower", opdef("SequenceMask", "X", "Y", mode("lower")), []*blob.Tensor{x}, []*blob.Tensor{f32(sh(2, 3), 1, 2, 3, inf, 5, 6)}},
		{"upperdiag", opdef("SequenceMask", "X", "Y", mode("upperdiag")), []*blob.Tensor{x}, []*blob.Tensor{f32(sh(2, 3), inf, inf, inf, 4, inf, inf)}},
		{"lowerdiag", opdef("SequenceMask", "X", "Y", mode("lowerdiag")), []*blob.Tensor{x}, []*blob.Tensor{f32(sh(2, 3), inf, 2, 3, inf, inf, 6)}},
		// batch 0 of a (2, 2, 2) input: each batch is a 2×2 mask whose
		// rows the lengths index.
		{"batch", opdef("SequenceMask", "X L", "Y", mode("sequence"), ai("batch", 0), ai("axis", 2)),
			[]*blob.Tensor{f32(sh(2, 2, 2), 1, 2, 3, 4, 5, 6, 7, 8), i32(1, 0)},
			[]*blob.Tensor{f32(sh(2, 2, 2), 1, inf, inf, inf, 5, inf, inf, inf)}},
		{"repeat", opdef("SequenceMask", "X L", "Y", mode("sequence"), ai("axis", 1), ai("repeat_from_axis", 2)),
			[]*blob.Tensor{f32(sh(2, 2, 2), 1, 2, 3, 4, 5, 6, 7, 8), i32(1, 2)},
			[]*blob.Tensor{f32(sh(2, 2, 2), 1, 2, inf, inf, 5, 6, 7, 8)}},
		{"boolean mask", opdef("BooleanMask", "D M", "Y I"), []*blob.Tensor{f32(sh(6), 1, 2, 3, 4, 5, 6), bools(sh(6), true, false, false, true, true, false)},
			[]*blob.Tensor{f32(sh(3), 1, 4, 5), i64(0, 3, 4)}},
		{"boolean mask rows", opdef("BooleanMask", "D M", "Y"), []*blob.Tensor{x, bools(sh(2), false, true)},
			[]*blob.Tensor{f32(sh(1, 3), 4, 5, 6)}},
		{"boolean mask gradient", opdef("BooleanMaskGradient", "M dY", "dX"), []*blob.Tensor{bools(sh(3), true, false, true), f32(sh(2, 1), 7, 8)},
			[]*blob.Tensor{f32(sh(3, 1), 7, 0, 8)}},
		{"boolean mask lengths", opdef("BooleanMaskLengths", "L M", "Y"), []*blob.Tensor{i32(1, 3, 2), bools(sh(6), false, true, true, false, true, true)},
			[]*blob.Tensor{i32(0, 2, 2)}},
		{"unmask", opdef("BooleanUnmask", "M1 V1 M2 V2 M3 V3", "Y"), []*blob.Tensor{
			bools(sh(5), true, false, true, false, false), f32(sh(2), 1, 3),
			bools(sh(5), false, true, false, false, false), f32(sh(1), 2),
			bools(sh(5), false, false, false, true, true), f32(sh(2), 4, 5),
		}, []*blob.Tensor{f32(sh(5), 1, 2, 3, 4, 5)}},
		{"remove blocks", opdef("RemoveDataBlocks", "D I", "Y"), []*blob.Tensor{f32(sh(4, 2), 0, 1, 2, 3, 4, 5, 6, 7), i64(2, 0, 2)},
			[]*blob.Tensor{f32(sh(2, 2), 2, 3, 6, 7)}},
		{"remove no blocks", opdef("RemoveDataBlocks", "D I", "Y"), []*blob.Tensor{f32(sh(2, 1), 1, 2), blob.MustFromSlice([]float64{}, 0)},
			[]*blob.Tensor{f32(sh(2, 1), 1, 2)}},
	})
}

func TestErrors(t *testing.T) {
	x := f32(sh(3, 2), 1, 2, 3, 4, 5, 6)
	for _, c := range []struct {
		name string
		def  *netdef.OperatorDef
		in   []*blob.Tensor
		want string
	}{
		{"lengths sum", opdef("AddPadding", "X L", "Y"), []*blob.Tensor{x, i32(1, 1)}, "add up to 2"},
		{"negative length", opdef("PackSegments", "L X", "Y"), []*blob.Tensor{i32(4, -1), x}, "negative"},
		{"padding too short", opdef("RemovePadding", "X L", "Y"), []*blob.Tensor{x, i32(1, 2)}, "fewer than its padding"},
		{"padding size", opdef("AddPadding", "X L S", "Y"), []*blob.Tensor{x, i32(3), f32(sh(3), 1, 2, 3)}, "must hold 2 elements"},
		{"unpack too long", opdef("UnpackSegments", "L P", "X"), []*blob.Tensor{i32(3), f32(sh(1, 2, 1), 1, 2)}, "longer than"},
		{"unpack RNN shape", opdef("UnpackRNNSequence", "P L", "V"), []*blob.Tensor{f32(sh(2, 2), 1, 2, 3, 4), i32(3, 1)}, "at least 3 × 2"},
		{"reverse too long", opdef("ReversePackedSegs", "D L", "R"), []*blob.Tensor{f32(sh(1, 1, 1), 1), i32(2)}, "longer than"},
		{"mask length", opdef("BooleanMask", "D M", "Y"), []*blob.Tensor{x, bools(sh(2), true, false)}, "as long as"},
		{"unmask short", opdef("BooleanUnmask", "M V", "Y"), []*blob.Tensor{bools(sh(2), true, false), f32(sh(1), 1)}, "False at position 1"},
		{"unmask unused", opdef("BooleanUnmask", "M V", "Y"), []*blob.Tensor{bools(sh(1), true), f32(sh(2), 1, 2)}, "does not match"},
		{"remove out of range", opdef("RemoveDataBlocks", "D I", "Y"), []*blob.Tensor{x, i32(3)}, "[0, 3)"},
		{"sequence out of bound", opdef("SequenceMask", "X L", "Y", netdef.ArgString("mode", "sequence")), []*blob.Tensor{x, i32(1)}, "out of bound"},
		{"sequence mode", opdef("SequenceMask", "X", "Y", netdef.ArgString("mode", "diagonal")), []*blob.Tensor{x}, "unsupported mode"},
		{"gather bool", opdef("GatherPadding", "X L", "Y"), []*blob.Tensor{bools(sh(2), true, true), i32(2)}, "numeric"},
		{"pad empty field", opdef("PadEmptySamples", "L F", "Lo Fo"), []*blob.Tensor{i32(1, 0), x}, "sum of the lengths"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := optest.RunOp(c.def, c.in...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one mentioning %q", err, c.want)
			}
		})
	}
}

// TestGradients checks each gradient against finite differences.
func TestGradients(t *testing.T) {
	x := f32(sh(5, 2), 0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, -0.8, 0.9, 1.1)
	mode := func(m string) *netdef.Argument { return netdef.ArgString("mode", m) }
	for _, c := range []struct {
		name string
		def  *netdef.OperatorDef
		in   []*blob.Tensor
		wrt  []int
		outs []int
	}{
		{"AddPadding", opdef("AddPadding", "X L S E", "Y Lo", ai("end_padding_width", 2)), []*blob.Tensor{x, i32(2, 3), f32(sh(2), 0.5, -0.5), f32(sh(2), 0.25, 0.75)}, []int{0, 2, 3}, []int{0}},
		{"AddPadding one range", opdef("AddPadding", "X", "Y"), []*blob.Tensor{x}, []int{0}, nil},
		{"RemovePadding", opdef("RemovePadding", "X L", "Y Lo"), []*blob.Tensor{x, i32(2, 3)}, []int{0}, []int{0}},
		{"PackSegments", opdef("PackSegments", "L X", "P"), []*blob.Tensor{i32(2, 0, 3), x}, []int{1}, nil},
		{"UnpackSegments", opdef("UnpackSegments", "L P", "X"), []*blob.Tensor{i32(2, 1), f32(sh(2, 2, 2), 1, 2, 3, 4, 5, 6, 7, 8)}, []int{1}, nil},
		{"PackRNNSequence", opdef("PackRNNSequence", "V L", "P"), []*blob.Tensor{x, i32(3, 2)}, []int{0}, nil},
		{"UnpackRNNSequence", opdef("UnpackRNNSequence", "P L", "V"), []*blob.Tensor{f32(sh(2, 2, 1), 1, 2, 3, 4), i32(2, 1)}, []int{0}, nil},
		{"ReversePackedSegs", opdef("ReversePackedSegs", "D L", "R"), []*blob.Tensor{f32(sh(3, 2, 1), 1, 2, 3, 4, 5, 6), i32(2, 3)}, []int{0}, nil},
		{"SequenceMask", opdef("SequenceMask", "X L", "Y", mode("sequence"), netdef.ArgFloat("fill_val", 3)), []*blob.Tensor{x, i32(1, 0, 2, 1, 2)}, []int{0}, nil},
		{"SequenceMask lower", opdef("SequenceMask", "X", "Y", mode("lower"), netdef.ArgFloat("fill_val", 0)), []*blob.Tensor{x}, []int{0}, nil},
		{"BooleanMask", opdef("BooleanMask", "D M", "Y I"), []*blob.Tensor{x, bools(sh(5), true, false, true, true, false)}, []int{0}, []int{0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, i := range c.wrt {
				if _, err := optest.CheckGradient(c.def, c.in, i, optest.GradientCheck{OutputsWithGrad: c.outs}); err != nil {
					t.Errorf("input %d: %v", i, err)
				}
			}
		})
	}
}

// TestGradientDefs checks the gradient operators Caffe2 emits.
func TestGradientDefs(t *testing.T) {
	for _, c := range []struct {
		def  *netdef.OperatorDef
		want []string
	}{
		{opdef("AddPadding", "X L S E", "Y Lo"), []string{"RemovePadding(Y_grad Lo) -> X_grad", "GatherPadding(Y_grad Lo) -> S_grad E_grad"}},
		{opdef("AddPadding", "X", "Y"), []string{"RemovePadding(Y_grad) -> X_grad"}},
		{opdef("RemovePadding", "X L", "Y Lo"), []string{"AddPadding(Y_grad Lo) -> X_grad"}},
		{opdef("PackSegments", "L X", "P", ai("max_length", 3)), []string{"UnpackSegments(L P_grad) -> X_grad"}},
		{opdef("UnpackSegments", "L P", "X"), []string{"PackSegments(L X_grad) -> P_grad"}},
		{opdef("PackRNNSequence", "V L", "P"), []string{"UnpackRNNSequence(P_grad L) -> V_grad"}},
		{opdef("ReversePackedSegs", "D L", "R"), []string{"ReversePackedSegs(R_grad L) -> D_grad"}},
		{opdef("BooleanMask", "D M", "Y I"), []string{"BooleanMaskGradient(M Y_grad) -> D_grad"}},
		{opdef("SequenceMask", "X L", "Y", netdef.ArgString("mode", "sequence")), []string{"SequenceMask(Y_grad L) -> X_grad [mode grad]"}},
	} {
		gout := make([]operators.Gradient, len(c.def.Output))
		gout[0] = operators.Dense(c.def.Output[0] + "_grad")
		gd, err := operators.GetGradientDefs(c.def, gout)
		if err != nil {
			t.Errorf("%s: %v", c.def.GetType(), err)
			continue
		}
		var got []string
		for _, g := range gd.Ops {
			s := fmt.Sprintf("%s(%s) -> %s", g.GetType(), strings.Join(g.Input, " "), strings.Join(g.Output, " "))
			if g.GetType() == "SequenceMask" {
				var names []string
				for _, a := range g.Arg {
					names = append(names, a.GetName())
				}
				s += " [" + strings.Join(names, " ") + "]"
			}
			if c.def.GetType() == "PackSegments" && len(g.Arg) != 0 {
				s += " with arguments"
			}
			got = append(got, s)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: gradient %q, want %q", c.def.GetType(), got, c.want)
		}
	}
}
