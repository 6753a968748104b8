//go:build lmdb && cgo

package lmdb_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/persist"
	"github.com/caffe2go/caffe2go/persist/dbtest"
	_ "github.com/caffe2go/caffe2go/persist/lmdb"
	"github.com/caffe2go/caffe2go/persist/mnist"
	"github.com/caffe2go/caffe2go/workspace"
)

// The MNIST files the fixtures were made from.
var (
	mnistImages = filepath.Join("..", "..", "data", "mnist", "t10k-images-idx3-ubyte.gz")
	mnistLabels = filepath.Join("..", "..", "data", "mnist", "t10k-labels-idx1-ubyte.gz")
)

// TestContract runs persist's DB contract over "lmdb", with LMDB's
// longest key.
func TestContract(t *testing.T) { dbtest.TestDBLimits(t, "lmdb", dbtest.Limits{MaxKeyLen: 511}) }

// pattern is testdata/fixtures.py's pattern: n bytes that differ with seed
// and position.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(j*31) ^ byte(j>>8) ^ seed
	}
	return b
}

// fixtureRecords are the records of testdata/fixtures.py's records(), in
// key order.
func fixtureRecords() []dbtest.Record {
	recs := []dbtest.Record{
		{Key: "a", Value: []byte("1")},
		{Key: "b#%0", Value: []byte{0, 0xff, 0, 1}},
		{Key: "gpu_0/w", Value: []byte{0}},
		{Key: "k\x00z", Value: bytes.Repeat([]byte("v"), 300)},
		{Key: "é", Value: []byte("utf-8")},
		{Key: "\xff\xfe", Value: []byte("high bytes")},
		{Key: "long/" + strings.Repeat("x", 506), Value: []byte("a 511-byte key")},
		{Key: "big", Value: pattern(100000, 7)},
	}
	for i := range 200 {
		recs = append(recs, dbtest.Record{Key: fmt.Sprintf("n%04d", i), Value: pattern(1+i*37%300, byte(i))})
	}
	slices.SortFunc(recs, func(a, b dbtest.Record) int { return strings.Compare(a.Key, b.Key) })
	return recs
}

// copyFixture copies testdata/name into a temporary directory and returns
// the copy: opening an LMDB, even to read it, creates its lock.mdb.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", name))); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReadsCLMDB reads the fixtures that the LMDB C library wrote
// (testdata/fixtures.py).
func TestReadsCLMDB(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata")); err != nil {
		t.Fatal(err)
	}
	checkFixtures(t, dir)
}

// checkFixtures checks the DBs fixtures.py wrote into dir: every record
// bit for bit, the MNIST records through CreateDB and TensorProtosDBInput,
// and the Caffe Datum records.
func checkFixtures(t *testing.T, dir string) {
	t.Run("records", func(t *testing.T) {
		got, err := dbtest.ReadAll("lmdb", filepath.Join(dir, "records"))
		if want := fixtureRecords(); err != nil || !dbtest.Equal(got, want) {
			t.Fatalf("read %d records (%v), want the %d fixtures.py put, bit for bit", len(got), err, len(want))
		}
	})
	t.Run("mnist", func(t *testing.T) { checkMNIST(t, filepath.Join(dir, "mnist"), 64) })
	t.Run("datum", func(t *testing.T) { checkDatum(t, filepath.Join(dir, "datum"), 16) })
}

