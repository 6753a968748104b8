package tests

// A port of Caffe2's caffe2/python/core_gradients_test.py (spec §8.3): the
// executable specification of operators.AddGradientOperators (spec §3.7).
// Every upstream test is a subtest named after it.
//
// Real operators (Relu, Softmax, FC, Sum, Add, Sub, Mul, Gather, Print,
// StopGradient, ConstantFill, …) are used under their own names with their
// real gradient makers: package workspace links every operator family.
// Two kinds of operators are registered here under test-only type names
// (cgPrefix + name), so that they can never collide with a real
// registration:
//
//   - the made-up operators of the upstream test (Direct, UseOutput,
//     UseInput, Nogradient), with the gradient makers the upstream test
//     registers;
//   - the Caffe2 operators that caffe2go does not implement (EnsureDense,
//     SparseFunHash): made-up operators here too,
//     whose gradient makers copy Caffe2's. The tests only build their
//     gradients and never run them.
//
// ZeroGradient is special: autodiff recognizes it by type name, so when no
// operator package registers it, Caffe2's maker is registered under that
// name.

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/workspace"
)

// cgPrefix prefixes the type names of the test-only operators.
const cgPrefix = "CoreGradTest"

// cgUpstreamOps are the gradient makers of the upstream test's made-up
// operators, and cgMissingOps Caffe2's gradient makers of the Caffe2
// operators that caffe2go does not implement. Both are keyed by the
// upstream type name, registered as cgPrefix + name, and cgParse maps the
// upstream name to that type.
var cgUpstreamOps = map[string]operators.GradientMaker{
	"Direct": cgUpstreamMaker("DirectGradient", nil),
	"UseOutput": cgUpstreamMaker("UseOutputGradient", func(g *operators.GradientContext) []string {
		return cgNames(g.NumOutputs(), g.O)
	}),
	"UseInput": cgUpstreamMaker("UseInputGradient", func(g *operators.GradientContext) []string {
		return cgNames(g.NumInputs(), g.I)
	}),
	"Nogradient": func(*operators.GradientContext) error { return nil },
}

var cgMissingOps = map[string]operators.GradientMaker{
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
}

// cgUpstreamMaker builds a maker like the upstream test's Python ones: one
// operator of type typ whose inputs are the names pre returns (none for a
// nil pre) followed by the gradients of all the forward outputs (NeedAll),
// and whose outputs are the gradients of all the forward inputs (GIS). It
// copies only the device option.
func cgUpstreamMaker(typ string, pre func(*operators.GradientContext) []string) operators.GradientMaker {
	return func(g *operators.GradientContext) error {
		g.CopyArguments, g.CopyEngine = false, false
		var in []string
		if pre != nil {
			in = pre(g)
		}
		for i := 0; i < g.NumOutputs(); i++ {
			if !g.HasGO(i) {
				return fmt.Errorf("need gradient for %q but it is not provided", g.O(i))
			}
			in = append(in, g.GO(i))
		}
		g.Op(typ, in, cgNames(g.NumInputs(), g.GI))
		return nil
	}
}

// cgNames returns name(0), …, name(n-1).
func cgNames(n int, name func(int) string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = name(i)
	}
	return out
}

func init() {
	for name, m := range cgUpstreamOps {
		operators.MustRegisterGradient(cgPrefix+name, m)
	}
	for name, m := range cgMissingOps {
		operators.MustRegisterGradient(cgPrefix+name, m)
	}
	if !operators.HasGradient(operators.ZeroGradientType) {
		// Caffe2's ZeroGradient maker: a zero-filled gradient.
		operators.MustRegisterGradient(operators.ZeroGradientType, func(g *operators.GradientContext) error {
			g.Op("ConstantFill", []string{g.I(0)}, []string{g.GI(0)}, netdef.ArgFloat("value", 0))
			return nil
		})
	}
}

