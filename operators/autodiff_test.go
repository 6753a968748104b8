package operators

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
)

// Test-only operator types (the Caffe2 conformance cases live in
// tests/core_gradients_test.go).
const (
	adDirect    = "autodiffTestDirect"    // DirectGradient(GO...) -> GI...
	adPass      = "autodiffTestPass"      // every input gets GO(0), no operator
	adSparse    = "autodiffTestSparse"    // input 0 gets the slice (I(1), GO(0))
	adPanic     = "autodiffTestPanic"     // the maker panics
	adStray     = "autodiffTestStray"     // reads a blob unrelated to the op
	adForbidden = "autodiffTestForbidden" // SHOULD_NOT_DO_GRADIENT
	adSchema    = "autodiffTestSchema"    // exactly two inputs
	adUseInput  = "autodiffTestUseInput"  // UseInputGradient(I(0), GO(0)) -> GI(0)
)

func init() {
	MustRegisterGradient(adDirect, func(g *GradientContext) error {
		var in, out []string
		for i := 0; i < g.NumOutputs(); i++ {
			in = append(in, g.GO(i))
		}
		for i := 0; i < g.NumInputs(); i++ {
			out = append(out, g.GI(i))
		}
		g.Op("DirectGradient", in, out)
		return nil
	})
	MustRegisterGradient(adPass, func(g *GradientContext) error {
		for i := 0; i < g.NumInputs(); i++ {
			g.SetGradient(i, g.GOGradient(0))
		}
		return nil
	})
	MustRegisterGradient(adSparse, func(g *GradientContext) error {
		g.SetGradient(0, Gradient{Indices: g.I(1), Values: g.GO(0)})
		return nil
	})
	MustRegisterGradient(adPanic, func(g *GradientContext) error {
		var s []string
		_ = s[3]
		return nil
	})
	MustRegisterGradient(adStray, func(g *GradientContext) error {
		g.Op("StrayGradient", []string{"unrelated"}, []string{g.GI(0)})
		return nil
	})
	MustRegisterGradient(adUseInput, func(g *GradientContext) error {
		g.Op("UseInputGradient", []string{g.I(0), g.GO(0)}, []string{g.GI(0)})
		return nil
	})
	MustRegisterGradientForbidden(adForbidden)
	MustRegisterGradient(adSchema, func(g *GradientContext) error { return nil })
	MustRegisterSchema(Schema{Type: adSchema, MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1})
}

func adOp(typ string, in, out []string) *netdef.OperatorDef { return netdef.NewOperator(typ, in, out) }

