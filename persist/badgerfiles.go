package persist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/badger/v4/y"
)

// Reading badger's files without badger. Open examines them before badger
// does (verifyStoreFiles), because badger panics on some damaged files in
// goroutines of its own, where no caller can recover, and silently drops
// data on others; Check and Repair read them to salvage what is intact.
// badger v4 keeps in a store directory:
//
//	MANIFEST     the tables of each level: a magic, then checksummed
//	             change sets (badger.ReplayManifestFile reads it)
//	NNNNNN.sst   the tables: checksummed blocks, an index and a footer
//	             (package table reads them)
//	NNNNN.mem    the write-ahead log of each memtable not yet written to a
//	             table, and NNNNNN.vlog the value log (values of 64 KiB and
//	             more): a 20-byte header (the encryption key id, 0 for
//	             this store, and an IV), then entries (logEntry)
//	KEYREGISTRY  the encryption keys (none for this store)
//	DISCARD      the value log's garbage statistics, 1 MiB
//	LOCK         the process id of the process that has the store open
//
// and this package adds data/, the checkpoints' data files.

// storeFiles are the files of a store directory, by kind.
type storeFiles struct {
	manifest bool              // MANIFEST exists
	tables   map[uint64]string // .sst file id → path
	mems     []string          // .mem paths, by ascending id
	vlogs    map[uint32]string // .vlog file id → path
	maxVlog  uint32            // the highest .vlog id (0: none)
	other    []string          // KEYREGISTRY, DISCARD, LOCK, REWRITEMANIFEST when present
	// irregular are the badger names that are not regular files (a
	// directory named MANIFEST, say).
	irregular []string
}

// Names of badger's fixed files.
const (
	manifestFileName    = badger.ManifestFilename
	keyRegistryFileName = badger.KeyRegistryFileName
	discardFileName     = "DISCARD"
	lockFileName        = "LOCK"
	rewriteManifestName = "REWRITEMANIFEST"
)

// listStoreFiles lists the badger files of dir.
func listStoreFiles(dir string) (*storeFiles, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fs := &storeFiles{tables: map[uint64]string{}, vlogs: map[uint32]string{}}
	var memIDs []int
	for _, e := range entries {
		name := e.Name()
		kind := badgerFileKind(name)
		if kind == "" {
			continue
		}
		regular := e.Type().IsRegular()
		if e.Type()&os.ModeSymlink != 0 { // a read-only snapshot's
			st, err := os.Stat(filepath.Join(dir, name))
			regular = err == nil && st.Mode().IsRegular()
		}
		if !regular {
			fs.irregular = append(fs.irregular, name)
			continue
		}
		path := filepath.Join(dir, name)
		switch kind {
		case ".sst":
			id, _ := table.ParseFileID(name)
			fs.tables[id] = path
		case ".mem":
			id, _ := strconv.Atoi(strings.TrimSuffix(name, ".mem"))
			memIDs = append(memIDs, id)
		case ".vlog":
			id, _ := strconv.ParseUint(strings.TrimSuffix(name, ".vlog"), 10, 32)
			fs.vlogs[uint32(id)] = path
			fs.maxVlog = max(fs.maxVlog, uint32(id))
		case manifestFileName:
			fs.manifest = true
		default:
			fs.other = append(fs.other, name)
		}
	}
	slices.Sort(memIDs)
	for _, id := range memIDs {
		fs.mems = append(fs.mems, filepath.Join(dir, fmt.Sprintf("%05d.mem", id)))
	}
	return fs, nil
}

// badgerFileKind returns ".sst", ".mem", ".vlog" or the fixed name for the
// files badger reads or writes in a store directory, and "" for others.
func badgerFileKind(name string) string {
	switch name {
	case manifestFileName, keyRegistryFileName, discardFileName, lockFileName, rewriteManifestName:
		return name
	}
	if _, ok := table.ParseFileID(name); ok {
		return ".sst"
	}
	for _, ext := range []string{".mem", ".vlog"} {
		if base, ok := strings.CutSuffix(name, ext); ok && base != "" && strings.Trim(base, "0123456789") == "" {
			if _, err := strconv.ParseUint(base, 10, 32); err == nil {
				return ext
			}
		}
	}
	return ""
}