// cgParse builds the operator that spec describes, "Type(in, …) -> out, …"
// (either list may be empty), with an (empty) name as Caffe2's
// CreateOperator sets it. A type of cgUpstreamOps or cgMissingOps becomes
// its test-only type.
func cgParse(spec string, args ...*netdef.Argument) *netdef.OperatorDef {
	typ, rest, ok1 := strings.Cut(spec, "(")
	in, out, ok2 := strings.Cut(rest, ")")
	out, ok3 := strings.CutPrefix(strings.TrimSpace(out), "->")
	if !ok1 || !ok2 || !ok3 {
		panic(fmt.Sprintf("bad operator spec %q", spec))
	}
	list := func(s string) []string {
		var names []string
		for _, n := range strings.Split(s, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
		return names
	}
	if cgUpstreamOps[typ] != nil || cgMissingOps[typ] != nil {
		typ = cgPrefix + typ
	}
	o := netdef.NewOperator(typ, list(in), list(out), args...)
	o.Name = proto.String("")
	return o
}

// cgOps parses operators without arguments (see cgParse).
func cgOps(specs ...string) []*netdef.OperatorDef {
	ops := make([]*netdef.OperatorDef, len(specs))
	for i, s := range specs {
		ops[i] = cgParse(s)
	}
	return ops
}

// cgGrad parses an operator as a gradient maker emits it.
func cgGrad(spec string, args ...*netdef.Argument) *netdef.OperatorDef {
	o := cgParse(spec, args...)
	o.IsGradientOp = proto.Bool(true)
	return o
}

// cgDense returns the dense gradients given as (blob, gradient) pairs.
func cgDense(pairs ...string) map[string]operators.Gradient {
	m := map[string]operators.Gradient{}
	for i := 0; i+1 < len(pairs); i += 2 {
		m[pairs[i]] = operators.Dense(pairs[i+1])
	}
	return m
}

// cgOnDevice sets the device option of copies of ops (none for a nil option).
func cgOnDevice(dev *netdef.DeviceOption, ops []*netdef.OperatorDef) []*netdef.OperatorDef {
	out := make([]*netdef.OperatorDef, len(ops))
	for i, o := range ops {
		out[i] = proto.Clone(o).(*netdef.OperatorDef)
		if dev != nil {
			out[i].DeviceOption = proto.Clone(dev).(*netdef.DeviceOption)
		}
	}
	return out
}

// cgBackward runs autodiff on a net holding copies of fwd (upstream's
// GetBackwardPass and Net.AddGradientOperators) and returns the whole net.
// On error it checks that the net was left unchanged.
func cgBackward(t *testing.T, fwd []*netdef.OperatorDef, ys []string, given map[string]operators.Gradient) (*netdef.NetDef, map[string]operators.Gradient, error) {
	t.Helper()
	net := &netdef.NetDef{Op: cgOnDevice(nil, fwd)}
	grads, err := operators.AddGradientOperators(net, ys, given)
	if err != nil && len(net.Op) != len(fwd) {
		t.Errorf("a failed AddGradientOperators left %d operators in the net, want %d", len(net.Op), len(fwd))
	}
	return net, grads, err
}

// cgCheckOps compares operators field by field.
func cgCheckOps(t *testing.T, got, want []*netdef.OperatorDef) {
	t.Helper()
	format := func(ops []*netdef.OperatorDef) string {
		var sb strings.Builder
		for i, o := range ops {
			fmt.Fprintf(&sb, "  %d: %s\n", i, prototext.MarshalOptions{}.Format(o))
		}
		return sb.String()
	}
	if !slices.EqualFunc(got, want, func(a, b *netdef.OperatorDef) bool { return proto.Equal(a, b) }) {
		t.Errorf("operators differ:\ngot:\n%swant:\n%s", format(got), format(want))
	}
}

// cgCheckGrads compares the gradient map with want: all of it when exact,
// else only the blobs want names.
func cgCheckGrads(t *testing.T, got, want map[string]operators.Gradient, exact bool) {
	t.Helper()
	if exact {
		if !maps.Equal(got, want) {
			t.Errorf("gradient map = %v, want %v", got, want)
		}
		return
	}
	for name, w := range want {
		if g, ok := got[name]; g != w {
			t.Errorf("gradient of %q = %+v (present: %v), want %+v", name, g, ok, w)
		}
	}
}

var cgCuda1 = netdef.NewDeviceOption(netdef.CUDA, 1)

// The upstream tests that compare the whole backward pass, or where it must
// fail.
func TestAutodiffBackwardPass(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fwd       []*netdef.OperatorDef
		ys        []string
		given     map[string]operators.Gradient
		want      []*netdef.OperatorDef
		grads     map[string]operators.Gradient // the whole gradient map; nil: not checked
		onDevices bool                          // also on (CUDA, 1), every op
		wantErr   []string                      // what the error must contain; nil: no error
	}{{
		name:      "testDirect",
		fwd:       cgOps("Direct(in) -> hidden", "Direct(hidden) -> out"),
		given:     cgDense("out", "out_grad"),
		want:      []*netdef.OperatorDef{cgGrad("DirectGradient(out_grad) -> hidden_grad"), cgGrad("DirectGradient(hidden_grad) -> in_grad")},
		onDevices: true,
	}, {
		name: "testDirectImplicitGradientSource",
		fwd:  cgOps("Direct(in) -> hidden", "Direct(hidden) -> out"),
		ys:   []string{"out"},
		want: []*netdef.OperatorDef{
			cgParse("ConstantFill(out) -> out_autogen_grad", netdef.ArgFloat("value", 1)),
			cgGrad("DirectGradient(out_autogen_grad) -> hidden_grad"),
			cgGrad("DirectGradient(hidden_grad) -> in_grad"),
		},
		grads: cgDense("out", "out_autogen_grad", "hidden", "hidden_grad", "in", "in_grad"),
	}, {
		name:  "testDoesNotGenerateUnnecessaryGradients",
		fwd:   cgOps("Direct(in) -> hidden", "Direct(hidden) -> out"),
		given: cgDense("hidden", "hidden_grad"),
		want:  []*netdef.OperatorDef{cgGrad("DirectGradient(hidden_grad) -> in_grad")},
	}, {
		name:  "testDirectButNoOutputGradientGiven",
		fwd:   cgOps("Direct(in) -> hidden", "Direct(hidden) -> out"),
		given: cgDense(),
		grads: cgDense(),
	}, {
		name:  "testDirectInPlace",
		fwd:   cgOps("Direct(in) -> in", "Direct(in) -> out"),
		given: cgDense("out", "out_grad"),
		want:  []*netdef.OperatorDef{cgGrad("DirectGradient(out_grad) -> in_grad"), cgGrad("DirectGradient(in_grad) -> in_grad")},
	}, {
		name:    "testVersionMismatch",
		fwd:     cgOps("Direct(x) -> x", "Direct(y) -> x", "Direct(x) -> y"),
		given:   cgDense("y", "y_grad"),
		wantErr: []string{"version", `"x"`, "operator 0"},
	}, {
		name:  "testUseOutput",
		fwd:   cgOps("UseOutput(in) -> hidden", "UseOutput(hidden) -> out", "Direct(out) -> sink"),
		given: cgDense("sink", "sink_grad"),
		want: []*netdef.OperatorDef{
			cgGrad("DirectGradient(sink_grad) -> out_grad"),
			cgGrad("UseOutputGradient(out, out_grad) -> hidden_grad"),
			cgGrad("UseOutputGradient(hidden, hidden_grad) -> in_grad"),
		},
	}, {
		name:  "testUseOutputInPlace",
		fwd:   cgOps("UseOutput(in) -> in", "UseOutput(in) -> out", "Direct(out) -> sink"),
		given: cgDense("sink", "sink_grad"),
		want: []*netdef.OperatorDef{
			cgGrad("DirectGradient(sink_grad) -> out_grad"),
			cgGrad("UseOutputGradient(out, out_grad) -> in_grad"),
			cgGrad("UseOutputGradient(in, in_grad) -> in_grad"),
		},
	}, {
		// hidden is overwritten, but the gradient of the first operator
		// needs it.
		name:    "testUseOutputButOutputHasBeenChanged",
		fwd:     cgOps("UseOutput(in) -> hidden", "Direct(hidden) -> hidden", "UseOutput(hidden) -> out", "Direct(out) -> sink"),
		given:   cgDense("sink", "sink_grad"),
		wantErr: []string{`output "hidden"`, "version"},
	}, {
		name:  "testUseInput",
		fwd:   cgOps("Direct(in) -> hidden", "UseInput(hidden) -> out", "Direct(out) -> sink"),
		given: cgDense("sink", "sink_grad"),
		want: []*netdef.OperatorDef{
			cgGrad("DirectGradient(sink_grad) -> out_grad"),
			cgGrad("UseInputGradient(hidden, out_grad) -> hidden_grad"),
			cgGrad("DirectGradient(hidden_grad) -> in_grad"),
		},
	}, {
		name:    "testUseInputButInputHasBeenChanged",
		fwd:     cgOps("UseInput(in) -> out", "Direct(in) -> in"),
		given:   cgDense("out", "out_grad"),
		wantErr: []string{`input "in"`, "DEBUG HELP"},
	}, {
		name:  "testMultiUseInput",
		fwd:   cgOps("Direct(in) -> hidden1", "Direct(in) -> hidden2", "Direct(hidden1, hidden2) -> out"),
		given: cgDense("out", "out_grad"),
		want: []*netdef.OperatorDef{
			cgGrad("DirectGradient(out_grad) -> hidden1_grad, hidden2_grad"),
			cgGrad("DirectGradient(hidden2_grad) -> in_grad"),
			cgGrad("DirectGradient(hidden1_grad) -> _in_grad_autosplit_0"),
			cgParse("Sum(in_grad, _in_grad_autosplit_0) -> in_grad"),
		},
		grads:     cgDense("out", "out_grad", "hidden1", "hidden1_grad", "hidden2", "hidden2_grad", "in", "in_grad"),
		onDevices: true,
	}, {
		name:  "testMultiUseInputButWithNoGradient",
		fwd:   cgOps("Direct(in) -> hidden1", "Nogradient(in) -> hidden2", "Direct(hidden1, hidden2) -> out"),
		given: cgDense("out", "out_grad"),
		want: []*netdef.OperatorDef{
			cgGrad("DirectGradient(out_grad) -> hidden1_grad, hidden2_grad"),
			cgGrad("DirectGradient(hidden1_grad) -> in_grad"),
		},
	}, {
		name:  "testMultiUseInputAndMultipleVersions",
		fwd:   cgOps("Direct(in) -> in", "Direct(in) -> hidden1", "Direct(in) -> hidden2", "Direct(hidden1, hidden2) -> out"),
		given: cgDense("out", "out_grad"),
		want: []*netdef.OperatorDef{
			cgGrad("DirectGradient(out_grad) -> hidden1_grad, hidden2_grad"),
			cgGrad("DirectGradient(hidden2_grad) -> in_grad"),
			cgGrad("DirectGradient(hidden1_grad) -> _in_grad_autosplit_0"),
			cgParse("Sum(in_grad, _in_grad_autosplit_0) -> in_grad"),
			cgGrad("DirectGradient(in_grad) -> in_grad"),
		},
	}, {
		name: "testMultiUseInputAndMultipleVersionsBig",
		fwd: cgOps("Direct(in) -> in", "Direct(in) -> hidden1", "Direct(in) -> hidden2", "Direct(hidden1, hidden2) -> in",
			"Direct(in) -> hidden3", "Direct(in) -> hidden4", "Direct(in) -> hidden5", "Direct(hidden3, hidden4, hidden5) -> out"),
		given: cgDense("out", "out_grad"),
		want: []*netdef.OperatorDef{
			cgGrad("DirectGradient(out_grad) -> hidden3_grad, hidden4_grad, hidden5_grad"),
			cgGrad("DirectGradient(hidden5_grad) -> in_grad"),
			cgGrad("DirectGradient(hidden4_grad) -> _in_grad_autosplit_0"),
			cgGrad("DirectGradient(hidden3_grad) -> _in_grad_autosplit_1"),
			cgParse("Sum(in_grad, _in_grad_autosplit_0, _in_grad_autosplit_1) -> in_grad"),
			cgGrad("DirectGradient(in_grad) -> hidden1_grad, hidden2_grad"),
			cgGrad("DirectGradient(hidden2_grad) -> in_grad"),
			cgGrad("DirectGradient(hidden1_grad) -> _in_grad_autosplit_0"),
			cgParse("Sum(in_grad, _in_grad_autosplit_0) -> in_grad"),
			cgGrad("DirectGradient(in_grad) -> in_grad"),
		},
	}, {
		name:  "testGradientCalculationWithPrint",
		fwd:   cgOps("FC(in, w, b) -> fc", "Print(fc) ->", "AveragedLoss(fc) -> loss"),
		given: cgDense("loss", "loss_grad"),
		want: []*netdef.OperatorDef{
			cgGrad("AveragedLossGradient(fc, loss_grad) -> fc_grad"),
			cgGrad("FCGradient(in, w, fc_grad) -> w_grad, b_grad, in_grad"),
		},
	}, {
		name:  "testStopGradient",
		fwd:   cgOps("Direct(in) -> hidden", "StopGradient(hidden) -> hidden2", "Direct(hidden2) -> out"),
		given: cgDense("out", "out_grad"),
		want:  []*netdef.OperatorDef{cgGrad("DirectGradient(out_grad) -> hidden2_grad")},
	}, {
		name:    "testStopGradientOrphan",
		fwd:     cgOps("Direct(in) -> hidden", "StopGradient(hidden) -> auto_blobx", "Direct(hidden) -> out"),
		given:   cgDense("out", "out_grad"),
		wantErr: []string{"orphan", "auto_blobx"},
	}, {
		name:  "testStopGradientInplace",
		fwd:   cgOps("Direct(in) -> hidden", "StopGradient(hidden) -> hidden", "Direct(hidden) -> out"),
		given: cgDense("out", "out_grad"),
		want:  []*netdef.OperatorDef{cgGrad("DirectGradient(out_grad) -> hidden_grad")},
		grads: cgDense("out", "out_grad"),
	}, {
		name:  "testStopGradientWithMultiUseOperators",
		fwd:   cgOps("Direct(in) -> hidden", "Direct(hidden) -> hidden2", "StopGradient(hidden) -> hidden3", "Direct(hidden2, hidden3) -> out"),
		given: cgDense("out", "out_grad"),
		want: []*netdef.OperatorDef{
			cgGrad("DirectGradient(out_grad) -> hidden2_grad, hidden3_grad"),
			cgGrad("DirectGradient(hidden2_grad) -> hidden_grad"),
			cgGrad("DirectGradient(hidden_grad) -> in_grad"),
		},
		grads: cgDense("out", "out_grad", "hidden2", "hidden2_grad", "hidden3", "hidden3_grad", "hidden", "hidden_grad", "in", "in_grad"),
	}, {
		// Mul is given one input (the second name is its output): its
		// schema must reject it.
		name:    "testIncorrectOperator",
		fwd:     cgOps("Mul(a) -> b", "Sub(b, one) -> sub"),
		ys:      []string{"sub"},
		wantErr: []string{"schema", "operator 0"},
	}} {
		devs := []*netdef.DeviceOption{nil}
		if tc.onDevices {
			devs = append(devs, cgCuda1)
		}
		for _, dev := range devs {
			name := tc.name
			if dev != nil {
				name += "/on_CUDA_1"
			}
			t.Run(name, func(t *testing.T) {
				net, grads, err := cgBackward(t, cgOnDevice(dev, tc.fwd), tc.ys, tc.given)
				if tc.wantErr != nil {
					if err == nil {
						t.Fatalf("AddGradientOperators succeeded, want an error containing %q", tc.wantErr)
					}
					for _, w := range tc.wantErr {
						if !strings.Contains(err.Error(), w) {
							t.Errorf("error %q does not contain %q", err, w)
						}
					}
					return
				}
				if err != nil {
					t.Fatalf("AddGradientOperators: %v", err)
				}
				cgCheckOps(t, net.Op[len(tc.fwd):], cgOnDevice(dev, tc.want))
				if tc.grads != nil {
					cgCheckGrads(t, grads, tc.grads, true)
				}
			})
		}
	}
}

