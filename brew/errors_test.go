package brew_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/netdef"
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
			_, err := brew.FC(m, "dta", "fc1", 4, 2)
			return err
		}, []string{"FC", `"fc1"`, `"dta"`, "AddExternalInputs"}},
		{"FC dim_in 0", func(m *brew.Model) error {
			_, err := brew.FC(m, "x", "fc", 0, 2)
			return err
		}, []string{"FC", "dim_in must be positive, got 0"}},
		{"FC dim_out negative", func(m *brew.Model) error {
			_, err := brew.FC(m, "x", "fc", 2, -1)
			return err
		}, []string{"dim_out must be positive, got -1"}},
		{"Conv without a kernel", func(m *brew.Model) error {
			_, err := brew.Conv(m, "x", "c", 3, 8, 0)
			return err
		}, []string{"Conv", "kernel must be positive"}},
		{"Conv with a float kernel", func(m *brew.Model) error {
			_, err := brew.Conv(m, "x", "c", 3, 8, 0, brew.Arg(netdef.ArgFloat("kernel", 3)))
			return err
		}, []string{"kernel must be an integer"}},
		{"Conv group not dividing dim_in", func(m *brew.Model) error {
			_, err := brew.Conv(m, "x", "c", 3, 8, 3, brew.Group(2))
			return err
		}, []string{"group must be a positive divisor of dim_in 3, got 2"}},
		{"Conv with a bad order", func(m *brew.Model) error {
			_, err := brew.Conv(m, "x", "c", 3, 8, 3, brew.Order("NCWH"))
			return err
		}, []string{`order must be NCHW or NHWC, got "NCWH"`}},
		{"Dropout without is_test", func(m *brew.Model) error {
			_, err := brew.Dropout(m, "x", "d")
			return err
		}, []string{"Dropout", "is_test is required"}},
		{"SpatialBN with a string init_scale", func(m *brew.Model) error {
			_, err := brew.SpatialBN(m, "x", "bn", 3, brew.Arg(netdef.ArgString("init_scale", "one")))
			return err
		}, []string{"init_scale must be a number"}},
		{"SoftmaxWithLoss on unknown labels", func(m *brew.Model) error {
			_, _, err := brew.SoftmaxWithLoss(m, "x", "labels", "sm", "loss")
			return err
		}, []string{"SoftmaxWithLoss", `"labels"`}},
		{"Sum of nothing", func(m *brew.Model) error {
			_, err := brew.Sum(m, nil, "s")
			return err
		}, []string{"Sum", "no input blobs"}},
		{"DBInput with a negative batch", func(m *brew.Model) error {
			_, err := brew.DBInput(m, names("d"), -1, "x.db", "minidb")
			return err
		}, []string{"batch_size must not be negative"}},
		{"DBInput without outputs", func(m *brew.Model) error {
			_, err := brew.DBInput(m, nil, 1, "x.db", "minidb")
			return err
		}, []string{"no output blobs"}},
		{"zero Option", func(m *brew.Model) error {
			_, err := brew.Relu(m, "x", "r", brew.Option{})
			return err
		}, []string{`Relu("r")`, "zero Option"}},
		{"nil argument", func(m *brew.Model) error {
			_, err := brew.Relu(m, "x", "r", brew.Arg(nil))
			return err
		}, []string{"nil argument"}},
		{"initializer without a fill", func(m *brew.Model) error {
			_, err := brew.FC(m, "x", "fc", 2, 2, brew.WeightInit(brew.Initializer{}))
			return err
		}, []string{"weight_init has no fill operator"}},
		{"unknown helper", func(m *brew.Model) error {
			_, err := brew.ResolveKwargs(m, "no_such_helper")
			return err
		}, []string{`unknown helper "no_such_helper"`}},
		{"CreateParam with another shape", func(m *brew.Model) error {
			if _, err := m.CreateParam("w", []int64{2}, brew.Init("ConstantFill")); err != nil {
				return err
			}
			_, err := m.CreateParam("w", []int64{3}, brew.Init("ConstantFill"))
			return err
		}, []string{`"w" exists with shape [2], asked for [3]`}},
		{"CreateParam without an initializer", func(m *brew.Model) error {
			_, err := m.CreateParam("w", []int64{2}, brew.Initializer{})
			return err
		}, []string{"no initializer"}},
		{"declaring an input twice", func(m *brew.Model) error {
			return m.AddExternalInputs("x")
		}, []string{"x"}},
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
	fc, err := brew.FC(m, "x", "fc", 2, 2)
	btNoErr(t, err)
	_, loss, err := brew.SoftmaxWithLoss(m, fc, "label", "sm", "loss")
	btNoErr(t, err)
	_, err = m.AddGradientOperators(loss)
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
	_, err = brew.Relu(m, "x", "r")
	btNoErr(t, err)
	if got := string(netdef.FindArg(m.Net.Proto().Op[0].Arg, "order").GetS()); got != "NCHW" {
		t.Errorf("order after the scope = %q, want NCHW", got)
	}
}
