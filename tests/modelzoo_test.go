package tests

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/workspace"
)

// modelZooDir holds the Caffe2 model-zoo predict nets with their
// value_info.json (input name and shape) and licence.
const modelZooDir = "../testdata/caffe2-models"

// zooWidth is the number of output channels given to every Conv and FC but
// the classifier: the zoo's trained weights are not available, so the
// parameters are made up, and narrow layers keep the test fast. Every
// operator still runs on the real spatial shapes and arguments.
const zooWidth = 8

// zooClasses is the number of ImageNet classes the classifier outputs.
const zooClasses = 1000

// TestModelZooNetsRunEndToEnd runs each model-zoo predict net the way a
// user would with an init net: it derives an init net for the net's
// parameters (XavierFill weights, constant biases and batch-norm
// statistics), runs it, feeds a random image of the value_info shape,
// creates the predict net with the simple and the dag executor and runs it.
// The output must be 1000 finite class scores (a probability distribution
// where the net ends in Softmax) and both executors must agree.
func TestModelZooNetsRunEndToEnd(t *testing.T) {
	for _, model := range []string{"squeezenet", "resnet50", "bvlc_googlenet", "densenet121"} {
		t.Run(model, func(t *testing.T) {
			predict, init, input, x := zooNet(t, model)
			var outputs [][]float32
			for _, executor := range []string{"simple", "dag"} {
				ws := workspace.New(t.TempDir())
				if err := ws.RunNetOnce(init); err != nil {
					t.Fatalf("init net: %v", err)
				}
				if err := ws.FeedBlob(input, x); err != nil {
					t.Fatal(err)
				}
				net := netdef.NetFromProto(predict).Clone(model+"_"+executor, nil, nil).Proto()
				net.Type = &executor
				if err := ws.CreateNet(net, false); err != nil {
					t.Fatalf("%s executor: CreateNet: %v", executor, err)
				}
				if err := ws.RunNet(net.GetName(), 1); err != nil {
					t.Fatalf("%s executor: RunNet: %v", executor, err)
				}
				out := predict.Op[len(predict.Op)-1].Output[0]
				y, err := ws.FetchBlob(out)
				if err != nil {
					t.Fatal(err)
				}
				probs := blob.Data[float32](y)
				if len(probs) != zooClasses {
					t.Fatalf("%s executor: output %q has shape %v, want %d class scores", executor, out, y.Dims(), zooClasses)
				}
				// densenet121 ends at its classifier Conv; the others end in a
				// Softmax.
				softmax := predict.Op[len(predict.Op)-1].GetType() == "Softmax"
				sum := 0.0
				for _, p := range probs {
					if math.IsNaN(float64(p)) || math.IsInf(float64(p), 0) || softmax && (p < 0 || p > 1) {
						t.Fatalf("%s executor: score %v", executor, p)
					}
					sum += float64(p)
				}
				if softmax && math.Abs(sum-1) > 1e-4 {
					t.Fatalf("%s executor: probabilities sum to %v", executor, sum)
				}
				outputs = append(outputs, probs)
				ws.Close()
			}
			for i := range outputs[0] {
				if d := math.Abs(float64(outputs[0][i] - outputs[1][i])); d > 1e-6 {
					t.Fatalf("class %d: simple executor %v, dag executor %v", i, outputs[0][i], outputs[1][i])
				}
			}
			t.Logf("%s: %d operators, %d initialized blobs", model, len(predict.Op), len(init.Op))
		})
	}
}

// zooNet reads the predict net of a model-zoo model and returns it with a
// derived init net, the input's name and a random image of its shape.
func zooNet(t *testing.T, model string) (predict, init *netdef.NetDef, input string, x *blob.Tensor) {
	t.Helper()
	dir := filepath.Join(modelZooDir, model)
	predict, err := netdef.ReadNetDef(filepath.Join(dir, "predict_net.pb"))
	if err != nil {
		t.Fatal(err)
	}
	input, shape := readValueInfo(t, filepath.Join(dir, "value_info.json"))
	rng := rand.New(rand.NewPCG(1, uint64(len(model))))
	image := make([]float32, shapeSize(shape))
	for i := range image {
		image[i] = rng.Float32()*2 - 1
	}
	x = blob.MustFromSlice(image, shape...)
	if init, err = deriveInitNet(predict, input, x); err != nil {
		t.Fatal(err)
	}
	return predict, init, input, x
}

