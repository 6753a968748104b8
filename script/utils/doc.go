// Package utils is the utils module of caffe2go scripts: helpers from
// Caffe2's caffe2.python.utils (MakeArgument, ArgsToDict, the conversions
// between TensorProtos and arrays), make_mnist_db, Caffe2's tool that
// turns the MNIST files into a DB, and TempDir, a fresh directory for what
// a script writes.
package utils
