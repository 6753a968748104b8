package badgerdb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/dgraph-io/badger/v4"

	"github.com/caffe2go/caffe2go/persist"
)

func init() {
	persist.MustRegisterDBType("badger", openBadgerDB)
}

// badgerManifest is the file every badger directory has.
const badgerManifest = "MANIFEST"

// badgerDB is an open badger directory.
type badgerDB struct {
	path string
	mode persist.Mode
	db   *badger.DB

	mu     sync.Mutex
	closed bool
}

// badgerOptions are the options of every badger DB this type opens: badger's
// defaults, logging only warnings and errors.
func badgerOptions(path string) badger.Options {
	return badger.DefaultOptions(path).WithLoggingLevel(badger.WARNING)
}

func openBadgerDB(path string, mode persist.Mode) (persist.DB, error) {
	st, statErr := os.Stat(path)
	exists := statErr == nil
	if statErr != nil && !errors.Is(statErr, os.ErrNotExist) {
		return nil, fmt.Errorf("badger: Cannot open db: %s (mode %v): %w", path, mode, statErr)
	}
	if exists && !st.IsDir() {
		return nil, fmt.Errorf("badger: Cannot open db: %s (mode %v): not a directory (a badger DB is a directory)", path, mode)
	}
	isBadger := exists && isRegularFile(filepath.Join(path, badgerManifest))
	var (
		db  *badger.DB
		err error
	)
	switch mode {
	case persist.ModeRead:
		if !isBadger {
			why := "no such directory"
			if exists {
				why = "not a badger DB directory (it has no " + badgerManifest + ")"
			}
			return nil, fmt.Errorf("badger: Cannot open db: %s (mode READ): %s", path, why)
		}
		db, err = badger.Open(badgerOptions(path).WithReadOnly(true))
		if err != nil {
			// A DB that was not closed cleanly needs its logs replayed,
			// which a read-only open cannot do.
			var rwErr error
			if db, rwErr = badger.Open(badgerOptions(path)); rwErr != nil {
				return nil, fmt.Errorf("badger: Cannot open db: %s (mode READ): %w (and read-write: %w)", path, err, rwErr)
			}
		}
	case persist.ModeWrite, persist.ModeNew:
		if exists && !isBadger {
			if entries, _ := os.ReadDir(path); len(entries) > 0 {
				return nil, fmt.Errorf("badger: Cannot open db for writing: %s (mode %v): the directory is not empty and is not a badger DB (it has no %s)", path, mode, badgerManifest)
			}
		}
		db, err = badger.Open(badgerOptions(path))
		if err != nil {
			return nil, fmt.Errorf("badger: Cannot open db for writing: %s (mode %v): %w", path, mode, err)
		}
		if mode == persist.ModeNew && isBadger {
			if err := db.DropAll(); err != nil {
				db.Close()
				return nil, fmt.Errorf("badger: Cannot open db for writing: %s (mode NEW): emptying it: %w", path, err)
			}
		}
	}
	return &badgerDB{path: path, mode: mode, db: db}, nil
}

func isRegularFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

func (d *badgerDB) isClosed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.closed
}

