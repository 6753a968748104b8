package tests

// A port of Caffe2's caffe2/python/core_gradients_test.py (spec §8.3): the
// executable specification of operators.AddGradientOperators (spec §3.7).
//
// The upstream tests use made-up operators (Direct, UseOutput, UseInput,
// Nogradient) whose gradient makers the test registers; they are registered
// here under unique type names. The tests that use real operators (Relu,
// Softmax, FC, Mul, …) need only their gradient makers, except the two that
// run the generated net. Each real operator is used under its own name when
// its gradient maker is linked into this test binary, and otherwise under a
// "CoreGradTest"-prefixed stand-in whose maker (and, for the operators that
// run, kernel and schema) reproduces Caffe2's. ZeroGradient is the exception:
// autodiff treats it specially by type name, so its Caffe2 maker is
// registered under that name when no operator package has registered it.

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// cgStandInPrefix prefixes the type names of the made-up operators and of the
// stand-ins for real operators.
const cgStandInPrefix = "CoreGradTest"

// The made-up operators of the upstream test.
const (
	cgDirect     = cgStandInPrefix + "Direct"
	cgUseOutput  = cgStandInPrefix + "UseOutput"
	cgUseInput   = cgStandInPrefix + "UseInput"
	cgNoGradient = cgStandInPrefix + "Nogradient"
)

// cgNeedAll returns the gradients of every output of the forward operator, or
// an error naming the first output without one (upstream's NeedAll).
func cgNeedAll(g *operators.GradientContext) ([]string, error) {
	out := make([]string, g.NumOutputs())
	for i := range out {
		if !g.HasGO(i) {
			return nil, fmt.Errorf("need gradient for %q but it is not provided", g.O(i))
		}
		out[i] = g.GO(i)
	}
	return out, nil
}

// cgGis declares and returns the gradient names of every input (upstream's GIS).
func cgGis(g *operators.GradientContext) []string {
	out := make([]string, g.NumInputs())
	for i := range out {
		out[i] = g.GI(i)
	}
	return out
}

func cgInputs(g *operators.GradientContext) []string {
	out := make([]string, g.NumInputs())
	for i := range out {
		out[i] = g.I(i)
	}
	return out
}

func cgOutputs(g *operators.GradientContext) []string {
	out := make([]string, g.NumOutputs())
	for i := range out {
		out[i] = g.O(i)
	}
	return out
}

// cgMadeUpMaker builds a maker emitting one operator of type typ whose inputs
// are pre (from the forward operator) followed by the output gradients, and
// whose outputs are the input gradients. Like upstream's Python makers it
// copies only the device option.
func cgMadeUpMaker(typ string, pre func(*operators.GradientContext) []string) operators.GradientMaker {
	return func(g *operators.GradientContext) error {
		g.CopyArguments, g.CopyEngine = false, false
		gos, err := cgNeedAll(g)
		if err != nil {
			return err
		}
		var in []string
		if pre != nil {
			in = pre(g)
		}
		g.Op(typ, append(in, gos...), cgGis(g))
		return nil
	}
}

// cgRealMakers are Caffe2's gradient makers of the real operators the
// upstream tests use, registered as stand-ins under cgStandInPrefix + type.
var cgRealMakers = map[string]operators.GradientMaker{
	"Relu": func(g *operators.GradientContext) error {
		g.Op("ReluGradient", []string{g.O(0), g.GO(0)}, []string{g.GI(0)})
		return nil
	},
	"Softmax": func(g *operators.GradientContext) error {
		g.Op("SoftmaxGradient", []string{g.O(0), g.GO(0)}, []string{g.GI(0)})
		return nil
	},
	"DotProduct": func(g *operators.GradientContext) error {
		g.Op("DotProductGradient", []string{g.I(0), g.I(1), g.GO(0)}, []string{g.GI(0), g.GI(1)})
		return nil
	},
	"FC": func(g *operators.GradientContext) error {
		g.Op("FCGradient", []string{g.I(0), g.I(1), g.GO(0)}, []string{g.GI(1), g.GI(2), g.GI(0)})
		return nil
	},
	"AveragedLoss": func(g *operators.GradientContext) error {
		g.Op("AveragedLossGradient", []string{g.I(0), g.GO(0)}, []string{g.GI(0)})
		return nil
	},
	"SoftmaxWithLoss": func(g *operators.GradientContext) error {
		in := []string{g.I(0), g.I(1), g.O(0), g.GO(1)}
		if g.NumInputs() == 3 {
			in = []string{g.I(0), g.I(1), g.I(2), g.O(0), g.GO(1)}
		}
		g.Op("SoftmaxWithLossGradient", in, []string{g.GI(0)})
		return nil
	},
	"Sum": func(g *operators.GradientContext) error {
		for i := 0; i < g.NumInputs(); i++ {
			g.SetDense(i, g.GO(0))
		}
		return nil
	},
	"Add": func(g *operators.GradientContext) error {
		g.SetDense(0, g.GO(0))
		if netdef.FindArg(g.Def().Arg, "broadcast") == nil {
			g.SetDense(1, g.GO(0))
			return nil
		}
		g.Op("SumReduceLike", []string{g.GO(0), g.I(1)}, []string{g.GI(1)})
		return nil
	},
	"Sub": func(g *operators.GradientContext) error {
		g.CopyArguments = false
		g.SetDense(0, g.GO(0))
		if netdef.FindArg(g.Def().Arg, "broadcast") == nil {
			g.Op("Negative", []string{g.GO(0)}, []string{g.GI(1)})
			return nil
		}
		pre := g.GI(1) + "_autogen_pre_red"
		g.Op("Negative", []string{g.GO(0)}, []string{pre})
		g.Op("SumReduceLike", []string{pre, g.I(1)}, []string{g.GI(1)})
		return nil
	},
	"Mul": func(g *operators.GradientContext) error {
		if g.I(0) == g.O(0) || g.I(1) == g.O(0) {
			return fmt.Errorf("gradient computation cannot be carried out if Mul uses in-place computation")
		}
		g.CopyArguments = false
		g.Op("Mul", []string{g.GO(0), g.I(1)}, []string{g.GI(0)})
		g.Op("Mul", []string{g.GO(0), g.I(0)}, []string{g.GI(1)})
		return nil
	},
	"Gather": func(g *operators.GradientContext) error {
		g.SetGradient(0, operators.Gradient{Indices: g.I(1), Values: g.GO(0)})
		return nil
	},
	"EnsureDense": func(g *operators.GradientContext) error {
		gr := g.GOGradient(0)
		if !gr.IsSparse() {
			g.SetDense(0, g.GO(0))
			return nil
		}
		g.Op("SparseToDense", []string{gr.Indices, gr.Values, g.I(0)}, []string{g.GI(0)})
		return nil
	},
	"SparseFunHash": func(g *operators.GradientContext) error {
		indices, values := g.GISparse(3)
		g.Op("SparseFunHashGradient", []string{g.GO(0), g.I(0), g.I(1), g.I(2), g.I(3)}, []string{values, indices})
		return nil
	},
	"LSTMUnit": func(g *operators.GradientContext) error {
		g.Op("LSTMUnitGradient",
			[]string{g.I(0), g.I(1), g.I(2), g.I(3), g.I(4), g.O(0), g.O(1), g.GO(0), g.GO(1)},
			[]string{g.GI(0), g.GI(1), g.GI(2)})
		return nil
	},
}

