package dbtest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/persist"
)

// Record is one key-value record of a DB.
type Record struct {
	Key   string
	Value []byte
}

// WriteAll opens the DB of type dbType at path in mode, puts recs in one
// transaction and closes the transaction and the DB. An error fails t.
func WriteAll(t testing.TB, dbType, path string, mode persist.Mode, recs ...Record) {
	t.Helper()
	db, err := persist.OpenDB(dbType, path, mode)
	if err != nil {
		t.Fatal(err)
	}
	txn, err := db.NewTransaction()
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := txn.Put(r.Key, r.Value); err != nil {
			txn.Close()
			db.Close()
			t.Fatal(err)
		}
	}
	if err := txn.Close(); err != nil {
		db.Close()
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// ReadAll opens the DB of type dbType at path for reading and returns its
// records in cursor order, with the records read before an error.
func ReadAll(dbType, path string) ([]Record, error) {
	db, err := persist.OpenDB(dbType, path, persist.ModeRead)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	c, err := db.NewCursor()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var recs []Record
	for c.Valid() {
		recs = append(recs, Record{c.Key(), bytes.Clone(c.Value())})
		if err := c.Next(); err != nil {
			return recs, err
		}
	}
	return recs, nil
}

// Equal reports whether a and b hold the same records in the same order.
func Equal(a, b []Record) bool {
	return slices.EqualFunc(a, b, func(x, y Record) bool { return x.Key == y.Key && bytes.Equal(x.Value, y.Value) })
}

// TestDB checks that the registered DB type dbType meets the contract the
// package documentation lists, each check a subtest of t working in its
// own temporary directory.
func TestDB(t *testing.T, dbType string) { TestDBLimits(t, dbType, Limits{}) }

// Limits are bounds of a DB type that the checks respect.
type Limits struct {
	// MaxKeyLen is the longest key the DB type can store, in bytes (0: no
	// limit). LargeValues then puts a key of that length instead of one of
	// 1,000 bytes, and checks that Put refuses a key one byte longer with an
	// error that names the DB.
	MaxKeyLen int
}

// TestDBLimits is TestDB for a DB type with the limits lim, such as LMDB's
// longest key.
func TestDBLimits(t *testing.T, dbType string, lim Limits) {
	for _, c := range []struct {
		name string
		test func(t *testing.T, dbType, path string)
	}{
		{"RoundTrip", testRoundTrip},
		{"Order", testOrder},
		{"Cursor", testCursor},
		{"Seek", testSeek},
		{"Modes", testModes},
		{"Reopen", testReopen},
		{"Empty", testEmpty},
		{"LargeValues", func(t *testing.T, dbType, path string) { testLargeValues(t, dbType, path, lim) }},
		{"ManyRecords", testManyRecords},
		{"Transaction", testTransaction},
		{"Close", testClose},
		{"NotADB", testNotADB},
	} {
		t.Run(c.name, func(t *testing.T) { c.test(t, dbType, filepath.Join(t.TempDir(), "db")) })
	}
}

// open opens the DB or fails t.
func open(t *testing.T, dbType, path string, mode persist.Mode) persist.DB {
	t.Helper()
	db, err := persist.OpenDB(dbType, path, mode)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// newCursor returns a cursor of db or fails t.
func newCursor(t *testing.T, db persist.DB) persist.Cursor {
	t.Helper()
	c, err := db.NewCursor()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// wantRecords reads the DB at path and fails t unless it holds want.
func wantRecords(t *testing.T, what, dbType, path string, want ...Record) {
	t.Helper()
	got, err := ReadAll(dbType, path)
	if err != nil {
		t.Fatalf("%s: reading %s: %v", what, path, err)
	}
	if !Equal(got, want) {
		t.Fatalf("%s: records %s, want %s", what, describe(got), describe(want))
	}
}

// wantAt fails t unless c is at the record r.
func wantAt(t *testing.T, what string, c persist.Cursor, r Record) {
	t.Helper()
	if !c.Valid() || c.Key() != r.Key || !bytes.Equal(c.Value(), r.Value) {
		t.Fatalf("%s: cursor valid=%v at %q=%q, want %q=%q", what, c.Valid(), c.Key(), c.Value(), r.Key, r.Value)
	}
}

// wantInvalid fails t unless c is past the records.
func wantInvalid(t *testing.T, what string, c persist.Cursor) {
	t.Helper()
	if c.Valid() || c.Key() != "" || c.Value() != nil {
		t.Fatalf("%s: cursor valid=%v at %q=%q, want it invalid with key \"\" and value nil", what, c.Valid(), c.Key(), c.Value())
	}
}

// wantNamed fails t unless err is an error whose text contains path.
func wantNamed(t *testing.T, what string, err error, path string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	if !strings.Contains(err.Error(), path) {
		t.Fatalf("%s: error %q does not name %s", what, err, path)
	}
}

// describe lists records' keys, value sizes and the first bytes of the
// values, for failure messages.
func describe(recs []Record) string {
	const head = 16
	parts := make([]string, len(recs))
	for i, r := range recs {
		v, more := r.Value, ""
		if len(v) > head {
			v, more = v[:head], "…"
		}
		parts[i] = fmt.Sprintf("%q=%q%s (%d bytes)", r.Key, v, more, len(r.Value))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// pattern returns n bytes that differ with seed and position.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31) ^ byte(i>>8) ^ seed
	}
	return b
}

// threeRecords are three records in key order.
var threeRecords = []Record{{"k1", []byte("a")}, {"k3", []byte("bb")}, {"k5", []byte("ccc")}}

func testRoundTrip(t *testing.T, dbType, path string) {
	recs := []Record{
		{"a", []byte("1")},
		{"b#%0", []byte{0, 0xff, 0, 1}},
		{"gpu_0/w", []byte{0}},
		{"k\x00z", bytes.Repeat([]byte("v"), 300)},
		{"é", []byte("utf-8")},
	}
	WriteAll(t, dbType, path, persist.ModeNew, recs...)
	wantRecords(t, "records put in key order", dbType, path, recs...)
	if !persist.DBExists(dbType, path) {
		t.Fatalf("DBExists(%q, %s) = false for a DB just written", dbType, path)
	}
}

func testOrder(t *testing.T, dbType, path string) {
	put := []Record{{"m", []byte("1")}, {"c", []byte("2")}, {"x", []byte("3")}, {"a", []byte("4")}}
	sorted := slices.SortedFunc(slices.Values(put), func(a, b Record) int { return strings.Compare(a.Key, b.Key) })
	WriteAll(t, dbType, path, persist.ModeNew, put...)
	got, err := ReadAll(dbType, path)
	if err != nil {
		t.Fatal(err)
	}
	db := open(t, dbType, path, persist.ModeRead)
	defer db.Close()
	c := newCursor(t, db)
	seeks := c.SupportsSeek()
	c.Close()
	switch {
	case Equal(got, sorted):
	case Equal(got, put) && !seeks:
	case seeks:
		t.Fatalf("records %s, want them in key order %s (the cursor can Seek)", describe(got), describe(sorted))
	default:
		t.Fatalf("records %s, want them in the order put %s or in key order %s", describe(got), describe(put), describe(sorted))
	}
}

func testCursor(t *testing.T, dbType, path string) {
	WriteAll(t, dbType, path, persist.ModeNew, threeRecords...)
	db := open(t, dbType, path, persist.ModeRead)
	defer db.Close()
	c := newCursor(t, db)
	for pass := range 2 {
		for i, r := range threeRecords {
			wantAt(t, fmt.Sprintf("pass %d, record %d", pass, i), c, r)
			if err := c.Next(); err != nil {
				t.Fatalf("pass %d, Next from record %d: %v", pass, i, err)
			}
		}
		wantInvalid(t, fmt.Sprintf("pass %d, past the last record", pass), c)
		if err := c.Next(); err != nil {
			t.Fatalf("pass %d, Next past the end: %v", pass, err)
		}
		wantInvalid(t, fmt.Sprintf("pass %d, after Next past the end", pass), c)
		if err := c.SeekToFirst(); err != nil {
			t.Fatalf("pass %d, SeekToFirst: %v", pass, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	wantInvalid(t, "a closed cursor", c)
	if err := c.Next(); err == nil {
		t.Fatal("Next on a closed cursor: no error")
	}
	if err := c.SeekToFirst(); err == nil {
		t.Fatal("SeekToFirst on a closed cursor: no error")
	}
	c2 := newCursor(t, db)
	wantAt(t, "a second cursor after the first is closed", c2, threeRecords[0])
	c2.Close()
}

func testSeek(t *testing.T, dbType, path string) {
	WriteAll(t, dbType, path, persist.ModeNew, threeRecords...)
	db := open(t, dbType, path, persist.ModeRead)
	defer db.Close()
	c := newCursor(t, db)
	defer c.Close()
	if !c.SupportsSeek() {
		err := c.Seek("k3")
		if !errors.Is(err, persist.ErrSeekUnsupported) {
			t.Fatalf("Seek where SupportsSeek is false: %v, want an error wrapping persist.ErrSeekUnsupported", err)
		}
		wantNamed(t, "Seek where SupportsSeek is false", err, path)
		if err := c.SeekToFirst(); err != nil {
			t.Fatalf("SeekToFirst after an unsupported Seek: %v", err)
		}
		wantAt(t, "SeekToFirst after an unsupported Seek", c, threeRecords[0])
		return
	}
	for _, tc := range []struct {
		key  string
		want int // index into threeRecords; -1 past the end
	}{
		{"k3", 1}, {"k2", 1}, {"", 0}, {"a", 0}, {"k1", 0}, {"k5", 2}, {"k4zzz", 2}, {"k6", -1}, {"\xff", -1},
	} {
		what := fmt.Sprintf("Seek(%q)", tc.key)
		if err := c.Seek(tc.key); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if tc.want < 0 {
			wantInvalid(t, what, c)
			continue
		}
		wantAt(t, what, c, threeRecords[tc.want])
	}
	if err := c.Seek("k2"); err != nil {
		t.Fatal(err)
	}
	for i, r := range threeRecords[2:] {
		if err := c.Next(); err != nil {
			t.Fatal(err)
		}
		wantAt(t, fmt.Sprintf("Next %d after Seek(\"k2\")", i+1), c, r)
	}
	if err := c.Next(); err != nil {
		t.Fatal(err)
	}
	wantInvalid(t, "Next past the end after Seek", c)
	if err := c.SeekToFirst(); err != nil {
		t.Fatal(err)
	}
	wantAt(t, "SeekToFirst after Seek", c, threeRecords[0])
}

func testModes(t *testing.T, dbType, path string) {
	_, err := persist.OpenDB(dbType, path, persist.ModeRead)
	wantNamed(t, "opening a missing DB for READ", err, path)
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("opening a missing DB for READ left something at %s: %v", path, err)
	}
	if persist.DBExists(dbType, path) {
		t.Fatalf("DBExists(%q, %s) = true for a missing DB", dbType, path)
	}

	a, b, c := Record{"a", []byte("1")}, Record{"b", []byte("2")}, Record{"c", []byte("3")}
	WriteAll(t, dbType, path, persist.ModeWrite, a)
	wantRecords(t, "WRITE of a missing DB", dbType, path, a)
	WriteAll(t, dbType, path, persist.ModeWrite, b)
	wantRecords(t, "WRITE of an existing DB", dbType, path, a, b)
	WriteAll(t, dbType, path, persist.ModeNew, c)
	wantRecords(t, "NEW of an existing DB", dbType, path, c)

	db := open(t, dbType, path, persist.ModeRead)
	defer db.Close()
	if _, err := db.NewTransaction(); err == nil {
		t.Fatal("NewTransaction on a DB open for READ: no error")
	}
}

func testReopen(t *testing.T, dbType, path string) {
	WriteAll(t, dbType, path, persist.ModeNew, threeRecords...)
	for i := range 3 {
		if !persist.DBExists(dbType, path) {
			t.Fatalf("DBExists %d: false", i)
		}
		wantRecords(t, fmt.Sprintf("read %d", i), dbType, path, threeRecords...)
	}
}

func testEmpty(t *testing.T, dbType, path string) {
	check := func(what string) {
		t.Helper()
		if !persist.DBExists(dbType, path) {
			t.Fatalf("%s: DBExists = false", what)
		}
		db := open(t, dbType, path, persist.ModeRead)
		defer db.Close()
		c := newCursor(t, db)
		defer c.Close()
		wantInvalid(t, what+": a new cursor", c)
		if err := c.Next(); err != nil {
			t.Fatalf("%s: Next: %v", what, err)
		}
		wantInvalid(t, what+": after Next", c)
		if err := c.SeekToFirst(); err != nil {
			t.Fatalf("%s: SeekToFirst: %v", what, err)
		}
		wantInvalid(t, what+": after SeekToFirst", c)
		if c.SupportsSeek() {
			if err := c.Seek("a"); err != nil {
				t.Fatalf("%s: Seek: %v", what, err)
			}
			wantInvalid(t, what+": after Seek", c)
		}
	}
	open(t, dbType, path, persist.ModeNew).Close()
	check("a new DB without a transaction")
	WriteAll(t, dbType, path, persist.ModeNew, threeRecords...)
	WriteAll(t, dbType, path, persist.ModeNew)
	check("a DB made NEW again with an empty transaction")
}

func testLargeValues(t *testing.T, dbType, path string, lim Limits) {
	var recs []Record
	for i, n := range []int{64<<10 - 1, 64 << 10, 1<<20 + 7, 5 << 20} {
		recs = append(recs, Record{fmt.Sprintf("big%d", i), pattern(n, byte(i))})
	}
	keyLen := 1000
	if lim.MaxKeyLen > 0 {
		keyLen = min(keyLen, lim.MaxKeyLen)
	}
	recs = append(recs, Record{"long/" + strings.Repeat("x", keyLen-5), []byte("v")})
	WriteAll(t, dbType, path, persist.ModeNew, recs...)
	wantRecords(t, "large values and a long key", dbType, path, recs...)
	if lim.MaxKeyLen == 0 {
		return
	}
	db := open(t, dbType, path, persist.ModeWrite)
	defer db.Close()
	txn, err := db.NewTransaction()
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	tooLong := strings.Repeat("k", lim.MaxKeyLen+1)
	wantNamed(t, fmt.Sprintf("Put of a %d-byte key", len(tooLong)), txn.Put(tooLong, []byte("v")), path)
}

func testManyRecords(t *testing.T, dbType, path string) {
	const n, every = 10000, 1000
	db := open(t, dbType, path, persist.ModeNew)
	txn, err := db.NewTransaction()
	if err != nil {
		t.Fatal(err)
	}
	want := make([]Record, n)
	for i := range want {
		want[i] = Record{fmt.Sprintf("%06d", i), pattern(16, byte(i))}
		if err := txn.Put(want[i].Key, want[i].Value); err != nil {
			t.Fatal(err)
		}
		if (i+1)%every == 0 {
			if err := txn.Commit(); err != nil {
				t.Fatalf("Commit after record %d: %v", i, err)
			}
		}
	}
	if err := txn.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	wantRecords(t, fmt.Sprintf("%d records", n), dbType, path, want...)
}

func testTransaction(t *testing.T, dbType, path string) {
	db := open(t, dbType, path, persist.ModeNew)
	txn, err := db.NewTransaction()
	if err != nil {
		t.Fatal(err)
	}
	v := []byte("one")
	if err := txn.Put("a", v); err != nil {
		t.Fatal(err)
	}
	v[0] = 'X'
	for _, bad := range []Record{{"", []byte("v")}, {"k", nil}, {"k", []byte{}}} {
		err := txn.Put(bad.Key, bad.Value)
		wantNamed(t, fmt.Sprintf("Put(%q, %q)", bad.Key, bad.Value), err, path)
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := txn.Put("b", []byte("two")); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := txn.Commit(); err != nil {
			t.Fatalf("Commit %d after the first: %v", i+1, err)
		}
	}
	if err := txn.Put("c", []byte("three")); err != nil {
		t.Fatal(err)
	}
	if err := txn.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := txn.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := txn.Put("d", []byte("four")); err == nil {
		t.Fatal("Put after Close: no error")
	}
	if err := txn.Commit(); err == nil {
		t.Fatal("Commit after Close: no error")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	wantRecords(t, "a transaction committed, then closed", dbType, path,
		Record{"a", []byte("one")}, Record{"b", []byte("two")}, Record{"c", []byte("three")})
}

func testClose(t *testing.T, dbType, path string) {
	WriteAll(t, dbType, path, persist.ModeNew, threeRecords...)
	r := open(t, dbType, path, persist.ModeRead)
	c := newCursor(t, r)
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := c.Next(); err == nil {
		t.Fatal("Next on a cursor of a closed DB: no error")
	}
	c.Close()
	if _, err := r.NewCursor(); err == nil {
		t.Fatal("NewCursor on a closed DB: no error")
	}

	w := open(t, dbType, path, persist.ModeWrite)
	txn, err := w.NewTransaction()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := txn.Put("z", []byte("26")); err == nil {
		t.Fatal("Put on a transaction of a closed DB: no error")
	}
	txn.Close()
	if _, err := w.NewTransaction(); err == nil {
		t.Fatal("NewTransaction on a closed DB: no error")
	}
	wantRecords(t, "after the closed-DB calls", dbType, path, threeRecords...)
}

func testNotADB(t *testing.T, dbType, path string) {
	garbage := path + ".garbage"
	if err := os.WriteFile(garbage, bytes.Repeat([]byte{0xff}, 64), 0o644); err != nil {
		t.Fatal(err)
	}
	const precious = "precious.txt"
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, precious), []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{garbage, path} {
		_, err := ReadAll(dbType, p)
		wantNamed(t, "reading "+p, err, p)
	}
	for _, mode := range []persist.Mode{persist.ModeWrite, persist.ModeNew} {
		db, err := persist.OpenDB(dbType, path, mode)
		if err == nil {
			db.Close()
		} else {
			wantNamed(t, fmt.Sprintf("opening a directory of other files for %v", mode), err, path)
		}
		if b, err := os.ReadFile(filepath.Join(path, precious)); err != nil || string(b) != "keep me" {
			t.Fatalf("opening a directory of other files for %v changed %s: %q, %v", mode, precious, b, err)
		}
	}
}
