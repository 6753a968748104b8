package netdef_test

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
)

type vb = netdef.VersionedBlob

func TestSSA(t *testing.T) {
	op := netdef.NewOperator
	tests := []struct {
		name      string
		def       *netdef.NetDef
		want      []netdef.SSAOp
		undefined []string
	}{
		{
			name: "in-place chain",
			def: &netdef.NetDef{
				ExternalInput: []string{"x", "w"},
				Op: []*netdef.OperatorDef{
					op("FC", []string{"x", "w"}, []string{"y"}),
					op("Relu", []string{"y"}, []string{"y"}),
					op("Sum", []string{"y", "x"}, []string{"x", "z"}),
					op("Print", []string{"x", "y", "z"}, nil),
				},
			},
			want: []netdef.SSAOp{
				{Inputs: []vb{{"x", 0}, {"w", 0}}, Outputs: []vb{{"y", 1}}},
				{Inputs: []vb{{"y", 1}}, Outputs: []vb{{"y", 2}}},
				{Inputs: []vb{{"y", 2}, {"x", 0}}, Outputs: []vb{{"x", 1}, {"z", 1}}},
				{Inputs: []vb{{"x", 1}, {"y", 2}, {"z", 1}}},
			},
			undefined: []string{"w", "x"},
		},
		{
			name: "undeclared inputs start at 0",
			def: &netdef.NetDef{Op: []*netdef.OperatorDef{
				op("Relu", []string{"a"}, []string{"b"}),
				op("Add", []string{"b", "c"}, []string{"a"}),
				op("Relu", []string{"a"}, []string{"a"}),
			}},
			want: []netdef.SSAOp{
				{Inputs: []vb{{"a", 0}}, Outputs: []vb{{"b", 1}}},
				{Inputs: []vb{{"b", 1}, {"c", 0}}, Outputs: []vb{{"a", 1}}},
				{Inputs: []vb{{"a", 1}}, Outputs: []vb{{"a", 2}}},
			},
			undefined: []string{"a", "c"},
		},
		{
			name: "same output twice",
			def:  &netdef.NetDef{Op: []*netdef.OperatorDef{op("Split", []string{"a"}, []string{"b", "b"})}},
			want: []netdef.SSAOp{{Inputs: []vb{{"a", 0}}, Outputs: []vb{{"b", 2}, {"b", 2}}}},
			// As in Caffe2: both outputs take the final version.
			undefined: []string{"a"},
		},
		{name: "nil", def: nil, want: []netdef.SSAOp{}, undefined: []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, undefined := netdef.SSA(tc.def)
			if len(got) != len(tc.want) {
				t.Fatalf("SSA has %d ops, want %d", len(got), len(tc.want))
			}
			for i := range got {
				if !slices.Equal(got[i].Inputs, tc.want[i].Inputs) || !slices.Equal(got[i].Outputs, tc.want[i].Outputs) {
					t.Errorf("op %d = %v, want %v", i, got[i], tc.want[i])
				}
			}
			if !slices.Equal(undefined, tc.undefined) {
				t.Errorf("undefined = %q, want %q", undefined, tc.undefined)
			}
		})
	}
}

