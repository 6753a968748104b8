package persist

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/caffe2go/caffe2go/blob"
)

// Checkpoint data files. The payloads of a checkpoint's big blobs (those a
// badger record would keep in the value log: dataFileMinBytes and more, of
// any kind but STRING tensors) are not put into badger but written, raw and
// little-endian, one after the other, into one file per save,
// <store>/data/<id>-<gen>.data, straight from the tensors' memory with
// large sequential writes and a single fsync, and loads read them straight
// into the new tensors' memory: the disk's sequential bandwidth, where
// badger's value log (written through a memory map, synced with msync,
// read back through msgpack records) reached about half of it. The
// manifest, committed to badger after the file is synced, names the file's
// size and each payload's offset and checksums, so the commit point stays
// the manifest.
//
// Every save of a store on disk writes a data file, and the file ends with
// a trailer holding a copy of the save's records (those in badger) and of
// its sealed manifest: a checkpoint whose data file is intact can be
// recovered whatever happens to badger's files (see Repair). The file's
// name says where the save stands, so that a file no manifest names tells
// an unfinished save or delete from a commit that badger lost:
//
//	<id>-<gen>.pending  written, not yet committed (or committed and not
//	                    yet renamed: a manifest names it)
//	<id>-<gen>.data     committed: a manifest names it
//	<id>-<gen>.deleted  superseded by a newer save of the id, or deleted
//	                    (or about to be: a manifest still names it)
//
// A save renames its file from .pending to .data after the commit, and
// renames the previous save's file to .deleted before it; a delete renames
// the file to .deleted before removing the manifest. Open finishes the
// renames a killed process left undone, removes the .pending and .deleted
// files no manifest names, and refuses a store with a .data file no
// manifest names (see sweep).

// dataDirName is the subdirectory of a store holding the data files; badger
// ignores subdirectories.
const dataDirName = "data"

// dataFileMinBytes is the payload size from which a blob goes into the data
// file: badger's value threshold (see storeOptions), below which badger
// keeps a value in its tree, cheaper than a file for a small checkpoint.
const dataFileMinBytes = 64 << 10

// dataWriteBuffer is the write size for payloads cut into smaller pieces
// (small chunk sizes); bigger pieces are written as they are.
const dataWriteBuffer = 1 << 20

// A data file starts with a header: the magic, the format version and
// reserved word (uint32 each), and the checkpoint id and generation (int64
// and uint64), all little-endian; a loader checks it so that a file that
// was renamed or copied over another is recognized. Version 2 files (those
// of version 3 manifests) end with a trailer; version 1 files, of older
// builds, do not. Each payload starts at
// a multiple of dataAlign, zero bytes filling the gaps: the kernel copies
// page-aligned file data into (page-aligned) tensor memory measurably
// faster than data at an odd offset.
const (
	dataMagic      = "C2GOCKPT"
	dataVersion    = 2
	dataHeaderSize = 32
	dataAlign      = 4096
)

// The states of a data file, named by its extension (see above).
const (
	statePending = ".pending"
	stateData    = ".data"
	stateDeleted = ".deleted"
)

// dataFileName is the name of the data file of save gen of checkpoint id
// in state .data.
func dataFileName(id int64, gen uint64) string { return dataFileNameIn(id, gen, stateData) }

// dataFileNameIn is the name of that file in state state.
func dataFileNameIn(id int64, gen uint64, state string) string {
	return fmt.Sprintf("%020d-%016x%s", id, gen, state)
}

// parseDataFileName returns the id, generation and state a data file name
// gives; ok is false for other names.
func parseDataFileName(name string) (id int64, gen uint64, state string, ok bool) {
	dot := strings.LastIndexByte(name, '.')
	if dot < 0 {
		return 0, 0, "", false
	}
	base, state := name[:dot], name[dot:]
	if (state != statePending && state != stateData && state != stateDeleted) || len(base) != 37 || base[20] != '-' {
		return 0, 0, "", false
	}
	id, err := strconv.ParseInt(base[:20], 10, 64)
	if err != nil || id < 0 {
		return 0, 0, "", false
	}
	gen, err = strconv.ParseUint(base[21:], 16, 64)
	return id, gen, state, err == nil
}

