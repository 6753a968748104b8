package brew_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/workspace"
)

// completeNetModel builds model_helper_test.py's model: conv (MSRAFill),
// and with full, spatial_bn, relu, fc and softmax after it.
func completeNetModel(t *testing.T, full bool) *brew.Model {
	m := btModel(t, "test_orig", "input")
	conv := brew.Conv(m, "input", "conv", 3, 16, 3,
		brew.WeightInit(brew.Init("MSRAFill")), brew.Stride(1), brew.Pad(0))
	btNoErr(t, m.Err())
	if !full {
		return m
	}
	conv = brew.SpatialBN(m, conv, "conv_bn", 16, brew.Arg(netdef.ArgFloat("epsilon", 1e-3)), brew.IsTest(false))
	conv = brew.Relu(m, conv, "conv_relu")
	pred := brew.FC(m, conv, "pred", 16*3*3, 10)
	brew.Softmax(m, pred, "softmax")
	btNoErr(t, m.Err())
	return m
}

func TestGetCompleteNetType(t *testing.T) {
	m := completeNetModel(t, false)
	m.Net.Proto().Type = proto.String("async_scheduling")
	complete := m.CompleteNet()
	m2 := brew.NewModel("test_new")
	m2.ConstructInitTrainNetFromNet(complete)
	for _, n := range []*netdef.Net{m2.Net, m2.InitNet} {
		if got := n.Proto().GetType(); got != "async_scheduling" {
			t.Errorf("net %s type = %q, want async_scheduling", n.Name(), got)
		}
	}
}

func TestGetCompleteNet(t *testing.T) {
	m := completeNetModel(t, true)
	complete := m.CompleteNet()
	if got, want := len(complete.Proto().Op), len(m.InitNet.Proto().Op)+len(m.Net.Proto().Op); got != want {
		t.Fatalf("complete net has %d ops, want %d", got, want)
	}
	m2 := brew.NewModel("test_new")
	m2.ConstructInitTrainNetFromNet(complete)

	wantInit := m.InitNet.Proto().Op
	gotInit := m2.InitNet.Proto().Op
	if len(gotInit) != len(wantInit) {
		t.Fatalf("init net has %d ops, want %d", len(gotInit), len(wantInit))
	}
	for i, o := range wantInit {
		o = proto.Clone(o).(*netdef.OperatorDef)
		o.DebugInfo = proto.String(o.GetDebugInfo() + "/param_init_net")
		if diff := cmp.Diff(o, gotInit[i], protocmp.Transform()); diff != "" {
			t.Errorf("init op %d (-want +got):\n%s", i, diff)
		}
	}
	if diff := cmp.Diff(m.Net.Proto().Op, m2.Net.Proto().Op, protocmp.Transform()); diff != "" {
		t.Errorf("net ops (-want +got):\n%s", diff)
	}
	sorted := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
	if got, want := sorted(m2.Net.ExternalInputs()), sorted(m.Net.ExternalInputs()); !slices.Equal(got, want) {
		t.Errorf("external inputs = %v, want %v", got, want)
	}
	if got := m2.InitNet.ExternalInputs(); len(got) != 0 {
		t.Errorf("init net external inputs = %v, want none", got)
	}

	// The complete net runs on its own: it initializes and then computes.
	ws := workspace.New(t.TempDir())
	btFeed(t, ws, "input", btFilled(0.5, 2, 3, 5, 5))
	btNoErr(t, ws.RunNetOnce(complete))
	if got := btShape(btFetch(t, ws, "softmax")); !slices.Equal(got, []int{2, 10}) {
		t.Errorf("softmax shape = %v, want [2 10]", got)
	}
}

