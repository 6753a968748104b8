// Package convargs reads the arguments of Caffe2's convolution and pooling
// operators (ConvPoolOpBase and its users) — kernel, stride, dilation and
// pads in their list, single-value and per-side forms, legacy padding,
// global pooling, group and storage order — and applies Caffe2's
// output-size rule to give the window of each spatial dimension. The CPU
// operators (operators/convpool) and the CUDA ones (operators/cuda) share
// it, so that both accept the same arguments and compute the same shapes.
package convargs