// Port of core_test.py TestCloneNet.testPartialClone.
func TestClonePartial(t *testing.T) {
	n := netdef.NewNet("original")
	if err := n.AddExternalInput("a1", "a2"); err != nil {
		t.Fatal(err)
	}
	n.Op("Concat", []string{"a1", "a2"}, []string{"b1", "b2"}, netdef.ArgInt("axis", 0))
	n.Op("Sum", []string{"b1", "p1"}, []string{"c1"}) // p1 comes from another net
	n.Op("Sum", []string{"b2"}, []string{"c2"})
	n.Op("Sum", []string{"c1", "c2"}, []string{"d"})
	// Gradient ops, as AddGradientOperators([d]) would add them: ignored.
	grad := []*netdef.OperatorDef{
		netdef.NewOperator("ConstantFill", []string{"d"}, []string{"d_autogen_grad"}, netdef.ArgFloat("value", 1)),
		netdef.NewOperator("SumGradient", []string{"d_autogen_grad"}, []string{"c1_grad", "c2_grad"}),
		netdef.NewOperator("SumGradient", []string{"c2_grad"}, []string{"b2_grad"}),
		netdef.NewOperator("SumGradient", []string{"c1_grad"}, []string{"b1_grad", "p1_grad"}),
		netdef.NewOperator("ConcatGradient", []string{"b1_grad", "b2_grad"}, []string{"a1_grad", "a2_grad"}),
	}
	for _, g := range grad[1:] {
		g.IsGradientOp = proto.Bool(true)
	}
	for _, g := range grad {
		n.AddOp(g)
	}
	// Some in-place ops.
	n.Op("Sum", []string{"p1"}, []string{"k"})
	n.Op("Sum", []string{"d"}, []string{"e"})
	n.Op("Sum", []string{"e", "k"}, []string{"e"})
	n.Op("Sum", []string{"e"}, []string{"e"})
	n.Op("Sum", []string{"e"}, []string{"f"})
	before := proto.Clone(n.Proto())

	set := func(s ...string) map[string]bool {
		m := map[string]bool{}
		for _, x := range s {
			m[x] = true
		}
		return m
	}
	same := func(m map[string]bool, s []string) bool {
		if len(set(s...)) != len(m) {
			return false
		}
		for _, x := range s {
			if !m[x] {
				return false
			}
		}
		return true
	}
	ident := func(names ...string) map[string]string {
		m := map[string]string{}
		for _, s := range names {
			m[s] = s
		}
		return m
	}
	tests := []struct {
		name      string
		inputs    map[string]string
		outputs   []string
		ops       int
		ins, outs map[string]bool
		internals map[string]bool
	}{
		{"f1", map[string]string{"a1": "a11", "a2": "a22"}, []string{"d"}, 4,
			set("p1", "a11", "a22"), set("f1/d"), set("f1/b1", "f1/b2", "f1/c1", "f1/c2", "p1")},
		{"f2", ident("b1", "b2"), []string{"d"}, 3,
			set("p1", "b1", "b2"), set("f2/d"), set("f2/c1", "f2/c2", "p1")},
		{"f3", ident("b1"), []string{"c1"}, 1,
			set("p1", "b1"), set("f3/c1"), set("p1")},
		{"f4", ident("b1", "b2"), []string{"c1", "c2"}, 2,
			set("p1", "b1", "b2"), set("f4/c1", "f4/c2"), set("p1")},
		{"f5", ident("d"), []string{"e"}, 4,
			set("p1", "d"), set("f5/e"), set("f5/k", "p1")},
		{"f7", ident("d"), []string{"e", "f"}, 5,
			set("p1", "d"), set("f7/e", "f7/f"), set("p1", "f7/k")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, outs, err := n.ClonePartial(tc.name, tc.inputs, tc.outputs)
			if err != nil {
				t.Fatal(err)
			}
			def := c.Proto()
			if len(def.Op) != tc.ops {
				t.Errorf("ops = %d, want %d", len(def.Op), tc.ops)
			}
			for _, op := range def.Op {
				if op.GetIsGradientOp() {
					t.Errorf("gradient op %s cloned", op.GetType())
				}
			}
			if !same(tc.ins, def.ExternalInput) {
				t.Errorf("external inputs = %q, want %v", def.ExternalInput, tc.ins)
			}
			if !same(tc.outs, def.ExternalOutput) {
				t.Errorf("external outputs = %q, want %v", def.ExternalOutput, tc.outs)
			}
			all := c.UsedBlobNames()
			want := map[string]bool{}
			for _, m := range []map[string]bool{tc.ins, tc.outs, tc.internals} {
				for k := range m {
					want[k] = true
				}
			}
			if !same(want, all) {
				t.Errorf("blobs = %q, want %v", all, want)
			}
			if len(outs) != len(tc.outputs) {
				t.Fatalf("returned %d outputs", len(outs))
			}
			for i, o := range outs {
				if want := tc.name + "/" + tc.outputs[i]; o != want {
					t.Errorf("output %d = %q, want %q", i, o, want)
				}
				if !c.BlobIsDefined(o) {
					t.Errorf("output %q not defined in the clone", o)
				}
			}
			if !strings.HasPrefix(c.Name(), tc.name) {
				t.Errorf("clone name = %q", c.Name())
			}
		})
	}

	t.Run("f1 input order", func(t *testing.T) {
		c, _, err := n.ClonePartial("f1", map[string]string{"a2": "a22", "a1": "a11"}, []string{"d"})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := c.ExternalInputs(), []string{"a11", "a22", "p1"}; !slices.Equal(got, want) {
			t.Errorf("external inputs = %q, want %q", got, want)
		}
	})

	errTests := []struct {
		name    string
		inputs  map[string]string
		outputs []string
		want    string
	}{
		{"needed op produces an input", ident("a1", "a2", "c2"), []string{"d"}, "produces a given input"},
		{"undefined output", ident("a1"), []string{"nope"}, `"nope"`},
		{"unknown input", ident("nope"), []string{"d"}, `"nope"`},
	}
	for _, tc := range errTests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := n.ClonePartial("f4", tc.inputs, tc.outputs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %s", err, tc.want)
			}
		})
	}
	if !proto.Equal(before, n.Proto()) {
		t.Errorf("ClonePartial changed the original net")
	}
}