// checkMNIST checks that the DB at path holds the first n MNIST t10k
// images in make_mnist_db's layout: each value byte for byte what
// mnist.Import writes, and a TensorProtosDBInput batch of all n equal to
// the idx files'.
func checkMNIST(t *testing.T, path string, n int) {
	images, labels, err := mnist.Read(mnistImages, mnistLabels)
	if err != nil {
		t.Fatal(err)
	}
	got, err := dbtest.ReadAll("lmdb", path)
	if err != nil || len(got) != n {
		t.Fatalf("read %d records (%v), want %d", len(got), err, n)
	}
	pixels, per := blob.Data[uint8](images), images.SizeFromDim(1)
	for i, r := range got {
		msg := &netdef.TensorProtos{Protos: []*netdef.TensorProto{
			{Dims: []int64{1, 28, 28}, DataType: netdef.TensorProto_BYTE.Enum(), ByteData: pixels[i*per : (i+1)*per]},
			{DataType: netdef.TensorProto_INT32.Enum(), Int32Data: []int32{blob.Data[int32](labels)[i]}},
		}}
		want, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
		if err != nil {
			t.Fatal(err)
		}
		if r.Key != fmt.Sprintf("%08d", i) || !bytes.Equal(r.Value, want) {
			t.Fatalf("record %d: key %q, value of %d bytes; want key %08d and the %d bytes of make_mnist_db's TensorProtos", i, r.Key, len(r.Value), i, len(want))
		}
	}

	ws := workspace.New(filepath.Dir(path))
	defer ws.Close()
	ops := []*netdef.OperatorDef{
		netdef.NewOperator("CreateDB", nil, []string{"reader"}, netdef.ArgString("db", filepath.Base(path)), netdef.ArgString("db_type", "lmdb")),
		netdef.NewOperator("TensorProtosDBInput", []string{"reader"}, []string{"data", "label"}, netdef.ArgInt("batch_size", int64(n))),
	}
	if err := ws.RunOperatorsOnce(ops); err != nil {
		t.Fatal(err)
	}
	data, err := ws.FetchBlob("data")
	if err != nil {
		t.Fatal(err)
	}
	label, err := ws.FetchBlob("label")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(data.Dims(), []int{n, 1, 28, 28}) || !bytes.Equal(blob.Data[uint8](data), pixels[:n*per]) {
		t.Fatalf("TensorProtosDBInput data %v, want the first %d t10k images bit for bit", data, n)
	}
	if !slices.Equal(blob.Data[int32](label), blob.Data[int32](labels)[:n]) {
		t.Fatalf("TensorProtosDBInput labels %v, want %v", blob.Data[int32](label), blob.Data[int32](labels)[:n])
	}
}

// datum is the part of a caffe.Datum that Caffe's convert_mnist_data fills.
type datum struct {
	channels, height, width, label int64
	data                           []byte
}

// parseDatum decodes a caffe.Datum's fields 1 to 5 (channels, height,
// width, data, label), the ones convert_mnist_data writes.
func parseDatum(b []byte) (datum, error) {
	var d datum
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return d, protowire.ParseError(n)
		}
		b = b[n:]
		var v uint64
		switch {
		case num == 4 && typ == protowire.BytesType:
			d.data, n = protowire.ConsumeBytes(b)
		case num <= 5 && typ == protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		default:
			return d, fmt.Errorf("unexpected field %d (wire type %d)", num, typ)
		}
		if n < 0 {
			return d, protowire.ParseError(n)
		}
		b = b[n:]
		switch num {
		case 1:
			d.channels = int64(v)
		case 2:
			d.height = int64(v)
		case 3:
			d.width = int64(v)
		case 5:
			d.label = int64(v)
		}
	}
	return d, nil
}

// checkDatum checks that the DB at path holds the first n MNIST t10k
// images as Caffe's convert_mnist_data writes them.
func checkDatum(t *testing.T, path string, n int) {
	images, labels, err := mnist.Read(mnistImages, mnistLabels)
	if err != nil {
		t.Fatal(err)
	}
	got, err := dbtest.ReadAll("lmdb", path)
	if err != nil || len(got) != n {
		t.Fatalf("read %d records (%v), want %d", len(got), err, n)
	}
	pixels, per := blob.Data[uint8](images), images.SizeFromDim(1)
	for i, r := range got {
		d, err := parseDatum(r.Value)
		if err != nil {
			t.Fatalf("record %q: %v", r.Key, err)
		}
		want := datum{1, 28, 28, int64(blob.Data[int32](labels)[i]), pixels[i*per : (i+1)*per]}
		if r.Key != fmt.Sprintf("%08d", i) || d.channels != want.channels || d.height != want.height || d.width != want.width ||
			d.label != want.label || !bytes.Equal(d.data, want.data) {
			t.Fatalf("record %q: Datum %dx%dx%d label %d; want key %08d, 1x28x28 label %d and the image's pixels", r.Key, d.channels, d.height, d.width, d.label, i, want.label)
		}
	}
}

