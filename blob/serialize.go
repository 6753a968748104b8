package blob

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
)

// DefaultChunkSize is the number of elements per chunk that Caffe2's Save
// uses by default (its flag caffe2_tensor_chunk_size).
const DefaultChunkSize = 1_000_000

// NoChunking, passed as the chunk size to TensorChunksToProtos, puts the
// whole tensor into one chunk (Caffe2's kNoChunking).
const NoChunking = -1

// ChunkSeparator separates a blob name from the chunk index in the DB key of
// a chunk record: "fc_w#%0", "fc_w#%1", … (Caffe2's kChunkIdSeparator).
const ChunkSeparator = "#%"

// The blob type names that Caffe2 writes into BlobProto.type for the two
// built-in kinds of content.
const (
	tensorTypeName = "Tensor"
	stringTypeName = "std::string"
)

// ChunkKey returns the DB key of chunk index of blob name: name + "#%" +
// index, as Caffe2's Save writes it.
func ChunkKey(name string, index int) string {
	return name + ChunkSeparator + strconv.Itoa(index)
}

// BlobNameFromKey returns the blob name a DB key stands for: the key up to
// the first "#%", or the whole key when it has none (Caffe2's Load rule).
func BlobNameFromKey(key string) string {
	name, _, _ := strings.Cut(key, ChunkSeparator)
	return name
}

// TensorToProto converts the whole of t into one TensorProto named name, as
// Caffe2's unchunked serializer does: dims, data_type, name, device_detail
// (only for a tensor on a device other than the CPU), the elements in the
// field the data type uses, and always a segment 0..size.
//
// FLOAT goes to float_data, DOUBLE to double_data, INT64 to int64_data,
// STRING to string_data; INT32, BOOL, UINT8, INT8, UINT16 and INT16 are
// widened into int32_data, and FLOAT16 is written as its 16-bit patterns in
// int32_data. The proto does not share memory with t.
func TensorToProto(name string, t *Tensor) (*netdef.TensorProto, error) {
	t, err := serializable(name, t)
	if err != nil {
		return nil, err
	}
	return tensorChunk(name, t, 0, t.size), nil
}

// TensorChunksToProtos splits t into chunks of chunkSize elements, the way
// Caffe2's Save does, and returns one TensorProto per chunk in ascending
// order: element i of the result is chunk i (its DB key is ChunkKey(name,
// i)), with segment [i·chunkSize, min((i+1)·chunkSize, size)). Every chunk
// carries the full dims, so a tensor with no elements still gives exactly
// one chunk, with segment 0..0, that keeps its shape.
//
// A chunkSize of 0 means DefaultChunkSize and NoChunking (−1) means one
// chunk for the whole tensor; other negative sizes are an error.
func TensorChunksToProtos(name string, t *Tensor, chunkSize int) ([]*netdef.TensorProto, error) {
	t, err := serializable(name, t)
	if err != nil {
		return nil, err
	}
	switch {
	case chunkSize == 0:
		chunkSize = DefaultChunkSize
	case chunkSize == NoChunking:
		chunkSize = max(t.size, 1)
	case chunkSize < 0:
		return nil, fmt.Errorf("blob %q: invalid chunk size %d", name, chunkSize)
	}
	n := 1 // an empty tensor still has one chunk, for its shape
	if t.size > 0 {
		n = (t.size-1)/chunkSize + 1
	}
	out := make([]*netdef.TensorProto, 0, n)
	for begin := 0; begin < max(t.size, 1); begin += chunkSize {
		end := t.size
		if chunkSize < end-begin {
			end = begin + chunkSize
		}
		out = append(out, tensorChunk(name, t, begin, end))
	}
	return out, nil
}