// Real operators without a gradient (NO_GRADIENT) or whose gradient must
// never be taken (SHOULD_NOT_DO_GRADIENT) in Caffe2.
var (
	cgRealNoGradient = []string{"StopGradient", "ConstantFill"}
	cgRealForbidden  = []string{"Print"}
)

// cgZeroGradientMaker is Caffe2's ZeroGradient maker: a zero-filled gradient.
func cgZeroGradientMaker(g *operators.GradientContext) error {
	g.Op("ConstantFill", []string{g.I(0)}, []string{g.GI(0)}, netdef.ArgFloat("value", 0))
	return nil
}

func init() {
	operators.MustRegisterGradient(cgDirect, cgMadeUpMaker("DirectGradient", nil))
	operators.MustRegisterGradient(cgUseOutput, cgMadeUpMaker("UseOutputGradient", cgOutputs))
	operators.MustRegisterGradient(cgUseInput, cgMadeUpMaker("UseInputGradient", cgInputs))
	operators.MustRegisterGradient(cgNoGradient, func(*operators.GradientContext) error { return nil })
	for typ, m := range cgRealMakers {
		operators.MustRegisterGradient(cgStandInPrefix+typ, m)
	}
	for _, typ := range cgRealNoGradient {
		operators.MustRegisterNoGradient(cgStandInPrefix + typ)
	}
	for _, typ := range cgRealForbidden {
		operators.MustRegisterGradientForbidden(cgStandInPrefix + typ)
	}
	if !operators.HasGradient(operators.ZeroGradientType) {
		operators.MustRegisterGradient(operators.ZeroGradientType, cgZeroGradientMaker)
	}
	cgRegisterStandInKernels()
}

// cgOpType is the type to use for the real operator typ: typ itself when its
// gradient maker is linked into this binary, else its stand-in.
func cgOpType(typ string) string {
	if operators.HasGradient(typ) {
		return typ
	}
	return cgStandInPrefix + typ
}

// cgOp builds an operator as Caffe2's CreateOperator does, with an (empty)
// name set.
func cgOp(typ string, in, out []string, args ...*netdef.Argument) *netdef.OperatorDef {
	o := netdef.NewOperator(typ, in, out, args...)
	o.Name = proto.String("")
	return o
}

// cgGradOp builds an operator as a gradient maker emits it.
func cgGradOp(typ string, in, out []string, args ...*netdef.Argument) *netdef.OperatorDef {
	o := cgOp(typ, in, out, args...)
	o.IsGradientOp = proto.Bool(true)
	return o
}

// cgWithDevice sets the device option of every op (none for a nil option).
func cgWithDevice(dev *netdef.DeviceOption, ops ...*netdef.OperatorDef) []*netdef.OperatorDef {
	for _, o := range ops {
		if dev != nil {
			o.DeviceOption = proto.Clone(dev).(*netdef.DeviceOption)
		}
	}
	return ops
}

func cgStrs(s ...string) []string { return s }

// cgBackward runs autodiff on a net holding copies of ops (upstream's
// GradientRegistry.GetBackwardPass) and returns the gradient operators and
// the gradient map.
func cgBackward(ops []*netdef.OperatorDef, ys []string, given map[string]operators.Gradient) ([]*netdef.OperatorDef, map[string]operators.Gradient, error) {
	net := &netdef.NetDef{}
	for _, o := range ops {
		net.Op = append(net.Op, proto.Clone(o).(*netdef.OperatorDef))
	}
	grads, err := operators.AddGradientOperators(net, ys, given)
	if err != nil {
		return nil, nil, err
	}
	return net.Op[len(ops):], grads, nil
}

func cgMustBackward(t *testing.T, ops []*netdef.OperatorDef, ys []string, given map[string]operators.Gradient) ([]*netdef.OperatorDef, map[string]operators.Gradient) {
	t.Helper()
	gops, grads, err := cgBackward(ops, ys, given)
	if err != nil {
		t.Fatalf("AddGradientOperators: %v", err)
	}
	return gops, grads
}

func cgDense(pairs ...string) map[string]operators.Gradient {
	m := map[string]operators.Gradient{}
	for i := 0; i+1 < len(pairs); i += 2 {
		m[pairs[i]] = operators.Dense(pairs[i+1])
	}
	return m
}

// cgAssertSameOps compares two operator lists field by field (type, inputs,
// outputs, arguments, device option, engine, is_gradient_op).
func cgAssertSameOps(t *testing.T, got, want []*netdef.OperatorDef) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d operators, want %d:\ngot:\n%s\nwant:\n%s", len(got), len(want), cgFormatOps(got), cgFormatOps(want))
	}
	for i := range got {
		if !proto.Equal(got[i], want[i]) {
			t.Errorf("operator %d differs:\ngot:  %s\nwant: %s", i, prototext.Format(got[i]), prototext.Format(want[i]))
		}
	}
}

func cgFormatOps(ops []*netdef.OperatorDef) string {
	var sb strings.Builder
	for i, o := range ops {
		fmt.Fprintf(&sb, "  %d: %s\n", i, prototext.MarshalOptions{}.Format(o))
	}
	return sb.String()
}

func cgAssertGradMap(t *testing.T, got, want map[string]operators.Gradient) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("gradient map = %v, want %v", got, want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("gradient map = %v, want %v", got, want)
			return
		}
	}
}

func cgAssertGrad(t *testing.T, grads map[string]operators.Gradient, blob, want string) {
	t.Helper()
	if g := grads[blob]; g != operators.Dense(want) {
		t.Errorf("gradient of %q = %+v, want %q", blob, g, want)
	}
}

func cgAssertIO(t *testing.T, o *netdef.OperatorDef, typ string, in []string, out0 string) {
	t.Helper()
	if o.GetType() != typ || len(o.Input) < len(in) || len(o.Output) == 0 || o.Output[0] != out0 {
		t.Fatalf("operator = %s, want %s(%v) -> %s…", prototext.Format(o), typ, in, out0)
	}
	for i, name := range in {
		if o.Input[i] != name {
			t.Errorf("%s input %d = %q, want %q", typ, i, o.Input[i], name)
		}
	}
}

var cgCuda1 = netdef.NewDeviceOption(netdef.CUDA, 1)

func TestAutodiffDirect(t *testing.T) {
	for _, dev := range []*netdef.DeviceOption{nil, cgCuda1} {
		t.Run(fmt.Sprint(dev), func(t *testing.T) {
			ops := cgWithDevice(dev,
				cgOp(cgDirect, cgStrs("in"), cgStrs("hidden")),
				cgOp(cgDirect, cgStrs("hidden"), cgStrs("out")))
			want := cgWithDevice(dev,
				cgGradOp("DirectGradient", cgStrs("out_grad"), cgStrs("hidden_grad")),
				cgGradOp("DirectGradient", cgStrs("hidden_grad"), cgStrs("in_grad")))
			got, _ := cgMustBackward(t, ops, nil, cgDense("out", "out_grad"))
			cgAssertSameOps(t, got, want)
		})
	}
}

