package quant

import (
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
)

// TestInt8Serialization saves int8 tensors (UINT8 codes, and the INT32
// codes of a bias) as Caffe2's Int8TensorCPUSerializer writes them — the
// bytes of the BlobProto built here field by field from Caffe2's
// serializer — and reads them back unchanged.
func TestInt8Serialization(t *testing.T) {
	codes, err := NewInt8Tensor([]uint8{0, 7, 128, 255, 3, 9}, 0.25, 128, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	bias := &Int8Tensor{T: blob.MustFromSlice([]int32{-5, 1 << 20}, 2), Scale: 0.0625}
	for _, c := range []struct {
		name string
		q    *Int8Tensor
		want *netdef.QTensorProto
	}{
		{"codes", codes, &netdef.QTensorProto{Dims: []int64{2, 3}, Precision: proto.Int32(8), Scale: proto.Float64(0.25), Bias: proto.Float64(128), IsSigned: proto.Bool(false),
			Data: []int32{0, 7, 128, 255, 3, 9}, Name: proto.String("codes"), DataType: netdef.TensorProto_UINT8.Enum()}},
		{"bias", bias, &netdef.QTensorProto{Dims: []int64{2}, Precision: proto.Int32(8), Scale: proto.Float64(0.0625), Bias: proto.Float64(0), IsSigned: proto.Bool(false),
			Data: []int32{-5, 1 << 20}, Name: proto.String("bias"), DataType: netdef.TensorProto_INT32.Enum()}},
	} {
		var b blob.Blob
		b.Set(c.q)
		got, err := blob.SerializeBlob(c.name, &b)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want, err := proto.MarshalOptions{Deterministic: true}.Marshal(&netdef.BlobProto{Name: proto.String(c.name), Type: proto.String("Int8TensorCPU"), Qtensor: c.want})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: serialized %x, want %x", c.name, got, want)
		}
		var back blob.Blob
		if _, err := blob.DeserializeBlob(got, &back); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		q, ok := back.Get().(*Int8Tensor)
		if !ok || q.Scale != c.q.Scale || q.ZeroPoint != c.q.ZeroPoint || q.T.DataType() != c.q.T.DataType() ||
			!reflect.DeepEqual(q.T.Dims(), c.q.T.Dims()) || !reflect.DeepEqual(q.T.Raw(), c.q.T.Raw()) {
			t.Errorf("%s: read back %v, want %v", c.name, back.Get(), c.q)
		}
	}
}

// TestInt8DeserializeErrors feeds damaged QTensorProtos: each is an error
// naming the blob and what is wrong, and the blob keeps its content.
func TestInt8DeserializeErrors(t *testing.T) {
	q := func(mod func(*netdef.QTensorProto)) *netdef.BlobProto {
		p := &netdef.QTensorProto{Dims: []int64{2}, Precision: proto.Int32(8), Scale: proto.Float64(1), Bias: proto.Float64(3), IsSigned: proto.Bool(false),
			Data: []int32{1, 2}, DataType: netdef.TensorProto_UINT8.Enum()}
		mod(p)
		return &netdef.BlobProto{Name: proto.String("w"), Type: proto.String("Int8TensorCPU"), Qtensor: p}
	}
	for _, c := range []struct {
		name string
		p    *netdef.BlobProto
		frag string
	}{
		{"no qtensor", &netdef.BlobProto{Name: proto.String("w"), Type: proto.String("Int8TensorCPU")}, "without a qtensor"},
		{"negative dim", q(func(p *netdef.QTensorProto) { p.Dims = []int64{-2} }), "dims [-2]"},
		{"huge dims", q(func(p *netdef.QTensorProto) { p.Dims = []int64{1 << 40, 1 << 40} }), "dims"},
		{"short data", q(func(p *netdef.QTensorProto) { p.Dims = []int64{3} }), "holds 2 values, want 3"},
		{"code above 255", q(func(p *netdef.QTensorProto) { p.Data = []int32{1, 256} }), "code 256 at 1"},
		{"fractional zero point", q(func(p *netdef.QTensorProto) { p.Bias = proto.Float64(0.5) }), "zero point 0.5"},
		{"float codes", q(func(p *netdef.QTensorProto) { p.DataType = netdef.TensorProto_FLOAT.Enum() }), "FLOAT codes"},
	} {
		var b blob.Blob
		b.Set("kept")
		err := blob.BlobFromProto(c.p, &b)
		if err == nil || !strings.Contains(err.Error(), c.frag) || !strings.Contains(err.Error(), `"w"`) {
			t.Errorf("%s: error %v, want one naming \"w\" and containing %q", c.name, err, c.frag)
		}
		if b.Get() != "kept" {
			t.Errorf("%s: the blob now holds %v", c.name, b.Get())
		}
	}
}
