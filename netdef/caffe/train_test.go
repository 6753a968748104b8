package caffe_test

import (
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/netdef/caffe"
)

// TestConvertTrainPhaseFillers instantiates LeNet's training net without
// weights: the parameters come from the prototxt's fillers (xavier
// weights, constant biases) with Caffe's scale sqrt(3/fan_in), the bias
// multipliers are the prototxt's (lr_mult 2), and the TEST-only Accuracy
// layer is left out.
func TestConvertTrainPhaseFillers(t *testing.T) {
	net, _ := readLeNet(t, "lenet_train_test.prototxt")
	conv, err := caffe.Convert(net, nil, caffe.InPhase(caffe.Phase_TRAIN), caffe.FromFillers(), caffe.InputShape("data", 64, 1, 28, 28))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(conv.Outputs, []string{"loss"}) {
		t.Errorf("outputs %v, want [loss]", conv.Outputs)
	}
	fills := map[string]*netdef.OperatorDef{}
	for _, op := range conv.Init.Op {
		fills[op.Output[0]] = op
	}
	// fan_in: conv1 1·5·5, conv2 20·5·5, ip1 50·4·4, ip2 500.
	for name, fanIn := range map[string]float64{"conv1_w": 25, "conv2_w": 500, "ip1_w": 800, "ip2_w": 500} {
		op := fills[name]
		if op == nil || op.GetType() != "UniformFill" {
			t.Errorf("%s: init %v, want UniformFill", name, op)
			continue
		}
		want := math.Sqrt(3 / fanIn)
		lo, hi := netdef.FindArg(op.Arg, "min").GetF(), netdef.FindArg(op.Arg, "max").GetF()
		if math.Abs(float64(hi)-want) > 1e-6 || lo != -hi {
			t.Errorf("%s: UniformFill [%g, %g], want ±%g", name, lo, hi, want)
		}
	}
	for _, name := range []string{"conv1_b", "conv2_b", "ip1_b", "ip2_b"} {
		if op := fills[name]; op == nil || op.GetType() != "ConstantFill" || netdef.FindArg(op.Arg, "value").GetF() != 0 {
			t.Errorf("%s: init %v, want ConstantFill 0", name, op)
		}
	}
	var learned []string
	var lr, decay []float32
	for _, l := range conv.Layers {
		if l.Type == "Accuracy" {
			t.Errorf("layer %s (Accuracy, TEST only) is part of the TRAIN net", l.Name)
		}
		learned = append(learned, l.Learned...)
		lr = append(lr, l.LRMult...)
		decay = append(decay, l.DecayMult...)
	}
	if want := []string{"conv1_w", "conv1_b", "conv2_w", "conv2_b", "ip1_w", "ip1_b", "ip2_w", "ip2_b"}; !slices.Equal(learned, want) {
		t.Errorf("learned %v, want %v", learned, want)
	}
	if want := []float32{1, 2, 1, 2, 1, 2, 1, 2}; !slices.Equal(lr, want) {
		t.Errorf("lr_mult %v, want %v", lr, want)
	}
	if want := []float32{1, 1, 1, 1, 1, 1, 1, 1}; !slices.Equal(decay, want) {
		t.Errorf("decay_mult %v, want %v", decay, want)
	}
}

// TestConvertFillerErrors checks what cannot be filled or trained.
func TestConvertFillerErrors(t *testing.T) {
	ip := func(filler string) *caffe.NetParameter {
		net, err := caffe.ParseNet([]byte(`
layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 } } }
layer { name: "fc" type: "InnerProduct" bottom: "x" top: "y" inner_product_param { num_output: 4 ` + filler + ` } }
layer { name: "drop" type: "Dropout" bottom: "y" top: "y" }`))
		if err != nil {
			t.Fatal(err)
		}
		return net
	}
	for _, tc := range []struct {
		name, filler, want string
		unsupported        bool
	}{
		{"positive_unitball", `weight_filler { type: "positive_unitball" }`, `layer "fc" (InnerProduct): weights filler: filler type "positive_unitball" is not supported`, true},
		{"sparse gaussian", `weight_filler { type: "gaussian" sparse: 2 }`, "sparse gaussian filler (sparse 2) is not supported", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := caffe.Convert(ip(tc.filler), nil, caffe.FromFillers())
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, caffe.ErrUnsupported) != tc.unsupported {
				t.Fatalf("error %v, want one containing %q (ErrUnsupported %v)", err, tc.want, tc.unsupported)
			}
		})
	}
	if _, err := caffe.Convert(ip(""), nil); err == nil || !strings.Contains(err.Error(), "no weights") {
		t.Errorf("no weights without FromFillers: error %v", err)
	}
	// msra with FAN_OUT: the 4×3 weight has fan-out 12/3 = 4.
	conv, err := caffe.Convert(ip(`weight_filler { type: "msra" variance_norm: FAN_OUT } bias_filler { type: "uniform" min: -1 max: 2 }`), nil,
		caffe.InPhase(caffe.Phase_TRAIN), caffe.FromFillers())
	if err != nil {
		t.Fatal(err)
	}
	w, b := conv.Init.Op[0], conv.Init.Op[1]
	if w.GetType() != "GaussianFill" || math.Abs(float64(netdef.FindArg(w.Arg, "std").GetF())-math.Sqrt(2.0/4)) > 1e-6 {
		t.Errorf("msra FAN_OUT: %v, want GaussianFill std sqrt(2/4)", w)
	}
	if b.GetType() != "UniformFill" || netdef.FindArg(b.Arg, "min").GetF() != -1 || netdef.FindArg(b.Arg, "max").GetF() != 2 {
		t.Errorf("uniform bias: %v", b)
	}
	if d := conv.Predict.Op[len(conv.Predict.Op)-1]; d.GetType() != "Dropout" || netdef.FindArg(d.Arg, "is_test").GetI() != 0 {
		t.Errorf("TRAIN-phase dropout: %v, want is_test 0", d)
	}
}

