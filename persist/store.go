package persist

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

// ErrNotFound is wrapped by the errors for a net or checkpoint the store
// does not hold.
var ErrNotFound = errors.New("not found")

// ErrCorrupt is wrapped by the errors for stored values that fail their
// checks: undecodable records, checksum mismatches, records that disagree
// with their manifest; the store stays usable and other nets and
// checkpoints are unaffected. It is also wrapped by the errors of Open for a
// store whose badger files are damaged (see Open); Repair salvages such a
// store.
var ErrCorrupt = errors.New("corrupt record")

// ErrClosed is wrapped by the errors of calls on a closed Store.
var ErrClosed = errors.New("store is closed")

// ErrLocked is wrapped by the errors of Open and Repair for a store that
// another process (or another Store of this process) has open; the error
// names the process when badger's LOCK file does. OpenReadOnly reads such a
// store.
var ErrLocked = errors.New("store is locked")

// Store is an embedded badger database holding named nets and checkpoints
// (see the package documentation for the key layout). Its methods are safe
// for concurrent use; checkpoint writes are serialized. A directory can be
// open for writing in one Store at a time: badger locks it, so a second
// Open of the same directory, in this process or another, fails with
// ErrLocked until the first is closed; OpenReadOnly reads it meanwhile.
type Store struct {
	path string // the directory, or inMemoryPath
	db   *badger.DB

	// mu is held shared by every operation and exclusively by Close.
	mu     sync.RWMutex
	closed bool
	// wmu serializes the writers of checkpoint records.
	wmu sync.Mutex

	// stage forces the staged write path even for small checkpoints, and
	// stagedBytes is the payload per staged transaction (test hooks; see
	// SaveCheckpoint).
	stage       bool
	stagedBytes int64
	// maxChunk caps the chunk size (0: no cap). In-memory badger keeps
	// every value in its memtables and refuses values above its value
	// threshold.
	maxChunk int
	// fileMin is the payload size from which a checkpoint blob goes into
	// the save's data file (0: never; in-memory stores have no files).
	fileMin int64
	// fmu is held shared by loads reading a data file and exclusively by
	// whoever removes data files.
	fmu sync.RWMutex
	// removals counts the data-file removals running in the background
	// (see removeDataFiles); Close waits for them.
	removals sync.WaitGroup
	// readOnly is set by OpenReadOnly, whose snapshot of badger's files
	// is in the directory snapshot.
	readOnly bool
	snapshot string
}

// inMemoryPath names in-memory stores in errors.
const inMemoryPath = ":memory:"

// Key prefixes; see the package documentation.
const (
	netPrefix  = "net/"
	ckptPrefix = "ckpt/"
)

// storeOptions are the badger options of every store: no logging; a 16 MiB
// memtable (opening a store is then quick); values of 64 KiB and more kept
// in the value log, where a transaction counts only a pointer for them, so
// that a checkpoint of many big tensors fits one transaction and the tensor
// data is written once rather than rewritten by compactions; no compression
// (tensor data does not compress, and no block cache is then needed);
// smaller value-log files so that space freed by deleted checkpoints can be
// reclaimed sooner; no conflict detection (checkpoint writes are
// serialized by the store, net writes are blind); and checksums verified on
// every table block and value-log value read, so that damage that appears
// after Open verified the files is an error rather than a wrong value or a
// crash.
func storeOptions(dir string) badger.Options {
	return badger.DefaultOptions(dir).
		WithLogger(nil).
		WithMemTableSize(16 << 20).
		WithValueThreshold(64 << 10).
		WithCompression(options.None).
		WithBlockCacheSize(0).
		WithMetricsEnabled(false).
		WithValueLogFileSize(256 << 20).
		WithDetectConflicts(false).
		WithNumCompactors(2).
		WithChecksumVerificationMode(options.OnBlockRead).
		WithVerifyValueChecksum(true)
}

