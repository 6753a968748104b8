// Package sparse registers Caffe2's sparse and embedding operators for the
// CPU, the operators of its recommendation models:
//
//   - embedding bags: SparseLengthsSum, SparseLengthsWeightedSum and
//     SparseLengthsMean (Gather and a lengths reduction fused), with their
//     gradients, which are gradient slices (INDICES, values) that the sparse
//     optimizers (SparseAdagrad, RowWiseSparseAdagrad, SparseAdam,
//     SparseMomentumSGDUpdate) apply to the embedding table's rows;
//   - segment reductions over lengths or segment ids: LengthsSum,
//     LengthsMean, LengthsMax, LengthsWeightedSum, SortedSegmentSum,
//     SortedSegmentMean, UnsortedSegmentSum, UnsortedSegmentMean, with their
//     gradients;
//   - LENGTHS utilities: LengthsToRanges, LengthsToSegmentIds,
//     LengthsRangeFill, LengthsTile (with its gradient), LengthsGather,
//     LengthsPad, LengthsSplit;
//   - index utilities: BatchGather (its gradient is BatchGatherGradient, in
//     operators/tensor), ScatterAssign, Unique, FindDuplicateElements,
//     IsMemberOf, Find, IndexHash, Bucketize, BatchBucketize, and the
//     one-hot encodings SegmentOneHot, BatchOneHot, BatchBucketOneHot;
//   - rowwise quantization of embedding tables and the lookups that read
//     them: FloatToFused8BitRowwiseQuantized, Fused8BitRowwiseQuantizedToFloat,
//     FloatToFused4BitRowwiseQuantized, Fused4BitRowwiseQuantizedToFloat,
//     FloatToRowwiseQuantized8Bits, Rowwise8BitQuantizedToFloat, and
//     SparseLengths{Sum,WeightedSum,Mean}{Fused8BitRowwise,Fused4BitRowwise,8BitsRowwise};
//   - sparse-to-dense conversions: SparseToDense (which also turns a
//     gradient slice back into a dense tensor), SparseToDenseMask,
//     BatchSparseToDense and BatchDenseToSparse, with their gradients;
//   - id lists and ranges: GatherRanges, GatherRangesToDense, MergeIdLists,
//     and LengthsTopK with its gradient.
//
// The arithmetic is Caffe2's CPU arithmetic in float32: a quantized row
// stores its scale and bias as Caffe2 lays them out (two float32 after the
// 8-bit codes, two float16 after the packed 4-bit codes, or a separate
// [rows, 2] tensor for the 8BitsRowwise format), and the conversions round
// as Caffe2's do (lrintf, ties to even, for the fused formats; Eigen's
// round, ties away from zero, for 8BitsRowwise), so that their outputs are
// bit for bit Caffe2's.
//
// LENGTHS are INT32 (Caffe2's type) or INT64; INDICES are INT32 or INT64.
// Every operator checks that the lengths are non-negative, that they add
// up to the number of indices (or rows) they cover, and that every index
// is within the table, before it writes its output.
package sparse
