package caffe_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/netdef/caffe"
)

// testdata holds the Caffe files of the repository (testdata/caffe).
const testdata = "../../testdata/caffe"

// readLeNet reads one of LeNet's prototxts and its trained weights.
func readLeNet(t testing.TB, prototxt string) (net, weights *caffe.NetParameter) {
	t.Helper()
	net, err := caffe.ReadNet(filepath.Join(testdata, "lenet", prototxt))
	if err != nil {
		t.Fatal(err)
	}
	weights, err = caffe.ReadWeights(filepath.Join(testdata, "lenet", "lenet_iter_10000.caffemodel"))
	if err != nil {
		t.Fatal(err)
	}
	return net, weights
}

// TestReadLeNet reads Caffe's LeNet: the deploy and train_test prototxts
// (text) and the trained caffemodel (binary), whose layers hold the blobs
// Caffe saved, in N-D shapes.
func TestReadLeNet(t *testing.T) {
	deploy, weights := readLeNet(t, "lenet.prototxt")
	if deploy.GetName() != "LeNet" || len(deploy.Layer) != 9 {
		t.Errorf("deploy net %q has %d layers, want LeNet with 9", deploy.GetName(), len(deploy.Layer))
	}
	in := deploy.Layer[0]
	if in.GetType() != "Input" || len(in.GetInputParam().GetShape()) != 1 || len(in.GetInputParam().GetShape()[0].GetDim()) != 4 {
		t.Errorf("first layer %v, want an Input of one 4-D shape", in)
	}
	if p := deploy.Layer[2].GetPoolingParam(); p.GetPool() != caffe.PoolingParameter_MAX || p.GetKernelSize() != 2 || p.GetStride() != 2 {
		t.Errorf("pool1 %v, want MAX 2×2 stride 2", p)
	}
	train, _ := readLeNet(t, "lenet_train_test.prototxt")
	if n := len(train.Layer); n != 11 {
		t.Errorf("train_test net has %d layers, want 11", n)
	}
	if r := train.Layer[1].GetInclude(); len(r) != 1 || r[0].GetPhase() != caffe.Phase_TEST {
		t.Errorf("second Data layer include %v, want phase TEST", r)
	}
	if s := train.Layer[0].GetTransformParam().GetScale(); s != 0.00390625 {
		t.Errorf("Data transform_param scale %g, want 1/256", s)
	}
	want := map[string]string{"conv1": "[20 1 5 5] [20]", "conv2": "[50 20 5 5] [50]", "ip1": "[500 800] [500]", "ip2": "[10 500] [10]"}
	got := map[string]string{}
	for _, l := range weights.Layer {
		var shapes []string
		for _, b := range l.Blobs {
			shapes = append(shapes, fmt.Sprint(b.GetShape().GetDim()))
			n := int64(1)
			for _, d := range b.GetShape().GetDim() {
				n *= d
			}
			if int64(len(b.Data)) != n {
				t.Errorf("%s: blob of shape %v holds %d values", l.GetName(), b.GetShape().GetDim(), len(b.Data))
			}
		}
		if len(shapes) > 0 {
			got[l.GetName()] = strings.Join(shapes, " ")
		}
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("caffemodel %s blobs %s, want %s", name, got[name], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("caffemodel layers with blobs: %v", got)
	}
}

func TestParseErrors(t *testing.T) {
	if _, err := caffe.ParseNet([]byte(`layer { name: "x" bogus: 1 }`)); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("ParseNet of an unknown field: %v", err)
	}
	if _, err := caffe.ParseWeights(nil); err == nil {
		t.Error("ParseWeights of nothing: no error")
	}
	if _, err := caffe.ParseWeights([]byte{0x0a, 0x05, 'a'}); err == nil {
		t.Error("ParseWeights of a truncated message: no error")
	}
	if _, err := caffe.ReadNet(filepath.Join(testdata, "nope.prototxt")); !os.IsNotExist(err) {
		t.Errorf("ReadNet of a missing file: %v", err)
	}
	path := filepath.Join(t.TempDir(), "bad.prototxt")
	if err := os.WriteFile(path, []byte("layer {"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := caffe.ReadNet(path); err == nil || !strings.HasPrefix(err.Error(), path+": caffe net:") {
		t.Errorf("ReadNet of a broken file: %v, want an error naming the file", err)
	}
}