// removeEmptyLogs removes the empty value-log (.vlog) and memtable
// write-ahead-log (.mem) files that a process killed while badger was
// creating one (between creating the file and sizing it) leaves behind:
// badger refuses to open a directory holding one ("Open existing file: …
// Create a new file", "while opening memtables … Create a new file"). Such a
// file holds no data. The caller holds the directory's lock.
func removeEmptyLogs(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if kind := badgerFileKind(e.Name()); !e.Type().IsRegular() || (kind != ".vlog" && kind != ".mem") {
			continue
		}
		if info, err := e.Info(); err == nil && info.Size() == 0 {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// logHeaderSize is the size of the header of a .mem or .vlog file: the
// encryption key id (8 bytes, 0 without encryption) and a base IV.
const logHeaderSize = 20

// Entry meta bits (badger's value.go).
const (
	metaDelete         = 1 << 0
	metaValuePointer   = 1 << 1
	metaDiscardEarlier = 1 << 2
	metaMerge          = 1 << 3
	metaTxn            = 1 << 6
	metaFinTxn         = 1 << 7
)

// logEntry is an entry of a .mem or .vlog file: a header (meta, user meta,
// and the key length, value length and expiry as uvarints), the key with
// its 8-byte version suffix, the value, and the CRC32C of all of them, big
// endian.
type logEntry struct {
	key    []byte // with the version suffix
	value  []byte
	meta   byte
	offset int64 // where the entry starts
	end    int64 // where the next one starts
}

// maxLogKey is badger's bound on the key length of a log entry.
const maxLogKey = 1 << 16

// errLogZero marks a zero byte where an entry would start: the end of what
// was written to a preallocated file.
var errLogZero = errors.New("zero header")

// decodeLogEntry decodes the entry at data[off:]. It returns errLogZero at a
// zero byte, and otherwise an error for an entry that does not decode or
// fails its checksum; end is then where the entry would end by its header
// (len(data)+1 when the header does not decode or the entry does not fit).
func decodeLogEntry(data []byte, off int64) (e logEntry, end int64, err error) {
	e.offset = off
	rest := data[off:]
	if len(rest) == 0 || rest[0] == 0 && (len(rest) < 2 || rest[1] == 0) && (len(rest) < 3 || rest[2] == 0) {
		return e, off, errLogZero
	}
	bad := int64(len(data)) + 1
	if len(rest) < 5 {
		return e, bad, fmt.Errorf("entry header at %d is cut off", off)
	}
	e.meta = rest[0]
	n := 2
	var lens [3]uint64
	for i := range lens {
		v, k := binary.Uvarint(rest[n:])
		if k <= 0 {
			return e, bad, fmt.Errorf("entry header at %d does not decode", off)
		}
		lens[i], n = v, n+k
	}
	klen, vlen := lens[0], lens[1]
	if klen > maxLogKey || vlen > uint64(len(rest)) || uint64(n)+klen+vlen+4 > uint64(len(rest)) {
		return e, bad, fmt.Errorf("entry at %d claims a %d-byte key and a %d-byte value, beyond the file's end", off, klen, vlen)
	}
	body := rest[:n+int(klen+vlen)]
	end = off + int64(len(body)) + 4
	if got, want := crc32.Checksum(body, castagnoli), binary.BigEndian.Uint32(rest[len(body):]); got != want {
		return e, end, fmt.Errorf("entry at %d fails its checksum", off)
	}
	if klen <= 8 {
		return e, end, fmt.Errorf("entry at %d has a key of %d bytes, too short for a version", off, klen)
	}
	e.key = body[n : n+int(klen)]
	e.value = body[n+int(klen):]
	e.end = end
	return e, end, nil
}

// logScan is what scanLog found in a .mem or .vlog file.
type logScan struct {
	// entries are those of the committed transactions, and the entries
	// outside transactions, in file order.
	entries []logEntry
	// stop is where badger stops replaying the file (and, opening it for
	// writing, truncates it): the end of the last committed transaction.
	stop int64
	// damage, when not empty, says why what follows stop is not what a
	// process killed while writing leaves (entries of an unfinished
	// transaction, part of the entry being written, and zero bytes):
	// badger would drop entries written whole, or would try to allocate a
	// value longer than the file.
	damage string
	// failed is where the replay stopped (the entry that does not decode
	// or breaks the order), and resume, when not 0, where the first whole
	// entry after it starts.
	failed, resume int64
}

// scanLog reads the entries of a .mem or .vlog file the way badger replays
// one (logFile.iterate): transactions are kept when their closing entry is
// there, and the replay stops at the first entry that does not decode or
// breaks the transaction order. The file header (logHeaderSize bytes) must
// have been checked.
func scanLog(m *mappedFile) logScan { return scanLogFrom(m, logHeaderSize) }

// scanLogFrom is scanLog starting at offset from.
func scanLogFrom(m *mappedFile, from int64) logScan {
	data := m.data
	sc := logScan{stop: from}
	var pending []logEntry
	var txnTs uint64
	off := from
	stopped := func(why string) logScan {
		sc.failed = off
		if next, ok := findLogEntry(m, off); ok {
			sc.damage = fmt.Sprintf("%s, yet a whole entry follows at %d", why, next)
			sc.resume = next
		}
		return sc
	}
	for {
		e, end, err := decodeLogEntry(data, off)
		if errors.Is(err, errLogZero) {
			return stopped(fmt.Sprintf("the log ends at %d", off))
		}
		if err != nil {
			if end > int64(len(data)) {
				sc.damage = err.Error()
				sc.failed = off
				if next, ok := findLogEntry(m, off+1); ok {
					sc.resume = next
				}
				return sc
			}
			return stopped(err.Error())
		}
		switch {
		case e.meta&metaTxn != 0:
			ts := y.ParseTs(e.key)
			if txnTs == 0 {
				txnTs = ts
			}
			if ts != txnTs {
				return stopped(fmt.Sprintf("the entry at %d breaks the transaction order", off))
			}
			pending = append(pending, e)
		case e.meta&metaFinTxn != 0:
			ts, err := strconv.ParseUint(string(e.value), 10, 64)
			if err != nil || ts != txnTs {
				return stopped(fmt.Sprintf("the entry at %d breaks the transaction order", off))
			}
			sc.entries = append(sc.entries, pending...)
			pending, txnTs = pending[:0], 0
			sc.stop = end
		default:
			if txnTs != 0 {
				return stopped(fmt.Sprintf("the entry at %d breaks the transaction order", off))
			}
			sc.entries = append(sc.entries, e)
			sc.stop = end
		}
		off = end
	}
}

// findLogEntry returns the offset of the first whole entry (one that
// decodes and passes its checksum) at from or after. Only entries that
// this store's badger writes are looked for: meta bits badger defines, no
// user meta or expiry, and a key of this package's or badger's.
func findLogEntry(m *mappedFile, from int64) (int64, bool) {
	data := m.data
	for off := from; off+5 < int64(len(data)); off++ {
		if data[off] == 0 {
			off += int64(zeroRun(data[off:min(off|(dataAlign-1)+1, int64(len(data)))]))
			if off%dataAlign == 0 {
				off = m.nextData(off)
			}
			off--
			continue
		}
		b := data[off:]
		if b[0]&^(metaDelete|metaValuePointer|metaDiscardEarlier|metaMerge|metaTxn|metaFinTxn) != 0 || b[1] != 0 || b[2] < 9 {
			continue
		}
		klen, n := binary.Uvarint(b[2:])
		if n <= 0 || klen > maxLogKey {
			continue
		}
		_, m := binary.Uvarint(b[2+n:])
		if m <= 0 || 2+n+m >= len(b) || b[2+n+m] != 0 { // expiry 0
			continue
		}
		key := b[2+n+m+1:]
		if !hasStorePrefix(key) {
			continue
		}
		if _, _, err := decodeLogEntry(data, off); err == nil {
			return off, true
		}
	}
	return 0, false
}

// hasStorePrefix reports whether b starts with the prefix of a key this
// package or badger writes.
func hasStorePrefix(b []byte) bool {
	for _, p := range []string{ckptPrefix, netPrefix, "!badger!"} {
		if len(b) >= len(p) && string(b[:len(p)]) == p {
			return true
		}
	}
	return false
}

// zeroRun returns the number of zero bytes b starts with.
func zeroRun(b []byte) int {
	n := 0
	for len(b)-n >= 8 && binary.LittleEndian.Uint64(b[n:]) == 0 {
		n += 8
	}
	for n < len(b) && b[n] == 0 {
		n++
	}
	return n
}

// checkLogHeader checks the header of a .mem or .vlog file: this store
// does not encrypt, so the key id is 0.
func checkLogHeader(data []byte) error {
	if len(data) < logHeaderSize {
		return fmt.Errorf("%d bytes, shorter than a log header", len(data))
	}
	if id := binary.BigEndian.Uint64(data); id != 0 {
		return fmt.Errorf("the header names the encryption key %d (the store is not encrypted)", id)
	}
	return nil
}

// tableEntry is an entry of a table: a key with its version suffix and
// badger's value (meta and the value or a value pointer).
type tableEntry struct {
	key   []byte
	meta  byte
	value []byte
}

// verifyTable opens the table in data (a whole .sst file) and verifies the
// checksums of its index and of every block. Damage can make package table
// panic; the panic is returned as an error.
func verifyTable(data []byte, id uint64) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("does not decode (%v)", firstLine(r))
		}
	}()
	opts := table.Options{ChkMode: options.NoVerification, Compression: options.None}
	t, err := table.OpenInMemoryTable(data, id, &opts)
	if err != nil {
		return err
	}
	return t.VerifyChecksum()
}