// dataHeader returns the header of a data file of this build's version of
// save gen of checkpoint id.
func dataHeader(id int64, gen uint64) []byte { return dataHeaderV(id, gen, dataVersion) }

// dataHeaderV returns the header of a data file of the given version.
func dataHeaderV(id int64, gen uint64, version uint32) []byte {
	h := make([]byte, dataHeaderSize)
	copy(h, dataMagic)
	binary.LittleEndian.PutUint32(h[8:], version)
	binary.LittleEndian.PutUint64(h[16:], uint64(id))
	binary.LittleEndian.PutUint64(h[24:], gen)
	return h
}

// inDataFile reports whether a blob planned for a checkpoint goes into the
// data file of a store whose threshold is threshold (0: the store has no
// data files).
func inDataFile(p *encodedBlob, threshold int64) bool {
	return threshold > 0 && p.raw != nil && p.info.Bytes >= threshold
}

// A data file's trailer follows the payloads: each record the save put in
// badger, as its key and value, each preceded by its length (uint32), then
// the sealed manifest, then a footer: the magic, the offsets of the
// trailer and of the manifest (uint64 each), the manifest's length
// (uint32), and the CRC32C of the footer's first 28 bytes, little-endian.
// The manifest's DataBytes is where the trailer starts.
const (
	dataFooterMagic = "C2GOTRLR"
	dataFooterSize  = 32
)

// dataFile is the data file of a save being written.
type dataFile struct {
	path    string // the .pending file
	dir     string
	f       *os.File
	w       *dataWriter
	noSync  bool
	trailer int64 // where the trailer starts
}

// createDataFile creates the data file of save m.Gen of checkpoint m.ID,
// in state .pending, and writes its header and the payloads of the blobs
// for which m.Blobs[i].InFile is set, filling in their offsets and
// checksums and m's DataBytes and ChunkBytes. The trailer follows
// (addRecord, finish). On failure the file is removed.
func (s *Store) createDataFile(m *manifestWire, plans []encodedBlob, chunkBytes int, noSync bool) (df *dataFile, err error) {
	dir := filepath.Join(s.path, dataDirName)
	if err := s.makeDataDir(dir, noSync); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, dataFileNameIn(m.ID, m.Gen, statePending))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating the data file: %v", err)
	}
	df = &dataFile{path: path, dir: dir, f: f, noSync: noSync,
		w: &dataWriter{f: f, buf: bufio.NewWriterSize(f, dataWriteBuffer), writeback: !noSync}}
	defer func() {
		if err != nil {
			df.remove()
		}
	}()
	w := df.w
	if err := w.write(dataHeader(m.ID, m.Gen)); err != nil {
		return nil, fmt.Errorf("writing the data file %s: %v", path, err)
	}
	m.ChunkBytes = int64(chunkBytes)
	for i := range plans {
		bi := &m.Blobs[i]
		if !bi.InFile {
			continue
		}
		p := &plans[i]
		if pad := -w.off & (dataAlign - 1); pad > 0 {
			if err := w.write(make([]byte, pad)); err != nil {
				return nil, fmt.Errorf("writing the data file %s: %v", path, err)
			}
		}
		bi.Offset = w.off
		bi.Chunk, bi.CRC = nil, 0
		for begin := 0; begin < len(p.raw); begin += chunkBytes {
			piece := p.raw[begin:min(begin+chunkBytes, len(p.raw))]
			if !hostLittleEndian && p.item > 1 {
				piece = swapped(piece, p.item)
			}
			// One pass over the data: the blob's CRC is combined from
			// the pieces'.
			c := crc32.Checksum(piece, castagnoli)
			bi.Chunk = append(bi.Chunk, c)
			bi.CRC = crc32cCombine(bi.CRC, c, int64(len(piece)))
			if err := w.write(piece); err != nil {
				return nil, fmt.Errorf("writing blob %q to the data file %s: %v", bi.Name, path, err)
			}
		}
		bi.Chunks = len(bi.Chunk)
	}
	m.DataBytes, df.trailer = w.off, w.off
	return df, nil
}