func TestAutodiffDirectImplicitGradientSource(t *testing.T) {
	ops := []*netdef.OperatorDef{
		cgOp(cgDirect, cgStrs("in"), cgStrs("hidden")),
		cgOp(cgDirect, cgStrs("hidden"), cgStrs("out")),
	}
	want := []*netdef.OperatorDef{
		cgOp("ConstantFill", cgStrs("out"), cgStrs("out_autogen_grad"), netdef.ArgFloat("value", 1.0)),
		cgGradOp("DirectGradient", cgStrs("out_autogen_grad"), cgStrs("hidden_grad")),
		cgGradOp("DirectGradient", cgStrs("hidden_grad"), cgStrs("in_grad")),
	}
	got, grads := cgMustBackward(t, ops, cgStrs("out"), nil)
	cgAssertSameOps(t, got, want)
	cgAssertGradMap(t, grads, cgDense("out", "out_autogen_grad", "hidden", "hidden_grad", "in", "in_grad"))
}

func TestAutodiffDoesNotGenerateUnnecessaryGradients(t *testing.T) {
	ops := []*netdef.OperatorDef{
		cgOp(cgDirect, cgStrs("in"), cgStrs("hidden")),
		cgOp(cgDirect, cgStrs("hidden"), cgStrs("out")),
	}
	want := []*netdef.OperatorDef{
		cgGradOp("DirectGradient", cgStrs("hidden_grad"), cgStrs("in_grad")),
	}
	got, _ := cgMustBackward(t, ops, nil, cgDense("hidden", "hidden_grad"))
	cgAssertSameOps(t, got, want)
}

func TestAutodiffDirectButNoOutputGradientGiven(t *testing.T) {
	ops := []*netdef.OperatorDef{
		cgOp(cgDirect, cgStrs("in"), cgStrs("hidden")),
		cgOp(cgDirect, cgStrs("hidden"), cgStrs("out")),
	}
	got, grads := cgMustBackward(t, ops, nil, map[string]operators.Gradient{})
	cgAssertSameOps(t, got, nil)
	cgAssertGradMap(t, grads, nil)
}

func TestAutodiffDirectInPlace(t *testing.T) {
	ops := []*netdef.OperatorDef{
		cgOp(cgDirect, cgStrs("in"), cgStrs("in")),
		cgOp(cgDirect, cgStrs("in"), cgStrs("out")),
	}
	want := []*netdef.OperatorDef{
		cgGradOp("DirectGradient", cgStrs("out_grad"), cgStrs("in_grad")),
		cgGradOp("DirectGradient", cgStrs("in_grad"), cgStrs("in_grad")),
	}
	got, _ := cgMustBackward(t, ops, nil, cgDense("out", "out_grad"))
	cgAssertSameOps(t, got, want)
}

func TestAutodiffVersionMismatch(t *testing.T) {
	ops := []*netdef.OperatorDef{
		cgOp(cgDirect, cgStrs("x"), cgStrs("x")),
		cgOp(cgDirect, cgStrs("y"), cgStrs("x")),
		cgOp(cgDirect, cgStrs("x"), cgStrs("y")),
	}
	_, _, err := cgBackward(ops, nil, cgDense("y", "y_grad"))
	if err == nil {
		t.Fatal("AddGradientOperators succeeded, want an error about an incorrect version")
	}
	if !strings.Contains(err.Error(), "version") || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("error %q should explain the version mismatch of blob x", err)
	}
	if !strings.Contains(err.Error(), "operator 0") {
		t.Errorf("error %q should name operator 0", err)
	}
}

func TestAutodiffUseOutput(t *testing.T) {
	ops := []*netdef.OperatorDef{
		cgOp(cgUseOutput, cgStrs("in"), cgStrs("hidden")),
		cgOp(cgUseOutput, cgStrs("hidden"), cgStrs("out")),
		cgOp(cgDirect, cgStrs("out"), cgStrs("sink")),
	}
	want := []*netdef.OperatorDef{
		cgGradOp("DirectGradient", cgStrs("sink_grad"), cgStrs("out_grad")),
		cgGradOp("UseOutputGradient", cgStrs("out", "out_grad"), cgStrs("hidden_grad")),
		cgGradOp("UseOutputGradient", cgStrs("hidden", "hidden_grad"), cgStrs("in_grad")),
	}
	got, _ := cgMustBackward(t, ops, nil, cgDense("sink", "sink_grad"))
	cgAssertSameOps(t, got, want)
}

func TestAutodiffUseOutputInPlace(t *testing.T) {
	ops := []*netdef.OperatorDef{
		cgOp(cgUseOutput, cgStrs("in"), cgStrs("in")),
		cgOp(cgUseOutput, cgStrs("in"), cgStrs("out")),
		cgOp(cgDirect, cgStrs("out"), cgStrs("sink")),
	}
	want := []*netdef.OperatorDef{
		cgGradOp("DirectGradient", cgStrs("sink_grad"), cgStrs("out_grad")),
		cgGradOp("UseOutputGradient", cgStrs("out", "out_grad"), cgStrs("in_grad")),
		cgGradOp("UseOutputGradient", cgStrs("in", "in_grad"), cgStrs("in_grad")),
	}
	got, _ := cgMustBackward(t, ops, nil, cgDense("sink", "sink_grad"))
	cgAssertSameOps(t, got, want)
}

func TestAutodiffUseOutputButOutputHasBeenChanged(t *testing.T) {
	ops := []*netdef.OperatorDef{
		cgOp(cgUseOutput, cgStrs("in"), cgStrs("hidden")),
		// hidden is overwritten, but the gradient of the first operator
		// needs it: autodiff must fail.
		cgOp(cgDirect, cgStrs("hidden"), cgStrs("hidden")),
		cgOp(cgUseOutput, cgStrs("hidden"), cgStrs("out")),
		cgOp(cgDirect, cgStrs("out"), cgStrs("sink")),
	}
	_, _, err := cgBackward(ops, nil, cgDense("sink", "sink_grad"))
	if err == nil {
		t.Fatal("AddGradientOperators succeeded, want an error: hidden was overwritten")
	}
	if !strings.Contains(err.Error(), `output "hidden"`) || !strings.Contains(err.Error(), "version") {
		t.Errorf("error %q should name the overwritten output hidden and its versions", err)
	}
}

func TestAutodiffUseInput(t *testing.T) {
	ops := []*netdef.OperatorDef{
		cgOp(cgDirect, cgStrs("in"), cgStrs("hidden")),
		cgOp(cgUseInput, cgStrs("hidden"), cgStrs("out")),
		cgOp(cgDirect, cgStrs("out"), cgStrs("sink")),
	}
	want := []*netdef.OperatorDef{
		cgGradOp("DirectGradient", cgStrs("sink_grad"), cgStrs("out_grad")),
		cgGradOp("UseInputGradient", cgStrs("hidden", "out_grad"), cgStrs("hidden_grad")),
		cgGradOp("DirectGradient", cgStrs("hidden_grad"), cgStrs("in_grad")),
	}
	got, _ := cgMustBackward(t, ops, nil, cgDense("sink", "sink_grad"))
	cgAssertSameOps(t, got, want)
}

