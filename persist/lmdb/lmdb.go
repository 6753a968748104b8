//go:build lmdb && cgo

package lmdb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/caffe2go/caffe2go/persist"
)

func init() {
	persist.MustRegisterDBType("lmdb", openLMDB)
}

// envs holds the environments open in this process, by the canonical path
// of their directory. LMDB forbids opening one environment twice in a
// process (its lock file's POSIX locks are per process), so every DB
// opened on a directory shares one.
var envs = struct {
	sync.Mutex
	m map[string]*sharedEnv
}{m: map[string]*sharedEnv{}}

// sharedEnv is an environment and the DBs open on it.
type sharedEnv struct {
	*env
	key  string
	refs int
	// writing is the DB whose transaction has the environment's one write
	// transaction, nil when none has.
	writing *lmdbDB
	// wtxn is the write transaction; guarded by the writing DB's mu.
	wtxn writeTxn
}

// lmdbDB is one open of an LMDB directory.
type lmdbDB struct {
	path string
	mode persist.Mode
	env  *sharedEnv

	// mu guards closed, cursors and txn; cursors and transactions hold it
	// for reading while they use LMDB, so Close cannot end a transaction
	// under them.
	mu      sync.RWMutex
	closed  bool
	cursors map[*cursor]struct{}
	txn     *txn
}

func openLMDB(path string, mode persist.Mode) (persist.DB, error) {
	if err := prepareDir(path, mode); err != nil {
		return nil, err
	}
	e, err := acquireEnv(path, mode)
	if err != nil {
		return nil, fmt.Errorf("lmdb: Cannot open db: %s (mode %v): %w", path, mode, err)
	}
	d := &lmdbDB{path: path, mode: mode, env: e, cursors: map[*cursor]struct{}{}}
	if mode == persist.ModeNew {
		if err := d.empty(); err != nil {
			d.Close()
			return nil, fmt.Errorf("lmdb: Cannot open db for writing: %s (mode NEW): emptying it: %w", path, err)
		}
	}
	return d, nil
}

// prepareDir checks path for mode, and creates the directory of a new DB.
func prepareDir(path string, mode persist.Mode) error {
	st, err := os.Stat(path)
	exists := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("lmdb: Cannot open db: %s (mode %v): %w", path, mode, err)
	}
	if exists && !st.IsDir() {
		return fmt.Errorf("lmdb: Cannot open db: %s (mode %v): not a directory (an LMDB is a directory holding %s)", path, mode, dataFile)
	}
	data, err := os.Stat(filepath.Join(path, dataFile))
	isLMDB := err == nil && data.Mode().IsRegular()
	switch {
	case mode == persist.ModeRead && !exists:
		return fmt.Errorf("lmdb: Cannot open db: %s (mode READ): no such directory", path)
	case mode == persist.ModeRead && !isLMDB:
		return fmt.Errorf("lmdb: Cannot open db: %s (mode READ): not an LMDB directory (it has no %s)", path, dataFile)
	case mode == persist.ModeRead && data.Size() == 0:
		// LMDB would take it for a new environment and fail to write its
		// meta pages with a misleading "Bad file descriptor".
		return fmt.Errorf("lmdb: Cannot open db: %s (mode READ): %s is empty", path, filepath.Join(path, dataFile))
	case mode == persist.ModeRead || isLMDB:
		return nil
	case !exists:
		if err := os.Mkdir(path, 0o755); err != nil {
			return fmt.Errorf("lmdb: Cannot open db for writing: %s (mode %v): %w", path, mode, err)
		}
	default:
		if entries, _ := os.ReadDir(path); len(entries) > 0 {
			return fmt.Errorf("lmdb: Cannot open db for writing: %s (mode %v): the directory is not empty and is not an LMDB (it has no %s)", path, mode, dataFile)
		}
	}
	return nil
}

// acquireEnv returns the process's environment for the directory path,
// opening it when no DB has it open.
func acquireEnv(path string, mode persist.Mode) (*sharedEnv, error) {
	key, err := filepath.Abs(path)
	if err == nil {
		key, err = filepath.EvalSymlinks(key)
	}
	if err != nil {
		return nil, err
	}
	envs.Lock()
	defer envs.Unlock()
	if e := envs.m[key]; e != nil {
		if e.readOnly && mode != persist.ModeRead {
			return nil, errors.New("it is open for READ elsewhere in this process, and LMDB allows one environment per directory and process: close those DBs first")
		}
		e.refs++
		return e, nil
	}
	raw, err := openEnv(path, mode == persist.ModeRead)
	if err != nil {
		return nil, err
	}
	e := &sharedEnv{env: raw, key: key, refs: 1}
	e.wtxn.e = raw
	envs.m[key] = e
	return e, nil
}