// TestExtractPredictorNet ports core_test.py's test_extract_simple (with a
// DB input instead of image_input).
func TestExtractPredictorNet(t *testing.T) {
	m, err := brew.NewModelWith("test", brew.ModelOptions{ArgScope: []brew.Option{brew.Order("NCHW")}})
	btNoErr(t, err)
	outs := brew.DBInput(m, names("xx/data", "label"), 8, "images.db", "minidb")
	cnv := brew.Conv(m, outs[0], "cnv", 32, 32, 4)
	a := brew.FC(m, cnv, "a", 100, 200)
	pred := brew.FC(m, a, "pred", 200, 5)
	brew.Softmax(m, pred, "softmax")
	btNoErr(t, m.Err())

	predict, export, err := brew.ExtractPredictorNet(m.Net.Proto(), names("xx/data"), names("pred"),
		brew.PredictorOptions{Renames: map[string]string{"xx/data": "image"}})
	btNoErr(t, err)
	def := predict.Proto()
	var types []string
	for _, o := range def.Op {
		types = append(types, o.GetType())
		if slices.Contains(o.Input, "xx/data") {
			t.Errorf("op %s still reads xx/data", o.GetType())
		}
	}
	if !slices.Equal(types, names("Conv", "FC", "FC")) {
		t.Errorf("predict ops = %v, want [Conv FC FC]", types)
	}
	if got := def.Op[0].Input[0]; got != "image" {
		t.Errorf("first input = %q, want image", got)
	}
	params := m.ParamsIn("")
	if !slices.Equal(export, params) {
		t.Errorf("export blobs = %v, want the params %v", export, params)
	}
	if want := append(names("image"), params...); !slices.Equal(def.ExternalInput, want) {
		t.Errorf("external inputs = %v, want %v", def.ExternalInput, want)
	}
	if !slices.Equal(def.ExternalOutput, names("pred")) {
		t.Errorf("external outputs = %v, want [pred]", def.ExternalOutput)
	}
	if !strings.HasPrefix(predict.Name(), m.Net.Name()+"_predict") {
		t.Errorf("predict net name = %q", predict.Name())
	}
	if m.Net.Proto().Op[1].Input[0] != "xx/data" {
		t.Error("ExtractPredictorNet changed the source net")
	}

	// With a device, every op gets it.
	predict, _, err = brew.ExtractPredictorNet(m.Net.Proto(), names("xx/data"), names("pred"),
		brew.PredictorOptions{Device: devicescope.CPUDevice(2)})
	btNoErr(t, err)
	for _, o := range predict.Proto().Op {
		if d := o.GetDeviceOption(); d.Type() != netdef.CPU || d.GetDeviceId() != 2 {
			t.Errorf("op %s device = %v, want cpu 2", o.GetType(), d)
		}
	}
	// A disabled input removes its branch.
	predict, _, err = brew.ExtractPredictorNet(m.Net.Proto(), names("xx/data"), names("pred"),
		brew.PredictorOptions{DisabledInputs: names("a_w")})
	btNoErr(t, err)
	if n := len(predict.Proto().Op); n != 1 {
		t.Errorf("with a_w disabled: %d ops, want 1 (Conv)", n)
	}
}

func TestExtractPredictorNetErrors(t *testing.T) {
	m := btModel(t, "train", "data")
	bn := brew.SpatialBN(m, "data", "bn", 3, brew.IsTest(false))
	brew.FC(m, bn, "pred", 3, 2)
	btNoErr(t, m.Err())
	for _, c := range []struct {
		name          string
		inputs, outs  []string
		wantInMessage string
	}{
		{"train model", names("data"), names("pred"), "is_test=0"},
		{"no reader", names("nothing"), names("pred"), "no operator reads"},
		{"no writer", names("data"), names("nothing"), "no operator writes"},
	} {
		_, _, err := brew.ExtractPredictorNet(m.Net.Proto(), c.inputs, c.outs, brew.PredictorOptions{})
		if err == nil || !strings.Contains(err.Error(), c.wantInMessage) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.wantInMessage)
		}
	}
}

