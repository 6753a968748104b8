package blob

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/devicescope/devicetest"
	"github.com/caffe2go/caffe2go/netdef"
)

// equalTensors reports how a and b differ (type, shape, device or an
// element, floats compared bit for bit so NaNs match), or "" when equal.
func equalTensors(a, b *Tensor) string {
	if a.DataType() != b.DataType() {
		return fmt.Sprintf("dtype %v != %v", a.DataType(), b.DataType())
	}
	if !slices.Equal(a.Shape(), b.Shape()) {
		return fmt.Sprintf("shape %v != %v", a.Shape(), b.Shape())
	}
	if !sameDevice(a.Device(), b.Device()) {
		return fmt.Sprintf("device %v != %v", a.Device(), b.Device())
	}
	var err error
	if a, err = a.ToHost(); err != nil {
		return err.Error()
	}
	if b, err = b.ToHost(); err != nil {
		return err.Error()
	}
	switch a.DataType() {
	case Float32:
		x, y := Data[float32](a), Data[float32](b)
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
				return fmt.Sprintf("element %d: %v != %v", i, x[i], y[i])
			}
		}
		return ""
	case Float64:
		x, y := Data[float64](a), Data[float64](b)
		for i := range x {
			if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
				return fmt.Sprintf("element %d: %v != %v", i, x[i], y[i])
			}
		}
		return ""
	}
	if !reflect.DeepEqual(a.Raw(), b.Raw()) {
		return fmt.Sprintf("elements %.200s != %.200s", fmt.Sprint(a.Raw()), fmt.Sprint(b.Raw()))
	}
	return ""
}

func mustMarshal(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wantErr(t *testing.T, err error, substrs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", substrs)
	}
	for _, s := range substrs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not contain %q", err, s)
		}
	}
}

var negZero = float32(math.Copysign(0, -1))

// sampleTensors has one tensor of every element type, with the awkward
// values of each.
func sampleTensors() []struct {
	name  string
	t     *Tensor
	field string // the TensorProto field the data goes to
} {
	long := strings.Repeat("long string \x00 with a NUL ", 40000) // ~1 MB
	return []struct {
		name  string
		t     *Tensor
		field string
	}{
		{"float32", MustFromSlice([]float32{1, -2.5, negZero, float32(math.Inf(1)), float32(math.NaN()), math.SmallestNonzeroFloat32}, 2, 3), "float_data"},
		{"float64", MustFromSlice([]float64{math.Pi, -1e300, math.Inf(-1), math.NaN(), math.SmallestNonzeroFloat64, math.MaxFloat64}, 3, 2), "double_data"},
		{"float16", MustFromSlice([]Half{0x3c00, 0xc000, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x8000, 0x7bff}, 2, 2, 2), "int32_data"},
		{"bool", MustFromSlice([]bool{true, false, true, true}), "int32_data"},
		{"int8", MustFromSlice([]int8{-128, -1, 0, 1, 127}), "int32_data"},
		{"int16", MustFromSlice([]int16{-32768, -1, 0, 32767}), "int32_data"},
		{"int32", MustFromSlice([]int32{math.MinInt32, -1, 0, math.MaxInt32}), "int32_data"},
		{"int64", MustFromSlice([]int64{math.MinInt64, -1, 0, math.MaxInt64}), "int64_data"},
		{"uint8", MustFromSlice([]uint8{0, 1, 127, 128, 255}), "int32_data"},
		{"uint16", MustFromSlice([]uint16{0, 1, 32768, 65535}), "int32_data"},
		{"string", MustFromSlice([]string{"", "a", "a\x00b", "\x00\x00", "\xff\xfe not UTF-8", long}, 3, 2), "string_data"},
		{"scalar float32", Scalar(float32(42.5)), "float_data"},
		{"scalar string", Scalar("only\x00one"), "string_data"},
		{"scalar int8", Scalar(int8(-7)), "int32_data"},
	}
}

func fieldLens(p *netdef.TensorProto) map[string]int {
	m := map[string]int{}
	add := func(name string, n int) {
		if n > 0 {
			m[name] = n
		}
	}
	add("float_data", len(p.FloatData))
	add("int32_data", len(p.Int32Data))
	add("byte_data", len(p.ByteData))
	add("string_data", len(p.StringData))
	add("double_data", len(p.DoubleData))
	add("int64_data", len(p.Int64Data))
	add("raw_data", len(p.RawData))
	return m
}

