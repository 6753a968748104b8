// Package fill holds the fill operators, which create a tensor and fill it
// with constants, given values, a range or random numbers: ConstantFill,
// UniformFill, UniformIntFill, GaussianFill, XavierFill, MSRAFill, RangeFill,
// DiagonalFill and the GivenTensor*Fill family.
//
// They share Caffe2's FillerOp shape rules. With no input the output shape is
// the "shape" argument (a 0-d scalar when it is absent). With one input the
// shape is the input's shape, or with input_as_shape=1 the input's values (a
// non-empty 1-D int64 or int32 tensor), followed in both cases by
// "extra_shape". Giving "shape" together with an input, or "extra_shape" or
// input_as_shape without one, is an error when the operator is created.
//
// Fill operators fill their output every time they run and reuse its storage
// once it exists with the right size. Random fills draw from the operator's
// random source, so a device option with random_seed makes them
// reproducible. None has a gradient.
package fill
