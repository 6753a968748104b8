package blob

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/devicescope/devicetest"
	"github.com/caffe2go/caffe2go/netdef"
)

// fuzzLimit keeps the tensors the fuzzers build small: dims come from the
// input and could otherwise ask for gigabytes. The budget is below the
// size from which CheckAllocation reads the heap, so that whether a
// request fits never depends on what else is on the heap.
func fuzzLimit(f *testing.F) {
	old := SetMemoryBudget(heapCheckBytes - 1)
	f.Cleanup(func() { SetMemoryBudget(old) })
}

// fuzzSeedProtos returns TensorProtos that cover every data type and every
// way of reading them.
func fuzzSeedProtos(f *testing.F) []*netdef.TensorProto {
	var out []*netdef.TensorProto
	for _, c := range sampleTensors() {
		if c.t.NBytes() > 1<<12 {
			continue // the 1 MB string would only slow the fuzzer
		}
		p, err := TensorToProto(c.name, c.t)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, p)
		chunks, err := TensorChunksToProtos(c.name, c.t, 3)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, chunks[len(chunks)-1])
	}
	empty, _ := New(Int16, 2, 0, 3)
	gpu := MustFromSlice([]float64{1, 2})
	gpu.SetDevice(netdef.NewDeviceOption(netdef.CUDA, 1))
	for _, t := range []*Tensor{empty, gpu} {
		p, _ := TensorToProto("x", t)
		out = append(out, p)
	}
	dt := func(d netdef.TensorProto_DataType) *netdef.TensorProto_DataType { return d.Enum() }
	out = append(out,
		&netdef.TensorProto{Dims: []int64{2}, DataType: dt(netdef.TensorProto_FLOAT16), ByteData: []byte{0, 0x3c, 0, 0xc0}},
		&netdef.TensorProto{Dims: []int64{3}, DataType: dt(netdef.TensorProto_BYTE), ByteData: []byte{1, 2, 3}},
		&netdef.TensorProto{Dims: []int64{2}, DataType: dt(netdef.TensorProto_BOOL), ByteData: []byte{0, 5}},
		&netdef.TensorProto{Dims: []int64{1}, DataType: dt(netdef.TensorProto_FLOAT), RawData: binary.LittleEndian.AppendUint32(nil, math.Float32bits(2))},
		&netdef.TensorProto{Dims: []int64{0}, DataType: dt(netdef.TensorProto_UNDEFINED)},
		&netdef.TensorProto{Dims: []int64{4}, DataType: dt(netdef.TensorProto_INT32), Int32Data: []int32{1}, Segment: &netdef.TensorProto_Segment{Begin: proto.Int64(3), End: proto.Int64(4)}},
	)
	return out
}

// hostileProto is a chunk of a few bytes claiming 4·10⁹ floats.
func hostileProto() *netdef.TensorProto {
	return &netdef.TensorProto{Dims: []int64{4e9}, Segment: &netdef.TensorProto_Segment{Begin: proto.Int64(0), End: proto.Int64(0)}}
}

// FuzzDeserializeBlob feeds arbitrary bytes to DeserializeBlob, which must
// return an error or a blob that serializes and reads back to itself, and
// never panic.
func FuzzDeserializeBlob(f *testing.F) {
	fuzzLimit(f)
	for _, p := range fuzzSeedProtos(f) {
		f.Add(mustMarshal(f, &netdef.BlobProto{Name: proto.String(p.GetName()), Type: proto.String("Tensor"), Tensor: p}))
	}
	for _, v := range []any{[]byte("some\x00bytes"), []byte{}, &counter{12}} {
		data, err := SerializeBlob("s", blobOf(v))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte{})
	f.Add([]byte("\xff\xff"))
	f.Add(mustMarshal(f, &netdef.BlobProto{Name: proto.String("w"), Type: proto.String("Tensor"), Tensor: hostileProto()}))
	f.Add(mustMarshal(f, &netdef.BlobProto{Name: proto.String("q"), Type: proto.String("DBReader"), Content: []byte("x")}))

	f.Fuzz(func(t *testing.T, data []byte) {
		var b Blob
		name, err := DeserializeBlob(data, &b)

		// Into a blob already holding a tensor, the outcome is the same.
		held := blobOf(MustFromSlice(make([]float32, 6), 2, 3))
		_, err2 := DeserializeBlob(data, held)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("fresh blob: %v; blob with a tensor: %v", err, err2)
		}
		if err != nil {
			return
		}
		if b.IsEmpty() {
			t.Fatal("DeserializeBlob succeeded but left the blob empty")
		}
		if b.TypeName() != "Tensor" && b.TypeName() != "std::string" {
			return // a test serializer's own business
		}
		again, err := SerializeBlob(name, &b)
		if err != nil {
			t.Fatalf("a deserialized %s blob does not serialize: %v", b.TypeName(), err)
		}
		var b2 Blob
		name2, err := DeserializeBlob(again, &b2)
		if err != nil || name2 != name {
			t.Fatalf("re-serialized blob does not read back: %q %v", name2, err)
		}
		if x := b.Tensor(); x != nil {
			if d := equalTensors(x, b2.Tensor()); d != "" {
				t.Fatalf("round trip changed the tensor: %s", d)
			}
		} else {
			s1, _ := b.Bytes()
			s2, _ := b2.Bytes()
			if string(s1) != string(s2) {
				t.Fatalf("round trip changed the bytes: %q != %q", s1, s2)
			}
		}
	})
}

