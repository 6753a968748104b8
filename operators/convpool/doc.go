// Package convpool holds the convolution and pooling operators of the CNN
// path, on CPU, with their gradients: Conv (Conv1D, Conv2D, Conv3D),
// ConvTranspose, MaxPool and AveragePool (1D, 2D, 3D names),
// MaxPoolWithIndex, and PadImage.
//
// The arguments follow Caffe2's ConvPoolOpBase (and ConvTransposeUnpoolBase
// for ConvTranspose): kernel | kernel_h, kernel_w | kernels; stride |
// stride_h, stride_w | strides; pad | pad_t, pad_l, pad_b, pad_r | pads;
// dilation | dilation_h, dilation_w | dilations; group; order (NCHW or NHWC);
// legacy_pad (VALID, SAME, or CAFFE_LEGACY_POOLING — Caffe's ceil-mode
// pooling); global_pooling. One function, computeSizeAndPad, holds Caffe2's
// output-size rule.
//
// Convolutions are im2col followed by a GEMM (package
// operators/kernels/gemm), skipping im2col for a 1×1 window with stride 1
// and no padding; a batch of several images is split into parts run on
// the kernels' shared workers (package operators/internal/parallel), each
// with its own column buffer. Every operator takes float32 and float64
// tensors and keeps its outputs' storage and scratch buffers between runs,
// so that a net in steady state allocates nothing.
//
// Importing the package registers the operators, their schemas and their
// gradient makers; the gradient operator definitions match Caffe2's.
package convpool
