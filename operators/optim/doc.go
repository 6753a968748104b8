// Package optim registers Caffe2's optimizer operators on the CPU:
//
//   - iteration counters: Iter, AtomicIter and CreateMutex (the mutex blob
//     AtomicIter locks);
//   - LearningRate, base_lr·lr_scale·f(iter) for every Caffe2 policy (fixed,
//     step, exp, gate, inv, poly, linearWarmup, constantWarmup, pieceWarmup,
//     alter, hill, composite, cyclical, cosine, constantThenLinearWarmup,
//     compositeCyclical, compositeCosine) plus Caffe1's multistep and MATLAB's
//     piecewise (drop_factor every drop_period iterations);
//   - dense parameter updates: MomentumSGD, MomentumSGDUpdate, Adam, Adagrad
//     and RmsProp, and Lars, the layer-wise learning-rate scale;
//   - FLOAT-only updates of caffe2/sgd: Adadelta, Wngrad, Ftrl,
//     LearningRateAdaption and YellowFin, and the in-place row updates
//     SparseAdadelta and SparseWngrad;
//   - sparse parameter updates, which apply a gradient slice (indices,
//     values) to the indexed rows: ScatterWeightedSum,
//     SparseMomentumSGDUpdate, SparseAdagrad, RowWiseSparseAdagrad (one
//     Adagrad moment per row) and SparseAdam.
//
// The counters and LearningRate have no gradient; the updates must never be
// differentiated (reaching one in a backward pass is an error).
//
// Import the package for its side effects:
//
//	import _ "github.com/caffe2go/caffe2go/operators/optim"
package optim