// TestConvertTrainPhaseUnsupported: training-time augmentation and
// BatchNorm with batch statistics are reported, naming the layer.
func TestConvertTrainPhaseUnsupported(t *testing.T) {
	for _, tc := range []struct{ net, want string }{
		{`layer { name: "d" type: "Data" top: "x" top: "l" transform_param { mirror: true } }`, `layer "d" (Data): the training-time augmentation`},
		{`layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 } } }
layer { name: "bn" type: "BatchNorm" bottom: "x" top: "y" }`, `layer "bn" (BatchNorm): training with the batch's statistics`},
	} {
		net, err := caffe.ParseNet([]byte(tc.net))
		if err != nil {
			t.Fatal(err)
		}
		_, err = caffe.Convert(net, nil, caffe.InPhase(caffe.Phase_TRAIN), caffe.FromFillers())
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, caffe.ErrUnsupported) {
			t.Errorf("error %v, want ErrUnsupported containing %q", err, tc.want)
		}
	}
}

func TestReadSolver(t *testing.T) {
	s, err := caffe.ReadSolver(filepath.Join(testdata, "lenet", "lenet_solver.prototxt"))
	if err != nil {
		t.Fatal(err)
	}
	if s.GetNet() != "examples/mnist/lenet_train_test.prototxt" || s.GetBaseLr() != 0.01 || s.GetLrPolicy() != "inv" ||
		s.GetGamma() != 0.0001 || s.GetPower() != 0.75 || s.GetMaxIter() != 10000 || s.GetTestIter()[0] != 100 ||
		s.GetSnapshot() != 5000 || s.GetSolverMode() != caffe.SolverParameter_GPU {
		t.Errorf("solver %v", s)
	}
	if _, err := caffe.ParseSolver([]byte("base_lr: x")); err == nil || !strings.Contains(err.Error(), "caffe solver") {
		t.Errorf("bad solver: error %v", err)
	}
}

func TestDatumValues(t *testing.T) {
	d := &caffe.Datum{Channels: proto.Int32(1), Height: proto.Int32(2), Width: proto.Int32(2), Data: []byte{0, 1, 128, 255}, Label: proto.Int32(7)}
	raw, err := proto.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := caffe.ParseDatum(raw)
	if err != nil {
		t.Fatal(err)
	}
	v, err := caffe.DatumValues(got)
	if err != nil || !slices.Equal(v, []float32{0, 1, 128, 255}) || got.GetLabel() != 7 {
		t.Errorf("values %v label %d err %v", v, got.GetLabel(), err)
	}
	for _, tc := range []struct {
		d    *caffe.Datum
		want string
	}{
		{&caffe.Datum{Channels: proto.Int32(1), Height: proto.Int32(2), Width: proto.Int32(2), FloatData: []float32{1, 2, 3}}, "3 values for shape 1×2×2"},
		{&caffe.Datum{Encoded: proto.Bool(true)}, "encoded"},
		{&caffe.Datum{}, "not positive"},
	} {
		if _, err := caffe.DatumValues(tc.d); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("DatumValues(%v): error %v, want %q", tc.d, err, tc.want)
		}
	}
	if _, err := caffe.ParseDatum([]byte{0xff}); err == nil {
		t.Error("ParseDatum of garbage: no error")
	}
}
