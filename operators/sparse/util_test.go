package sparse

import (
	"fmt"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// show renders a tensor's dims and elements for comparison with the
// expected values written out from Caffe2's operator docs and kernels.
func show(t *blob.Tensor) string { return fmt.Sprint(t.Dims(), t.Raw()) }

func TestUtilities(t *testing.T) {
	op := netdef.NewOperator
	ai, af, afs, ais := netdef.ArgInt, netdef.ArgFloat, netdef.ArgFloats, netdef.ArgInts
	d := optest.F32([]float64{1, 2, 3, 4, 5, 6, 7, 8}, 4, 2)
	for _, c := range []struct {
		op   *netdef.OperatorDef
		in   []*blob.Tensor
		want []string
	}{
		{op("LengthsToRanges", []string{"L"}, []string{"R"}), []*blob.Tensor{i32(1, 3, 0, 2)}, []string{"[4 2] [0 1 1 3 4 0 4 2]"}},
		{op("LengthsToSegmentIds", []string{"L"}, []string{"S"}), []*blob.Tensor{i32(1, 3, 0, 2)}, []string{"[6] [0 1 1 1 3 3]"}},
		{op("LengthsRangeFill", []string{"L"}, []string{"S"}), []*blob.Tensor{i32(1, 3, 0, 2)}, []string{"[6] [0 0 1 2 0 1]"}},
		{op("LengthsTile", []string{"D", "L"}, []string{"Y"}), []*blob.Tensor{d, i32(0, 2, 1, 0)}, []string{"[3 2] [3 4 3 4 5 6]"}},
		{op("LengthsGather", []string{"D", "L", "I"}, []string{"Y"}), []*blob.Tensor{d, i32(1, 0, 3), i64(2, 0, 2)}, []string{"[7 2] [3 4 5 6 7 8 1 2 3 4 5 6 7 8]"}},
		{op("LengthsPad", []string{"D", "L"}, []string{"Y"}, ai("target_length", 3), af("padding_value", -1)), []*blob.Tensor{d, i32(1, 0, 3)},
			[]string{"[9 2] [1 2 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 3 4 5 6 7 8]"}},
		{op("LengthsSplit", []string{"L"}, []string{"Y"}, ai("n_split", 3)), []*blob.Tensor{i32(7, 1, 0)}, []string{"[9] [3 2 2 1 0 0 0 0 0]"}},
		{op("SortedSegmentSum", []string{"D", "S"}, []string{"Y"}), []*blob.Tensor{d, i32(0, 0, 1, 2)}, []string{"[3 2] [4 6 5 6 7 8]"}},
		{op("SortedSegmentMean", []string{"D", "S"}, []string{"Y"}), []*blob.Tensor{d, i64(1, 1, 1, 2)}, []string{"[3 2] [0 0 3 4 7 8]"}},
		{op("UnsortedSegmentSum", []string{"D", "S"}, []string{"Y"}), []*blob.Tensor{d, i32(2, 0, 2, 0)}, []string{"[3 2] [10 12 0 0 6 8]"}},
		{op("UnsortedSegmentSum", []string{"D", "S"}, []string{"Y"}, ai("num_segments", 4)), []*blob.Tensor{d, i32(2, 0, 2, 0)}, []string{"[4 2] [10 12 0 0 6 8 0 0]"}},
		{op("UnsortedSegmentMean", []string{"D", "S"}, []string{"Y"}), []*blob.Tensor{d, i32(2, 0, 2, 0)}, []string{"[3 2] [5 6 0 0 3 4]"}},
		{op("BatchGather", []string{"D", "I"}, []string{"Y"}), []*blob.Tensor{d, blob.MustFromSlice([]int32{1, 1, 0}, 1, 3)}, []string{"[4 1 3] [2 2 1 4 4 3 6 6 5 8 8 7]"}},
		{op("ScatterAssign", []string{"D", "I", "S"}, []string{"D"}), []*blob.Tensor{d, i32(3, 0), optest.F32([]float64{-1, -2, -3, -4}, 2, 2)}, []string{"[4 2] [-3 -4 3 4 5 6 -1 -2]"}},
		{op("Unique", []string{"X"}, []string{"U", "R"}), []*blob.Tensor{i64(5, 2, 5, 9, 2)}, []string{"[3] [2 5 9]", "[5] [1 0 1 2 0]"}},
		{op("FindDuplicateElements", []string{"X"}, []string{"Y"}), []*blob.Tensor{i32(8, 2, 1, 1, 7, 8, 1)}, []string{"[3] [3 5 6]"}},
		{op("IsMemberOf", []string{"X"}, []string{"Y"}, ais("value", 0, 2, 4)), []*blob.Tensor{blob.MustFromSlice([]int32{0, 1, 2, 3, 4, 5}, 2, 3)}, []string{"[2 3] [true false true false true false]"}},
		{op("Find", []string{"I", "Q"}, []string{"Y"}), []*blob.Tensor{i32(10, 20, 10, 30), i32(10, 40, 30)}, []string{"[3] [2 -1 3]"}},
		{op("Bucketize", []string{"X"}, []string{"Y"}, afs("boundaries", 0.1, 2.5)), []*blob.Tensor{f32(1, 0.1, 2.5, 3, -1)}, []string{"[5] [1 0 1 2 0]"}},
		// Caffe2's BatchBucketize doc example (its kernel reads BOUNDARIES as
		// input 2 and LENGTHS as input 3).
		{op("BatchBucketize", []string{"F", "I", "B", "L"}, []string{"Y"}), []*blob.Tensor{
			optest.F32([]float64{1.42, 2.07, 3.19, 0.55, 4.32, 4.57, 2.30, 0.84, 4.48, 3.09, 0.89, 0.26, 2.41, 0.47, 1.05,
				0.03, 2.97, 2.43, 4.36, 3.11, 2.74, 5.77, 0.90, 2.63, 0.38}, 5, 5),
			i32(0, 1, 4), f32(0.5, 1.0, 1.5, 2.5, 3.5, 2.5), i32(2, 3, 1)},
			[]string{"[5 3] [2 1 1 2 1 1 1 0 0 0 2 1 2 3 0]"}},
		{op("SegmentOneHot", []string{"L", "I", "N"}, []string{"Y"}), []*blob.Tensor{i32(2, 0, 1), i64(0, 2, 1), i64(3)}, []string{"[3 3] [1 0 1 0 0 0 0 1 0]"}},
		// Caffe2's BatchOneHot and BatchBucketOneHot doc examples.
		{op("BatchOneHot", []string{"X", "L", "V"}, []string{"Y"}), []*blob.Tensor{blob.MustFromSlice([]int64{2, 3, 4, 1, 2, 5}, 3, 2), i32(2, 3), i64(2, 4, 1, 3, 5)},
			[]string{"[3 5] [1 0 0 1 0 0 1 1 0 0 1 0 0 0 1]"}},
		{op("BatchBucketOneHot", []string{"X", "L", "B"}, []string{"Y"}), []*blob.Tensor{optest.F32([]float64{2, 3, 4, 1, 2, 5}, 3, 2), i32(2, 3), f32(0.1, 2.5, 1, 3.1, 4.5)},
			[]string{"[3 7] [0 1 0 0 1 0 0 0 0 1 1 0 0 0 0 1 0 0 0 0 1]"}},
	} {
		out := optest.MustRunOp(t, c.op, c.in...)
		for i, w := range c.want {
			if got := show(out[i]); got != w {
				t.Errorf("%s output %d = %s, want %s", c.op.GetType(), i, got, w)
			}
		}
	}
}

// TestIndexHash holds IndexHash to Caffe2's hash written out in int64
// arithmetic: h = seed·0xDEADBEEF, then h = h·65537 + b for each byte b of
// the index (little-endian, as signed int8), modulo, made non-negative.
func TestIndexHash(t *testing.T) {
	ref := func(v int64, size int, seed, modulo int64) int64 {
		h := seed * 0xDEADBEEF
		if size == 4 {
			h = int64(int32(h))
		}
		for k := 0; k < size; k++ {
			h = h*65537 + int64(int8(v>>(8*k)))
			if size == 4 {
				h = int64(int32(h))
			}
		}
		m := h % modulo
		if m < 0 {
			m += modulo
		}
		return m
	}
	vals := []int64{0, 1, -1, 255, 1 << 20, -123456789}
	op := netdef.NewOperator("IndexHash", []string{"X"}, []string{"Y"}, netdef.ArgInt("seed", 7), netdef.ArgInt("modulo", 1000))
	out := optest.MustRunOp(t, op, i64(vals...))[0]
	v32 := make([]int32, len(vals))
	for i, v := range vals {
		v32[i] = int32(v)
		if got, want := blob.Data[int64](out)[i], ref(v, 8, 7, 1000); got != want {
			t.Errorf("IndexHash(int64 %d) = %d, want %d", v, got, want)
		}
	}
	out = optest.MustRunOp(t, op, i32(v32...))[0]
	for i, v := range v32 {
		if got, want := int64(blob.Data[int32](out)[i]), ref(int64(v), 4, 7, 1000); got != want {
			t.Errorf("IndexHash(int32 %d) = %d, want %d", v, got, want)
		}
	}
}

func TestSegmentGradients(t *testing.T) {
	op := netdef.NewOperator
	d := table(5, 2)
	for _, c := range []struct {
		op *netdef.OperatorDef
		in []*blob.Tensor
	}{
		{op("SortedSegmentSum", []string{"D", "S"}, []string{"Y"}), []*blob.Tensor{d, i32(0, 0, 1, 1, 2)}},
		{op("SortedSegmentMean", []string{"D", "S"}, []string{"Y"}), []*blob.Tensor{d, i32(0, 0, 1, 1, 2)}},
		{op("UnsortedSegmentSum", []string{"D", "S"}, []string{"Y"}), []*blob.Tensor{d, i32(2, 0, 2, 0, 1)}},
		{op("UnsortedSegmentMean", []string{"D", "S"}, []string{"Y"}), []*blob.Tensor{d, i32(2, 0, 2, 0, 1)}},
		{op("LengthsTile", []string{"D", "L"}, []string{"Y"}), []*blob.Tensor{d, i32(2, 0, 1, 3, 1)}},
		{op("BatchGather", []string{"D", "I"}, []string{"Y"}), []*blob.Tensor{d, i32(1, 1, 0)}},
	} {
		if _, err := optest.CheckGradient(c.op, c.in, 0, optest.GradientCheck{}); err != nil {
			t.Errorf("%s: %v", c.op.GetType(), err)
		}
	}
	if _, err := optest.RunOp(op("SortedSegmentSum", []string{"D", "S"}, []string{"Y"}), d, i32(0, 2, 2, 3, 3)); err == nil {
		t.Error("SortedSegmentSum with a gap in the ids: no error")
	}
}

func scalar(v float32) *blob.Tensor { return blob.MustFromSlice([]float32{v}, []int{}...) }

func TestMasksRangesTopK(t *testing.T) {
	op := netdef.NewOperator
	ai, ais := netdef.ArgInt, netdef.ArgInts
	for _, c := range []struct {
		op   *netdef.OperatorDef
		in   []*blob.Tensor
		want []string
	}{
		// Rows [5 3 8], [8]; mask [8 5 4]; id 3 is dropped.
		{op("SparseToDenseMask", []string{"I", "V", "D", "L"}, []string{"Y", "P"}, ais("mask", 8, 5, 4), ai("return_presence_mask", 1)),
			[]*blob.Tensor{i64(5, 3, 8, 8), f32(1, 2, 3, 4), scalar(-1), i32(3, 1)},
			[]string{"[2 3] [3 1 -1 4 -1 -1]", "[2 3] [true true false true false false]"}},
		{op("SparseToDenseMask", []string{"I", "V", "D"}, []string{"Y"}, ais("mask", 2, 0)),
			[]*blob.Tensor{i32(0, 7), optest.F32([]float64{1, 2, 3, 4}, 2, 2), f32(9, 9)}, []string{"[2 2] [9 9 1 2]"}},
		// Of the repeated id 8 in row 0 only the last value gets the gradient.
		{op("SparseToDenseMaskGradient", []string{"I", "G", "L"}, []string{"dV"}, ais("mask", 8, 5, 4)),
			[]*blob.Tensor{i64(8, 3, 8, 5), optest.F32([]float64{1, 2, 3, 4, 5, 6}, 2, 3), i32(3, 1)}, []string{"[4] [0 0 1 5]"}},
		// Caffe2's BatchSparseToDense doc example.
		{op("BatchSparseToDense", []string{"L", "I", "V"}, []string{"Y"}, ai("dense_last_dim", 6)),
			[]*blob.Tensor{i64(2, 3, 1), i64(0, 1, 2, 3, 4, 5), f32(6, 7, 8, 9, 10, 11)},
			[]string{"[3 6] [6 7 0 0 0 0 0 0 8 9 10 0 0 0 0 0 0 11]"}},
		{op("BatchDenseToSparse", []string{"L", "I", "D"}, []string{"V"}),
			[]*blob.Tensor{i64(2, 1), i64(0, 2, 1), optest.F32([]float64{1, 2, 3, 4, 5, 6}, 2, 3)}, []string{"[3] [1 3 5]"}},
		// Caffe2's GatherRanges doc example.
		{op("GatherRanges", []string{"D", "R"}, []string{"Y", "L"}),
			[]*blob.Tensor{f32(1, 2, 3, 4, 5, 6), blob.MustFromSlice([]int32{0, 1, 1, 2, 3, 2, 0, 0}, 2, 2, 2)},
			[]string{"[5] [1 2 3 4 5]", "[2] [3 2]"}},
		// Feature 0 of example 1 is empty and feature 1 of example 0 has the
		// wrong length: zeros; KEY sorts feature 0 of example 0.
		{op("GatherRangesToDense", []string{"D", "R", "K"}, []string{"A", "B"}, ais("lengths", 2, 1), netdef.ArgFloat("max_mismatched_ratio", 1)),
			[]*blob.Tensor{f32(1, 2, 3, 4, 5, 6), blob.MustFromSlice([]int32{0, 2, 2, 2, 4, 0, 5, 1}, 2, 2, 2), i64(9, 3, 0, 0, 0, 0)},
			[]string{"[2 2] [2 1 0 0]", "[2 1] [0 6]"}},
		{op("MergeIdLists", []string{"L0", "V0", "L1", "V1"}, []string{"L", "V"}),
			[]*blob.Tensor{i32(2, 1), i64(5, 1, 7), i32(1, 2), i64(1, 7, 3)}, []string{"[2] [2 2]", "[4] [1 5 3 7]"}},
		// Largest first; of equal values the later position comes first
		// (Caffe2's min-heap of (value, position) pairs).
		{op("LengthsTopK", []string{"X", "L"}, []string{"V", "I"}, ai("k", 2)),
			[]*blob.Tensor{f32(1, 5, 5, 3, 4), i32(4, 1, 0)},
			[]string{"[3 2] [5 5 4 0 0 0]", "[3 2] [2 1 0 -1 -1 -1]"}},
		{op("LengthsTopKGradient", []string{"L", "I", "G"}, []string{"dX"}),
			[]*blob.Tensor{i32(4, 1, 0), blob.MustFromSlice([]int32{2, 1, 0, -1, -1, -1}, 3, 2), optest.F32([]float64{1, 2, 3, 4, 5, 6}, 3, 2)},
			[]string{"[5] [0 2 1 0 3]"}},
	} {
		out := optest.MustRunOp(t, c.op, c.in...)
		for i, w := range c.want {
			if got := show(out[i]); got != w {
				t.Errorf("%s output %d = %s, want %s", c.op.GetType(), i, got, w)
			}
		}
	}
	for _, c := range []struct {
		op  *netdef.OperatorDef
		in  []*blob.Tensor
		wrt int
	}{
		{op("SparseToDenseMask", []string{"I", "V", "D", "L"}, []string{"Y"}, ais("mask", 8, 5, 4)), []*blob.Tensor{i64(5, 3, 8, 4), f32(1, 2, 3, 4), scalar(-1), i32(3, 1)}, 1},
		{op("BatchSparseToDense", []string{"L", "I", "V"}, []string{"Y"}, ai("dense_last_dim", 4)), []*blob.Tensor{i64(2, 1), i64(0, 3, 1), f32(1, 2, 3)}, 2},
		{op("LengthsTopK", []string{"X", "L"}, []string{"V", "I"}, ai("k", 2)), []*blob.Tensor{f32(1, 5, 4, 3, 2, 7), i32(4, 1, 1)}, 0},
	} {
		if _, err := optest.CheckGradient(c.op, c.in, c.wrt, optest.GradientCheck{}); err != nil {
			t.Errorf("%s: %v", c.op.GetType(), err)
		}
	}
}
