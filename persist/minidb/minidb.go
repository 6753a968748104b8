package minidb

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"

	"github.com/caffe2go/caffe2go/persist"
)

func init() {
	persist.MustRegisterDBType("minidb", openMiniDB)
	persist.MustRegisterDBType("MiniDB", openMiniDB)
}

// miniDBHeader is the size of a record's two length fields.
const miniDBHeader = 8

// miniDB is an open minidb file.
type miniDB struct {
	path string
	mode persist.Mode

	mu     sync.Mutex
	f      *os.File
	busy   bool // a cursor or transaction is open
	closed bool
}

func openMiniDB(path string, mode persist.Mode) (persist.DB, error) {
	var (
		f   *os.File
		err error
	)
	switch mode {
	case persist.ModeNew:
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	case persist.ModeWrite:
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	default:
		f, err = os.Open(path)
		if err == nil {
			var st os.FileInfo
			if st, err = f.Stat(); err == nil && st.IsDir() {
				err = errors.New("is a directory")
			}
			if err != nil {
				f.Close()
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("minidb: Cannot open file: %s (mode %v): %w", path, mode, err)
	}
	return &miniDB{path: path, mode: mode, f: f}, nil
}

// acquire takes the DB's one cursor-or-transaction slot.
func (d *miniDB) acquire(what string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return fmt.Errorf("minidb %s: cannot create a %s: the DB is closed", d.path, what)
	}
	if d.busy {
		return fmt.Errorf("minidb %s: cannot create a %s: a cursor or transaction is already open (minidb allows one at a time)", d.path, what)
	}
	d.busy = true
	return nil
}

func (d *miniDB) release() {
	d.mu.Lock()
	d.busy = false
	d.mu.Unlock()
}

func (d *miniDB) isClosed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.closed
}

// NewCursor returns a cursor at the first record; the DB must be open with
// persist.ModeRead.
func (d *miniDB) NewCursor() (persist.Cursor, error) {
	if d.mode != persist.ModeRead {
		return nil, fmt.Errorf("minidb %s: cursors need a DB opened for READ, this one is open for %v", d.path, d.mode)
	}
	if err := d.acquire("cursor"); err != nil {
		return nil, err
	}
	c := &miniDBCursor{db: d, r: bufio.NewReaderSize(d.f, 64<<10)}
	if err := c.SeekToFirst(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// NewTransaction returns a transaction; the DB must be open with
// persist.ModeNew or persist.ModeWrite.
func (d *miniDB) NewTransaction() (persist.Transaction, error) {
	if d.mode == persist.ModeRead {
		return nil, fmt.Errorf("minidb %s: transactions need a DB opened for NEW or WRITE, this one is open for READ", d.path)
	}
	if err := d.acquire("transaction"); err != nil {
		return nil, err
	}
	return &miniDBTxn{db: d, w: bufio.NewWriterSize(d.f, 64<<10)}, nil
}

// Close closes the file. Cursors and transactions still open fail after
// it; a transaction's uncommitted records are lost.
func (d *miniDB) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	if err := d.f.Close(); err != nil {
		return fmt.Errorf("minidb %s: close: %w", d.path, err)
	}
	return nil
}

// miniDBCursor reads records front to back.
type miniDBCursor struct {
	db     *miniDB
	r      *bufio.Reader
	off    int64 // file offset of the next unread byte
	size   int64 // the file's size when last looked at
	valid  bool
	key    string
	keyBuf []byte
	value  []byte
	closed bool
}

// SeekToFirst rewinds to the first record.
func (c *miniDBCursor) SeekToFirst() error {
	if err := c.usable(); err != nil {
		return err
	}
	c.valid = false
	if _, err := c.db.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("minidb %s: rewind: %w", c.db.path, err)
	}
	c.r.Reset(c.db.f)
	c.off, c.size = 0, 0
	return c.Next()
}

// SupportsSeek reports false: minidb cursors only go forward.
func (c *miniDBCursor) SupportsSeek() bool { return false }

// Seek is not supported by minidb (Caffe2 fails fatally; here it is an
// error and the cursor is unchanged).
func (c *miniDBCursor) Seek(key string) error {
	return fmt.Errorf("minidb %s: cannot seek to key %q: %w", c.db.path, key, persist.ErrSeekUnsupported)
}

func (c *miniDBCursor) usable() error {
	if c.closed {
		return fmt.Errorf("minidb %s: the cursor is closed", c.db.path)
	}
	if c.db.isClosed() {
		return fmt.Errorf("minidb %s: the DB is closed", c.db.path)
	}
	return nil
}