// serializable returns t, or a copy of it in Go memory when its elements
// live in a device's memory (recording that device, so that the proto's
// device_detail names it), after checking that it can be written: a known
// element type and storage for all of its elements.
func serializable(name string, t *Tensor) (*Tensor, error) {
	if t == nil {
		return nil, fmt.Errorf("blob %q: cannot serialize a nil tensor", name)
	}
	if !t.dtype.Valid() {
		return nil, fmt.Errorf("blob %q: cannot serialize a tensor of type %v", name, t.dtype)
	}
	if t.mem == nil || t.capacity() < t.size {
		return nil, fmt.Errorf("blob %q: the tensor %v does not have data yet (a tensor of non-zero shape that was never allocated)", name, t)
	}
	if t.OnHost() {
		return t, nil
	}
	h, err := t.ToHost()
	if err != nil {
		return nil, fmt.Errorf("blob %q: %w", name, err)
	}
	h.device = t.device
	return h, nil
}

// tensorChunk builds the proto of elements [begin, end) of a checked tensor.
func tensorChunk(name string, t *Tensor, begin, end int) *netdef.TensorProto {
	p := &netdef.TensorProto{
		Dims:     make([]int64, len(t.shape)),
		DataType: netdef.TensorProto_DataType(t.dtype).Enum(),
		Name:     proto.String(name),
		Segment: &netdef.TensorProto_Segment{
			Begin: proto.Int64(int64(begin)),
			End:   proto.Int64(int64(end)),
		},
	}
	for i, d := range t.shape {
		p.Dims[i] = int64(d)
	}
	if t.device != nil && t.device.Type() != netdef.CPU {
		p.DeviceDetail = t.Device()
	}
	switch s := t.mem.(type) {
	case Host[float32]:
		p.FloatData = slices.Clone(s[begin:end])
	case Host[float64]:
		p.DoubleData = slices.Clone(s[begin:end])
	case Host[int32]:
		p.Int32Data = slices.Clone(s[begin:end])
	case Host[int64]:
		p.Int64Data = slices.Clone(s[begin:end])
	case Host[Half]:
		p.Int32Data = widen(s[begin:end])
	case Host[int8]:
		p.Int32Data = widen(s[begin:end])
	case Host[int16]:
		p.Int32Data = widen(s[begin:end])
	case Host[uint8]:
		p.Int32Data = widen(s[begin:end])
	case Host[uint16]:
		p.Int32Data = widen(s[begin:end])
	case Host[bool]:
		v := make([]int32, end-begin)
		for i, b := range s[begin:end] {
			if b {
				v[i] = 1
			}
		}
		p.Int32Data = v
	case Host[string]:
		v := make([][]byte, end-begin)
		for i, e := range s[begin:end] {
			v[i] = []byte(e)
		}
		p.StringData = v
	}
	return p
}

// widen converts small integers (and half-precision bit patterns, which
// are zero-extended) to int32, as Caffe2's CopyToProtoWithCast does.
func widen[T int8 | int16 | uint8 | uint16 | Half](s []T) []int32 {
	v := make([]int32, len(s))
	for i, e := range s {
		v[i] = int32(e)
	}
	return v
}

// TensorFromProto builds a new tensor from p: the shape from dims, the
// element type from data_type, the elements from p's segment (the whole
// tensor when it has none); elements outside the segment are zero. The
// tensor records the device named in device_detail (none = CPU) and holds
// its elements in Go memory. See ApplyTensorChunk for the rules and the
// errors.
func TensorFromProto(p *netdef.TensorProto) (*Tensor, error) {
	t := &Tensor{shape: []int{}}
	if _, _, err := ApplyTensorChunk(t, p); err != nil {
		return nil, err
	}
	return t, nil
}