func TestRoundTripEveryType(t *testing.T) {
	type tc struct {
		name  string
		t     *Tensor
		field string
	}
	var cases []tc
	for _, c := range sampleTensors() {
		cases = append(cases, tc(c))
	}
	for _, dt := range []DataType{Float32, Float64, Float16, Bool, Int8, Int16, Int32, Int64, Uint8, Uint16, String} {
		empty, err := New(dt, 2, 0, 3)
		if err != nil {
			t.Fatal(err)
		}
		scalar, err := New(dt)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, tc{"empty " + dt.String(), empty, ""}, tc{"zero scalar " + dt.String(), scalar, ""})
	}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := TensorToProto("w", c.t)
			if err != nil {
				t.Fatal(err)
			}
			// The proto: dims, type, name, whole-tensor segment, no
			// device_detail on the CPU, the data in one field.
			if want := c.t.Shape(); len(p.Dims) != len(want) {
				t.Errorf("dims %v, want %v", p.Dims, want)
			}
			if p.DataType == nil || DataType(*p.DataType) != c.t.DataType() {
				t.Errorf("data_type %v, want %v", p.DataType, c.t.DataType())
			}
			if p.GetName() != "w" || p.Segment == nil || p.Segment.GetBegin() != 0 || p.Segment.GetEnd() != int64(c.t.Size()) {
				t.Errorf("name %q segment %v, want w and 0..%d", p.GetName(), p.Segment, c.t.Size())
			}
			if p.DeviceDetail != nil {
				t.Errorf("device_detail %v written for a CPU tensor", p.DeviceDetail)
			}
			lens := fieldLens(p)
			if c.t.Size() == 0 || (c.field == "" && allZero(c.t)) {
				// Only the all-zero scalars of string type have data.
				if c.t.Size() == 0 && len(lens) != 0 {
					t.Errorf("data fields %v for an empty tensor", lens)
				}
			} else if c.field != "" && (len(lens) != 1 || lens[c.field] != c.t.Size()) {
				t.Errorf("data fields %v, want only %s with %d elements", lens, c.field, c.t.Size())
			}

			check := func(how string, got *Tensor, err error) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s: %v", how, err)
				}
				if d := equalTensors(c.t, got); d != "" {
					t.Fatalf("%s: %s", how, d)
				}
			}
			got, err := TensorFromProto(p)
			check("TensorFromProto", got, err)

			var p2 netdef.TensorProto
			if err := proto.Unmarshal(mustMarshal(t, p), &p2); err != nil {
				t.Fatal(err)
			}
			got, err = TensorFromProto(&p2)
			check("wire TensorProto", got, err)

			data, err := SerializeBlob("w", blobOf(c.t))
			if err != nil {
				t.Fatal(err)
			}
			var b Blob
			name, err := DeserializeBlob(data, &b)
			if name != "w" {
				t.Errorf("DeserializeBlob name %q, want w", name)
			}
			check("SerializeBlob", b.Tensor(), err)

			// The proto must not share memory with the tensor.
			if err == nil && c.t.Size() > 0 && c.t.DataType() == Float32 {
				Data[float32](c.t)[0]++
				if p.FloatData[0] == Data[float32](c.t)[0] {
					t.Error("TensorProto shares memory with the tensor")
				}
				Data[float32](c.t)[0]--
			}
		})
	}
}

func allZero(t *Tensor) bool {
	for _, v := range t.AsFloat64s() {
		if v != 0 {
			return false
		}
	}
	return true
}

func blobOf(v any) *Blob {
	b := new(Blob)
	b.Set(v)
	return b
}

// TestWideningOnTheWire checks the exact int32_data values Caffe2 writes
// for the small types: sign extension for INT8/INT16, zero extension for
// UINT8/UINT16 and FLOAT16 bit patterns, 0/1 for BOOL.
func TestWideningOnTheWire(t *testing.T) {
	cases := []struct {
		t    *Tensor
		want []int32
	}{
		{MustFromSlice([]int8{-128, -1, 127}), []int32{-128, -1, 127}},
		{MustFromSlice([]int16{-32768, -2, 32767}), []int32{-32768, -2, 32767}},
		{MustFromSlice([]uint8{0, 128, 255}), []int32{0, 128, 255}},
		{MustFromSlice([]uint16{0, 40000, 65535}), []int32{0, 40000, 65535}},
		{MustFromSlice([]Half{HalfFromFloat32(-2), 0x8000, 0xffff}), []int32{0xc000, 0x8000, 0xffff}},
		{MustFromSlice([]bool{true, false, true}), []int32{1, 0, 1}},
	}
	for _, c := range cases {
		p, err := TensorToProto("x", c.t)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(p.Int32Data, c.want) {
			t.Errorf("%v: int32_data %v, want %v", c.t, p.Int32Data, c.want)
		}
		if p.ByteData != nil {
			t.Errorf("%v: byte_data written", c.t)
		}
	}
}

// The hand-built expected bytes below follow Caffe2's C++ serializer:
// fields in field-number order, dims unpacked, data fields packed, every
// set optional field written (data_type FLOAT = 1, segment begin 0).

