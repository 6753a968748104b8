package brew_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/persist"
	"github.com/caffe2go/caffe2go/workspace"
)

// TestDBInputRuns reads batches of (features, label) records from a minidb
// file in the workspace's root folder and feeds them to an FC layer.
func TestDBInputRuns(t *testing.T) {
	root := t.TempDir()
	_, err := persist.WriteTensorProtosDB("minidb", filepath.Join(root, "train.minidb"),
		func(put func(string, ...*blob.Tensor) error) error {
			for i := range 4 {
				x := blob.MustFromSlice([]float32{float32(i), float32(10 * i)}, 2)
				if err := put(string(rune('a'+i)), x, blob.Scalar(int32(i%2))); err != nil {
					return err
				}
			}
			return nil
		})
	btNoErr(t, err)

	m := brew.NewModel("dbinput")
	outs := brew.DBInput(m, names("data", "label"), 2, "train.minidb", "minidb")
	brew.FC(m, outs[0], "fc", 2, 3)
	btNoErr(t, m.Err())

	ws := workspace.New(root)
	btNoErr(t, ws.RunNetOnce(m.InitNet))
	btNoErr(t, ws.CreateNet(m.Net, false))
	for batch := range 2 {
		btNoErr(t, ws.RunNet(m.Net.Name(), 1))
		data := btFetch(t, ws, "data")
		if got := btShape(data); !slices.Equal(got, []int{2, 2}) {
			t.Fatalf("batch %d: data shape %v, want [2 2]", batch, got)
		}
		if got := blob.Data[float32](data)[0]; got != float32(2*batch) {
			t.Errorf("batch %d: first feature %v, want %d", batch, got, 2*batch)
		}
		if got := blob.Data[int32](btFetch(t, ws, "label")); !slices.Equal(got, []int32{0, 1}) {
			t.Errorf("batch %d: labels %v, want [0 1]", batch, got)
		}
		if got := btShape(btFetch(t, ws, "fc")); !slices.Equal(got, []int{2, 3}) {
			t.Errorf("batch %d: fc shape %v, want [2 3]", batch, got)
		}
	}
}