// ApplyTensorChunk writes one chunk of a serialized tensor into dst, the
// way Caffe2's TensorDeserializer does, and returns the chunk's element
// range [begin, end). Applying every chunk of a tensor, in any order, to the
// same dst reassembles it.
//
//  1. dst is given p's element type and dims (Init: its storage is kept
//     when the type is unchanged and it is large enough, so chunks applied
//     earlier survive) and p's device_detail (absent = CPU).
//  2. The chunk is p's segment, or the whole tensor when it has none; it
//     must satisfy 0 ≤ begin ≤ end ≤ size ("Invalid chunk").
//  3. The data field must hold exactly end − begin elements ("Incorrect
//     proto field size"). It is raw_data (little-endian) when present and
//     the type is not STRING, else the typed field: float_data, double_data, int64_data, string_data or
//     int32_data, which INT32, BOOL, UINT8, INT8, UINT16, INT16 and FLOAT16
//     (bit patterns) read with a C-style narrowing cast. Those last six read
//     byte_data instead when it is present (2 little-endian bytes per
//     element for the 16-bit types), and the legacy BYTE type reads
//     byte_data into a UINT8 tensor.
//
// An absent data_type means FLOAT, the proto2 default; an unknown value is
// an error ("unrecognized data type"). A tensor of type UNDEFINED with no
// elements becomes an empty FLOAT tensor of shape [0], as in Caffe2;
// UNDEFINED elements (nested blobs) are not supported. A data_format other
// than 0 (FMT_PROTOBUF) is an error, and so are dims whose elements the
// memory budget refuses (see CheckAllocation: a chunk carries the full dims
// but only part of the data, so a few bytes can claim any size). Errors
// name the blob (p's name) and leave dst unchanged.
func ApplyTensorChunk(dst *Tensor, p *netdef.TensorProto) (begin, end int, err error) {
	return applyTensorChunk(dst, p, p.GetName())
}

// applyTensorChunk is ApplyTensorChunk with the blob name for errors.
func applyTensorChunk(dst *Tensor, p *netdef.TensorProto, name string) (begin, end int, err error) {
	if p == nil {
		return 0, 0, fmt.Errorf("blob: cannot deserialize a nil TensorProto")
	}
	if dst == nil {
		return 0, 0, fmt.Errorf("blob %q: cannot deserialize into a nil tensor", name)
	}
	pdt := p.GetDataType()
	if f := p.GetDataFormat(); f != 0 {
		return 0, 0, fmt.Errorf("blob %q: unsupported serialization format %d", name, f)
	}
	shape := make([]int, len(p.GetDims()))
	for i, d := range p.GetDims() {
		if d < 0 || d > math.MaxInt {
			return 0, 0, fmt.Errorf("blob %q: invalid dimension %d in dims %v", name, d, p.GetDims())
		}
		shape[i] = int(d)
	}
	size, err := numElements(shape)
	if err != nil {
		return 0, 0, fmt.Errorf("blob %q: invalid dims %v: %v", name, p.GetDims(), err)
	}

	var dt DataType
	switch pdt {
	case netdef.TensorProto_UNDEFINED:
		if size != 0 {
			return 0, 0, fmt.Errorf("blob %q: cannot deserialize %d elements of type UNDEFINED (nested blobs are not supported)", name, size)
		}
		dt, shape = Float32, []int{0} // Caffe2's legacy empty tensor
	case netdef.TensorProto_BYTE:
		dt = Uint8
	default:
		dt = DataType(pdt)
		if _, known := netdef.TensorProto_DataType_name[int32(pdt)]; !known {
			return 0, 0, fmt.Errorf("blob %q: cannot deserialize tensor: unrecognized data type %d", name, int32(pdt))
		}
		if !dt.Valid() {
			return 0, 0, fmt.Errorf("blob %q: cannot deserialize a tensor of type %v", name, pdt)
		}
	}
	// Dims come from untrusted bytes, and a chunk legitimately carries the
	// full dims with only a slice of the data: the memory budget keeps a
	// few bytes from asking for terabytes, also for a tensor that goes to
	// a device.
	if err := CheckElements(dt, size); err != nil {
		return 0, 0, fmt.Errorf("blob %q: dims %v of %v: %w", name, p.GetDims(), dt, err)
	}

	begin, end = 0, size
	if seg := p.GetSegment(); seg != nil {
		b, e := seg.GetBegin(), seg.GetEnd()
		if b < 0 || b > e || e > int64(size) {
			return 0, 0, fmt.Errorf("blob %q: Invalid chunk %d %d with total tensor size %d", name, b, e, size)
		}
		begin, end = int(b), int(e)
	}
	n := end - begin

	src, field, got := dataSource(p, pdt, dt)
	want := n
	if src != srcTyped {
		want = n * dt.ItemSize()
	}
	if got != want {
		return 0, 0, fmt.Errorf("blob %q: Incorrect proto field size: %s has %d %s, chunk [%d, %d) of %v needs %d",
			name, field, got, unitName(src), begin, end, pdt, want)
	}

	dst.SetDevice(p.GetDeviceDetail())
	if err := dst.Init(dt, shape...); err != nil {
		return 0, 0, fmt.Errorf("blob %q: %w", name, err)
	}
	if dst.OnHost() {
		fillChunk(dst, p, src, begin, end)
		return begin, end, nil
	}
	// A tensor in a device's memory: decode the chunk on the host, then
	// copy it into place.
	staged := &Tensor{dtype: dt, shape: []int{n}, size: n, mem: makeHost(dt, n)}
	fillChunk(staged, p, src, 0, n)
	md, _ := devicescope.MemoryOf(dst.device)
	if err := md.CopyFromHost(dst.mem, begin*dt.ItemSize(), staged.mem.(hostMemory).bytes(n)); err != nil {
		return 0, 0, fmt.Errorf("blob %q: copying chunk [%d, %d) to %v: %w", name, begin, end, md.Key(), err)
	}
	return begin, end, nil
}

