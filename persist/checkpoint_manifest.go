package persist

import (
	"errors"
	"fmt"
	"time"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/dgraph-io/badger/v4"
)

// Manifest describes a saved checkpoint. It is written after all the
// checkpoint's records, in the same transaction or after them (see
// SaveCheckpoint), so a checkpoint with a manifest is complete.
type Manifest struct {
	// ID is the checkpoint id.
	ID int64
	// Iteration is the training iteration the checkpoint was taken at (the
	// id unless the Iteration option said otherwise).
	Iteration int64
	// Time is when the save began.
	Time time.Time
	// Blobs describes the saved blobs, in the order they were given.
	Blobs []BlobInfo
}

// BlobInfo describes one blob of a checkpoint.
type BlobInfo struct {
	// Name is the blob's name in the workspace.
	Name string
	// Kind says what the blob held.
	Kind BlobKind
	// DataType and Shape are the tensor's element type and dimensions
	// (Undefined and nil for other kinds).
	DataType blob.DataType
	Shape    []int
	// DeviceType and DeviceID name the device the tensor was on (CPU 0 for
	// other kinds).
	DeviceType netdef.DeviceType
	DeviceID   int32
	// Bytes is the payload size: the elements' bytes (string lengths for a
	// STRING tensor) or the byte string's length.
	Bytes int64
	// InDataFile says the payload is in the checkpoint's data file rather
	// than in records (see SaveCheckpoint).
	InDataFile bool
	// Chunks is the number of records the blob was split into, or for a
	// blob in the data file the number of pieces its checksums cover.
	Chunks int
	// CRC32C is the Castagnoli CRC of the blob's records, concatenated in
	// chunk order, as stored, and ChunkCRC32C that of each record; for a
	// blob in the data file, of its payload and of each piece.
	CRC32C      uint32
	ChunkCRC32C []uint32
}

// TotalBytes returns the payload bytes of all the checkpoint's blobs.
func (m *Manifest) TotalBytes() int64 {
	var n int64
	for _, b := range m.Blobs {
		n += b.Bytes
	}
	return n
}

// manifestWire is a manifest as stored (msgpack, sealed). Version 2 added
// the data file: DataBytes is its size (0: the save has none) and
// ChunkBytes the size of the pieces its blobs' checksums cover; version 1
// manifests have no data file and still load. Version 3 added the data
// file's trailer: DataBytes is where it starts, and every save of a store
// on disk has a data file.
type manifestWire struct {
	V          uint8          `msgpack:"v"`
	ID         int64          `msgpack:"id"`
	Iteration  int64          `msgpack:"it"`
	UnixNano   int64          `msgpack:"ts"`
	Gen        uint64         `msgpack:"g"`
	Blobs      []blobInfoWire `msgpack:"b"`
	DataBytes  int64          `msgpack:"fs,omitempty"`
	ChunkBytes int64          `msgpack:"cb,omitempty"`
}

// manifestVersion is the manifest format this build writes.
const manifestVersion = 3

// fileVersion returns the version of the header of the manifest's data
// file.
func (w *manifestWire) fileVersion() uint32 {
	if w.V >= 3 {
		return 2
	}
	return 1
}

type blobInfoWire struct {
	Name    string            `msgpack:"n"`
	Kind    uint8             `msgpack:"k"`
	DType   int32             `msgpack:"t"`
	Dims    []int64           `msgpack:"d"`
	DevType netdef.DeviceType `msgpack:"dt"`
	DevID   int32             `msgpack:"di"`
	Bytes   int64             `msgpack:"sz"`
	Chunks  int               `msgpack:"c"`
	CRC     uint32            `msgpack:"crc"`
	Chunk   []uint32          `msgpack:"cc"`
	// InFile says the payload is in the data file, at Offset.
	InFile bool  `msgpack:"f,omitempty"`
	Offset int64 `msgpack:"o,omitempty"`
}

func (w *manifestWire) manifest() Manifest {
	m := Manifest{ID: w.ID, Iteration: w.Iteration, Time: time.Unix(0, w.UnixNano), Blobs: make([]BlobInfo, len(w.Blobs))}
	for i, b := range w.Blobs {
		var shape []int
		if BlobKind(b.Kind) == KindTensor {
			shape = make([]int, len(b.Dims))
			for k, d := range b.Dims {
				shape[k] = int(d)
			}
		}
		m.Blobs[i] = BlobInfo{Name: b.Name, Kind: BlobKind(b.Kind), DataType: blob.DataType(b.DType), Shape: shape,
			DeviceType: b.DevType, DeviceID: b.DevID, Bytes: b.Bytes, InDataFile: b.InFile, Chunks: b.Chunks, CRC32C: b.CRC, ChunkCRC32C: b.Chunk}
	}
	return m
}