// The upstream tests that check how gradients are accumulated (or passed
// through): the operators at the end of the net and some gradients.
func TestAutodiffAccumulation(t *testing.T) {
	// A sparse gradient of x accumulated from several: the two Concat
	// operators that join the indices and the values, and the result.
	concats := func(x, indices, values string) []*netdef.OperatorDef {
		return []*netdef.OperatorDef{
			cgParse(fmt.Sprintf("Concat(%s) -> %s_grad_indices_concat, %[2]s_grad_indices_concat_split", indices, x), netdef.ArgInt("axis", 0)),
			cgParse(fmt.Sprintf("Concat(%s) -> %s_grad_values_concat, %[2]s_grad_values_concat_split", values, x), netdef.ArgInt("axis", 0)),
		}
	}
	concatenated := func(x string) operators.Gradient {
		return operators.Gradient{Indices: x + "_grad_indices_concat", Values: x + "_grad_values_concat"}
	}
	for _, tc := range []struct {
		name  string
		fwd   []*netdef.OperatorDef
		ys    []string
		given map[string]operators.Gradient
		tail  []*netdef.OperatorDef // operators ending at the end of the net, or one before it
		skip  int                   // how many operators follow tail
		grads map[string]operators.Gradient
		noSum bool // no Sum operator at all
	}{{
		// Sum is what autodiff accumulates with; using it in the forward
		// net must work too.
		name:  "testGradientMappingUsingSumOp",
		fwd:   cgOps("FC(in, w, b) -> fc", "Sum(fc) -> agg", "AveragedLoss(agg) -> loss"),
		given: cgDense("loss", "loss_grad"),
		tail:  []*netdef.OperatorDef{cgGrad("FCGradient(in, w, agg_grad) -> w_grad, b_grad, in_grad")},
		grads: cgDense("fc", "agg_grad", "in", "in_grad"),
	}, {
		// Gather's gradient computes only values; the indices are its input.
		name:  "testSparseAccumulationWithValues",
		fwd:   cgOps("Gather(x2, x1) -> x4", "Gather(x2, x3) -> x5", "DotProduct(x4, x5) -> x6"),
		ys:    []string{"x6"},
		tail:  concats("x2", "x3, x1", "x5_grad, x4_grad"),
		grads: map[string]operators.Gradient{"x2": concatenated("x2")},
	}, {
		name: "testSparseGradientToDense",
		fwd: cgOps("FC(x0, w, b) -> x2", "EnsureDense(x2) -> x2", "Gather(x2, x1) -> x4", "Gather(x2, x3) -> x5",
			"DotProduct(x4, x5) -> x6"),
		ys:    []string{"x6"},
		tail:  []*netdef.OperatorDef{cgGrad("SparseToDense(x2_grad_indices_concat, x2_grad_values_concat, x2) -> x2_grad")},
		skip:  1,
		grads: cgDense("x2", "x2_grad", "x0", "x0_grad"),
	}, {
		// SparseFunHash's gradient computes both indices and values.
		name: "testSparseAccumulationWithIndicesAndValues",
		fwd:  cgOps("SparseFunHash(x1, x2, x3, x4) -> x8", "SparseFunHash(x5, x6, x7, x4) -> x9", "DotProduct(x8, x9) -> x10"),
		ys:   []string{"x10"},
		tail: concats("x4", "_x4_grad_indices_autosplit_0, _x4_grad_indices_autosplit_1",
			"_x4_grad_values_autosplit_0, _x4_grad_values_autosplit_1"),
		grads: map[string]operators.Gradient{"x4": concatenated("x4")},
	}, {
		name:  "testNormalAccumulation",
		fwd:   cgOps("Relu(x1) -> x2", "Softmax(x2) -> x3", "DotProduct(x2, x3) -> x4"),
		ys:    []string{"x4"},
		tail:  []*netdef.OperatorDef{cgParse("Sum(x2_grad, _x2_grad_autosplit_0) -> x2_grad"), cgGrad("ReluGradient(x2, x2_grad) -> x1_grad")},
		grads: cgDense("x1", "x1_grad"),
	}, {
		name:  "testAccumulationWithNoGradientBranch",
		fwd:   cgOps("Relu(x1) -> x2", "Print(x2) ->", "Softmax(x2) -> x3", "DotProduct(x2, x3) -> x4"),
		ys:    []string{"x4"},
		tail:  []*netdef.OperatorDef{cgParse("Sum(x2_grad, _x2_grad_autosplit_0) -> x2_grad"), cgGrad("ReluGradient(x2, x2_grad) -> x1_grad")},
		grads: cgDense("x1", "x1_grad"),
	}, {
		name: "testAddAndDynamicConstant",
		fwd: cgOps("FC(x1, x1_w, x1_b) -> x2", "Relu(x2) -> x2", "ConstantFill(x2) -> x3", "Add(x2, x3) -> x4",
			"FC(x4, x4_w, x4_b) -> x5", "SoftmaxWithLoss(x5, labels) -> softmax, loss"),
		ys:    []string{"loss"},
		grads: cgDense("x4", "x4_grad", "x1", "x1_grad"),
		noSum: true,
	}, {
		name: "testAddAndStaticConstant",
		fwd: []*netdef.OperatorDef{
			cgParse("FC(x1, x1_w, x1_b) -> x2"),
			cgParse("Relu(x2) -> x2"),
			cgParse("ConstantFill() -> x3", netdef.ArgInts("shape", 1)),
			cgParse("Add(x2, x3) -> x4", netdef.ArgInt("broadcast", 1)),
			cgParse("FC(x4, x4_w, x4_b) -> x5"),
			cgParse("SoftmaxWithLoss(x5, labels) -> softmax, loss"),
		},
		ys:    []string{"loss"},
		grads: cgDense("x1", "x1_grad"),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			net, grads, err := cgBackward(t, tc.fwd, tc.ys, tc.given)
			if err != nil {
				t.Fatalf("AddGradientOperators: %v", err)
			}
			if len(net.Op) == len(tc.fwd) {
				t.Fatal("no gradient operators")
			}
			if end := len(net.Op) - tc.skip; tc.tail != nil {
				cgCheckOps(t, net.Op[max(len(tc.fwd), end-len(tc.tail)):end], tc.tail)
			}
			cgCheckGrads(t, grads, tc.grads, false)
			for i, o := range net.Op {
				if tc.noSum && o.GetType() == "Sum" {
					t.Errorf("operator %d is a Sum; no accumulation is needed", i)
				}
			}
		})
	}
}

