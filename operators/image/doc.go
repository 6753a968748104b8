// Package image holds Caffe2's image-layout and image-pixel operators, on
// CPU, with their gradients where Caffe2 has them:
//
//   - NCHW2NHWC and NHWC2NCHW switch a tensor of rank ≥ 3 between
//     channels-first (N, C, H₁…Hₖ) and channels-last (N, H₁…Hₖ, C); each is
//     the other's gradient. They move elements of any type.
//   - ChannelShuffle (arguments group and order) views the C = G·K channels
//     as a G×K matrix and transposes it; ChannelShuffleGradient(dY) → dX
//     undoes it.
//   - PRelu(X, slope) → Y computes Y = X where X > 0 and slope·X elsewhere,
//     with one slope per channel or one shared slope (size 1), channels
//     along dimension 1 (order NCHW) or the last dimension (NHWC);
//     PReluGradient(Y, dY, X, slope) → (dX, dslope).
//   - ResizeNearest (NCHW or NHWC) and UpsampleBilinear (NCHW, corners
//     aligned) resize the spatial dims of a float32 image batch by
//     height_scale and width_scale (arguments, or an optional scales input
//     [height_scale, width_scale]); their gradients take (dY, X[, scales]).
//   - LC (LC1D, LC2D, LC3D) is Caffe2's locally connected layer, a
//     convolution with separate weights at every output position (filter
//     (Y spatial…, M, C/group, kernel…), or (YH, YW, M, kH, kW, C) for
//     NHWC, which is 2-D only), with ConvPoolOpBase's arguments; its
//     gradients take (X, filter, dY) and give (dfilter, dbias[, dX]).
//   - PackedInt8BGRANHWCToNCHWCStylizerPreprocess and
//     BRGNCHWCToPackedInt8BGRAStylizerDeprocess convert between the packed
//     uint8 BGRA pixels of an image (N, H, W, 4) and the mean-subtracted
//     float32 planes (N, 3, H, W) of Caffe2's style-transfer models.
//
// PRelu takes float32 and float64 tensors; the stylizer operators take the
// types Caffe2 gives them (uint8 pixels, float32 planes and mean).
// Operators keep their output storage and scratch between runs, so a net in
// steady state does not allocate.
//
// The stylizer preprocessing adds Gaussian noise (argument noise_std,
// default 10) drawn once per workspace into the blob
// __CAFFE2_STYLIZER_NOISE__ (noise_size values, default 491) and reused, as
// Caffe2 does to keep consecutive video frames consistent. The values come
// from the operator's random source (seeded by the device option's
// random_seed), so they are reproducible but differ from the numbers
// Caffe2's random generator would draw.
//
// Importing the package registers the operators, their schemas and their
// gradient makers; the gradient operator definitions match Caffe2's.
package image
