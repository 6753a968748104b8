package persist

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// miniRecord is one record of a minidb file, for building and checking
// files by hand.
type miniRecord struct {
	key   string
	value []byte
}

// miniFile lays records out as §1.7 says: int32 LE key_len, int32 LE
// value_len, key, value; no header.
func miniFile(recs ...miniRecord) []byte {
	var b bytes.Buffer
	for _, r := range recs {
		binary.Write(&b, binary.LittleEndian, int32(len(r.key)))
		binary.Write(&b, binary.LittleEndian, int32(len(r.value)))
		b.WriteString(r.key)
		b.Write(r.value)
	}
	return b.Bytes()
}

// splitMiniFile is the tiny independent reader: it splits a minidb file
// into records, failing on anything malformed.
func splitMiniFile(t testing.TB, data []byte) []miniRecord {
	t.Helper()
	var recs []miniRecord
	for off := 0; off < len(data); {
		if len(data)-off < 8 {
			t.Fatalf("minidb: %d stray bytes at offset %d", len(data)-off, off)
		}
		kl := int(int32(binary.LittleEndian.Uint32(data[off:])))
		vl := int(int32(binary.LittleEndian.Uint32(data[off+4:])))
		if kl <= 0 || vl <= 0 || off+8+kl+vl > len(data) {
			t.Fatalf("minidb: bad record at offset %d: key_len %d value_len %d, file %d bytes", off, kl, vl, len(data))
		}
		recs = append(recs, miniRecord{string(data[off+8 : off+8+kl]), data[off+8+kl : off+8+kl+vl]})
		off += 8 + kl + vl
	}
	return recs
}

// readAll reads every record of the DB of type typ at path.
func readAll(t testing.TB, typ, path string) ([]miniRecord, error) {
	t.Helper()
	db, err := OpenDB(typ, path, ModeRead)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	c, err := db.NewCursor()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var recs []miniRecord
	for c.Valid() {
		recs = append(recs, miniRecord{c.Key(), bytes.Clone(c.Value())})
		if err := c.Next(); err != nil {
			return recs, err
		}
	}
	return recs, nil
}

// writeAll writes records into a new DB of type typ at path.
func writeAll(t testing.TB, typ, path string, mode Mode, recs ...miniRecord) {
	t.Helper()
	db, err := OpenDB(typ, path, mode)
	if err != nil {
		t.Fatal(err)
	}
	txn, err := db.NewTransaction()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := txn.Put(r.key, r.value); err != nil {
			t.Fatal(err)
		}
	}
	if err := txn.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func sameRecords(a, b []miniRecord) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].key != b[i].key || !bytes.Equal(a[i].value, b[i].value) {
			return false
		}
	}
	return true
}

func TestMiniDBWriteReadLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.minidb")
	recs := []miniRecord{{"b", []byte("1")}, {"a", []byte("two")}, {"b", []byte("again")}}
	for _, typ := range []string{"minidb", "MiniDB"} {
		writeAll(t, typ, path, ModeNew, recs...)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, miniFile(recs...)) {
			t.Fatalf("%s: file bytes\n%q\nwant\n%q", typ, data, miniFile(recs...))
		}
		got, err := readAll(t, typ, path)
		if err != nil || !sameRecords(got, recs) {
			t.Fatalf("%s: read %v, %v; want %v (insertion order, duplicates kept)", typ, got, err, recs)
		}
	}
	// WRITE appends; NEW truncates.
	writeAll(t, "minidb", path, ModeWrite, miniRecord{"c", []byte("3")})
	got, _ := readAll(t, "minidb", path)
	if want := append(recs[:3:3], miniRecord{"c", []byte("3")}); !sameRecords(got, want) {
		t.Fatalf("after WRITE: %v, want %v", got, want)
	}
	writeAll(t, "minidb", path, ModeNew, miniRecord{"z", []byte("9")})
	got, _ = readAll(t, "minidb", path)
	if !sameRecords(got, []miniRecord{{"z", []byte("9")}}) {
		t.Fatalf("after NEW: %v", got)
	}
}