// Open opens the store in directory dir, creating the directory and an empty
// store when missing. What a process killed while it had the store open
// left behind is cleaned up first: empty log files (which badger itself
// would refuse to open) and the records and data files of checkpoint saves
// and deletes that did not finish (those no manifest names).
//
// Before badger opens its files, Open reads every table and checks its
// checksums, replays the memtable logs and checks the rest of badger's
// files as far as badger reads them on opening. A damaged file, or data
// files without the badger metadata that says which of them are
// checkpoints, make Open fail with an error wrapping ErrCorrupt that names
// the files: nothing is deleted, and Check and Repair (caffe2go store check
// and repair) tell what is intact and salvage it. A store another process
// has open is an error wrapping ErrLocked.
func Open(dir string) (s *Store, err error) {
	if dir == "" {
		return nil, errors.New("persist: Open needs a directory (use OpenInMemory for a store without one)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("persist: creating store directory %q: %w", dir, err)
	}
	if err := prepareStoreDir(dir); err != nil {
		return nil, err
	}
	db, err := openBadger(storeOptions(dir))
	if err != nil {
		if isLockError(err) {
			return nil, lockedError(dir)
		}
		return nil, fmt.Errorf("persist: opening store %q: %w", dir, err)
	}
	s = &Store{path: dir, db: db, stagedBytes: stagedTxnBytes, fileMin: dataFileMinBytes}
	defer func() {
		if err != nil {
			_ = db.Close()
			s = nil
		}
	}()
	defer s.recoverCorrupt(&err, "removing what unfinished saves left")
	if err := s.sweep(); err != nil {
		if errors.Is(err, ErrCorrupt) {
			return nil, damagedError(dir, err)
		}
		return nil, err
	}
	return s, nil
}

// prepareStoreDir removes, holding the directory's lock, the empty log
// files a process killed while creating one leaves (see removeEmptyLogs),
// and verifies the store's files (verifyStoreFiles).
func prepareStoreDir(dir string) error {
	unlock, held, err := lockStoreDir(dir)
	if err != nil {
		if errors.Is(err, ErrLocked) {
			return err
		}
		return fmt.Errorf("persist: store %q: locking the directory: %w", dir, err)
	}
	defer unlock()
	if held {
		if err := removeEmptyLogs(dir); err != nil {
			return fmt.Errorf("persist: store %q: removing the empty files of an interrupted process: %w", dir, err)
		}
	}
	if err := verifyStoreFiles(dir); err != nil {
		return damagedError(dir, err)
	}
	return nil
}

// damagedError is the error of Open for a store whose files fail
// verifyStoreFiles.
func damagedError(dir string, err error) error {
	return fmt.Errorf("persist: store %q is damaged, and opening it could lose checkpoints: %w; nothing was changed: "+
		"`caffe2go store check %s` tells which checkpoints are intact, `caffe2go store repair %s` salvages them (persist.Check, persist.Repair)",
		dir, err, dir, dir)
}

// lockedError is the error for a store directory whose lock is taken.
func lockedError(dir string) error {
	holder := "another process, or another Store of this process"
	if b, err := os.ReadFile(filepath.Join(dir, lockFileName)); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			if pid == os.Getpid() {
				holder = "another Store of this process"
			} else {
				holder = fmt.Sprintf("process %d (says its LOCK file)", pid)
			}
		}
	}
	return fmt.Errorf("persist: store %q is open for writing in %s: %w; close it there, or open it with OpenReadOnly to read it meanwhile",
		dir, holder, ErrLocked)
}

// openBadger is badger.Open with the panics of its own goroutine, which
// Open's verification is there to prevent, turned into errors.
func openBadger(opts badger.Options) (db *badger.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, fmt.Errorf("badger failed on a damaged file (%v): %w", firstLine(r), ErrCorrupt)
		}
	}()
	return badger.Open(opts)
}

// recoverCorrupt, deferred by the methods of s, turns a panic of badger's
// on damaged files during operation op into an error wrapping ErrCorrupt.
func (s *Store) recoverCorrupt(err *error, op string) {
	if r := recover(); r != nil {
		*err = s.errorf("%s: badger failed on damaged files (%v); `caffe2go store check %s` tells which checkpoints are intact: %w",
			op, firstLine(r), s.path, ErrCorrupt)
	}
}

