package persist

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"unsafe"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/vmihailenco/msgpack/v5"
)

// DefaultChunkBytes is the payload size above which a checkpoint splits a
// blob into several chunk records (see ChunkBytes).
const DefaultChunkBytes = 4 << 20

// BlobKind says what a checkpointed blob held.
type BlobKind uint8

// The kinds of blob content a checkpoint stores.
const (
	// KindTensor is a tensor of any element type.
	KindTensor BlobKind = 1
	// KindBytes is a byte-string blob.
	KindBytes BlobKind = 2
	// KindSerialized is other content with a registered blob serializer
	// (blob.RegisterBlobSerializer), such as a DB reader, stored as its
	// serialized BlobProto.
	KindSerialized BlobKind = 3
)

// String returns "tensor", "bytes" or "serialized".
func (k BlobKind) String() string {
	switch k {
	case KindTensor:
		return "tensor"
	case KindBytes:
		return "bytes"
	case KindSerialized:
		return "serialized"
	}
	return fmt.Sprintf("BlobKind(%d)", uint8(k))
}

// recordVersion is the format version written into every record, manifest
// and sealed value; readers reject other versions.
const recordVersion = 1

// blobRecord is one chunk record of a checkpointed blob, encoded with
// msgpack. For a tensor, Begin and End are the element range the chunk holds
// and Data the elements' raw little-endian bytes (Strings for a STRING
// tensor); for byte strings and serialized blobs they are a byte range of the
// content and Data holds those bytes. Every chunk repeats the blob's name,
// type, dims and device, so a record read alone says what it is.
type blobRecord struct {
	V       uint8             `msgpack:"v"`
	Kind    uint8             `msgpack:"k"`
	Name    string            `msgpack:"n"`
	DType   int32             `msgpack:"t"`
	Dims    []int64           `msgpack:"d"`
	DevType netdef.DeviceType `msgpack:"dt"`
	DevID   int32             `msgpack:"di"`
	Chunk   int               `msgpack:"c"`
	Begin   int64             `msgpack:"b"`
	End     int64             `msgpack:"e"`
	Data    []byte            `msgpack:"x"`
	Strings []string          `msgpack:"s"`
}