// NewCursor returns a cursor over a read-only snapshot of the DB, at the
// first key.
func (d *badgerDB) NewCursor() (persist.Cursor, error) {
	if d.isClosed() {
		return nil, fmt.Errorf("badger %s: cannot create a cursor: the DB is closed", d.path)
	}
	txn := d.db.NewTransaction(false)
	// No value prefetching: the cursor reads each value as it gets to it,
	// which costs sequential scans little (values are in memory-mapped
	// files) and keeps Seek cheap for random access.
	c := &badgerCursor{db: d, txn: txn, it: txn.NewIterator(badger.IteratorOptions{})}
	if err := c.SeekToFirst(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// NewTransaction returns a transaction backed by a badger write batch.
func (d *badgerDB) NewTransaction() (persist.Transaction, error) {
	if d.mode == persist.ModeRead {
		return nil, fmt.Errorf("badger %s: transactions need a DB opened for NEW or WRITE, this one is open for READ", d.path)
	}
	if d.isClosed() {
		return nil, fmt.Errorf("badger %s: cannot create a transaction: the DB is closed", d.path)
	}
	return &badgerTxn{db: d}, nil
}

// Close closes the badger DB, flushing what was written.
func (d *badgerDB) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	if err := d.db.Close(); err != nil {
		return fmt.Errorf("badger %s: close: %w", d.path, err)
	}
	return nil
}

// badgerCursor iterates over a read transaction.
type badgerCursor struct {
	db     *badgerDB
	txn    *badger.Txn
	it     *badger.Iterator
	valid  bool
	key    string
	value  []byte
	closed bool
}

func (c *badgerCursor) usable() error {
	if c.closed {
		return fmt.Errorf("badger %s: the cursor is closed", c.db.path)
	}
	if c.db.isClosed() {
		return fmt.Errorf("badger %s: the DB is closed", c.db.path)
	}
	return nil
}

// load reads the record the iterator is at.
func (c *badgerCursor) load() error {
	c.valid = false
	if !c.it.Valid() {
		return nil
	}
	item := c.it.Item()
	v, err := item.ValueCopy(c.value[:0])
	if err != nil {
		return fmt.Errorf("badger %s: read the value of key %q: %w", c.db.path, item.Key(), err)
	}
	c.value = v
	c.key = string(item.Key())
	c.valid = true
	return nil
}

// SeekToFirst moves to the smallest key.
func (c *badgerCursor) SeekToFirst() error {
	if err := c.usable(); err != nil {
		c.valid = false
		return err
	}
	c.it.Rewind()
	return c.load()
}

// SupportsSeek reports true.
func (c *badgerCursor) SupportsSeek() bool { return true }

// Seek moves to the first key at or after key.
func (c *badgerCursor) Seek(key string) error {
	if err := c.usable(); err != nil {
		c.valid = false
		return err
	}
	c.it.Seek([]byte(key))
	return c.load()
}

// Next moves to the following key.
func (c *badgerCursor) Next() error {
	if err := c.usable(); err != nil {
		c.valid = false
		return err
	}
	if !c.valid {
		return nil
	}
	c.it.Next()
	return c.load()
}

// Valid reports whether the cursor is at a record.
func (c *badgerCursor) Valid() bool { return c.valid }

// Key returns the current key.
func (c *badgerCursor) Key() string {
	if !c.valid {
		return ""
	}
	return c.key
}

// Value returns the current value, valid until the cursor moves.
func (c *badgerCursor) Value() []byte {
	if !c.valid {
		return nil
	}
	return c.value
}

// Close ends the cursor's read transaction.
func (c *badgerCursor) Close() error {
	if c.closed {
		return nil
	}
	c.closed, c.valid = true, false
	c.it.Close()
	c.txn.Discard()
	return nil
}

// badgerTxn collects records in a badger write batch, which Commit flushes.
// A write batch splits itself into as many badger transactions as its size
// needs, so a Commit is durable record by record, not all or nothing
// (Caffe2's DB transactions promise no more).
type badgerTxn struct {
	db     *badgerDB
	wb     *badger.WriteBatch
	closed bool
}

// Put adds a record to the batch; the value is copied.
func (t *badgerTxn) Put(key string, value []byte) error {
	if t.closed {
		return fmt.Errorf("badger %s: Put of key %q: the transaction is closed", t.db.path, key)
	}
	if t.db.isClosed() {
		return fmt.Errorf("badger %s: Put of key %q: the DB is closed", t.db.path, key)
	}
	if len(key) == 0 || len(value) == 0 {
		return fmt.Errorf("badger %s: cannot put key %q with a %d-byte value: keys and values must not be empty", t.db.path, key, len(value))
	}
	if t.wb == nil {
		t.wb = t.db.db.NewWriteBatch()
	}
	if err := t.wb.Set([]byte(key), append([]byte(nil), value...)); err != nil {
		return fmt.Errorf("badger %s: put key %q (%d bytes): %w", t.db.path, key, len(value), err)
	}
	return nil
}

// Commit writes the batch.
func (t *badgerTxn) Commit() error {
	if t.closed {
		return fmt.Errorf("badger %s: Commit: the transaction is closed", t.db.path)
	}
	if t.wb == nil {
		return nil
	}
	wb := t.wb
	t.wb = nil
	if t.db.isClosed() {
		wb.Cancel()
		return fmt.Errorf("badger %s: Commit: the DB is closed", t.db.path)
	}
	if err := wb.Flush(); err != nil {
		return fmt.Errorf("badger %s: commit: %w", t.db.path, err)
	}
	return nil
}

// Close commits what is left and releases the transaction.
func (t *badgerTxn) Close() error {
	if t.closed {
		return nil
	}
	err := t.Commit()
	t.closed = true
	return err
}
