// Package cuda holds the CUDA implementations of caffe2go's operators,
// registered for device type CUDA as Caffe2 registered its CUDAContext
// operators: cuBLAS for matrix products (FC, MatMul, BatchMatMul), cuDNN
// for convolutions, pooling, batch normalization, softmax and LRN (the
// CUDNN engine, which Caffe2 also used by default), and CUDA C kernels of
// this package for the element-wise operators, losses, reductions and
// parameter updates. Operators whose work is too small or too rare for a
// kernel (fillers in init nets, shape queries) run their CPU
// implementation on host copies (operators.HostFallback).
//
// Importing the package registers them; operators/std imports it in cuda
// builds, so a workspace needs nothing else. The implementations need the
// cuda build tag and cgo (see package devicescope/cuda); without the tag
// the package holds what needs no GPU and is tested everywhere: the kernels'
// CUDA C (kernels/*.cu and the wrappers Source generates from the tables
// here), which CI compiles with clang, and the tables saying which
// operator gets which kind of implementation.
//
// Every CUDA operator is checked against the CPU operator by the
// conformance suite (operators/optest.CheckRegistry), which fails for a
// registration without a case.
package cuda
