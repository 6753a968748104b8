// Command mlp trains a two-layer perceptron on a tabular data set, the 8×8
// handwritten digits (1,797 rows of 64 features, 10 classes; the Otto-style
// workload of Caffe's MLP tutorial): brew helpers build the model,
// BuildSGD adds momentum SGD with a step learning rate, and brew.Train runs
// the epochs with shuffling and validation on held-out rows.
//
//	go run ./examples/mlp -epochs 20
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	_ "embed"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/examples/internal/interrupt"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/workspace"
)

//go:embed testdata/digits.csv.gz
var digitsCSV []byte

const (
	features = 64
	classes  = 10
	// nTrain rows (after a fixed shuffle) train; the rest validate.
	nTrain = 1500
)

func main() {
	epochs := flag.Int("epochs", 20, "passes over the 1,500 training rows")
	batch := flag.Int("batch", 64, "batch size")
	hidden := flag.Int("hidden", 64, "hidden units")
	lr := flag.Float64("lr", 0.1, "base learning rate (halved every 200 steps)")
	flag.Parse()
	ctx := interrupt.Context()
	_, err := run(ctx, os.Stdout, *epochs, *batch, *hidden, float32(*lr))
	interrupt.Exit(ctx, "mlp", err)
}

// result is what a training run measured.
type result struct {
	firstLoss, lastLoss float64
	testAccuracy        float64
}

// run trains in a fresh workspace, printing progress to out, until done or
// ctx ends.
func run(ctx context.Context, out io.Writer, epochs, batch, hidden int, baseLR float32) (res result, err error) {
	train, test, err := loadDigits()
	if err != nil {
		return res, err
	}
	ws := workspace.New("")
	defer ws.Close()

	model := brew.NewModel("mlp_train")
	addMLP(model, hidden) // AddGradientOperators returns an error addMLP recorded
	if _, err := model.AddGradientOperators("loss"); err != nil {
		return res, err
	}
	if _, err := brew.BuildSGD(model, brew.SGDOptions{
		BaseLR: baseLR, Momentum: 0.9, Policy: "step",
		LRArgs: []*netdef.Argument{netdef.ArgInt("stepsize", 200), netdef.ArgFloat("gamma", 0.5)},
	}); err != nil {
		return res, err
	}
	// The test model shares the trained parameters.
	testModel, err := brew.NewModelWith("mlp_test", brew.ModelOptions{ParamModel: model, NoInitParams: true})
	if err != nil {
		return res, err
	}
	addMLP(testModel, hidden)
	if err := testModel.Err(); err != nil {
		return res, err
	}
	for i, op := range model.InitNet.Proto().GetOp() {
		if op.GetType() == "XavierFill" {
			seed := uint32(i + 1)
			op.DeviceOption = &netdef.DeviceOption{RandomSeed: &seed}
		}
	}
	if err := ws.RunNetOnce(model.InitNet); err != nil {
		return res, err
	}
	for name, t := range train {
		if err := ws.FeedBlob(name, t); err != nil {
			return res, err
		}
	}
	for _, n := range []*netdef.Net{model.Net, testModel.Net} {
		if err := ws.CreateNet(n, false); err != nil {
			return res, err
		}
	}
	h, err := brew.Train(ctx, train, test, brew.TrainOptions{
		Workspace: ws, TrainNet: model.Net.Name(), TestNet: testModel.Net.Name(),
		Accuracy: "accuracy", BatchSize: batch, Epochs: epochs, Seed: 7,
	})
	if err != nil {
		return res, err
	}
	for _, v := range h.Validation {
		fmt.Fprintf(out, "epoch %5.1f  iteration %4d  validation loss %.4f  accuracy %.3f\n", v.Epoch, v.Iteration, v.Loss, v.Accuracy)
	}
	res.firstLoss = h.Train[0].Loss
	last := h.Validation[len(h.Validation)-1]
	res.lastLoss, res.testAccuracy = last.Loss, last.Accuracy
	fmt.Fprintf(out, "test accuracy on %d held-out rows: %.3f\n", test["label"].Dim(0), res.testAccuracy)
	return res, nil
}

// addMLP adds FC → Relu → FC → SoftmaxWithLoss ("loss") and Accuracy
// ("accuracy") from "data" and "label" to m; an error is recorded in m.
func addMLP(m *brew.Model, hidden int) {
	m.AddExternalInputs("data", "label")
	fc1 := brew.Relu(m, brew.FC(m, "data", "fc1", features, hidden), "fc1")
	softmax, _ := brew.SoftmaxWithLoss(m, brew.FC(m, fc1, "fc2", hidden, classes), "label", "softmax", "loss")
	brew.Accuracy(m, softmax, "label", "accuracy")
}

// loadDigits parses the embedded CSV (64 pixel values in 0..16, then the
// class; pixels scaled to [0, 1]), shuffles the rows with a fixed seed and
// splits them into nTrain training rows and the held-out rest.
func loadDigits() (train, test brew.Dataset, err error) {
	x, y, err := parseDigits()
	if err != nil {
		return nil, nil, err
	}
	perm := rand.New(rand.NewPCG(7, 11)).Perm(len(y))
	split := func(rows []int) brew.Dataset {
		data := make([]float32, 0, len(rows)*features)
		labels := make([]int32, 0, len(rows))
		for _, i := range rows {
			data = append(data, x[i]...)
			labels = append(labels, y[i])
		}
		return brew.Dataset{"data": blob.MustFromSlice(data, len(rows), features), "label": blob.MustFromSlice(labels)}
	}
	return split(perm[:nTrain]), split(perm[nTrain:]), nil
}

// parseDigits parses the embedded CSV into rows of features and classes.
func parseDigits() ([][]float32, []int32, error) {
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