// The upstream pass-through tests: Add gives its output gradient to both
// inputs without an operator, Sub to its first input (and a Negative of it
// to the second), so the accumulating Sum reads those gradients by name.
func TestAutodiffPassThrough(t *testing.T) {
	// x1 -> Relu -> x2 -> Softmax -> x3; (x2, x3) -> op -> x4.
	middle := func(op string) []string {
		return []string{"Relu(x1) -> x2", "Softmax(x2) -> x3", op + "(x2, x3) -> x4"}
	}
	// (x1, x2) -> op -> x4; (x2, x3) -> op -> x5; (x4, x5) -> top -> x6.
	leaf := func(op, top string) []string {
		return []string{op + "(x1, x2) -> x4", op + "(x2, x3) -> x5", top + "(x4, x5) -> x6"}
	}
	for _, tc := range []struct {
		name  string
		fwd   []string // the last operator's output is given the gradient out_grad
		sum   string   // the inputs of Sum(…) -> x2_grad
		skip  int      // how many operators follow the Sum
		grads []string // (blob, gradient) pairs
	}{
		{"testAddOpInMiddle", middle("Add"), "x2_grad, x4_grad", 1, []string{"x1", "x1_grad"}},
		{"testSubOpInMiddle", middle("Sub"), "x2_grad, x4_grad", 1, []string{"x1", "x1_grad"}},
		{"testAddOpAtLeaf", leaf("Add", "DotProduct"), "x5_grad, x4_grad", 0, []string{"x1", "x4_grad", "x2", "x2_grad", "x3", "x5_grad"}},
		{"testSubOpAtLeaf", leaf("Sub", "DotProduct"), "x2_grad, x5_grad", 0, []string{"x1", "x4_grad", "x2", "x2_grad", "x3", "x3_grad"}},
		{"testMultiLayerAddOps", leaf("Add", "Add"), "x6_grad, x6_grad", 0, []string{"x1", "x6_grad", "x2", "x2_grad", "x3", "x6_grad"}},
		{"testMultiLayerSubOps", leaf("Sub", "Sub"), "x2_grad, x5_grad", 0, []string{"x1", "x6_grad", "x2", "x2_grad", "x3", "x3_grad"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fwd := cgOps(tc.fwd...)
			out := fwd[len(fwd)-1].Output[0]
			net, grads, err := cgBackward(t, fwd, nil, cgDense(out, out+"_grad"))
			if err != nil {
				t.Fatalf("AddGradientOperators: %v", err)
			}
			if end := len(net.Op) - tc.skip; end > len(fwd) {
				cgCheckOps(t, net.Op[end-1:end], cgOps("Sum("+tc.sum+") -> x2_grad"))
			} else {
				t.Fatalf("%d gradient operators, want a Sum followed by %d", len(net.Op)-len(fwd), tc.skip)
			}
			cgCheckGrads(t, grads, cgDense(tc.grads...), false)
		})
	}
}