func TestAutodiffUseInputButInputHasBeenChanged(t *testing.T) {
	ops := []*netdef.OperatorDef{
		cgOp(cgUseInput, cgStrs("in"), cgStrs("out")),
		cgOp(cgDirect, cgStrs("in"), cgStrs("in")),
	}
	_, _, err := cgBackward(ops, nil, cgDense("out", "out_grad"))
	if err == nil {
		t.Fatal("AddGradientOperators succeeded, want an error: in was overwritten")
	}
	if !strings.Contains(err.Error(), `input "in"`) || !strings.Contains(err.Error(), "DEBUG HELP") {
		t.Errorf("error %q should name the overwritten input and give its version history", err)
	}
}

func TestAutodiffMultiUseInput(t *testing.T) {
	for _, dev := range []*netdef.DeviceOption{nil, cgCuda1} {
		t.Run(fmt.Sprint(dev), func(t *testing.T) {
			ops := cgWithDevice(dev,
				cgOp(cgDirect, cgStrs("in"), cgStrs("hidden1")),
				cgOp(cgDirect, cgStrs("in"), cgStrs("hidden2")),
				cgOp(cgDirect, cgStrs("hidden1", "hidden2"), cgStrs("out")))
			want := cgWithDevice(dev,
				cgGradOp("DirectGradient", cgStrs("out_grad"), cgStrs("hidden1_grad", "hidden2_grad")),
				cgGradOp("DirectGradient", cgStrs("hidden2_grad"), cgStrs("in_grad")),
				cgGradOp("DirectGradient", cgStrs("hidden1_grad"), cgStrs("_in_grad_autosplit_0")),
				cgOp("Sum", cgStrs("in_grad", "_in_grad_autosplit_0"), cgStrs("in_grad")))
			got, grads := cgMustBackward(t, ops, nil, cgDense("out", "out_grad"))
			cgAssertSameOps(t, got, want)
			cgAssertGrad(t, grads, "in", "in_grad")
		})
	}
}

func TestAutodiffMultiUseInputButWithNoGradient(t *testing.T) {
	ops := []*netdef.OperatorDef{
		cgOp(cgDirect, cgStrs("in"), cgStrs("hidden1")),
		cgOp(cgNoGradient, cgStrs("in"), cgStrs("hidden2")),
		cgOp(cgDirect, cgStrs("hidden1", "hidden2"), cgStrs("out")),
	}
	want := []*netdef.OperatorDef{
		cgGradOp("DirectGradient", cgStrs("out_grad"), cgStrs("hidden1_grad", "hidden2_grad")),
		cgGradOp("DirectGradient", cgStrs("hidden1_grad"), cgStrs("in_grad")),
	}
	got, _ := cgMustBackward(t, ops, nil, cgDense("out", "out_grad"))
	cgAssertSameOps(t, got, want)
}

func TestAutodiffMultiUseInputAndMultipleVersions(t *testing.T) {
	ops := []*netdef.OperatorDef{
		cgOp(cgDirect, cgStrs("in"), cgStrs("in")),
		cgOp(cgDirect, cgStrs("in"), cgStrs("hidden1")),
		cgOp(cgDirect, cgStrs("in"), cgStrs("hidden2")),
		cgOp(cgDirect, cgStrs("hidden1", "hidden2"), cgStrs("out")),
	}
	want := []*netdef.OperatorDef{
		cgGradOp("DirectGradient", cgStrs("out_grad"), cgStrs("hidden1_grad", "hidden2_grad")),
		cgGradOp("DirectGradient", cgStrs("hidden2_grad"), cgStrs("in_grad")),
		cgGradOp("DirectGradient", cgStrs("hidden1_grad"), cgStrs("_in_grad_autosplit_0")),
		cgOp("Sum", cgStrs("in_grad", "_in_grad_autosplit_0"), cgStrs("in_grad")),
		cgGradOp("DirectGradient", cgStrs("in_grad"), cgStrs("in_grad")),
	}
	got, _ := cgMustBackward(t, ops, nil, cgDense("out", "out_grad"))
	cgAssertSameOps(t, got, want)
}

func TestAutodiffMultiUseInputAndMultipleVersionsBig(t *testing.T) {
	ops := []*netdef.OperatorDef{
		cgOp(cgDirect, cgStrs("in"), cgStrs("in")),
		cgOp(cgDirect, cgStrs("in"), cgStrs("hidden1")),
		cgOp(cgDirect, cgStrs("in"), cgStrs("hidden2")),
		cgOp(cgDirect, cgStrs("hidden1", "hidden2"), cgStrs("in")),
		cgOp(cgDirect, cgStrs("in"), cgStrs("hidden3")),
		cgOp(cgDirect, cgStrs("in"), cgStrs("hidden4")),
		cgOp(cgDirect, cgStrs("in"), cgStrs("hidden5")),
		cgOp(cgDirect, cgStrs("hidden3", "hidden4", "hidden5"), cgStrs("out")),
	}
	want := []*netdef.OperatorDef{
		cgGradOp("DirectGradient", cgStrs("out_grad"), cgStrs("hidden3_grad", "hidden4_grad", "hidden5_grad")),
		cgGradOp("DirectGradient", cgStrs("hidden5_grad"), cgStrs("in_grad")),
		cgGradOp("DirectGradient", cgStrs("hidden4_grad"), cgStrs("_in_grad_autosplit_0")),
		cgGradOp("DirectGradient", cgStrs("hidden3_grad"), cgStrs("_in_grad_autosplit_1")),
		cgOp("Sum", cgStrs("in_grad", "_in_grad_autosplit_0", "_in_grad_autosplit_1"), cgStrs("in_grad")),
		cgGradOp("DirectGradient", cgStrs("in_grad"), cgStrs("hidden1_grad", "hidden2_grad")),
		cgGradOp("DirectGradient", cgStrs("hidden2_grad"), cgStrs("in_grad")),
		cgGradOp("DirectGradient", cgStrs("hidden1_grad"), cgStrs("_in_grad_autosplit_0")),
		cgOp("Sum", cgStrs("in_grad", "_in_grad_autosplit_0"), cgStrs("in_grad")),
		cgGradOp("DirectGradient", cgStrs("in_grad"), cgStrs("in_grad")),
	}
	got, _ := cgMustBackward(t, ops, nil, cgDense("out", "out_grad"))
	cgAssertSameOps(t, got, want)
}

