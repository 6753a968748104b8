package tests

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/workspace"
)

// checkInferredShapes infers the shapes of net's blobs in ws, runs the net
// and checks the inferred shapes (and types, where inferred) against the
// tensors the run wrote. It returns how many blobs it checked.
func checkInferredShapes(t *testing.T, ws *workspace.Workspace, net *netdef.NetDef) int {
	t.Helper()
	inferred, err := ws.InferShapes(net)
	if err != nil {
		t.Fatalf("InferShapes: %v", err)
	}
	if err := ws.RunNetOnce(net); err != nil {
		t.Fatalf("running the net: %v", err)
	}
	// Every output of an operator with a shape function is inferred in
	// full (the inputs here are all known) and checked.
	want := map[string]bool{}
	for _, op := range net.GetOp() {
		if operators.HasShapeFunc(op.GetType()) {
			for _, out := range op.GetOutput() {
				want[out] = true
			}
		}
	}
	for name := range want {
		s := inferred[name]
		if _, full := s.Size(0, s.Rank()); !full {
			// Only an output the run does not write (a test-mode Dropout's
			// mask) may stay unknown.
			if b := ws.GetBlob(name); b == nil || b.Tensor() != nil {
				t.Errorf("%q: inferred %v", name, s)
			}
			continue
		}
		got, err := ws.FetchBlob(name)
		if err != nil {
			t.Errorf("%q: %v", name, err)
			continue
		}
		if !slices.Equal(got.Dims(), s.Dims) || (s.Type != blob.Undefined && s.Type != got.DataType()) {
			t.Errorf("%q: inferred %v %v, the run wrote %v %v", name, s.Type, s, got.DataType(), got.Dims())
		}
	}
	return len(want)
}

// TestShapeInferenceMatchesRun checks the inferred shapes of the model-zoo
// predict nets and of a LeNet training net (forward, gradients, SGD)
// against what running them writes.
func TestShapeInferenceMatchesRun(t *testing.T) {
	for _, model := range []string{"squeezenet", "resnet50", "bvlc_googlenet", "densenet121"} {
		t.Run(model, func(t *testing.T) {
			predict, init, input, x := zooNet(t, model)
			ws := workspace.New(t.TempDir())
			if err := ws.RunNetOnce(init); err != nil {
				t.Fatal(err)
			}
			if err := ws.FeedBlob(input, x); err != nil {
				t.Fatal(err)
			}
			// Every forward operator of these nets has a shape function.
			for _, op := range predict.GetOp() {
				if !operators.HasShapeFunc(op.GetType()) {
					t.Errorf("no shape function for %s", op.GetType())
				}
			}
			checkInferredShapes(t, ws, predict)
		})
	}
	t.Run("lenet training", func(t *testing.T) {
		m := brew.NewModel("lenet_shapes")
		m.AddExternalInputs("data", "label")
		conv1 := brew.Conv(m, "data", "conv1", 1, 20, 5)
		pool1 := brew.MaxPool(m, conv1, "pool1", brew.Kernel(2), brew.Stride(2))
		conv2 := brew.Conv(m, pool1, "conv2", 20, 50, 5)
		pool2 := brew.MaxPool(m, conv2, "pool2", brew.Kernel(2), brew.Stride(2))
		fc3 := brew.Relu(m, brew.FC(m, pool2, "fc3", 800, 500), "fc3")
		softmax, loss := brew.SoftmaxWithLoss(m, brew.FC(m, fc3, "pred", 500, 10), "label", "softmax", "loss")
		brew.Accuracy(m, softmax, "label", "accuracy")
		if _, err := m.AddGradientOperators(loss); err != nil {
			t.Fatal(err)
		}
		if _, err := brew.BuildSGD(m, brew.SGDOptions{BaseLR: 0.01, Momentum: 0.9}); err != nil {
			t.Fatal(err)
		}
		ws := workspace.New(t.TempDir())
		r := rand.New(rand.NewPCG(1, 2))
		img := make([]float32, 4*28*28)
		for i := range img {
			img[i] = r.Float32()
		}
		if err := ws.FeedBlob("data", blob.MustFromSlice(img, 4, 1, 28, 28)); err != nil {
			t.Fatal(err)
		}
		if err := ws.FeedBlob("label", blob.MustFromSlice([]int32{1, 2, 3, 4}, 4)); err != nil {
			t.Fatal(err)
		}
		if err := ws.RunNetOnce(m.InitNet); err != nil {
			t.Fatal(err)
		}
		// The forward blobs (conv1 … accuracy: 9), every gradient the
		// backward pass writes, and the updated parameters and momenta:
		// only the loss gradient's seed (ConstantFill) and the learning
		// rate have no shape function.
		if n := checkInferredShapes(t, ws, m.Net.Proto()); n < 40 {
			t.Errorf("checked only %d blobs", n)
		}
	})
}

