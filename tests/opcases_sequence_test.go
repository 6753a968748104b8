package tests

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// Conformance cases of operators/sequence: padding, packing and masks.
func init() {
	caseSets = append(caseSets, func(s *sampler) []optest.Case {
		op := cgParse
		ai, as, ab := netdef.ArgInt, netdef.ArgString, netdef.ArgBool
		bools := func(v ...bool) *blob.Tensor { return blob.MustFromSlice(v, len(v)) }
		g0, g1 := []int{0}, []int{1}
		return []optest.Case{
			{Op: op("AddPadding(X, L, S, E) -> Y, Lo", ai("end_padding_width", 2)), Inputs: ts(s.x(5, 2), i32(2, 3), s.x(2), s.x(2)), Grad: []int{0, 2, 3}, GradOutputs: g0},
			{Name: "one range", Op: op("AddPadding(X) -> Y"), Inputs: ts(s.x(3, 2)), Grad: g0},
			{Op: op("RemovePadding(X, L) -> Y, Lo"), Inputs: ts(s.x(6, 2), i32(2, 4)), Grad: g0, GradOutputs: g0},
			{Op: op("GatherPadding(X, L) -> S, E", ai("padding_width", 1)), Inputs: ts(s.x(6, 2), i32(2, 4))},
			{Op: op("PadEmptySamples(L, F) -> Lo, Fo"), Inputs: ts(i32(0, 2, 1), s.x(3, 2))},
			{Op: op("PackSegments(L, X) -> P, M", ab("return_presence_mask", true)), Inputs: ts(i32(2, 0, 3), s.x(5, 2)), Grad: g1, GradOutputs: g0},
			{Op: op("UnpackSegments(L, P) -> X"), Inputs: ts(i64(2, 1), s.x(2, 2, 3)), Grad: g1},
			{Op: op("PackRNNSequence(V, L) -> P"), Inputs: ts(s.x(5, 2), i32(3, 2)), Grad: g0},
			{Op: op("UnpackRNNSequence(P, L) -> V"), Inputs: ts(s.x(3, 2, 2), i32(3, 1)), Grad: g0},
			{Op: op("ReversePackedSegs(D, L) -> R"), Inputs: ts(s.x(3, 2, 2), i32(2, 3)), Grad: g0},
			{Op: op("SequenceMask(X, L) -> Y", as("mode", "sequence"), netdef.ArgFloat("fill_val", 2)), Inputs: ts(s.x(3, 4), i32(1, 4, 2)), Grad: g0},
			{Name: "upper, batch", Op: op("SequenceMask(X) -> Y", as("mode", "upper"), ai("batch", 0), ai("axis", 2), netdef.ArgFloat("fill_val", 0)), Inputs: ts(s.x(2, 3, 3)), Grad: g0},
			{Op: op("BooleanMask(D, M) -> Y, I"), Inputs: ts(s.x(4, 2), bools(true, false, false, true)), Grad: g0, GradOutputs: g0},
			{Op: op("BooleanMaskGradient(M, dY) -> dX"), Inputs: ts(bools(false, true, true), s.x(2, 3))},
			{Op: op("BooleanMaskLengths(L, M) -> Y"), Inputs: ts(i32(1, 3), bools(false, true, true, false))},
			{Op: op("BooleanUnmask(M1, V1, M2, V2) -> Y"), Inputs: ts(bools(true, false, true), s.x(2), bools(false, true, false), s.x(1))},
			{Op: op("RemoveDataBlocks(D, I) -> Y"), Inputs: ts(s.x(4, 3), i64(3, 1))},
		}
	})
}
