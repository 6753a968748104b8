// Package quant registers Caffe2's reduced-precision inference operators
// for the CPU.
//
// Half precision: FloatToHalf and HalfToFloat (each the other's gradient),
// GivenTensorFp16Fill, and GivenTensorByteStringToUInt8Fill, which fills a
// UINT8 tensor from the bytes of a string argument.
//
// Int8 (Caffe2's caffe2/operators/quantized, the operators of its mobile
// deployment nets): Int8Quantize, Int8Dequantize,
// Int8GivenTensorFill, Int8GivenIntTensorFill, Int8FC, Int8Conv,
// Int8ConvRelu, Int8Relu, Int8MaxPool, Int8AveragePool, Int8Add,
// Int8AddRelu, Int8Sum, Int8SumRelu, Int8Concat, Int8Reshape, Int8Flatten,
// Int8Softmax and Int8Sigmoid. None has a gradient.
//
// An int8 blob holds an *Int8Tensor, Caffe2's int8::Int8TensorCPU: a
// tensor of UINT8 codes q (INT32 for biases) with a scale s and a zero
// point z, standing for the real values s·(q − z). Image tensors are NHWC;
// conv filters are [M, kH, kW, C/group]; an int8 operator's output gets its
// scale and zero point from the Y_scale and Y_zero_point arguments (1 and
// 0 by default). Operators that only move codes (Relu, the pools, Concat,
// Reshape, Flatten) require Y_scale and Y_zero_point to equal the input's,
// as Caffe2 does. Save and Load write and read int8 blobs as Caffe2's
// Int8TensorCPUSerializer does (type "Int8TensorCPU", a QTensorProto);
// FetchBlob refuses them, as they are not plain tensors: dequantize first,
// or use FetchValue.
//
// The arithmetic is Caffe2's, to the bit:
//
//   - Quantizing rounds x/s to the nearest integer, ties to even
//     (std::nearbyint), adds z and saturates to [0, 255].
//   - Conv and FC accumulate Σ (x − zx)(w − zw) + bias in int32 (padding
//     contributes nothing) and requantize with the float32 multiplier
//     m = sx·sw/sy, which must be below 1: m = q·2^−r with q in [½, 1) a
//     Q31 fixed-point number (QuantizeMultiplierSmallerThanOne), and
//     y = zy + RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(acc, q), r),
//     saturated to [0, 255] (to [zy, 255] with a fused Relu). That
//     is gemmlowp's output stage and, for a float32 multiplier, the q31
//     requantization of QNNPACK, which Caffe2's Int8Conv and Int8FC call.
//     (Where a group has 4 or more outputs, Int8Conv multiplies matrices
//     in float64, which holds these integer sums exactly, then wraps them
//     to int32 as the accumulators would.)
//   - Add and Sum follow Caffe2's int8_add_op.h: each input, less its zero
//     point, is shifted left by 20 bits and scaled by s_i/(2·max s) in Q31,
//     the two are added and scaled by 2·max s/(2^20·sy).
//   - AveragePool divides each window's sum of codes by the number of
//     positions inside the image, rounding halves up; MaxPool takes the
//     largest code. (Caffe2 sums in uint16, which wraps for windows of
//     more than 257 positions; the sums here are exact.)
//   - Sigmoid and Softmax use QNNPACK's lookup tables and need sy = 1/256
//     and zy = 0: sigmoid maps each code through lrintf(256/(1 + e^−x));
//     softmax sums table entries lrint(Q·e^((q−255)·sx)) over the row
//     (shifted so its largest code reads entry 255) and divides with
//     rounding.
//
// Package quant exports Int8Tensor and its constructor so that programs
// can feed int8 blobs and read them back; everything else registers in
// init.
package quant
