// Package norm holds the normalization operators of Caffe2's CNN path, on
// CPU, with their gradients:
//
//   - SpatialBN (batch normalization over N and the spatial dimensions, in
//     training mode with running statistics and saved mean and inverse
//     standard deviation, or in test mode with given statistics;
//     multi-batch statistics from ChannelStats sums) and SpatialBNGradient;
//   - ChannelStats and ChannelBackpropStats, which data-parallel batch
//     normalization uses to combine statistics across devices (never
//     differentiated);
//   - InstanceNorm and InstanceNormGradient;
//   - LayerNorm (optionally with an elementwise affine transform) and
//     LayerNormGradient;
//   - GroupNorm and GroupNormGradient;
//   - LRN (local response normalization across channels) and LRNGradient.
//
// Every operator takes float32 and float64 tensors (Caffe2's CPU kernels
// take float); the per-channel or per-group statistics and reductions are
// accumulated in float64. Spatial operators take the order argument, "NCHW"
// (default) or "NHWC". Large tensors are split into parts run on the
// kernels' shared workers (package operators/internal/parallel), and
// operators keep their outputs and scratch buffers between runs, so that a
// net in steady state does not allocate.
//
// Importing the package registers the operators, their schemas and their
// gradient makers; the gradient operator definitions equal Caffe2's (type
// names, inputs, outputs and copied arguments).
package norm