// The stand-ins must give way to the real operators once caffe2go has them.
func TestAutodiffStandInsStillNeeded(t *testing.T) {
	for name := range cgMissingOps {
		if operators.IsOperator(name) || operators.HasGradient(name) {
			t.Errorf("%s is registered now: use it instead of its stand-in %s%[1]s in core_gradients_test.go", name, cgPrefix)
		}
	}
}

func TestAutodiffZeroGradient(t *testing.T) {
	// test_zero_gradient: the LSTMUnit gradient needs the gradient of
	// cell_t, which nothing provides until a ZeroGradient reads it.
	fwd := cgOps("LSTMUnit(h, c, g, s, t) -> hidden_t, cell_t")
	if _, _, err := cgBackward(t, fwd, []string{"hidden_t"}, nil); err == nil {
		t.Fatal("AddGradientOperators succeeded without a gradient for cell_t")
	} else if !strings.Contains(err.Error(), "cell_t") {
		t.Errorf("error %q should name cell_t", err)
	}
	fwd = append(fwd, cgParse(operators.ZeroGradientType+"(cell_t) ->"))
	net, grads, err := cgBackward(t, fwd, []string{"hidden_t"}, nil)
	if err != nil {
		t.Fatalf("AddGradientOperators with ZeroGradient: %v", err)
	}
	cgCheckOps(t, net.Op[len(fwd):], []*netdef.OperatorDef{
		cgParse("ConstantFill(hidden_t) -> hidden_t_autogen_grad", netdef.ArgFloat("value", 1)),
		cgGrad("ConstantFill(cell_t) -> cell_t_grad", netdef.ArgFloat("value", 0)),
		cgGrad("LSTMUnitGradient(h, c, g, s, t, hidden_t, cell_t, hidden_t_autogen_grad, cell_t_grad) -> h_grad, c_grad, g_grad"),
	})
	cgCheckGrads(t, grads, cgDense("c", "c_grad"), false)
}

