package main

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
	"github.com/caffe2go/caffe2go/persist/mnist"
	"github.com/caffe2go/caffe2go/workspace"
)

// lenetDir holds Caffe's LeNet and the NumPy reference outputs of
// testdata/caffe/gen_reference.py.
var lenetDir, _ = filepath.Abs("../../testdata/caffe/lenet")

// mnistDir holds the MNIST files (absolute: the tests change folder).
var mnistDir, _ = filepath.Abs("../../data/mnist")

// TestCaffeConvertLeNet runs "caffe2go caffe convert" on Caffe's LeNet,
// loads the init and predict nets it wrote, runs them on MNIST test
// images, and checks the probabilities of the first four against the NumPy
// reference and the predictions of the first 2,000 against the labels:
// 1,973 are right, as in the reference (99.14% over the whole test set,
// which tests.TestCaffeLeNetMNISTAccuracy checks).
func TestCaffeConvertLeNet(t *testing.T) {
	dir := isolate(t)
	code, out, errOut := runMain(t, "", "caffe", "convert", "-input", "data=500x1x28x28",
		filepath.Join(lenetDir, "lenet.prototxt"), filepath.Join(lenetDir, "lenet_iter_10000.caffemodel"),
		"-o", "init.pb", "predict.pbtxt")
	if code != 0 || errOut != "" {
		t.Fatalf("code %d, stderr %s", code, errOut)
	}
	for _, want := range []string{"LeNet: 9 Caffe layers → 8 operators; 8 parameters (431080 trained values)",
		"inputs:  data 500x1x28x28", "outputs: prob 500x10", "wrote init.pb and predict.pbtxt"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	init, err := netdef.ReadNetDef(filepath.Join(dir, "init.pb"))
	if err != nil {
		t.Fatal(err)
	}
	predict, err := netdef.ReadNetDef(filepath.Join(dir, "predict.pbtxt"))
	if err != nil {
		t.Fatal(err)
	}
	images, labels, err := mnist.Read(filepath.Join(mnistDir, "t10k-images-idx3-ubyte.gz"), filepath.Join(mnistDir, "t10k-labels-idx1-ubyte.gz"))
	if err != nil {
		t.Fatal(err)
	}
	ws := workspace.New(dir)
	if err := ws.RunNetOnce(init); err != nil {
		t.Fatal(err)
	}
	raw, lab := blob.Data[uint8](images), blob.Data[int32](labels)
	ref, err := optest.ReadNPY(filepath.Join(lenetDir, "reference", "prob.prob.npy"))
	if err != nil {
		t.Fatal(err)
	}
	correct := 0
	for b := range 4 {
		x := make([]float32, 500*784)
		for i := range x {
			x[i] = float32(raw[b*500*784+i]) * 0.00390625 // the prototxt's scale
		}
		if err := ws.FeedBlob("data", blob.MustFromSlice(x, 500, 1, 28, 28)); err != nil {
			t.Fatal(err)
		}
		if b == 0 {
			if err := ws.CreateNet(predict, false); err != nil {
				t.Fatal(err)
			}
		}
		if err := ws.RunNet(predict.GetName(), 1); err != nil {
			t.Fatal(err)
		}
		prob, err := ws.FetchBlob("prob")
		if err != nil {
			t.Fatal(err)
		}
		p := blob.Data[float32](prob)
		if b == 0 {
			for i, want := range blob.Data[float32](ref) {
				if d := math.Abs(float64(p[i] - want)); d > 1e-6 {
					t.Errorf("prob element %d: %g, reference %g", i, p[i], want)
				}
			}
		}
		for i := range 500 {
			best := 0
			for j := range 10 {
				if p[i*10+j] > p[i*10+best] {
					best = j
				}
			}
			if int32(best) == lab[b*500+i] {
				correct++
			}
		}
	}
	if correct != 1973 {
		t.Errorf("%d of the first 2000 test images correct, want 1973", correct)
	}
}

func TestCaffeConvertUsage(t *testing.T) {
	proto, model := filepath.Join(lenetDir, "lenet.prototxt"), filepath.Join(lenetDir, "lenet_iter_10000.caffemodel")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in stderr, or in stdout for status 0
	}{
		{"help", []string{"caffe", "convert", "-h"}, 0, "-o init_net.pb predict_net.pb"},
		{"subcommand help", []string{"caffe", "-h"}, 0, "usage: caffe2go caffe convert"},
		{"no subcommand", []string{"caffe"}, 2, "want a subcommand: convert"},
		{"unknown subcommand", []string{"caffe", "import"}, 2, `unknown subcommand "import"`},
		{"one file", []string{"caffe", "convert", proto}, 2, "want a prototxt and a caffemodel (1 files given)"},
		{"-o with one file", []string{"caffe", "convert", proto, model, "-o", "init.pb"}, 2, "-o takes two files"},
		{"-o and -init_net", []string{"caffe", "convert", "-init_net", "a.pb", proto, model, "-o", "i.pb", "p.pb"}, 2, "-o and -init_net/-predict_net both name the outputs"},
		{"bad -input", []string{"caffe", "convert", "-input", "data", proto, model}, 2, "want name=d0xd1x"},
		{"weights that do not fit", []string{"caffe", "convert", proto, filepath.Join(lenetDir, "../v1/v1.caffemodel")}, 1,
			`caffe: layer "conv1" (Convolution): the weights have no blobs for this layer (want weights and bias)`},
		{"a prototxt as weights", []string{"caffe", "convert", proto, proto}, 1, "caffe weights:"},
		{"missing file", []string{"caffe", "convert", proto, "nope.caffemodel"}, 1, "nope.caffemodel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t)
			code, out, errOut := runMain(t, "", tc.args...)
			where := errOut
			if tc.code == 0 {
				where = out
			}
			if code != tc.code || !strings.Contains(where, tc.want) {
				t.Errorf("code %d, want %d; want %q in\nstdout: %s\nstderr: %s", code, tc.code, tc.want, out, errOut)
			}
		})
	}
}
