package dbsuite

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
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/persist"
	"github.com/caffe2go/caffe2go/persist/dbtest"
	"github.com/caffe2go/caffe2go/persist/mnist"
	"github.com/caffe2go/caffe2go/workspace"
)

// Suite describes a DB type to the shared checks.
type Suite struct {
	// DBType is the registered DB type ("leveldb").
	DBType string
	// Library names the reference library in messages ("the C++ LevelDB").
	Library string
	// PyModule is the Python module that binds it ("plyvel"), and
	// PyPackage the Debian package that installs that module.
	PyModule, PyPackage string
}

// The MNIST test files the fixtures were made from, relative to a DB
// package's directory (persist/<type>).
var (
	mnistImages = filepath.Join("..", "..", "data", "mnist", "t10k-images-idx3-ubyte.gz")
	mnistLabels = filepath.Join("..", "..", "data", "mnist", "t10k-labels-idx1-ubyte.gz")
)

// MNIST returns the paths of the MNIST t10k images and labels the fixtures
// were made from, relative to a DB package's directory.
func MNIST() (images, labels string) { return mnistImages, mnistLabels }

// Pattern is testdata/fixtures.py's pattern: n bytes that differ with seed
// and position.
func Pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(j*31) ^ byte(j>>8) ^ seed
	}
	return b
}

// FixtureRecords are the records of testdata/fixtures.py's records(), in
// key order.
func FixtureRecords() []dbtest.Record {
	recs := []dbtest.Record{
		{Key: "a", Value: []byte("1")},
		{Key: "b#%0", Value: []byte{0, 0xff, 0, 1}},
		{Key: "gpu_0/w", Value: []byte{0}},
		{Key: "k\x00z", Value: bytes.Repeat([]byte("v"), 300)},
		{Key: "é", Value: []byte("utf-8")},
		{Key: "\xff\xfe", Value: []byte("high bytes")},
		{Key: "long/" + strings.Repeat("x", 506), Value: []byte("a 511-byte key")},
		{Key: "big", Value: Pattern(100000, 7)},
	}
	for i := range 200 {
		recs = append(recs, dbtest.Record{Key: fmt.Sprintf("n%04d", i), Value: Pattern(1+i*37%300, byte(i))})
	}
	slices.SortFunc(recs, func(a, b dbtest.Record) int { return strings.Compare(a.Key, b.Key) })
	return recs
}

// CopyFixture copies testdata/name into a temporary directory and returns
// the copy: opening a DB, even to read it, may create its lock file.
func CopyFixture(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", name))); err != nil {
		t.Fatal(err)
	}
	return dir
}

// ReadsFixtures reads the fixtures that the reference library wrote
// (testdata/fixtures.py).
func (s Suite) ReadsFixtures(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata")); err != nil {
		t.Fatal(err)
	}
	s.CheckFixtures(t, dir)
}

// CheckFixtures checks the DBs fixtures.py wrote into dir: every record
// bit for bit, the MNIST records through CreateDB and TensorProtosDBInput,
// and the Caffe Datum records.
func (s Suite) CheckFixtures(t *testing.T, dir string) {
	t.Run("records", func(t *testing.T) {
		got, err := dbtest.ReadAll(s.DBType, filepath.Join(dir, "records"))
		if want := FixtureRecords(); err != nil || !dbtest.Equal(got, want) {
			t.Fatalf("read %d records (%v), want the %d fixtures.py put, bit for bit", len(got), err, len(want))
		}
	})
	t.Run("mnist", func(t *testing.T) { s.CheckMNIST(t, filepath.Join(dir, "mnist"), 64) })
	t.Run("datum", func(t *testing.T) { s.CheckDatum(t, filepath.Join(dir, "datum"), 16) })
}

