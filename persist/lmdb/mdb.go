//go:build lmdb && cgo

package lmdb

/*
#cgo LDFLAGS: -llmdb
#include <stdlib.h>
#include <lmdb.h>

// The helpers keep every MDB_val on the C stack, so that no Go memory
// holds a pointer that C writes.

static int c2g_put(MDB_txn *txn, MDB_dbi dbi, const void *k, size_t kn, const void *v, size_t vn) {
	MDB_val key = {kn, (void *)k}, val = {vn, (void *)v};
	return mdb_put(txn, dbi, &key, &val, 0);
}

static int c2g_get(MDB_cursor *cur, MDB_cursor_op op, const void *k, size_t kn,
		void **ko, size_t *kon, void **vo, size_t *von) {
	MDB_val key = {kn, (void *)k}, val = {0, NULL};
	int rc = mdb_cursor_get(cur, &key, &val, op);
	if (rc == 0) {
		*ko = key.mv_data;
		*kon = key.mv_size;
		*vo = val.mv_data;
		*von = val.mv_size;
	}
	return rc;
}
*/
import "C"

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"unsafe"
)

// mapSize is the address space an environment reserves for its data file:
// 1 TiB, as Caffe2 reserves (LMDB_MAP_SIZE), or 1 GiB where a 64-bit size
// does not fit. The file grows only as records are written.
const mapSize = min(1<<40, math.MaxUint>>2)

// dataFile is the file of an LMDB directory that holds the records.
const dataFile = "data.mdb"

// mdbError is an error code of the LMDB library.
type mdbError C.int

func (e mdbError) Error() string { return C.GoString(C.mdb_strerror(C.int(e))) }

// check turns an LMDB return code into an error (nil for success).
func check(rc C.int) error {
	if rc == 0 {
		return nil
	}
	return mdbError(rc)
}

// env is an open LMDB environment with its unnamed (main) database.
type env struct {
	p        *C.MDB_env
	dbi      C.MDB_dbi
	readOnly bool
	maxKey   int
	// writer runs every write transaction of a read-write environment:
	// LMDB ties a write transaction to the thread that began it.
	writer *osThread
}

// openEnv opens the environment in the directory path, read-only or not,
// and checks that the data file holds every page its meta page counts.
func openEnv(path string, readOnly bool) (*env, error) {
	var p *C.MDB_env
	if err := check(C.mdb_env_create(&p)); err != nil {
		return nil, fmt.Errorf("mdb_env_create: %w", err)
	}
	e := &env{p: p, readOnly: readOnly}
	if err := e.setup(path); err != nil {
		C.mdb_env_close(p)
		return nil, err
	}
	if !readOnly {
		e.writer = startOSThread()
	}
	return e, nil
}

func (e *env) setup(path string) error {
	if err := check(C.mdb_env_set_mapsize(e.p, C.size_t(mapSize))); err != nil {
		return fmt.Errorf("mdb_env_set_mapsize: %w", err)
	}
	// MDB_NOTLS: read transactions (cursors) may move between threads.
	flags := C.uint(C.MDB_NOTLS)
	if e.readOnly {
		flags |= C.MDB_RDONLY
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	if err := check(C.mdb_env_open(e.p, cpath, flags, 0o664)); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(path, dataFile), err)
	}
	if err := e.checkSize(path); err != nil {
		return err
	}
	var txn *C.MDB_txn
	if err := check(C.mdb_txn_begin(e.p, nil, C.MDB_RDONLY, &txn)); err != nil {
		return fmt.Errorf("mdb_txn_begin: %w", err)
	}
	if err := check(C.mdb_dbi_open(txn, nil, 0, &e.dbi)); err != nil {
		C.mdb_txn_abort(txn)
		return fmt.Errorf("%s: open the main database: %w", filepath.Join(path, dataFile), err)
	}
	if err := check(C.mdb_txn_commit(txn)); err != nil {
		return fmt.Errorf("mdb_txn_commit: %w", err)
	}
	e.maxKey = int(C.mdb_env_get_maxkeysize(e.p))
	return nil
}

// checkSize fails when the data file is shorter than the pages its meta
// page says are in use: LMDB would map the missing pages and the process
// would die of SIGBUS reading them.
func (e *env) checkSize(path string) error {
	var info C.MDB_envinfo
	var stat C.MDB_stat
	if err := check(C.mdb_env_info(e.p, &info)); err != nil {
		return fmt.Errorf("mdb_env_info: %w", err)
	}
	if err := check(C.mdb_env_stat(e.p, &stat)); err != nil {
		return fmt.Errorf("mdb_env_stat: %w", err)
	}
	file := filepath.Join(path, dataFile)
	st, err := os.Stat(file)
	if err != nil {
		return err
	}
	pages, psize := uint64(info.me_last_pgno)+1, uint64(stat.ms_psize)
	if need := pages * psize; uint64(st.Size()) < need {
		return fmt.Errorf("%s is truncated: %d bytes, but its meta page counts %d pages of %d bytes (%d bytes)", file, st.Size(), pages, psize, need)
	}
	return nil
}

// close closes the environment; no transaction may be open.
func (e *env) close() {
	if e.writer != nil {
		e.writer.stop()
	}
	C.mdb_env_close(e.p)
}