func TestAutodiffGradientMappingUsingSumOp(t *testing.T) {
	// Sum is what autodiff accumulates with; using it in the forward net
	// must work too.
	ops := []*netdef.OperatorDef{
		cgOp(cgOpType("FC"), cgStrs("in", "w", "b"), cgStrs("fc")),
		cgOp(cgOpType("Sum"), cgStrs("fc"), cgStrs("agg")),
		cgOp(cgOpType("AveragedLoss"), cgStrs("agg"), cgStrs("loss")),
	}
	got, grads := cgMustBackward(t, ops, nil, cgDense("loss", "loss_grad"))
	if len(got) == 0 {
		t.Fatal("no gradient operators")
	}
	cgAssertGrad(t, grads, "fc", "agg_grad")
	cgAssertGrad(t, grads, "in", "in_grad")
}

func TestAutodiffGradientCalculationWithPrint(t *testing.T) {
	ops := []*netdef.OperatorDef{
		cgOp(cgOpType("FC"), cgStrs("in", "w", "b"), cgStrs("fc")),
		cgOp(cgOpType("Print"), cgStrs("fc"), nil),
		cgOp(cgOpType("AveragedLoss"), cgStrs("fc"), cgStrs("loss")),
	}
	want := []*netdef.OperatorDef{
		cgGradOp("AveragedLossGradient", cgStrs("fc", "loss_grad"), cgStrs("fc_grad")),
		cgGradOp("FCGradient", cgStrs("in", "w", "fc_grad"), cgStrs("w_grad", "b_grad", "in_grad")),
	}
	got, _ := cgMustBackward(t, ops, nil, cgDense("loss", "loss_grad"))
	cgAssertSameOps(t, got, want)
}

func TestAutodiffStopGradient(t *testing.T) {
	ops := []*netdef.OperatorDef{
		cgOp(cgDirect, cgStrs("in"), cgStrs("hidden")),
		cgOp(cgOpType("StopGradient"), cgStrs("hidden"), cgStrs("hidden2")),
		cgOp(cgDirect, cgStrs("hidden2"), cgStrs("out")),
	}
	want := []*netdef.OperatorDef{
		cgGradOp("DirectGradient", cgStrs("out_grad"), cgStrs("hidden2_grad")),
	}
	got, _ := cgMustBackward(t, ops, nil, cgDense("out", "out_grad"))
	cgAssertSameOps(t, got, want)
}

func TestAutodiffStopGradientOrphan(t *testing.T) {
	// The check is made on the forward net, before any gradient maker runs,
	// so the real type name works whether or not its maker is linked.
	ops := []*netdef.OperatorDef{
		cgOp(cgDirect, cgStrs("in"), cgStrs("hidden")),
		cgOp(operators.StopGradientType, cgStrs("hidden"), cgStrs("auto_blobx")),
		cgOp(cgDirect, cgStrs("hidden"), cgStrs("out")),
	}
	_, _, err := cgBackward(ops, nil, cgDense("out", "out_grad"))
	if err == nil {
		t.Fatal("AddGradientOperators succeeded, want an error about the orphan StopGradient output")
	}
	if !strings.Contains(err.Error(), "orphan") || !strings.Contains(err.Error(), "auto_blobx") {
		t.Errorf("error %q should say that StopGradient's output auto_blobx is orphan", err)
	}
}

func TestAutodiffStopGradientInplace(t *testing.T) {
	ops := []*netdef.OperatorDef{
		cgOp(cgDirect, cgStrs("in"), cgStrs("hidden")),
		cgOp(cgOpType("StopGradient"), cgStrs("hidden"), cgStrs("hidden")),
		cgOp(cgDirect, cgStrs("hidden"), cgStrs("out")),
	}
	want := []*netdef.OperatorDef{
		cgGradOp("DirectGradient", cgStrs("out_grad"), cgStrs("hidden_grad")),
	}
	got, grads := cgMustBackward(t, ops, nil, cgDense("out", "out_grad"))
	cgAssertSameOps(t, got, want)
	cgAssertGradMap(t, grads, cgDense("out", "out_grad"))
}

func TestAutodiffStopGradientWithMultiUseOperators(t *testing.T) {
	ops := []*netdef.OperatorDef{
		cgOp(cgDirect, cgStrs("in"), cgStrs("hidden")),
		cgOp(cgDirect, cgStrs("hidden"), cgStrs("hidden2")),
		cgOp(cgOpType("StopGradient"), cgStrs("hidden"), cgStrs("hidden3")),
		cgOp(cgDirect, cgStrs("hidden2", "hidden3"), cgStrs("out")),
	}
	want := []*netdef.OperatorDef{
		cgGradOp("DirectGradient", cgStrs("out_grad"), cgStrs("hidden2_grad", "hidden3_grad")),
		cgGradOp("DirectGradient", cgStrs("hidden2_grad"), cgStrs("hidden_grad")),
		cgGradOp("DirectGradient", cgStrs("hidden_grad"), cgStrs("in_grad")),
	}
	got, grads := cgMustBackward(t, ops, nil, cgDense("out", "out_grad"))
	cgAssertSameOps(t, got, want)
	cgAssertGradMap(t, grads, cgDense("out", "out_grad", "hidden2", "hidden2_grad",
		"hidden3", "hidden3_grad", "hidden", "hidden_grad", "in", "in_grad"))
}

func TestAutodiffZeroGradient(t *testing.T) {
	net := &netdef.NetDef{ExternalInput: cgStrs("h", "c", "g", "s", "t")}
	net.Op = append(net.Op, cgOp(cgOpType("LSTMUnit"), cgStrs("h", "c", "g", "s", "t"), cgStrs("hidden_t", "cell_t")))
	// cell_t has no gradient, which the LSTMUnit gradient needs.
	if _, err := operators.AddGradientOperators(net, cgStrs("hidden_t"), nil); err == nil {
		t.Fatal("AddGradientOperators succeeded without a gradient for cell_t")
	} else if !strings.Contains(err.Error(), "cell_t") {
		t.Errorf("error %q should name cell_t", err)
	}
	if len(net.Op) != 1 {
		t.Fatalf("a failed AddGradientOperators left %d operators in the net, want 1", len(net.Op))
	}
	net.Op = append(net.Op, cgOp(operators.ZeroGradientType, cgStrs("cell_t"), nil))
	grads, err := operators.AddGradientOperators(net, cgStrs("hidden_t"), nil)
	if err != nil {
		t.Fatalf("AddGradientOperators with ZeroGradient: %v", err)
	}
	want := []*netdef.OperatorDef{
		cgOp("ConstantFill", cgStrs("hidden_t"), cgStrs("hidden_t_autogen_grad"), netdef.ArgFloat("value", 1)),
		cgGradOp("ConstantFill", cgStrs("cell_t"), cgStrs("cell_t_grad"), netdef.ArgFloat("value", 0)),
		cgGradOp("LSTMUnitGradient",
			cgStrs("h", "c", "g", "s", "t", "hidden_t", "cell_t", "hidden_t_autogen_grad", "cell_t_grad"),
			cgStrs("h_grad", "c_grad", "g_grad")),
	}
	cgAssertSameOps(t, net.Op[2:], want)
	cgAssertGrad(t, grads, "c", "c_grad")
}

