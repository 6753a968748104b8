package mnist_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
	"github.com/caffe2go/caffe2go/persist"
	_ "github.com/caffe2go/caffe2go/persist/badgerdb"
	"github.com/caffe2go/caffe2go/persist/dbtest"
	_ "github.com/caffe2go/caffe2go/persist/minidb"
	"github.com/caffe2go/caffe2go/persist/mnist"
)

const (
	t10kImages = "../../data/mnist/t10k-images-idx3-ubyte.gz"
	t10kLabels = "../../data/mnist/t10k-labels-idx1-ubyte.gz"
)

// readIdx is the test's own idx reader: it gunzips the file and returns the
// dimensions after the magic number and the payload.
func readIdx(t testing.TB, path string, magic uint32) ([]uint32, []byte) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if got := binary.BigEndian.Uint32(data); got != magic {
		t.Fatalf("%s: magic %#x", path, got)
	}
	ndim := int(magic & 0xff)
	dims := make([]uint32, ndim)
	for i := range dims {
		dims[i] = binary.BigEndian.Uint32(data[4+4*i:])
	}
	return dims, data[4+4*ndim:]
}

func TestImportRoundTrip(t *testing.T) {
	imgDims, pixels := readIdx(t, t10kImages, 0x803)
	_, lbls := readIdx(t, t10kLabels, 0x801)
	if !slices.Equal(imgDims, []uint32{10000, 28, 28}) || len(lbls) != 10000 {
		t.Fatalf("t10k dims %v, %d labels", imgDims, len(lbls))
	}
	w := optest.NewWorkspace()
	w.Root = t.TempDir()
	path := filepath.Join(w.Root, "mnist")
	n, err := mnist.Import(t10kImages, t10kLabels, "badger", path)
	if err != nil || n != 10000 {
		t.Fatalf("Import: %d, %v", n, err)
	}
	// Every record, in file order, holds the idx bytes.
	db, err := persist.OpenDB("badger", path, persist.ModeRead)
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.NewCursor()
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	var msg netdef.TensorProtos
	for ; c.Valid(); i++ {
		if want := fmt.Sprintf("%08d", i); c.Key() != want {
			t.Fatalf("record %d has key %q, want %q", i, c.Key(), want)
		}
		if err := proto.Unmarshal(c.Value(), &msg); err != nil || len(msg.Protos) != 2 {
			t.Fatalf("record %d: %v", i, err)
		}
		img, lbl := msg.Protos[0], msg.Protos[1]
		if img.GetDataType() != netdef.TensorProto_BYTE || !slices.Equal(img.GetDims(), []int64{1, 28, 28}) ||
			!bytes.Equal(img.GetByteData(), pixels[i*784:(i+1)*784]) {
			t.Fatalf("record %d: image differs from the idx file", i)
		}
		if lbl.GetDataType() != netdef.TensorProto_INT32 || len(lbl.GetDims()) != 0 || !slices.Equal(lbl.GetInt32Data(), []int32{int32(lbls[i])}) {
			t.Fatalf("record %d: label %v, want %d", i, lbl, lbls[i])
		}
		if err := c.Next(); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	db.Close()
	if i != 10000 {
		t.Fatalf("%d records, want 10000", i)
	}

	// Through the operators: NCHW uint8 batches and int32 labels.
	if err := w.Run(netdef.NewOperator("CreateDB", nil, []string{"reader"}, netdef.ArgString("db", "mnist"), netdef.ArgString("db_type", "badger"))); err != nil {
		t.Fatal(err)
	}
	for batch := range 2 {
		if err := w.Run(netdef.NewOperator("TensorProtosDBInput", []string{"reader"}, []string{"data", "label"}, netdef.ArgInt("batch_size", 64))); err != nil {
			t.Fatal(err)
		}
		data, label := w.Tensor("data"), w.Tensor("label")
		if data.DataType() != blob.Uint8 || !slices.Equal(data.Dims(), []int{64, 1, 28, 28}) || label.DataType() != blob.Int32 || !slices.Equal(label.Dims(), []int{64}) {
			t.Fatalf("batch %d: %v %v", batch, data, label)
		}
		if !bytes.Equal(blob.Data[uint8](data), pixels[batch*64*784:(batch+1)*64*784]) {
			t.Fatalf("batch %d: pixels differ from the idx file", batch)
		}
		for j, l := range blob.Data[int32](label) {
			if l != int32(lbls[batch*64+j]) {
				t.Fatalf("batch %d item %d: label %d, want %d", batch, j, l, lbls[batch*64+j])
			}
		}
	}
}

// idxBytes builds an uncompressed idx file.
func idxBytes(magic uint32, dims []uint32, payload []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, magic)
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, d)
	}
	b.Write(payload)
	return b.Bytes()
}

func TestImportSmallAndBad(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, data, 0o644)
		return p
	}
	// Uncompressed files are accepted too, and any image size.
	img := write("img", idxBytes(0x803, []uint32{2, 2, 3}, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}))
	lbl := write("lbl", idxBytes(0x801, []uint32{2}, []byte{7, 3}))
	if n, err := mnist.Import(img, lbl, "minidb", filepath.Join(dir, "ok")); err != nil || n != 2 {
		t.Fatalf("small idx: %d, %v", n, err)
	}
	recs, _ := dbtest.ReadAll("minidb", filepath.Join(dir, "ok"))
	var msg netdef.TensorProtos
	if len(recs) != 2 || proto.Unmarshal(recs[1].Value, &msg) != nil || !bytes.Equal(msg.Protos[0].GetByteData(), []byte{7, 8, 9, 10, 11, 12}) ||
		!slices.Equal(msg.Protos[0].GetDims(), []int64{1, 2, 3}) || msg.Protos[1].GetInt32Data()[0] != 3 {
		t.Fatalf("records %v", &msg)
	}
	if _, err := mnist.Import(filepath.Join(dir, "nope"), lbl, "minidb", filepath.Join(dir, "out")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want an error wrapping fs.ErrNotExist", err)
	}
	for _, tc := range []struct {
		name, images, labels, want string
	}{
		{"swapped", lbl, img, "magic number 0x00000801, want 0x00000803"},
		{"missing", filepath.Join(dir, "nope"), lbl, "no such file"},
		{"count mismatch", img, write("lbl3", idxBytes(0x801, []uint32{3}, []byte{1, 2, 3})), "holds 2 images but"},
		{"short images", write("short", idxBytes(0x803, []uint32{2, 2, 3}, []byte{1, 2, 3, 4, 5, 6, 7})), lbl, "image 1 of 2: the file ends early"},
		{"short labels", img, write("shortl", idxBytes(0x801, []uint32{2}, []byte{1})), "label 1 of 2: the file ends early"},
		{"short header", write("hdr", []byte{0, 0, 8}), lbl, "reading the idx header"},
		{"zero size", write("zero", idxBytes(0x803, []uint32{2, 0, 3}, nil)), lbl, "unsupported image size 0 × 3"},
		{"bad gzip", write("gz", []byte{0x1f, 0x8b, 1, 2, 3}), lbl, "gz"},
	} {
		_, err := mnist.Import(tc.images, tc.labels, "minidb", filepath.Join(dir, "out"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