// TestNoInitParams checks init_params=False: parameters are recorded but
// the init net stays empty, and the net runs on fed parameters.
func TestNoInitParams(t *testing.T) {
	m, err := brew.NewModelWith("noinit", brew.ModelOptions{NoInitParams: true})
	btNoErr(t, err)
	m.AddExternalInputs("x")
	fc := brew.FC(m, "x", "fc", 2, 1)
	btNoErr(t, m.Err())
	if n := len(m.InitNet.Proto().Op); n != 0 {
		t.Errorf("init net has %d ops, want none", n)
	}
	if got := m.ParamsIn(""); !slices.Equal(got, names("fc_w", "fc_b")) {
		t.Errorf("params = %v", got)
	}
	if got := m.ParamInfo("fc_w").Shape; !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("fc_w shape = %v", got)
	}
	ws := workspace.New(t.TempDir())
	btFeed(t, ws, "x", blob.MustFromSlice([]float32{1, 2}, 1, 2))
	btFeed(t, ws, "fc_w", blob.MustFromSlice([]float32{3, 4}, 1, 2))
	btFeed(t, ws, "fc_b", blob.MustFromSlice([]float32{5}, 1))
	btNoErr(t, ws.RunNetOnce(m.Net))
	if got := blob.Data[float32](btFetch(t, ws, fc)); got[0] != 1*3+2*4+5 {
		t.Errorf("fc = %v, want 16", got)
	}
}

// TestParamModelShares checks Caffe2's param_model: a test model built on
// a train model adds no init operators for the shared parameters and reads
// the same blobs.
func TestParamModelShares(t *testing.T) {
	train := btModel(t, "train", "data")
	build := func(m *brew.Model, test bool) string {
		fc := brew.FC(m, "data", "fc", 4, 3)
		bn := brew.SpatialBN(m, fc, "bn", 3, brew.IsTest(test))
		out := brew.Dropout(m, bn, "drop", brew.IsTest(test))
		btNoErr(t, m.Err())
		return out
	}
	build(train, false)
	nInit := len(train.InitNet.Proto().Op)
	test, err := brew.NewModelWith("test", brew.ModelOptions{ParamModel: train})
	btNoErr(t, err)
	test.AddExternalInputs("data")
	btNoErr(t, test.Err())
	build(test, true)
	if n := len(train.InitNet.Proto().Op); n != nInit {
		t.Errorf("the test model added %d init ops", n-nInit)
	}
	if got, want := test.AllParamsIn(""), train.AllParamsIn(""); !slices.Equal(got, want) {
		t.Errorf("test params %v, train params %v", got, want)
	}
	bn := test.Net.Proto().Op[1]
	if !slices.Equal(bn.Output, names("bn")) {
		t.Errorf("test SpatialBN outputs = %v, want [bn]", bn.Output)
	}
	// A shape clash with a shared parameter is an error.
	brew.FC(test, "data", "fc", 5, 3)
	if err := test.Err(); err == nil || !strings.Contains(err.Error(), "fc_w") {
		t.Errorf("FC with another shape on a shared parameter: %v", err)
	}
}

// TestModelOp checks Model.Op, Caffe2's model.<Op>(…): scoping, external
// inputs and the known-safe operator list.
func TestModelOp(t *testing.T) {
	m := brew.NewModel("ops")
	devicescope.NameScope("s", func() {
		o := m.Op("Relu", names("x"), names("y"))
		btNoErr(t, m.Err())
		if !slices.Equal(o.Input, names("s/x")) || !slices.Equal(o.Output, names("s/y")) {
			t.Errorf("Relu op %v → %v, want s/x → s/y", o.Input, o.Output)
		}
	})
	if got := m.Net.ExternalInputs(); !slices.Equal(got, names("s/x")) {
		t.Errorf("external inputs = %v, want [s/x]", got)
	}
	if o := m.Op("NoSuchOperator", nil, names("z")); o != nil || m.Err() == nil || !strings.Contains(m.Err().Error(), "NoSuchOperator") {
		t.Errorf("unregistered op: %v, %v", o, m.Err())
	}
	strict, err := brew.NewModelWith("strict", brew.ModelOptions{KnownOpsOnly: true})
	btNoErr(t, err)
	if strict.Op("Softmax", names("x"), names("y")); strict.Err() != nil {
		t.Errorf("Softmax on a KnownOpsOnly model: %v", strict.Err())
	}
	if strict.Op("Relu", names("x"), names("y")); strict.Err() == nil || !strings.Contains(strict.Err().Error(), "not known to be safe") {
		t.Errorf("Relu on a KnownOpsOnly model: %v", strict.Err())
	}
}
