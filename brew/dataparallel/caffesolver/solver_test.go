package caffesolver_test

import (
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/brew/dataparallel/caffesolver"
	"github.com/caffe2go/caffe2go/netdef/caffe"
	"github.com/caffe2go/caffe2go/persist/mnist"
	"github.com/caffe2go/caffe2go/workspace"

	_ "github.com/caffe2go/caffe2go/operators/std"
)

func TestLearningRate(t *testing.T) {
	sp := func(text string) *caffe.SolverParameter {
		s, err := caffe.ParseSolver([]byte("base_lr: 0.1 gamma: 0.5 power: 2 max_iter: 100 " + text))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []struct {
		policy string
		iter   int
		want   float64
	}{
		{`lr_policy: "fixed"`, 55, 0.1},
		{`lr_policy: "step" stepsize: 10`, 9, 0.1},
		{`lr_policy: "step" stepsize: 10`, 25, 0.1 * 0.25},
		{`lr_policy: "exp"`, 3, 0.1 * 0.125},
		{`lr_policy: "inv"`, 2, 0.1 / 4},                // (1 + 0.5·2)^-2
		{`lr_policy: "poly"`, 50, 0.1 / 4},              // (1 − 50/100)^2
		{`lr_policy: "sigmoid" stepsize: 10`, 10, 0.05}, // 1/(1+e^0)
		{`lr_policy: "multistep" stepvalue: 5 stepvalue: 8`, 4, 0.1},
		{`lr_policy: "multistep" stepvalue: 5 stepvalue: 8`, 5, 0.05},
		{`lr_policy: "multistep" stepvalue: 5 stepvalue: 8`, 9, 0.025},
	} {
		got, err := caffesolver.LearningRate(sp(tc.policy), tc.iter)
		if err != nil || math.Abs(got-tc.want) > 1e-7*tc.want { // base_lr is a float32
			t.Errorf("%s at %d: %g, %v; want %g", tc.policy, tc.iter, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ text, want string }{
		{`lr_policy: "cosine"`, `lr_policy "cosine" is not supported`},
		{``, "no lr_policy"},
		{`lr_policy: "step" stepsize: 0`, "needs a positive stepsize"},
	} {
		if _, err := caffesolver.LearningRate(sp(tc.text), 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.text, err, tc.want)
		}
	}
}

// TestReadDatumDB reads the LevelDB fixture that Caffe's
// convert_mnist_data layout describes (the first 16 MNIST test images)
// and compares it with the idx files.
func TestReadDatumDB(t *testing.T) {
	// A copy: opening a LevelDB writes its LOCK file.
	fixture := filepath.Join(t.TempDir(), "datum")
	if err := os.CopyFS(fixture, os.DirFS("../../../persist/leveldb/testdata/datum")); err != nil {
		t.Fatal(err)
	}
	ds, err := caffesolver.ReadDatumDB("leveldb", fixture, 0)
	if err != nil {
		t.Fatal(err)
	}
	images, labels, err := mnist.Read("../../../data/mnist/t10k-images-idx3-ubyte.gz", "../../../data/mnist/t10k-labels-idx1-ubyte.gz")
	if err != nil {
		t.Fatal(err)
	}
	data, label := ds["data"], ds["label"]
	if !slices.Equal(data.Dims(), []int{16, 1, 28, 28}) || !slices.Equal(label.Dims(), []int{16}) {
		t.Fatalf("dims %v %v", data.Dims(), label.Dims())
	}
	px := blob.Data[uint8](images)
	for i, v := range blob.Data[float32](data) {
		if v != float32(px[i]) {
			t.Fatalf("value %d: %g, want %d", i, v, px[i])
		}
	}
	if !slices.Equal(blob.Data[int32](label), blob.Data[int32](labels)[:16]) {
		t.Errorf("labels %v", blob.Data[int32](label))
	}
	// Written back, the first 16 read the same.
	path := filepath.Join(t.TempDir(), "db")
	if n, err := caffesolver.WriteDatumDB("leveldb", path, images, labels); err != nil || n != 10000 {
		t.Fatalf("WriteDatumDB: %d, %v", n, err)
	}
	back, err := caffesolver.ReadDatumDB("leveldb", path, 16)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(blob.Data[float32](back["data"]), blob.Data[float32](data)) || !slices.Equal(blob.Data[int32](back["label"]), blob.Data[int32](label)) {
		t.Error("written and read back: not the fixture's records")
	}
	if _, err := caffesolver.ReadDatumDB("leveldb", filepath.Join(t.TempDir(), "missing"), 0); err == nil {
		t.Error("missing DB: no error")
	}
}

// mlpNet is a Data → InnerProduct → SoftmaxWithLoss net (with Accuracy in
// the TEST phase); the bias learns at twice the rate and without decay.
const mlpNet = `name: "mlp"
layer { name: "d" type: "Data" top: "x" top: "y" data_param { batch_size: BATCH } transform_param { scale: 0.5 } include { phase: TRAIN } }
layer { name: "d" type: "Data" top: "x" top: "y" data_param { batch_size: 4 } transform_param { scale: 0.5 } include { phase: TEST } }
layer { name: "ip" type: "InnerProduct" bottom: "x" top: "z"
  param { lr_mult: 1 } param { lr_mult: 2 decay_mult: 0 }
  inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.5 } bias_filler { type: "constant" value: 0.1 } } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "z" bottom: "y" top: "loss" }
layer { name: "acc" type: "Accuracy" bottom: "z" bottom: "y" top: "accuracy" include { phase: TEST } }
`

const mlpSolver = `base_lr: 0.2 lr_policy: "inv" gamma: 0.1 power: 0.75 momentum: 0.9 weight_decay: 0.01
max_iter: 6 display: 2 test_iter: 2 test_interval: 3 snapshot: 3 snapshot_prefix: "snap/mlp"`

// mlpData is 8 examples of 5 features, 3 classes.
func mlpData(t *testing.T) brew.Dataset {
	x := make([]float32, 8*5)
	y := make([]int32, 8)
	for i := range 8 {
		y[i] = int32(i % 3)
		for j := range 5 {
			x[i*5+j] = float32(math.Sin(float64(i*5+j))) + float32(y[i])*float32(j%2)
		}
	}
	xt, err := blob.FromSlice(x, 8, 5)
	if err != nil {
		t.Fatal(err)
	}
	yt, err := blob.FromSlice(y, 8)
	if err != nil {
		t.Fatal(err)
	}
	return brew.Dataset{"data": xt, "label": yt}
}

func newMLP(t *testing.T, root string, devices, batch int, log io.Writer, weights ...*caffe.NetParameter) *caffesolver.Solver {
	t.Helper()
	sp, err := caffe.ParseSolver([]byte(mlpSolver))
	if err != nil {
		t.Fatal(err)
	}
	net, err := caffe.ParseNet([]byte(strings.Replace(mlpNet, "BATCH", string(rune('0'+batch)), 1)))
	if err != nil {
		t.Fatal(err)
	}
	ws := workspace.New(root)
	t.Cleanup(func() { ws.Close() })
	data := mlpData(t)
	o := caffesolver.Options{Solver: sp, Net: net, Dir: root, Devices: devices,
		TrainData: data, TestData: data, Workspace: ws, Log: log}
	if len(weights) > 0 {
		o.Weights = weights[0]
	}
	s, err := caffesolver.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func weightsOf(t *testing.T, s *caffesolver.Solver) (w, b []float32) {
	t.Helper()
	net, err := s.Weights()
	if err != nil {
		t.Fatal(err)
	}
	if len(net.Layer) != 1 || net.Layer[0].GetName() != "ip" || len(net.Layer[0].Blobs) != 2 {
		t.Fatalf("weights %v", net)
	}
	return net.Layer[0].Blobs[0].Data, net.Layer[0].Blobs[1].Data
}

// TestSGDAgainstReference checks the weights after 6 iterations against
// Caffe's SGD written out here in float64: softmax loss gradients, L2
// decay with decay_mult, momentum, the inv policy and lr_mult.
func TestSGDAgainstReference(t *testing.T) {
	var log bytes.Buffer
	s := newMLP(t, t.TempDir(), 1, 4, &log)
	if err := s.Step(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	w0, b0 := weightsOf(t, s)
	if _, err := s.Solve(context.Background()); err != nil {
		t.Fatal(err)
	}
	w, b := weightsOf(t, s)

	data := mlpData(t)
	x, y := blob.Data[float32](data["data"]), blob.Data[int32](data["label"])
	rw, rb := make([]float64, 15), make([]float64, 3)
	for i := range rw {
		rw[i] = float64(w0[i])
	}
	for i := range rb {
		rb[i] = float64(b0[i])
	}
	hw, hb := make([]float64, 15), make([]float64, 3)
	pos := 0
	for it := range 6 {
		gw, gb := make([]float64, 15), make([]float64, 3)
		for r := range 4 {
			n := (pos + r) % 8
			var z [3]float64
			for k := range 3 {
				z[k] = rb[k]
				for j := range 5 {
					z[k] += rw[k*5+j] * 0.5 * float64(x[n*5+j])
				}
			}
			m := math.Max(z[0], math.Max(z[1], z[2]))
			sum := 0.0
			for k := range 3 {
				sum += math.Exp(z[k] - m)
			}
			for k := range 3 {
				d := math.Exp(z[k]-m) / sum
				if k == int(y[n]) {
					d--
				}
				d /= 4
				gb[k] += d
				for j := range 5 {
					gw[k*5+j] += d * 0.5 * float64(x[n*5+j])
				}
			}
		}
		pos += 4
		lr := 0.2 * math.Pow(1+0.1*float64(it), -0.75)
		for i := range rw {
			hw[i] = 0.9*hw[i] + lr*(gw[i]+0.01*rw[i])
			rw[i] -= hw[i]
		}
		for i := range rb {
			hb[i] = 0.9*hb[i] + 2*lr*gb[i]
			rb[i] -= hb[i]
		}
	}
	for i := range rw {
		if math.Abs(float64(w[i])-rw[i]) > 1e-5 {
			t.Fatalf("weight %d: %g, reference %g", i, w[i], rw[i])
		}
	}
	for i := range rb {
		if math.Abs(float64(b[i])-rb[i]) > 1e-5 {
			t.Fatalf("bias %d: %g, reference %g", i, b[i], rb[i])
		}
	}
	for _, want := range []string{
		"Iteration 0, Testing net (#0)", "    Test net output #0: loss = ", "    Test net output #1: accuracy = ",
		"Iteration 2 (", "    Train net output #0: loss = ", "Iteration 2, lr = 0.174",
		"Snapshotting to binary proto file", "Iteration 6, Testing net (#0)", "Optimization Done.",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
}

// TestResume: resuming from the snapshot at iteration 3 ends with the
// weights of the uninterrupted run, and the snapshot's .caffemodel holds
// the weights at iteration 3.
func TestResume(t *testing.T) {
	root := t.TempDir()
	var log bytes.Buffer
	s := newMLP(t, root, 2, 2, &log)
	if _, err := s.Solve(context.Background()); err != nil {
		t.Fatal(err)
	}
	w, b := weightsOf(t, s)
	mid, err := caffe.ReadWeights(s.SnapshotPath(3))
	if err != nil {
		t.Fatal(err)
	}

	r := newMLP(t, root, 2, 2, &log)
	if err := r.Restore(3); err != nil {
		t.Fatal(err)
	}
	rw, rb := weightsOf(t, r)
	if !slices.Equal(rw, mid.Layer[0].Blobs[0].Data) || !slices.Equal(rb, mid.Layer[0].Blobs[1].Data) {
		t.Error("restored weights differ from the snapshot's caffemodel")
	}
	if r.Iter() != 3 {
		t.Errorf("restored at iteration %d, want 3", r.Iter())
	}
	if _, err := r.Solve(context.Background()); err != nil {
		t.Fatal(err)
	}
	w2, b2 := weightsOf(t, r)
	if !slices.Equal(w, w2) || !slices.Equal(b, b2) {
		t.Errorf("resumed run ends with\n%v %v\nuninterrupted\n%v %v", w2, b2, w, b)
	}
	if err := r.Restore(4); err == nil || !strings.Contains(err.Error(), "snapshot 4") {
		t.Errorf("restoring a missing snapshot: error %v", err)
	}
}

// TestDevicesEquivalence: 2 devices of batch 2 train as 1 device of batch
// 4 (the same examples per iteration, the gradients averaged), from the
// same initial weights (given as -weights).
func TestDevicesEquivalence(t *testing.T) {
	first := newMLP(t, t.TempDir(), 1, 4, nil)
	if err := first.Step(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	init, err := first.Weights()
	if err != nil {
		t.Fatal(err)
	}
	one := newMLP(t, t.TempDir(), 1, 4, nil, init)
	two := newMLP(t, t.TempDir(), 2, 2, nil, init)
	for _, s := range []*caffesolver.Solver{one, two} {
		if _, err := s.Solve(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	w1, b1 := weightsOf(t, one)
	w2, b2 := weightsOf(t, two)
	for i := range w1 {
		if math.Abs(float64(w1[i]-w2[i])) > 1e-5 {
			t.Fatalf("weight %d: 1 device %g, 2 devices %g", i, w1[i], w2[i])
		}
	}
	for i := range b1 {
		if math.Abs(float64(b1[i]-b2[i])) > 1e-5 {
			t.Fatalf("bias %d: 1 device %g, 2 devices %g", i, b1[i], b2[i])
		}
	}
}

func TestNewErrors(t *testing.T) {
	ws := workspace.New(t.TempDir())
	defer ws.Close()
	net, err := caffe.ParseNet([]byte(strings.Replace(mlpNet, "BATCH", "4", 1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ solver, want string }{
		{`type: "Adam" base_lr: 0.1 lr_policy: "fixed"`, `solver type "Adam" is not supported`},
		{`base_lr: 0.1 lr_policy: "fixed" iter_size: 2`, "iter_size 2"},
		{`base_lr: 0.1 lr_policy: "triangle"`, `lr_policy "triangle"`},
		{`base_lr: 0.1 lr_policy: "fixed" net: "nowhere.prototxt"`, `solver net "nowhere.prototxt"`},
	} {
		sp, err := caffe.ParseSolver([]byte(tc.solver))
		if err != nil {
			t.Fatal(err)
		}
		o := caffesolver.Options{Solver: sp, Workspace: ws, Dir: t.TempDir(), TrainData: mlpData(t)}
		if !strings.Contains(tc.solver, "net:") {
			o.Net = net
		}
		if _, err := caffesolver.New(o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.solver, err, tc.want)
		}
	}
	sp, _ := caffe.ParseSolver([]byte(`base_lr: 0.1 lr_policy: "fixed"`))
	noSource := proto.Clone(net).(*caffe.NetParameter)
	if _, err := caffesolver.New(caffesolver.Options{Solver: sp, Workspace: ws, Net: noSource}); err == nil || !strings.Contains(err.Error(), `Data layer "d" has no data_param source`) {
		t.Errorf("no source: error %v", err)
	}
}

// TestStepCancelled: a cancelled context stops Step between iterations,
// and the state can still be snapshotted and restored there.
func TestStepCancelled(t *testing.T) {
	root := t.TempDir()
	s := newMLP(t, root, 1, 4, nil)
	if err := s.Step(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Step(ctx, 2); err == nil || !strings.Contains(err.Error(), "stopped at iteration 2") {
		t.Fatalf("cancelled Step: error %v", err)
	}
	if err := s.Snapshot(); err != nil {
		t.Fatal(err)
	}
	r := newMLP(t, root, 1, 4, nil)
	if err := r.Restore(2); err != nil || r.Iter() != 2 {
		t.Fatalf("Restore(2): iteration %d, %v", r.Iter(), err)
	}
}