// release drops a DB's reference to e, closing it with the last.
func (e *sharedEnv) release() {
	envs.Lock()
	defer envs.Unlock()
	if e.refs--; e.refs == 0 {
		delete(envs.m, e.key)
		e.close()
	}
}

// empty deletes every record (ModeNew).
func (d *lmdbDB) empty() error {
	t, err := d.NewTransaction()
	if err != nil {
		return err
	}
	tx := t.(*txn)
	err = tx.do("empty the DB", func(w *writeTxn) error { return w.drop() })
	if cerr := tx.Close(); err == nil {
		err = cerr
	}
	return err
}

// NewCursor returns a cursor over a snapshot of the DB (an LMDB read
// transaction), at the first key.
func (d *lmdbDB) NewCursor() (persist.Cursor, error) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil, fmt.Errorf("lmdb %s: cannot create a cursor: the DB is closed", d.path)
	}
	r, err := d.env.beginRead()
	if err != nil {
		d.mu.Unlock()
		return nil, fmt.Errorf("lmdb %s: cannot create a cursor: %w", d.path, err)
	}
	c := &cursor{db: d, r: r}
	d.cursors[c] = struct{}{}
	d.mu.Unlock()
	if err := c.SeekToFirst(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// NewTransaction returns the DB's transaction. LMDB has one writer at a
// time: while a transaction of a DB on the same directory is open, it
// fails.
func (d *lmdbDB) NewTransaction() (persist.Transaction, error) {
	if d.mode == persist.ModeRead {
		return nil, fmt.Errorf("lmdb %s: transactions need a DB opened for NEW or WRITE, this one is open for READ", d.path)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, fmt.Errorf("lmdb %s: cannot create a transaction: the DB is closed", d.path)
	}
	envs.Lock()
	defer envs.Unlock()
	if d.env.writing != nil {
		return nil, fmt.Errorf("lmdb %s: cannot create a transaction: another transaction on this LMDB is open (LMDB has one writer at a time)", d.path)
	}
	d.env.writing = d
	d.txn = &txn{db: d}
	return d.txn, nil
}

// Close ends the DB's cursors and aborts its open transaction's
// uncommitted records, then releases the environment.
func (d *lmdbDB) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	for c := range d.cursors {
		c.r.end()
		c.valid = false
	}
	clear(d.cursors)
	if d.txn != nil {
		d.txn.finish()
	}
	d.env.release()
	return nil
}

// cursor walks an LMDB cursor in a read transaction.
type cursor struct {
	db     *lmdbDB
	r      *readTxn
	valid  bool
	key    string
	keyBuf []byte
	value  []byte
	closed bool
}

// move positions the cursor with the DB held open and copies the record
// it lands on.
func (c *cursor) move(what string, step func() (found bool, err error)) error {
	c.valid = false
	if c.closed {
		return fmt.Errorf("lmdb %s: %s: the cursor is closed", c.db.path, what)
	}
	c.db.mu.RLock()
	defer c.db.mu.RUnlock()
	if c.db.closed {
		return fmt.Errorf("lmdb %s: %s: the DB is closed", c.db.path, what)
	}
	found, err := step()
	if err != nil {
		return fmt.Errorf("lmdb %s: %s: %w", filepath.Join(c.db.path, dataFile), what, err)
	}
	if found {
		c.key = string(c.keyBuf)
		c.valid = true
	}
	return nil
}

// get positions the LMDB cursor and copies its record into the cursor's
// buffers.
func (c *cursor) get(op lmdbOp, key string) (found bool, err error) {
	c.keyBuf, c.value, found, err = c.r.get(op, key, c.keyBuf, c.value)
	return found, err
}

// SeekToFirst moves to the smallest key.
func (c *cursor) SeekToFirst() error {
	return c.move("SeekToFirst", func() (bool, error) { return c.get(opFirst, "") })
}