// saveBlobs feeds ws one blob of every tensor element type, special
// floats included, and a float tensor that Save splits into chunks.
func saveBlobs(t *testing.T, ws *workspace.Workspace) []string {
	t.Helper()
	big := make([]float32, 2500)
	for i := range big {
		big[i] = float32(i)*0.37 - 100
	}
	blobs := map[string]*blob.Tensor{
		"f32":  blob.MustFromSlice([]float32{1.5, math.Float32frombits(0xffc00001), math.Float32frombits(0x80000000), -3e38}, 2, 2),
		"f64":  blob.MustFromSlice([]float64{1e-300, -2.5}, 2),
		"f16":  blob.MustFromSlice([]blob.Half{0x3c00, 0x7e01}, 2),
		"i8":   blob.MustFromSlice([]int8{-128, 127}, 2),
		"i16":  blob.MustFromSlice([]int16{-32768, 7}, 2),
		"i32":  blob.MustFromSlice([]int32{-1 << 31, 5}, 1, 2),
		"i64":  blob.MustFromSlice([]int64{-1 << 63, 1<<63 - 1}, 2),
		"u8":   blob.MustFromSlice([]uint8{0, 255, 7}, 3),
		"u16":  blob.MustFromSlice([]uint16{65535}, 1),
		"bool": blob.MustFromSlice([]bool{true, false}, 2),
		"str":  blob.MustFromSlice([]string{"", "caffe\x002", "é"}, 3),
		"zero": blob.MustFromSlice([]float32{}, 0, 4),
		"big":  blob.MustFromSlice(big, 50, 50),
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range blobs {
			if !yield(n) {
				return
			}
		}
	})
	for _, n := range names {
		if err := ws.FeedBlob(n, blobs[n]); err != nil {
			t.Fatal(err)
		}
	}
	return names
}

// save runs Save of names into the DB path of type dbType, in chunks of
// 1,000 elements.
func save(t *testing.T, ws *workspace.Workspace, names []string, dbType, path string) {
	t.Helper()
	op := netdef.NewOperator("Save", names, nil, netdef.ArgString("db", path), netdef.ArgString("db_type", dbType),
		netdef.ArgInt("absolute_path", 1), netdef.ArgInt("chunk_size", 1000))
	if err := ws.RunOperatorOnce(op); err != nil {
		t.Fatal(err)
	}
}

// sortedRecords reads the DB of type dbType at path, in key order.
func sortedRecords(t *testing.T, dbType, path string) []dbtest.Record {
	t.Helper()
	recs, err := dbtest.ReadAll(dbType, path)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(recs, func(a, b dbtest.Record) int { return strings.Compare(a.Key, b.Key) })
	return recs
}

// TestSaveLoad saves blobs of every type with db_type lmdb: the records
// are Caffe2's (bit for bit those Save writes into a minidb), and Load
// gives blobs that save to the same bits again.
func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	ws := workspace.New(dir)
	defer ws.Close()
	names := saveBlobs(t, ws)
	lm, mini := filepath.Join(dir, "params.lmdb"), filepath.Join(dir, "params.minidb")
	save(t, ws, names, "lmdb", lm)
	save(t, ws, names, "minidb", mini)
	want := sortedRecords(t, "minidb", mini)
	got, err := dbtest.ReadAll("lmdb", lm)
	if err != nil || !dbtest.Equal(got, want) {
		t.Fatalf("lmdb holds %d records (%v); want the %d records of the minidb Save wrote, bit for bit, in key order", len(got), err, len(want))
	}
	if !slices.ContainsFunc(got, func(r dbtest.Record) bool { return r.Key == "big#%2" }) {
		t.Fatal("no chunk record big#%2 for the 2,500-element tensor saved in chunks of 1,000")
	}

	fresh := workspace.New(dir)
	defer fresh.Close()
	load := netdef.NewOperator("Load", nil, names, netdef.ArgString("db", lm), netdef.ArgString("db_type", "lmdb"), netdef.ArgInt("absolute_path", 1))
	if err := fresh.RunOperatorOnce(load); err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(dir, "again.minidb")
	save(t, fresh, names, "minidb", again)
	if got := sortedRecords(t, "minidb", again); !dbtest.Equal(got, want) {
		t.Fatalf("the blobs loaded from lmdb save to %d records that differ from the %d saved first", len(got), len(want))
	}
}

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
			dir := copyFixture(t, tc.db)
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

	db := copyFixture(t, "records")
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
	path := copyFixture(t, "datum")
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
		r := dbtest.Record{Key: fmt.Sprintf("%05d", i), Value: pattern(1+i%100, byte(i))}
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
	if _, err := mnist.Import(mnistImages, mnistLabels, "leveldb", filepath.Join(root, "mnist-train-leveldb")); err != nil {
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
	save(t, ws, params, "minidb", trained)
	fresh := workspace.New(root)
	defer fresh.Close()
	load := netdef.NewOperator("Load", nil, params, netdef.ArgString("db", "mnist-params-lmdb"), netdef.ArgString("db_type", "lmdb"))
	if err := fresh.RunOperatorOnce(load); err != nil {
		t.Fatal(err)
	}
	loaded := filepath.Join(root, "loaded.minidb")
	save(t, fresh, params, "minidb", loaded)
	if got, want := sortedRecords(t, "minidb", loaded), sortedRecords(t, "minidb", trained); !dbtest.Equal(got, want) {
		t.Fatal("the parameters loaded from the plan's LMDB differ from the trained ones")
	}
}

