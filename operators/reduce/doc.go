// Package reduce registers Caffe2's reduction operators on the CPU, with
// their gradients:
//
//   - ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceL1, ReduceL2 over
//     the `axes` argument (all axes when absent), keeping the reduced axes as
//     size 1 when `keepdims` (default 1); gradients Reduce<X>Gradient(dY, X, Y);
//   - ReduceFrontSum/Mean/Max and ReduceBackSum/Mean/Max over the first or
//     last `num_reduce_dim` (default 1) axes, with an optional int32 lengths
//     input; gradients Reduce<Front|Back><X>Gradient(dY, X[, Y][, lengths]);
//   - SumElements (gradient SumElementsGradient(X, dY)), SumElementsInt and
//     SumSqrElements (no gradient registered, as in Caffe2);
//   - RowwiseMax and ColwiseMax of a 3-D tensor, gradients (X, Y, dY);
//   - ArgMax and ArgMin (int64 indices, first index on ties);
//   - TopK (values, int64 indices and optionally flattened indices),
//     gradient TopKGradient(dValues, Indices, X).
//
// Gradient definitions are those Caffe2 generates (same types, inputs,
// outputs and copied arguments). Max and min gradients route dY to every
// element equal to the result, ties included.
//
// Import the package for its side effects:
//
//	import _ "github.com/caffe2go/caffe2go/operators/reduce"
package reduce
