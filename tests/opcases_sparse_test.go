package tests

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// The sparse and embedding family (operators/sparse) and the row-wise
// sparse optimizer. The SparseLengths operators' gradients are slices, so
// their gradient operators get cases of their own; operators/sparse checks
// the slices against finite differences.
func init() {
	caseSets = append(caseSets, func(s *sampler) []optest.Case {
		op := cgParse
		ai := netdef.ArgInt
		g0, g01 := []int{0}, []int{0, 1}
		lens := func() *blob.Tensor { return i32(2, 0, 3, 1) }
		idx := func() *blob.Tensor { return i64(4, 0, 4, 2, 1, 3) }
		q8 := func() *blob.Tensor { return quantized(s, "FloatToFused8BitRowwiseQuantized", 5, 4) }
		q4 := func() *blob.Tensor { return quantized(s, "FloatToFused4BitRowwiseQuantized", 5, 4) }
		codes := blob.MustFromSlice([]uint8{3, 250, 17, 0, 255, 128, 9, 77, 1, 2, 200, 100, 64, 32, 16, 8, 5, 6, 7, 8}, 5, 4)
		sb := func() *blob.Tensor { return s.pos(5, 2) }
		w6 := func() *blob.Tensor { return s.x(6) }
		cases := []optest.Case{
			{Op: op("SparseLengthsSum(D, I, L) -> Y"), Inputs: ts(s.x(5, 3), idx(), lens())},
			{Name: "int32 indices", Op: op("SparseLengthsSum(D, I, L) -> Y"), Inputs: ts(s.x(5, 2, 2), i32(4, 0, 4, 2, 1, 3), lens())},
			{Op: op("SparseLengthsMean(D, I, L) -> Y"), Inputs: ts(s.x(5, 3), idx(), lens())},
			{Op: op("SparseLengthsWeightedSum(D, W, I, L) -> Y"), Inputs: ts(s.x(5, 3), w6(), idx(), lens())},
			{Op: op("LengthsSum(D, L) -> Y"), Inputs: ts(s.x(6, 3), lens()), Grad: g0},
			{Op: op("LengthsMean(D, L) -> Y"), Inputs: ts(s.x(6, 3), lens()), Grad: g0},
			{Op: op("LengthsMax(D, L) -> Y"), Inputs: ts(s.x(6, 3), lens()), Grad: g0},
			{Op: op("LengthsWeightedSum(D, W, L) -> Y"), Inputs: ts(s.x(6, 3), w6(), lens()), Grad: g0},
			{Name: "grad_on_weights", Op: op("LengthsWeightedSum(D, W, L) -> Y", ai("grad_on_weights", 1)), Inputs: ts(s.x(6, 3), w6(), lens()), Grad: g01},
			{Op: op("SparseLengthsSumGradient(dY, L) -> dV"), Inputs: ts(s.x(4, 3), lens())},
			{Op: op("SparseLengthsIndicesInGradientSumGradient(dY, L, I) -> dV"), Inputs: ts(s.x(4, 3), lens(), idx())},
			{Op: op("SparseLengthsMeanGradient(dY, L) -> dV"), Inputs: ts(s.x(4, 3), lens())},
			{Op: op("SparseLengthsWeightedSumGradient(W, dY, L) -> dV"), Inputs: ts(w6(), s.x(4, 3), lens())},
			{Op: op("SparseLengthsWeightedSumWithMainInputGradient(W, dY, L, D, I) -> dV, dW"), Inputs: ts(w6(), s.x(4, 3), lens(), s.x(5, 3), idx())},
			{Op: op("LengthsSumGradient(dY, L) -> dD"), Inputs: ts(s.x(4, 3), lens())},
			{Op: op("SparseToDense(I, V) -> Y"), Inputs: ts(i64(3, 0, 3), s.x(3, 2)), Grad: []int{1}},
			{Name: "infer dim", Op: op("SparseToDense(I, V, D) -> Y"), Inputs: ts(i32(1, 1), s.x(2, 2), s.x(4, 1)), Grad: []int{1}},
			{Name: "int64", Op: op("SparseToDense(I, V) -> Y"), Inputs: ts(i32(1, 0, 1), i64(5, 6, 7))},
			{Op: op("FloatToFused8BitRowwiseQuantized(X) -> Q"), Inputs: ts(s.x(3, 5))},
			{Op: op("Fused8BitRowwiseQuantizedToFloat(Q) -> Y"), Inputs: ts(q8())},
			{Op: op("FloatToFused4BitRowwiseQuantized(X) -> Q"), Inputs: ts(s.x(3, 6))},
			{Op: op("Fused4BitRowwiseQuantizedToFloat(Q) -> Y"), Inputs: ts(q4())},
			{Op: op("FloatToRowwiseQuantized8Bits(X) -> Q, SB"), Inputs: ts(s.x(3, 5))},
			{Op: op("Rowwise8BitQuantizedToFloat(Q, SB) -> Y"), Inputs: ts(codes, sb())},
			{Op: op("SparseLengthsSumFused8BitRowwise(Q, I, L) -> Y"), Inputs: ts(q8(), idx(), lens())},
			{Op: op("SparseLengthsWeightedSumFused8BitRowwise(Q, W, I, L) -> Y"), Inputs: ts(q8(), w6(), idx(), lens())},
			{Op: op("SparseLengthsMeanFused8BitRowwise(Q, I, L) -> Y"), Inputs: ts(q8(), idx(), lens())},
			{Op: op("SparseLengthsSumFused4BitRowwise(Q, I, L) -> Y"), Inputs: ts(q4(), idx(), lens())},
			{Op: op("SparseLengthsWeightedSumFused4BitRowwise(Q, W, I, L) -> Y"), Inputs: ts(q4(), w6(), idx(), lens())},
			{Op: op("SparseLengthsMeanFused4BitRowwise(Q, I, L) -> Y"), Inputs: ts(q4(), idx(), lens())},
			{Op: op("SparseLengthsSum8BitsRowwise(Q, I, L, SB) -> Y"), Inputs: ts(codes, idx(), lens(), sb())},
			{Op: op("SparseLengthsWeightedSum8BitsRowwise(Q, W, I, L, SB) -> Y"), Inputs: ts(codes, w6(), idx(), lens(), sb())},
			{Op: op("SparseLengthsMean8BitsRowwise(Q, I, L, SB) -> Y"), Inputs: ts(codes, idx(), lens(), sb())},
			{Op: op("RowWiseSparseAdagrad(p, h, I, g, lr) -> p, h"), Inputs: ts(s.x(4, 2), s.pos(4), i64(2, 0), s.x(2, 2), f32(-0.1))},
			{Op: op("LengthsToRanges(L) -> R"), Inputs: ts(lens())},
			{Op: op("LengthsToSegmentIds(L) -> S"), Inputs: ts(lens())},
			{Op: op("LengthsRangeFill(L) -> S"), Inputs: ts(lens())},
			{Op: op("LengthsTile(D, L) -> Y"), Inputs: ts(s.x(4, 3), lens()), Grad: g0},
			{Op: op("LengthsGather(D, L, I) -> Y"), Inputs: ts(s.x(6, 2), lens(), i64(2, 1, 0, 2))},
			{Op: op("LengthsPad(D, L) -> Y", ai("target_length", 4), netdef.ArgFloat("padding_value", 0.5)), Inputs: ts(s.x(6, 2), lens())},
			{Op: op("LengthsSplit(L) -> Y", ai("n_split", 2)), Inputs: ts(lens())},
			{Name: "n_split input", Op: op("LengthsSplit(L, N) -> Y"), Inputs: ts(lens(), i32(3))},
			{Op: op("SortedSegmentSum(D, S) -> Y"), Inputs: ts(s.x(5, 2), i32(0, 0, 1, 2, 2)), Grad: g0},
			{Op: op("SortedSegmentMean(D, S) -> Y"), Inputs: ts(s.x(5, 2), i64(1, 1, 2, 3, 3)), Grad: g0},
			{Op: op("UnsortedSegmentSum(D, S) -> Y"), Inputs: ts(s.x(5, 2), i32(2, 0, 2, 3, 0)), Grad: g0},
			{Op: op("UnsortedSegmentMean(D, S) -> Y", ai("num_segments", 5)), Inputs: ts(s.x(5, 2), i32(2, 0, 2, 3, 0)), Grad: g0},
			{Op: op("BatchGather(D, I) -> Y"), Inputs: ts(s.x(3, 4, 2), i32(3, 0, 3)), Grad: g0},
			{Op: op("ScatterAssign(D, I, S) -> D"), Inputs: ts(s.x(4, 2), i64(3, 1), s.x(2, 2))},
			{Op: op("Unique(X) -> U, R"), Inputs: ts(i64(5, 2, 5, 9, 2))},
			{Op: op("FindDuplicateElements(X) -> Y"), Inputs: ts(i32(8, 2, 1, 1, 7, 8, 1))},
			{Op: op("IsMemberOf(X) -> Y", netdef.ArgInts("value", 0, 2, 4)), Inputs: ts(i64(0, 1, 2, 3, 4))},
			{Op: op("Find(I, Q) -> Y"), Inputs: ts(i32(10, 20, 10, 30), i32(10, 40, 30))},
			{Op: op("IndexHash(X) -> Y", ai("seed", 3), ai("modulo", 100)), Inputs: ts(i64(1, -7, 123456789))},
			{Op: op("Bucketize(X) -> Y", netdef.ArgFloats("boundaries", -0.5, 0, 0.5)), Inputs: ts(s.x(3, 4))},
			{Op: op("BatchBucketize(F, I, B, L) -> Y"), Inputs: ts(s.x(3, 4), i32(0, 2), f32(-0.5, 0, 0.5, 0.7), i32(1, 3))},
			{Op: op("SegmentOneHot(L, I, N) -> Y"), Inputs: ts(i32(2, 0, 1), i64(0, 2, 1), i64(3))},
			{Op: op("BatchOneHot(X, L, V) -> Y"), Inputs: ts(blob.MustFromSlice([]int64{2, 3, 4, 1, 2, 5}, 3, 2), i32(2, 3), i64(2, 4, 1, 3, 5))},
			{Op: op("BatchBucketOneHot(X, L, B) -> Y"), Inputs: ts(s.x(3, 2), i32(2, 3), f32(-0.5, 0.5, -0.2, 0, 0.3))},
			{Op: op("SparseToDenseMask(I, V, D, L) -> Y, P", netdef.ArgInts("mask", 8, 5, 4), ai("return_presence_mask", 1)),
				Inputs: ts(i64(5, 3, 8, 4), s.x(4, 2), s.x(2), i32(3, 1)), Grad: []int{1}, GradOutputs: []int{0}},
			{Name: "no lengths", Op: op("SparseToDenseMask(I, V, D) -> Y", netdef.ArgInts("mask", 2, 0)), Inputs: ts(i32(0, 7, 2), s.x(3), blob.MustFromSlice([]float32{0.5}, []int{}...)), Grad: []int{1}},
			{Op: op("BatchSparseToDense(L, I, V) -> Y", ai("dense_last_dim", 4)), Inputs: ts(i64(2, 1), i64(0, 3, 1), s.x(3)), Grad: []int{2}},
			{Name: "shape input", Op: op("BatchSparseToDense(L, I, V, S) -> Y"), Inputs: ts(i32(2, 1), i32(0, 3, 1), s.x(3), s.x(2, 5)), Grad: []int{2}},
			{Op: op("BatchDenseToSparse(L, I, D) -> V"), Inputs: ts(i64(2, 1), i64(0, 2, 1), s.x(2, 3)), Grad: []int{2}},
			{Op: op("GatherRanges(D, R) -> Y, L"), Inputs: ts(s.x(6), blob.MustFromSlice([]int32{0, 1, 1, 2, 3, 2, 0, 0}, 2, 2, 2))},
			{Op: op("GatherRangesToDense(D, R) -> A, B", netdef.ArgInts("lengths", 2, 1), netdef.ArgFloat("max_mismatched_ratio", 1)),
				Inputs: ts(s.x(6), blob.MustFromSlice([]int64{0, 2, 2, 2, 4, 0, 5, 1}, 2, 2, 2))},
			{Name: "key", Op: op("GatherRangesToDense(D, R, K) -> A", netdef.ArgInts("lengths", 3)),
				Inputs: ts(s.x(6), blob.MustFromSlice([]int32{0, 3, 3, 3}, 2, 1, 2), i64(5, 4, 3, 2, 1, 0))},
			{Op: op("MergeIdLists(L0, V0, L1, V1) -> L, V"), Inputs: ts(i32(2, 1), i64(5, 1, 7), i32(1, 2), i64(1, 7, 3))},
			{Op: op("LengthsTopK(X, L) -> V, I", ai("k", 2)), Inputs: ts(s.x(6), i32(4, 1, 1)), Grad: g0, GradOutputs: []int{0}},
		}
		return cases
	})
}

// quantized returns a FLOAT [rows, cols] table from s quantized by typ.
func quantized(s *sampler, typ string, rows, cols int) *blob.Tensor {
	out, err := optest.RunOp(cgParse(typ+"(X) -> Q"), s.x(rows, cols))
	if err != nil {
		panic(err)
	}
	return out[0]
}
