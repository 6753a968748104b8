// DB files and Caffe2's operators over them.
//
// This part of package persist is the port of Caffe2's caffe2/core/db.h and
// the operators built on it:
//
//   - DB, Cursor and Transaction: a small key-value store interface with
//     Caffe2's three open modes (ModeNew, ModeWrite, ModeRead), and OpenDB,
//     which picks an implementation by type name from a registry
//     (RegisterDBType). Two packages register DB types when imported:
//     persist/minidb, "minidb" (also "MiniDB"), Caffe2's flat file of
//     length-prefixed records, byte for byte; and persist/badgerdb,
//     "badger" (DefaultDBType), a badger/v4 database directory whose cursor
//     visits keys in sorted order. Package workspace imports both. Type
//     names are case-sensitive, as in Caffe2. Package persist/dbtest checks
//     a DB type against the contract of these interfaces.
//   - The operators Save, Load, Checkpoint (also registered as Snapshot),
//     DBExists, CreateDB and TensorProtosDBInput, registered for the CPU in
//     this package's init, with Caffe2's arguments and error texts. Their
//     db_type defaults to "badger". A relative db path resolves against the
//     workspace's RootFolder unless absolute_path is set.
//   - Datasets: DBReader (the value a CreateDB blob holds: a cursor that wraps
//     around at the end, with Caffe2's sharding and an optional seeded
//     per-epoch shuffle), TensorProtosWriter and WriteTensorProtosDB to write
//     records of serialized TensorProtos (package persist/mnist imports the
//     MNIST files into such a DB).
//
// Keys and values follow Caffe2's Save: a tensor blob is written as one
// record per chunk of blob.DefaultChunkSize elements, keyed name#%k, whose
// value is a serialized BlobProto; other blobs (byte strings, DB readers)
// are one record keyed by the blob name.

package persist

import (
	"errors"
	"fmt"
	"slices"
	"sync"
)

// Mode says how OpenDB opens a DB (Caffe2's db::Mode).
type Mode int

// The open modes.
const (
	// ModeRead opens an existing DB for cursors only.
	ModeRead Mode = iota
	// ModeWrite opens a DB for adding records, creating it when missing and
	// keeping what it holds (a minidb file is appended to).
	ModeWrite
	// ModeNew creates a DB, or empties an existing one, for writing.
	ModeNew
)

// String returns Caffe2's name of the mode: "READ", "WRITE" or "NEW".
func (m Mode) String() string {
	switch m {
	case ModeRead:
		return "READ"
	case ModeWrite:
		return "WRITE"
	case ModeNew:
		return "NEW"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// DefaultDBType is the DB type the operators use when db_type is not given;
// package persist/badgerdb registers it.
const DefaultDBType = "badger"

// ErrSeekUnsupported is returned by Cursor.Seek of a DB type whose cursor
// can only go forward (minidb).
var ErrSeekUnsupported = errors.New("persist: this DB type does not support Seek")

// Cursor walks the records of a DB. A new cursor is positioned at the first
// record. The methods that move it return an error when a record cannot be
// read; the cursor is then invalid until SeekToFirst succeeds. A cursor is
// not safe for concurrent use.
type Cursor interface {
	// SeekToFirst moves to the first record.
	SeekToFirst() error
	// SupportsSeek reports whether Seek works.
	SupportsSeek() bool
	// Seek moves to the first record whose key is at or after key in the
	// DB's key order (ErrSeekUnsupported where SupportsSeek is false).
	Seek(key string) error
	// Next moves to the following record. At the end the cursor becomes
	// invalid and Next returns nil.
	Next() error
	// Valid reports whether the cursor is at a record.
	Valid() bool
	// Key returns the current record's key ("" when not Valid).
	Key() string
	// Value returns the current record's value (nil when not Valid). The
	// slice is only valid until the cursor moves or is closed.
	Value() []byte
	// Close releases the cursor.
	Close() error
}

// Transaction adds records to a DB opened with ModeNew or ModeWrite. It is
// not safe for concurrent use.
type Transaction interface {
	// Put adds a record. Keys and values must not be empty. The
	// transaction does not keep value after Put returns.
	Put(key string, value []byte) error
	// Commit makes the records put so far part of the DB.
	Commit() error
	// Close commits what was put since the last Commit (as Caffe2's
	// transaction destructors do) and releases the transaction.
	Close() error
}

// DB is an open database of key-value records.
type DB interface {
	// NewCursor returns a cursor at the first record.
	NewCursor() (Cursor, error)
	// NewTransaction returns a transaction for adding records.
	NewTransaction() (Transaction, error)
	// Close closes the DB; for a DB open for writing it makes every
	// committed record durable in the file system's usual sense (no fsync
	// is promised). Closing twice is not an error.
	Close() error
}

// OpenFunc opens the DB at path in mode; see RegisterDBType.
type OpenFunc func(path string, mode Mode) (DB, error)

var dbTypes = struct {
	sync.RWMutex
	m map[string]OpenFunc
}{m: map[string]OpenFunc{}}

// RegisterDBType makes open the implementation of DB type name for OpenDB.
// It fails when name is empty, open is nil or name is taken; the error
// names the type. DB types register in their package's init, with
// MustRegisterDBType.
func RegisterDBType(name string, open OpenFunc) error {
	if name == "" {
		return errors.New("persist: cannot register a DB type with an empty name")
	}
	if open == nil {
		return fmt.Errorf("persist: cannot register DB type %q: nil open function", name)
	}
	dbTypes.Lock()
	defer dbTypes.Unlock()
	if _, dup := dbTypes.m[name]; dup {
		return fmt.Errorf("persist: cannot register DB type %q: already registered", name)
	}
	dbTypes.m[name] = open
	return nil
}

// MustRegisterDBType is RegisterDBType for init functions: it panics with
// RegisterDBType's error.
func MustRegisterDBType(name string, open OpenFunc) {
	if err := RegisterDBType(name, open); err != nil {
		panic(err)
	}
}

// DBTypes returns the registered DB type names, sorted.
func DBTypes() []string {
	dbTypes.RLock()
	defer dbTypes.RUnlock()
	names := make([]string, 0, len(dbTypes.m))
	for n := range dbTypes.m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// OpenDB opens the DB of type dbType (case-sensitive, as in Caffe2) at path
// in mode. An unknown type is an error that lists the registered ones (a
// DB type is registered when its package, such as persist/minidb, is
// imported); open errors name the type, the path and the mode.
func OpenDB(dbType, path string, mode Mode) (DB, error) {
	if mode != ModeRead && mode != ModeWrite && mode != ModeNew {
		return nil, fmt.Errorf("persist: cannot open %s DB %q: invalid mode %v", dbType, path, mode)
	}
	dbTypes.RLock()
	open := dbTypes.m[dbType]
	dbTypes.RUnlock()
	if open == nil {
		return nil, fmt.Errorf("persist: unknown DB type %q (opening %q); known types: %s (a DB type is registered by importing its package, such as persist/minidb)", dbType, path, listOrNone(DBTypes()))
	}
	if path == "" {
		return nil, fmt.Errorf("persist: cannot open %s DB: empty path", dbType)
	}
	return open(path, mode)
}

// DBExists reports whether a DB of type dbType can be opened for reading at
// path (Caffe2's db::DBExists). It opens and closes it.
func DBExists(dbType, path string) bool {
	db, err := OpenDB(dbType, path, ModeRead)
	if err != nil {
		return false
	}
	_ = db.Close()
	return true
}
