// Package tensor registers Caffe2's tensor-manipulation operators for the
// CPU: copies and aliases (Copy, CopyOnDeviceLike, EnsureCPUOutput, Alias,
// StopGradient), shape changes (Reshape, Flatten, FlattenToVec, ResizeLike,
// ExpandDims, Squeeze, Shape), Concat and Split (also under their legacy
// names DepthConcat and DepthSplit), Transpose, Cast, Print, Gather (with
// BatchGatherGradient, its gradient along an inner axis), OneHot, Tile
// with TileGradient, and Slice, Size, Expand, NumpyTile, LengthsToShape,
// Range, Summarize and SplitByLengths (with SliceGradient and
// ExpandGradient).
//
// Importing the package registers the operators, their schemas and their
// gradient makers; the gradient operator definitions are the ones Caffe2
// emits (same types, inputs, outputs and arguments). Operators that only
// move elements work on every element type a blob.Tensor can hold; Cast
// converts between all of them except from strings.
package tensor
