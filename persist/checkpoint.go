package persist

import (
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/dgraph-io/badger/v4"
	"github.com/vmihailenco/msgpack/v5"
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
// manifests have no data file and still load.
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
const manifestVersion = 2

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
	if w.V != 1 && w.V != manifestVersion {
		return fmt.Errorf("manifest format version %d (this build reads 1 and %d)", w.V, manifestVersion)
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

// Key helpers. Ids are zero-padded so that byte order is numeric order.
func ckptIDPrefix(id int64) string { return fmt.Sprintf("%s%020d/", ckptPrefix, id) }
func manifestKey(id int64) string  { return ckptIDPrefix(id) + "manifest" }
func genPrefix(id int64, gen uint64) string {
	return fmt.Sprintf("%s%016x/", ckptIDPrefix(id), gen)
}
func recordKey(id int64, gen uint64, name string, chunk int) string {
	return genPrefix(id, gen) + "blob/" + name + "#" + strconv.Itoa(chunk)
}

// parseCkptKey splits a key under "ckpt/" into the checkpoint id and the
// rest ("manifest", or "<gen>/blob/<name>#<chunk>"); ok is false for keys
// of another shape.
func parseCkptKey(key string) (id int64, rest string, ok bool) {
	k, found := strings.CutPrefix(key, ckptPrefix)
	if !found || len(k) < 21 || k[20] != '/' {
		return 0, "", false
	}
	id, err := strconv.ParseInt(k[:20], 10, 64)
	if err != nil || id < 0 {
		return 0, "", false
	}
	return id, k[21:], true
}

// parseGen returns the generation of a record key's rest.
func parseGen(rest string) (uint64, bool) {
	if len(rest) < 17 || rest[16] != '/' {
		return 0, false
	}
	g, err := strconv.ParseUint(rest[:16], 16, 64)
	return g, err == nil
}

// CheckpointOption adjusts SaveCheckpoint.
type CheckpointOption func(*checkpointConfig)

type checkpointConfig struct {
	iteration    int64
	hasIteration bool
	chunkBytes   int
	noSync       bool
}

// Iteration records it as the checkpoint's training iteration (by default
// the iteration is the id).
func Iteration(it int64) CheckpointOption {
	return func(c *checkpointConfig) { c.iteration, c.hasIteration = it, true }
}

// ChunkBytes sets the payload size above which a blob is split into
// several records (DefaultChunkBytes when not given); it must be positive.
func ChunkBytes(n int) CheckpointOption {
	return func(c *checkpointConfig) { c.chunkBytes = n }
}

// NoSync skips the fsync that otherwise makes a checkpoint durable before
// SaveCheckpoint returns. The checkpoint is still atomic and survives the
// process being killed, but not necessarily a power loss or an OS crash.
func NoSync() CheckpointOption {
	return func(c *checkpointConfig) { c.noSync = true }
}

// Limits of the write paths (see SaveCheckpoint).
const (
	// singleTxnBytes is the largest payload written in one transaction.
	singleTxnBytes = 256 << 20
	// stagedTxnBytes is the payload per transaction of a staged write.
	stagedTxnBytes = 64 << 20
)

// errNeedStaging makes a single-transaction save start over staged.
var errNeedStaging = errors.New("checkpoint does not fit one transaction")

// SaveCheckpoint saves the named blobs of ws as checkpoint id (≥ 0),
// replacing a checkpoint of that id. Tensors of every element type keep
// their type, shape and device bit for bit; byte strings and content with a
// registered blob serializer are saved too. Each blob becomes one record,
// or several chunk records when its payload exceeds the chunk size, and
// then a manifest (id, iteration, time, and each blob's type, shape, size
// and CRC32C) is written last.
//
// Up to 256 MiB of payload, records and manifest are one badger
// transaction: the checkpoint appears whole or not at all. Bigger
// checkpoints, or ones badger finds too big for a transaction (see the
// package documentation), are staged: the records are committed in
// transactions of about 64 MiB under a fresh generation key, and the
// manifest, committed last, is what makes them a checkpoint. Either way a crash at any moment leaves the previous
// checkpoints (including an older save of the same id) intact, and the
// records of an unfinished save are removed at the next Open. Unless NoSync
// is given, the checkpoint is synced to disk before SaveCheckpoint returns.
//
// To resume training from a checkpoint, name everything the training loop
// reads: the parameters, the optimizer's state (momentum buffers, Adam
// moments, …) and the iteration counter blob (e.g. "iter" or
// "optimizer_iteration"); LoadCheckpoint puts them all back.
//
// The blobs must not be written by running nets while they are saved.
func (s *Store) SaveCheckpoint(ws operators.Workspace, id int64, blobs []string, opts ...CheckpointOption) error {
	cfg := checkpointConfig{chunkBytes: DefaultChunkBytes}
	for _, o := range opts {
		o(&cfg)
	}
	if id < 0 {
		return s.errorf("SaveCheckpoint: checkpoint id %d is negative", id)
	}
	if cfg.chunkBytes <= 0 {
		return s.errorf("SaveCheckpoint %d: chunk size %d must be positive", id, cfg.chunkBytes)
	}
	if ws == nil {
		return s.errorf("SaveCheckpoint %d: nil workspace", id)
	}
	if !cfg.hasIteration {
		cfg.iteration = id
	}
	if s.maxChunk > 0 && cfg.chunkBytes > s.maxChunk {
		cfg.chunkBytes = s.maxChunk
	}
	plans := make([]encodedBlob, len(blobs))
	seen := make(map[string]bool, len(blobs))
	m := &manifestWire{V: manifestVersion, ID: id, Iteration: cfg.iteration, Blobs: make([]blobInfoWire, len(blobs))}
	var recordBytes int64
	inFile := false
	for i, name := range blobs {
		if name == "" {
			return s.errorf("SaveCheckpoint %d: blob name %d is empty", id, i)
		}
		if seen[name] {
			return s.errorf("SaveCheckpoint %d: blob %q is listed twice", id, name)
		}
		seen[name] = true
		b := ws.GetBlob(name)
		if b == nil {
			return s.errorf("SaveCheckpoint %d: the workspace has no blob %q", id, name)
		}
		p, err := planBlob(name, b, cfg.chunkBytes)
		if err != nil {
			return s.errorf("SaveCheckpoint %d: %v", id, err)
		}
		plans[i] = p
		m.Blobs[i] = infoWire(p.info)
		if inDataFile(&p, s.fileMin) {
			m.Blobs[i].InFile = true
			inFile = true
		} else {
			recordBytes += p.info.Bytes
		}
	}

	done, err := s.use()
	if err != nil {
		return err
	}
	defer done()
	s.wmu.Lock()
	defer s.wmu.Unlock()

	m.UnixNano, m.Gen = time.Now().UnixNano(), rand.Uint64()
	if inFile {
		// Pieces hold whole elements of every type, so that a big-endian
		// host can swap them piece by piece.
		piece := max(8, cfg.chunkBytes&^7)
		if err := s.writeDataFile(m, plans, piece, cfg.noSync); err != nil {
			return s.errorf("SaveCheckpoint %d: %v", id, err)
		}
	}
	staged := s.stage || recordBytes > singleTxnBytes
	err = s.writeCheckpoint(m, plans, staged)
	if errors.Is(err, errNeedStaging) {
		staged = true
		err = s.writeCheckpoint(m, plans, true)
	}
	if err != nil {
		if staged || inFile {
			// Best effort: the next Open removes what is left.
			s.abandon(m)
		}
		return s.errorf("SaveCheckpoint %d: %v", id, err)
	}
	if !cfg.noSync {
		if err := s.db.Sync(); err != nil {
			return s.errorf("SaveCheckpoint %d: syncing: %v", id, err)
		}
	}
	// The records of an older save of this id are garbage now.
	removed, err := s.tidy(id, m.Gen)
	if err != nil {
		return s.errorf("SaveCheckpoint %d: removing the records of the previous save of this id: %v", id, err)
	}
	if removed {
		s.collectGarbage()
	}
	return nil
}

// writeCheckpoint writes the records of the blobs not in the data file and
// then the manifest, in one transaction or staged, filling in the records'
// checksums.
func (s *Store) writeCheckpoint(m *manifestWire, plans []encodedBlob, staged bool) error {
	w := &ckptWriter{db: s.db, staged: staged, limit: s.stagedBytes}
	defer w.discard()
	for i, p := range plans {
		if m.Blobs[i].InFile {
			continue
		}
		var crc uint32
		chunkCRCs := make([]uint32, p.info.Chunks)
		for c := 0; c < p.info.Chunks; c++ {
			v, err := p.next(c)
			if err != nil {
				return fmt.Errorf("encoding blob %q chunk %d: %v", p.info.Name, c, err)
			}
			crc = crc32.Update(crc, castagnoli, v)
			chunkCRCs[c] = crc32.Checksum(v, castagnoli)
			if err := w.put(recordKey(m.ID, m.Gen, p.info.Name, c), v); err != nil {
				return err
			}
		}
		m.Blobs[i].CRC, m.Blobs[i].Chunk = crc, chunkCRCs
	}
	body, err := msgpack.Marshal(m)
	if err != nil {
		return fmt.Errorf("encoding the manifest: %v", err)
	}
	v, err := seal(body)
	if err != nil {
		return fmt.Errorf("encoding the manifest: %v", err)
	}
	if err := w.put(manifestKey(m.ID), v); err != nil {
		return err
	}
	return w.commit()
}

// ckptWriter puts records into one transaction, or, when staged, into a
// sequence of transactions of bounded size.
type ckptWriter struct {
	db     *badger.DB
	staged bool
	limit  int64 // payload bytes per staged transaction
	txn    *badger.Txn
	n      int   // entries in txn
	bytes  int64 // value bytes in txn
}

func (w *ckptWriter) put(key string, v []byte) error {
	if w.txn != nil && w.staged && w.n > 0 && w.bytes+int64(len(v)) > w.limit {
		if err := w.commit(); err != nil {
			return err
		}
	}
	if w.txn == nil {
		w.txn = w.db.NewTransaction(true)
	}
	err := w.txn.Set([]byte(key), v)
	if errors.Is(err, badger.ErrTxnTooBig) {
		if !w.staged {
			return errNeedStaging
		}
		if w.n > 0 {
			if err := w.commit(); err != nil {
				return err
			}
			w.txn = w.db.NewTransaction(true)
			err = w.txn.Set([]byte(key), v)
		}
	}
	if err != nil {
		return fmt.Errorf("writing %q: %v", key, err)
	}
	w.n++
	w.bytes += int64(len(v))
	return nil
}

func (w *ckptWriter) commit() error {
	if w.txn == nil {
		return nil
	}
	err := w.txn.Commit()
	w.txn, w.n, w.bytes = nil, 0, 0
	if err != nil {
		return fmt.Errorf("committing: %v", err)
	}
	return nil
}

func (w *ckptWriter) discard() {
	if w.txn != nil {
		w.txn.Discard()
		w.txn = nil
	}
}

// keysUnder returns every key under prefix.
func (s *Store) keysUnder(prefix string) ([]string, error) {
	var keys []string
	err := s.db.View(func(txn *badger.Txn) error {
		return iterateKeys(txn, prefix, false, func(key string) (bool, error) {
			keys = append(keys, key)
			return true, nil
		})
	})
	return keys, err
}

// abandon deletes what a failed save (m's generation of checkpoint m.ID)
// wrote: its records and data file, unless its manifest did get committed
// (a failure after the commit). Errors are ignored: the next Open removes
// what is left.
func (s *Store) abandon(m *manifestWire) {
	id, gen := m.ID, m.Gen
	committed := false
	_ = s.db.View(func(txn *badger.Txn) error {
		cur, err := readManifest(txn, id)
		committed = err == nil && cur.Gen == gen
		return nil
	})
	if committed {
		return
	}
	if keys, err := s.keysUnder(genPrefix(id, gen)); err == nil {
		_ = s.deleteKeys(keys)
	}
	if m.DataBytes > 0 {
		_ = s.removeDataFiles(id, []uint64{gen}, true)
	}
}

// tidy deletes the records and data files of checkpoint id that belong to
// a generation other than gen and reports whether there were records.
func (s *Store) tidy(id int64, gen uint64) (bool, error) {
	files, err := s.dataFiles()
	if err != nil {
		return false, err
	}
	old := slices.DeleteFunc(files[id], func(g uint64) bool { return g == gen })
	if err := s.removeDataFiles(id, old, true); err != nil {
		return false, err
	}
	keys, err := s.keysUnder(ckptIDPrefix(id))
	if err != nil {
		return false, err
	}
	var stale []string
	for _, k := range keys {
		_, rest, ok := parseCkptKey(k)
		if !ok || rest == "manifest" {
			continue
		}
		if g, ok := parseGen(rest); ok && g != gen {
			stale = append(stale, k)
		}
	}
	return len(stale) > 0, s.deleteKeys(stale)
}

// sweep removes the records and data files no intact manifest names: those
// of saves that never reached their manifest and of deletes that did not
// finish. Records and files under a manifest that does not decode are kept
// (they are evidence, and DeleteCheckpoint removes them).
func (s *Store) sweep() error {
	type rec struct {
		key string
		id  int64
		gen uint64
	}
	var recs []rec
	gens := map[int64]uint64{}
	keep := map[int64]bool{}
	err := s.db.View(func(txn *badger.Txn) error {
		return iterateKeys(txn, ckptPrefix, false, func(key string) (bool, error) {
			id, rest, ok := parseCkptKey(key)
			if !ok {
				return true, nil
			}
			if rest == "manifest" {
				m, err := readManifest(txn, id)
				if err != nil {
					keep[id] = true
				} else {
					gens[id] = m.Gen
				}
				return true, nil
			}
			if g, ok := parseGen(rest); ok {
				recs = append(recs, rec{key, id, g})
			}
			return true, nil
		})
	})
	if err != nil {
		return s.errorf("scanning checkpoints: %v", err)
	}
	files, err := s.dataFiles()
	if err != nil {
		return s.errorf("listing the data files: %v", err)
	}
	for id, fileGens := range files {
		if keep[id] {
			continue
		}
		if g, ok := gens[id]; ok {
			fileGens = slices.DeleteFunc(fileGens, func(gen uint64) bool { return gen == g })
		}
		if err := s.removeDataFiles(id, fileGens, false); err != nil {
			return s.errorf("removing the data files of unfinished checkpoint saves: %v", err)
		}
	}
	var orphans []string
	for _, r := range recs {
		if keep[r.id] {
			continue
		}
		if g, ok := gens[r.id]; !ok || g != r.gen {
			orphans = append(orphans, r.key)
		}
	}
	if len(orphans) == 0 {
		return nil
	}
	if err := s.deleteKeys(orphans); err != nil {
		return s.errorf("removing %d records of unfinished checkpoint saves: %v", len(orphans), err)
	}
	s.collectGarbage()
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
	var m manifestWire
	err = item.Value(func(v []byte) error {
		body, err := unseal(v)
		if err != nil {
			return err
		}
		if err := msgpackUnmarshal(body, &m); err != nil {
			return err
		}
		return m.validate(id)
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoint %d: manifest: %v: %w", id, err, ErrCorrupt)
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

// LoadCheckpoint reads checkpoint id and stores its blobs in ws, creating
// the blobs that do not exist and replacing the content of those that do.
// Every record is checked first (decoding, agreement with the manifest, the
// CRC32C of each blob), and ws is changed only when all of them pass, so a
// damaged or missing checkpoint (errors wrapping ErrCorrupt or ErrNotFound)
// leaves ws as it was.
func (s *Store) LoadCheckpoint(ws operators.Workspace, id int64) error {
	if ws == nil {
		return s.errorf("LoadCheckpoint %d: nil workspace", id)
	}
	done, err := s.use()
	if err != nil {
		return err
	}
	defer done()
	// Held until the data file is read: a save replacing this checkpoint,
	// or a delete, removes the file only after the load.
	s.fmu.RLock()
	defer s.fmu.RUnlock()
	var m *manifestWire
	var man Manifest
	var values []any
	err = s.db.View(func(txn *badger.Txn) error {
		var err error
		m, err = readManifest(txn, id)
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				ids, _ := manifestIDs(txn)
				return fmt.Errorf("%w (saved checkpoints: %s)", err, idList(ids))
			}
			return err
		}
		values = make([]any, len(m.Blobs))
		man = m.manifest()
		for i, info := range man.Blobs {
			if info.InDataFile {
				continue
			}
			v, err := readBlob(txn, m, info)
			if err != nil {
				return fmt.Errorf("checkpoint %d: blob %q: %w", id, info.Name, err)
			}
			values[i] = v
		}
		return nil
	})
	if err == nil && m.DataBytes > 0 {
		if err = s.readDataFile(m, man.Blobs, values); err != nil {
			err = fmt.Errorf("checkpoint %d: %w", id, err)
		}
	}
	if err != nil {
		return s.errorf("%w", err)
	}
	for i, b := range m.Blobs {
		ws.CreateBlob(b.Name).Set(values[i])
	}
	return nil
}

// readBlob reassembles one blob of a checkpoint from its records.
func readBlob(txn *badger.Txn, m *manifestWire, info BlobInfo) (any, error) {
	a, err := newAssembler(info)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", err, ErrCorrupt)
	}
	for c := 0; c < info.Chunks; c++ {
		key := recordKey(m.ID, m.Gen, info.Name, c)
		item, err := txn.Get([]byte(key))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil, fmt.Errorf("record %q of chunk %d is missing: %w", key, c, ErrCorrupt)
		}
		if err != nil {
			return nil, fmt.Errorf("reading %q: %v", key, err)
		}
		if err := item.Value(func(v []byte) error { return a.add(c, v) }); err != nil {
			return nil, fmt.Errorf("%v: %w", err, ErrCorrupt)
		}
	}
	v, err := a.finish()
	if err != nil {
		return nil, fmt.Errorf("%v: %w", err, ErrCorrupt)
	}
	return v, nil
}

// idList formats checkpoint ids for an error message.
func idList(ids []int64) string {
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = strconv.FormatInt(id, 10)
	}
	return listOrNone(names)
}

