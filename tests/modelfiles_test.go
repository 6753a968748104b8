package tests

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/persist"
	"github.com/caffe2go/caffe2go/workspace"
)

// crayonInitNet is the init net of Caffe2's "crayon" style-transfer model:
// 59 GivenTensorFill ops holding the trained weights and one ConstantFill.
// The style-transfer example ships it.
const crayonInitNet = "../examples/styletransfer/models/crayon/init_net.pb"

// TestCaffe2InitNetThroughSaveLoad runs a real Caffe2 init_net.pb, saves
// every blob it made with Save into a minidb file and into a badger DB,
// loads each back into a fresh workspace with Load(load_all=1), and checks
// the blobs are bit-for-bit the ones the init net made.
func TestCaffe2InitNetThroughSaveLoad(t *testing.T) {
	init, err := netdef.ReadNetDef(crayonInitNet)
	if err != nil {
		t.Fatal(err)
	}
	if len(init.GetOp()) != 60 {
		t.Fatalf("%s has %d ops, want 60", crayonInitNet, len(init.GetOp()))
	}
	root := t.TempDir()
	ws := workspace.New(root)
	if err := ws.RunNetOnce(init); err != nil {
		t.Fatal(err)
	}
	names := ws.Blobs()
	if len(names) != 60 {
		t.Fatalf("the init net made %d blobs, want 60", len(names))
	}
	elements := 0
	for _, n := range names {
		tn, err := ws.FetchBlob(n)
		if err != nil {
			t.Fatal(err)
		}
		elements += tn.Size()
	}
	for _, dbType := range []string{"minidb", "badger"} {
		t.Run(dbType, func(t *testing.T) {
			db := "crayon_params." + dbType
			if err := ws.RunOperatorOnce(netdef.NewOperator("Save", names, nil,
				netdef.ArgString("db", db), netdef.ArgString("db_type", dbType))); err != nil {
				t.Fatal(err)
			}
			fresh := workspace.New(root)
			if err := fresh.RunOperatorOnce(netdef.NewOperator("Load", nil, nil,
				netdef.ArgString("db", db), netdef.ArgString("db_type", dbType), netdef.ArgInt("load_all", 1))); err != nil {
				t.Fatal(err)
			}
			if got := fresh.Blobs(); !slices.Equal(got, names) {
				t.Fatalf("loaded blobs %q, want %q", got, names)
			}
			for _, n := range names {
				want, _ := ws.FetchBlob(n)
				got, err := fresh.FetchBlob(n)
				if err != nil {
					t.Fatal(err)
				}
				if got.DataType() != blob.Float32 || want.DataType() != blob.Float32 || !slices.Equal(got.Dims(), want.Dims()) {
					t.Fatalf("%s: loaded %v, saved %v", n, got, want)
				}
				if !slices.EqualFunc(blob.Data[float32](got), blob.Data[float32](want), func(a, b float32) bool {
					return math.Float32bits(a) == math.Float32bits(b)
				}) {
					t.Fatalf("%s: the loaded values differ from the saved ones", n)
				}
			}
			if !persist.DBExists(dbType, filepath.Join(root, db)) {
				t.Errorf("DBExists(%s, %s) is false", dbType, db)
			}
		})
	}
	t.Logf("%d blobs, %d float32 elements round-tripped", len(names), elements)
}
