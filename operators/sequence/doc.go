// Package sequence registers Caffe2's operators on padded, packed and
// masked sequences for the CPU:
//
//   - padding: AddPadding, RemovePadding, GatherPadding (the gradient of
//     AddPadding's padding inputs), PadEmptySamples;
//   - packing: PackSegments and UnpackSegments (ranges of rows to a padded
//     batch and back), PackRNNSequence and UnpackRNNSequence (the same in
//     time-major order), ReversePackedSegs;
//   - masking: SequenceMask (sequence, window and triangular masks for
//     attention), BooleanMask (with BooleanMaskGradient), BooleanMaskLengths,
//     BooleanUnmask, RemoveDataBlocks.
//
// Sequences are ranges of a tensor's first dimension given by a vector of
// lengths, which must add up to that dimension; a negative length is an
// error. Operators that only move rows work on every element type a
// blob.Tensor holds. Each gradient maker emits the gradient operators
// Caffe2 does (AddPadding's is RemovePadding and GatherPadding, PackSegments'
// is UnpackSegments, and so on).
//
// Importing the package (for its side effects) registers the operators,
// their schemas, shape functions and gradient makers.
package sequence