// FuzzTensorFromProto feeds arbitrary TensorProto bytes to TensorFromProto
// and ApplyTensorChunk, which must return an error or a consistent tensor,
// and never panic. Dims whose storage the memory budget refuses must be an
// error over the budget that names the blob, however few bytes claim them,
// and a tensor read into Go memory must read the same onto a device with
// memory of its own.
func FuzzTensorFromProto(f *testing.F) {
	fuzzLimit(f)
	for _, p := range fuzzSeedProtos(f) {
		f.Add(mustMarshal(f, p))
	}
	f.Add([]byte{})
	f.Add([]byte{0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40}) // dims = 2^62
	f.Add(mustMarshal(f, hostileProto()))

	f.Fuzz(func(t *testing.T, data []byte) {
		var p netdef.TensorProto
		if proto.Unmarshal(data, &p) != nil {
			return
		}
		x, err := TensorFromProto(&p)
		dst := MustFromSlice([]uint16{1, 2, 3})
		begin, end, err2 := ApplyTensorChunk(dst, &p)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("TensorFromProto: %v; ApplyTensorChunk: %v", err, err2)
		}
		if err != nil {
			if d := equalTensors(MustFromSlice([]uint16{1, 2, 3}), dst); d != "" {
				t.Fatalf("failed ApplyTensorChunk changed dst: %s", d)
			}
			over := claimsOverBudget(&p)
			if over && (!errors.Is(err, ErrOverBudget) || !strings.Contains(err.Error(), strconv.Quote(p.GetName()))) {
				t.Fatalf("dims %v over the budget: error %v, want one over the budget naming the blob", p.GetDims(), err)
			}
			if !over && errors.Is(err, ErrOverBudget) {
				t.Fatalf("dims %v of %v within the budget: %v", p.GetDims(), p.GetDataType(), err)
			}
			return
		}
		if claimsOverBudget(&p) {
			t.Fatalf("dims %v of %v over the budget were read into %v", p.GetDims(), p.GetDataType(), x)
		}
		checkOnDevice(t, &p, x)
		n := 1
		for _, d := range x.Shape() {
			n *= d
		}
		if n != x.Size() || len(x.Shape()) != x.NumDims() || begin < 0 || begin > end || end > x.Size() {
			t.Fatalf("inconsistent tensor %v size %d chunk %d..%d", x, x.Size(), begin, end)
		}
		if dst.DataType() != x.DataType() || dst.Size() != x.Size() {
			t.Fatalf("ApplyTensorChunk gave %v, TensorFromProto %v", dst, x)
		}
		q, err := TensorToProto(p.GetName(), x)
		if err != nil {
			t.Fatalf("a deserialized tensor does not serialize: %v", err)
		}
		y, err := TensorFromProto(q)
		if err != nil {
			t.Fatalf("re-serialized tensor does not read back: %v", err)
		}
		if d := equalTensors(x, y); d != "" {
			t.Fatalf("round trip changed the tensor: %s", d)
		}
	})
}

// claimsOverBudget reports whether p, in the default format and with a
// data type a tensor can have, has valid dims whose storage the memory
// budget refuses: the first thing ApplyTensorChunk checks after those.
func claimsOverBudget(p *netdef.TensorProto) bool {
	dt := DataType(p.GetDataType())
	_, known := netdef.TensorProto_DataType_name[int32(p.GetDataType())]
	switch p.GetDataType() {
	case netdef.TensorProto_BYTE:
		dt = Uint8
	case netdef.TensorProto_UNDEFINED:
		return false
	}
	if !known || !dt.Valid() || p.GetDataFormat() != 0 {
		return false
	}
	size := dt.ItemSize()
	if dt == String {
		size = 16
	}
	budget, _ := MemoryBudget()
	elements := int64(1)
	for _, d := range p.GetDims() {
		if d < 0 || (d != 0 && elements > (1<<62)/d) {
			return false // invalid dims, refused before the budget
		}
		elements *= d
	}
	return float64(elements)*float64(size) > float64(budget)
}

// checkOnDevice reads p again into a tensor on the test device (a device
// with memory of its own), which must hold what x, read into Go memory,
// holds; strings cannot live there.
func checkOnDevice(t *testing.T, p *netdef.TensorProto, x *Tensor) {
	q := proto.Clone(p).(*netdef.TensorProto)
	q.DeviceDetail = devicetest.Option(1)
	y, err := TensorFromProto(q)
	if x.DataType() == String {
		if err == nil {
			t.Fatalf("a STRING tensor was read onto %v", q.DeviceDetail)
		}
		return
	}
	if err != nil {
		t.Fatalf("read into Go memory, but not onto the test device: %v", err)
	}
	if y.OnHost() {
		t.Fatalf("read onto %v, the tensor is in Go memory", q.DeviceDetail)
	}
	h, err := y.ToHost()
	if err != nil {
		t.Fatal(err)
	}
	h.SetDevice(x.Device()) // the device p names, which keeps no memory of its own here
	if d := equalTensors(x, h); d != "" {
		t.Fatalf("the test device's copy differs: %s", d)
	}
}
