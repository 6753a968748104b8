package quant

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
)

// int8TypeName is the type Caffe2 writes in the BlobProto of an
// Int8TensorCPU, and under which its deserializer is registered.
const int8TypeName = "Int8TensorCPU"

func init() { blob.MustRegisterBlobSerializer(int8TypeName, int8Serializer{}) }

// int8Serializer writes an Int8Tensor as Caffe2's Int8TensorCPUSerializer
// does: a QTensorProto with its dims, precision 8, the scale, the zero
// point as bias, unsigned, and the codes (UINT8, or INT32 for a bias) in
// data; and reads one back.
type int8Serializer struct{}

func (int8Serializer) Serialize(name string, value any) (*netdef.BlobProto, error) {
	q, _ := value.(*Int8Tensor)
	if q == nil || q.T == nil {
		return nil, fmt.Errorf("blob %q: an empty int8 tensor", name)
	}
	if !q.T.OnHost() {
		return nil, fmt.Errorf("blob %q: an int8 tensor outside Go memory", name)
	}
	dims := make([]int64, q.T.NumDims())
	for i, d := range q.T.Dims() {
		dims[i] = int64(d)
	}
	var data []int32
	switch codes := q.T.Raw().(type) {
	case []uint8:
		data = make([]int32, len(codes))
		for i, c := range codes {
			data[i] = int32(c)
		}
	case []int32:
		data = append([]int32(nil), codes...)
	default:
		return nil, fmt.Errorf("blob %q: an int8 tensor of %v codes (want UINT8 or INT32)", name, q.T.DataType())
	}
	return &netdef.BlobProto{Qtensor: &netdef.QTensorProto{
		Name:      proto.String(name),
		Dims:      dims,
		Precision: proto.Int32(8),
		Scale:     proto.Float64(float64(q.Scale)),
		Bias:      proto.Float64(float64(q.ZeroPoint)),
		IsSigned:  proto.Bool(false),
		DataType:  netdef.TensorProto_DataType(q.T.DataType()).Enum(),
		Data:      data,
	}}, nil
}

func (int8Serializer) Deserialize(p *netdef.BlobProto, b *blob.Blob) error {
	qt := p.GetQtensor()
	if qt == nil {
		return fmt.Errorf("blob %q: an %s BlobProto without a qtensor", p.GetName(), int8TypeName)
	}
	dims := make([]int, len(qt.GetDims()))
	n := int64(1)
	for i, d := range qt.GetDims() {
		if d < 0 || (d > 0 && n > math.MaxInt32/d) {
			return fmt.Errorf("blob %q: int8 tensor dims %v", p.GetName(), qt.GetDims())
		}
		dims[i], n = int(d), n*d
	}
	if n != int64(len(qt.GetData())) {
		return fmt.Errorf("blob %q: int8 tensor of dims %v holds %d values, want %d", p.GetName(), qt.GetDims(), len(qt.GetData()), n)
	}
	bias := qt.GetBias()
	if bias != math.Trunc(bias) || bias < math.MinInt32 || bias > math.MaxInt32 {
		return fmt.Errorf("blob %q: int8 tensor zero point %v is not an int32", p.GetName(), bias)
	}
	var t *blob.Tensor
	var err error
	switch dt := qt.GetDataType(); dt {
	case netdef.TensorProto_UINT8:
		codes := make([]uint8, n)
		for i, v := range qt.GetData() {
			if v < 0 || v > math.MaxUint8 {
				return fmt.Errorf("blob %q: int8 tensor code %d at %d is not a uint8", p.GetName(), v, i)
			}
			codes[i] = uint8(v)
		}
		t, err = blob.FromSlice(codes, dims...)
	case netdef.TensorProto_INT32:
		t, err = blob.FromSlice(append([]int32(nil), qt.GetData()...), dims...)
	default:
		return fmt.Errorf("blob %q: an int8 tensor of %v codes (want UINT8 or INT32)", p.GetName(), dt)
	}
	if err != nil {
		return fmt.Errorf("blob %q: %v", p.GetName(), err)
	}
	b.Set(&Int8Tensor{T: t, Scale: float32(qt.GetScale()), ZeroPoint: int32(bias)})
	return nil
}
