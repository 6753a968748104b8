//go:build lmdb && cgo

package lmdb_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/persist"
	"github.com/caffe2go/caffe2go/persist/dbtest"
	_ "github.com/caffe2go/caffe2go/persist/lmdb"
	"github.com/caffe2go/caffe2go/persist/mnist"
	"github.com/caffe2go/caffe2go/workspace"
	"github.com/caffe2go/caffe2go/workspace/dbsuite"
)

// suite is the shared DB-type suite over "lmdb".
var suite = dbsuite.Suite{DBType: "lmdb", Library: "the LMDB C", PyModule: "lmdb", PyPackage: "python3-lmdb"}

// TestContract runs persist's DB contract over "lmdb", with LMDB's
// longest key.
func TestContract(t *testing.T) { dbtest.TestDBLimits(t, "lmdb", dbtest.Limits{MaxKeyLen: 511}) }

// TestReadsCLMDB reads the fixtures that the LMDB C library wrote
// (testdata/fixtures.py).
func TestReadsCLMDB(t *testing.T) { suite.ReadsFixtures(t) }

// TestSaveLoad saves blobs of every type with db_type lmdb: the records are
// Caffe2's (bit for bit those Save writes into a minidb), and Load gives
// blobs that save to the same bits again.
func TestSaveLoad(t *testing.T) { suite.SaveLoad(t) }