func appendBytesField(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendVarintField(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func handSegment(begin, end int64) []byte {
	var s []byte
	s = appendVarintField(s, 1, uint64(begin))
	return appendVarintField(s, 2, uint64(end))
}

func handTensorBlob(name string, tensor []byte) []byte {
	var b []byte
	b = appendBytesField(b, 1, []byte(name))
	b = appendBytesField(b, 2, []byte("Tensor"))
	return appendBytesField(b, 3, tensor)
}

func TestSerializeBlobBytesByHand(t *testing.T) {
	t.Run("float", func(t *testing.T) {
		vals := []float32{1.5, -2, 0, 3.25}
		var tp []byte
		tp = appendVarintField(tp, 1, 2) // dims, unpacked: one tag each
		tp = appendVarintField(tp, 1, 2)
		tp = appendVarintField(tp, 2, 1) // data_type FLOAT, written although default
		var packed []byte
		for _, v := range vals {
			packed = protowire.AppendFixed32(packed, math.Float32bits(v))
		}
		tp = appendBytesField(tp, 3, packed) // float_data, packed
		tp = appendBytesField(tp, 7, []byte("fc_w"))
		tp = appendBytesField(tp, 11, handSegment(0, 4))
		want := handTensorBlob("fc_w", tp)

		got, err := SerializeBlob("fc_w", blobOf(MustFromSlice(vals, 2, 2)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("bytes\n got %x\nwant %x", got, want)
		}
		// And spelled out, so the test does not only trust protowire.
		lit := "0a04" + hex.EncodeToString([]byte("fc_w")) +
			"1206" + hex.EncodeToString([]byte("Tensor")) +
			"1a24" + "08020802" + "1001" +
			"1a10" + "0000c03f" + "000000c0" + "00000000" + "00005040" +
			"3a04" + hex.EncodeToString([]byte("fc_w")) +
			"5a0408001004"
		if hex.EncodeToString(got) != lit {
			t.Fatalf("bytes\n got %x\nwant %s", got, lit)
		}
	})

	t.Run("int8 negative", func(t *testing.T) {
		vals := []int8{-1, 5, -128}
		var tp []byte
		tp = appendVarintField(tp, 1, 3)
		tp = appendVarintField(tp, 2, 7) // INT8
		var packed []byte
		for _, v := range vals {
			packed = protowire.AppendVarint(packed, uint64(int64(v))) // 10-byte varints for negatives
		}
		if len(packed) != 10+1+10 {
			t.Fatalf("hand encoding has %d bytes", len(packed))
		}
		tp = appendBytesField(tp, 4, packed) // int32_data, packed
		tp = appendBytesField(tp, 7, []byte("q"))
		tp = appendBytesField(tp, 11, handSegment(0, 3))
		want := handTensorBlob("q", tp)

		got, err := SerializeBlob("q", blobOf(MustFromSlice(vals)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("bytes\n got %x\nwant %x", got, want)
		}
	})

	t.Run("uint8 and CUDA device_detail", func(t *testing.T) {
		// device_detail (8) sits between name (7) and segment (11).
		tensor := MustFromSlice([]uint8{200, 1})
		tensor.SetDevice(netdef.NewDeviceOption(netdef.CUDA, 3))
		var tp []byte
		tp = appendVarintField(tp, 1, 2)
		tp = appendVarintField(tp, 2, 6) // UINT8
		tp = appendBytesField(tp, 4, []byte{0xc8, 0x01, 0x01})
		tp = appendBytesField(tp, 7, []byte("u"))
		var dev []byte
		dev = appendVarintField(dev, 1, 1)
		dev = appendVarintField(dev, 2, 3)
		tp = appendBytesField(tp, 8, dev)
		tp = appendBytesField(tp, 11, handSegment(0, 2))
		want := handTensorBlob("u", tp)
		got, err := SerializeBlob("u", blobOf(tensor))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("bytes\n got %x\nwant %x", got, want)
		}
	})

	t.Run("empty tensor", func(t *testing.T) {
		tensor, _ := New(Float64, 2, 0, 3)
		var tp []byte
		for _, d := range []uint64{2, 0, 3} {
			tp = appendVarintField(tp, 1, d)
		}
		tp = appendVarintField(tp, 2, 13) // DOUBLE
		tp = appendBytesField(tp, 7, []byte("e"))
		tp = appendBytesField(tp, 11, handSegment(0, 0))
		want := handTensorBlob("e", tp)
		got, err := SerializeBlob("e", blobOf(tensor))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("bytes\n got %x\nwant %x", got, want)
		}
	})

	t.Run("strings", func(t *testing.T) {
		var tp []byte
		tp = appendVarintField(tp, 1, 2)
		tp = appendVarintField(tp, 2, 4) // STRING
		tp = appendBytesField(tp, 6, []byte("a\x00"))
		tp = appendBytesField(tp, 6, nil)
		tp = appendBytesField(tp, 7, []byte("s"))
		tp = appendBytesField(tp, 11, handSegment(0, 2))
		want := handTensorBlob("s", tp)
		got, err := SerializeBlob("s", blobOf(MustFromSlice([]string{"a\x00", ""})))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("bytes\n got %x\nwant %x", got, want)
		}
	})

	t.Run("std::string", func(t *testing.T) {
		for _, content := range []string{"hello\x00world", ""} {
			var want []byte
			want = appendBytesField(want, 1, []byte("k"))
			want = appendBytesField(want, 2, []byte("std::string"))
			want = appendBytesField(want, 4, []byte(content)) // written even when empty
			got, err := SerializeBlob("k", blobOf([]byte(content)))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("bytes\n got %x\nwant %x", got, want)
			}
		}
	})
}