// SupportsSeek reports true.
func (c *cursor) SupportsSeek() bool { return true }

// Seek moves to the first key at or after key. LMDB cannot look up keys
// longer than its longest storable key, which no record has: such a key is
// looked up by its prefix of that length and passed by Next.
func (c *cursor) Seek(key string) error {
	return c.move(fmt.Sprintf("Seek(%q)", key), func() (bool, error) {
		if key == "" {
			return c.get(opFirst, "")
		}
		found, err := c.get(opSetRange, key[:min(len(key), c.db.env.maxKey)])
		for found && err == nil && string(c.keyBuf) < key {
			found, err = c.get(opNext, "")
		}
		return found, err
	})
}

// Next moves to the following key; past the last one it stays invalid.
func (c *cursor) Next() error {
	if !c.valid {
		return c.move("Next", func() (bool, error) { return false, nil })
	}
	return c.move(fmt.Sprintf("Next after key %q", c.key), func() (bool, error) { return c.get(opNext, "") })
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
	return c.value
}

// Close ends the cursor's read transaction.
func (c *cursor) Close() error {
	if c.closed {
		return nil
	}
	c.closed, c.valid = true, false
	c.db.mu.Lock()
	defer c.db.mu.Unlock()
	if !c.db.closed {
		c.r.end()
		delete(c.db.cursors, c)
	}
	return nil
}

// txn puts records into the environment's write transaction, which it
// begins at its first Put and commits at Commit.
type txn struct {
	db     *lmdbDB
	closed bool
}

// do runs fn on the write transaction, begun if need be, with the DB held
// open.
func (t *txn) do(what string, fn func(w *writeTxn) error) error {
	if t.closed {
		return fmt.Errorf("lmdb %s: %s: the transaction is closed", t.db.path, what)
	}
	t.db.mu.RLock()
	defer t.db.mu.RUnlock()
	if t.db.closed {
		return fmt.Errorf("lmdb %s: %s: the DB is closed", t.db.path, what)
	}
	w := &t.db.env.wtxn
	if err := w.begin(); err != nil {
		return fmt.Errorf("lmdb %s: %s: %w", t.db.path, what, err)
	}
	if err := fn(w); err != nil {
		return fmt.Errorf("lmdb %s: %s: %w (the records put since the last Commit are lost)", filepath.Join(t.db.path, dataFile), what, err)
	}
	return nil
}

// Put stores a record (LMDB copies key and value into its pages). Keys
// longer than LMDB's limit (511 bytes as Debian and Caffe2 build it) are
// refused.
func (t *txn) Put(key string, value []byte) error {
	what := fmt.Sprintf("Put of key %q", key)
	if len(key) == 0 || len(value) == 0 {
		return fmt.Errorf("lmdb %s: cannot put key %q with a %d-byte value: keys and values must not be empty", t.db.path, key, len(value))
	}
	if limit := t.db.env.maxKey; len(key) > limit {
		return fmt.Errorf("lmdb %s: cannot put a %d-byte key %q: LMDB keys are at most %d bytes", t.db.path, len(key), key, limit)
	}
	return t.do(what, func(w *writeTxn) error { return w.put(key, value) })
}

// Commit commits the records put since the last Commit.
func (t *txn) Commit() error {
	if t.closed {
		return fmt.Errorf("lmdb %s: Commit: the transaction is closed", t.db.path)
	}
	t.db.mu.RLock()
	defer t.db.mu.RUnlock()
	if t.db.closed {
		return fmt.Errorf("lmdb %s: Commit: the DB is closed", t.db.path)
	}
	if err := t.db.env.wtxn.commit(); err != nil {
		return fmt.Errorf("lmdb %s: commit: %w", filepath.Join(t.db.path, dataFile), err)
	}
	return nil
}

// Close commits what is left and releases the environment's writer.
func (t *txn) Close() error {
	if t.closed {
		return nil
	}
	err := t.Commit()
	t.db.mu.Lock()
	defer t.db.mu.Unlock()
	if !t.db.closed {
		t.finish()
	}
	t.closed = true
	return err
}

// finish aborts what is uncommitted and gives the environment's writer
// back. t.db.mu is held.
func (t *txn) finish() {
	t.db.env.wtxn.abort()
	envs.Lock()
	t.db.env.writing = nil
	envs.Unlock()
	t.db.txn = nil
}