// TestShapeInferenceErrors builds small nets whose layers cannot go
// together. CreateNet must refuse each, naming the operator and the
// shapes, whether or not the batch is known yet (unfed inputs have unknown
// shapes; parameters are what the init net made).
func TestShapeInferenceErrors(t *testing.T) {
	type feed struct {
		name string
		dims []int
	}
	f32 := func(name string, dims ...int) feed { return feed{name, dims} }
	cases := []struct {
		name  string
		feeds []feed
		build func(n *netdef.Net)
		want  []string
	}{
		{"FC after FC, batch unknown", []feed{f32("w1", 50, 784), f32("b1", 50), f32("w2", 10, 40), f32("b2", 10)},
			func(n *netdef.Net) {
				n.Op("FC", []string{"data", "w1", "b1"}, []string{"h"})
				n.Op("FC", []string{"h", "w2", "b2"}, []string{"y"})
			}, []string{"operator 1 FC", `"h" [? 50]`, `"w2" [10 40]`, "50 columns", "40 inputs"}},
		{"FC bias length", []feed{f32("x", 2, 3), f32("w", 4, 3), f32("b", 5)},
			func(n *netdef.Net) { n.Op("FC", []string{"x", "w", "b"}, []string{"y"}) },
			[]string{"operator 0 FC", `"b" [5]`, "[4]"}},
		{"Conv channels, batch unknown", []feed{f32("w1", 20, 1, 5, 5), f32("b1", 20), f32("w2", 50, 10, 5, 5), f32("b2", 50)},
			func(n *netdef.Net) {
				n.Op("Conv", []string{"data", "w1", "b1"}, []string{"c1"}, netdef.ArgInt("kernel", 5))
				n.Op("Relu", []string{"c1"}, []string{"c1"})
				n.Op("Conv", []string{"c1", "w2", "b2"}, []string{"c2"}, netdef.ArgInt("kernel", 5))
			}, []string{"operator 2 Conv", `"c1" [? 20 ? ?]`, `"w2" [50 10 5 5]`}},
		{"Conv kernel", []feed{f32("x", 1, 3, 8, 8), f32("w", 4, 3, 3, 3)},
			func(n *netdef.Net) { n.Op("Conv", []string{"x", "w"}, []string{"y"}, netdef.ArgInt("kernel", 5)) },
			[]string{"operator 0 Conv", "kernel [5 5]"}},
		{"pool too big", []feed{f32("x", 1, 3, 2, 2)},
			func(n *netdef.Net) {
				n.Op("MaxPool", []string{"x"}, []string{"y"}, netdef.ArgInt("kernel", 3), netdef.ArgInt("stride", 1))
			}, []string{"operator 0 MaxPool", `"x" [1 3 2 2]`}},
		{"SpatialBN scale", []feed{f32("x", 2, 3, 4, 4), f32("s", 4), f32("b", 3), f32("m", 3), f32("v", 3)},
			func(n *netdef.Net) {
				n.Op("SpatialBN", []string{"x", "s", "b", "m", "v"}, []string{"y"}, netdef.ArgInt("is_test", 1))
			}, []string{"operator 0 SpatialBN", `"s" [4]`, "[3]"}},
		{"Concat", []feed{f32("a", 2, 3, 4), f32("b", 2, 3, 5)},
			func(n *netdef.Net) { n.Op("Concat", []string{"a", "b"}, []string{"y", "info"}) },
			[]string{"operator 0 Concat", "dimension 2"}},
		{"Add", []feed{f32("a", 2, 3), f32("b", 4)},
			func(n *netdef.Net) { n.Op("Add", []string{"a", "b"}, []string{"y"}) },
			[]string{"operator 0 Add", `"a" [2 3]`, `"b" [4]`, "broadcast=1"}},
		{"Add legacy broadcast", []feed{f32("a", 2, 3), f32("b", 2)},
			func(n *netdef.Net) { n.Op("Add", []string{"a", "b"}, []string{"y"}, netdef.ArgInt("broadcast", 1)) },
			[]string{"operator 0 Add", "broadcast dimension mismatch"}},
		{"Sum", []feed{f32("a", 2, 3), f32("b", 3, 2)},
			func(n *netdef.Net) { n.Op("Sum", []string{"a", "b"}, []string{"y"}) },
			[]string{"operator 0 Sum", "one shape"}},
		{"SoftmaxWithLoss labels", []feed{f32("x", 4, 10), {"label", []int{5}}},
			func(n *netdef.Net) { n.Op("SoftmaxWithLoss", []string{"x", "label"}, []string{"p", "loss"}) },
			[]string{"operator 0 SoftmaxWithLoss", "want 4 labels"}},
		{"MomentumSGDUpdate gradient", []feed{f32("g", 3), f32("m", 4), f32("lr", 1), f32("w", 4)},
			func(n *netdef.Net) {
				n.Op("MomentumSGDUpdate", []string{"g", "m", "lr", "w"}, []string{"g", "m", "w"})
			}, []string{"operator 0 MomentumSGDUpdate", `"g" [3]`, `"w" [4]`, "one shape"}},
		{"ConvGradient dY", []feed{f32("x", 2, 3, 8, 8), f32("w", 4, 3, 3, 3), f32("dy", 2, 4, 8, 8)},
			func(n *netdef.Net) {
				n.Op("ConvGradient", []string{"x", "w", "dy"}, []string{"dw", "db", "dx"}, netdef.ArgInt("kernel", 3))
			}, []string{"operator 0 ConvGradient", "[2 4 6 6]"}},
		{"Accuracy labels", []feed{f32("x", 4, 10), {"label", []int{3}}},
			func(n *netdef.Net) { n.Op("Accuracy", []string{"x", "label"}, []string{"acc"}) },
			[]string{"operator 0 Accuracy", "[4]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := workspace.New(t.TempDir())
			for _, f := range tc.feeds {
				dtype := blob.Float32
				if f.name == "label" {
					dtype = blob.Int32
				}
				tensor, err := blob.New(dtype, f.dims...)
				if err != nil {
					t.Fatal(err)
				}
				if err := ws.FeedBlob(f.name, tensor); err != nil {
					t.Fatal(err)
				}
			}
			if ws.GetBlob("data") == nil {
				ws.CreateBlob("data")
			}
			n := netdef.NewNet("bad_" + strings.ReplaceAll(tc.name, " ", "_"))
			tc.build(n)
			err := ws.CreateNet(n, false)
			if err == nil {
				t.Fatal("CreateNet succeeded")
			}
			for _, want := range append([]string{n.Name()}, tc.want...) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}

// TestShapeInferenceTooSmallImage infers the zoo nets' shapes from the
// image alone, before any weight is loaded: at 224×224 every net fits, and
// at 32×32 the final 7×7 average pool of GoogLeNet and ResNet-50 gets a 1×1
// map, which shape inference reports, naming the operator and the sizes.
func TestShapeInferenceTooSmallImage(t *testing.T) {
	for _, c := range []struct {
		model string
		size  int
		want  []string // fragments of the error; none: no error
	}{
		{"bvlc_googlenet", 224, nil},
		{"resnet50", 224, nil},
		{"bvlc_googlenet", 32, []string{"AveragePool", "input size 1, kernel 7", "output size of -5"}},
		{"resnet50", 32, []string{"AveragePool", "input size 1", "kernel 7"}},
		{"squeezenet", 32, nil}, // global pooling at the end
	} {
		predict, _, input, _ := zooNet(t, c.model)
		_, err := operators.InferShapes(predict, func(b string) operators.TensorShape {
			if b == input {
				return operators.Shape(blob.Float32, 1, 3, c.size, c.size)
			}
			return operators.TensorShape{Unknown: true}
		})
		switch {
		case c.want == nil && err != nil:
			t.Errorf("%s at %d: %v", c.model, c.size, err)
		case c.want != nil && err == nil:
			t.Errorf("%s at %d: no error", c.model, c.size)
		case c.want != nil:
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s at %d: error %q does not mention %q", c.model, c.size, err, w)
				}
			}
		}
	}
}
