package brew

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/workspace"
)

// blobsData makes n examples of 2 features in 2 classes split by the sign
// of x0 + x1.
func blobsData(n int, seed uint64) Dataset {
	r := rand.New(rand.NewPCG(seed, 1))
	x := make([]float32, 2*n)
	y := make([]int32, n)
	for i := range n {
		a, b := r.Float32()*2-1, r.Float32()*2-1
		x[2*i], x[2*i+1] = a, b
		if a+b > 0 {
			y[i] = 1
		}
	}
	return Dataset{"data": blob.MustFromSlice(x, n, 2), "label": blob.MustFromSlice(y, n)}
}

// logisticNets creates in ws a train net (FC, SoftmaxWithLoss, Accuracy,
// backward, plain SGD at lr 0.5) and a test net sharing its parameters.
func logisticNets(t *testing.T, ws *workspace.Workspace) (train, test string) {
	t.Helper()
	m := NewModel("logistic")
	w := m.CreateParam("fc_w", []int64{2, 2}, Init("ConstantFill"), Weight)
	b := m.CreateParam("fc_b", []int64{2}, Init("ConstantFill"), Bias)
	if err := m.Err(); err != nil {
		t.Fatal(err)
	}
	forward := func(n *netdef.Net) {
		n.Op("FC", []string{"data", w, b}, []string{"fc"})
		n.Op("SoftmaxWithLoss", []string{"fc", "label"}, []string{"softmax", "loss"})
		n.Op("Accuracy", []string{"softmax", "label"}, []string{"accuracy"})
	}
	forward(m.Net)
	if _, err := m.AddGradientOperators("loss"); err != nil {
		t.Fatal(err)
	}
	m.InitNet.Op("ConstantFill", nil, []string{"lr"}, netdef.ArgInts("shape", 1), netdef.ArgFloat("value", -0.5))
	m.InitNet.Op("ConstantFill", nil, []string{"one"}, netdef.ArgInts("shape", 1), netdef.ArgFloat("value", 1))
	for p, g := range m.ParamToGrad() {
		m.Net.Op("WeightedSum", []string{p, "one", g, "lr"}, []string{p})
	}
	testNet := netdef.NewNet("logistic_test")
	forward(testNet)
	if err := ws.RunNetOnce(m.InitNet); err != nil {
		t.Fatal(err)
	}
	ws.CreateBlob("data").MutableTensor()
	d := blobsData(4, 9)
	for name, x := range d {
		if err := ws.FeedBlob(name, x); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []*netdef.Net{m.Net, testNet} {
		if err := ws.CreateNet(n, false); err != nil {
			t.Fatal(err)
		}
	}
	return m.Net.Name(), testNet.Name()
}

func TestTrainConverges(t *testing.T) {
	ws := workspace.New(t.TempDir())
	defer ws.Close()
	train, test := logisticNets(t, ws)
	h, err := Train(context.Background(), blobsData(640, 1), blobsData(200, 2), TrainOptions{
		Workspace: ws, TrainNet: train, TestNet: test, Accuracy: "accuracy",
		BatchSize: 32, Epochs: 3, ValidateEvery: 10, Seed: 7,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Train) != 60 || len(h.Validation) != 6 || len(h.EpochTimes) != 3 {
		t.Fatalf("history: %d steps, %d validations, %d epochs; want 60, 6, 3", len(h.Train), len(h.Validation), len(h.EpochTimes))
	}
	if h.Train[0].Iteration != 1 || h.Train[59].Epoch != 3 || h.Validation[5].Iteration != 60 {
		t.Fatalf("iteration bookkeeping: first %+v, last %+v, last validation %+v", h.Train[0], h.Train[59], h.Validation[5])
	}
	first, last := h.Validation[0], h.Validation[len(h.Validation)-1]
	if !(last.Loss < first.Loss) || last.Accuracy < 0.95 {
		t.Fatalf("validation went from %+v to %+v; want the loss down and accuracy ≥ 0.95", first, last)
	}
}

func TestTrainShufflesBySeed(t *testing.T) {
	run := func(seed uint64, noShuffle bool) []float64 {
		ws := workspace.New(t.TempDir())
		defer ws.Close()
		train, _ := logisticNets(t, ws)
		h, err := Train(context.Background(), blobsData(128, 3), nil, TrainOptions{Workspace: ws, TrainNet: train, BatchSize: 16, Epochs: 2, Seed: seed, NoShuffle: noShuffle})
		if err != nil {
			t.Fatal(err)
		}
		var losses []float64
		for _, p := range h.Train {
			losses = append(losses, p.Loss)
		}
		return losses
	}
	a, b, c, d := run(1, false), run(1, false), run(2, false), run(1, true)
	if !equalFloats(a, b) {
		t.Fatal("the same seed gave different training runs")
	}
	if equalFloats(a, c) || equalFloats(a, d) {
		t.Fatal("another seed, or no shuffling, gave the same batches")
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTrainErrors(t *testing.T) {
	ws := workspace.New(t.TempDir())
	defer ws.Close()
	train, _ := logisticNets(t, ws)
	ragged := blobsData(64, 1)
	ragged["label"] = blob.MustFromSlice(make([]int32, 63))
	for _, tc := range []struct {
		name string
		data Dataset
		o    TrainOptions
		want string
	}{
		{"no net", blobsData(64, 1), TrainOptions{Workspace: ws}, "TrainNet"},
		{"unknown net", blobsData(64, 1), TrainOptions{Workspace: ws, TrainNet: "nope"}, `"nope"`},
		{"unknown test net", blobsData(64, 1), TrainOptions{Workspace: ws, TrainNet: train, TestNet: "nope"}, `"nope"`},
		{"ragged dataset", ragged, TrainOptions{Workspace: ws, TrainNet: train}, `"label" has 63 examples`},
		{"too few examples", blobsData(8, 1), TrainOptions{Workspace: ws, TrainNet: train, BatchSize: 16}, "fewer than one batch"},
		{"empty dataset", Dataset{}, TrainOptions{Workspace: ws, TrainNet: train}, "empty dataset"},
		{"injection without reference", blobsData(64, 1), TrainOptions{Workspace: ws, TrainNet: train, LRInjection: "lr_injection"}, "ReferenceBatchSize"},
		{"missing loss blob", blobsData(64, 1), TrainOptions{Workspace: ws, TrainNet: train, Loss: "no_such_loss"}, `"no_such_loss"`},
	} {
		_, err := Train(context.Background(), tc.data, nil, tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to mention %s", tc.name, err, tc.want)
		}
	}
}

func TestTrainScalesLearningRateWithBatch(t *testing.T) {
	ws := workspace.New(t.TempDir())
	defer ws.Close()
	train, _ := logisticNets(t, ws)
	if _, err := Train(context.Background(), blobsData(256, 1), nil, TrainOptions{Workspace: ws, TrainNet: train, BatchSize: 128, Iterations: 1, LRInjection: "lr_injection", ReferenceBatchSize: 32}); err != nil {
		t.Fatal(err)
	}
	got, err := ws.FetchBlob("lr_injection")
	if err != nil {
		t.Fatal(err)
	}
	if v := blob.Data[float32](got)[0]; v != 4 {
		t.Fatalf("lr_injection = %v, want 128/32 = 4", v)
	}
}

func TestFeedDoesNotAllocateOrAlias(t *testing.T) {
	ws := workspace.New(t.TempDir())
	defer ws.Close()
	d := blobsData(100, 4)
	f := newFeeder(ws, d)
	rows := []int{5, 1, 99, 42}
	if err := f.feed(rows); err != nil {
		t.Fatal(err)
	}
	if d["data"].Dim(0) != 100 {
		t.Fatalf("feeding changed the dataset's shape to %v", d["data"].Dims())
	}
	x, _ := ws.FetchBlob("data")
	src := blob.Data[float32](d["data"])
	for i, r := range rows {
		if got := blob.Data[float32](x)[2*i : 2*i+2]; got[0] != src[2*r] || got[1] != src[2*r+1] {
			t.Fatalf("row %d of the batch is %v, want example %d %v", i, got, r, src[2*r:2*r+2])
		}
	}
	if a := testing.AllocsPerRun(50, func() { _ = f.feed(rows) }); a != 0 {
		t.Fatalf("feed allocates %v times per batch", a)
	}
}

func TestHistoryPlot(t *testing.T) {
	h := &History{}
	for i := 1; i <= 50; i++ {
		h.Train = append(h.Train, Point{Iteration: i, Loss: 1 / float64(i), Accuracy: 1 - 1/float64(i)})
		if i%10 == 0 {
			h.Validation = append(h.Validation, Point{Iteration: i, Loss: 1.2 / float64(i), Accuracy: 0.9 - 1/float64(i)})
		}
	}
	dir := t.TempDir()
	pngPath, svgPath := filepath.Join(dir, "progress.png"), filepath.Join(dir, "progress.svg")
	for _, p := range []string{pngPath, svgPath} {
		if err := h.Plot(p); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("the PNG does not decode: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 500 || b.Dy() < 400 {
		t.Fatalf("PNG is %v", b)
	}
	svg, err := os.ReadFile(svgPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "Accuracy", "Loss", "Iteration", "validation"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Fatalf("the SVG has no %q", want)
		}
	}
	if err := h.Plot(filepath.Join(dir, "progress.gif")); err == nil || !strings.Contains(err.Error(), ".gif") {
		t.Fatalf("plotting to .gif: %v", err)
	}
}

func TestMovingAverage(t *testing.T) {
	got := movingAverage(plotter.XYs{{X: 1, Y: 2}, {X: 2, Y: 4}, {X: 3, Y: 9}, {X: 4, Y: 1}}, 2)
	want := []float64{2, 3, 6.5, 5}
	for i, p := range got {
		if p.Y != want[i] || p.X != float64(i+1) {
			t.Fatalf("point %d = %+v, want (%d, %v)", i, p, i+1, want[i])
		}
	}
}

// stepContext reports itself canceled from its n+1th Err call on: Train
// asks once before each step, so it stops after exactly n steps.
type stepContext struct {
	context.Context
	left atomic.Int32
}

func (c *stepContext) Err() error {
	if c.left.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestTrainStopsBetweenSteps: a canceled context ends Train after the step
// in progress; the history holds exactly the finished steps and a second
// Train call continues from the parameters they left.
func TestTrainStopsBetweenSteps(t *testing.T) {
	ws := workspace.New(t.TempDir())
	defer ws.Close()
	train, _ := logisticNets(t, ws)
	ctx := &stepContext{Context: context.Background()}
	ctx.left.Store(3)
	o := TrainOptions{Workspace: ws, TrainNet: train, BatchSize: 16, Iterations: 10, Seed: 1}
	h, err := Train(ctx, blobsData(128, 3), nil, o)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want one wrapping context.Canceled", err)
	}
	if !strings.Contains(err.Error(), "after 3 iterations") {
		t.Errorf("error %q does not say how many steps finished", err)
	}
	if len(h.Train) != 3 || h.Train[2].Iteration != 3 {
		t.Fatalf("history has %d steps, want the 3 finished ones", len(h.Train))
	}
	h2, err := Train(context.Background(), blobsData(128, 3), nil, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(h2.Train) != 10 {
		t.Fatalf("a fresh run did %d steps, want 10", len(h2.Train))
	}
}
