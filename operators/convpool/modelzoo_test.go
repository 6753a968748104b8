package convpool

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// zooChannels is the number of output channels given to every convolution
// (the predict nets do not say; their weights are in init nets not copied
// here). The spatial sizes, which the arguments act on, are the real ones.
const zooChannels = 4

// argInt returns an integer argument of def and whether it is given.
func argInt(def *netdef.OperatorDef, name string) (int, bool) {
	a := netdef.FindArg(def.Arg, name)
	if a == nil || a.I == nil {
		return 0, false
	}
	return int(a.GetI()), true
}

// pair reads a 2-D argument given as name or as name_h and name_w (the
// forms the model-zoo nets use), or returns def.
func pair(op *netdef.OperatorDef, name string, def int) (int, int) {
	if v, ok := argInt(op, name); ok {
		return v, v
	}
	h, okh := argInt(op, name+"_h")
	w, okw := argInt(op, name+"_w")
	if okh && okw {
		return h, w
	}
	return def, def
}

// TestModelZooArguments runs every Conv, MaxPool and AveragePool of the
// Caffe2 model-zoo predict nets (squeezenet, resnet50, bvlc_googlenet,
// densenet121; the repository's testdata/caffe2-models) on random inputs of
// the spatial shapes that propagate from value_info through the net, once
// per distinct argument set and input shape, and compares each output with a
// direct reference. Shapes of the other operators propagate by their simple rules.
func TestModelZooArguments(t *testing.T) {
	ran := 0
	for _, model := range []string{"squeezenet", "resnet50", "bvlc_googlenet", "densenet121"} {
		dir := filepath.Join("..", "..", "testdata", "caffe2-models", model)
		net, err := netdef.ReadNetDef(filepath.Join(dir, "predict_net.pb"))
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(filepath.Join(dir, "value_info.json"))
		if err != nil {
			t.Fatal(err)
		}
		var info map[string][2]json.RawMessage
		if err := json.Unmarshal(raw, &info); err != nil {
			t.Fatal(err)
		}
		shapes := map[string][]int{}
		for name, v := range info {
			var s []int
			if err := json.Unmarshal(v[1], &s); err != nil {
				t.Fatal(err)
			}
			shapes[name] = s
		}
		seen := map[string][]int{}
		for i, def := range net.Op {
			in := func(k int) []int {
				s, ok := shapes[def.Input[k]]
				if !ok {
					t.Fatalf("%s op %d %s: no shape for input %q", model, i, def.GetType(), def.Input[k])
				}
				return s
			}
			var out []int
			switch typ := def.GetType(); typ {
			case "Conv", "MaxPool", "AveragePool":
				x := in(0)
				key := fmt.Sprintf("%s %v %d %v", typ, x, len(def.Input), def.Arg)
				if s, ok := seen[key]; ok {
					out = s
					break
				}
				out = runZooOp(t, model, i, def, x)
				seen[key] = out
				ran++
			case "Relu", "Dropout", "LRN", "SpatialBN", "Softmax", "Sum", "Add", "Mul":
				out = in(0)
			case "Concat":
				out = slices.Clone(in(0))
				for k := 1; k < len(def.Input); k++ {
					out[1] += in(k)[1]
				}
				if len(def.Output) > 1 {
					shapes[def.Output[1]] = []int{len(def.Input)}
				}
			case "FC":
				out = []int{in(0)[0], zooChannels}
			default:
				t.Fatalf("%s op %d: no shape rule for %s", model, i, typ)
			}
			shapes[def.Output[0]] = out
		}
	}
	t.Logf("%d distinct Conv and pool operators run", ran)
	if ran < 20 {
		t.Errorf("ran %d distinct operators, want the model zoo's", ran)
	}
}

// runZooOp runs one model-zoo Conv or pool on random inputs with X of shape
// x, checks it against the direct references, and returns Y's shape.
func runZooOp(t *testing.T, model string, i int, def *netdef.OperatorDef, x []int) []int {
	t.Helper()
	rr := newRand(uint64(i) + 1)
	name := fmt.Sprintf("%s op %d %s %v on %v", model, i, def.GetType(), def.Arg, x)
	if a := netdef.FindArg(def.Arg, "order"); a != nil && string(a.S) != "NCHW" {
		t.Fatalf("%s: order %s: the references are NCHW", name, a.S)
	}
	f := blob.Float32
	xt := randTensor(rr, f, x...)
	kh, kw := pair(def, "kernel", 0)
	sh, sw := pair(def, "stride", 1)
	p, _ := argInt(def, "pad")
	global, _ := argInt(def, "global_pooling")
	if global != 0 {
		kh, kw = x[2], x[3]
	}
	if def.GetType() == "Conv" {
		n, c := x[0], x[1]
		inputs := []*blob.Tensor{xt, randTensor(rr, f, zooChannels, c, kh, kw)}
		var b []float64
		if len(def.Input) == 3 {
			inputs = append(inputs, randTensor(rr, f, zooChannels))
			b = inputs[2].AsFloat64s()
		}
		y := optest.MustRunOp(t, def, inputs...)[0]
		oh, ow := y.Dim(2), y.Dim(3)
		if wantH, wantW := (x[2]+2*p-kh)/sh+1, (x[3]+2*p-kw)/sw+1; oh != wantH || ow != wantW {
			t.Fatalf("%s: output %v, want spatial %d×%d", name, y.Dims(), wantH, wantW)
		}
		want := refConv2D(xt.AsFloat64s(), inputs[1].AsFloat64s(), b, n, c, x[2], x[3], zooChannels, kh, kw, 1, sh, sw, 1, 1, p, p, oh, ow)
		checkTensor(t, name, y, blob.MustFromSlice(want, n, zooChannels, oh, ow), 1e-4)
		return y.Dims()
	}
	y := optest.MustRunOp(t, def, xt)[0]
	if !slices.Equal(y.Dims()[:2], x[:2]) {
		t.Fatalf("%s: output %v", name, y.Dims())
	}
	oh, ow := y.Dim(2), y.Dim(3)
	want := refPool2D(xt.AsFloat64s(), x[0], x[1], x[2], x[3], kh, kw, sh, sw, p, p, oh, ow, def.GetType() == "MaxPool", false)
	checkTensor(t, name, y, blob.MustFromSlice(want, y.Dims()...), 1e-5)
	return y.Dims()
}