// readTxn is a read-only transaction with a cursor on the main database.
// With MDB_NOTLS it may be used from any thread, one at a time.
type readTxn struct {
	txn *C.MDB_txn
	cur *C.MDB_cursor
}

func (e *env) beginRead() (*readTxn, error) {
	var r readTxn
	if err := check(C.mdb_txn_begin(e.p, nil, C.MDB_RDONLY, &r.txn)); err != nil {
		return nil, fmt.Errorf("begin a read transaction: %w", err)
	}
	if err := check(C.mdb_cursor_open(r.txn, e.dbi, &r.cur)); err != nil {
		C.mdb_txn_abort(r.txn)
		return nil, fmt.Errorf("open a cursor: %w", err)
	}
	return &r, nil
}

// get positions the cursor (MDB_FIRST, MDB_NEXT or MDB_SET_RANGE with key)
// and returns the record's key and value, copied into keyBuf and valBuf.
// found is false at the end.
func (r *readTxn) get(op lmdbOp, key string, keyBuf, valBuf []byte) (k, v []byte, found bool, err error) {
	var kp, vp unsafe.Pointer
	var kn, vn C.size_t
	rc := C.c2g_get(r.cur, op, unsafe.Pointer(unsafe.StringData(key)), C.size_t(len(key)), &kp, &kn, &vp, &vn)
	if rc == C.MDB_NOTFOUND {
		return nil, nil, false, nil
	}
	if err := check(rc); err != nil {
		return nil, nil, false, err
	}
	if k, err = copyMapped(keyBuf, kp, kn); err != nil {
		return nil, nil, false, fmt.Errorf("a key: %w", err)
	}
	if v, err = copyMapped(valBuf, vp, vn); err != nil {
		return nil, nil, false, fmt.Errorf("the value of key %q: %w", k, err)
	}
	return k, v, true, nil
}

// copyMapped copies n bytes at p, in LMDB's map, into buf. LMDB keeps no
// checksums: a damaged page can give a record a length or place that runs
// off the map or past the end of the file, which faults; the fault is
// returned as an error instead of crashing the program.
func copyMapped(buf []byte, p unsafe.Pointer, n C.size_t) (out []byte, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("the database is corrupt: %d bytes at %p cannot be read: %v", uint64(n), p, r)
		}
	}()
	return append(buf[:0], unsafe.Slice((*byte)(p), int(n))...), nil
}

// end ends the transaction and its cursor.
func (r *readTxn) end() {
	C.mdb_cursor_close(r.cur)
	C.mdb_txn_abort(r.txn)
}

// writeTxn is the environment's write transaction; its methods run on the
// environment's writer thread.
type writeTxn struct {
	e   *env
	txn *C.MDB_txn
}

// begin begins the write transaction unless it is open.
func (w *writeTxn) begin() error {
	if w.txn != nil {
		return nil
	}
	var err error
	w.e.writer.run(func() { err = check(C.mdb_txn_begin(w.e.p, nil, 0, &w.txn)) })
	if err != nil {
		w.txn = nil
		return fmt.Errorf("begin a write transaction: %w", err)
	}
	return nil
}

// put stores value under key in the open transaction; on an error LMDB
// allows nothing but an abort, which put does.
func (w *writeTxn) put(key string, value []byte) error {
	var err error
	w.e.writer.run(func() {
		err = check(C.c2g_put(w.txn, w.e.dbi, unsafe.Pointer(unsafe.StringData(key)), C.size_t(len(key)),
			unsafe.Pointer(unsafe.SliceData(value)), C.size_t(len(value))))
	})
	if err != nil {
		w.abort()
	}
	return err
}

// drop deletes every record in the open transaction.
func (w *writeTxn) drop() error {
	var err error
	w.e.writer.run(func() { err = check(C.mdb_drop(w.txn, w.e.dbi, 0)) })
	if err != nil {
		w.abort()
	}
	return err
}

// commit commits the open transaction, if any.
func (w *writeTxn) commit() error {
	if w.txn == nil {
		return nil
	}
	var err error
	w.e.writer.run(func() { err = check(C.mdb_txn_commit(w.txn)) })
	w.txn = nil
	return err
}

// abort abandons the open transaction, if any.
func (w *writeTxn) abort() {
	if w.txn == nil {
		return
	}
	w.e.writer.run(func() { C.mdb_txn_abort(w.txn) })
	w.txn = nil
}

// osThread runs functions on one locked OS thread.
type osThread struct {
	calls chan func()
}

func startOSThread() *osThread {
	t := &osThread{calls: make(chan func())}
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for f := range t.calls {
			f()
		}
	}()
	return t
}

// run calls f on the thread and waits for it to return.
func (t *osThread) run(f func()) {
	done := make(chan struct{})
	t.calls <- func() { f(); close(done) }
	<-done
}

// stop ends the thread once the calls sent so far have run.
func (t *osThread) stop() { close(t.calls) }

// lmdbOp is an LMDB cursor operation.
type lmdbOp = C.MDB_cursor_op

// The cursor operations the cursor uses.
const (
	opFirst    = C.MDB_FIRST
	opNext     = C.MDB_NEXT
	opSetRange = C.MDB_SET_RANGE
)