// tableEntries returns the entries of a table; damaged blocks end the
// reading, which goes on backwards from the last block, so that only
// the damaged blocks are lost when the index is intact.
func tableEntries(data []byte, id uint64) (entries []tableEntry, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("does not decode (%v)", firstLine(r))
		}
	}()
	opts := table.Options{ChkMode: options.OnBlockRead, Compression: options.None}
	t, err := table.OpenInMemoryTable(data, id, &opts)
	if err != nil {
		return nil, err
	}
	count := int(t.KeyCount())
	read := func(flags int) {
		defer func() { _ = recover() }()
		it := t.NewIterator(flags | table.NOCACHE)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			v := it.Value()
			entries = append(entries, tableEntry{key: slices.Clone(it.Key()), meta: v.Meta, value: slices.Clone(v.Value)})
		}
	}
	read(0)
	if len(entries) < count {
		read(table.REVERSED)
	}
	return entries, nil
}

// firstLine returns the first line of a recovered panic value.
func firstLine(r any) string {
	s := strings.TrimSpace(fmt.Sprint(r))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// withMapped calls fn with the file at path, mapped read-only where
// mapFile maps. A file that shrinks while mapped (a process writing the
// store truncates its value log on closing) faults on access; the fault is
// returned as an error rather than crashing.
func withMapped(path string, fn func(m *mappedFile) error) (err error) {
	m, err := mapFile(path)
	if err != nil {
		return err
	}
	defer m.close()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading %s: %v", path, firstLine(r))
		}
	}()
	return fn(m)
}
