package brew_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/workspace"
)

// mlpData returns n examples of 4 features in [-1, 1) labelled 1 when
// x0 + x1 − x2 > 0.
func mlpData(n int, seed uint64) (*blob.Tensor, *blob.Tensor) {
	r := rand.New(rand.NewPCG(seed, 99))
	x := make([]float32, 4*n)
	y := make([]int32, n)
	for i := range n {
		for j := range 4 {
			x[4*i+j] = 2*r.Float32() - 1
		}
		if x[4*i]+x[4*i+1]-x[4*i+2] > 0 {
			y[i] = 1
		}
	}
	return blob.MustFromSlice(x, n, 4), blob.MustFromSlice(y, n)
}

// mlpForward builds fc 4→16, relu, fc 16→2, SoftmaxWithLoss and Accuracy.
func mlpForward(t *testing.T, m *brew.Model) (loss, accuracy string) {
	t.Helper()
	m.AddExternalInputs("data", "label")
	h := brew.FC(m, "data", "fc1", 4, 16)
	h = brew.Relu(m, h, h)
	logits := brew.FC(m, h, "fc2", 16, 2)
	softmax, loss := brew.SoftmaxWithLoss(m, logits, "label", "softmax", "loss")
	accuracy = brew.Accuracy(m, softmax, "label", "accuracy")
	btNoErr(t, m.Err())
	return loss, accuracy
}

// TestMLPTrains builds a small MLP with brew, adds the backward pass and a
// hand-written SGD step (WeightedSum: p = 1·p + (−lr)·grad), trains it in a
// workspace and checks that the loss goes down; then a test model sharing
// the parameters evaluates held-out data with the trained weights.
func TestMLPTrains(t *testing.T) {
	m := brew.NewModel("mlp")
	loss, accuracy := mlpForward(t, m)
	iter := brew.Iter(m, "iter")
	btNoErr(t, m.Err())
	_, err := m.AddGradientOperators(loss)
	btNoErr(t, err)
	m.InitNet.Op("ConstantFill", nil, names("ONE"), shape(1), value(1))
	m.InitNet.Op("ConstantFill", nil, names("LR"), shape(1), value(-0.5))
	grads := m.ParamToGrad()
	for _, p := range m.ParamsIn("") {
		m.Net.Op("WeightedSum", names(p, "ONE", grads[p], "LR"), names(p))
	}

	ws := workspace.New(t.TempDir())
	x, y := mlpData(128, 1)
	btFeed(t, ws, "data", x)
	btFeed(t, ws, "label", y)
	btNoErr(t, ws.RunNetOnce(m.InitNet))
	btNoErr(t, ws.CreateNet(m.Net, false))
	scalar := func(name string) float32 { return blob.Data[float32](btFetch(t, ws, name))[0] }
	btNoErr(t, ws.RunNet(m.Net.Name(), 1))
	first := scalar(loss)
	btNoErr(t, ws.RunNet(m.Net.Name(), 199))
	last := scalar(loss)
	t.Logf("loss %.4f → %.4f, train accuracy %.3f", first, last, scalar(accuracy))
	if !(last < first/2) {
		t.Errorf("loss went from %v to %v; want it at least halved", first, last)
	}
	if got := blob.Data[int64](btFetch(t, ws, iter))[0]; got != 200 {
		t.Errorf("iter = %d after 200 runs", got)
	}

	test, err := brew.NewModelWith("mlp_test", brew.ModelOptions{ParamModel: m})
	btNoErr(t, err)
	_, testAccuracy := mlpForward(t, test)
	xt, yt := mlpData(256, 2)
	btFeed(t, ws, "data", xt)
	btFeed(t, ws, "label", yt)
	btNoErr(t, ws.RunNetOnce(test.Net))
	if acc := scalar(testAccuracy); acc < 0.9 {
		t.Errorf("held-out accuracy %v, want at least 0.9", acc)
	}
	if got := len(test.Net.ExternalInputs()); got != 6 {
		t.Errorf("test net external inputs %v, want data, label and the 4 params", test.Net.ExternalInputs())
	}
	var types []string
	for _, o := range test.Net.Proto().Op {
		types = append(types, o.GetType())
	}
	if !slices.Equal(types, names("FC", "Relu", "FC", "SoftmaxWithLoss", "Accuracy")) {
		t.Errorf("test net ops = %v", types)
	}
}