// TestCorrupt damages the fixtures: opening or reading must fail with an
// error that names the data file (and the key, for a damaged record), never
// crash the program.
func TestCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name, db string
		damage   func([]byte) []byte
		want     string // in the error besides the data file
	}{
		{"cut in half", "records", func(b []byte) []byte { return b[:len(b)/2] }, "is truncated"},
		{"cut one page short", "mnist", func(b []byte) []byte { return b[:len(b)-4096] }, "is truncated"},
		{"cut inside the meta pages", "mnist", func(b []byte) []byte { return b[:100] }, "data.mdb"},
		{"emptied", "datum", func([]byte) []byte { return nil }, "is empty"},
		{"meta pages zeroed", "records", func(b []byte) []byte { clear(b[:8192]); return b }, "not an LMDB file"},
		{"garbage", "datum", func(b []byte) []byte { return bytes.Repeat([]byte{0xff}, len(b)) }, "not an LMDB file"},
		{"a value's length runs off the file", "mnist", func(b []byte) []byte {
			// A leaf node is lo, hi (the value's size), flags and the key's
			// size, 16 bits each, then the key.
			i := bytes.Index(b, []byte("00000063"))
			b[i-6], b[i-5] = 0xff, 0xff
			return b
		}, `the value of key "00000063"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := dbsuite.CopyFixture(t, tc.db)
			file := filepath.Join(dir, "data.mdb")
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, tc.damage(b), 0o644); err != nil {
				t.Fatal(err)
			}
			recs, err := dbtest.ReadAll("lmdb", dir)
			if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("read %d records, error %v; want an error naming %s and saying %q", len(recs), err, file, tc.want)
			}
		})
	}
}

// TestOpenErrors checks the errors of paths that are no LMDB for each
// mode, and that NEW empties an existing LMDB written by the C library.
func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "precious.txt"), []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		mode persist.Mode
		want string
	}{
		{filepath.Join(dir, "missing"), persist.ModeRead, "no such directory"},
		{file, persist.ModeRead, "not a directory"},
		{file, persist.ModeWrite, "not a directory"},
		{other, persist.ModeRead, "not an LMDB directory (it has no data.mdb)"},
		{other, persist.ModeWrite, "is not an LMDB"},
		{other, persist.ModeNew, "is not an LMDB"},
	} {
		_, err := persist.OpenDB("lmdb", tc.path, tc.mode)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("open %s for %v: %v, want an error naming it and saying %q", tc.path, tc.mode, err, tc.want)
		}
	}
	if entries, _ := os.ReadDir(other); len(entries) != 1 {
		t.Fatalf("opening a directory of other files left %d entries in it, want only precious.txt", len(entries))
	}

	db := dbsuite.CopyFixture(t, "records")
	dbtest.WriteAll(t, "lmdb", db, persist.ModeNew, dbtest.Record{Key: "only", Value: []byte("1")})
	if got, err := dbtest.ReadAll("lmdb", db); err != nil || !dbtest.Equal(got, []dbtest.Record{{Key: "only", Value: []byte("1")}}) {
		t.Fatalf("after NEW of the C records fixture: %d records, %v; want the one put", len(got), err)
	}
}

// open opens the LMDB at path or fails t.
func open(t *testing.T, path string, mode persist.Mode) persist.DB {
	t.Helper()
	db, err := persist.OpenDB("lmdb", path, mode)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestSharedEnvironment opens one directory several times in the process,
// which share one LMDB environment: readers side by side, no writer while
// a reader has the environment read-only, readers beside a writer, and one
// transaction at a time.
func TestSharedEnvironment(t *testing.T) {
	path := dbsuite.CopyFixture(t, "datum")
	r1, r2 := open(t, path, persist.ModeRead), open(t, path, persist.ModeRead)
	c1, err := r1.NewCursor()
	if err != nil {
		t.Fatal(err)
	}
	if w, err := persist.OpenDB("lmdb", path, persist.ModeWrite); err == nil || !strings.Contains(err.Error(), "open for READ elsewhere in this process") {
		if w != nil {
			w.Close()
		}
		t.Fatalf("a writer while the directory is open for READ: %v", err)
	}
	r1.Close()
	if err := c1.Next(); err == nil {
		t.Fatal("Next on a cursor of a closed DB: no error")
	}
	if got, err := dbtest.ReadAll("lmdb", path); err != nil || len(got) != 16 {
		t.Fatalf("a third reader while the second is open: %d records, %v", len(got), err)
	}
	r2.Close()

	w1, w2 := open(t, path, persist.ModeWrite), open(t, path, persist.ModeWrite)
	defer w1.Close()
	defer w2.Close()
	txn, err := w1.NewTransaction()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w2.NewTransaction(); err == nil || !strings.Contains(err.Error(), "another transaction") {
		t.Fatalf("a second transaction on the directory: %v, want an error", err)
	}
	if err := txn.Put("zz", []byte("new")); err != nil {
		t.Fatal(err)
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	reader := open(t, path, persist.ModeRead)
	defer reader.Close()
	c, err := reader.NewCursor()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Seek("zz"); err != nil || !c.Valid() || string(c.Value()) != "new" {
		t.Fatalf("a reader beside the writer: Seek(zz) valid=%v value %q, %v", c.Valid(), c.Value(), err)
	}
	if err := txn.Close(); err != nil {
		t.Fatal(err)
	}
	txn2, err := w2.NewTransaction()
	if err != nil {
		t.Fatalf("a transaction after the first is closed: %v", err)
	}
	if err := txn2.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestTransactionAcrossThreads puts and commits one transaction's records
// from goroutines locked to different OS threads, which stay alive: LMDB
// ties a write transaction to the thread that began it (its writer mutex
// cannot be unlocked by another thread), so a binding that ran LMDB's
// write calls on the caller's thread would hang here.
func TestTransactionAcrossThreads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	db := open(t, path, persist.ModeNew)
	defer db.Close()
	txn, err := db.NewTransaction()
	if err != nil {
		t.Fatal(err)
	}
	const threads = 4
	var calls [threads]chan func() error
	errc := make(chan error)
	for i := range calls {
		calls[i] = make(chan func() error)
		go func() {
			runtime.LockOSThread()
			for f := range calls[i] {
				errc <- f()
			}
		}()
	}
	defer func() {
		for _, c := range calls {
			close(c)
		}
	}()
	var want []dbtest.Record
	for i := range 200 {
		r := dbtest.Record{Key: fmt.Sprintf("%05d", i), Value: dbsuite.Pattern(1+i%100, byte(i))}
		want = append(want, r)
		calls[i%threads] <- func() error { return txn.Put(r.Key, r.Value) }
		if i%7 == 6 {
			if err := waitFor(t, errc); err != nil {
				t.Fatalf("record %d: %v", i, err)
			}
			calls[(i+1)%threads] <- txn.Commit
		}
		if err := waitFor(t, errc); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	calls[1] <- txn.Close
	if err := waitFor(t, errc); err != nil {
		t.Fatal(err)
	}
	if got, err := dbtest.ReadAll("lmdb", path); err != nil || !dbtest.Equal(got, want) {
		t.Fatalf("read %d records (%v), want the %d put", len(got), err, len(want))
	}
}

// waitFor returns the next error from errc, or fails t after 10 seconds.
func waitFor(t *testing.T, errc chan error) error {
	t.Helper()
	select {
	case err := <-errc:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("a transaction call from another thread hangs")
		return nil
	}
}

// TestMNISTPlan runs testdata/mnist_plan.pbtxt, a Caffe2 plan that trains
// on MNIST read from a LevelDB and saves its parameters to an LMDB, once
// the dataset tools have made the LevelDB: it runs as written, the loss
// falls, and the LMDB loads the trained parameters back bit for bit.
func TestMNISTPlan(t *testing.T) {
	root := t.TempDir()
	images, labels := dbsuite.MNIST()
	if _, err := mnist.Import(images, labels, "leveldb", filepath.Join(root, "mnist-train-leveldb")); err != nil {
		t.Fatal(err)
	}
	plan, err := netdef.ReadPlanDef(filepath.Join("testdata", "mnist_plan.pbtxt"))
	if err != nil {
		t.Fatal(err)
	}
	ws := workspace.New(root)
	defer ws.Close()
	if err := ws.RunPlan(plan); err != nil {
		t.Fatal(err)
	}
	loss, err := ws.FetchBlob("loss")
	if err != nil {
		t.Fatal(err)
	}
	if l := blob.Data[float32](loss)[0]; !(l < 1) {
		t.Errorf("loss after 50 iterations %v, want it fallen from about 2.3 (ln 10) below 1", l)
	}

	params := []string{"fc_w", "fc_b"}
	trained := filepath.Join(root, "trained.minidb")
	dbsuite.Save(t, ws, params, "minidb", trained)
	fresh := workspace.New(root)
	defer fresh.Close()
	load := netdef.NewOperator("Load", nil, params, netdef.ArgString("db", "mnist-params-lmdb"), netdef.ArgString("db_type", "lmdb"))
	if err := fresh.RunOperatorOnce(load); err != nil {
		t.Fatal(err)
	}
	loaded := filepath.Join(root, "loaded.minidb")
	dbsuite.Save(t, fresh, params, "minidb", loaded)
	if got, want := dbsuite.SortedRecords(t, "minidb", loaded), dbsuite.SortedRecords(t, "minidb", trained); !dbtest.Equal(got, want) {
		t.Fatal("the parameters loaded from the plan's LMDB differ from the trained ones")
	}
}

// TestPythonInterop writes LMDBs here and reads them with the C library
// through Python's lmdb (every record's key, length and SHA-256), and has
// Python write the fixtures afresh for checkFixtures.
func TestPythonInterop(t *testing.T) { suite.PythonInterop(t) }
