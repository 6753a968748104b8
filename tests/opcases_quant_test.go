package tests

import (
	"math/rand/v2"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// The conformance cases of operators/quant. Int8 operators read int8
// tensors (a blob payload of their own, not a blob.Tensor), so their
// cases make them with Int8GivenTensorFill and Int8GivenIntTensorFill in
// Before; their outputs are int8 tensors too, which the suite does not
// fetch, so those cases check that the operators run and that every device
// runs them; operators/quant's tests check the codes.
func init() {
	caseSets = append(caseSets, func(s *sampler) []optest.Case {
		op := cgParse
		ai, af, as := netdef.ArgInt, netdef.ArgFloat, netdef.ArgString
		ais := netdef.ArgInts
		rng := rand.New(rand.NewPCG(14, 7))
		// q makes the int8 tensor name of the given shape, random codes.
		q := func(name string, scale float32, zero int64, shape ...int64) *netdef.OperatorDef {
			n := int64(1)
			for _, d := range shape {
				n *= d
			}
			codes := make([]byte, n)
			for i := range codes {
				codes[i] = byte(rng.IntN(256))
			}
			return op("Int8GivenTensorFill() -> "+name, ais("shape", shape...), as("values", string(codes)), af("Y_scale", scale), ai("Y_zero_point", zero))
		}
		bias := func(name string, scale float32, n int) *netdef.OperatorDef {
			v := make([]int64, n)
			for i := range v {
				v[i] = int64(rng.IntN(2001) - 1000)
			}
			return op("Int8GivenIntTensorFill() -> "+name, ais("shape", int64(n)), ais("values", v...), af("Y_scale", scale))
		}
		yq := func(scale float32, zero int64) []*netdef.Argument {
			return []*netdef.Argument{af("Y_scale", scale), ai("Y_zero_point", zero)}
		}
		nhwc := as("order", "NHWC")
		image := []*netdef.OperatorDef{q("X", 0.1, 128, 2, 5, 5, 4)}
		conv := []*netdef.OperatorDef{q("X", 0.1, 128, 2, 5, 5, 4), q("W", 0.05, 120, 6, 3, 3, 2), bias("B", 0.005, 6)}
		pair := []*netdef.OperatorDef{q("A", 0.1, 128, 3, 4), q("B", 0.05, 100, 3, 4)}
		unit := yq(1.0/256, 0)
		halves := make([]blob.Half, 6)
		for i, v := range []float32{1, -0.5, 65504, 0.1, -3, 1e-5} {
			halves[i] = blob.HalfFromFloat32(v)
		}
		return []optest.Case{
			{Op: op("FloatToHalf(X) -> Y"), Inputs: ts(s.x(2, 3))},
			{Name: "clip", Op: op("FloatToHalf(X) -> Y", ai("clip", 1)), Inputs: ts(f32(1e6, -1e6, 0.5))},
			{Op: op("HalfToFloat(H) -> Y"), Inputs: ts(blob.MustFromSlice(halves, 2, 3))},
			{Op: op("GivenTensorFp16Fill() -> Y", ais("shape", 2, 2), netdef.ArgFloats("values", 1, 2.5, -3, 0.1))},
			{Op: op("GivenTensorByteStringToUInt8Fill() -> Y", ais("shape", 3), netdef.ArgStrings("values", "\x00\x80\xff"))},
			{Op: op("Int8Quantize(X) -> XQ", yq(0.01, 128)...), Inputs: ts(s.x(3, 4))},
			{Op: op("Int8Dequantize(XQ) -> Y"), Before: []*netdef.OperatorDef{q("XQ", 0.1, 128, 3, 4)}},
			{Op: op("Int8GivenTensorFill() -> Y", ais("shape", 2), as("values", "\x01\xfe"), af("Y_scale", 0.5), ai("Y_zero_point", 3))},
			{Op: op("Int8GivenIntTensorFill() -> Y", ais("shape", 2), ais("values", -7, 9), af("Y_scale", 0.01))},
			{Op: op("Int8FC(X, W, B) -> Y", yq(0.5, 10)...), Before: []*netdef.OperatorDef{q("X", 0.1, 128, 2, 8), q("W", 0.05, 120, 3, 8), bias("B", 0.005, 3)}},
			{Op: op("Int8Conv(X, W, B) -> Y", append(yq(0.5, 100), ai("kernel", 3), ai("pad", 1), ai("group", 2), nhwc)...), Before: conv},
			{Op: op("Int8ConvRelu(X, W, B) -> Y", append(yq(0.5, 100), ai("kernel", 3), ai("stride", 2), ai("group", 2), nhwc)...), Before: conv},
			{Op: op("Int8Relu(X) -> Y", yq(0.1, 128)...), Before: image},
			{Op: op("Int8MaxPool(X) -> Y", append(yq(0.1, 128), ai("kernel", 3), ai("stride", 2), ai("legacy_pad", 3), nhwc)...), Before: image},
			{Op: op("Int8AveragePool(X) -> Y", append(yq(0.1, 128), ai("kernel", 2), ai("pad", 1), nhwc)...), Before: image},
			{Name: "global", Op: op("Int8AveragePool(X) -> Y", append(yq(0.1, 128), ai("global_pooling", 1), nhwc)...), Before: image},
			{Op: op("Int8Add(A, B) -> Y", yq(0.2, 128)...), Before: pair},
			{Op: op("Int8AddRelu(A, B) -> Y", yq(0.2, 128)...), Before: pair},
			{Op: op("Int8Sum(A, B) -> Y", yq(0.2, 128)...), Before: pair},
			{Op: op("Int8SumRelu(A, B) -> Y", yq(0.2, 128)...), Before: pair},
			{Op: op("Int8Concat(X, X2) -> Y, split", append(yq(0.1, 128), nhwc)...), Before: append(image, q("X2", 0.1, 128, 2, 5, 5, 3))},
			{Op: op("Int8Reshape(X) -> Y, old_shape", append(yq(0.1, 128), ais("shape", 0, -1))...), Before: image},
			{Op: op("Int8Flatten(X) -> Y", append(yq(0.1, 128), ai("axis", 2))...), Before: image},
			{Op: op("Int8Softmax(X) -> Y", unit...), Before: image},
			{Op: op("Int8Sigmoid(X) -> Y", unit...), Before: image},
		}
	})
}
