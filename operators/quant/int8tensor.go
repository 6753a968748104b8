package quant

import (
	"fmt"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// Int8Tensor is Caffe2's int8::Int8TensorCPU, the content of an int8 blob:
// quantized codes with the affine map real = Scale·(code − ZeroPoint).
// T holds UINT8 codes, or INT32 ones for a bias (Int8GivenIntTensorFill).
type Int8Tensor struct {
	T         *blob.Tensor
	Scale     float32
	ZeroPoint int32
}

// NewInt8Tensor returns an Int8Tensor holding a copy of codes with the
// given shape, scale and zero point.
func NewInt8Tensor(codes []uint8, scale float32, zeroPoint int32, shape ...int) (*Int8Tensor, error) {
	t, err := blob.FromSlice(append([]uint8{}, codes...), shape...)
	if err != nil {
		return nil, err
	}
	return &Int8Tensor{T: t, Scale: scale, ZeroPoint: zeroPoint}, nil
}

// BlobTypeName returns the type Caffe2 gives an Int8TensorCPU in a
// BlobProto, so that a blob holding an Int8Tensor reports it and Save and
// Load find its serializer.
func (*Int8Tensor) BlobTypeName() string { return int8TypeName }

// String describes the tensor and its quantization.
func (q *Int8Tensor) String() string {
	return fmt.Sprintf("Int8Tensor(%v, %v, scale %g, zero point %d)", q.T.DataType(), q.T.Dims(), q.Scale, q.ZeroPoint)
}

// int8Input returns input i as an Int8Tensor of UINT8 codes.
func int8Input(b *operators.Base, i int) (*Int8Tensor, error) {
	return int8InputOf(b, i, blob.Uint8)
}

// int8InputOf returns input i as an Int8Tensor whose codes have type dt.
func int8InputOf(b *operators.Base, i int, dt blob.DataType) (*Int8Tensor, error) {
	q, ok := b.InputBlob(i).Get().(*Int8Tensor)
	if !ok || q == nil || q.T == nil {
		return nil, b.Errorf("input %d (%q) holds %s, not an int8 tensor (int8::Int8TensorCPU): make it with Int8Quantize or Int8GivenTensorFill", i, b.InputName(i), b.InputBlob(i).TypeName())
	}
	if q.T.DataType() != dt {
		return nil, b.Errorf("input %d (%q) is an int8 tensor of %v codes, want %v", i, b.InputName(i), q.T.DataType(), dt)
	}
	if !q.T.OnHost() {
		return nil, b.Errorf("input %d (%q) is an int8 tensor outside Go memory", i, b.InputName(i))
	}
	return q, nil
}

// int8Output returns output i as an Int8Tensor, replacing whatever else
// the blob holds (its codes keep their storage from run to run).
func int8Output(b *operators.Base, i int) *Int8Tensor {
	bl := b.OutputBlob(i)
	if q, ok := bl.Get().(*Int8Tensor); ok && q != nil && q.T != nil && q.T.OnHost() {
		return q
	}
	q := &Int8Tensor{T: &blob.Tensor{}}
	bl.Set(q)
	return q
}

// outputQuant reads Y_scale and Y_zero_point.
type outputQuant struct {
	scale float32
	zero  int32
}

func readOutputQuant(b *operators.Base) outputQuant {
	return outputQuant{scale: b.ArgFloat("Y_scale", 1), zero: int32(b.ArgInt("Y_zero_point", 0))}
}

// same checks that the output quantization equals x's, as the operators
// that only move codes require.
func (o outputQuant) same(b *operators.Base, x *Int8Tensor) error {
	if o.scale != x.Scale || o.zero != x.ZeroPoint {
		return b.Errorf("Y_scale %g and Y_zero_point %d must equal the input %q's scale %g and zero point %d: this operator moves codes and does not requantize",
			o.scale, o.zero, b.InputName(0), x.Scale, x.ZeroPoint)
	}
	return nil
}

// quantArgs are the schema entries of Y_scale and Y_zero_point.
var quantArgs = []operators.ArgSpec{
	{Name: "Y_scale", Default: float32(1), Doc: "output quantization scale"},
	{Name: "Y_zero_point", Default: 0, Doc: "output quantization zero point"},
}