// addRecord appends a record of the save to the trailer.
func (df *dataFile) addRecord(key string, v []byte) error {
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(key)))
	err := df.w.write(n[:])
	if err == nil {
		err = df.w.write([]byte(key))
	}
	if err == nil {
		binary.LittleEndian.PutUint32(n[:], uint32(len(v)))
		err = df.w.write(n[:])
	}
	if err == nil {
		err = df.w.write(v)
	}
	if err != nil {
		return fmt.Errorf("writing record %q to the data file %s: %v", key, df.path, err)
	}
	return nil
}

// restartTrailer drops the records written to the trailer, for a save
// that starts writing its records over.
func (df *dataFile) restartTrailer() error {
	df.w.buf.Reset(df.f)
	if err := df.f.Truncate(df.trailer); err != nil {
		return fmt.Errorf("truncating the data file %s: %v", df.path, err)
	}
	if _, err := df.f.Seek(df.trailer, io.SeekStart); err != nil {
		return fmt.Errorf("truncating the data file %s: %v", df.path, err)
	}
	df.w.off, df.w.kicked = df.trailer, min(df.w.kicked, df.trailer)
	return nil
}

// finish appends the sealed manifest and the footer and, unless noSync,
// syncs the file; the caller syncs the directory before it commits the
// manifest, so that the file is durable first.
func (df *dataFile) finish(manifest []byte) error {
	at := df.w.off
	footer := make([]byte, dataFooterSize)
	copy(footer, dataFooterMagic)
	binary.LittleEndian.PutUint64(footer[8:], uint64(df.trailer))
	binary.LittleEndian.PutUint64(footer[16:], uint64(at))
	binary.LittleEndian.PutUint32(footer[24:], uint32(len(manifest)))
	binary.LittleEndian.PutUint32(footer[28:], crc32.Checksum(footer[:28], castagnoli))
	err := df.w.write(manifest)
	if err == nil {
		err = df.w.write(footer)
	}
	if err == nil {
		err = df.w.flush()
	}
	if err != nil {
		return fmt.Errorf("writing the data file %s: %v", df.path, err)
	}
	if !df.noSync {
		if err := df.f.Sync(); err != nil {
			return fmt.Errorf("syncing the data file %s: %v", df.path, err)
		}
	}
	f := df.f
	df.f = nil
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing the data file %s: %v", df.path, err)
	}
	return nil
}

// remove removes the file of a save that failed before its commit.
func (df *dataFile) remove() {
	if df.f != nil {
		_ = df.f.Close()
		df.f = nil
	}
	_ = os.Remove(df.path)
}

// readDataFooter reads and checks the footer of a data file of size bytes
// and returns where the trailer and the manifest in it start.
func readDataFooter(f *os.File, size int64) (start, at int64, err error) {
	footer := make([]byte, dataFooterSize)
	if size < dataHeaderSize+dataFooterSize {
		return 0, 0, fmt.Errorf("%d bytes, too short for a header and a trailer", size)
	}
	if _, err := f.ReadAt(footer, size-dataFooterSize); err != nil {
		return 0, 0, err
	}
	if string(footer[:8]) != dataFooterMagic {
		return 0, 0, errors.New("no trailer at the end (cut off, grown, or an older build's file)")
	}
	if crc32.Checksum(footer[:28], castagnoli) != binary.LittleEndian.Uint32(footer[28:]) {
		return 0, 0, errors.New("the trailer's footer fails its checksum")
	}
	start, at = int64(binary.LittleEndian.Uint64(footer[8:])), int64(binary.LittleEndian.Uint64(footer[16:]))
	mlen := int64(binary.LittleEndian.Uint32(footer[24:]))
	if start < dataHeaderSize || at < start || at > size || at+mlen != size-dataFooterSize {
		return 0, 0, fmt.Errorf("the footer puts the trailer at %d and the manifest at %d+%d in a file of %d bytes", start, at, mlen, size)
	}
	return start, at, nil
}