// CheckMNIST checks that the DB at path holds the first n MNIST t10k
// images in make_mnist_db's layout: each value byte for byte what
// mnist.Import writes, and a TensorProtosDBInput batch of all n equal to
// the idx files'.
func (s Suite) CheckMNIST(t *testing.T, path string, n int) {
	images, labels, err := mnist.Read(mnistImages, mnistLabels)
	if err != nil {
		t.Fatal(err)
	}
	got, err := dbtest.ReadAll(s.DBType, path)
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
		netdef.NewOperator("CreateDB", nil, []string{"reader"}, netdef.ArgString("db", filepath.Base(path)), netdef.ArgString("db_type", s.DBType)),
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

// CheckDatum checks that the DB at path holds the first n MNIST t10k
// images as Caffe's convert_mnist_data writes them.
func (s Suite) CheckDatum(t *testing.T, path string, n int) {
	images, labels, err := mnist.Read(mnistImages, mnistLabels)
	if err != nil {
		t.Fatal(err)
	}
	got, err := dbtest.ReadAll(s.DBType, path)
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

// SaveBlobs feeds ws one blob of every tensor element type, special
// floats included, and a float tensor that Save splits into chunks.
func SaveBlobs(t *testing.T, ws *workspace.Workspace) []string {
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

// Save runs Save of names into the DB path of type dbType, in chunks of
// 1,000 elements.
func Save(t *testing.T, ws *workspace.Workspace, names []string, dbType, path string) {
	t.Helper()
	op := netdef.NewOperator("Save", names, nil, netdef.ArgString("db", path), netdef.ArgString("db_type", dbType),
		netdef.ArgInt("absolute_path", 1), netdef.ArgInt("chunk_size", 1000))
	if err := ws.RunOperatorOnce(op); err != nil {
		t.Fatal(err)
	}
}

// SortedRecords reads the DB of type dbType at path, in key order.
func SortedRecords(t *testing.T, dbType, path string) []dbtest.Record {
	t.Helper()
	recs, err := dbtest.ReadAll(dbType, path)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(recs, func(a, b dbtest.Record) int { return strings.Compare(a.Key, b.Key) })
	return recs
}

// SaveLoad saves blobs of every type with the suite's db_type: the records
// are Caffe2's (bit for bit those Save writes into a minidb), and Load
// gives blobs that save to the same bits again.
func (s Suite) SaveLoad(t *testing.T) {
	dir := t.TempDir()
	ws := workspace.New(dir)
	defer ws.Close()
	names := SaveBlobs(t, ws)
	db, mini := filepath.Join(dir, "params."+s.DBType), filepath.Join(dir, "params.minidb")
	Save(t, ws, names, s.DBType, db)
	Save(t, ws, names, "minidb", mini)
	want := SortedRecords(t, "minidb", mini)
	got, err := dbtest.ReadAll(s.DBType, db)
	if err != nil || !dbtest.Equal(got, want) {
		t.Fatalf("%s holds %d records (%v); want the %d records of the minidb Save wrote, bit for bit, in key order", s.DBType, len(got), err, len(want))
	}
	if !slices.ContainsFunc(got, func(r dbtest.Record) bool { return r.Key == "big#%2" }) {
		t.Fatal("no chunk record big#%2 for the 2,500-element tensor saved in chunks of 1,000")
	}

	fresh := workspace.New(dir)
	defer fresh.Close()
	load := netdef.NewOperator("Load", nil, names, netdef.ArgString("db", db), netdef.ArgString("db_type", s.DBType), netdef.ArgInt("absolute_path", 1))
	if err := fresh.RunOperatorOnce(load); err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(dir, "again.minidb")
	Save(t, fresh, names, "minidb", again)
	if got := SortedRecords(t, "minidb", again); !dbtest.Equal(got, want) {
		t.Fatalf("the blobs loaded from %s save to %d records that differ from the %d saved first", s.DBType, len(got), len(want))
	}
}

// python returns a Python 3 that imports the suite's module, or skips t,
// or fails it when CAFFE2GO_PYTHON_DBS is 1 (as .ci/run sets it).
func (s Suite) python(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(py, "-c", "import "+s.PyModule).Run() == nil {
			return py
		}
	}
	why := fmt.Sprintf("no python3 with %s (Debian: apt-get install %s) to check that %s library reads and writes what this package does", s.PyModule, s.PyPackage, s.Library)
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

// pythonDump returns what fixtures.py dump prints for the DB at path.
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

// PythonInterop writes DBs here and reads them with the reference library
// through Python (every record's key, length and SHA-256), and has Python
// write the fixtures afresh for CheckFixtures.
func (s Suite) PythonInterop(t *testing.T) {
	py := s.python(t)
	dir := t.TempDir()

	records := filepath.Join(dir, "records")
	dbtest.WriteAll(t, s.DBType, records, persist.ModeNew, FixtureRecords()...)
	ws := workspace.New(dir)
	defer ws.Close()
	params := filepath.Join(dir, "params")
	Save(t, ws, SaveBlobs(t, ws), s.DBType, params)
	mnistDB := filepath.Join(dir, "mnist")
	if _, err := mnist.Import(mnistImages, mnistLabels, s.DBType, mnistDB); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{records, params, mnistDB} {
		want := asDump(SortedRecords(t, s.DBType, path))
		if got := pythonDump(t, py, path); !slices.Equal(got, want) {
			t.Errorf("%s reads %d records from %s, want the %d written here, bit for bit", s.PyModule, len(got), path, len(want))
		} else {
			t.Logf("%s read the %d records of %s bit for bit", s.PyModule, len(got), filepath.Base(path))
		}
	}

	fresh := filepath.Join(dir, "fresh")
	if err := os.Mkdir(fresh, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(py, filepath.Join("testdata", "fixtures.py"), "write", fresh).CombinedOutput(); err != nil {
		t.Fatalf("fixtures.py write: %v\n%s", err, out)
	}
	s.CheckFixtures(t, fresh)
}