// Next reads the following record.
func (c *miniDBCursor) Next() error {
	if err := c.usable(); err != nil {
		c.valid = false
		return err
	}
	c.valid = false
	start := c.off
	var hdr [miniDBHeader]byte
	n, err := io.ReadFull(c.r, hdr[:4])
	c.off += int64(n)
	if err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil // a short read of key_len ends the records
		}
		return fmt.Errorf("minidb %s: read record at offset %d: %w", c.db.path, start, err)
	}
	n, err = io.ReadFull(c.r, hdr[4:])
	c.off += int64(n)
	if err != nil {
		return c.readError(start, "its value length", err)
	}
	keyLen := int32(binary.LittleEndian.Uint32(hdr[:4]))
	valueLen := int32(binary.LittleEndian.Uint32(hdr[4:]))
	if keyLen <= 0 || valueLen <= 0 {
		return fmt.Errorf("minidb %s: corrupt record at offset %d: key length %d and value length %d (both must be > 0)", c.db.path, start, keyLen, valueLen)
	}
	// Check the lengths against the file before allocating, so that a
	// corrupt length cannot ask for gigabytes.
	if end := start + miniDBHeader + int64(keyLen) + int64(valueLen); end > c.size {
		if c.size = c.fileSize(end); end > c.size {
			return fmt.Errorf("minidb %s: truncated record at offset %d: key length %d and value length %d run past the end of the file (%d bytes)",
				c.db.path, start, keyLen, valueLen, c.size)
		}
	}
	c.keyBuf = resizeBytes(c.keyBuf, int(keyLen))
	n, err = io.ReadFull(c.r, c.keyBuf)
	c.off += int64(n)
	if err != nil {
		return c.readError(start, "its key", err)
	}
	c.value = resizeBytes(c.value, int(valueLen))
	n, err = io.ReadFull(c.r, c.value)
	c.off += int64(n)
	if err != nil {
		return c.readError(start, "its value", err)
	}
	c.key = string(c.keyBuf)
	c.valid = true
	return nil
}

// fileSize returns the file's size, at least want when the file has grown
// that far (or its size cannot be read: the read then reports the error).
func (c *miniDBCursor) fileSize(want int64) int64 {
	st, err := c.db.f.Stat()
	if err != nil {
		return want
	}
	return st.Size()
}

func (c *miniDBCursor) readError(start int64, what string, err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("minidb %s: truncated record at offset %d: the file ends inside %s", c.db.path, start, what)
	}
	return fmt.Errorf("minidb %s: read record at offset %d: %w", c.db.path, start, err)
}

// resizeBytes returns b resized to n bytes, reusing its storage when it can.
func resizeBytes(b []byte, n int) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	return make([]byte, n)
}

// Valid reports whether the cursor is at a record.
func (c *miniDBCursor) Valid() bool { return c.valid }

// Key returns the current key.
func (c *miniDBCursor) Key() string {
	if !c.valid {
		return ""
	}
	return c.key
}

// Value returns the current value, valid until the cursor moves.
func (c *miniDBCursor) Value() []byte {
	if !c.valid {
		return nil
	}
	return c.value
}

// Close releases the DB for the next cursor.
func (c *miniDBCursor) Close() error {
	if c.closed {
		return nil
	}
	c.closed, c.valid = true, false
	c.db.release()
	return nil
}

// miniDBTxn appends records through a buffer that Commit flushes.
type miniDBTxn struct {
	db     *miniDB
	w      *bufio.Writer
	closed bool
}

// Put writes a record (buffered until Commit).
func (t *miniDBTxn) Put(key string, value []byte) error {
	if t.closed {
		return fmt.Errorf("minidb %s: Put of key %q: the transaction is closed", t.db.path, key)
	}
	if t.db.isClosed() {
		return fmt.Errorf("minidb %s: Put of key %q: the DB is closed", t.db.path, key)
	}
	if len(key) == 0 || len(value) == 0 {
		return fmt.Errorf("minidb %s: cannot put key %q with a %d-byte value: keys and values must not be empty", t.db.path, key, len(value))
	}
	if len(key) > math.MaxInt32 || len(value) > math.MaxInt32 {
		return fmt.Errorf("minidb %s: cannot put key %q: key (%d bytes) or value (%d bytes) longer than 2^31-1 bytes", t.db.path, key, len(key), len(value))
	}
	var hdr [miniDBHeader]byte
	binary.LittleEndian.PutUint32(hdr[:4], uint32(len(key)))
	binary.LittleEndian.PutUint32(hdr[4:], uint32(len(value)))
	if _, err := t.w.Write(hdr[:]); err != nil {
		return fmt.Errorf("minidb %s: write key %q: %w", t.db.path, key, err)
	}
	if _, err := t.w.WriteString(key); err != nil {
		return fmt.Errorf("minidb %s: write key %q: %w", t.db.path, key, err)
	}
	if _, err := t.w.Write(value); err != nil {
		return fmt.Errorf("minidb %s: write key %q: %w", t.db.path, key, err)
	}
	return nil
}

// Commit flushes the records put so far to the file.
func (t *miniDBTxn) Commit() error {
	if t.closed {
		return fmt.Errorf("minidb %s: Commit: the transaction is closed", t.db.path)
	}
	if t.db.isClosed() {
		return fmt.Errorf("minidb %s: Commit: the DB is closed", t.db.path)
	}
	if err := t.w.Flush(); err != nil {
		return fmt.Errorf("minidb %s: commit: %w", t.db.path, err)
	}
	return nil
}

// Close commits and releases the DB for the next transaction.
func (t *miniDBTxn) Close() error {
	if t.closed {
		return nil
	}
	err := t.Commit()
	t.closed = true
	t.db.release()
	return err
}