// dataTrailer is what readDataTrailer read.
type dataTrailer struct {
	manifest []byte   // sealed
	keys     []string // of the records, in file order
	values   [][]byte
}

// readDataTrailer reads the trailer of the data file at path, which must
// be that of save gen of checkpoint id: the header and the footer are
// checked, the records and the manifest only split.
func readDataTrailer(path string, id int64, gen uint64) (*dataTrailer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if size < dataHeaderSize+dataFooterSize {
		return nil, fmt.Errorf("%d bytes, too short for a header and a trailer", size)
	}
	h := make([]byte, dataHeaderSize)
	if _, err := f.ReadAt(h, 0); err != nil {
		return nil, err
	}
	if want := dataHeader(id, gen); string(h) != string(want) {
		return nil, fmt.Errorf("the header is not that of checkpoint %d generation %016x", id, gen)
	}
	start, at, err := readDataFooter(f, size)
	if err != nil {
		return nil, err
	}
	body := make([]byte, size-dataFooterSize-start)
	if _, err := f.ReadAt(body, start); err != nil {
		return nil, err
	}
	tr := &dataTrailer{manifest: body[at-start:]}
	recs := body[:at-start]
	for len(recs) > 0 {
		var kv [2][]byte
		for i := range kv {
			if len(recs) < 4 || int64(binary.LittleEndian.Uint32(recs)) > int64(len(recs)-4) {
				return nil, fmt.Errorf("record %d of the trailer is cut off", len(tr.keys))
			}
			n := int(binary.LittleEndian.Uint32(recs))
			kv[i], recs = recs[4:4+n], recs[4+n:]
		}
		tr.keys = append(tr.keys, string(kv[0]))
		tr.values = append(tr.values, kv[1])
	}
	return tr, nil
}

// writebackBytes is how much written data a durable save lets accumulate
// before asking the kernel to start writing it out (see startWriteback).
const writebackBytes = 8 << 20

// dataWriter writes a data file sequentially. With writeback set it starts
// the disk writes of every writebackBytes written right away, so that the
// disk is busy while the rest is being written and the final fsync has
// little left to do, where otherwise the kernel would hold everything in
// the page cache until the fsync and only then start writing.
type dataWriter struct {
	f         *os.File
	buf       *bufio.Writer
	writeback bool
	off       int64 // bytes written, buffered ones included
	kicked    int64 // bytes whose writeback was started
}

func (w *dataWriter) write(p []byte) error {
	n, err := w.buf.Write(p)
	w.off += int64(n)
	if err != nil {
		return err
	}
	if flushed := w.off - int64(w.buf.Buffered()); w.writeback && flushed-w.kicked >= writebackBytes {
		startWriteback(w.f, w.kicked, flushed-w.kicked)
		w.kicked = flushed
	}
	return nil
}

func (w *dataWriter) flush() error { return w.buf.Flush() }

// makeDataDir creates the data directory when missing, making its entry in
// the store directory durable unless noSync.
func (s *Store) makeDataDir(dir string, noSync bool) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("creating the data directory: %v", err)
	}
	if noSync {
		return nil
	}
	if err := syncDir(s.path); err != nil {
		return fmt.Errorf("syncing the directory %s: %v", s.path, err)
	}
	return nil
}