// source says where a chunk's elements are read from.
type source int

const (
	srcTyped source = iota // the typed repeated field, one entry per element
	srcRaw                 // raw_data, little-endian
	srcBytes               // byte_data, little-endian
)

func unitName(s source) string {
	if s == srcTyped {
		return "elements"
	}
	return "bytes"
}

// dataSource picks the field p's elements are in and returns its name and
// length (in elements for typed fields, in bytes otherwise).
func dataSource(p *netdef.TensorProto, pdt netdef.TensorProto_DataType, dt DataType) (source, string, int) {
	if p.RawData != nil && dt != String {
		return srcRaw, "raw_data", len(p.RawData)
	}
	switch pdt {
	case netdef.TensorProto_BYTE:
		return srcBytes, "byte_data", len(p.ByteData)
	case netdef.TensorProto_FLOAT16, netdef.TensorProto_BOOL, netdef.TensorProto_UINT8,
		netdef.TensorProto_INT8, netdef.TensorProto_UINT16, netdef.TensorProto_INT16:
		if p.ByteData != nil {
			return srcBytes, "byte_data", len(p.ByteData)
		}
	}
	switch dt {
	case Float32:
		return srcTyped, "float_data", len(p.FloatData)
	case Float64:
		return srcTyped, "double_data", len(p.DoubleData)
	case Int64:
		return srcTyped, "int64_data", len(p.Int64Data)
	case String:
		return srcTyped, "string_data", len(p.StringData)
	}
	return srcTyped, "int32_data", len(p.Int32Data)
}

// fillChunk copies the checked elements [begin, end) into dst's storage.
func fillChunk(dst *Tensor, p *netdef.TensorProto, src source, begin, end int) {
	le := binary.LittleEndian
	bytes := p.RawData
	if src == srcBytes {
		bytes = p.ByteData
	}
	switch d := dst.mem.(type) {
	case Host[float32]:
		d = d[begin:end]
		if src == srcTyped {
			copy(d, p.FloatData)
			return
		}
		for i := range d {
			d[i] = math.Float32frombits(le.Uint32(bytes[4*i:]))
		}
	case Host[float64]:
		d = d[begin:end]
		if src == srcTyped {
			copy(d, p.DoubleData)
			return
		}
		for i := range d {
			d[i] = math.Float64frombits(le.Uint64(bytes[8*i:]))
		}
	case Host[int64]:
		d = d[begin:end]
		if src == srcTyped {
			copy(d, p.Int64Data)
			return
		}
		for i := range d {
			d[i] = int64(le.Uint64(bytes[8*i:]))
		}
	case Host[int32]:
		d = d[begin:end]
		if src == srcTyped {
			copy(d, p.Int32Data)
			return
		}
		for i := range d {
			d[i] = int32(le.Uint32(bytes[4*i:]))
		}
	case Host[string]:
		d = d[begin:end]
		for i := range d {
			d[i] = string(p.StringData[i])
		}
	case Host[bool]:
		d = d[begin:end]
		if src == srcTyped {
			for i := range d {
				d[i] = p.Int32Data[i] != 0
			}
			return
		}
		for i := range d {
			d[i] = bytes[i] != 0
		}
	case Host[uint8]:
		fillNarrow(d[begin:end], p.Int32Data, bytes, src, func(b []byte) uint8 { return b[0] })
	case Host[int8]:
		fillNarrow(d[begin:end], p.Int32Data, bytes, src, func(b []byte) int8 { return int8(b[0]) })
	case Host[uint16]:
		fillNarrow(d[begin:end], p.Int32Data, bytes, src, le.Uint16)
	case Host[int16]:
		fillNarrow(d[begin:end], p.Int32Data, bytes, src, func(b []byte) int16 { return int16(le.Uint16(b)) })
	case Host[Half]:
		fillNarrow(d[begin:end], p.Int32Data, bytes, src, func(b []byte) Half { return Half(le.Uint16(b)) })
	}
}