func TestAutodiffTwoGrads(t *testing.T) {
	mul := cgOpType("Mul")
	ops := []*netdef.OperatorDef{
		cgOp(mul, cgStrs("input", "two"), cgStrs("mul_1")),
		cgOp(mul, cgStrs("mul_1", "three"), cgStrs("mul_2")),
	}
	gops, grads := cgMustBackward(t, ops, cgStrs("mul_2", "mul_1"), nil)
	ws := cgRunOps(t, append(ops, gops...), map[string]float32{"input": 1, "two": 2, "three": 3})
	g, ok := grads["input"]
	if !ok || g.Dense == "" {
		t.Fatalf("no dense gradient for input: %v", grads)
	}
	if v := cgScalar(t, ws, g.Dense); v != 8 {
		t.Errorf("gradient of input = %v, want 8", v)
	}
}

func TestAutodiffSparseAccumulationWithValues(t *testing.T) {
	// Gather's gradient computes only values; the indices are its input.
	//
	// x1-->Gather-->x4-->
	//        |          |
	// x2-----+     DotProduct-->x6
	//        |          |
	// x3-->Gather-->x5-->
	net := &netdef.NetDef{Op: []*netdef.OperatorDef{
		cgOp(cgOpType("Gather"), cgStrs("x2", "x1"), cgStrs("x4")),
		cgOp(cgOpType("Gather"), cgStrs("x2", "x3"), cgStrs("x5")),
		cgOp(cgOpType("DotProduct"), cgStrs("x4", "x5"), cgStrs("x6")),
	}}
	grads, err := operators.AddGradientOperators(net, cgStrs("x6"), nil)
	if err != nil {
		t.Fatal(err)
	}
	sumI, sumV := net.Op[len(net.Op)-2], net.Op[len(net.Op)-1]
	cgAssertIO(t, sumI, "Concat", cgStrs("x3", "x1"), "x2_grad_indices_concat")
	cgAssertIO(t, sumV, "Concat", cgStrs("x5_grad", "x4_grad"), "x2_grad_values_concat")
	cgAssertSameOps(t, []*netdef.OperatorDef{sumI, sumV}, []*netdef.OperatorDef{
		cgOp("Concat", cgStrs("x3", "x1"), cgStrs("x2_grad_indices_concat", "x2_grad_indices_concat_split"), netdef.ArgInt("axis", 0)),
		cgOp("Concat", cgStrs("x5_grad", "x4_grad"), cgStrs("x2_grad_values_concat", "x2_grad_values_concat_split"), netdef.ArgInt("axis", 0)),
	})
	if want := (operators.Gradient{Indices: "x2_grad_indices_concat", Values: "x2_grad_values_concat"}); grads["x2"] != want {
		t.Errorf("gradient of x2 = %+v, want %+v", grads["x2"], want)
	}
}

func TestAutodiffSparseGradientToDense(t *testing.T) {
	//                                        x1-->Gather-->x4-->
	//                                                 |        |
	// x0, w, b-->FC-->x2-->EnsureDenseGradient-->x2---+  DotProduct-->x6
	//                                                 |        |
	//                                        x3-->Gather-->x5-->
	net := &netdef.NetDef{Op: []*netdef.OperatorDef{
		cgOp(cgOpType("FC"), cgStrs("x0", "w", "b"), cgStrs("x2")),
		cgOp(cgOpType("EnsureDense"), cgStrs("x2"), cgStrs("x2")),
		cgOp(cgOpType("Gather"), cgStrs("x2", "x1"), cgStrs("x4")),
		cgOp(cgOpType("Gather"), cgStrs("x2", "x3"), cgStrs("x5")),
		cgOp(cgOpType("DotProduct"), cgStrs("x4", "x5"), cgStrs("x6")),
	}}
	if _, err := operators.AddGradientOperators(net, cgStrs("x6"), nil); err != nil {
		t.Fatal(err)
	}
	ensureDense := net.Op[len(net.Op)-2]
	if len(ensureDense.Input) < 2 || len(ensureDense.Output) < 1 {
		t.Fatalf("EnsureDense gradient = %s", prototext.Format(ensureDense))
	}
	if ensureDense.Input[0] != "x2_grad_indices_concat" || ensureDense.Input[1] != "x2_grad_values_concat" || ensureDense.Output[0] != "x2_grad" {
		t.Errorf("EnsureDense gradient = %s, want (x2_grad_indices_concat, x2_grad_values_concat, …) -> x2_grad", prototext.Format(ensureDense))
	}
}

func TestAutodiffSparseAccumulationWithIndicesAndValues(t *testing.T) {
	// SparseFunHash's gradient computes both indices and values.
	net := &netdef.NetDef{Op: []*netdef.OperatorDef{
		cgOp(cgOpType("SparseFunHash"), cgStrs("x1", "x2", "x3", "x4"), cgStrs("x8")),
		cgOp(cgOpType("SparseFunHash"), cgStrs("x5", "x6", "x7", "x4"), cgStrs("x9")),
		cgOp(cgOpType("DotProduct"), cgStrs("x8", "x9"), cgStrs("x10")),
	}}
	if _, err := operators.AddGradientOperators(net, cgStrs("x10"), nil); err != nil {
		t.Fatal(err)
	}
	sumI, sumV := net.Op[len(net.Op)-2], net.Op[len(net.Op)-1]
	cgAssertIO(t, sumI, "Concat", cgStrs("_x4_grad_indices_autosplit_0", "_x4_grad_indices_autosplit_1"), "x4_grad_indices_concat")
	cgAssertIO(t, sumV, "Concat", cgStrs("_x4_grad_values_autosplit_0", "_x4_grad_values_autosplit_1"), "x4_grad_values_concat")
}

func TestAutodiffNormalAccumulation(t *testing.T) {
	//  x1-->Relu--x2----------------->DotProduct-->x4
	//                |                 |
	//                 -->Softmax-->x3-->
	net := &netdef.NetDef{Op: []*netdef.OperatorDef{
		cgOp(cgOpType("Relu"), cgStrs("x1"), cgStrs("x2")),
		cgOp(cgOpType("Softmax"), cgStrs("x2"), cgStrs("x3")),
		cgOp(cgOpType("DotProduct"), cgStrs("x2", "x3"), cgStrs("x4")),
	}}
	if _, err := operators.AddGradientOperators(net, cgStrs("x4"), nil); err != nil {
		t.Fatal(err)
	}
	cgAssertIO(t, net.Op[len(net.Op)-2], "Sum", cgStrs("x2_grad", "_x2_grad_autosplit_0"), "x2_grad")
}

func TestAutodiffAccumulationWithNoGradientBranch(t *testing.T) {
	//                 -->PRINT
	//                |
	//  x1-->Relu--x2----------------->DotProduct-->x4
	//                |                 |
	//                 -->Softmax-->x3-->
	net := &netdef.NetDef{Op: []*netdef.OperatorDef{
		cgOp(cgOpType("Relu"), cgStrs("x1"), cgStrs("x2")),
		cgOp(cgOpType("Print"), cgStrs("x2"), nil),
		cgOp(cgOpType("Softmax"), cgStrs("x2"), cgStrs("x3")),
		cgOp(cgOpType("DotProduct"), cgStrs("x2", "x3"), cgStrs("x4")),
	}}
	if _, err := operators.AddGradientOperators(net, cgStrs("x4"), nil); err != nil {
		t.Fatal(err)
	}
	cgAssertIO(t, net.Op[len(net.Op)-2], "Sum", cgStrs("x2_grad", "_x2_grad_autosplit_0"), "x2_grad")
}