// readDataFile reads the payloads of checkpoint m's blobs that are in its
// data file, checking the file's size and header and every piece against
// the manifest's checksums. values[i] receives blob i's content; infos are
// the manifest's blob descriptions.
func (s *Store) readDataFile(m *manifestWire, infos []BlobInfo, values []any) error {
	f, path, err := s.openDataFile(m.ID, m.Gen)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("data file %s: %v", path, err)
	}
	// A load reads the payloads only: damage to the trailer that follows
	// them (version 3) is Repair's business.
	if (m.V < 3 && st.Size() != m.DataBytes) || st.Size() < m.DataBytes {
		return fmt.Errorf("data file %s is %d bytes, the manifest says %d: %w", path, st.Size(), m.DataBytes, ErrCorrupt)
	}
	h := make([]byte, dataHeaderSize)
	if _, err := io.ReadFull(f, h); err != nil {
		return fmt.Errorf("data file %s: reading the header: %v", path, err)
	}
	if want := dataHeaderV(m.ID, m.Gen, m.fileVersion()); string(h) != string(want) {
		return fmt.Errorf("data file %s: the header is not that of checkpoint %d generation %016x: %w", path, m.ID, m.Gen, ErrCorrupt)
	}

	var order []int // the blobs in the file, in file order
	for i := range m.Blobs {
		if bw := &m.Blobs[i]; bw.InFile {
			if err := checkDataBlob(infos[i]); err != nil {
				return fmt.Errorf("blob %q: %w", bw.Name, err)
			}
			order = append(order, i)
		}
	}
	dsts := make([][]byte, len(m.Blobs))
	if err := readPieces(f, m, order, infos, values, dsts); err != nil {
		return fmt.Errorf("data file %s: %w", path, err)
	}
	for _, i := range order {
		if err := finishDataBlob(&m.Blobs[i], infos[i], m.ChunkBytes, dsts[i], &values[i]); err != nil {
			return fmt.Errorf("blob %q: data file %s: %w", m.Blobs[i].Name, path, err)
		}
	}
	return nil
}

// openDataFile opens the data file of save gen of checkpoint id: the .data
// file, or while a save or delete renames it (see above) the .pending or
// .deleted one. The caller holds fmu shared, which the renames take
// exclusively.
func (s *Store) openDataFile(id int64, gen uint64) (*os.File, string, error) {
	for _, state := range []string{stateData, statePending, stateDeleted} {
		path := filepath.Join(s.path, dataDirName, dataFileNameIn(id, gen, state))
		f, err := os.Open(path)
		if err == nil {
			return f, path, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, path, fmt.Errorf("opening the data file: %v", err)
		}
	}
	path := filepath.Join(s.path, dataDirName, dataFileName(id, gen))
	if s.readOnly {
		return nil, path, fmt.Errorf("data file %s is gone: the process writing the store replaced or deleted the checkpoint after this read-only Store was opened (open it again to see its current checkpoints): %w", path, ErrNotFound)
	}
	return nil, path, fmt.Errorf("data file %s is missing: %w", path, ErrCorrupt)
}

// checkDataBlob checks, before anything is allocated, that a blob in the
// data file can be allocated with the manifest's size.
func checkDataBlob(info BlobInfo) error {
	switch info.Kind {
	case KindTensor:
		if info.DataType == blob.Undefined || !info.DataType.Valid() || info.DataType == blob.String {
			return fmt.Errorf("manifest gives the element type %d to a blob in the data file: %w", int32(info.DataType), ErrCorrupt)
		}
		n := int64(info.DataType.ItemSize())
		for _, d := range info.Shape {
			if d < 0 || (d > 0 && n > info.Bytes/int64(d)) {
				return fmt.Errorf("manifest describes a %v %v tensor of %d bytes: %w", info.DataType, info.Shape, info.Bytes, ErrCorrupt)
			}
			n *= int64(d)
		}
		if n != info.Bytes {
			return fmt.Errorf("a %v %v tensor has %d bytes, the manifest says %d: %w", info.DataType, info.Shape, n, info.Bytes, ErrCorrupt)
		}
	case KindBytes, KindSerialized:
		if info.Bytes > maxPayload {
			return fmt.Errorf("manifest gives an invalid size of %d bytes: %w", info.Bytes, ErrCorrupt)
		}
	default:
		return fmt.Errorf("manifest gives the unknown kind %d: %w", uint8(info.Kind), ErrCorrupt)
	}
	return nil
}

// allocDataBlob allocates the content of a blob in the data file, which
// checkDataBlob accepted, and returns it with the memory the payload is to
// be read into.
func allocDataBlob(info BlobInfo) (any, []byte, error) {
	if info.Kind != KindTensor {
		dst := make([]byte, info.Bytes)
		return dst, dst, nil
	}
	a, err := newAssembler(info)
	if err != nil {
		return nil, nil, fmt.Errorf("%v: %w", err, ErrCorrupt)
	}
	dst, err := tensorBytes(a.tensor)
	if err != nil {
		return nil, nil, fmt.Errorf("%v: %w", err, ErrCorrupt)
	}
	return a.tensor, dst, nil
}