// fillNarrow fills a small-integer chunk from int32_data (truncating, as a
// C cast does) or from little-endian bytes.
func fillNarrow[T int8 | int16 | uint8 | uint16 | Half](d []T, ints []int32, bytes []byte, src source, dec func([]byte) T) {
	if src == srcTyped {
		for i := range d {
			d[i] = T(ints[i])
		}
		return
	}
	w := TypeOf[T]().ItemSize()
	for i := range d {
		d[i] = dec(bytes[w*i:])
	}
}

// BlobSerializer converts the content of blobs of one registered type to
// and from a BlobProto. Register one with RegisterBlobSerializer under the
// name the content's Blob.TypeName reports (for a custom type, the result
// of its BlobTypeName method), which is also the BlobProto.type it reads.
type BlobSerializer interface {
	// Serialize returns the BlobProto of value, the content of the blob
	// called name. BlobToProto then sets the proto's name and type.
	Serialize(name string, value any) (*netdef.BlobProto, error)
	// Deserialize sets b's content from p, whose type is the registered
	// name. It may reuse what b holds.
	Deserialize(p *netdef.BlobProto, b *Blob) error
}

var (
	serializersMu sync.RWMutex
	serializers   = map[string]BlobSerializer{
		tensorTypeName: tensorSerializer{},
		stringTypeName: stringSerializer{},
	}
)

// RegisterBlobSerializer makes s the serializer and deserializer of blob
// content of type typeName (see BlobSerializer). An empty typeName, a nil s
// or a typeName already registered ("Tensor" and "std::string" always are)
// is an error.
func RegisterBlobSerializer(typeName string, s BlobSerializer) error {
	if typeName == "" || s == nil {
		return fmt.Errorf("blob: RegisterBlobSerializer(%q) needs a type name and a serializer", typeName)
	}
	serializersMu.Lock()
	defer serializersMu.Unlock()
	if _, dup := serializers[typeName]; dup {
		return fmt.Errorf("blob: a serializer for blob type %q is already registered", typeName)
	}
	serializers[typeName] = s
	return nil
}

// MustRegisterBlobSerializer is RegisterBlobSerializer for init functions:
// it panics on an error.
func MustRegisterBlobSerializer(typeName string, s BlobSerializer) {
	if err := RegisterBlobSerializer(typeName, s); err != nil {
		panic(err)
	}
}

func lookupSerializer(typeName string) BlobSerializer {
	serializersMu.RLock()
	defer serializersMu.RUnlock()
	return serializers[typeName]
}

// BlobToProto returns the BlobProto of b's content, named name, without
// chunking: {name, type: "Tensor", tensor} with a segment covering the
// whole tensor (see TensorToProto), {name, type: "std::string", content}
// for a byte string, or what the serializer registered for b's TypeName
// produces. Content without a serializer is an error ("No known serializer
// for <type>").
func BlobToProto(name string, b *Blob) (*netdef.BlobProto, error) {
	if b == nil {
		return nil, fmt.Errorf("blob %q: cannot serialize a nil blob", name)
	}
	typeName := b.TypeName()
	s := lookupSerializer(typeName)
	if s == nil || b.IsEmpty() {
		return nil, fmt.Errorf("blob %q: No known serializer for %s", name, typeName)
	}
	p, err := s.Serialize(name, b.Get())
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, fmt.Errorf("blob %q: the serializer for %s returned no proto", name, typeName)
	}
	p.Name = proto.String(name)
	p.Type = proto.String(typeName)
	return p, nil
}

