package tests

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef/caffe"
	"github.com/caffe2go/caffe2go/operators/optest"
	_ "github.com/caffe2go/caffe2go/operators/std"
	"github.com/caffe2go/caffe2go/persist/mnist"
	"github.com/caffe2go/caffe2go/workspace"
)

// caffeDir holds the Caffe nets, weights and NumPy reference outputs of
// testdata/caffe/gen_reference.py (see its README).
const caffeDir = "../testdata/caffe"

// convertCaffe reads and converts a Caffe net and its weights.
func convertCaffe(t *testing.T, prototxt, caffemodel string, opts ...caffe.Option) *caffe.Converted {
	t.Helper()
	net, err := caffe.ReadNet(filepath.Join(caffeDir, prototxt))
	if err != nil {
		t.Fatal(err)
	}
	weights, err := caffe.ReadWeights(filepath.Join(caffeDir, caffemodel))
	if err != nil {
		t.Fatal(err)
	}
	conv, err := caffe.Convert(net, weights, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return conv
}

// readRef reads a reference array of gen_reference.py.
func readRef(t *testing.T, dir, name string) *blob.Tensor {
	t.Helper()
	x, err := optest.ReadNPY(filepath.Join(caffeDir, dir, "reference", name+".npy"))
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// maxAbsDiff is the largest |got - want| over the elements, and the
// largest |want|; shapes must match.
func maxAbsDiff(t *testing.T, what string, got, want *blob.Tensor) (diff, scale float64) {
	t.Helper()
	if fmt.Sprint(got.Dims()) != fmt.Sprint(want.Dims()) {
		t.Fatalf("%s: shape %v, want %v", what, got.Dims(), want.Dims())
	}
	g, w := got.AsFloat64s(), want.AsFloat64s()
	for i := range g {
		if math.IsNaN(g[i]) || math.IsInf(g[i], 0) {
			t.Fatalf("%s: element %d is %v", what, i, g[i])
		}
		diff = max(diff, math.Abs(g[i]-w[i]))
		scale = max(scale, math.Abs(w[i]))
	}
	return diff, scale
}

// runLayerByLayer runs a converted net's init net, feeds the inputs, then
// runs the predict net one Caffe layer at a time, comparing each layer's
// tops with the reference <layer>.<top>.npy of dir (the last merged layer's
// name for a merged pair) where gen_reference.py wrote one. It returns the
// number of tops compared and logs each one's largest difference.
func runLayerByLayer(t *testing.T, conv *caffe.Converted, dir string, feeds map[string]*blob.Tensor) (*workspace.Workspace, int) {
	t.Helper()
	ws := workspace.New(t.TempDir())
	if err := ws.RunNetOnce(conv.Init); err != nil {
		t.Fatalf("init net: %v", err)
	}
	for name, x := range feeds {
		if err := ws.FeedBlob(name, x); err != nil {
			t.Fatal(err)
		}
	}
	compared := 0
	for _, l := range conv.Layers {
		if err := ws.RunOperatorsOnce(conv.Predict.Op[l.First:l.End]); err != nil {
			t.Fatalf("layer %s (%s): %v", l.Name, l.Type, err)
		}
		name := l.Name
		if l.Merged != "" {
			name = l.Merged
		}
		for i, top := range l.Blobs {
			caffeTop := l.Tops[i]
			if slices.Contains(conv.Inputs, top) {
				continue // fed as is
			}
			path := filepath.Join(caffeDir, dir, "reference", name+"."+caffeTop+".npy")
			if _, err := os.Stat(path); err != nil {
				continue
			}
			want := readRef(t, dir, name+"."+caffeTop)
			got, err := ws.FetchBlob(top)
			if err != nil {
				t.Fatal(err)
			}
			if got.DataType() != blob.Float32 {
				t.Fatalf("%s.%s: type %v, want float32", name, caffeTop, got.DataType())
			}
			diff, scale := maxAbsDiff(t, name+"."+caffeTop, got, want)
			// float32 against float64 rounded to float32: a few ulps of the
			// largest value, more where sums run long.
			tol := 2e-5 * max(1, scale)
			t.Logf("%-14s %-10s %-22s max |Δ| %.3g (max |ref| %.3g)", name, l.Type, caffeTop+" "+fmt.Sprint(got.Dims()), diff, scale)
			if diff > tol {
				t.Errorf("%s (%s) top %s: max |Δ| %g > %g", name, l.Type, caffeTop, diff, tol)
			}
			if s := l.Shapes[i]; s != nil && fmt.Sprint(s) != fmt.Sprint(got.Dims()) {
				t.Errorf("%s top %s: converter's shape %v, computed %v", name, caffeTop, s, got.Dims())
			}
			compared++
		}
	}
	return ws, compared
}

// TestCaffeLeNetLayers converts Caffe's LeNet (deploy prototxt and trained
// caffemodel) and checks every layer's output on the first four MNIST test
// images against the NumPy forward pass of gen_reference.py.
func TestCaffeLeNetLayers(t *testing.T) {
	conv := convertCaffe(t, "lenet/lenet.prototxt", "lenet/lenet_iter_10000.caffemodel", caffe.InputShape("data", 4, 1, 28, 28))
	if fmt.Sprint(conv.Inputs) != "[data]" || fmt.Sprint(conv.Outputs) != "[prob]" {
		t.Fatalf("inputs %v, outputs %v; want [data] and [prob]", conv.Inputs, conv.Outputs)
	}
	_, n := runLayerByLayer(t, conv, "lenet", map[string]*blob.Tensor{"data": readRef(t, "lenet", "input.data")})
	if n != 8 {
		t.Errorf("compared %d tops, want 8 (conv1 … prob)", n)
	}
}

// TestCaffeLayers converts the made-up net of gen_reference.py that uses
// every layer type the importer translates, with random weights, and checks
// each layer's tops against the NumPy reference.
func TestCaffeLayers(t *testing.T) {
	conv := convertCaffe(t, "layers/layers.prototxt", "layers/layers.caffemodel")
	label := readRef(t, "layers", "input.label")
	_, n := runLayerByLayer(t, conv, "layers", map[string]*blob.Tensor{"data": readRef(t, "layers", "input.data"), "label": label})
	refs, err := filepath.Glob(filepath.Join(caffeDir, "layers", "reference", "*.npy"))
	if err != nil {
		t.Fatal(err)
	}
	// Every reference but the inputs and BatchNorm bn1's own output (merged
	// with Scale sc1 into one SpatialBN, it is never computed).
	if want := len(refs) - 3; n != want {
		t.Errorf("compared %d tops, want %d", n, want)
	}
}

// TestCaffeV1Net converts a net in the V1 format (V1LayerParameter, legacy
// input_dim, blobs with num/channels/height/width).
func TestCaffeV1Net(t *testing.T) {
	conv := convertCaffe(t, "v1/v1.prototxt", "v1/v1.caffemodel")
	_, n := runLayerByLayer(t, conv, "v1", map[string]*blob.Tensor{"data": readRef(t, "v1", "input.data")})
	if n != 5 {
		t.Errorf("compared %d tops, want 5", n)
	}
}

// TestCaffeDataTransform converts a Data layer's test-phase preprocessing
// (centre crop, per-channel mean, scale) and leaves out its train-phase
// twin.
func TestCaffeDataTransform(t *testing.T) {
	conv := convertCaffe(t, "transform/transform.prototxt", "transform/transform.caffemodel", caffe.InputShape("data", 2, 3, 8, 7))
	_, n := runLayerByLayer(t, conv, "transform", map[string]*blob.Tensor{"data": readRef(t, "transform", "input.data")})
	if n != 2 {
		t.Errorf("compared %d tops, want 2", n)
	}
}

// mnistTest reads the MNIST test set: images scaled by 1/256 as LeNet's
// prototxt says (transform_param scale 0.00390625), NCHW float32, and the
// labels.
func mnistTest(t *testing.T) (*blob.Tensor, []int32) {
	t.Helper()
	images, labels, err := mnist.Read("../data/mnist/t10k-images-idx3-ubyte.gz", "../data/mnist/t10k-labels-idx1-ubyte.gz")
	if err != nil {
		t.Fatal(err)
	}
	raw := blob.Data[uint8](images)
	x := make([]float32, len(raw))
	for i, v := range raw {
		x[i] = float32(v) * 0.00390625
	}
	return blob.MustFromSlice(x, images.Dims()...), blob.Data[int32](labels)
}

// TestCaffeLeNetMNISTAccuracy runs the converted LeNet over the MNIST test
// set. Caffe scores the caffemodel at 99.14% (9,914 of 10,000); so does the
// NumPy reference. With -short only the first 2,000 images run, against the
// reference's count for them.
func TestCaffeLeNetMNISTAccuracy(t *testing.T) {
	x, labels := mnistTest(t)
	n, want := len(labels), 9914
	if testing.Short() {
		n, want = 2000, lenetCorrect2000
	}
	const batch = 500
	conv := convertCaffe(t, "lenet/lenet.prototxt", "lenet/lenet_iter_10000.caffemodel", caffe.InputShape("data", batch, 1, 28, 28))
	ws := workspace.New(t.TempDir())
	if err := ws.RunNetOnce(conv.Init); err != nil {
		t.Fatal(err)
	}
	pixels := blob.Data[float32](x)
	correct := 0
	for lo := 0; lo < n; lo += batch {
		in := blob.MustFromSlice(pixels[lo*784:(lo+batch)*784], batch, 1, 28, 28)
		if err := ws.FeedBlob("data", in); err != nil {
			t.Fatal(err)
		}
		if lo == 0 {
			if err := ws.CreateNet(conv.Predict, false); err != nil {
				t.Fatal(err)
			}
		}
		if err := ws.RunNet(conv.Predict.GetName(), 1); err != nil {
			t.Fatal(err)
		}
		prob, err := ws.FetchBlob("prob")
		if err != nil {
			t.Fatal(err)
		}
		p := blob.Data[float32](prob)
		for i := range batch {
			row := p[i*10 : i*10+10]
			best := 0
			for j, v := range row {
				if v > row[best] {
					best = j
				}
			}
			if int32(best) == labels[lo+i] {
				correct++
			}
		}
	}
	t.Logf("converted LeNet: %d of %d MNIST test images correct (%.2f%%)", correct, n, 100*float64(correct)/float64(n))
	if correct != want {
		t.Errorf("%d of %d correct, want %d", correct, n, want)
	}
}

// TestCaffeLeNetTrainTestNet converts Caffe's lenet_train_test.prototxt
// in the TEST phase: its test Data layer (raw pixels scaled by 1/256 by its
// transform_param; the train one is left out), SoftmaxWithLoss and
// Accuracy, without the data's height and width (pooling then keeps
// Caffe's output sizes at run time). Caffe's test loop runs 100 batches of
// 100 and averages the Accuracy layer's outputs: 0.9914. With -short, 20
// batches.
func TestCaffeLeNetTrainTestNet(t *testing.T) {
	x, labels := mnistTest(t)
	batches, want := 100, 9914
	if testing.Short() {
		batches, want = 20, lenetCorrect2000
	}
	conv := convertCaffe(t, "lenet/lenet_train_test.prototxt", "lenet/lenet_iter_10000.caffemodel")
	if fmt.Sprint(conv.Inputs) != "[data label]" || fmt.Sprint(conv.Outputs) != "[accuracy loss]" {
		t.Fatalf("inputs %v, outputs %v; want [data label] and [accuracy loss]", conv.Inputs, conv.Outputs)
	}
	ws := workspace.New(t.TempDir())
	if err := ws.RunNetOnce(conv.Init); err != nil {
		t.Fatal(err)
	}
	pixels := blob.Data[float32](x)
	correct, lossSum := 0.0, 0.0
	for b := range batches {
		raw := make([]float32, 100*784)
		for i, v := range pixels[b*100*784 : (b+1)*100*784] {
			raw[i] = v * 256 // the Data layer's bytes
		}
		if err := ws.FeedBlob("data", blob.MustFromSlice(raw, 100, 1, 28, 28)); err != nil {
			t.Fatal(err)
		}
		if err := ws.FeedBlob("label", blob.MustFromSlice(labels[b*100:(b+1)*100], 100)); err != nil {
			t.Fatal(err)
		}
		if b == 0 {
			if err := ws.CreateNet(conv.Predict, false); err != nil {
				t.Fatal(err)
			}
		}
		if err := ws.RunNet(conv.Predict.GetName(), 1); err != nil {
			t.Fatal(err)
		}
		acc, err := ws.FetchBlob("accuracy")
		if err != nil {
			t.Fatal(err)
		}
		loss, err := ws.FetchBlob("loss")
		if err != nil {
			t.Fatal(err)
		}
		correct += 100 * float64(blob.Data[float32](acc)[0])
		lossSum += float64(blob.Data[float32](loss)[0])
		if b == 0 {
			// The first images' layers against the deploy net's reference.
			for _, name := range []string{"conv1", "pool2", "ip2"} {
				got, err := ws.FetchBlob(name)
				if err != nil {
					t.Fatal(err)
				}
				ref := readRef(t, "lenet", name+"."+name)
				n := ref.Size()
				first := blob.MustFromSlice(blob.Data[float32](got)[:n], ref.Dims()...)
				if diff, scale := maxAbsDiff(t, name, first, ref); diff > 2e-5*max(1, scale) {
					t.Errorf("%s of the first 4 images: max |Δ| %g from the reference", name, diff)
				}
			}
		}
	}
	t.Logf("converted lenet_train_test: accuracy %.4f (%.0f of %d), mean loss %.4f", correct/float64(100*batches), correct, 100*batches, lossSum/float64(batches))
	if math.Round(correct) != float64(want) {
		t.Errorf("%.0f correct, want %d", correct, want)
	}
	l := lossSum / float64(batches)
	if !testing.Short() && math.Abs(l-lenetMeanLoss) > 1e-5 {
		t.Errorf("mean loss %.6f, want the reference's %.6f", l, lenetMeanLoss)
	}
	if !(l > 0 && l < 0.1) {
		t.Errorf("mean loss %g, want a small positive value", l)
	}
}

// lenetMeanLoss is the reference's mean SoftmaxWithLoss over the MNIST test
// set (gen_reference.py prints it).
const lenetMeanLoss = 0.027269

// lenetCorrect2000 is the NumPy reference's count of correct predictions
// among the first 2,000 test images (gen_reference.py prints it).
const lenetCorrect2000 = 1973
