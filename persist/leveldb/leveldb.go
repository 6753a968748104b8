package leveldb

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/syndtr/goleveldb/leveldb"
	lerrors "github.com/syndtr/goleveldb/leveldb/errors"
	"github.com/syndtr/goleveldb/leveldb/iterator"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/util"

	"github.com/caffe2go/caffe2go/persist"
)

func init() {
	persist.MustRegisterDBType("leveldb", openLevelDB)
}

// currentFile is the file every LevelDB directory has: it names the
// directory's current MANIFEST.
const currentFile = "CURRENT"

// deleteBatch is how many keys ModeNew deletes per batch when it empties
// an existing DB.
const deleteBatch = 4096

// options returns goleveldb's options for opening a DB in mode: Caffe2's
// block size and open-file limit (caffe2/db/leveldb.cc), goleveldb's
// 4 MiB write buffer, and every strictness check but recovery's.
func options(mode persist.Mode) *opt.Options {
	return &opt.Options{
		BlockSize:              64 << 10,
		OpenFilesCacheCapacity: 100,
		Strict:                 opt.StrictAll &^ opt.StrictRecovery,
		ReadOnly:               mode == persist.ModeRead,
		ErrorIfMissing:         mode == persist.ModeRead,
	}
}

// levelDB is an open LevelDB directory.
type levelDB struct {
	path string
	mode persist.Mode
	db   *leveldb.DB

	// mu guards closed and cursors; cursors hold it for reading while they
	// move, so Close cannot release an iterator under them.
	mu      sync.RWMutex
	closed  bool
	cursors map[*cursor]struct{}
}

func openLevelDB(path string, mode persist.Mode) (persist.DB, error) {
	st, statErr := os.Stat(path)
	exists := statErr == nil
	if statErr != nil && !errors.Is(statErr, os.ErrNotExist) {
		return nil, fmt.Errorf("leveldb: Cannot open db: %s (mode %v): %w", path, mode, statErr)
	}
	if exists && !st.IsDir() {
		return nil, fmt.Errorf("leveldb: Cannot open db: %s (mode %v): not a directory (a LevelDB is a directory)", path, mode)
	}
	isLevelDB := exists && isRegularFile(filepath.Join(path, currentFile))
	switch {
	case mode == persist.ModeRead && !exists:
		return nil, fmt.Errorf("leveldb: Cannot open db: %s (mode READ): no such directory", path)
	case mode == persist.ModeRead && !isLevelDB:
		return nil, fmt.Errorf("leveldb: Cannot open db: %s (mode READ): not a LevelDB directory (it has no %s)", path, currentFile)
	case exists && !isLevelDB:
		if entries, _ := os.ReadDir(path); len(entries) > 0 {
			return nil, fmt.Errorf("leveldb: Cannot open db for writing: %s (mode %v): the directory is not empty and is not a LevelDB (it has no %s)", path, mode, currentFile)
		}
	}
	db, err := leveldb.OpenFile(path, options(mode))
	if mode == persist.ModeRead && err == io.EOF {
		db, err = replayLogs(path)
	}
	if err != nil {
		var corrupt *lerrors.ErrCorrupted
		if errors.As(err, &corrupt) && corrupt.Fd.Zero() {
			// goleveldb names no file when CURRENT names a missing MANIFEST.
			current, _ := os.ReadFile(filepath.Join(path, currentFile))
			err = fmt.Errorf("%w (%s names %q)", err, currentFile, strings.TrimSpace(string(current)))
		}
		return nil, fmt.Errorf("leveldb: Cannot open db: %s (mode %v): %w", path, mode, err)
	}
	d := &levelDB{path: path, mode: mode, db: db, cursors: map[*cursor]struct{}{}}
	if mode == persist.ModeNew && isLevelDB {
		if err := d.empty(); err != nil {
			db.Close()
			return nil, fmt.Errorf("leveldb: Cannot open db for writing: %s (mode NEW): emptying it: %w", path, err)
		}
	}
	return d, nil
}

// replayLogs opens the LevelDB at path for reading when goleveldb's
// read-only open cannot: it fails with a bare io.EOF on a DB with more than
// one log to replay (its journal reader's Reset returns the first log's
// EOF), which a writer closed during a memtable flush leaves. A writable
// open replays the logs into a table, as the C++ library does on every
// open, and the DB is then opened read-only again.
func replayLogs(path string) (*leveldb.DB, error) {
	rw, err := leveldb.OpenFile(path, options(persist.ModeWrite))
	if err != nil {
		return nil, fmt.Errorf("replaying its logs: %w", err)
	}
	if err := rw.Close(); err != nil {
		return nil, fmt.Errorf("replaying its logs: %w", err)
	}
	return leveldb.OpenFile(path, options(persist.ModeRead))
}

func isRegularFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// empty deletes every record and compacts the DB, so that its tables go.
func (d *levelDB) empty() error {
	it := d.db.NewIterator(nil, nil)
	defer it.Release()
	var b leveldb.Batch
	for it.Next() {
		b.Delete(it.Key())
		if b.Len() == deleteBatch {
			if err := d.db.Write(&b, nil); err != nil {
				return err
			}
			b.Reset()
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	if err := d.db.Write(&b, nil); err != nil {
		return err
	}
	return d.db.CompactRange(util.Range{})
}

// NewCursor returns a cursor over a snapshot of the DB, at the first key.
func (d *levelDB) NewCursor() (persist.Cursor, error) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil, fmt.Errorf("leveldb %s: cannot create a cursor: the DB is closed", d.path)
	}
	c := &cursor{db: d, it: d.db.NewIterator(nil, nil)}
	d.cursors[c] = struct{}{}
	d.mu.Unlock()
	if err := c.SeekToFirst(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// NewTransaction returns a transaction backed by a LevelDB write batch.
func (d *levelDB) NewTransaction() (persist.Transaction, error) {
	if d.mode == persist.ModeRead {
		return nil, fmt.Errorf("leveldb %s: transactions need a DB opened for NEW or WRITE, this one is open for READ", d.path)
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return nil, fmt.Errorf("leveldb %s: cannot create a transaction: the DB is closed", d.path)
	}
	return &txn{db: d}, nil
}

// Close releases the cursors still open and closes the DB.
func (d *levelDB) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	for c := range d.cursors {
		c.it.Release()
		c.valid = false
	}
	clear(d.cursors)
	if err := d.db.Close(); err != nil {
		return fmt.Errorf("leveldb %s: close: %w", d.path, err)
	}
	return nil
}

// cursor walks a goleveldb iterator.
type cursor struct {
	db     *levelDB
	it     iterator.Iterator
	valid  bool
	key    string
	closed bool
}

// move runs step (a positioning call of the iterator) with the DB held
// open, and loads the record the iterator lands on.
func (c *cursor) move(what string, step func() bool) error {
	c.valid = false
	if c.closed {
		return fmt.Errorf("leveldb %s: %s: the cursor is closed", c.db.path, what)
	}
	c.db.mu.RLock()
	defer c.db.mu.RUnlock()
	if c.db.closed {
		return fmt.Errorf("leveldb %s: %s: the DB is closed", c.db.path, what)
	}
	if !step() {
		if err := c.it.Error(); err != nil {
			return fmt.Errorf("leveldb %s: %s: %w", c.db.path, what, err)
		}
		return nil
	}
	c.key = string(c.it.Key())
	c.valid = true
	return nil
}

// SeekToFirst moves to the smallest key.
func (c *cursor) SeekToFirst() error { return c.move("SeekToFirst", c.it.First) }

// SupportsSeek reports true.
func (c *cursor) SupportsSeek() bool { return true }

// Seek moves to the first key at or after key.
func (c *cursor) Seek(key string) error {
	return c.move(fmt.Sprintf("Seek(%q)", key), func() bool { return c.it.Seek([]byte(key)) })
}

// Next moves to the following key; past the last one it stays invalid.
func (c *cursor) Next() error {
	if c.valid {
		key := c.key
		return c.move(fmt.Sprintf("Next after key %q", key), c.it.Next)
	}
	return c.move("Next", func() bool { return false })
}

// Valid reports whether the cursor is at a record.
func (c *cursor) Valid() bool { return c.valid }

// Key returns the current key.
func (c *cursor) Key() string {
	if !c.valid {
		return ""
	}
	return c.key
}

// Value returns the current value, valid until the cursor moves.
func (c *cursor) Value() []byte {
	if !c.valid {
		return nil
	}
	return c.it.Value()
}

// Close releases the iterator.
func (c *cursor) Close() error {
	if c.closed {
		return nil
	}
	c.closed, c.valid = true, false
	c.db.mu.Lock()
	defer c.db.mu.Unlock()
	if !c.db.closed {
		c.it.Release()
		delete(c.db.cursors, c)
	}
	return nil
}

// txn collects records in a LevelDB write batch, which Commit writes
// atomically.
type txn struct {
	db     *levelDB
	batch  leveldb.Batch
	closed bool
}

// Put adds a record to the batch; the batch copies key and value.
func (t *txn) Put(key string, value []byte) error {
	if err := t.usable(fmt.Sprintf("Put of key %q", key)); err != nil {
		return err
	}
	if len(key) == 0 || len(value) == 0 {
		return fmt.Errorf("leveldb %s: cannot put key %q with a %d-byte value: keys and values must not be empty", t.db.path, key, len(value))
	}
	t.batch.Put([]byte(key), value)
	return nil
}

func (t *txn) usable(what string) error {
	if t.closed {
		return fmt.Errorf("leveldb %s: %s: the transaction is closed", t.db.path, what)
	}
	if t.db.isClosed() {
		return fmt.Errorf("leveldb %s: %s: the DB is closed", t.db.path, what)
	}
	return nil
}

// Commit writes the batch.
func (t *txn) Commit() error {
	if err := t.usable("Commit"); err != nil {
		return err
	}
	if t.batch.Len() == 0 {
		return nil
	}
	n := t.batch.Len()
	err := t.db.db.Write(&t.batch, nil)
	t.batch.Reset()
	if err != nil {
		return fmt.Errorf("leveldb %s: commit of %d records: %w", t.db.path, n, err)
	}
	return nil
}

// Close commits what is left and releases the transaction.
func (t *txn) Close() error {
	if t.closed {
		return nil
	}
	err := t.Commit()
	t.closed = true
	t.batch.Reset()
	return err
}

func (d *levelDB) isClosed() bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.closed
}
