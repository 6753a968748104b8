// Package mnist reads the MNIST handwritten-digit files (Yann LeCun's idx
// format, gzip-compressed or not): Read loads a set into memory as two
// tensors, and Import converts it into a dataset DB of serialized
// TensorProtos, as Caffe2's make_mnist_db tool does, for the CreateDB and
// TensorProtosDBInput operators.
//
// An idx file is a big-endian header, the magic number (0x00000803 for
// images: three dimensions of unsigned bytes; 0x00000801 for labels: one)
// and one uint32 per dimension, followed by the items' bytes in row-major
// order. The repository keeps the MNIST files in data/mnist.
package mnist
