// Command mlp trains a two-layer perceptron on the 8×8 handwritten digits
// data set (1,797 images, 10 classes) the way a Caffe2 user writes it by
// hand: it feeds blobs, builds an init net and a training NetDef, adds the
// backward pass with AddGradientOperators, updates parameters with
// LearningRate + MomentumSGDUpdate, and fetches the loss as it goes down.
//
//	go run ./examples/mlp -iters 600
package main

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"strconv"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/workspace"
)

//go:embed testdata/digits.csv.gz
var digitsCSV []byte

const (
	features = 64
	classes  = 10
)

func main() {
	iters := flag.Int("iters", 600, "training iterations")
	batch := flag.Int("batch", 64, "batch size")
	hidden := flag.Int("hidden", 64, "hidden units")
	lr := flag.Float64("lr", 0.1, "base learning rate")
	flag.Parse()
	if _, err := run(os.Stdout, *iters, *batch, *hidden, float32(*lr)); err != nil {
		log.Fatal(err)
	}
}

// result is what a training run measured.
type result struct {
	firstLoss, lastLoss float32
	testAccuracy        float32
}

// run trains in the current workspace, printing progress to out.
func run(out io.Writer, iters, batch, hidden int, baseLR float32) (res result, err error) {
	x, y, err := loadDigits()
	if err != nil {
		return res, err
	}
	// A fixed shuffle, then 1,500 images to train on and the rest to test.
	r := rand.New(rand.NewPCG(7, 11))
	perm := r.Perm(len(y))
	const nTrain = 1500

	if err := workspace.RunNetOnce(initNet(hidden)); err != nil {
		return res, err
	}
	// The data blobs must exist before the training net is created.
	if err := feedBatch(x, y, perm[:batch]); err != nil {
		return res, err
	}
	train, err := trainNet(baseLR)
	if err != nil {
		return res, err
	}
	if err := workspace.CreateNet(train, false); err != nil {
		return res, err
	}
	for it := 1; it <= iters; it++ {
		start := (it * batch) % (nTrain - batch)
		if err := feedBatch(x, y, perm[start:start+batch]); err != nil {
			return res, err
		}
		if err := workspace.RunNet(train.Name(), 1); err != nil {
			return res, err
		}
		if it == 1 || it%100 == 0 || it == iters {
			loss, err := workspace.FetchBlob("loss")
			if err != nil {
				return res, err
			}
			acc, err := workspace.FetchBlob("accuracy")
			if err != nil {
				return res, err
			}
			res.lastLoss = blob.Data[float32](loss)[0]
			if it == 1 {
				res.firstLoss = res.lastLoss
			}
			fmt.Fprintf(out, "iter %4d  loss %.4f  batch accuracy %.3f\n", it, res.lastLoss, blob.Data[float32](acc)[0])
		}
	}

	// Evaluate on the held-out images with a forward-only net that shares
	// the trained parameters.
	if err := feedBatch(x, y, perm[nTrain:]); err != nil {
		return res, err
	}
	test := netdef.NewNet("mlp_test")
	logits(test)
	test.Op("Softmax", []string{"fc2"}, []string{"softmax"})
	test.Op("Accuracy", []string{"softmax", "label"}, []string{"test_accuracy"})
	if err := workspace.RunNetOnce(test); err != nil {
		return res, err
	}
	acc, err := workspace.FetchBlob("test_accuracy")
	if err != nil {
		return res, err
	}
	res.testAccuracy = blob.Data[float32](acc)[0]
	fmt.Fprintf(out, "test accuracy on %d held-out images: %.3f\n", len(y)-nTrain, res.testAccuracy)
	return res, nil
}

// initNet creates the parameters (Xavier weights, zero biases), their
// momentum buffers and the iteration counter.
func initNet(hidden int) *netdef.Net {
	n := netdef.NewNet("mlp_init")
	shapes := map[string][]int64{
		"fc1_w": {int64(hidden), features}, "fc1_b": {int64(hidden)},
		"fc2_w": {classes, int64(hidden)}, "fc2_b": {classes},
	}
	for _, p := range params {
		fill := "ConstantFill"
		if p[len(p)-1] == 'w' {
			fill = "XavierFill"
		}
		op := n.Op(fill, nil, []string{p}, netdef.ArgInts("shape", shapes[p]...))
		op.DeviceOption = &netdef.DeviceOption{RandomSeed: ptr(uint32(len(p)))}
		n.Op("ConstantFill", []string{p}, []string{p + "_momentum"}, netdef.ArgFloat("value", 0))
	}
	n.Op("ConstantFill", nil, []string{"iter"}, netdef.ArgInts("shape", 1), netdef.ArgInt("dtype", int64(netdef.TensorProto_INT64)), netdef.ArgInt("value", 0))
	return n
}

