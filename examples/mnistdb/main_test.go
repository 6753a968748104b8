package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/persist"
)

const (
	images = "../../data/mnist/t10k-images-idx3-ubyte.gz"
	labels = "../../data/mnist/t10k-labels-idx1-ubyte.gz"
)

// gunzip returns the decompressed contents of an idx file after its
// header of 4·(1 + ndim) bytes, checking the magic number.
func gunzip(t *testing.T, path string, magic uint32, ndim int) []byte {
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
	if binary.BigEndian.Uint32(data) != magic {
		t.Fatalf("%s: bad magic", path)
	}
	return data[4*(1+ndim):]
}

// TestDBHoldsTheIdxBytes converts the 10,000 test images into a badger DB
// and checks that reading it back gives the idx files' bytes: every pixel
// and label, in file order.
func TestDBHoldsTheIdxBytes(t *testing.T) {
	pixels := gunzip(t, images, 0x803, 3)
	lbls := gunzip(t, labels, 0x801, 1)
	db := filepath.Join(t.TempDir(), "mnist")
	var out bytes.Buffer
	st, err := run(&out, images, labels, "badger", db, 2, 100)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(out.String())
	if st.records != 10000 || len(pixels) != 10000*784 || len(lbls) != 10000 {
		t.Fatalf("%d records, %d pixels, %d labels", st.records, len(pixels), len(lbls))
	}
	for i := range st.firstLabels {
		if st.firstLabels[i] != int32(lbls[i]) || !bytes.Equal(st.firstImages[i], pixels[i*784:(i+1)*784]) {
			t.Errorf("drawn record %d differs from the idx files", i)
		}
	}
	r, err := persist.NewDBReader("badger", db, persist.DBReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var gotPixels, gotLabels []byte
	var msg netdef.TensorProtos
	for i := range st.records {
		key, value, err := r.Read()
		if err != nil {
			t.Fatal(err)
		}
		if key != fmt.Sprintf("%08d", i) {
			t.Fatalf("record %d has key %q", i, key)
		}
		if err := proto.Unmarshal(value, &msg); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(msg.Protos[0].GetDims(), []int64{1, 28, 28}) {
			t.Fatalf("record %d: image dims %v", i, msg.Protos[0].GetDims())
		}
		gotPixels = append(gotPixels, msg.Protos[0].GetByteData()...)
		gotLabels = append(gotLabels, byte(msg.Protos[1].GetInt32Data()[0]))
	}
	if !bytes.Equal(gotPixels, pixels) || !bytes.Equal(gotLabels, lbls) {
		t.Fatal("the DB's bytes differ from the idx files'")
	}
	if st.readRecordsPerSec <= 0 {
		t.Errorf("read throughput %v", st.readRecordsPerSec)
	}
}
