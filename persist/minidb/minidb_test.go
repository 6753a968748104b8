package minidb_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
	"github.com/caffe2go/caffe2go/persist"
	"github.com/caffe2go/caffe2go/persist/dbtest"
	_ "github.com/caffe2go/caffe2go/persist/minidb"
)

// miniFile lays records out as §1.7 says: int32 LE key_len, int32 LE
// value_len, key, value; no header.
func miniFile(recs ...dbtest.Record) []byte {
	var b bytes.Buffer
	for _, r := range recs {
		binary.Write(&b, binary.LittleEndian, int32(len(r.Key)))
		binary.Write(&b, binary.LittleEndian, int32(len(r.Value)))
		b.WriteString(r.Key)
		b.Write(r.Value)
	}
	return b.Bytes()
}

func TestMiniDBWriteReadLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.minidb")
	recs := []dbtest.Record{{Key: "b", Value: []byte("1")}, {Key: "a", Value: []byte("two")}, {Key: "b", Value: []byte("again")}}
	for _, typ := range []string{"minidb", "MiniDB"} {
		dbtest.WriteAll(t, typ, path, persist.ModeNew, recs...)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, miniFile(recs...)) {
			t.Fatalf("%s: file bytes\n%q\nwant\n%q", typ, data, miniFile(recs...))
		}
		got, err := dbtest.ReadAll(typ, path)
		if err != nil || !dbtest.Equal(got, recs) {
			t.Fatalf("%s: read %v, %v; want %v (insertion order, duplicates kept)", typ, got, err, recs)
		}
	}
	// WRITE appends; NEW truncates.
	dbtest.WriteAll(t, "minidb", path, persist.ModeWrite, dbtest.Record{Key: "c", Value: []byte("3")})
	got, _ := dbtest.ReadAll("minidb", path)
	if want := append(recs[:3:3], dbtest.Record{Key: "c", Value: []byte("3")}); !dbtest.Equal(got, want) {
		t.Fatalf("after WRITE: %v, want %v", got, want)
	}
	dbtest.WriteAll(t, "minidb", path, persist.ModeNew, dbtest.Record{Key: "z", Value: []byte("9")})
	got, _ = dbtest.ReadAll("minidb", path)
	if !dbtest.Equal(got, []dbtest.Record{{Key: "z", Value: []byte("9")}}) {
		t.Fatalf("after NEW: %v", got)
	}
}

func TestMiniDBEmptyAndShortTail(t *testing.T) {
	dir := t.TempDir()
	one := miniFile(dbtest.Record{Key: "k", Value: []byte("v")})
	for _, tc := range []struct {
		name string
		data []byte
		n    int
	}{
		{"empty file", nil, 0},
		{"1 stray byte", append(bytes.Clone(one), 7), 1},
		{"3 stray bytes", append(bytes.Clone(one), 1, 2, 3), 1},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
		os.WriteFile(path, tc.data, 0o644)
		got, err := dbtest.ReadAll("minidb", path)
		if err != nil || len(got) != tc.n {
			t.Errorf("%s: %d records, %v; want %d and no error (a short key_len ends the records)", tc.name, len(got), err, tc.n)
		}
	}
}

func TestMiniDBCorruptRecords(t *testing.T) {
	dir := t.TempDir()
	good := miniFile(dbtest.Record{Key: "key1", Value: []byte("value1")})
	hdr := func(k, v int32) []byte {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, uint32(k))
		binary.LittleEndian.PutUint32(b[4:], uint32(v))
		return b
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	for _, tc := range []struct {
		name, want string
		data       []byte
	}{
		{"value_len cut", "truncated record at offset 18", cat(good, hdr(1, 1)[:6])},
		{"key cut", "truncated record at offset 18", cat(good, hdr(4, 2), []byte("ke"))},
		{"value cut", "truncated record at offset 18", cat(good, hdr(1, 5), []byte("kvv"))},
		{"huge value_len", "truncated record at offset 18", cat(good, hdr(1, 0x7fffffff), []byte("kv"))},
		{"zero key_len", "both must be > 0", cat(good, hdr(0, 1), []byte("v"))},
		{"zero value_len", "both must be > 0", cat(good, hdr(1, 0), []byte("k"))},
		{"negative key_len", "both must be > 0", cat(good, hdr(-5, 1), []byte("kv"))},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
		os.WriteFile(path, tc.data, 0o644)
		got, err := dbtest.ReadAll("minidb", path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want one naming %s and %q", tc.name, err, path, tc.want)
		}
		if len(got) != 1 || got[0].Key != "key1" {
			t.Errorf("%s: records before the bad one: %v", tc.name, got)
		}
	}
	// After an error the DB is still usable: a new pass reads the good
	// record again.
	path := filepath.Join(dir, "value_cut")
	db, err := persist.OpenDB("minidb", path, persist.ModeRead)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.NewCursor()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Next(); err == nil || c.Valid() {
		t.Fatalf("Next over a truncated record: %v, valid %v", err, c.Valid())
	}
	if err := c.SeekToFirst(); err != nil || !c.Valid() || c.Key() != "key1" {
		t.Fatalf("SeekToFirst after an error: %v, %q", err, c.Key())
	}
	c.Close()
}