// sealed wraps a value whose integrity is checked on its own (NetDefs and
// manifests): Body with its CRC32C.
type sealed struct {
	V    uint8  `msgpack:"v"`
	Body []byte `msgpack:"b"`
	CRC  uint32 `msgpack:"c"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errNotSealed marks a value that does not even decode as a sealed record.
var errNotSealed = errors.New("value is not a sealed record")

// seal encodes body into a sealed value.
func seal(body []byte) ([]byte, error) {
	return msgpack.Marshal(&sealed{V: recordVersion, Body: body, CRC: crc32.Checksum(body, castagnoli)})
}

// unseal checks and returns the body of a sealed value.
func unseal(v []byte) ([]byte, error) {
	var s sealed
	if err := msgpackUnmarshal(v, &s); err != nil {
		return nil, fmt.Errorf("%w: %v", errNotSealed, err)
	}
	if s.V != recordVersion {
		return nil, fmt.Errorf("unsupported format version %d (this build reads %d)", s.V, recordVersion)
	}
	if got := crc32.Checksum(s.Body, castagnoli); got != s.CRC {
		return nil, fmt.Errorf("checksum mismatch: stored CRC32C %08x, computed %08x", s.CRC, got)
	}
	return s.Body, nil
}

// msgpackUnmarshal is msgpack.Unmarshal that turns a panic on hostile input
// into an error.
func msgpackUnmarshal(data []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed msgpack: %v", r)
		}
	}()
	return msgpack.Unmarshal(data, v)
}

// encodeRecord marshals r with a buffer sized for its payload.
func encodeRecord(r *blobRecord) ([]byte, error) {
	var buf bytes.Buffer
	n := len(r.Data) + 128 + len(r.Name) + 10*len(r.Dims)
	for _, s := range r.Strings {
		n += len(s) + 5
	}
	buf.Grow(n)
	enc := msgpack.NewEncoder(&buf)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// hostLittleEndian reports whether this machine stores integers
// least-significant byte first, in which case element memory already is the
// record format.
var hostLittleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// sliceBytes views the memory of s as bytes, without copying.
func sliceBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}

// tensorBytes returns the native-order bytes of a non-string tensor's
// elements, sharing its memory.
func tensorBytes(t *blob.Tensor) ([]byte, error) {
	switch t.DataType() {
	case blob.Float32:
		return sliceBytes(blob.Data[float32](t)), nil
	case blob.Float64:
		return sliceBytes(blob.Data[float64](t)), nil
	case blob.Float16:
		return sliceBytes(blob.Data[blob.Half](t)), nil
	case blob.Int8:
		return sliceBytes(blob.Data[int8](t)), nil
	case blob.Int16:
		return sliceBytes(blob.Data[int16](t)), nil
	case blob.Int32:
		return sliceBytes(blob.Data[int32](t)), nil
	case blob.Int64:
		return sliceBytes(blob.Data[int64](t)), nil
	case blob.Uint8:
		return sliceBytes(blob.Data[uint8](t)), nil
	case blob.Uint16:
		return sliceBytes(blob.Data[uint16](t)), nil
	case blob.Bool:
		return sliceBytes(blob.Data[bool](t)), nil
	}
	return nil, fmt.Errorf("tensors of type %v cannot be checkpointed", t.DataType())
}

// swapped returns a copy of b with the bytes of every item of size item
// reversed: native order to little-endian on a big-endian host and back.
func swapped(b []byte, item int) []byte {
	out := make([]byte, len(b))
	for i := 0; i+item <= len(b); i += item {
		for j := 0; j < item; j++ {
			out[i+j] = b[i+item-1-j]
		}
	}
	return out
}

// placeLoaded puts a tensor read into Go memory on the device its blob was
// saved from: a copy in that device's memory when it has memory of its own
// (a GPU), else the same tensor recording the device (which this build may
// lack).
func placeLoaded(t *blob.Tensor, info BlobInfo) (*blob.Tensor, error) {
	if info.DeviceType == netdef.CPU {
		return t, nil
	}
	opt := netdef.NewDeviceOption(info.DeviceType, info.DeviceID)
	if _, ok := devicescope.MemoryOf(opt); !ok {
		t.SetDevice(opt)
		return t, nil
	}
	return t.CopyTo(opt)
}

// hostTensor returns t, or a copy of it in Go memory when its elements
// live in a device's memory, for encoding.
func hostTensor(name string, t *blob.Tensor) (*blob.Tensor, error) {
	if t.OnHost() {
		return t, nil
	}
	h, err := t.ToHost()
	if err != nil {
		return nil, fmt.Errorf("blob %q: %w", name, err)
	}
	return h, nil
}

// deviceOf returns a tensor's device type and id (CPU 0 for none).
func deviceOf(t *blob.Tensor) (netdef.DeviceType, int32) {
	d := t.Device()
	if d == nil {
		return netdef.CPU, 0
	}
	return d.Type(), d.GetDeviceId()
}

// encodedBlob is a blob ready to be written: its description for the
// manifest and a generator of its chunk records.
type encodedBlob struct {
	info BlobInfo
	// next returns chunk i's encoded record; i runs from 0 to info.Chunks-1.
	next func(i int) ([]byte, error)
	// raw is the payload in native byte order, for a checkpoint data file
	// (nil for STRING tensors, whose payload is not one byte slice), and
	// item the size of the units whose bytes a big-endian host swaps.
	raw  []byte
	item int
}

// planBlob describes b (named name) for the manifest and prepares its chunk
// records, splitting payloads larger than chunkBytes. The records are built
// lazily, one at a time, so a big checkpoint never holds two encoded copies
// of everything.
func planBlob(name string, b *blob.Blob, chunkBytes int) (encodedBlob, error) {
	if t := b.Tensor(); t != nil {
		return planTensor(name, t, chunkBytes)
	}
	if data, ok := b.Bytes(); ok {
		return planBytes(name, KindBytes, data, chunkBytes), nil
	}
	if b.IsEmpty() {
		return encodedBlob{}, fmt.Errorf("blob %q is empty; only tensors, byte strings and content with a registered serializer can be checkpointed", name)
	}
	data, err := blob.SerializeBlob(name, b)
	if err != nil {
		return encodedBlob{}, fmt.Errorf("blob %q holds %s, which cannot be checkpointed: %v", name, b.TypeName(), err)
	}
	return planBytes(name, KindSerialized, data, chunkBytes), nil
}

// planBytes chunks a byte payload.
func planBytes(name string, kind BlobKind, data []byte, chunkBytes int) encodedBlob {
	n := len(data)
	chunks := max(1, (n+chunkBytes-1)/chunkBytes)
	info := BlobInfo{Name: name, Kind: kind, DataType: blob.Undefined, Bytes: int64(n), Chunks: chunks, DeviceType: netdef.CPU}
	return encodedBlob{info: info, raw: data, item: 1, next: func(i int) ([]byte, error) {
		begin := min(i*chunkBytes, n)
		end := min(begin+chunkBytes, n)
		return encodeRecord(&blobRecord{V: recordVersion, Kind: uint8(kind), Name: name, Chunk: i,
			Begin: int64(begin), End: int64(end), Data: data[begin:end]})
	}}
}

// planTensor chunks a tensor: fixed-size elements by element count, strings
// by their accumulated length.
func planTensor(name string, t *blob.Tensor, chunkBytes int) (encodedBlob, error) {
	dtype := t.DataType()
	dims := make([]int64, t.NumDims())
	for i, d := range t.Dims() {
		dims[i] = int64(d)
	}
	devType, devID := deviceOf(t)
	t, err := hostTensor(name, t)
	if err != nil {
		return encodedBlob{}, err
	}
	info := BlobInfo{Name: name, Kind: KindTensor, DataType: dtype, Shape: t.Shape(),
		DeviceType: devType, DeviceID: devID, Bytes: int64(t.NBytes())}
	rec := func(i, begin, end int) *blobRecord {
		return &blobRecord{V: recordVersion, Kind: uint8(KindTensor), Name: name, DType: int32(dtype),
			Dims: dims, DevType: devType, DevID: devID, Chunk: i, Begin: int64(begin), End: int64(end)}
	}
	size := t.Size()
	if dtype == blob.String {
		strs := blob.Data[string](t)
		// bounds[i] is where chunk i begins; the last entry is size. A
		// string costs its length plus up to 5 bytes of msgpack header.
		bounds := []int{0}
		acc := 0
		for k, s := range strs {
			if acc > 0 && acc+len(s)+5 > chunkBytes {
				bounds = append(bounds, k)
				acc = 0
			}
			acc += len(s) + 5
		}
		bounds = append(bounds, size)
		info.Chunks = len(bounds) - 1
		return encodedBlob{info: info, next: func(i int) ([]byte, error) {
			r := rec(i, bounds[i], bounds[i+1])
			r.Strings = strs[bounds[i]:bounds[i+1]]
			return encodeRecord(r)
		}}, nil
	}
	raw, err := tensorBytes(t)
	if err != nil {
		return encodedBlob{}, fmt.Errorf("blob %q: %v", name, err)
	}
	item := dtype.ItemSize()
	per := max(1, chunkBytes/item)
	info.Chunks = max(1, (size+per-1)/per)
	return encodedBlob{info: info, raw: raw, item: item, next: func(i int) ([]byte, error) {
		begin := min(i*per, size)
		end := min(begin+per, size)
		r := rec(i, begin, end)
		r.Data = raw[begin*item : end*item]
		if !hostLittleEndian && item > 1 {
			r.Data = swapped(r.Data, item)
		}
		return encodeRecord(r)
	}}, nil
}

// blobAssembler rebuilds one blob from its chunk records, checking each
// against the manifest's description.
type blobAssembler struct {
	info   BlobInfo
	tensor *blob.Tensor
	data   []byte // byte payload (KindBytes, KindSerialized)
	next   int64  // where the next chunk must begin
	crc    uint32
}

// newAssembler allocates the blob described by info.
func newAssembler(info BlobInfo) (*blobAssembler, error) {
	a := &blobAssembler{info: info}
	switch info.Kind {
	case KindTensor:
		if info.DataType == blob.Undefined || !info.DataType.Valid() {
			return nil, fmt.Errorf("manifest gives blob %q the invalid element type %d", info.Name, int32(info.DataType))
		}
		t, err := blob.New(info.DataType, info.Shape...)
		if err != nil {
			return nil, fmt.Errorf("manifest describes blob %q as %v %v: %v", info.Name, info.DataType, info.Shape, err)
		}
		a.tensor = t // in Go memory until complete (see placeLoaded)
	case KindBytes, KindSerialized:
		if info.Bytes < 0 || info.Bytes > maxPayload {
			return nil, fmt.Errorf("manifest gives blob %q an invalid size of %d bytes", info.Name, info.Bytes)
		}
		a.data = make([]byte, 0, info.Bytes)
	default:
		return nil, fmt.Errorf("manifest gives blob %q the unknown kind %d", info.Name, uint8(info.Kind))
	}
	return a, nil
}

// maxPayload bounds the byte size a manifest may claim for a byte blob, a
// guard against a damaged manifest asking for absurd allocations.
const maxPayload = 1 << 40

// add checks and applies chunk i, whose stored bytes are v.
func (a *blobAssembler) add(i int, v []byte) error {
	a.crc = crc32.Update(a.crc, castagnoli, v)
	if i < len(a.info.ChunkCRC32C) {
		if got := crc32.Checksum(v, castagnoli); got != a.info.ChunkCRC32C[i] {
			return fmt.Errorf("chunk %d: checksum mismatch: manifest CRC32C %08x, record %08x", i, a.info.ChunkCRC32C[i], got)
		}
	}
	var r blobRecord
	if err := msgpackUnmarshal(v, &r); err != nil {
		return fmt.Errorf("chunk %d does not decode: %v", i, err)
	}
	if r.V != recordVersion {
		return fmt.Errorf("chunk %d has format version %d (this build reads %d)", i, r.V, recordVersion)
	}
	if BlobKind(r.Kind) != a.info.Kind || r.Name != a.info.Name || r.Chunk != i {
		return fmt.Errorf("chunk %d is a %v record of blob %q chunk %d, expected a %v record of chunk %d",
			i, BlobKind(r.Kind), r.Name, r.Chunk, a.info.Kind, i)
	}
	if r.Begin != a.next || r.End < r.Begin {
		return fmt.Errorf("chunk %d covers [%d, %d), expected it to begin at %d", i, r.Begin, r.End, a.next)
	}
	if a.info.Kind != KindTensor {
		if r.End > a.info.Bytes || int64(len(r.Data)) != r.End-r.Begin {
			return fmt.Errorf("chunk %d holds %d bytes for [%d, %d) of a %d-byte blob", i, len(r.Data), r.Begin, r.End, a.info.Bytes)
		}
		a.data = append(a.data, r.Data...)
		a.next = r.End
		return nil
	}
	t := a.tensor
	if blob.DataType(r.DType) != a.info.DataType || !sameDims(r.Dims, a.info.Shape) ||
		r.DevType != a.info.DeviceType || r.DevID != a.info.DeviceID {
		return fmt.Errorf("chunk %d describes a %v %v tensor on device %d:%d, the manifest a %v %v tensor on device %d:%d",
			i, blob.DataType(r.DType), r.Dims, r.DevType, r.DevID, a.info.DataType, a.info.Shape, a.info.DeviceType, a.info.DeviceID)
	}
	if r.End > int64(t.Size()) {
		return fmt.Errorf("chunk %d covers [%d, %d) of a tensor of %d elements", i, r.Begin, r.End, t.Size())
	}
	n := int(r.End - r.Begin)
	begin := int(r.Begin)
	if a.info.DataType == blob.String {
		if len(r.Strings) != n || len(r.Data) != 0 {
			return fmt.Errorf("chunk %d holds %d strings for [%d, %d)", i, len(r.Strings), r.Begin, r.End)
		}
		copy(blob.Data[string](t)[begin:], r.Strings)
		a.next = r.End
		return nil
	}
	item := a.info.DataType.ItemSize()
	if len(r.Data) != n*item || len(r.Strings) != 0 {
		return fmt.Errorf("chunk %d holds %d bytes for %d elements of %d bytes", i, len(r.Data), n, item)
	}
	if a.info.DataType == blob.Bool {
		for k, c := range r.Data {
			if c > 1 {
				return fmt.Errorf("chunk %d: element %d is the byte %d, not a bool", i, begin+k, c)
			}
		}
	}
	dst, err := tensorBytes(t)
	if err != nil {
		return err
	}
	src := r.Data
	if !hostLittleEndian && item > 1 {
		src = swapped(src, item)
	}
	copy(dst[begin*item:], src)
	a.next = r.End
	return nil
}

// finish checks that every element or byte arrived and that the records'
// checksum is the manifest's, and returns the blob's content.
func (a *blobAssembler) finish() (any, error) {
	want, unit := a.info.Bytes, "bytes"
	if a.info.Kind == KindTensor {
		want, unit = int64(a.tensor.Size()), "elements"
	}
	if a.next != want {
		return nil, fmt.Errorf("records cover %d of %d %s", a.next, want, unit)
	}
	if a.crc != a.info.CRC32C {
		return nil, fmt.Errorf("checksum mismatch: manifest CRC32C %08x, records %08x", a.info.CRC32C, a.crc)
	}
	switch a.info.Kind {
	case KindTensor:
		if int64(a.tensor.NBytes()) != a.info.Bytes {
			return nil, fmt.Errorf("elements total %d bytes, the manifest says %d", a.tensor.NBytes(), a.info.Bytes)
		}
		return placeLoaded(a.tensor, a.info)
	case KindBytes:
		return a.data, nil
	}
	var tmp blob.Blob
	if _, err := blob.DeserializeBlob(a.data, &tmp); err != nil {
		return nil, err
	}
	return tmp.Get(), nil
}

// sameDims reports whether dims (from a record) equal shape (from a
// manifest).
func sameDims(dims []int64, shape []int) bool {
	if len(dims) != len(shape) {
		return false
	}
	for i := range dims {
		if dims[i] != int64(shape[i]) {
			return false
		}
	}
	return true
}
