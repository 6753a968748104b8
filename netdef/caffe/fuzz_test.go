package caffe_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/caffe2go/caffe2go/netdef/caffe"
)

// FuzzConvert converts arbitrary prototxt text with the made-up net's
// weights (testdata/caffe/layers): no input may panic, and a converted net
// lists every parameter it reads.
func FuzzConvert(f *testing.F) {
	for _, p := range []string{"layers/layers.prototxt", "v1/v1.prototxt", "transform/transform.prototxt", "lenet/lenet_train_test.prototxt"} {
		b, err := os.ReadFile(filepath.Join(testdata, p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(input4 + `layer { name: "p" type: "Pooling" bottom: "x" top: "x" pooling_param { pool: AVE kernel_size: 3 stride: 2 pad: 1 } }`))
	weights, err := caffe.ReadWeights(filepath.Join(testdata, "layers", "layers.caffemodel"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		net, err := caffe.ParseNet(text)
		if err != nil {
			return
		}
		conv, err := caffe.Convert(net, weights, caffe.InputShape("data", 2, 3, 8, 7))
		if err != nil {
			if conv, err = caffe.Convert(net, weights); err != nil {
				return
			}
		}
		made := map[string]bool{}
		for _, op := range conv.Init.Op {
			made[op.Output[0]] = true
		}
		for _, l := range conv.Layers {
			for _, p := range l.Params {
				if !made[p] {
					t.Fatalf("layer %s reads parameter %s, which the init net does not make", l.Name, p)
				}
			}
		}
	})
}

// FuzzParseWeights decodes arbitrary caffemodel bytes and converts what
// decodes against LeNet's prototxt: no input may panic.
func FuzzParseWeights(f *testing.F) {
	for _, p := range []string{"layers/layers.caffemodel", "v1/v1.caffemodel", "transform/transform.caffemodel"} {
		b, err := os.ReadFile(filepath.Join(testdata, p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	net, err := caffe.ReadNet(filepath.Join(testdata, "v1", "v1.prototxt"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := caffe.ParseWeights(data)
		if err != nil {
			return
		}
		_, _ = caffe.Convert(net, w)
	})
}