// readJobBytes is the most a read of the data file takes at once (whole
// pieces, at least one).
const readJobBytes = 8 << 20

// readPieces allocates the blobs order lists and reads their payloads, in
// file order, checking each piece against the manifest's CRC32C; values[i]
// and dsts[i] receive blob i's content and the memory the payload went to.
// It reads sequentially, from one goroutine, which is what the kernel's
// readahead serves best: concurrent readers, and pipelines that checksum
// or allocate on other goroutines while one reads, all measured slower on
// the 2-core machines this was tuned on.
func readPieces(f *os.File, m *manifestWire, order []int, infos []BlobInfo, values []any, dsts [][]byte) error {
	cb := int(m.ChunkBytes)
	per := max(1, readJobBytes/cb) // pieces per read
	for _, i := range order {
		bw := &m.Blobs[i]
		v, dst, err := allocDataBlob(infos[i])
		if err != nil {
			return fmt.Errorf("blob %q: %w", bw.Name, err)
		}
		values[i], dsts[i] = v, dst
		for first := 0; first < bw.Chunks; first += per {
			begin, end := first*cb, min((first+per)*cb, len(dst))
			if _, err := f.ReadAt(dst[begin:end], bw.Offset+int64(begin)); err != nil {
				return fmt.Errorf("blob %q chunk %d: reading: %v", bw.Name, first, err)
			}
			for c := first; c < min(first+per, bw.Chunks); c++ {
				sum := crc32.Checksum(dst[c*cb:min((c+1)*cb, len(dst))], castagnoli)
				if sum != bw.Chunk[c] {
					return fmt.Errorf("blob %q chunk %d: checksum mismatch: manifest CRC32C %08x, data %08x: %w", bw.Name, c, bw.Chunk[c], sum, ErrCorrupt)
				}
			}
		}
	}
	return nil
}

// finishDataBlob checks a blob read from the data file as a whole and puts
// its final content in *value: the blob's CRC32C (combined from its
// pieces' of cb bytes, which readPieces found equal to the manifest's),
// the bools' bytes, and a serialized blob's decoding.
func finishDataBlob(bw *blobInfoWire, info BlobInfo, cb int64, dst []byte, value *any) error {
	var crc uint32
	for c, sum := range bw.Chunk {
		crc = crc32cCombine(crc, sum, min(cb, int64(len(dst))-int64(c)*cb))
	}
	if crc != bw.CRC {
		return fmt.Errorf("checksum mismatch: manifest CRC32C %08x, data %08x: %w", bw.CRC, crc, ErrCorrupt)
	}
	switch info.Kind {
	case KindSerialized:
		var tmp blob.Blob
		if _, err := blob.DeserializeBlob(dst, &tmp); err != nil {
			return fmt.Errorf("%v: %w", err, ErrCorrupt)
		}
		*value = tmp.Get()
	case KindTensor:
		if info.DataType == blob.Bool {
			for k, c := range dst {
				if c > 1 {
					return fmt.Errorf("element %d is the byte %d, not a bool: %w", k, c, ErrCorrupt)
				}
			}
		}
		if item := info.DataType.ItemSize(); !hostLittleEndian && item > 1 {
			copy(dst, swapped(dst, item))
		}
		placed, err := placeLoaded((*value).(*blob.Tensor), info)
		if err != nil {
			return err
		}
		*value = placed
	}
	return nil
}

// dataFileRef is a data file: the save and the state its name gives.
type dataFileRef struct {
	id    int64
	gen   uint64
	state string
}

// name returns the file's name.
func (r dataFileRef) name() string { return dataFileNameIn(r.id, r.gen, r.state) }

