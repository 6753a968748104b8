package brew_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
)

// op is a short spelling of netdef.NewOperator for expected operators.
func op(typ string, ins, outs []string, args ...*netdef.Argument) *netdef.OperatorDef {
	return netdef.NewOperator(typ, ins, outs, args...)
}

func names(n ...string) []string { return n }

var (
	nchw = netdef.ArgString("order", "NCHW")
	nhwc = netdef.ArgString("order", "NHWC")
)

func shape(d ...int64) *netdef.Argument { return netdef.ArgInts("shape", d...) }

func value(v float32) *netdef.Argument { return netdef.ArgFloat("value", v) }

func withEngine(o *netdef.OperatorDef, e string) *netdef.OperatorDef {
	o.Engine = &e
	return o
}

func withDevice(o *netdef.OperatorDef, d *netdef.DeviceOption) *netdef.OperatorDef {
	o.DeviceOption = d
	return o
}

// TestHelpers checks, for each helper, the operators it adds to the init
// net and the net: types, blob names, parameter shapes, initializers,
// arguments and their order.
func TestHelpers(t *testing.T) {
	tests := []struct {
		name     string
		build    func(m *brew.Model) string
		wantOut  string
		wantInit []*netdef.OperatorDef
		wantNet  []*netdef.OperatorDef
		// params, computed params, weights and biases, if checked.
		params, computed, weights, biases []string
	}{
		{
			name:    "FC",
			build:   func(m *brew.Model) string { return brew.FC(m, "x", "fc", 4, 3, brew.Axis(1)) },
			wantOut: "fc",
			wantInit: []*netdef.OperatorDef{
				op("XavierFill", nil, names("fc_w"), shape(3, 4)),
				op("ConstantFill", nil, names("fc_b"), shape(3)),
			},
			wantNet: []*netdef.OperatorDef{op("FC", names("x", "fc_w", "fc_b"), names("fc"), nchw, netdef.ArgInt("axis", 1))},
			params:  names("fc_w", "fc_b"), weights: names("fc_w"), biases: names("fc_b"),
		},
		{
			name: "FC initializers, cudnn arguments dropped",
			build: func(m *brew.Model) string {
				return brew.FC(m, "x", "fc", 4, 3,
					brew.WeightInit(brew.Init("ConstantFill", value(1))),
					brew.BiasInit(brew.Init("GaussianFill", netdef.ArgFloat("std", 0.5))),
					brew.Arg(netdef.ArgBool("use_cudnn", true)))
			},
			wantOut: "fc",
			wantInit: []*netdef.OperatorDef{
				op("ConstantFill", nil, names("fc_w"), shape(3, 4), value(1)),
				op("GaussianFill", nil, names("fc_b"), shape(3), netdef.ArgFloat("std", 0.5)),
			},
			wantNet: []*netdef.OperatorDef{op("FC", names("x", "fc_w", "fc_b"), names("fc"), nchw)},
		},
		{
			name: "Conv with group, stride and pad",
			build: func(m *brew.Model) string {
				return brew.Conv(m, "x", "c", 6, 8, 3, brew.Group(2), brew.Stride(2), brew.Pad(1))
			},
			wantOut: "c",
			wantInit: []*netdef.OperatorDef{
				op("XavierFill", nil, names("c_w"), shape(8, 3, 3, 3)),
				op("ConstantFill", nil, names("c_b"), shape(8)),
			},
			wantNet: []*netdef.OperatorDef{op("Conv", names("x", "c_w", "c_b"), names("c"),
				netdef.ArgInt("kernel", 3), nchw, netdef.ArgInt("stride", 2), netdef.ArgInt("pad", 1), netdef.ArgInt("group", 2))},
			params: names("c_w", "c_b"), weights: names("c_w"), biases: names("c_b"),
		},
		{
			name: "Conv NHWC without bias",
			build: func(m *brew.Model) string {
				return brew.Conv(m, "x", "c", 6, 8, 3, brew.Order("NHWC"), brew.NoBias())
			},
			wantOut:  "c",
			wantInit: []*netdef.OperatorDef{op("XavierFill", nil, names("c_w"), shape(8, 3, 3, 6))},
			wantNet: []*netdef.OperatorDef{op("Conv", names("x", "c_w"), names("c"),
				netdef.ArgInt("kernel", 3), nhwc)},
			params: names("c_w"), weights: names("c_w"), biases: []string{},
		},
		{
			name: "Conv with a rectangular kernel and MSRAFill",
			build: func(m *brew.Model) string {
				return brew.Conv(m, "x", "c", 6, 8, 0, brew.KernelHW(5, 3), brew.WeightInit(brew.Init("MSRAFill")))
			},
			wantOut: "c",
			wantInit: []*netdef.OperatorDef{
				op("MSRAFill", nil, names("c_w"), shape(8, 6, 5, 3)),
				op("ConstantFill", nil, names("c_b"), shape(8)),
			},
			wantNet: []*netdef.OperatorDef{op("Conv", names("x", "c_w", "c_b"), names("c"),
				netdef.ArgInt("kernel_h", 5), netdef.ArgInt("kernel_w", 3), nchw)},
		},
		{
			name:    "ConvTranspose",
			build:   func(m *brew.Model) string { return brew.ConvTranspose(m, "x", "ct", 6, 8, 4, brew.Stride(2)) },
			wantOut: "ct",
			wantInit: []*netdef.OperatorDef{
				op("XavierFill", nil, names("ct_w"), shape(6, 8, 4, 4)),
				op("ConstantFill", nil, names("ct_b"), shape(8)),
			},
			wantNet: []*netdef.OperatorDef{op("ConvTranspose", names("x", "ct_w", "ct_b"), names("ct"),
				netdef.ArgInt("kernel", 4), nchw, netdef.ArgInt("stride", 2))},
		},
		{
			name: "ConvTranspose NHWC",
			build: func(m *brew.Model) string {
				return brew.ConvTranspose(m, "x", "ct", 6, 8, 4, brew.Order("NHWC"), brew.NoBias())
			},
			wantOut:  "ct",
			wantInit: []*netdef.OperatorDef{op("XavierFill", nil, names("ct_w"), shape(6, 4, 4, 8))},
			wantNet: []*netdef.OperatorDef{op("ConvTranspose", names("x", "ct_w"), names("ct"),
				netdef.ArgInt("kernel", 4), nhwc)},
		},
		{
			name:    "Relu in place",
			build:   func(m *brew.Model) string { return brew.Relu(m, "x", "x") },
			wantOut: "x",
			wantNet: []*netdef.OperatorDef{op("Relu", names("x"), names("x"), nchw)},
		},
		{
			name:    "Relu with an engine",
			build:   func(m *brew.Model) string { return brew.Relu(m, "x", "r", brew.Engine("CUDNN")) },
			wantOut: "r",
			wantNet: []*netdef.OperatorDef{withEngine(op("Relu", names("x"), names("r"), nchw), "CUDNN")},
		},
		{
			name: "LeakyRelu",
			build: func(m *brew.Model) string {
				return brew.LeakyRelu(m, "x", "l", brew.Arg(netdef.ArgFloat("alpha", 0.2)))
			},
			wantOut: "l",
			wantNet: []*netdef.OperatorDef{op("LeakyRelu", names("x"), names("l"), nchw, netdef.ArgFloat("alpha", 0.2))},
		},
		{
			name:     "PRelu",
			build:    func(m *brew.Model) string { return brew.PRelu(m, "x", "p", 3) },
			wantOut:  "p",
			wantInit: []*netdef.OperatorDef{op("ConstantFill", nil, names("p_slope"), shape(3), value(0.25))},
			wantNet:  []*netdef.OperatorDef{op("PRelu", names("x", "p_slope"), names("p"), nchw)},
			params:   names("p_slope"), weights: []string{}, biases: []string{},
		},
		{
			name:    "Tanh",
			build:   func(m *brew.Model) string { return brew.Tanh(m, "x", "t") },
			wantOut: "t",
			wantNet: []*netdef.OperatorDef{op("Tanh", names("x"), names("t"), nchw)},
		},
		{
			name:    "Sigmoid",
			build:   func(m *brew.Model) string { return brew.Sigmoid(m, "x", "s") },
			wantOut: "s",
			wantNet: []*netdef.OperatorDef{op("Sigmoid", names("x"), names("s"), nchw)},
		},
		{
			name:    "Softmax",
			build:   func(m *brew.Model) string { return brew.Softmax(m, "x", "s", brew.Axis(2)) },
			wantOut: "s",
			wantNet: []*netdef.OperatorDef{op("Softmax", names("x"), names("s"), nchw, netdef.ArgInt("axis", 2))},
		},
		{
			name: "SoftmaxWithLoss",
			build: func(m *brew.Model) string {
				sm, loss := brew.SoftmaxWithLoss(m, "x", "label", "sm", "loss")
				return sm + "," + loss
			},
			wantOut: "sm,loss",
			wantNet: []*netdef.OperatorDef{op("SoftmaxWithLoss", names("x", "label"), names("sm", "loss"), nchw)},
		},
		{
			name: "LabelCrossEntropy and AveragedLoss",
			build: func(m *brew.Model) string {
				return brew.AveragedLoss(m, brew.LabelCrossEntropy(m, "x", "label", "xent"), "loss")
			},
			wantOut: "loss",
			wantNet: []*netdef.OperatorDef{
				op("LabelCrossEntropy", names("x", "label"), names("xent"), nchw),
				op("AveragedLoss", names("xent"), names("loss"), nchw),
			},
		},
		{
			name:    "MaxPool",
			build:   func(m *brew.Model) string { return brew.MaxPool(m, "x", "mp", brew.Kernel(2), brew.Stride(2)) },
			wantOut: "mp",
			wantNet: []*netdef.OperatorDef{op("MaxPool", names("x"), names("mp"), nchw,
				netdef.ArgInt("kernel", 2), netdef.ArgInt("stride", 2))},
		},
		{
			name: "AveragePool global",
			build: func(m *brew.Model) string {
				return brew.AveragePool(m, "x", "ap", brew.Arg(netdef.ArgBool("global_pooling", true)))
			},
			wantOut: "ap",
			wantNet: []*netdef.OperatorDef{op("AveragePool", names("x"), names("ap"), nchw, netdef.ArgBool("global_pooling", true))},
		},
		{
			name: "SpatialBN train",
			build: func(m *brew.Model) string {
				return brew.SpatialBN(m, "x", "bn", 4, brew.Arg(netdef.ArgFloat("epsilon", 1e-3)), brew.IsTest(false))
			},
			wantOut: "bn",
			wantInit: []*netdef.OperatorDef{
				op("ConstantFill", nil, names("bn_s"), shape(4), value(1)),
				op("ConstantFill", nil, names("bn_b"), shape(4), value(0)),
				op("ConstantFill", nil, names("bn_rm"), shape(4), value(0)),
				op("ConstantFill", nil, names("bn_riv"), shape(4), value(1)),
			},
			wantNet: []*netdef.OperatorDef{op("SpatialBN", names("x", "bn_s", "bn_b", "bn_rm", "bn_riv"),
				names("bn", "bn_rm", "bn_riv", "bn_sm", "bn_siv"), nchw, netdef.ArgFloat("epsilon", 1e-3), netdef.ArgBool("is_test", false))},
			params: names("bn_s", "bn_b"), computed: names("bn_rm", "bn_riv"), weights: names("bn_s"), biases: names("bn_b"),
		},
		{
			name: "SpatialBN test with init_scale",
			build: func(m *brew.Model) string {
				return brew.SpatialBN(m, "x", "bn", 2, brew.IsTest(true), brew.Arg(netdef.ArgFloat("init_scale", 0.5)),
					brew.RunningVarInit(brew.Init("ConstantFill", value(2))))
			},
			wantOut: "bn",
			wantInit: []*netdef.OperatorDef{
				op("ConstantFill", nil, names("bn_s"), shape(2), value(0.5)),
				op("ConstantFill", nil, names("bn_b"), shape(2), value(0)),
				op("ConstantFill", nil, names("bn_rm"), shape(2), value(0)),
				op("ConstantFill", nil, names("bn_riv"), shape(2), value(2)),
			},
			wantNet: []*netdef.OperatorDef{op("SpatialBN", names("x", "bn_s", "bn_b", "bn_rm", "bn_riv"),
				names("bn"), nchw, netdef.ArgBool("is_test", true))},
		},
		{
			name: "Dropout in place",
			build: func(m *brew.Model) string {
				return brew.Dropout(m, "x", "x", brew.IsTest(true), brew.Arg(netdef.ArgFloat("ratio", 0.3)))
			},
			wantOut: "x",
			wantNet: []*netdef.OperatorDef{withEngine(op("Dropout", names("x"), names("x", "_x_mask"),
				nchw, netdef.ArgBool("is_test", true), netdef.ArgFloat("ratio", 0.3)), "DEFAULT")},
		},
		{
			name:    "LRN",
			build:   func(m *brew.Model) string { return brew.LRN(m, "x", "l", brew.Arg(netdef.ArgInt("size", 5))) },
			wantOut: "l",
			wantNet: []*netdef.OperatorDef{op("LRN", names("x"), names("l", "_l_scale"), nchw, netdef.ArgInt("size", 5))},
		},
		{
			name:    "Concat with axis drops order",
			build:   func(m *brew.Model) string { return brew.Concat(m, names("x", "y"), "cat", brew.Axis(1)) },
			wantOut: "cat",
			wantNet: []*netdef.OperatorDef{op("Concat", names("x", "y"), names("cat", "_cat_concat_dims"), netdef.ArgInt("axis", 1))},
		},
		{
			name:    "DepthConcat",
			build:   func(m *brew.Model) string { return brew.DepthConcat(m, names("x", "y"), "cat") },
			wantOut: "cat",
			wantNet: []*netdef.OperatorDef{op("Concat", names("x", "y"), names("cat", "_cat_concat_dims"), nchw)},
		},
		{
			name:    "Sum",
			build:   func(m *brew.Model) string { return brew.Sum(m, names("x", "y"), "x") },
			wantOut: "x",
			wantNet: []*netdef.OperatorDef{op("Sum", names("x", "y"), names("x"), nchw)},
		},
		{
			name: "Transpose",
			build: func(m *brew.Model) string {
				return brew.Transpose(m, "x", "t", brew.Arg(netdef.ArgInts("axes", 1, 0)))
			},
			wantOut: "t",
			wantNet: []*netdef.OperatorDef{op("Transpose", names("x"), names("t"), nchw, netdef.ArgInts("axes", 1, 0))},
		},
		{
			name:    "Iter",
			build:   func(m *brew.Model) string { return brew.Iter(m, "iter") },
			wantOut: "iter",
			wantInit: []*netdef.OperatorDef{withDevice(op("ConstantFill", nil, names("iter"), shape(1),
				netdef.ArgInt("value", 0), netdef.ArgInt("dtype", int64(netdef.TensorProto_INT64)), nchw), devicescope.CPU())},
			wantNet: []*netdef.OperatorDef{op("Iter", names("iter"), names("iter"), nchw)},
			params:  []string{},
		},
		{
			name: "Accuracy",
			build: func(m *brew.Model) string {
				return brew.Accuracy(m, "x", "label", "acc", brew.Arg(netdef.ArgInt("top_k", 3)))
			},
			wantOut: "acc",
			wantNet: []*netdef.OperatorDef{op("Accuracy", names("x", "label"), names("acc"), nchw, netdef.ArgInt("top_k", 3))},
		},
		{
			name: "DBInput",
			build: func(m *brew.Model) string {
				outs := brew.DBInput(m, names("data", "label"), 16, "train.db", "minidb")
				return slices.Concat(outs, []string{""})[0]
			},
			wantOut: "data",
			wantInit: []*netdef.OperatorDef{op("CreateDB", nil, names("dbreader_train.db"),
				netdef.ArgString("db", "train.db"), netdef.ArgString("db_type", "minidb"))},
			wantNet: []*netdef.OperatorDef{op("TensorProtosDBInput", names("dbreader_train.db"), names("data", "label"),
				netdef.ArgInt("batch_size", 16))},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := btModel(t, "helpers", "x", "y", "label")
			out := tc.build(m)
			btNoErr(t, m.Err())
			if out != tc.wantOut {
				t.Errorf("returned %q, want %q", out, tc.wantOut)
			}
			if diff := cmp.Diff(tc.wantInit, m.InitNet.Proto().GetOp(), protocmp.Transform(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("init net ops (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNet, m.Net.Proto().GetOp(), protocmp.Transform()); diff != "" {
				t.Errorf("net ops (-want +got):\n%s", diff)
			}
			for _, c := range []struct {
				what      string
				got, want []string
			}{
				{"params", m.ParamsIn(""), tc.params},
				{"computed params", m.ComputedParamsIn(""), tc.computed},
				{"weights", m.Weights(), tc.weights},
				{"biases", m.Biases(), tc.biases},
			} {
				if c.want != nil && !slices.Equal(c.got, c.want) {
					t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
				}
			}
		})
	}
}

// TestHelperScopes checks name and device scopes: names resolve in the
// name scope, returned names can be passed on without being scoped twice,
// side outputs get their prefix after the scope, blobs outside the scope
// are reached, and every operator carries the device scope.
func TestHelperScopes(t *testing.T) {
	m := brew.NewModel("scopes")
	m.AddExternalInputs("shared")
	dev := devicescope.CPUDevice(1)
	var fc, drop, sum string
	devicescope.DeviceScope(dev, func() {
		devicescope.NameScope("cpu_1", func() {
			m.AddExternalInputs("data")
			fc = brew.FC(m, "data", "fc", 4, 3)
			brew.Relu(m, fc, fc)
			drop = brew.Dropout(m, fc, "fc", brew.IsTest(false))
			sum = brew.Sum(m, names(drop, "shared"), "sum")
			btNoErr(t, m.Err())
		})
	})
	if fc != "cpu_1/fc" || drop != "cpu_1/fc" || sum != "cpu_1/sum" {
		t.Errorf("returned names %q %q %q, want cpu_1/fc cpu_1/fc cpu_1/sum", fc, drop, sum)
	}
	wantInit := []*netdef.OperatorDef{
		withDevice(op("XavierFill", nil, names("cpu_1/fc_w"), shape(3, 4)), dev),
		withDevice(op("ConstantFill", nil, names("cpu_1/fc_b"), shape(3)), dev),
	}
	wantNet := []*netdef.OperatorDef{
		withDevice(op("FC", names("cpu_1/data", "cpu_1/fc_w", "cpu_1/fc_b"), names("cpu_1/fc"), nchw), dev),
		withDevice(op("Relu", names("cpu_1/fc"), names("cpu_1/fc"), nchw), dev),
		withDevice(withEngine(op("Dropout", names("cpu_1/fc"), names("cpu_1/fc", "cpu_1/_fc_mask"), nchw, netdef.ArgBool("is_test", false)), "DEFAULT"), dev),
		withDevice(op("Sum", names("cpu_1/fc", "shared"), names("cpu_1/sum"), nchw), dev),
	}
	if diff := cmp.Diff(wantInit, m.InitNet.Proto().GetOp(), protocmp.Transform()); diff != "" {
		t.Errorf("init net ops (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantNet, m.Net.Proto().GetOp(), protocmp.Transform()); diff != "" {
		t.Errorf("net ops (-want +got):\n%s", diff)
	}
	if got := m.ParamsIn("cpu_1"); !slices.Equal(got, names("cpu_1/fc_w", "cpu_1/fc_b")) {
		t.Errorf("params in cpu_1 = %v", got)
	}
}

// TestHelperAutoNames checks Caffe2's automatic output names.
func TestHelperAutoNames(t *testing.T) {
	m := btModel(t, "auto", "x", "label")
	net := m.Net.Name()
	fc := brew.FC(m, "x", "", 2, 2)
	sm := brew.Softmax(m, fc, "")
	xent := brew.LabelCrossEntropy(m, sm, "label", "")
	loss := brew.AveragedLoss(m, xent, "")
	btNoErr(t, m.Err())
	if want := net + "_blob_0"; fc != want {
		t.Errorf("FC output = %q, want %q", fc, want)
	}
	if m.ParamInfo(fc+"_w") == nil {
		t.Errorf("no parameter %s_w", fc)
	}
	if want := net + "/Softmax"; sm != want {
		t.Errorf("Softmax output = %q, want %q", sm, want)
	}
	if want := net + "/LabelCrossEntropy"; xent != want {
		t.Errorf("LabelCrossEntropy output = %q, want %q", xent, want)
	}
	if want := net + "/AveragedLoss"; loss != want {
		t.Errorf("AveragedLoss output = %q, want %q", loss, want)
	}
}