func TestMiniDBOneCursorOrTransactionAtATime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "one")
	dbtest.WriteAll(t, "minidb", path, persist.ModeNew, dbtest.Record{Key: "a", Value: []byte("1")})
	db, _ := persist.OpenDB("minidb", path, persist.ModeRead)
	defer db.Close()
	c, err := db.NewCursor()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.NewCursor(); err == nil || !strings.Contains(err.Error(), "already open") {
		t.Fatalf("second cursor: %v", err)
	}
	if c.SupportsSeek() {
		t.Fatal("minidb cursors must not seek")
	}
	c.Close()
	c2, err := db.NewCursor()
	if err != nil || c2.Key() != "a" {
		t.Fatalf("cursor after Close: %v", err)
	}
	c2.Close()

	w, _ := persist.OpenDB("minidb", path, persist.ModeWrite)
	defer w.Close()
	if _, err := w.NewCursor(); err == nil {
		t.Fatal("a cursor on a WRITE minidb must fail")
	}
	txn, _ := w.NewTransaction()
	if _, err := w.NewTransaction(); err == nil {
		t.Fatal("two transactions at once must fail")
	}
	txn.Close()
}

func TestMiniDBOpenErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		path     string
		mode     persist.Mode
		notExist bool // the error wraps fs.ErrNotExist
	}{
		{filepath.Join(dir, "missing"), persist.ModeRead, true},
		{dir, persist.ModeRead, false},
		{filepath.Join(dir, "no", "such", "dir"), persist.ModeNew, true},
	} {
		_, err := persist.OpenDB("minidb", tc.path, tc.mode)
		if err == nil || !strings.Contains(err.Error(), "Cannot open file: "+tc.path) {
			t.Errorf("open %s for %v: %v", tc.path, tc.mode, err)
		}
		if errors.Is(err, fs.ErrNotExist) != tc.notExist {
			t.Errorf("open %s for %v: errors.Is(%v, fs.ErrNotExist) = %v", tc.path, tc.mode, err, !tc.notExist)
		}
	}
}

// FuzzMiniDB feeds arbitrary bytes to the minidb reader: it must never
// panic or allocate beyond the file, every record it returns must be what
// the independent layout says, and it stops at the first bad record. The
// same bytes then go through Load (load_all) in fuzzLoad.
func FuzzMiniDB(f *testing.F) {
	f.Add([]byte{})
	f.Add(miniFile(dbtest.Record{Key: "a", Value: []byte("b")}))
	var w3 blob.Blob
	w3.Set(blob.MustFromSlice([]float32{1, 2, 3}, 3))
	tensor, err := blob.SerializeBlob("w", &w3)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(miniFile(dbtest.Record{Key: "w#%0", Value: tensor}, dbtest.Record{Key: "s", Value: []byte{0x0a, 1, 's', 0x12, 11, 's', 't', 'd', ':', ':', 's', 't', 'r', 'i', 'n', 'g', 0x22, 1, 'x'}}))
	f.Add(append(miniFile(dbtest.Record{Key: "k", Value: []byte("v")}), 1, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f))
	dir := f.TempDir()
	// A file written by Save: a chunked tensor, an int tensor, a string.
	w := optest.NewWorkspace()
	w.Root = dir
	w.Feed("w", blob.MustFromSlice([]float32{1, 2, 3, 4, 5}, 5))
	w.Feed("i", blob.MustFromSlice([]int32{-1, 2}, 2))
	w.CreateBlob("s").Set([]byte("str"))
	save := netdef.NewOperator("Save", []string{"w", "i", "s"}, nil,
		netdef.ArgString("db", "seed"), netdef.ArgString("db_type", "minidb"), netdef.ArgInt("chunk_size", 2))
	if err := runOp(w, save); err != nil {
		f.Fatal(err)
	}
	seed, err := os.ReadFile(filepath.Join(dir, "seed"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "fuzz.minidb")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := dbtest.ReadAll("minidb", path)
		// Independent parse: the longest prefix of well-formed records.
		var want []dbtest.Record
		off, bad := 0, false
		for len(data)-off >= 4 {
			if len(data)-off < 8 {
				bad = true
				break
			}
			kl := int64(int32(binary.LittleEndian.Uint32(data[off:])))
			vl := int64(int32(binary.LittleEndian.Uint32(data[off+4:])))
			if kl <= 0 || vl <= 0 || int64(off)+8+kl+vl > int64(len(data)) {
				bad = true
				break
			}
			want = append(want, dbtest.Record{Key: string(data[off+8 : off+8+int(kl)]), Value: data[off+8+int(kl) : off+8+int(kl+vl)]})
			off += 8 + int(kl+vl)
		}
		if bad != (err != nil) {
			t.Fatalf("reader error %v, independent parse says bad=%v", err, bad)
		}
		if !dbtest.Equal(got, want) {
			t.Fatalf("reader gave %d records, independent parse %d", len(got), len(want))
		}
		fuzzLoad(t, path, want)
	})
}

// runOp creates def in w and runs it once, calling Run directly so that a
// panic fails the fuzz test instead of becoming an error.
func runOp(w operators.Workspace, def *netdef.OperatorDef) error {
	op, err := operators.Create(def, w, -1)
	if err != nil {
		return err
	}
	return op.Run()
}

// fuzzLoad runs Load (load_all) over a fuzzed minidb file: it may fail but
// must not panic. Records whose tensors would need more than 2^20 elements
// are skipped: the blob package accepts a record up to the memory budget,
// which is far more than a fuzz worker should spend per input.
func fuzzLoad(t *testing.T, path string, recs []dbtest.Record) {
	for _, r := range recs {
		var bp netdef.BlobProto
		if proto.Unmarshal(r.Value, &bp) != nil || bp.Tensor == nil {
			continue
		}
		n := int64(1)
		for _, d := range bp.Tensor.GetDims() {
			if d < 0 {
				n = 0
				break
			}
			if d > 0 && n > (1<<20)/d {
				return
			}
			n *= d
		}
	}
	w := optest.NewWorkspace()
	_ = runOp(w, netdef.NewOperator("Load", nil, nil, netdef.ArgString("db", path), netdef.ArgString("db_type", "minidb"),
		netdef.ArgInt("absolute_path", 1), netdef.ArgInt("load_all", 1)))
}