func TestStringBlobRoundTrip(t *testing.T) {
	for _, content := range [][]byte{nil, {}, []byte("x\x00y"), bytes.Repeat([]byte{0, 1, 2}, 1<<18)} {
		src := blobOf(content)
		data, err := SerializeBlob("s", src)
		if err != nil {
			t.Fatal(err)
		}
		var b Blob
		b.Set(MustFromSlice([]float32{1})) // replaced
		if _, err := DeserializeBlob(data, &b); err != nil {
			t.Fatal(err)
		}
		got, ok := b.Bytes()
		if !ok || !bytes.Equal(got, content) || got == nil {
			t.Fatalf("got %q (%v), want %q", got, ok, content)
		}
		if b.TypeName() != "std::string" {
			t.Errorf("TypeName %q", b.TypeName())
		}
	}
	// The blob gets a copy.
	p := &netdef.BlobProto{Name: proto.String("s"), Type: proto.String("std::string"), Content: []byte("abc")}
	var b Blob
	if err := BlobFromProto(p, &b); err != nil {
		t.Fatal(err)
	}
	p.Content[0] = 'X'
	if got, _ := b.Bytes(); string(got) != "abc" {
		t.Errorf("blob content %q changed with the proto", got)
	}
}

// TestChunking splits tensors into chunks and reassembles them: tensors
// that record a device this build lacks (CUDA), whose elements stay in Go
// memory, and tensors in a device's own memory (the test device).
func TestChunking(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, dev := range []*netdef.DeviceOption{netdef.NewDeviceOption(netdef.CUDA, 1), devicetest.Option(1)} {
		for _, size := range []int{0, 1, 7, 10, 1001} {
			for _, chunk := range []int{1, 3, 4, 10, 11, 1000, 0, NoChunking} {
				testChunking(t, rng, dev, size, chunk)
			}
		}
	}
}

func testChunking(t *testing.T, rng *rand.Rand, dev *netdef.DeviceOption, size, chunk int) {
	t.Run(fmt.Sprintf("%v/size=%d/chunk=%d", devicescope.KeyOf(dev), size, chunk), func(t *testing.T) {
		vals := make([]int64, size)
		for i := range vals {
			vals[i] = rng.Int63() - rng.Int63()
		}
		src := MustFromSlice(vals, 1, size)
		if _, memory := devicescope.MemoryOf(dev); memory {
			var err error
			if src, err = src.CopyTo(dev); err != nil {
				t.Fatal(err)
			}
		} else {
			src.SetDevice(dev)
		}
		chunks, err := TensorChunksToProtos("w", src, chunk)
		if err != nil {
			t.Fatal(err)
		}
		eff := chunk
		switch chunk {
		case 0:
			eff = DefaultChunkSize
		case NoChunking:
			eff = max(size, 1)
		}
		wantN := max((size+eff-1)/eff, 1)
		if len(chunks) != wantN {
			t.Fatalf("%d chunks, want %d", len(chunks), wantN)
		}
		for i, c := range chunks {
			begin, end := i*eff, min((i+1)*eff, size)
			if c.GetSegment().GetBegin() != int64(begin) || c.GetSegment().GetEnd() != int64(end) {
				t.Errorf("chunk %d segment %v, want %d..%d", i, c.Segment, begin, end)
			}
			if int(c.GetSegment().GetBegin())/eff != i {
				t.Errorf("chunk %d: index begin/chunk = %d", i, int(c.GetSegment().GetBegin())/eff)
			}
			if !slices.Equal(c.Dims, []int64{1, int64(size)}) || c.GetName() != "w" || c.GetDataType() != netdef.TensorProto_INT64 {
				t.Errorf("chunk %d: dims %v name %q type %v", i, c.Dims, c.GetName(), c.GetDataType())
			}
			if !sameDevice(c.GetDeviceDetail(), dev) {
				t.Errorf("chunk %d: device_detail %v", i, c.DeviceDetail)
			}
			if len(c.Int64Data) != end-begin {
				t.Errorf("chunk %d: %d elements, want %d", i, len(c.Int64Data), end-begin)
			}
		}

		// Reassemble in a shuffled order, through ApplyTensorChunk
		// and through DeserializeBlob into one blob.
		order := rng.Perm(len(chunks))
		dst := new(Tensor)
		var b Blob
		for _, i := range order {
			begin, end, err := ApplyTensorChunk(dst, chunks[i])
			if err != nil {
				t.Fatal(err)
			}
			if int64(begin) != chunks[i].Segment.GetBegin() || int64(end) != chunks[i].Segment.GetEnd() {
				t.Errorf("ApplyTensorChunk returned %d..%d for %v", begin, end, chunks[i].Segment)
			}
			bp := &netdef.BlobProto{Name: proto.String("w"), Type: proto.String("Tensor"), Tensor: chunks[i]}
			if name, err := DeserializeBlob(mustMarshal(t, bp), &b); err != nil || name != "w" {
				t.Fatal(name, err)
			}
		}
		if d := equalTensors(src, dst); d != "" {
			t.Fatal("ApplyTensorChunk:", d)
		}
		if d := equalTensors(src, b.Tensor()); d != "" {
			t.Fatal("DeserializeBlob:", d)
		}
	})
}

func TestChunkingEveryType(t *testing.T) {
	for _, c := range sampleTensors() {
		chunks, err := TensorChunksToProtos("x", c.t, 4)
		if err != nil {
			t.Fatal(err)
		}
		dst := MustFromSlice([]float32{9, 9, 9}) // different type: replaced
		for i := len(chunks) - 1; i >= 0; i-- {
			if _, _, err := ApplyTensorChunk(dst, chunks[i]); err != nil {
				t.Fatal(c.name, err)
			}
		}
		if d := equalTensors(c.t, dst); d != "" {
			t.Errorf("%s: %s", c.name, d)
		}
	}
	if _, err := TensorChunksToProtos("x", MustFromSlice([]int32{1}), -2); err == nil {
		t.Error("chunk size -2 accepted")
	}
}

