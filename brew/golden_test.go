package brew_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/workspace"
)

// lenet builds Caffe2's MNIST LeNet with brew.LeNet.
func lenet(t testing.TB) *brew.Model {
	t.Helper()
	m := btModel(t, "lenet", "data", "label")
	brew.LeNet(m, "data", "label")
	btNoErr(t, m.Err())
	return m
}

// lenetByHand writes the same nets operator by operator, as a Caffe2 user
// would without brew.
func lenetByHand(t testing.TB) (net, init *netdef.Net) {
	net = netdef.NewNet("lenet_by_hand")
	init = netdef.NewNet("lenet_by_hand_init")
	btNoErr(t, net.AddExternalInput("data", "label"))
	param := func(fill, name string, dims ...int64) {
		init.Op(fill, nil, names(name), netdef.ArgInts("shape", dims...))
	}
	order := netdef.ArgString("order", "NCHW")
	k := func(n int64) *netdef.Argument { return netdef.ArgInt("kernel", n) }

	param("XavierFill", "conv1_w", 20, 1, 5, 5)
	param("ConstantFill", "conv1_b", 20)
	net.Op("Conv", names("data", "conv1_w", "conv1_b"), names("conv1"), k(5), order)
	net.Op("MaxPool", names("conv1"), names("pool1"), order, k(2), netdef.ArgInt("stride", 2))
	param("XavierFill", "conv2_w", 50, 20, 5, 5)
	param("ConstantFill", "conv2_b", 50)
	net.Op("Conv", names("pool1", "conv2_w", "conv2_b"), names("conv2"), k(5), order)
	net.Op("MaxPool", names("conv2"), names("pool2"), order, k(2), netdef.ArgInt("stride", 2))
	param("XavierFill", "fc3_w", 500, 800)
	param("ConstantFill", "fc3_b", 500)
	net.Op("FC", names("pool2", "fc3_w", "fc3_b"), names("fc3"), order)
	net.Op("Relu", names("fc3"), names("fc3"), order)
	param("XavierFill", "pred_w", 10, 500)
	param("ConstantFill", "pred_b", 10)
	net.Op("FC", names("fc3", "pred_w", "pred_b"), names("pred"), order)
	net.Op("SoftmaxWithLoss", names("pred", "label"), names("softmax", "loss"), order)
	net.Op("Accuracy", names("softmax", "label"), names("accuracy"), order)
	return net, init
}

// TestLeNetGolden compares brew.LeNet with the hand-written one:
// operators, blob names, parameter shapes, initializers, arguments and
// external inputs, everything but the nets' names.
func TestLeNetGolden(t *testing.T) {
	m := lenet(t)
	net, init := lenetByHand(t)
	ignoreName := protocmp.IgnoreFields(&netdef.NetDef{}, "name")
	if diff := cmp.Diff(net.Proto(), m.Net.Proto(), protocmp.Transform(), ignoreName); diff != "" {
		t.Errorf("net (-hand-written +brew):\n%s", diff)
	}
	if diff := cmp.Diff(init.Proto(), m.InitNet.Proto(), protocmp.Transform(), ignoreName); diff != "" {
		t.Errorf("init net (-hand-written +brew):\n%s", diff)
	}
	wantParams := names("conv1_w", "conv1_b", "conv2_w", "conv2_b", "fc3_w", "fc3_b", "pred_w", "pred_b")
	if got := m.ParamsIn(""); !slices.Equal(got, wantParams) {
		t.Errorf("params = %v, want %v", got, wantParams)
	}
	if got := m.Weights(); !slices.Equal(got, names("conv1_w", "conv2_w", "fc3_w", "pred_w")) {
		t.Errorf("weights = %v", got)
	}

	// The model runs: a batch of two images gives a [2 10] softmax.
	ws := workspace.New(t.TempDir())
	btFeed(t, ws, "data", btRand(rand.New(rand.NewPCG(7, 8)), 0, 2, 1, 28, 28))
	btFeed(t, ws, "label", blob.MustFromSlice([]int32{3, 7}, 2))
	btNoErr(t, ws.RunNetOnce(m.InitNet))
	btNoErr(t, ws.RunNetOnce(m.Net))
	if got := btShape(btFetch(t, ws, "softmax")); !slices.Equal(got, []int{2, 10}) {
		t.Errorf("softmax shape = %v, want [2 10]", got)
	}
}

// TestLeNetDimMismatch feeds LeNet 32×32 images: pool2 then holds
// 50·5·5 = 1250 values per image where fc3 takes 800. CreateNet infers the
// shapes from the fed data and the initialized parameters and fails, naming
// the net, the operator (index and type) and the shapes; nothing is
// registered.
func TestLeNetDimMismatch(t *testing.T) {
	m := lenet(t)
	ws := workspace.New(t.TempDir())
	btFeed(t, ws, "data", btFilled(0.5, 2, 1, 32, 32))
	btFeed(t, ws, "label", blob.MustFromSlice([]int32{3, 7}, 2))
	btNoErr(t, ws.RunNetOnce(m.InitNet))
	err := ws.CreateNet(m.Net, false)
	if err == nil {
		t.Fatal("CreateNet succeeded with fc3 of 800 inputs after a 1250-value pool2")
	}
	if ws.GetNet(m.Net.Name()) != nil {
		t.Error("the net was registered although CreateNet failed")
	}
	for _, want := range []string{m.Net.Name(), "operator 4 FC", "[2 50 5 5]", "[500 800]", "1250", "800"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}