// OpenInMemory returns an empty store that lives in memory only, for tests
// and throw-away work. Closing it discards everything. Its checkpoint
// records are at most inMemoryChunkBytes of payload each.
func OpenInMemory() (*Store, error) {
	opts := storeOptions("").WithInMemory(true).WithMemTableSize(64 << 20).WithValueThreshold(1 << 20)
	db, err := badger.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("persist: opening an in-memory store: %w", err)
	}
	return &Store{path: inMemoryPath, db: db, stagedBytes: stagedTxnBytes, maxChunk: inMemoryChunkBytes}, nil
}

// inMemoryChunkBytes is the chunk size cap of in-memory stores, below
// badger's 1 MiB limit on a value kept in memory.
const inMemoryChunkBytes = 512 << 10

// Path returns the store's directory, or ":memory:" for an in-memory store.
func (s *Store) Path() string { return s.path }

// Close flushes and closes the store. It waits for calls in progress; later
// calls fail with ErrClosed. Closing twice is not an error.
func (s *Store) Close() (err error) {
	defer s.recoverCorrupt(&err, "Close")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.removals.Wait()
	err = s.db.Close()
	if s.snapshot != "" {
		if rerr := os.RemoveAll(s.snapshot); err == nil {
			err = rerr
		}
	}
	if err != nil {
		return fmt.Errorf("persist: closing store %q: %w", s.path, err)
	}
	return nil
}

// use takes the shared lock for one operation; the caller must call the
// returned function when done.
func (s *Store) use() (func(), error) {
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return nil, fmt.Errorf("persist: store %q: %w", s.path, ErrClosed)
	}
	return s.mu.RUnlock, nil
}

// useWrite is use for the operations that write: they fail on a store
// that OpenReadOnly opened.
func (s *Store) useWrite(op string) (func(), error) {
	if s.readOnly {
		return nil, fmt.Errorf("persist: store %q: %s: %w (OpenReadOnly; Open opens it for writing once no other process has it open)", s.path, op, ErrReadOnly)
	}
	return s.use()
}

// errorf formats an error about this store.
func (s *Store) errorf(format string, args ...any) error {
	return fmt.Errorf("persist: store %q: "+format, append([]any{s.path}, args...)...)
}

// checkNetName rejects names that cannot be keys.
func checkNetName(name string) error {
	if name == "" {
		return errors.New("a net name must not be empty")
	}
	if len(name) > 60000 {
		return fmt.Errorf("net name of %d bytes is too long", len(name))
	}
	return nil
}

// SaveNet stores def under name, replacing a net saved under that name
// before, and makes it durable (synced to disk) before returning. The value
// is def's deterministic protobuf encoding (netdef.MarshalNetDef) sealed
// with a CRC32C; def's own name is kept as it is.
func (s *Store) SaveNet(name string, def *netdef.NetDef) (err error) {
	defer s.recoverCorrupt(&err, fmt.Sprintf("SaveNet %q", name))
	if err := checkNetName(name); err != nil {
		return s.errorf("SaveNet: %v", err)
	}
	if def == nil {
		return s.errorf("SaveNet %q: nil NetDef", name)
	}
	done, err := s.useWrite("SaveNet")
	if err != nil {
		return err
	}
	defer done()
	body, err := netdef.MarshalNetDef(def)
	if err != nil {
		return s.errorf("SaveNet %q: encoding the NetDef: %v", name, err)
	}
	v, err := seal(body)
	if err != nil {
		return s.errorf("SaveNet %q: %v", name, err)
	}
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set([]byte(netPrefix+name), v) }); err != nil {
		return s.errorf("SaveNet %q: %v", name, err)
	}
	if err := s.db.Sync(); err != nil {
		return s.errorf("SaveNet %q: syncing: %v", name, err)
	}
	return nil
}

