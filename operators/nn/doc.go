// Package nn holds the neural-network layer operators of the CNN/MLP
// training path, on CPU, with their gradients: the activations Relu,
// LeakyRelu, Sigmoid and Tanh; Softmax; the fully connected layers FC and
// FCTransposed; the matrix products MatMul and BatchMatMul; and Dropout;
// and (affine.go) ElementwiseLinear, AffineChannel, RMSNorm and Glu.
//
// Every operator takes float32 and float64 tensors, except those of
// affine.go, which take float32 as Caffe2's do. The dense products run
// on package operators/kernels/gemm. Operators keep their output storage
// and scratch between runs, so a net in steady state does not allocate.
//
// Importing the package registers the operators, their schemas and their
// gradient makers; the gradient operator definitions match Caffe2's (type
// names, inputs, outputs and arguments).
package nn