// readValueInfo returns the input blob and its shape from a model-zoo
// value_info.json ({"data": [elem_type, [dims…]]}).
func readValueInfo(t *testing.T, path string) (string, []int) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var info map[string][2]json.RawMessage
	if err := json.Unmarshal(raw, &info); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(info) != 1 {
		t.Fatalf("%s: %d inputs, want 1", path, len(info))
	}
	for name, v := range info {
		var dims []int
		if err := json.Unmarshal(v[1], &dims); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return name, dims
	}
	panic("unreachable")
}

func shapeSize(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}

// deriveInitNet walks predict operator by operator in a scratch workspace,
// creating each parameter (an external input other than input) when an
// operator first reads it, with a shape that fits the tensor the operator
// actually receives, and returns an init net of GivenTensorFill operators
// that recreates them, as the model zoo's init_net.pb files do.
func deriveInitNet(predict *netdef.NetDef, input string, x *blob.Tensor) (*netdef.NetDef, error) {
	classifier := -1
	for i, op := range predict.Op {
		if op.GetType() == "Conv" || op.GetType() == "FC" {
			classifier = i
		}
	}
	ws := workspace.New("")
	defer ws.Close()
	if err := ws.FeedBlob(input, x); err != nil {
		return nil, err
	}
	init := netdef.NewNet(predict.GetName() + "_init")
	for i, op := range predict.Op {
		width := int64(zooWidth)
		if i == classifier {
			width = zooClasses
		}
		for k, name := range op.Input {
			if ws.HasBlob(name) {
				continue
			}
			fill, err := paramFill(ws, op, k, width)
			if err != nil {
				return nil, fmt.Errorf("op %d (%s): input %q: %w", i, op.GetType(), name, err)
			}
			fill.Output = []string{name}
			if err := ws.RunOperatorOnce(fill); err != nil {
				return nil, err
			}
			// The random fills become GivenTensorFill so that every run of
			// the init net makes the same parameters.
			p, err := ws.FetchBlob(name)
			if err != nil {
				return nil, err
			}
			init.Op("GivenTensorFill", nil, []string{name},
				netdef.ArgInts("shape", int64s(p.Dims())...), netdef.ArgFloats("values", blob.Data[float32](p)...))
		}
		if err := ws.RunOperatorOnce(op); err != nil {
			return nil, fmt.Errorf("op %d (%s): %w", i, op.GetType(), err)
		}
	}
	return init.Proto(), nil
}

// paramFill returns the fill operator (without output) for input k of op,
// shaped after op's data input.
func paramFill(ws *workspace.Workspace, op *netdef.OperatorDef, k int, width int64) (*netdef.OperatorDef, error) {
	x, err := ws.FetchBlob(op.Input[0])
	if err != nil {
		return nil, err
	}
	dims := x.Dims()
	channels := int64(0)
	if len(dims) > 1 {
		channels = int64(dims[1])
	}
	xavier := func(shape ...int64) *netdef.OperatorDef {
		return netdef.NewOperator("XavierFill", nil, nil, netdef.ArgInts("shape", shape...))
	}
	constant := func(v float32, shape ...int64) *netdef.OperatorDef {
		return netdef.NewOperator("ConstantFill", nil, nil, netdef.ArgInts("shape", shape...), netdef.ArgFloat("value", v))
	}
	switch {
	case op.GetType() == "Conv" && k == 1:
		kh, kw := convKernel(op)
		group := int64(1)
		if a := netdef.FindArg(op.Arg, "group"); a != nil {
			group = a.GetI()
		}
		return xavier(width, channels/group, kh, kw), nil
	case op.GetType() == "FC" && k == 1:
		return xavier(width, int64(x.Size()/dims[0])), nil
	case (op.GetType() == "Conv" || op.GetType() == "FC") && k == 2:
		return constant(0.01, width), nil
	case op.GetType() == "Mul" && k == 1:
		return constant(1, channels), nil
	case op.GetType() == "Add" && k == 1:
		return constant(0, channels), nil
	case op.GetType() == "SpatialBN" && k >= 1 && k <= 4:
		// scale, bias, running mean, running variance
		return constant([]float32{1, 0, 0, 1}[k-1], channels), nil
	}
	return nil, fmt.Errorf("no rule to make it")
}

func int64s(dims []int) []int64 {
	out := make([]int64, len(dims))
	for i, d := range dims {
		out[i] = int64(d)
	}
	return out
}

// convKernel reads a Conv's kernel size given as kernel or kernel_h/kernel_w.
func convKernel(op *netdef.OperatorDef) (int64, int64) {
	if a := netdef.FindArg(op.Arg, "kernel"); a != nil {
		return a.GetI(), a.GetI()
	}
	return netdef.FindArg(op.Arg, "kernel_h").GetI(), netdef.FindArg(op.Arg, "kernel_w").GetI()
}