// LoadNet returns the net saved under name. A missing name wraps ErrNotFound
// and a damaged record ErrCorrupt.
func (s *Store) LoadNet(name string) (_ *netdef.NetDef, err error) {
	defer s.recoverCorrupt(&err, fmt.Sprintf("LoadNet %q", name))
	done, err := s.use()
	if err != nil {
		return nil, err
	}
	defer done()
	var v []byte
	err = s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(netPrefix + name))
		if err != nil {
			return err
		}
		v, err = item.ValueCopy(nil)
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		names, _ := s.netNames()
		return nil, s.errorf("no net named %q (saved nets: %s): %w", name, listOrNone(names), ErrNotFound)
	}
	if err != nil {
		return nil, s.errorf("LoadNet %q: %v", name, err)
	}
	body, err := unseal(v)
	if err != nil {
		return nil, s.errorf("net %q: %v: %w", name, err, ErrCorrupt)
	}
	def, err := netdef.UnmarshalNetDef(body)
	if err != nil {
		return nil, s.errorf("net %q: %v: %w", name, err, ErrCorrupt)
	}
	return def, nil
}

// Nets returns the names of the saved nets, sorted.
func (s *Store) Nets() (_ []string, err error) {
	defer s.recoverCorrupt(&err, "listing nets")
	done, err := s.use()
	if err != nil {
		return nil, err
	}
	defer done()
	return s.netNames()
}

// netNames lists the saved nets in key (byte) order, which is sorted order;
// the caller holds the shared lock.
func (s *Store) netNames() ([]string, error) {
	var names []string
	err := s.db.View(func(txn *badger.Txn) error {
		return iterateKeys(txn, netPrefix, false, func(key string) (bool, error) {
			names = append(names, strings.TrimPrefix(key, netPrefix))
			return true, nil
		})
	})
	if err != nil {
		return nil, s.errorf("listing nets: %v", err)
	}
	return names, nil
}

// DeleteNet removes the net saved under name; a missing name wraps
// ErrNotFound.
func (s *Store) DeleteNet(name string) (err error) {
	defer s.recoverCorrupt(&err, fmt.Sprintf("DeleteNet %q", name))
	done, err := s.useWrite("DeleteNet")
	if err != nil {
		return err
	}
	defer done()
	key := []byte(netPrefix + name)
	err = s.db.Update(func(txn *badger.Txn) error {
		if _, err := txn.Get(key); err != nil {
			return err
		}
		return txn.Delete(key)
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return s.errorf("DeleteNet: no net named %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return s.errorf("DeleteNet %q: %v", name, err)
	}
	return nil
}

// iterateKeys calls fn with every key under prefix, in byte order (reverse
// order when reverse is set), until fn returns false or an error.
func iterateKeys(txn *badger.Txn, prefix string, reverse bool, fn func(key string) (bool, error)) error {
	opts := badger.DefaultIteratorOptions
	opts.PrefetchValues = false
	opts.Prefix = []byte(prefix)
	opts.Reverse = reverse
	it := txn.NewIterator(opts)
	defer it.Close()
	start := []byte(prefix)
	if reverse {
		start = append(start, 0xff)
	}
	for it.Seek(start); it.ValidForPrefix([]byte(prefix)); it.Next() {
		more, err := fn(string(it.Item().Key()))
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// deleteKeys deletes keys, in as many transactions as badger needs.
func (s *Store) deleteKeys(keys []string) error {
	for len(keys) > 0 {
		txn := s.db.NewTransaction(true)
		n := 0
		for n < len(keys) {
			err := txn.Delete([]byte(keys[n]))
			if errors.Is(err, badger.ErrTxnTooBig) && n > 0 {
				break
			}
			if err != nil {
				txn.Discard()
				return err
			}
			n++
		}
		if err := txn.Commit(); err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

// collectGarbage lets badger rewrite value-log files that are mostly
// deleted checkpoint data. Failures (nothing to rewrite, a collection
// already running, an in-memory store) only mean there is nothing to do now.
func (s *Store) collectGarbage() {
	for i := 0; i < 4 && s.db.RunValueLogGC(0.5) == nil; i++ {
	}
}

// listOrNone joins names for an error message.
func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	const most = 20
	if len(names) > most {
		return strings.Join(names[:most], ", ") + fmt.Sprintf(", … (%d in all)", len(names))
	}
	return strings.Join(names, ", ")
}
