// Package math registers Caffe2's elementwise arithmetic operators on the
// CPU, with their gradients:
//
//   - binary: Add, Sub, Mul, Div (and DivGradient), Pow, SumReduceLike;
//   - variadic: Sum, Mean (MeanGradient), Max and Min (MaxGradient,
//     MinGradient), WeightedSum (WeightedSumGradient);
//   - unary: Negative, Exp, Log, Sqrt, Sqr, Abs (AbsGradient), Ceil,
//     Erf (ErfGradient), Scale, Clip (ClipGradient);
//   - pointwise functions and activations (pointwise.go), each with its
//     Caffe2 gradient operator (XGradient, fed X, Y and dY in Caffe2's
//     order): Elu, Selu, Gelu, Swish, Softplus, Softsign, HardSigmoid,
//     ReluN, ThresholdedRelu, Logit, Mish, Log1p, Sin, Cos, Tan, Asin,
//     Acos, Atan, Sinh, Cosh, Rsqrt, Cbrt, Reciprocal; and Sign and Floor,
//     which have none;
//   - row-wise products and statistics, FLOAT as in Caffe2, with their
//     gradients: DotProduct, CosineSimilarity, SquareRootDivide, Moments,
//     BatchMoments (mean and mean square per channel), LpNorm (Σ|x| or
//     Σx², no root);
//   - transforms: Mod (INT32, INT64), NegateGradient (identity whose
//     gradient is negated), BatchBoxCox, PiecewiseLinearTransform,
//     SinusoidPositionEncoding, ClipTensorByScaling.
//
// Importing the package (for its side effects) registers them.
//
// # Broadcasting in Add, Sub, Mul, Div and the two-input Pow
//
// With broadcast=1 the operators follow Caffe2's legacy rule: the output
// has A's shape, and B is either a single element or its shape, after
// dropping leading and trailing 1s, equals the block of A's dimensions that
// starts at axis (by default B is aligned with A's last dimensions). The
// axis may also be named by axis_str, a letter of order ("NCHW" by default).
// An output that is the same blob as B is an error in this mode.
//
// Without broadcast (absent or 0) the operators follow late Caffe2 (the
// operators inside PyTorch): equal shapes combine elementwise, and shapes
// that differ but are NumPy-broadcastable (aligned on the right, each pair
// of dimensions equal or one of them 1) broadcast in both directions, the
// output taking the broadcast shape. Other shapes are an error ("Dimension
// mismatch - did you forget to set broadcast=1?") that names both blobs
// and shapes. axis and axis_str are errors in this mode.
//
// The gradient makers are Caffe2's (April 2018): they decide from the mere
// presence of the broadcast argument. Without it they assume equal shapes
// (Add and Sub pass the output gradient through, Mul multiplies, Div emits
// DivGradient), so a net that relies on NumPy broadcasting without the
// argument gets gradients shaped like the output; DivGradient rejects such
// shapes. With the argument present (even broadcast=0), B's gradient is
// reduced by SumReduceLike, which here also accepts any B that
// NumPy-broadcasts to the gradient; only A must then have the output's
// shape. Nets that train through a broadcast should therefore set the
// argument, as Caffe2's own builders do.
package math
