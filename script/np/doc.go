// Package np is the np module of caffe2go scripts: NumPy's names for making
// and inspecting arrays, and np.random, which draws from the interpreter's
// generator. Its values are Array, the ndarray (a *blob.Tensor with NumPy's
// indexing, arithmetic and printing), and DType, the element type
// (np.float32, x.dtype).
package np