func infoWire(b BlobInfo) blobInfoWire {
	dims := make([]int64, len(b.Shape))
	for i, d := range b.Shape {
		dims[i] = int64(d)
	}
	return blobInfoWire{Name: b.Name, Kind: uint8(b.Kind), DType: int32(b.DataType), Dims: dims,
		DevType: b.DeviceType, DevID: b.DeviceID, Bytes: b.Bytes, InFile: b.InDataFile, Chunks: b.Chunks, CRC: b.CRC32C, Chunk: b.ChunkCRC32C}
}

// validate checks what a loader relies on, so that a manifest written by a
// different build fails clearly rather than halfway through a load.
func (w *manifestWire) validate(id int64) error {
	if w.V < 1 || w.V > manifestVersion {
		return fmt.Errorf("manifest format version %d (this build reads 1 to %d)", w.V, manifestVersion)
	}
	if w.ID != id {
		return fmt.Errorf("manifest is stored under id %d but names id %d", id, w.ID)
	}
	if w.DataBytes < 0 || (w.DataBytes > 0 && (w.V < 2 || w.DataBytes < dataHeaderSize || w.ChunkBytes <= 0)) {
		return fmt.Errorf("manifest gives a data file of %d bytes in pieces of %d", w.DataBytes, w.ChunkBytes)
	}
	seen := make(map[string]bool, len(w.Blobs))
	for _, b := range w.Blobs {
		if b.InFile {
			if w.DataBytes == 0 || (BlobKind(b.Kind) == KindTensor && blob.DataType(b.DType) == blob.String) ||
				b.Offset < dataHeaderSize || b.Bytes <= 0 || b.Bytes > w.DataBytes-b.Offset ||
				int64(b.Chunks) != (b.Bytes+w.ChunkBytes-1)/w.ChunkBytes {
				return fmt.Errorf("manifest puts blob %q (%d bytes, %d chunks) at %d of a data file of %d bytes in pieces of %d",
					b.Name, b.Bytes, b.Chunks, b.Offset, w.DataBytes, w.ChunkBytes)
			}
		}
		if b.Name == "" || seen[b.Name] {
			return fmt.Errorf("manifest lists the blob name %q twice or empty", b.Name)
		}
		seen[b.Name] = true
		if b.Chunks < 1 || len(b.Chunk) != b.Chunks {
			return fmt.Errorf("manifest gives blob %q %d chunks and %d chunk checksums", b.Name, b.Chunks, len(b.Chunk))
		}
		for _, d := range b.Dims {
			if d < 0 || d > 1<<40 {
				return fmt.Errorf("manifest gives blob %q the dims %v", b.Name, b.Dims)
			}
		}
	}
	return nil
}

// readManifest reads, unseals, decodes and validates checkpoint id's
// manifest. A missing one wraps ErrNotFound, a damaged one ErrCorrupt.
func readManifest(txn *badger.Txn, id int64) (*manifestWire, error) {
	item, err := txn.Get([]byte(manifestKey(id)))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, fmt.Errorf("checkpoint %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint %d: reading the manifest: %v", id, err)
	}
	var m *manifestWire
	err = item.Value(func(v []byte) error {
		var err error
		m, err = decodeManifest(v, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoint %d: manifest: %v: %w", id, err, ErrCorrupt)
	}
	return m, nil
}

// decodeManifest unseals, decodes and validates the manifest of checkpoint
// id.
func decodeManifest(v []byte, id int64) (*manifestWire, error) {
	body, err := unseal(v)
	if err != nil {
		return nil, err
	}
	var m manifestWire
	if err := msgpackUnmarshal(body, &m); err != nil {
		return nil, err
	}
	if err := m.validate(id); err != nil {
		return nil, err
	}
	return &m, nil
}

// manifestIDs lists the ids that have a manifest key, ascending.
func manifestIDs(txn *badger.Txn) ([]int64, error) {
	var ids []int64
	err := iterateKeys(txn, ckptPrefix, false, func(key string) (bool, error) {
		if id, rest, ok := parseCkptKey(key); ok && rest == "manifest" {
			ids = append(ids, id)
		}
		return true, nil
	})
	return ids, err
}