func TestChunkKeys(t *testing.T) {
	if got := ChunkKey("fc_w", 12); got != "fc_w#%12" {
		t.Errorf("ChunkKey = %q", got)
	}
	for key, want := range map[string]string{"fc_w#%0": "fc_w", "a#%b#%3": "a", "plain": "plain", "x#y#%1": "x#y", "#%0": ""} {
		if got := BlobNameFromKey(key); got != want {
			t.Errorf("BlobNameFromKey(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestDeviceDetail(t *testing.T) {
	gpu := MustFromSlice([]float32{1, 2})
	gpu.SetDevice(netdef.NewDeviceOption(netdef.CUDA, 2))
	p, err := TensorToProto("g", gpu)
	if err != nil {
		t.Fatal(err)
	}
	if p.DeviceDetail.Type() != netdef.CUDA || p.DeviceDetail.GetDeviceId() != 2 {
		t.Fatalf("device_detail %v", p.DeviceDetail)
	}
	back, err := TensorFromProto(p)
	if err != nil {
		t.Fatal(err)
	}
	if d := back.Device(); d.Type() != netdef.CUDA || d.GetDeviceId() != 2 {
		t.Errorf("device after round trip %v", d)
	}
	// An explicit CPU device_detail reads as CPU (nil).
	p.DeviceDetail = netdef.NewDeviceOption(netdef.CPU, 0)
	back, err = TensorFromProto(p)
	if err != nil || back.Device() != nil {
		t.Errorf("CPU device_detail: device %v, err %v", back.Device(), err)
	}
}

func TestDeserializeBlobReusesTensor(t *testing.T) {
	src := MustFromSlice([]float32{1, 2, 3, 4}, 2, 2)
	data, err := SerializeBlob("w", blobOf(src))
	if err != nil {
		t.Fatal(err)
	}
	held := MustFromSlice(make([]float32, 10))
	b := blobOf(held)
	if _, err := DeserializeBlob(data, b); err != nil {
		t.Fatal(err)
	}
	if b.Tensor() != held {
		t.Fatal("the blob's tensor was replaced, want it reused")
	}
	if d := equalTensors(src, held); d != "" {
		t.Fatal(d)
	}

	// A tensor on another device is replaced.
	gpu := MustFromSlice([]float32{0})
	gpu.SetDevice(netdef.NewDeviceOption(netdef.CUDA, 0))
	b = blobOf(gpu)
	if _, err := DeserializeBlob(data, b); err != nil {
		t.Fatal(err)
	}
	if b.Tensor() == gpu || b.Tensor().Device() != nil {
		t.Fatal("a tensor on another device was reused")
	}
}

func TestReadCompat(t *testing.T) {
	le := binary.LittleEndian
	f16 := []Half{0x3c00, 0xc000, 0x7bff}
	var f16bytes []byte
	for _, h := range f16 {
		f16bytes = le.AppendUint16(f16bytes, uint16(h))
	}
	var rawF []byte
	for _, v := range []float32{1.5, -3} {
		rawF = le.AppendUint32(rawF, math.Float32bits(v))
	}
	var rawI64 []byte
	for _, v := range []int64{-5, 1 << 40} {
		rawI64 = le.AppendUint64(rawI64, uint64(v))
	}
	dt := func(d netdef.TensorProto_DataType) *netdef.TensorProto_DataType { return d.Enum() }

	cases := []struct {
		name string
		p    *netdef.TensorProto
		want *Tensor
	}{
		{"FLOAT16 from byte_data", &netdef.TensorProto{Dims: []int64{3}, DataType: dt(netdef.TensorProto_FLOAT16), ByteData: f16bytes}, MustFromSlice(f16)},
		{"FLOAT16 from int32_data", &netdef.TensorProto{Dims: []int64{3}, DataType: dt(netdef.TensorProto_FLOAT16), Int32Data: []int32{0x3c00, 0xc000, 0x7bff}}, MustFromSlice(f16)},
		{"FLOAT16 byte_data wins", &netdef.TensorProto{Dims: []int64{3}, DataType: dt(netdef.TensorProto_FLOAT16), ByteData: f16bytes, Int32Data: []int32{1, 2}}, MustFromSlice(f16)},
		{"BYTE into uint8", &netdef.TensorProto{Dims: []int64{2, 2}, DataType: dt(netdef.TensorProto_BYTE), ByteData: []byte{0, 1, 128, 255}}, MustFromSlice([]uint8{0, 1, 128, 255}, 2, 2)},
		{"UINT8 from byte_data", &netdef.TensorProto{Dims: []int64{2}, DataType: dt(netdef.TensorProto_UINT8), ByteData: []byte{7, 200}}, MustFromSlice([]uint8{7, 200})},
		{"INT8 from byte_data", &netdef.TensorProto{Dims: []int64{2}, DataType: dt(netdef.TensorProto_INT8), ByteData: []byte{0xff, 0x80}}, MustFromSlice([]int8{-1, -128})},
		{"INT16 from byte_data", &netdef.TensorProto{Dims: []int64{1}, DataType: dt(netdef.TensorProto_INT16), ByteData: []byte{0xfe, 0xff}}, MustFromSlice([]int16{-2})},
		{"BOOL from byte_data", &netdef.TensorProto{Dims: []int64{3}, DataType: dt(netdef.TensorProto_BOOL), ByteData: []byte{0, 1, 2}}, MustFromSlice([]bool{false, true, true})},
		{"FLOAT from raw_data", &netdef.TensorProto{Dims: []int64{2}, DataType: dt(netdef.TensorProto_FLOAT), RawData: rawF}, MustFromSlice([]float32{1.5, -3})},
		{"INT64 from raw_data", &netdef.TensorProto{Dims: []int64{2}, DataType: dt(netdef.TensorProto_INT64), RawData: rawI64}, MustFromSlice([]int64{-5, 1 << 40})},
		{"UINT16 from raw_data", &netdef.TensorProto{Dims: []int64{2}, DataType: dt(netdef.TensorProto_UINT16), RawData: []byte{1, 0, 0xff, 0xff}}, MustFromSlice([]uint16{1, 65535})},
		{"DOUBLE from raw_data", &netdef.TensorProto{Dims: []int64{1}, DataType: dt(netdef.TensorProto_DOUBLE), RawData: le.AppendUint64(nil, math.Float64bits(-0.25))}, MustFromSlice([]float64{-0.25})},
		{"STRING ignores raw_data", &netdef.TensorProto{Dims: []int64{1}, DataType: dt(netdef.TensorProto_STRING), RawData: []byte("zz"), StringData: [][]byte{[]byte("s")}}, MustFromSlice([]string{"s"})},
		{"absent data_type is FLOAT", &netdef.TensorProto{Dims: []int64{1}, FloatData: []float32{2}}, MustFromSlice([]float32{2})},
		{"absent segment is whole tensor", &netdef.TensorProto{Dims: []int64{2}, DataType: dt(netdef.TensorProto_INT32), Int32Data: []int32{3, 4}}, MustFromSlice([]int32{3, 4})},
		{"no dims is a scalar", &netdef.TensorProto{DataType: dt(netdef.TensorProto_DOUBLE), DoubleData: []float64{7}}, Scalar(7.0)},
		{"narrowing casts truncate", &netdef.TensorProto{Dims: []int64{4}, DataType: dt(netdef.TensorProto_UINT8), Int32Data: []int32{256, 300, -1, 255}}, MustFromSlice([]uint8{0, 44, 255, 255})},
		{"any non-zero int is true", &netdef.TensorProto{Dims: []int64{3}, DataType: dt(netdef.TensorProto_BOOL), Int32Data: []int32{0, -1, 2}}, MustFromSlice([]bool{false, true, true})},
		{"empty UNDEFINED is float [0]", &netdef.TensorProto{Dims: []int64{0, 5}, DataType: dt(netdef.TensorProto_UNDEFINED)}, MustFromSlice([]float32{}, 0)},
		{"partial chunk", &netdef.TensorProto{Dims: []int64{4}, DataType: dt(netdef.TensorProto_INT32), Int32Data: []int32{8, 9}, Segment: &netdef.TensorProto_Segment{Begin: proto.Int64(2), End: proto.Int64(4)}}, MustFromSlice([]int32{0, 0, 8, 9})},
		{"data_format 0", &netdef.TensorProto{Dims: []int64{1}, FloatData: []float32{1}, DataFormat: proto.Uint32(0)}, MustFromSlice([]float32{1})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := TensorFromProto(c.p)
			if err != nil {
				t.Fatal(err)
			}
			if d := equalTensors(c.want, got); d != "" {
				t.Fatal(d)
			}
			// And the same through the wire.
			var p2 netdef.TensorProto
			if err := proto.Unmarshal(mustMarshal(t, c.p), &p2); err != nil {
				t.Fatal(err)
			}
			got, err = TensorFromProto(&p2)
			if err != nil {
				t.Fatal(err)
			}
			if d := equalTensors(c.want, got); d != "" {
				t.Fatal("wire:", d)
			}
		})
	}
}

// TestReadUnpackedAndPacked checks that both encodings of repeated scalars
// are read (Caffe2 packs the data fields but not dims; other writers may
// do either).
func TestReadUnpackedAndPacked(t *testing.T) {
	var b []byte
	// dims packed (Caffe2 writes them unpacked)
	var dims []byte
	dims = protowire.AppendVarint(dims, 2)
	dims = protowire.AppendVarint(dims, 1)
	b = appendBytesField(b, 1, dims)
	b = appendVarintField(b, 2, 2) // INT32
	// int32_data unpacked, one element per tag (Caffe2 packs it)
	minus3 := int64(-3)
	b = appendVarintField(b, 4, uint64(minus3))
	b = appendVarintField(b, 4, 9)
	var p netdef.TensorProto
	if err := proto.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	got, err := TensorFromProto(&p)
	if err != nil {
		t.Fatal(err)
	}
	if d := equalTensors(MustFromSlice([]int32{-3, 9}, 2, 1), got); d != "" {
		t.Fatal(d)
	}
}

func TestTensorFromProtoErrors(t *testing.T) {
	valid := func() *netdef.TensorProto {
		p, err := TensorToProto("w", MustFromSlice([]float32{1, 2, 3, 4}, 2, 2))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	seg := func(b, e int64) *netdef.TensorProto_Segment {
		return &netdef.TensorProto_Segment{Begin: proto.Int64(b), End: proto.Int64(e)}
	}
	cases := []struct {
		name   string
		mutate func(p *netdef.TensorProto)
		want   []string
	}{
		{"too few elements", func(p *netdef.TensorProto) { p.FloatData = p.FloatData[:3] }, []string{`"w"`, "Incorrect proto field size", "float_data has 3"}},
		{"too many elements", func(p *netdef.TensorProto) { p.FloatData = append(p.FloatData, 5) }, []string{"Incorrect proto field size"}},
		{"wrong field", func(p *netdef.TensorProto) { p.DoubleData, p.FloatData = []float64{1, 2, 3, 4}, nil }, []string{"Incorrect proto field size"}},
		{"segment field size", func(p *netdef.TensorProto) { p.Segment = seg(1, 3) }, []string{"Incorrect proto field size", "[1, 3)"}},
		{"negative begin", func(p *netdef.TensorProto) { p.Segment = seg(-1, 3) }, []string{`"w"`, "Invalid chunk -1 3"}},
		{"begin after end", func(p *netdef.TensorProto) { p.Segment = seg(3, 2) }, []string{"Invalid chunk 3 2"}},
		{"end past size", func(p *netdef.TensorProto) { p.Segment = seg(0, 5) }, []string{"Invalid chunk 0 5 with total tensor size 4"}},
		{"raw_data size", func(p *netdef.TensorProto) { p.RawData = make([]byte, 15) }, []string{"Incorrect proto field size", "raw_data has 15 bytes"}},
		{"byte_data size", func(p *netdef.TensorProto) {
			p.DataType = netdef.TensorProto_FLOAT16.Enum()
			p.ByteData = make([]byte, 7)
		}, []string{"Incorrect proto field size", "byte_data"}},
		{"negative dim", func(p *netdef.TensorProto) { p.Dims = []int64{2, -2} }, []string{"invalid dimension -2"}},
		{"overflowing dims", func(p *netdef.TensorProto) { p.Dims = []int64{1 << 40, 1 << 40} }, []string{"invalid dims"}},
		{"too large", func(p *netdef.TensorProto) { p.Dims = []int64{1 << 40}; p.Segment = seg(0, 0); p.FloatData = nil }, []string{`"w"`, "dims [1099511627776] of FLOAT", "needs 4.0 TiB", "over the memory budget"}},
		{"UNDEFINED with elements", func(p *netdef.TensorProto) { p.DataType = netdef.TensorProto_UNDEFINED.Enum() }, []string{"UNDEFINED"}},
		{"ZERO_COLLISION_HASH", func(p *netdef.TensorProto) { p.DataType = netdef.TensorProto_ZERO_COLLISION_HASH.Enum() }, []string{"ZERO_COLLISION_HASH"}},
		{"data_format bfloat16", func(p *netdef.TensorProto) { p.DataFormat = proto.Uint32(1) }, []string{"unsupported serialization format 1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := valid()
			c.mutate(p)
			_, err := TensorFromProto(p)
			wantErr(t, err, c.want...)

			// dst is untouched by a failed chunk.
			dst := MustFromSlice([]int16{1, 2, 3})
			if _, _, err := ApplyTensorChunk(dst, p); err == nil {
				t.Fatal("ApplyTensorChunk accepted it")
			}
			if d := equalTensors(MustFromSlice([]int16{1, 2, 3}), dst); d != "" {
				t.Errorf("dst changed by a failed chunk: %s", d)
			}
		})
	}

	t.Run("unknown data_type value", func(t *testing.T) {
		var b []byte
		b = appendVarintField(b, 1, 1)
		b = appendVarintField(b, 2, 99)
		b = appendBytesField(b, 3, protowire.AppendFixed32(nil, 0))
		var p netdef.TensorProto
		if err := proto.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		_, err := TensorFromProto(&p)
		wantErr(t, err, "unrecognized data type")
	})
	t.Run("nil", func(t *testing.T) {
		_, err := TensorFromProto(nil)
		wantErr(t, err, "nil")
		_, _, err = ApplyTensorChunk(nil, valid())
		wantErr(t, err, `"w"`, "nil")
	})
}

func TestSerializeErrors(t *testing.T) {
	_, err := TensorToProto("t", nil)
	wantErr(t, err, `"t"`, "nil")
	_, err = TensorToProto("t", new(Tensor))
	wantErr(t, err, `"t"`, "UNDEFINED")
	_, err = TensorChunksToProtos("t", nil, 0)
	wantErr(t, err, `"t"`)
	_, err = TensorToProto("t", &Tensor{dtype: Float32, shape: []int{3}, size: 3})
	wantErr(t, err, `"t"`, "does not have data")
	_, err = TensorChunksToProtos("t", &Tensor{dtype: Int64, shape: []int{4}, size: 4, mem: Host[int64]{1}}, 0)
	wantErr(t, err, `"t"`, "does not have data")

	_, err = SerializeBlob("e", new(Blob))
	wantErr(t, err, `"e"`, "No known serializer for nullptr")
	_, err = SerializeBlob("m", blobOf(map[string]int{}))
	wantErr(t, err, `"m"`, "No known serializer for map[string]int")
	_, err = SerializeBlob("s", blobOf("a Go string is not a std::string blob"))
	wantErr(t, err, "No known serializer for string")
	_, err = SerializeBlob("n", blobOf((*Tensor)(nil)))
	wantErr(t, err, `"n"`, "nil tensor")
	_, err = BlobToProto("n", nil)
	wantErr(t, err, `"n"`, "nil blob")
}

func TestDeserializeBlobErrors(t *testing.T) {
	good, err := SerializeBlob("w", blobOf(MustFromSlice([]float32{1, 2, 3})))
	if err != nil {
		t.Fatal(err)
	}
	handBlob := func(typ string, tensor []byte) []byte {
		b := appendBytesField(nil, 1, []byte("w"))
		b = appendBytesField(b, 2, []byte(typ))
		if tensor != nil {
			b = appendBytesField(b, 3, tensor)
		}
		return b
	}
	var noEnd []byte // a segment without its required end
	noEnd = appendVarintField(noEnd, 2, 1)
	noEnd = appendBytesField(noEnd, 11, appendVarintField(nil, 1, 0))
	var shortField []byte
	shortField = appendVarintField(shortField, 1, 3)
	shortField = appendBytesField(shortField, 3, protowire.AppendFixed32(nil, 0))

	cases := []struct {
		name string
		data []byte
		want []string
	}{
		{"garbage", []byte("\xff\xff\xff\xff"), []string{"Cannot parse content into a BlobProto"}},
		{"text", []byte("this is not a protobuf"), []string{"Cannot parse content into a BlobProto"}},
		{"truncated", good[:len(good)-3], []string{"Cannot parse content into a BlobProto"}},
		{"missing required segment end", handBlob("Tensor", noEnd), []string{"Cannot parse content into a BlobProto"}},
		{"unknown type", handBlob("Quux", nil), []string{`"w"`, `No registered deserializer for type "Quux"`}},
		{"no type", handBlob("", nil), []string{"No registered deserializer"}},
		{"wrong field size", handBlob("Tensor", shortField), []string{`"w"`, "Incorrect proto field size"}},
		{"tensor absent", handBlob("Tensor", nil), []string{"Incorrect proto field size"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := blobOf([]byte("old"))
			_, err := DeserializeBlob(c.data, b)
			wantErr(t, err, c.want...)
			if got, _ := b.Bytes(); string(got) != "old" {
				t.Errorf("blob changed to %v by a failed deserialization", b)
			}
		})
	}
	_, err = DeserializeBlob(good, nil)
	wantErr(t, err, `"w"`, "nil blob")
	wantErr(t, BlobFromProto(nil, new(Blob)), "nil BlobProto")
}

// counter is a custom blob type with its own serializer, as a DB reader
// blob registers one.
type counter struct{ n int }

func (*counter) BlobTypeName() string { return "test.Counter" }

type counterSerializer struct{}

func (counterSerializer) Serialize(name string, v any) (*netdef.BlobProto, error) {
	c, ok := v.(*counter)
	if !ok {
		return nil, fmt.Errorf("blob %q: not a counter", name)
	}
	if c.n < 0 {
		return nil, fmt.Errorf("blob %q: negative counter", name)
	}
	return &netdef.BlobProto{Content: []byte(fmt.Sprint(c.n))}, nil
}

func (counterSerializer) Deserialize(p *netdef.BlobProto, b *Blob) error {
	var n int
	if _, err := fmt.Sscan(string(p.GetContent()), &n); err != nil {
		return fmt.Errorf("blob %q: bad counter: %v", p.GetName(), err)
	}
	b.Set(&counter{n})
	return nil
}

func init() { MustRegisterBlobSerializer("test.Counter", counterSerializer{}) }

func TestRegisteredSerializer(t *testing.T) {
	data, err := SerializeBlob("c", blobOf(&counter{41}))
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	want = appendBytesField(want, 1, []byte("c"))
	want = appendBytesField(want, 2, []byte("test.Counter"))
	want = appendBytesField(want, 4, []byte("41"))
	if !bytes.Equal(data, want) {
		t.Fatalf("bytes %x, want %x", data, want)
	}
	var b Blob
	name, err := DeserializeBlob(data, &b)
	if err != nil || name != "c" {
		t.Fatal(name, err)
	}
	if c, ok := b.Get().(*counter); !ok || c.n != 41 {
		t.Fatalf("got %#v", b.Get())
	}
	_, err = SerializeBlob("c", blobOf(&counter{-1}))
	wantErr(t, err, "negative counter")

	for _, bad := range []struct {
		name string
		s    BlobSerializer
	}{{"test.Counter", counterSerializer{}}, {"Tensor", counterSerializer{}}, {"std::string", counterSerializer{}}, {"", counterSerializer{}}, {"x", nil}} {
		if err := RegisterBlobSerializer(bad.name, bad.s); err == nil {
			t.Errorf("RegisterBlobSerializer(%q, %v) accepted", bad.name, bad.s)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("MustRegisterBlobSerializer(%q, %v) did not panic", bad.name, bad.s)
				}
			}()
			MustRegisterBlobSerializer(bad.name, bad.s)
		}()
	}
}
