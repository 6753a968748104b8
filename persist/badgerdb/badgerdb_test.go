package badgerdb_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/persist"
	_ "github.com/caffe2go/caffe2go/persist/badgerdb"
	"github.com/caffe2go/caffe2go/persist/dbtest"
)

// TestBadgerModes checks what badger adds to the DB contract: keys come
// back sorted, and WRITE replaces the value of a key that is put again.
func TestBadgerModes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b")
	dbtest.WriteAll(t, "badger", path, persist.ModeNew, dbtest.Record{Key: "b", Value: []byte("2")}, dbtest.Record{Key: "a", Value: []byte("1")}, dbtest.Record{Key: "c", Value: []byte("3")})
	got, err := dbtest.ReadAll("badger", path)
	if want := []dbtest.Record{{Key: "a", Value: []byte("1")}, {Key: "b", Value: []byte("2")}, {Key: "c", Value: []byte("3")}}; err != nil || !dbtest.Equal(got, want) {
		t.Fatalf("read %v, %v; want sorted %v", got, err, want)
	}
	dbtest.WriteAll(t, "badger", path, persist.ModeWrite, dbtest.Record{Key: "b", Value: []byte("two")}, dbtest.Record{Key: "d", Value: []byte("4")})
	got, _ = dbtest.ReadAll("badger", path)
	if want := []dbtest.Record{{Key: "a", Value: []byte("1")}, {Key: "b", Value: []byte("two")}, {Key: "c", Value: []byte("3")}, {Key: "d", Value: []byte("4")}}; !dbtest.Equal(got, want) {
		t.Fatalf("after WRITE: %v, want %v", got, want)
	}
}

func TestBadgerOpenErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	other := filepath.Join(dir, "other")
	os.Mkdir(other, 0o755)
	os.WriteFile(filepath.Join(other, "precious.txt"), []byte("keep me"), 0o644)
	for _, tc := range []struct {
		path string
		mode persist.Mode
		want string
	}{
		{filepath.Join(dir, "missing"), persist.ModeRead, "no such directory"},
		{file, persist.ModeRead, "not a directory"},
		{file, persist.ModeNew, "not a directory"},
		{other, persist.ModeRead, "not a badger DB directory"},
		{other, persist.ModeNew, "is not a badger DB"},
		{other, persist.ModeWrite, "is not a badger DB"},
	} {
		_, err := persist.OpenDB("badger", tc.path, tc.mode)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("open %s for %v: %v, want %q", tc.path, tc.mode, err, tc.want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(other, "precious.txt")); err != nil || string(b) != "keep me" {
		t.Fatal("NEW must not touch a directory that is not a badger DB")
	}
}

func TestBadgerSharedReadersAndLocking(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b")
	dbtest.WriteAll(t, "badger", path, persist.ModeNew, dbtest.Record{Key: "a", Value: []byte("1")}, dbtest.Record{Key: "b", Value: []byte("2")})
	r1, err := persist.OpenDB("badger", path, persist.ModeRead)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := persist.OpenDB("badger", path, persist.ModeRead)
	if err != nil {
		t.Fatalf("a second reader of the same DB: %v", err)
	}
	c1, _ := r1.NewCursor()
	c2, _ := r2.NewCursor()
	if c1.Key() != "a" || c2.Key() != "a" {
		t.Fatal("both readers start at the first key")
	}
	// A writer cannot open it while readers hold it, and says so.
	if _, err := persist.OpenDB("badger", path, persist.ModeWrite); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("writer while readers are open: %v", err)
	}
	c1.Close()
	c2.Close()
	r1.Close()
	r2.Close()
	w, err := persist.OpenDB("badger", path, persist.ModeWrite)
	if err != nil {
		t.Fatalf("writer after the readers closed: %v", err)
	}
	// A cursor of the writer sees a transaction's records after Commit.
	txn, _ := w.NewTransaction()
	txn.Put("c", []byte("3"))
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	c, _ := w.NewCursor()
	var keys []string
	for c.Valid() {
		keys = append(keys, c.Key()+"="+string(c.Value()))
		c.Next()
	}
	c.Close()
	if strings.Join(keys, ",") != "a=1,b=2,c=3" {
		t.Fatalf("records %v", keys)
	}
	txn.Close()
	w.Close()
}
