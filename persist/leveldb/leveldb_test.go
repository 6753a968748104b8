package leveldb_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/persist"
	"github.com/caffe2go/caffe2go/persist/dbtest"
	_ "github.com/caffe2go/caffe2go/persist/leveldb"
	"github.com/caffe2go/caffe2go/workspace/dbsuite"
)

// suite is the shared DB-type suite over "leveldb".
var suite = dbsuite.Suite{DBType: "leveldb", Library: "the C++ LevelDB", PyModule: "plyvel", PyPackage: "python3-plyvel"}

// TestContract runs persist's DB contract over "leveldb".
func TestContract(t *testing.T) { dbtest.TestDB(t, "leveldb") }

// TestReadsCppLevelDB reads the fixtures that the C++ LevelDB library
// wrote (testdata/fixtures.py).
func TestReadsCppLevelDB(t *testing.T) { suite.ReadsFixtures(t) }

// TestSaveLoad saves blobs of every type with db_type leveldb: the records are
// Caffe2's (bit for bit those Save writes into a minidb), and Load gives
// blobs that save to the same bits again.
func TestSaveLoad(t *testing.T) { suite.SaveLoad(t) }

// TestCorrupt damages the fixtures: opening or reading must fail with an
// error that names the DB directory and the damaged file, never panic
// and never return fewer records without an error.
func TestCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name, db, file string
		damage         func([]byte) []byte
		want           string // in the error besides the directory
	}{
		{"table cut in half", "records", "000005.ldb", func(b []byte) []byte { return b[:len(b)/2] }, "000005.ldb"},
		{"table one byte short", "mnist", "000005.ldb", func(b []byte) []byte { return b[:len(b)-1] }, "000005.ldb"},
		{"table emptied", "records", "000005.ldb", func([]byte) []byte { return nil }, "000005.ldb"},
		{"table byte flipped", "mnist", "000005.ldb", flip(5000), "000005.ldb"},
		{"log cut in half", "records", "000004.log", func(b []byte) []byte { return b[:len(b)/2] }, "000004.log"},
		{"log byte flipped", "datum", "000003.log", flip(100), "000003.log"},
		{"MANIFEST byte flipped", "records", "MANIFEST-000002", flip(20), "MANIFEST-000002"},
		{"MANIFEST cut inside a record", "mnist", "MANIFEST-000002", func(b []byte) []byte { return b[:70] }, "MANIFEST-000002"},
		{"CURRENT names a missing MANIFEST", "records", "CURRENT", func([]byte) []byte { return []byte("MANIFEST-000009\n") }, "MANIFEST-000009"},
		{"CURRENT emptied", "records", "CURRENT", func([]byte) []byte { return nil }, "CURRENT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := dbsuite.CopyFixture(t, tc.db)
			file := filepath.Join(dir, tc.file)
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, tc.damage(b), 0o644); err != nil {
				t.Fatal(err)
			}
			recs, err := dbtest.ReadAll("leveldb", dir)
			if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("read %d records, error %v; want an error naming %s and %s", len(recs), err, dir, tc.want)
			}
		})
	}
}

// flip returns a damage function that flips a bit of byte i.
func flip(i int) func([]byte) []byte {
	return func(b []byte) []byte { b[i] ^= 0x10; return b }
}

// TestSeveralLogs reads a LevelDB with two logs to replay, the state a
// writer closed during a memtable flush leaves (goleveldb's read-only open
// fails on it by itself).
func TestSeveralLogs(t *testing.T) {
	dir := dbsuite.CopyFixture(t, "records")
	if err := os.WriteFile(filepath.Join(dir, "000009.log"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		got, err := dbtest.ReadAll("leveldb", dir)
		if want := dbsuite.FixtureRecords(); err != nil || !dbtest.Equal(got, want) {
			t.Fatalf("read %d: %d records (%v), want the %d of the fixture", i, len(got), err, len(want))
		}
	}
}

// TestOpenErrors checks the errors of paths that are no LevelDB for each
// mode, and that NEW empties an existing LevelDB written by C++.
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
		{other, persist.ModeRead, "not a LevelDB directory (it has no CURRENT)"},
		{other, persist.ModeWrite, "is not a LevelDB"},
		{other, persist.ModeNew, "is not a LevelDB"},
	} {
		_, err := persist.OpenDB("leveldb", tc.path, tc.mode)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("open %s for %v: %v, want an error naming it and saying %q", tc.path, tc.mode, err, tc.want)
		}
	}
	if entries, _ := os.ReadDir(other); len(entries) != 1 {
		t.Fatalf("opening a directory of other files left %d entries in it, want only precious.txt", len(entries))
	}

	db := dbsuite.CopyFixture(t, "records")
	dbtest.WriteAll(t, "leveldb", db, persist.ModeNew, dbtest.Record{Key: "only", Value: []byte("1")})
	if got, err := dbtest.ReadAll("leveldb", db); err != nil || !dbtest.Equal(got, []dbtest.Record{{Key: "only", Value: []byte("1")}}) {
		t.Fatalf("after NEW of the C++ records fixture: %d records, %v; want the one put", len(got), err)
	}
}

// TestSharedReaders opens one LevelDB for reading twice at once (two
// CreateDB readers of the same dataset) while a writer is refused.
func TestSharedReaders(t *testing.T) {
	path := dbsuite.CopyFixture(t, "mnist")
	r1, err := persist.OpenDB("leveldb", path, persist.ModeRead)
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Close()
	r2, err := persist.OpenDB("leveldb", path, persist.ModeRead)
	if err != nil {
		t.Fatalf("a second reader: %v", err)
	}
	defer r2.Close()
	if w, err := persist.OpenDB("leveldb", path, persist.ModeWrite); err == nil || !strings.Contains(err.Error(), path) {
		if w != nil {
			w.Close()
		}
		t.Fatalf("a writer while readers are open: %v, want an error naming %s", err, path)
	}
}

// TestPythonInterop writes LevelDBs here and reads them with the C++
// library through plyvel (every record's key, length and SHA-256), and has
// plyvel write the fixtures afresh for checkFixtures.
func TestPythonInterop(t *testing.T) { suite.PythonInterop(t) }