// Checkpoint returns the manifest of checkpoint id, without reading its
// records. A missing checkpoint wraps ErrNotFound, a damaged manifest
// ErrCorrupt.
func (s *Store) Checkpoint(id int64) (Manifest, error) {
	done, err := s.use()
	if err != nil {
		return Manifest{}, err
	}
	defer done()
	var m *manifestWire
	err = s.db.View(func(txn *badger.Txn) error {
		var err error
		m, err = readManifest(txn, id)
		return err
	})
	if err != nil {
		return Manifest{}, s.errorf("%w", err)
	}
	return m.manifest(), nil
}

// LatestCheckpoint returns the highest checkpoint id with an intact
// manifest; ok is false when there is none. Manifests are only ever written
// after all their records, so that checkpoint is complete; LoadCheckpoint
// verifies its records.
func (s *Store) LatestCheckpoint() (id int64, ok bool, err error) {
	done, err := s.use()
	if err != nil {
		return 0, false, err
	}
	defer done()
	err = s.db.View(func(txn *badger.Txn) error {
		return iterateKeys(txn, ckptPrefix, true, func(key string) (bool, error) {
			kid, rest, good := parseCkptKey(key)
			if !good || rest != "manifest" {
				return true, nil
			}
			if _, err := readManifest(txn, kid); err != nil {
				return true, nil // damaged: fall back to an older one
			}
			id, ok = kid, true
			return false, nil
		})
	})
	if err != nil {
		return 0, false, s.errorf("finding the latest checkpoint: %v", err)
	}
	return id, ok, nil
}