// dataFiles lists the data files of the store by checkpoint id (none for
// an in-memory store).
func (s *Store) dataFiles() (map[int64][]dataFileRef, error) {
	if s.path == inMemoryPath {
		return nil, nil
	}
	return listDataFiles(s.path)
}

// listDataFiles lists the data files of the store in dir by checkpoint id.
func listDataFiles(dir string) (map[int64][]dataFileRef, error) {
	entries, err := os.ReadDir(filepath.Join(dir, dataDirName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	files := map[int64][]dataFileRef{}
	for _, e := range entries {
		if id, gen, state, ok := parseDataFileName(e.Name()); ok && e.Type().IsRegular() {
			files[id] = append(files[id], dataFileRef{id, gen, state})
		}
	}
	return files, nil
}

// renameDataFile renames a data file from one state to another, holding
// fmu so that no load is between trying one name and the next, and
// syncs the directory when sync is set.
func (s *Store) renameDataFile(id int64, gen uint64, from, to string, sync bool) error {
	dir := filepath.Join(s.path, dataDirName)
	s.fmu.Lock()
	err := os.Rename(filepath.Join(dir, dataFileNameIn(id, gen, from)), filepath.Join(dir, dataFileNameIn(id, gen, to)))
	s.fmu.Unlock()
	if err != nil {
		return fmt.Errorf("renaming a data file: %v", err)
	}
	if sync {
		if err := syncDir(dir); err != nil {
			return fmt.Errorf("syncing the directory %s: %v", dir, err)
		}
	}
	return nil
}

// removeDataFiles removes data files that belong to no checkpoint. The
// removal is not urgent: with background set it runs on another goroutine,
// because removing a big file takes long on some file systems (ext4
// mounted with discard, for one) and a save or delete need not wait for
// it; Close waits for it, and a removal that fails or never happens is
// retried by the next Open's sweep. Removal takes fmu, so that no load is
// between reading a manifest and opening the file it names.
func (s *Store) removeDataFiles(files []dataFileRef, background bool) error {
	if len(files) == 0 {
		return nil
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = filepath.Join(s.path, dataDirName, f.name())
	}
	remove := func() error {
		s.fmu.Lock()
		defer s.fmu.Unlock()
		for _, path := range paths {
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		return nil
	}
	if !background {
		return remove()
	}
	s.removals.Add(1)
	go func() {
		defer s.removals.Done()
		_ = remove()
	}()
	return nil
}

// crc32cCombine returns the CRC32C of the concatenation of two byte
// strings given the CRC32C of each and the length of the second (zlib's
// crc32_combine for the Castagnoli polynomial): it lets a writer and a
// loader checksum each piece of a payload once and still get the
// payload's CRC.
func crc32cCombine(crc1, crc2 uint32, len2 int64) uint32 {
	if len2 <= 0 {
		return crc1 ^ crc2
	}
	// odd is the operator that appends one zero bit, even is built from it
	// by squaring; the loop applies len2 zero bytes, a bit of len2 at a
	// time.
	var even, odd [32]uint32
	odd[0] = 0x82f63b78 // the reversed Castagnoli polynomial
	row := uint32(1)
	for n := 1; n < 32; n++ {
		odd[n] = row
		row <<= 1
	}
	gf2Square(&even, &odd) // two zero bits
	gf2Square(&odd, &even) // four zero bits
	for {
		gf2Square(&even, &odd)
		if len2&1 != 0 {
			crc1 = gf2Times(&even, crc1)
		}
		if len2 >>= 1; len2 == 0 {
			break
		}
		gf2Square(&odd, &even)
		if len2&1 != 0 {
			crc1 = gf2Times(&odd, crc1)
		}
		if len2 >>= 1; len2 == 0 {
			break
		}
	}
	return crc1 ^ crc2
}

// gf2Times multiplies the GF(2) 32×32 matrix mat by the vector vec.
func gf2Times(mat *[32]uint32, vec uint32) uint32 {
	var sum uint32
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

// gf2Square sets square to mat × mat.
func gf2Square(square, mat *[32]uint32) {
	for n := range 32 {
		square[n] = gf2Times(mat, mat[n])
	}
}