func TestIRPlayVersions(t *testing.T) {
	r, err := newIR([]*netdef.OperatorDef{
		adOp(adDirect, []string{"in"}, []string{"in"}),
		adOp(adDirect, []string{"in"}, []string{"h"}),
		adOp(adDirect, []string{"h", "w"}, []string{"h"}),
		adOp(adDirect, []string{"h"}, []string{"o", "o"}),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ in, out map[string]int }{
		{map[string]int{"in": 0}, map[string]int{"in": 1}}, // read first: written at version 1
		{map[string]int{"in": 1}, map[string]int{"h": 0}},  // new blob: version 0
		{map[string]int{"h": 0, "w": 0}, map[string]int{"h": 1}},
		{map[string]int{"h": 1}, map[string]int{"o": 1}}, // written twice by one op
	}
	for i, w := range want {
		s := r.ssa[i]
		if !mapsEqual(s.in, w.in) || !mapsEqual(s.out, w.out) {
			t.Errorf("op %d: in %v out %v, want in %v out %v", i, s.in, s.out, w.in, w.out)
		}
	}
	if got := r.usages[vblob{"h", 0}]; len(got) != 1 || got[0] != 2 {
		t.Errorf("usages of h@0 = %v, want [2]", got)
	}
	if r.frontier["in"] != 1 || r.frontier["h"] != 1 || r.frontier["o"] != 1 || r.frontier["w"] != 0 {
		t.Errorf("frontier = %v", r.frontier)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestGradIndex(t *testing.T) {
	list := []Gradient{{}, Dense("a_grad"), {Indices: "i", Values: "v"}}
	for name, want := range map[string]int{"a_grad": 1, "i": 2, "v": 2, "x": -1, "": -1} {
		if got := gradIndex(list, name); got != want {
			t.Errorf("gradIndex(%q) = %d, want %d", name, got, want)
		}
	}
}

func TestSumOutputName(t *testing.T) {
	op := adOp("G", nil, []string{"w_grad_indices", "w_grad_values", "d"})
	tests := []struct {
		gens []*genMeta
		want string
	}{
		{[]*genMeta{{grad: Dense("p")}, {op: op, idx: 2}}, "d"},
		{[]*genMeta{{sparse: true}, {sparse: true, opI: op, idxI: 0}}, "w_grad"},
		{[]*genMeta{{sparse: true, opV: op, idxV: 1}}, "w_grad"},
		{[]*genMeta{{sparse: true, opV: op, idxV: 2}}, "d"},
		{[]*genMeta{{grad: Dense("p")}}, "x_grad"},
	}
	for i, tc := range tests {
		if got := sumOutputName(tc.gens, "x"); got != tc.want {
			t.Errorf("case %d: sumOutputName = %q, want %q", i, got, tc.want)
		}
	}
}

func TestGradientTargetsOrder(t *testing.T) {
	net := &netdef.NetDef{}
	grads, err := AddGradientOperators(net, []string{"b", "a", "b"}, map[string]Gradient{
		"d": Dense("d_g"), "c": {}, "a": {},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, op := range net.Op {
		if op.GetType() != "ConstantFill" || len(op.Arg) != 1 || op.Arg[0].GetName() != "value" || op.Arg[0].GetF() != 1 {
			t.Fatalf("unexpected operator %v", op)
		}
		got = append(got, op.Input[0]+"->"+op.Output[0])
	}
	want := "b->b_autogen_grad a->a_autogen_grad c->c_autogen_grad"
	if strings.Join(got, " ") != want {
		t.Errorf("fills = %v, want %s", got, want)
	}
	if grads["d"] != Dense("d_g") || grads["c"] != Dense("c_autogen_grad") || len(grads) != 4 {
		t.Errorf("gradients = %v", grads)
	}
}

func TestAddGradientOperatorsErrors(t *testing.T) {
	tests := []struct {
		name  string
		ops   []*netdef.OperatorDef
		given map[string]Gradient
		want  []string // substrings of the error
	}{
		{"nil op", []*netdef.OperatorDef{nil}, nil, []string{"operator 0 is nil"}},
		{"half sparse", nil, map[string]Gradient{"y": {Indices: "i"}}, []string{`"y"`, "indices and values"}},
		{"dense and sparse", nil, map[string]Gradient{"y": {Dense: "d", Indices: "i", Values: "v"}}, []string{`"y"`, "both"}},
		{"stop gradient without output", []*netdef.OperatorDef{adOp(StopGradientType, []string{"x"}, nil)}, nil,
			[]string{"operator 0", StopGradientType}},
		{"panicking maker", []*netdef.OperatorDef{adOp(adPanic, []string{"x"}, []string{"y"})}, nil,
			[]string{"operator 0", adPanic, "panicked"}},
		{"no maker", []*netdef.OperatorDef{adOp("autodiffTestUnregistered", []string{"x"}, []string{"y"})}, nil,
			[]string{"operator 0", "autodiffTestUnregistered", "no gradient"}},
		{"forbidden", []*netdef.OperatorDef{adOp(adForbidden, []string{"x"}, []string{"y"})}, nil,
			[]string{"operator 0", adForbidden, "should not"}},
		{"schema", []*netdef.OperatorDef{adOp(adDirect, []string{"x"}, []string{"z"}), adOp(adSchema, []string{"z"}, []string{"y"})}, nil,
			[]string{"operator 1", adSchema, "schema"}},
		{"overwritten input", []*netdef.OperatorDef{
			adOp(adUseInput, []string{"in"}, []string{"y"}),
			adOp(adDirect, []string{"in"}, []string{"in"}),
		}, nil, []string{"operator 0", `input "in" at version 0`, "version 1", "DEBUG HELP",
			"version (in) 0 <-- operator 1 " + adDirect + "(in) -> (in)\nversion (out) 1 <-- operator 1"}},
		{"stray input", []*netdef.OperatorDef{adOp(adStray, []string{"x"}, []string{"y"})}, nil,
			[]string{"operator 0", `"unrelated"`}},
		{"sparse and dense mix", []*netdef.OperatorDef{
			adOp(adSparse, []string{"x", "idx"}, []string{"a"}),
			adOp(adDirect, []string{"x"}, []string{"b"}),
			adOp(adPass, []string{"a", "b"}, []string{"y"}),
		}, nil, []string{"operator 0", `"x"`, "mix of sparse and dense"}},
		{"pass-through named like the sum", []*netdef.OperatorDef{
			adOp(adPass, []string{"x"}, []string{"y"}),
			adOp(adPass, []string{"x"}, []string{"z"}),
		}, map[string]Gradient{"y": Dense("x_grad"), "z": Dense("z_g")}, []string{`"x"`, `"x_grad"`}},
		{"devices differ", []*netdef.OperatorDef{
			withDeviceOpt(adOp(adDirect, []string{"x"}, []string{"a"}), netdef.NewDeviceOption(netdef.CUDA, 0)),
			withDeviceOpt(adOp(adDirect, []string{"x"}, []string{"b"}), netdef.NewDeviceOption(netdef.CUDA, 1)),
			adOp(adPass, []string{"a", "b"}, []string{"y"}),
		}, nil, []string{"operator 0", `"x"`, "device option"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			net := &netdef.NetDef{Op: tc.ops}
			_, err := AddGradientOperators(net, []string{"y"}, tc.given)
			if err == nil {
				t.Fatal("no error")
			}
			for _, s := range tc.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %s", err, s)
				}
			}
			if len(net.Op) != len(tc.ops) {
				t.Errorf("the net has %d operators after the error, want %d", len(net.Op), len(tc.ops))
			}
		})
	}
	if _, err := AddGradientOperators(nil, []string{"y"}, nil); err == nil {
		t.Error("nil net: no error")
	}
}

func withDeviceOpt(op *netdef.OperatorDef, d *netdef.DeviceOption) *netdef.OperatorDef {
	op.DeviceOption = d
	return op
}

func TestAccumulationDeviceOption(t *testing.T) {
	// The autogenerated fill takes the device scope; the Sum takes the
	// device option of the first gradient operator generating its inputs.
	cuda1 := netdef.NewDeviceOption(netdef.CUDA, 1)
	cuda2 := netdef.NewDeviceOption(netdef.CUDA, 2)
	net := &netdef.NetDef{Op: []*netdef.OperatorDef{
		withDeviceOpt(adOp(adDirect, []string{"x"}, []string{"a"}), cuda1),
		withDeviceOpt(adOp(adDirect, []string{"x"}, []string{"b"}), cuda1),
		adOp(adPass, []string{"a", "b"}, []string{"y"}),
	}}
	var err error
	devicescope.DeviceScope(cuda2, func() {
		_, err = AddGradientOperators(net, []string{"y"}, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	ops := net.Op[3:]
	if len(ops) != 4 {
		t.Fatalf("got %d gradient operators, want 4: %v", len(ops), ops)
	}
	fill, sum := ops[0], ops[3]
	if fill.GetType() != "ConstantFill" || !proto.Equal(fill.DeviceOption, cuda2) {
		t.Errorf("fill = %v, want a ConstantFill on CUDA 2", fill)
	}
	if sum.GetType() != "Sum" || !proto.Equal(sum.DeviceOption, cuda1) || sum.GetIsGradientOp() {
		t.Errorf("sum = %v, want a Sum on CUDA 1 not marked as a gradient op", sum)
	}
	if got := strings.Join(sum.Input, ","); got != "x_grad,_x_grad_autosplit_0" || sum.Output[0] != "x_grad" {
		t.Errorf("sum = %v -> %v", sum.Input, sum.Output)
	}
}

func TestSparseGivenGradientPassesThrough(t *testing.T) {
	net := &netdef.NetDef{Op: []*netdef.OperatorDef{adOp(adPass, []string{"x"}, []string{"y"})}}
	slice := Gradient{Indices: "yi", Values: "yv"}
	grads, err := AddGradientOperators(net, nil, map[string]Gradient{"y": slice})
	if err != nil {
		t.Fatal(err)
	}
	if len(net.Op) != 1 || grads["x"] != slice || grads["y"] != slice {
		t.Errorf("ops %v, gradients %v", net.Op, grads)
	}
}

func TestGradientContextArgs(t *testing.T) {
	def := netdef.NewOperator("X", nil, []string{"y"}, netdef.ArgInt("i", 7), netdef.ArgFloat("f", 2.5), netdef.ArgString("s", "text"))
	g := &GradientContext{def: def}
	if a := g.Arg("s"); a == nil || string(a.S) != "text" || g.Arg("missing") != nil {
		t.Errorf("Arg: %v, %v", g.Arg("s"), g.Arg("missing"))
	}
	if !g.HasArg("i") || g.HasArg("missing") {
		t.Error("HasArg")
	}
	if g.ArgInt("i", 0) != 7 || g.ArgInt("f", 0) != 2 || g.ArgInt("s", 3) != 3 || g.ArgInt("missing", 9) != 9 {
		t.Errorf("ArgInt: %d %d %d %d", g.ArgInt("i", 0), g.ArgInt("f", 0), g.ArgInt("s", 3), g.ArgInt("missing", 9))
	}
}