// python returns a Python 3 that imports lmdb, or skips t, or fails it
// when CAFFE2GO_PYTHON_DBS is 1 (as .ci/run sets it).
func python(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(py, "-c", "import lmdb").Run() == nil {
			return py
		}
	}
	const why = "no python3 with lmdb (Debian: apt-get install python3-lmdb) to check that the LMDB C library reads and writes what this package does"
	if os.Getenv("CAFFE2GO_PYTHON_DBS") == "1" {
		t.Fatal(why)
	}
	t.Skip(why)
	return ""
}

// dumpRecord is a record as fixtures.py dump prints it.
type dumpRecord struct {
	Key    string `json:"key"` // hex
	Len    int    `json:"len"`
	SHA256 string `json:"sha256"` // hex
}

// pythonDump returns what fixtures.py dump prints for the LMDB at path.
func pythonDump(t *testing.T, py, path string) []dumpRecord {
	t.Helper()
	cmd := exec.Command(py, filepath.Join("testdata", "fixtures.py"), "dump", path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fixtures.py dump %s: %v\n%s", path, err, stderr.Bytes())
	}
	var recs []dumpRecord
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r dumpRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("fixtures.py dump %s: %v in %q", path, err, sc.Text())
		}
		recs = append(recs, r)
	}
	return recs
}

// asDump gives records in fixtures.py dump's form.
func asDump(recs []dbtest.Record) []dumpRecord {
	out := make([]dumpRecord, len(recs))
	for i, r := range recs {
		sum := sha256.Sum256(r.Value)
		out[i] = dumpRecord{hex.EncodeToString([]byte(r.Key)), len(r.Value), hex.EncodeToString(sum[:])}
	}
	return out
}

// TestPythonInterop writes LMDBs here and reads them with the C library
// through Python's lmdb (every record's key, length and SHA-256), and has
// Python write the fixtures afresh for checkFixtures.
func TestPythonInterop(t *testing.T) {
	py := python(t)
	dir := t.TempDir()

	records := filepath.Join(dir, "records")
	dbtest.WriteAll(t, "lmdb", records, persist.ModeNew, fixtureRecords()...)
	ws := workspace.New(dir)
	defer ws.Close()
	params := filepath.Join(dir, "params")
	save(t, ws, saveBlobs(t, ws), "lmdb", params)
	mnistDB := filepath.Join(dir, "mnist")
	if _, err := mnist.Import(mnistImages, mnistLabels, "lmdb", mnistDB); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{records, params, mnistDB} {
		want := asDump(sortedRecords(t, "lmdb", path))
		if got := pythonDump(t, py, path); !slices.Equal(got, want) {
			t.Errorf("Python's lmdb reads %d records from %s, want the %d written here, bit for bit", len(got), path, len(want))
		} else {
			t.Logf("Python's lmdb read the %d records of %s bit for bit", len(got), filepath.Base(path))
		}
	}

	fresh := filepath.Join(dir, "fresh")
	if err := os.Mkdir(fresh, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(py, filepath.Join("testdata", "fixtures.py"), "write", fresh).CombinedOutput(); err != nil {
		t.Fatalf("fixtures.py write: %v\n%s", err, out)
	}
	checkFixtures(t, fresh)
}