var params = []string{"fc1_w", "fc1_b", "fc2_w", "fc2_b"}

// logits adds FC → Relu → FC from "data" to the class scores "fc2".
func logits(n *netdef.Net) {
	n.Op("FC", []string{"data", "fc1_w", "fc1_b"}, []string{"fc1"})
	n.Op("Relu", []string{"fc1"}, []string{"fc1"})
	n.Op("FC", []string{"fc1", "fc2_w", "fc2_b"}, []string{"fc2"})
}

// trainNet is the forward pass, the loss, the backward pass and the update.
func trainNet(baseLR float32) (*netdef.Net, error) {
	n := netdef.NewNet("mlp_train")
	logits(n)
	n.Op("SoftmaxWithLoss", []string{"fc2", "label"}, []string{"softmax", "loss"})
	n.Op("Accuracy", []string{"softmax", "label"}, []string{"accuracy"})
	grads, err := operators.AddGradientOperators(n.Proto(), []string{"loss"}, nil)
	if err != nil {
		return nil, err
	}
	n.Op("Iter", []string{"iter"}, []string{"iter"})
	// MomentumSGDUpdate subtracts the scaled gradient, so the learning rate
	// is positive (Caffe2 builds a negative one only for WeightedSum
	// updates); it halves every 200 iterations.
	n.Op("LearningRate", []string{"iter"}, []string{"lr"},
		netdef.ArgFloat("base_lr", baseLR), netdef.ArgString("policy", "step"),
		netdef.ArgInt("stepsize", 200), netdef.ArgFloat("gamma", 0.5))
	for _, p := range params {
		g := grads[p].Dense
		n.Op("MomentumSGDUpdate", []string{g, p + "_momentum", "lr", p}, []string{g, p + "_momentum", p},
			netdef.ArgFloat("momentum", 0.9))
	}
	return n, nil
}

// feedBatch feeds the rows idx of x and y as "data" and "label".
func feedBatch(x [][]float32, y []int32, idx []int) error {
	data := make([]float32, 0, len(idx)*features)
	labels := make([]int32, 0, len(idx))
	for _, i := range idx {
		data = append(data, x[i]...)
		labels = append(labels, y[i])
	}
	if err := workspace.FeedBlob("data", blob.MustFromSlice(data, len(idx), features)); err != nil {
		return err
	}
	return workspace.FeedBlob("label", blob.MustFromSlice(labels))
}

// loadDigits parses the embedded CSV: 64 pixel values in 0..16, then the
// class. Pixels are scaled to [0, 1].
func loadDigits() ([][]float32, []int32, error) {
	zr, err := gzip.NewReader(bytes.NewReader(digitsCSV))
	if err != nil {
		return nil, nil, err
	}
	rows, err := csv.NewReader(zr).ReadAll()
	if err != nil && err != io.EOF {
		return nil, nil, err
	}
	var x [][]float32
	var y []int32
	for i, row := range rows {
		if len(row) != features+1 {
			return nil, nil, fmt.Errorf("digits row %d has %d fields, want %d", i, len(row), features+1)
		}
		v := make([]float32, features)
		for j := 0; j < features; j++ {
			f, err := strconv.ParseFloat(row[j], 32)
			if err != nil {
				return nil, nil, fmt.Errorf("digits row %d: %w", i, err)
			}
			v[j] = float32(f) / 16
		}
		c, err := strconv.Atoi(row[features])
		if err != nil || c < 0 || c >= classes {
			return nil, nil, fmt.Errorf("digits row %d: bad class %q", i, row[features])
		}
		x = append(x, v)
		y = append(y, int32(c))
	}
	return x, y, nil
}

func ptr[T any](v T) *T { return &v }
