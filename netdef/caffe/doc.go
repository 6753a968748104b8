// Package caffe imports BVLC Caffe models: it reads Caffe's net
// descriptions (.prototxt) and trained weights (.caffemodel) and translates
// them into a Caffe2 init net and predict net, as Caffe2's
// caffe_translator.py does, keeping Caffe's arithmetic.
//
// # Messages
//
// caffe.proto is a wire-compatible copy of Caffe's schema (package caffe):
// NetParameter, LayerParameter and every layer's parameters, BlobProto, and
// the V1LayerParameter of the V1 format. The Go code in caffe.pb.go is
// generated (see generate.go). ParseNet and ReadNet read the text format,
// ParseWeights and ReadWeights the binary one.
//
// # Translation
//
// Convert instantiates the net in Caffe's TEST phase (include and exclude
// rules matched against the phase, the Level and the Stages options) and
// translates each layer. Every parameter becomes a GivenTensorFill in the
// init net, named after its layer (conv1_w, conv1_b, bn1_mean, …). Blobs
// keep their Caffe names; an in-place top whose operator cannot run in
// place gets a new name. Shapes are followed through the net as Caffe
// computes them, from the Input layers, the legacy input_shape or
// input_dim, or InputShape for data layers, and checked against the
// weights (legacy 4-D blob dimensions are accepted as Caffe accepts them).
//
// Layer by layer (Caffe type → Caffe2 operators):
//
//   - Input, and the legacy net inputs: external inputs of the predict net.
//   - Data, ImageData, MemoryData, HDF5Data: external inputs
//     (labels are fed as INT32, as Caffe2's losses and Accuracy read them);
//     a transform_param becomes PadImage with negative pads (the test
//     phase's centre crop), Sub (mean_value) and Scale, writing
//     <top>_transformed. mean_file is not supported; mirror, a random
//     training-time flip, is not translated.
//   - Convolution → Conv (kernels, strides, pads, dilations, group; 1-D to
//     3-D); Deconvolution → ConvTranspose (2-D, no dilation).
//   - Pooling MAX, AVE → MaxPool, AveragePool. Caffe rounds output sizes up
//     (round_mode CEIL) and, with padding, drops a last window that would
//     start in the padding; Caffe2 rounds down, so the tail pads are grown
//     until Caffe2 gives Caffe's size. Average pooling divides by the window
//     clipped to the padded input: without padding that is count_include_pad
//     0, with padding and every window inside the padded input it is 1, and
//     otherwise the input is padded with zeros by PadImage first. Where the
//     input's size is unknown, CAFFE_LEGACY_POOLING (legacy_pad 3) computes
//     Caffe's size at run time (for average pooling with padding the size
//     must be known). global_pooling is kept.
//   - InnerProduct → FC, or FCTransposed with transpose; axis is kept;
//     without bias_term a zero bias is added.
//   - ReLU → Relu, or LeakyRelu with negative_slope; PReLU → PRelu;
//     Sigmoid, TanH, AbsVal → Sigmoid, Tanh, Abs.
//   - LRN ACROSS_CHANNELS → LRN; WITHIN_CHANNEL → Sqr, AveragePool,
//     Scale, Add, Pow, Mul, the layers Caffe builds it from.
//   - BatchNorm → SpatialBN (is_test) with the stored mean and variance
//     divided by the stored scale factor; a Scale layer right after it on
//     its output is merged into the SpatialBN's scale and bias (Layer.Merged).
//   - Scale → Mul and, with bias_term, Add, broadcast from axis.
//   - Eltwise SUM → Sum, or WeightedSum with coeff; PROD → Mul; MAX → Max.
//   - Concat → Concat; Slice → Split; Split → Copy per top; Flatten and
//     Reshape → Reshape with Caffe's axis, end_axis and num_axes.
//   - Dropout → Dropout with is_test (Caffe passes the input through at
//     test time).
//   - Softmax → Softmax along Caffe's single axis: where axes of size > 1
//     follow it, Transpose moves it last and back, since Caffe2's Softmax
//     runs over every axis from axis on.
//   - SoftmaxWithLoss → SoftmaxWithLoss (loss over the rows, normalization
//     VALID, FULL, BATCH_SIZE or NONE; no ignore_label), the loss from
//     the log-sum-exp rather than Caffe's log of the probability clamped
//     at FLT_MIN.
//   - Accuracy → Accuracy (top_k; no ignore_label). Caffe counts a tie with
//     the true class's score against it, Caffe2 only a tie with a lower
//     class index.
//   - Power → Scale, Add, Pow (the terms that do something), or
//     ConstantFill when power or scale is 0.
//   - Silence: nothing.
//
// # Training
//
// With InPhase(Phase_TRAIN) and FromFillers, Convert instantiates Caffe's
// training net: layers without trained blobs get their parameters from
// their fillers, and Layer.Learned, LRMult and DecayMult say which blobs
// training updates and how (package brew/dataparallel/caffesolver trains such nets).
// ParseSolver and ReadSolver read a solver description
// (SolverParameter); ParseDatum and DatumValues read the Datum records of
// Caffe's LMDB and LevelDB data sets.
//
// Other layer types (Crop, Embed, Exp, Log, BNLL, ELU, Threshold, MVN, ArgMax,
// Tile, Reduction, SPP, Bias, DummyData, WindowData, Python, the losses other than
// SoftmaxWithLoss, …) are reported with ErrUnsupported, naming the layer.
package caffe