// SerializeBlob returns the serialized BlobProto of b's content, named name
// (see BlobToProto), marshalled deterministically with fields in
// field-number order, byte for byte as Caffe2's Blob::Serialize writes it.
func SerializeBlob(name string, b *Blob) ([]byte, error) {
	p, err := BlobToProto(name, b)
	if err != nil {
		return nil, err
	}
	data, err := proto.MarshalOptions{Deterministic: true}.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("blob %q: marshal BlobProto: %v", name, err)
	}
	return data, nil
}

// DeserializeBlob parses data as a BlobProto and sets b's content from it
// (see BlobFromProto). It returns the name stored in the proto, also when
// the content is bad. Bytes that are not a BlobProto give "Cannot parse
// content into a BlobProto".
func DeserializeBlob(data []byte, b *Blob) (name string, err error) {
	p := new(netdef.BlobProto)
	if err := proto.Unmarshal(data, p); err != nil {
		return "", fmt.Errorf("blob: Cannot parse content into a BlobProto: %v", err)
	}
	return p.GetName(), BlobFromProto(p, b)
}

// BlobFromProto sets b's content from p. A "Tensor" proto is read into the
// tensor b already holds when it is on the same device (so chunks of one
// tensor deserialized into one blob reassemble it, and code holding that
// tensor sees the new value), else into a new tensor; see ApplyTensorChunk.
// A "std::string" proto makes b hold a copy of content. Any other type
// needs a registered serializer ("No registered deserializer for type X").
// On error b is unchanged, unless a registered deserializer changed it.
func BlobFromProto(p *netdef.BlobProto, b *Blob) error {
	if p == nil {
		return fmt.Errorf("blob: cannot deserialize a nil BlobProto")
	}
	if b == nil {
		return fmt.Errorf("blob %q: cannot deserialize into a nil blob", p.GetName())
	}
	s := lookupSerializer(p.GetType())
	if s == nil {
		return fmt.Errorf("blob %q: No registered deserializer for type %q", p.GetName(), p.GetType())
	}
	return s.Deserialize(p, b)
}

// tensorSerializer is the built-in serializer of "Tensor" blobs.
type tensorSerializer struct{}

func (tensorSerializer) Serialize(name string, value any) (*netdef.BlobProto, error) {
	t, _ := value.(*Tensor)
	tp, err := TensorToProto(name, t)
	if err != nil {
		return nil, err
	}
	return &netdef.BlobProto{Tensor: tp}, nil
}

func (tensorSerializer) Deserialize(p *netdef.BlobProto, b *Blob) error {
	tp := p.GetTensor()
	if tp == nil {
		tp = &netdef.TensorProto{}
	}
	name := p.GetName()
	if name == "" {
		name = tp.GetName()
	}
	t := b.Tensor()
	if t == nil || !sameDevice(t.device, tp.GetDeviceDetail()) {
		t = &Tensor{shape: []int{}}
	}
	if _, _, err := applyTensorChunk(t, tp, name); err != nil {
		return err
	}
	b.Set(t)
	return nil
}

// sameDevice compares device types and ids, nil meaning the CPU.
func sameDevice(a, b *netdef.DeviceOption) bool {
	at, bt := a.Type(), b.Type()
	if at == netdef.CPU && bt == netdef.CPU {
		return true
	}
	return at == bt && a.GetDeviceId() == b.GetDeviceId()
}

// stringSerializer is the built-in serializer of "std::string" blobs, the
// []byte content of a Blob.
type stringSerializer struct{}

func (stringSerializer) Serialize(name string, value any) (*netdef.BlobProto, error) {
	s, _ := value.([]byte)
	// Non-nil even when empty: Caffe2 always sets content, so it is on the
	// wire (as an empty field 4).
	return &netdef.BlobProto{Content: append([]byte{}, s...)}, nil
}

func (stringSerializer) Deserialize(p *netdef.BlobProto, b *Blob) error {
	b.Set(append([]byte{}, p.GetContent()...))
	return nil
}