func TestMiniDBEmptyAndShortTail(t *testing.T) {
	dir := t.TempDir()
	one := miniFile(miniRecord{"k", []byte("v")})
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
		got, err := readAll(t, "minidb", path)
		if err != nil || len(got) != tc.n {
			t.Errorf("%s: %d records, %v; want %d and no error (a short key_len ends the records)", tc.name, len(got), err, tc.n)
		}
	}
}

func TestMiniDBCorruptRecords(t *testing.T) {
	dir := t.TempDir()
	good := miniFile(miniRecord{"key1", []byte("value1")})
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
		got, err := readAll(t, "minidb", path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want one naming %s and %q", tc.name, err, path, tc.want)
		}
		if len(got) != 1 || got[0].key != "key1" {
			t.Errorf("%s: records before the bad one: %v", tc.name, got)
		}
	}
	// After an error the DB is still usable: a new pass reads the good
	// record again.
	path := filepath.Join(dir, "value_cut")
	db, err := OpenDB("minidb", path, ModeRead)
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
	writeAll(t, "minidb", path, ModeNew, miniRecord{"a", []byte("1")})
	db, _ := OpenDB("minidb", path, ModeRead)
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

	w, _ := OpenDB("minidb", path, ModeWrite)
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
		path string
		mode Mode
	}{
		{filepath.Join(dir, "missing"), ModeRead},
		{dir, ModeRead},
		{filepath.Join(dir, "no", "such", "dir"), ModeNew},
	} {
		_, err := OpenDB("minidb", tc.path, tc.mode)
		if err == nil || !strings.Contains(err.Error(), "Cannot open file: "+tc.path) {
			t.Errorf("open %s for %v: %v", tc.path, tc.mode, err)
		}
	}
}

// FuzzMiniDB feeds arbitrary bytes to the minidb reader: it must never
// panic or allocate beyond the file, every record it returns must be what
// the independent layout says, and it stops at the first bad record. The
// same bytes then go through Load (load_all) in fuzzLoad.
func FuzzMiniDB(f *testing.F) {
	f.Add([]byte{})
	f.Add(miniFile(miniRecord{"a", []byte("b")}))
	f.Add(miniFile(miniRecord{"w#%0", mustBlobProto(f, "w", []float32{1, 2, 3}, 3)}, miniRecord{"s", []byte{0x0a, 1, 's', 0x12, 11, 's', 't', 'd', ':', ':', 's', 't', 'r', 'i', 'n', 'g', 0x22, 1, 'x'}}))
	f.Add(append(miniFile(miniRecord{"k", []byte("v")}), 1, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f))
	dir := f.TempDir()
	// A file written by Save: a chunked tensor, an int tensor, a string.
	w := optest.NewWorkspace()
	w.Root = dir
	w.Feed("w", blob.MustFromSlice([]float32{1, 2, 3, 4, 5}, 5))
	w.Feed("i", blob.MustFromSlice([]int32{-1, 2}, 2))
	w.CreateBlob("s").Set([]byte("str"))
	if err := runOp(w, saveDef("minidb", "seed", []string{"w", "i", "s"}, netdef.ArgInt("chunk_size", 2))); err != nil {
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
		got, err := readAll(t, "minidb", path)
		// Independent parse: the longest prefix of well-formed records.
		var want []miniRecord
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
			want = append(want, miniRecord{string(data[off+8 : off+8+int(kl)]), data[off+8+int(kl) : off+8+int(kl+vl)]})
			off += 8 + int(kl+vl)
		}
		if bad != (err != nil) {
			t.Fatalf("reader error %v, independent parse says bad=%v", err, bad)
		}
		if !sameRecords(got, want) {
			t.Fatalf("reader gave %d records, independent parse %d", len(got), len(want))
		}
		fuzzLoad(t, path, want)
	})
}