func TestAutodiffAddOpInMiddle(t *testing.T) {
	//  x1-->Relu--x2----------------->Add-->x4
	//                |                 |
	//                 -->Softmax-->x3-->
	net := &netdef.NetDef{Op: []*netdef.OperatorDef{
		cgOp(cgOpType("Relu"), cgStrs("x1"), cgStrs("x2")),
		cgOp(cgOpType("Softmax"), cgStrs("x2"), cgStrs("x3")),
		cgOp(cgOpType("Add"), cgStrs("x2", "x3"), cgStrs("x4")),
	}}
	grads, err := operators.AddGradientOperators(net, nil, cgDense("x4", "x4_grad"))
	if err != nil {
		t.Fatal(err)
	}
	cgAssertIO(t, net.Op[len(net.Op)-2], "Sum", cgStrs("x2_grad", "x4_grad"), "x2_grad")
	cgAssertGrad(t, grads, "x1", "x1_grad")
}

func TestAutodiffAddAndDynamicConstant(t *testing.T) {
	net := &netdef.NetDef{Op: []*netdef.OperatorDef{
		cgOp(cgOpType("FC"), cgStrs("x1", "x1_w", "x1_b"), cgStrs("x2")),
		cgOp(cgOpType("Relu"), cgStrs("x2"), cgStrs("x2")),
		cgOp(cgOpType("ConstantFill"), cgStrs("x2"), cgStrs("x3")),
		cgOp(cgOpType("Add"), cgStrs("x2", "x3"), cgStrs("x4")),
		cgOp(cgOpType("FC"), cgStrs("x4", "x4_w", "x4_b"), cgStrs("x5")),
		cgOp(cgOpType("SoftmaxWithLoss"), cgStrs("x5", "labels"), cgStrs("softmax", "loss")),
	}}
	grads, err := operators.AddGradientOperators(net, cgStrs("loss"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range net.Op {
		if o.GetType() == "Sum" {
			t.Errorf("operator %d is a Sum; no accumulation is needed", i)
		}
	}
	if _, ok := grads["x4"]; !ok {
		t.Error("no gradient for x4")
	}
	cgAssertGrad(t, grads, "x1", "x1_grad")
}

func TestAutodiffAddAndStaticConstant(t *testing.T) {
	net := &netdef.NetDef{Op: []*netdef.OperatorDef{
		cgOp(cgOpType("FC"), cgStrs("x1", "x1_w", "x1_b"), cgStrs("x2")),
		cgOp(cgOpType("Relu"), cgStrs("x2"), cgStrs("x2")),
		cgOp(cgOpType("ConstantFill"), nil, cgStrs("x3"), netdef.ArgInts("shape", 1)),
		cgOp(cgOpType("Add"), cgStrs("x2", "x3"), cgStrs("x4"), netdef.ArgInt("broadcast", 1)),
		cgOp(cgOpType("FC"), cgStrs("x4", "x4_w", "x4_b"), cgStrs("x5")),
		cgOp(cgOpType("SoftmaxWithLoss"), cgStrs("x5", "labels"), cgStrs("softmax", "loss")),
	}}
	grads, err := operators.AddGradientOperators(net, cgStrs("loss"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cgAssertGrad(t, grads, "x1", "x1_grad")
}

func TestAutodiffSubOpInMiddle(t *testing.T) {
	//  x1-->Relu--x2----------------->Sub-->x4
	//                |                 |
	//                 -->Softmax-->x3-->
	net := &netdef.NetDef{Op: []*netdef.OperatorDef{
		cgOp(cgOpType("Relu"), cgStrs("x1"), cgStrs("x2")),
		cgOp(cgOpType("Softmax"), cgStrs("x2"), cgStrs("x3")),
		cgOp(cgOpType("Sub"), cgStrs("x2", "x3"), cgStrs("x4")),
	}}
	grads, err := operators.AddGradientOperators(net, nil, cgDense("x4", "x4_grad"))
	if err != nil {
		t.Fatal(err)
	}
	cgAssertIO(t, net.Op[len(net.Op)-2], "Sum", cgStrs("x2_grad", "x4_grad"), "x2_grad")
	cgAssertGrad(t, grads, "x1", "x1_grad")
}

func TestAutodiffAddOpAtLeaf(t *testing.T) {
	net := &netdef.NetDef{Op: []*netdef.OperatorDef{
		cgOp(cgOpType("Add"), cgStrs("x1", "x2"), cgStrs("x4")),
		cgOp(cgOpType("Add"), cgStrs("x2", "x3"), cgStrs("x5")),
		cgOp(cgOpType("DotProduct"), cgStrs("x4", "x5"), cgStrs("x6")),
	}}
	grads, err := operators.AddGradientOperators(net, nil, cgDense("x6", "x6_grad"))
	if err != nil {
		t.Fatal(err)
	}
	cgAssertIO(t, net.Op[len(net.Op)-1], "Sum", cgStrs("x5_grad", "x4_grad"), "x2_grad")
	cgAssertGrad(t, grads, "x1", "x4_grad")
	cgAssertGrad(t, grads, "x2", "x2_grad")
	cgAssertGrad(t, grads, "x3", "x5_grad")
}

func TestAutodiffSubOpAtLeaf(t *testing.T) {
	net := &netdef.NetDef{Op: []*netdef.OperatorDef{
		cgOp(cgOpType("Sub"), cgStrs("x1", "x2"), cgStrs("x4")),
		cgOp(cgOpType("Sub"), cgStrs("x2", "x3"), cgStrs("x5")),
		cgOp(cgOpType("DotProduct"), cgStrs("x4", "x5"), cgStrs("x6")),
	}}
	grads, err := operators.AddGradientOperators(net, nil, cgDense("x6", "x6_grad"))
	if err != nil {
		t.Fatal(err)
	}
	cgAssertIO(t, net.Op[len(net.Op)-1], "Sum", cgStrs("x2_grad", "x5_grad"), "x2_grad")
	cgAssertGrad(t, grads, "x1", "x4_grad")
	cgAssertGrad(t, grads, "x2", "x2_grad")
	cgAssertGrad(t, grads, "x3", "x3_grad")
}

func TestAutodiffMultiLayerAddOps(t *testing.T) {
	net := &netdef.NetDef{Op: []*netdef.OperatorDef{
		cgOp(cgOpType("Add"), cgStrs("x1", "x2"), cgStrs("x4")),
		cgOp(cgOpType("Add"), cgStrs("x2", "x3"), cgStrs("x5")),
		cgOp(cgOpType("Add"), cgStrs("x4", "x5"), cgStrs("x6")),
	}}
	grads, err := operators.AddGradientOperators(net, nil, cgDense("x6", "x6_grad"))
	if err != nil {
		t.Fatal(err)
	}
	cgAssertIO(t, net.Op[len(net.Op)-1], "Sum", cgStrs("x6_grad", "x6_grad"), "x2_grad")
	cgAssertGrad(t, grads, "x1", "x6_grad")
	cgAssertGrad(t, grads, "x2", "x2_grad")
	cgAssertGrad(t, grads, "x3", "x6_grad")
}

func TestAutodiffMultiLayerSubOps(t *testing.T) {
	net := &netdef.NetDef{Op: []*netdef.OperatorDef{
		cgOp(cgOpType("Sub"), cgStrs("x1", "x2"), cgStrs("x4")),
		cgOp(cgOpType("Sub"), cgStrs("x2", "x3"), cgStrs("x5")),
		cgOp(cgOpType("Sub"), cgStrs("x4", "x5"), cgStrs("x6")),
	}}
	grads, err := operators.AddGradientOperators(net, nil, cgDense("x6", "x6_grad"))
	if err != nil {
		t.Fatal(err)
	}
	cgAssertIO(t, net.Op[len(net.Op)-1], "Sum", cgStrs("x2_grad", "x5_grad"), "x2_grad")
	cgAssertGrad(t, grads, "x1", "x6_grad")
	cgAssertGrad(t, grads, "x2", "x2_grad")
	cgAssertGrad(t, grads, "x3", "x3_grad")
}

func TestAutodiffAccumulationRuns(t *testing.T) {
	ops := []*netdef.OperatorDef{
		cgOp(cgOpType("Mul"), cgStrs("input", "two"), cgStrs("mul_1")),
		cgOp(cgOpType("Mul"), cgStrs("input", "three"), cgStrs("mul_2")),
		cgOp(cgOpType("Sub"), cgStrs("mul_1", "one"), cgStrs("sub")),
	}
	gops, grads := cgMustBackward(t, ops, cgStrs("mul_2", "sub"), nil)
	ws := cgRunOps(t, append(ops, gops...), map[string]float32{"one": 1, "input": 1, "two": 2, "three": 3})
	g, ok := grads["input"]
	if !ok || g.Dense == "" {
		t.Fatalf("no dense gradient for input: %v", grads)
	}
	if v := cgScalar(t, ws, g.Dense); v != 5 {
		t.Errorf("gradient of input = %v, want 5", v)
	}
}

func TestAutodiffIncorrectOperator(t *testing.T) {
	// Mul is given a single input (the second name is its output): its
	// gradient maker must reject it by its schema.
	net := &netdef.NetDef{ExternalInput: cgStrs("a", "b", "one")}
	net.Op = append(net.Op,
		cgOp(cgOpType("Mul"), cgStrs("a"), cgStrs("b")),
		cgOp(cgOpType("Sub"), cgStrs("b", "one"), cgStrs("sub")))
	_, err := operators.AddGradientOperators(net, cgStrs("sub"), nil)
	if err == nil {
		t.Fatal("AddGradientOperators succeeded on a Mul with one input")
	}
	if !strings.Contains(err.Error(), "schema") || !strings.Contains(err.Error(), "operator 0") {
		t.Errorf("error %q should name operator 0 and its schema", err)
	}
	if len(net.Op) != 2 {
		t.Errorf("a failed AddGradientOperators left %d operators in the net, want 2", len(net.Op))
	}
}

// Stand-in kernels for the operators the two running tests execute when no
// operator package provides them: element-wise float32 on equal shapes.

// cgRunType is the type to run an operator of type typ as: typ itself when it
// is registered in this binary, else its stand-in.
func cgRunType(typ string) string {
	if operators.IsOperator(typ) {
		return typ
	}
	return cgStandInPrefix + typ
}

// cgRunOps runs ops in order in a fresh workspace fed with one-element float32
// tensors.
func cgRunOps(t *testing.T, ops []*netdef.OperatorDef, feeds map[string]float32) *optest.Workspace {
	t.Helper()
	ws := optest.NewWorkspace()
	for name, v := range feeds {
		ws.Feed(name, blob.MustFromSlice([]float32{v}, 1))
	}
	for i, o := range ops {
		c := proto.Clone(o).(*netdef.OperatorDef)
		c.Type = proto.String(cgRunType(c.GetType()))
		if err := ws.Run(c); err != nil {
			t.Fatalf("running operator %d: %v\nnet:\n%s", i, err, cgFormatOps(ops))
		}
	}
	return ws
}

func cgScalar(t *testing.T, ws *optest.Workspace, name string) float32 {
	t.Helper()
	x := ws.Tensor(name)
	if x == nil || x.Size() != 1 {
		t.Fatalf("blob %q = %v, want a one-element tensor", name, x)
	}
	return blob.Data[float32](x)[0]
}

// cgElementwise is a stand-in kernel computing y[i] = f(x0[i], x1[i], …).
type cgElementwise struct {
	*operators.Base
	f     func(x []float32) float32
	arity int // number of inputs read; 0 for all of them
}

func (o *cgElementwise) Run() error {
	n := o.NumInputs()
	if o.arity > 0 {
		n = o.arity
	}
	xs := make([][]float32, n)
	for i := range xs {
		x, err := o.InputOf(i, blob.Float32)
		if err != nil {
			return err
		}
		if i > 0 && x.Size() != len(xs[0]) {
			return o.Errorf("input %q has %d elements, want %d", o.InputName(i), x.Size(), len(xs[0]))
		}
		xs[i] = append([]float32(nil), blob.Data[float32](x)...)
		if i == 0 {
			if err := o.Output(0).Init(blob.Float32, x.Dims()...); err != nil {
				return err
			}
		}
	}
	y := blob.Data[float32](o.Output(0))
	args := make([]float32, n)
	for k := range y {
		for i := range xs {
			args[i] = xs[i][k]
		}
		y[k] = o.f(args)
	}
	return nil
}

func cgRegisterStandInKernels() {
	kernel := func(typ string, arity int, f func(x []float32) float32) {
		operators.MustRegister(cgStandInPrefix+typ, netdef.CPU, "", func(b *operators.Base) (operators.Operator, error) {
			return &cgElementwise{Base: b, f: f, arity: arity}, nil
		})
	}
	kernel("Mul", 2, func(x []float32) float32 { return x[0] * x[1] })
	kernel("Sub", 2, func(x []float32) float32 { return x[0] - x[1] })
	kernel("Negative", 1, func(x []float32) float32 { return -x[0] })
	kernel("Sum", 0, func(x []float32) float32 {
		var s float32
		for _, v := range x {
			s += v
		}
		return s
	})
	operators.MustRegister(cgStandInPrefix+"ConstantFill", netdef.CPU, "", func(b *operators.Base) (operators.Operator, error) {
		v := b.ArgFloat("value", 0)
		return &cgElementwise{Base: b, f: func([]float32) float32 { return v }, arity: 1}, nil
	})
	for _, typ := range []string{"Mul", "Sub"} {
		operators.MustRegisterSchema(operators.Schema{
			Type: cgStandInPrefix + typ, MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
			AllowInplace: operators.InplaceAny,
		})
	}
}