// Checkpoints returns the manifests of the saved checkpoints, by ascending
// id. Checkpoints whose manifest is damaged are left out (LoadCheckpoint
// and Checkpoint of their id report the damage).
func (s *Store) Checkpoints() ([]Manifest, error) {
	done, err := s.use()
	if err != nil {
		return nil, err
	}
	defer done()
	var out []Manifest
	err = s.db.View(func(txn *badger.Txn) error {
		ids, err := manifestIDs(txn)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if m, err := readManifest(txn, id); err == nil {
				out = append(out, m.manifest())
			}
		}
		return nil
	})
	if err != nil {
		return nil, s.errorf("listing checkpoints: %v", err)
	}
	return out, nil
}

// DeleteCheckpoint deletes checkpoint id: its manifest first, so that an
// interrupted delete leaves no half checkpoint, then its records. A missing
// id wraps ErrNotFound.
func (s *Store) DeleteCheckpoint(id int64) error {
	done, err := s.use()
	if err != nil {
		return err
	}
	defer done()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.deleteCheckpoint(id); err != nil {
		return err
	}
	s.collectGarbage()
	return nil
}

// deleteCheckpoint deletes one checkpoint; the caller holds wmu.
func (s *Store) deleteCheckpoint(id int64) error {
	key := []byte(manifestKey(id))
	err := s.db.Update(func(txn *badger.Txn) error {
		if _, err := txn.Get(key); err != nil {
			return err
		}
		return txn.Delete(key)
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		var ids []int64
		_ = s.db.View(func(txn *badger.Txn) error { ids, _ = manifestIDs(txn); return nil })
		return s.errorf("DeleteCheckpoint: checkpoint %d: %w (saved checkpoints: %s)", id, ErrNotFound, idList(ids))
	}
	if err != nil {
		return s.errorf("DeleteCheckpoint %d: %v", id, err)
	}
	keys, err := s.keysUnder(ckptIDPrefix(id))
	if err == nil {
		err = s.deleteKeys(keys)
	}
	if err == nil {
		err = s.removeDeletedDataFiles(id)
	}
	if err != nil {
		return s.errorf("DeleteCheckpoint %d: removing its records and data file (the checkpoint is gone; the next Open removes them): %v", id, err)
	}
	return nil
}

// removeDeletedDataFiles removes the data files of checkpoint id, whose
// manifest was just deleted. The deletion is synced first: the records and
// the manifest go together in badger's log, but a data file removed before
// a power loss that undoes the unsynced manifest deletion would leave a
// checkpoint without its data.
func (s *Store) removeDeletedDataFiles(id int64) error {
	files, err := s.dataFiles()
	if err != nil || len(files[id]) == 0 {
		return err
	}
	if err := s.db.Sync(); err != nil {
		return err
	}
	return s.removeDataFiles(id, files[id], true)
}

// KeepLast deletes old checkpoints, keeping the k with the highest ids
// among those with an intact manifest; every checkpoint with a lower id,
// damaged ones included, is deleted. With fewer than k intact checkpoints
// nothing is deleted; k = 0 deletes every checkpoint.
func (s *Store) KeepLast(k int) error {
	if k < 0 {
		return s.errorf("KeepLast: k = %d is negative", k)
	}
	done, err := s.use()
	if err != nil {
		return err
	}
	defer done()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var ids []int64
	intact := map[int64]bool{}
	err = s.db.View(func(txn *badger.Txn) error {
		var err error
		if ids, err = manifestIDs(txn); err != nil {
			return err
		}
		for _, id := range ids {
			_, err := readManifest(txn, id)
			intact[id] = err == nil
		}
		return nil
	})
	if err != nil {
		return s.errorf("KeepLast: listing checkpoints: %v", err)
	}
	// Walk from the newest down; once k intact ones are kept, the rest go.
	slices.Reverse(ids)
	kept := 0
	var doomed []int64
	for _, id := range ids {
		if kept >= k {
			doomed = append(doomed, id)
		} else if intact[id] {
			kept++
		}
	}
	if kept < k {
		return nil
	}
	for _, id := range doomed {
		if err := s.deleteCheckpoint(id); err != nil {
			return err
		}
	}
	if len(doomed) > 0 {
		s.collectGarbage()
	}
	return nil
}
