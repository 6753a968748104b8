package brew_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// TestHelperErrors checks that misuse is an error naming what is wrong,
// never a panic. Each of these mistakes is caught before the helper adds
// anything to the nets.
func TestHelperErrors(t *testing.T) {
	tests := []struct {
		name  string
		build func(m *brew.Model) error
		want  []string // substrings of the error
	}{
		{"FC on a nonexistent blob", func(m *brew.Model) error {
			brew.FC(m, "dta", "fc1", 4, 2)
			return m.Err()
		}, []string{"FC", `"fc1"`, `"dta"`, "AddExternalInputs"}},
		{"FC dim_in 0", func(m *brew.Model) error {
			brew.FC(m, "x", "fc", 0, 2)
			return m.Err()
		}, []string{"FC", "dim_in must be positive, got 0"}},
		{"FC dim_out negative", func(m *brew.Model) error {
			brew.FC(m, "x", "fc", 2, -1)
			return m.Err()
		}, []string{"dim_out must be positive, got -1"}},
		{"Conv without a kernel", func(m *brew.Model) error {
			brew.Conv(m, "x", "c", 3, 8, 0)
			return m.Err()
		}, []string{"Conv", "kernel must be positive"}},
		{"Conv with a float kernel", func(m *brew.Model) error {
			brew.Conv(m, "x", "c", 3, 8, 0, brew.Arg(netdef.ArgFloat("kernel", 3)))
			return m.Err()
		}, []string{"kernel must be an integer"}},
		{"Conv group not dividing dim_in", func(m *brew.Model) error {
			brew.Conv(m, "x", "c", 3, 8, 3, brew.Group(2))
			return m.Err()
		}, []string{"group must be a positive divisor of dim_in 3, got 2"}},
		{"Conv with a bad order", func(m *brew.Model) error {
			brew.Conv(m, "x", "c", 3, 8, 3, brew.Order("NCWH"))
			return m.Err()
		}, []string{`order must be NCHW or NHWC, got "NCWH"`}},
		{"Dropout without is_test", func(m *brew.Model) error {
			brew.Dropout(m, "x", "d")
			return m.Err()
		}, []string{"Dropout", "is_test is required"}},
		{"SpatialBN with a string init_scale", func(m *brew.Model) error {
			brew.SpatialBN(m, "x", "bn", 3, brew.Arg(netdef.ArgString("init_scale", "one")))
			return m.Err()
		}, []string{"init_scale must be a number"}},
		{"SoftmaxWithLoss on unknown labels", func(m *brew.Model) error {
			brew.SoftmaxWithLoss(m, "x", "labels", "sm", "loss")
			return m.Err()
		}, []string{"SoftmaxWithLoss", `"labels"`}},
		{"Sum of nothing", func(m *brew.Model) error {
			brew.Sum(m, nil, "s")
			return m.Err()
		}, []string{"Sum", "no input blobs"}},
		{"DBInput with a negative batch", func(m *brew.Model) error {
			brew.DBInput(m, names("d"), -1, "x.db", "minidb")
			return m.Err()
		}, []string{"batch_size must not be negative"}},
		{"DBInput without outputs", func(m *brew.Model) error {
			brew.DBInput(m, nil, 1, "x.db", "minidb")
			return m.Err()
		}, []string{"no output blobs"}},
		{"zero Option", func(m *brew.Model) error {
			brew.Relu(m, "x", "r", brew.Option{})
			return m.Err()
		}, []string{`Relu("r")`, "zero Option"}},
		{"nil argument", func(m *brew.Model) error {
			brew.Relu(m, "x", "r", brew.Arg(nil))
			return m.Err()
		}, []string{"nil argument"}},
		{"initializer without a fill", func(m *brew.Model) error {
			brew.FC(m, "x", "fc", 2, 2, brew.WeightInit(brew.Initializer{}))
			return m.Err()
		}, []string{"weight_init has no fill operator"}},
		{"unknown helper", func(m *brew.Model) error {
			brew.ResolveKwargs(m, "no_such_helper")
			return m.Err()
		}, []string{`unknown helper "no_such_helper"`}},
		{"CreateParam with another shape", func(m *brew.Model) error {
			m.CreateParam("w", []int64{2}, brew.Init("ConstantFill"))
			m.CreateParam("w", []int64{3}, brew.Init("ConstantFill"))
			return m.Err()
		}, []string{`"w" exists with shape [2], asked for [3]`}},
		{"CreateParam without an initializer", func(m *brew.Model) error {
			m.CreateParam("w", []int64{2}, brew.Initializer{})
			return m.Err()
		}, []string{"no initializer"}},
		{"declaring an input twice", func(m *brew.Model) error {
			m.AddExternalInputs("x")
			return m.Err()
		}, []string{"x"}},
		{"Op of an unregistered type", func(m *brew.Model) error {
			m.Op("NoSuchOp", names("x"), names("y"))
			return m.Err()
		}, []string{"NoSuchOp is not a registered operator"}},
		{"LabelCrossEntropy on unknown labels", func(m *brew.Model) error {
			brew.LabelCrossEntropy(m, "x", "labels", "xent")
			return m.Err()
		}, []string{`LabelCrossEntropy("xent")`, `"labels"`}},
		{"AveragedLoss on an unknown blob", func(m *brew.Model) error {
			brew.AveragedLoss(m, "xent", "loss")
			return m.Err()
		}, []string{`AveragedLoss("loss")`, `"xent"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := btModel(t, "errors", "x")
			nOps, nInit := len(m.Net.Proto().Op), len(m.InitNet.Proto().Op)
			err := tc.build(m)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if tc.name != "CreateParam with another shape" {
				if len(m.Net.Proto().Op) != nOps || len(m.InitNet.Proto().Op) != nInit {
					t.Errorf("a failed helper added operators")
				}
			}
		})
	}
}

func TestAddGradientOperatorsTwice(t *testing.T) {
	m := btModel(t, "twice", "x", "label")
	fc := brew.FC(m, "x", "fc", 2, 2)
	_, loss := brew.SoftmaxWithLoss(m, fc, "label", "sm", "loss")
	btNoErr(t, m.Err())
	_, err := m.AddGradientOperators(loss)
	btNoErr(t, err)
	if _, err := m.AddGradientOperators(loss); err == nil || !strings.Contains(err.Error(), "only once") {
		t.Errorf("second AddGradientOperators: %v", err)
	}
	if got := m.ParamToGrad(); got["fc_w"] != "fc_w_grad" || got["fc_b"] != "fc_b_grad" {
		t.Errorf("ParamToGrad = %v", got)
	}
	if g := m.GradMap()["fc_w"]; g.Dense != "fc_w_grad" {
		t.Errorf("GradMap[fc_w] = %v", g)
	}
	if g := m.ParamInfo("fc_w").Grad; g != "fc_w_grad" {
		t.Errorf("ParamInfo(fc_w).Grad = %q", g)
	}
}

// TestStickyError checks that a model keeps its first error: the calls
// after it add nothing and return zero values, Err names the first failure
// (not a cascade), and the steps that consume the model return it.
func TestStickyError(t *testing.T) {
	m := btModel(t, "sticky", "x", "label")
	h := brew.FC(m, "x", "fc1", 4, 8)
	nOps, nInit, nIn := len(m.Net.Proto().Op), len(m.InitNet.Proto().Op), len(m.Net.Proto().ExternalInput)
	bad := brew.Relu(m, "hx", "")
	pred := brew.FC(m, bad, "pred", 8, 2)
	sm, loss := brew.SoftmaxWithLoss(m, pred, "label", "", "")
	m.AddExternalInputs("y")
	op := m.Op("Relu", names(h), names("r"))
	param := m.CreateParam("p", []int64{1}, brew.Init("ConstantFill"))
	m.AddParameter("q")
	outs := brew.DBInput(m, names("d"), 1, "x.db", "minidb")
	kw := brew.ResolveKwargs(m, brew.HelperFC, brew.Axis(1))
	if bad != "" || pred != "" || sm != "" || loss != "" || op != nil || param != "" || outs != nil || len(kw.Args()) != 0 {
		t.Errorf("calls after the error returned %q %q %q %q %v %q %v %v, want zero values", bad, pred, sm, loss, op, param, outs, kw.Args())
	}
	if len(m.Net.Proto().Op) != nOps || len(m.InitNet.Proto().Op) != nInit || m.ParamInfo("q") != nil || len(m.Net.Proto().ExternalInput) != nIn {
		t.Errorf("calls after the error changed the model: ops %d→%d, init ops %d→%d, external inputs %v",
			nOps, len(m.Net.Proto().Op), nInit, len(m.InitNet.Proto().Op), m.Net.Proto().ExternalInput)
	}
	first := m.Err()
	if first == nil || !strings.Contains(first.Error(), "brew: Relu(") || !strings.Contains(first.Error(), `"hx"`) {
		t.Fatalf("Err = %v, want Relu's error about \"hx\"", first)
	}
	if _, err := m.AddGradientOperators("loss"); err != first {
		t.Errorf("AddGradientOperators = %v, want the model's error", err)
	}
	if _, err := brew.BuildSGD(m, brew.SGDOptions{BaseLR: 0.1}); err != first {
		t.Errorf("BuildSGD = %v, want the model's error", err)
	}
	if err := brew.AddWeightDecay(m, 0.1); err != first {
		t.Errorf("AddWeightDecay = %v, want the model's error", err)
	}
	opt, err := brew.NewSGD(brew.SGDOptions{BaseLR: 0.1})
	btNoErr(t, err)
	if err := opt.Apply(m, "fc1_w", operators.Dense("fc1_w_grad")); err != first {
		t.Errorf("Optimizer.Apply = %v, want the model's error", err)
	}
	if m.Err() != first {
		t.Errorf("Err changed to %v", m.Err())
	}
}

// TestTakeErr checks the interactive use: TakeErr returns a call's error
// and clears it, and the model takes the next calls.
func TestTakeErr(t *testing.T) {
	m := btModel(t, "repl", "x")
	brew.FC(m, "xx", "fc", 4, 2)
	if err := m.TakeErr(); err == nil || !strings.Contains(err.Error(), `"xx"`) {
		t.Fatalf("TakeErr = %v, want FC's error about \"xx\"", err)
	}
	if err := m.TakeErr(); err != nil {
		t.Errorf("second TakeErr = %v, want nil", err)
	}
	if fc := brew.FC(m, "x", "fc", 4, 2); fc != "fc" || m.Err() != nil {
		t.Errorf("FC after TakeErr = %q, %v", fc, m.Err())
	}
	if got := len(m.Net.Proto().Op); got != 1 {
		t.Errorf("net has %d ops, want the one FC", got)
	}
}

// TestNilModel checks that building on a nil model is an error, not a
// panic.
func TestNilModel(t *testing.T) {
	var m *brew.Model
	if fc := brew.FC(m, "x", "fc", 4, 2); fc != "" {
		t.Errorf("FC on a nil model = %q", fc)
	}
	m.AddExternalInputs("x")
	if err := m.Err(); err == nil || !strings.Contains(err.Error(), "nil model") {
		t.Errorf("Err of a nil model = %v", err)
	}
	if err := m.TakeErr(); err == nil {
		t.Error("TakeErr of a nil model = nil")
	}
	if _, err := m.AddGradientOperators("loss"); err == nil {
		t.Error("AddGradientOperators on a nil model succeeded")
	}
}

func TestAddGradientOperatorsDuplicateParams(t *testing.T) {
	m := brew.NewModel("dup")
	m.AddParameter("w")
	m.AddParameter("w")
	if _, err := m.AddGradientOperators("loss"); err == nil || !strings.Contains(err.Error(), "duplicate params: [w]") {
		t.Errorf("AddGradientOperators with duplicate params: %v", err)
	}
}

func TestArgScopeErrors(t *testing.T) {
	ran := false
	fn := func() error { ran = true; return nil }
	if err := brew.WithArgScope([]brew.Helper{"no_such_helper"}, nil, fn); err == nil || ran {
		t.Errorf("unknown helper: err %v, fn ran %v", err, ran)
	}
	if err := brew.WithArgScope([]brew.Helper{brew.HelperFC}, []brew.Option{{}}, fn); err == nil || ran {
		t.Errorf("zero option: err %v, fn ran %v", err, ran)
	}
	if _, err := brew.NewModelWith("bad", brew.ModelOptions{ArgScope: []brew.Option{brew.Arg(nil)}}); err == nil {
		t.Error("NewModelWith accepted a nil argument in its arg scope")
	}
	if err := brew.Register(""); err == nil {
		t.Error("Register accepted the empty name")
	}

	// fn's error comes back and the scope is restored after it.
	m := btModel(t, "restore", "x")
	sentinel := errors.New("sentinel")
	err := brew.WithArgScope([]brew.Helper{brew.HelperRelu}, []brew.Option{brew.Order("NHWC")}, func() error { return sentinel })
	if !errors.Is(err, sentinel) {
		t.Errorf("WithArgScope returned %v, want fn's error", err)
	}
	brew.Relu(m, "x", "r")
	btNoErr(t, m.Err())
	if got := string(netdef.FindArg(m.Net.Proto().Op[0].Arg, "order").GetS()); got != "NCHW" {
		t.Errorf("order after the scope = %q, want NCHW", got)
	}
}