// The upstream tests that run the generated net.
func TestAutodiffRuns(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fwd   []*netdef.OperatorDef
		ys    []string
		feeds map[string]float32
		want  float32 // the gradient of input
	}{{
		name:  "test_two_grads",
		fwd:   cgOps("Mul(input, two) -> mul_1", "Mul(mul_1, three) -> mul_2"),
		ys:    []string{"mul_2", "mul_1"},
		feeds: map[string]float32{"input": 1, "two": 2, "three": 3},
		want:  8,
	}, {
		name:  "testAccumulationRuns",
		fwd:   cgOps("Mul(input, two) -> mul_1", "Mul(input, three) -> mul_2", "Sub(mul_1, one) -> sub"),
		ys:    []string{"mul_2", "sub"},
		feeds: map[string]float32{"one": 1, "input": 1, "two": 2, "three": 3},
		want:  5,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			net, grads, err := cgBackward(t, tc.fwd, tc.ys, nil)
			if err != nil {
				t.Fatalf("AddGradientOperators: %v", err)
			}
			g := grads["input"]
			if g.Dense == "" {
				t.Fatalf("no dense gradient for input: %v", grads)
			}
			ws := workspace.New("")
			for name, v := range tc.feeds {
				if err := ws.FeedBlob(name, []float32{v}); err != nil {
					t.Fatal(err)
				}
			}
			if err := ws.RunNetOnce(net); err != nil {
				t.Fatalf("RunNetOnce: %v\nnet:\n%s", err, prototext.Format(net))
			}
			x, err := ws.FetchBlob(g.Dense)
			if err != nil {
				t.Fatal(err)
			}
			if v := blob.Data[float32](x); len(v) != 1 || v[0] != tc.want {
				t.Errorf("gradient of input (%s) = %v, want [%v]", g.Dense, v, tc.want)
			}
		})
	}
}
