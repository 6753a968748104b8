package netdef_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
)

// autoOp adds an op whose outputs are named automatically, as Caffe2's
// net.<Type>(inputs, outputs=None or n) does: n == 0 means one output
// NextName(typ), n > 0 means NextName(typ, i) for i < n.
func autoOp(n *netdef.Net, typ string, inputs []string, count int) []string {
	var outs []string
	if count == 0 {
		outs = []string{n.NextName(typ)}
	}
	for i := 0; i < count; i++ {
		outs = append(outs, n.NextName(typ, i))
	}
	n.Op(typ, inputs, outs)
	return outs
}

// fresh returns a base name no net has used yet, so that tests also pass
// with -count > 1 (the name registry is process-wide).
func fresh(prefix string) string {
	return netdef.NewNet(prefix).Name() + "_t"
}

func TestNetNamesAreUnique(t *testing.T) {
	u := fresh("uniq")
	a := netdef.NewNet(u)
	b := netdef.NewNet(u)
	c := netdef.NewNet(u)
	if a.Name() != u || b.Name() != u+"_1" || c.Name() != u+"_2" {
		t.Errorf("names = %q, %q, %q; want %[4]s, %[4]s_1, %[4]s_2", a.Name(), b.Name(), c.Name(), u)
	}
	// A name that looks generated is taken as is, and skipped later.
	v := fresh("uniq")
	d := netdef.NewNet(v + "_1")
	e := netdef.NewNet(v)
	f := netdef.NewNet(v)
	if d.Name() != v+"_1" || e.Name() != v || f.Name() != v+"_2" {
		t.Errorf("names = %q, %q, %q; want %[4]s_1, %[4]s, %[4]s_2", d.Name(), e.Name(), f.Name(), v)
	}
	if a.Proto().GetName() != a.Name() {
		t.Errorf("proto name %q != Name() %q", a.Proto().GetName(), a.Name())
	}
	// From a proto and as a clone.
	if g := netdef.NetFromProto(a.Proto()); g.Name() != u+"_3" {
		t.Errorf("NetFromProto name = %q, want %s_3", g.Name(), u)
	}
	if h := a.Clone(u, nil, nil); h.Name() != u+"_4" {
		t.Errorf("Clone name = %q, want %s_4", h.Name(), u)
	}
}

func TestNetNamesConcurrent(t *testing.T) {
	const goroutines, each = 8, 50
	base := fresh("concurrent")
	names := make(chan string, goroutines*each)
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				names <- netdef.NewNet(base).Name()
			}
		}()
	}
	wg.Wait()
	close(names)
	seen := map[string]bool{}
	for name := range names {
		if seen[name] {
			t.Fatalf("name %q handed out twice", name)
		}
		seen[name] = true
	}
	if len(seen) != goroutines*each || !seen[base] || !seen[fmt.Sprintf("%s_%d", base, goroutines*each-1)] {
		t.Errorf("unexpected name set (size %d)", len(seen))
	}
}

// Port of core_test.py TestAutoNaming.test_auto_naming (name scopes belong
// to package devicescope; here the three rounds run unscoped).
func TestAutoNaming(t *testing.T) {
	a := netdef.NewNet("net")
	b := netdef.NewNet("net")
	if a.Proto().GetName() == b.Proto().GetName() {
		t.Fatalf("two nets called %q", a.Name())
	}
	if err := a.AddExternalInput("a"); err != nil {
		t.Fatal(err)
	}
	if err := b.AddExternalInput("b"); err != nil {
		t.Fatal(err)
	}
	var all []string
	addOps := func() {
		all = append(all, autoOp(a, "Sum", []string{"a", "a"}, 0)...)
		all = append(all, autoOp(a, "Sum", []string{"a", "a"}, 0)...)
		all = append(all, autoOp(b, "Sum", []string{"b", "b"}, 0)...)
		all = append(all, autoOp(b, "Sum", []string{"b", "b"}, 0)...)
		all = append(all, autoOp(a, "Sum", []string{"a", "a"}, 2)...)
		all = append(all, autoOp(a, "Sum", []string{"a", "a"}, 2)...)
		all = append(all, autoOp(b, "Sum", []string{"b", "b"}, 2)...)
		all = append(all, autoOp(b, "Sum", []string{"b", "b"}, 2)...)
	}
	addOps()
	addOps()
	_ = a.Proto().GetName() // forces a lookup-table rebuild, as in Caffe2's test
	addOps()
	seen := map[string]bool{}
	for _, o := range all {
		if seen[o] {
			t.Errorf("auto name %q used twice", o)
		}
		seen[o] = true
	}
	// The exact names follow Caffe2's NextName.
	first := all[:6]
	want := []string{
		a.Name() + "/Sum", a.Name() + "/Sum_2",
		b.Name() + "/Sum", b.Name() + "/Sum_2",
		a.Name() + "/Sum:0", a.Name() + "/Sum:1",
	}
	if !slices.Equal(first, want) {
		t.Errorf("first names = %q, want %q", first, want)
	}
	if got := a.ExternalInputs(); !slices.Equal(got, []string{"a"}) {
		t.Errorf("external inputs of a = %q, want [a]", got)
	}
}

func TestNextName(t *testing.T) {
	n := netdef.NewNet(fresh("nextname"))
	nn := n.Name()
	if got := n.NextName(""); got != nn+"_blob_0" {
		t.Errorf("NextName() = %q", got)
	}
	if got := n.NextName(""); got != nn+"_blob_1" {
		t.Errorf("NextName() = %q", got)
	}
	if got := n.NextName("Relu"); got != nn+"/Relu" {
		t.Errorf("NextName(Relu) = %q", got)
	}
	// Not reserved until defined.
	if got := n.NextName("Relu"); got != nn+"/Relu" {
		t.Errorf("NextName(Relu) again = %q", got)
	}
	n.Op("Relu", []string{"x"}, []string{nn + "/Relu"})
	n.Op("Relu", []string{"x"}, []string{nn + "/Relu_2:1"})
	if got := n.NextName("Relu"); got != nn+"/Relu_2" {
		t.Errorf("NextName(Relu) after use = %q", got)
	}
	if got := n.NextName("Relu", 1); got != nn+"/Relu:1" {
		t.Errorf("NextName(Relu, 1) = %q", got)
	}
	if err := n.AddExternalInput(nn + "/Relu:1"); err != nil {
		t.Fatal(err)
	}
	if got := n.NextName("Relu", 1); got != nn+"/Relu_3:1" {
		t.Errorf("NextName(Relu, 1) after use = %q", got)
	}
}

// Port of core_test.py TestAutoNaming.test_next_blob.
func TestNextBlob(t *testing.T) {
	create := func() *netdef.Net {
		n := netdef.NewNet("net")
		n.Op("Add", []string{"a", "b"}, []string{n.NextBlob("foo/ab")}) // NextScopedBlob("ab") in NameScope("foo")
		n.Op("Add", []string{"c", "d"}, []string{n.NextBlob("cd")})
		return n
	}
	a, b := create(), create()
	if len(a.Proto().Op) != 2 {
		t.Fatalf("ops = %d", len(a.Proto().Op))
	}
	for i := range a.Proto().Op {
		if !proto.Equal(a.Proto().Op[i], b.Proto().Op[i]) {
			t.Errorf("op %d differs between identical nets", i)
		}
	}
	if got := a.Proto().Op[0].Output[0]; got != "foo/ab" {
		t.Errorf("output 0 = %q, want foo/ab", got)
	}
	if got := a.Proto().Op[1].Output[0]; got != "cd" {
		t.Errorf("output 1 = %q, want cd", got)
	}
	c := netdef.NewNet("net")
	if x, y := c.NextBlob("b"), c.NextBlob("b"); x == y {
		t.Errorf("NextBlob(b) twice gave %q", x)
	}
	// Exact names: defined blobs and earlier results are skipped.
	d := netdef.NewNet("nextblob")
	d.Op("Relu", []string{"x"}, []string{"y"})
	for _, want := range []string{"y_auto_0", "y_auto_1"} {
		if got := d.NextBlob("y"); got != want {
			t.Errorf("NextBlob(y) = %q, want %q", got, want)
		}
	}
	if got := d.NextBlob("x"); got != "x_auto_0" { // x is an external input
		t.Errorf("NextBlob(x) = %q, want x_auto_0", got)
	}
	if got := d.NextBlob(""); got != "unnamed" {
		t.Errorf("NextBlob(\"\") = %q, want unnamed", got)
	}
}

func TestAddOpExternalInputs(t *testing.T) {
	n := netdef.NewNet("addop")
	op := n.Op("FC", []string{"data", "w", "b"}, []string{"fc"}, netdef.ArgInt("axis", 1))
	if op != n.Proto().Op[0] {
		t.Errorf("Op did not return the added op")
	}
	n.Op("Relu", []string{"fc"}, []string{"fc"})
	n.Op("Sum", []string{"fc", "w", "extra", "extra"}, []string{"out"})
	if got, want := n.ExternalInputs(), []string{"data", "w", "b", "extra"}; !slices.Equal(got, want) {
		t.Errorf("external inputs = %q, want %q", got, want)
	}
	if n.AddOp(nil) != nil || len(n.Proto().Op) != 3 {
		t.Errorf("AddOp(nil) changed the net")
	}
	// Edits through Proto are seen.
	n.Proto().Op = append(n.Proto().Op, netdef.NewOperator("Copy", []string{"out"}, []string{"copied"}))
	if !n.BlobIsDefined("copied") {
		t.Errorf("op added through Proto not seen")
	}
	p := n.Proto()
	p.ExternalInput = append(p.ExternalInput, "late")
	if !n.BlobIsDefined("late") {
		t.Errorf("external input added through Proto not seen")
	}
	p.Op[0].Output[0] = "renamed" // an in-place edit, seen after Proto() was called
	_ = n.Proto()
	if !n.BlobIsDefined("renamed") {
		t.Errorf("renamed output not seen")
	}
}

func TestExternalInputsAndOutputs(t *testing.T) {
	n := netdef.NewNet("ext")
	if err := n.AddExternalInput("x", "y"); err != nil {
		t.Fatal(err)
	}
	err := n.AddExternalInput("z", "x")
	if err == nil || !strings.Contains(err.Error(), `"x"`) || !strings.Contains(err.Error(), strconv.Quote(n.Name())) {
		t.Errorf("duplicate input: error %v should name the net and the blob", err)
	}
	if got := n.ExternalInputs(); !slices.Equal(got, []string{"x", "y"}) {
		t.Errorf("failed AddExternalInput changed the inputs: %q", got)
	}
	if err := n.AddExternalInput("w", "w"); err == nil {
		t.Errorf("repeated name in one call: no error")
	}
	if err := n.AddExternalInput(); err != nil {
		t.Errorf("AddExternalInput(): %v", err)
	}
	n.Op("Add", []string{"x", "y"}, []string{"s"})
	if err := n.AddExternalOutput("s", "x"); err != nil {
		t.Errorf("AddExternalOutput(s, x): %v", err)
	}
	err = n.AddExternalOutput("nope")
	if err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("undefined output: error %v should name the blob", err)
	}
	if got := n.ExternalOutputs(); !slices.Equal(got, []string{"s", "x"}) {
		t.Errorf("external outputs = %q", got)
	}
	// Returned slices are copies.
	n.ExternalInputs()[0] = "changed"
	n.ExternalOutputs()[0] = "changed"
	if n.Proto().ExternalInput[0] != "x" || n.Proto().ExternalOutput[0] != "s" {
		t.Errorf("ExternalInputs/ExternalOutputs returned the live slices")
	}
}

func TestBlobQueries(t *testing.T) {
	n := netdef.NewNet("queries")
	if err := n.AddExternalInput("unused"); err != nil {
		t.Fatal(err)
	}
	n.Op("Relu", []string{"x"}, []string{"y"})
	n.Op("Print", []string{"y"}, nil)
	n.Proto().ExternalOutput = append(n.Proto().ExternalOutput, "y", "ghost")
	tests := []struct {
		blob          string
		defined, uses bool
	}{
		{"x", true, true},
		{"y", true, true},
		{"unused", true, true},
		{"ghost", false, false},
		{"z", false, false},
	}
	for _, tc := range tests {
		if got := n.BlobIsDefined(tc.blob); got != tc.defined {
			t.Errorf("BlobIsDefined(%q) = %v", tc.blob, got)
		}
		if got := n.UsesBlob(tc.blob); got != tc.uses {
			t.Errorf("UsesBlob(%q) = %v", tc.blob, got)
		}
	}
	n.Op("Relu", []string{"x"}, []string{"only_out"})
	if n.UsesBlob("only_out") {
		t.Errorf("UsesBlob of a blob only written = true")
	}
	if got, want := n.UsedBlobNames(), []string{"ghost", "only_out", "unused", "x", "y"}; !slices.Equal(got, want) {
		t.Errorf("UsedBlobNames = %q, want %q", got, want)
	}
}

// Ports of core_test.py TestAppendNet.
func TestAppendNet(t *testing.T) {
	t.Run("test_external_inputs_merged_correctly", func(t *testing.T) {
		a := netdef.NewNet("A")
		a.Op("Sum", []string{"in1", "in2"}, []string{"sum1"})
		if !slices.Contains(a.ExternalInputs(), "in1") {
			t.Fatalf("in1 not an external input of A")
		}
		b := netdef.NewNet("B")
		b.Op("Sum", []string{"in3", "in4"}, []string{"in1"})
		b.AppendNet(a.Proto())
		if slices.Contains(b.ExternalInputs(), "in1") {
			t.Errorf("in1 became an external input of B")
		}
		if got, want := b.ExternalInputs(), []string{"in3", "in4", "in2"}; !slices.Equal(got, want) {
			t.Errorf("B inputs = %q, want %q", got, want)
		}
	})
	t.Run("test_external_inputs_merged_correctlyB", func(t *testing.T) {
		a := netdef.NewNet("A")
		a.Op("Sum", []string{"in1", "in2"}, []string{"sum1"})
		b := netdef.NewNet("B")
		b.Op("Sum", []string{"in3", "in4"}, []string{"in1"})
		a.AppendNet(b.Proto())
		if !slices.Contains(a.ExternalInputs(), "in1") {
			t.Errorf("in1 is no longer an external input of A")
		}
	})
	t.Run("ops outputs and copies", func(t *testing.T) {
		a := netdef.NewNet("A")
		a.Op("Relu", []string{"x"}, []string{"y"})
		_ = a.AddExternalOutput("y")
		b := netdef.NewNet("B")
		b.Op("Relu", []string{"y"}, []string{"z"})
		b.Proto().ExternalOutput = []string{"y", "z", "z"}
		if a.AppendNet(b.Proto()) != a {
			t.Errorf("AppendNet did not return its receiver")
		}
		if got := len(a.Proto().Op); got != 2 {
			t.Fatalf("ops = %d", got)
		}
		if got, want := a.ExternalOutputs(), []string{"y", "z", "z"}; !slices.Equal(got, want) {
			t.Errorf("outputs = %q, want %q", got, want)
		}
		if got := a.ExternalInputs(); !slices.Equal(got, []string{"x"}) {
			t.Errorf("inputs = %q", got)
		}
		if !a.BlobIsDefined("z") {
			t.Errorf("appended output z not defined")
		}
		b.Proto().Op[0].Type = proto.String("Changed")
		if a.Proto().Op[1].GetType() != "Relu" {
			t.Errorf("AppendNet shares ops with the appended net")
		}
		a.AppendNet(nil)
		if len(a.Proto().Op) != 2 {
			t.Errorf("AppendNet(nil) changed the net")
		}
	})
}

func TestNetFromProto(t *testing.T) {
	orig := &netdef.NetDef{
		Name: proto.String("fromproto"),
		Op: []*netdef.OperatorDef{
			netdef.NewOperator("Relu", []string{"x"}, []string{"fromproto_blob_3"}),
			netdef.NewOperator("Relu", []string{"fromproto_blob_12_grad"}, []string{"fromproto_blob_x"}),
		},
		ExternalInput: []string{"x", "fromproto_blob_40"}, // external names are not scanned, as in Caffe2
	}
	n := netdef.NetFromProto(orig)
	if n.Proto() == orig || n.Proto().Op[0] == orig.Op[0] {
		t.Fatalf("NetFromProto did not copy")
	}
	if n.Name() == "fromproto" && netdef.NetFromProto(orig).Name() == "fromproto" {
		t.Errorf("NetFromProto names are not unique")
	}
	if orig.GetName() != "fromproto" {
		t.Errorf("NetFromProto renamed its argument")
	}
	// Auto-naming resumes after blob 12, under the net's new name.
	if got, want := n.NextName(""), n.Name()+"_blob_13"; got != want {
		t.Errorf("NextName() = %q, want %q", got, want)
	}
	if !n.BlobIsDefined("x") || !n.BlobIsDefined("fromproto_blob_3") {
		t.Errorf("lookup tables not built from the proto")
	}
	if nilNet := netdef.NetFromProto(nil); nilNet == nil || len(nilNet.Proto().Op) != 0 {
		t.Errorf("NetFromProto(nil) = %v", nilNet)
	}
}

func TestClone(t *testing.T) {
	n := netdef.NewNet("orig")
	n.Op("FC", []string{"data", "w", "b"}, []string{"fc"})
	relu := n.Op("Relu", []string{"fc"}, []string{"fc"})
	relu.ControlInput = []string{"data"}
	n.Op("Softmax", []string{"fc"}, []string{"prob"})
	if err := n.AddExternalOutput("prob"); err != nil {
		t.Fatal(err)
	}
	n.Proto().DeviceOption = netdef.NewDeviceOption(netdef.CUDA, 1)
	n.Proto().Type = proto.String("dag")
	remap := map[string]string{"data": "gpu_0/data", "fc": "gpu_0/fc", "prob": "gpu_0/prob"}

	tests := []struct {
		name    string
		mask    []int
		types   []string
		inputs  [][]string
		outputs [][]string
	}{
		{"all", nil, []string{"FC", "Relu", "Softmax"},
			[][]string{{"gpu_0/data", "w", "b"}, {"gpu_0/fc"}, {"gpu_0/fc"}},
			[][]string{{"gpu_0/fc"}, {"gpu_0/fc"}, {"gpu_0/prob"}}},
		{"mask", []int{2, 0, 7, -1, 0}, []string{"Softmax", "FC", "FC"},
			[][]string{{"gpu_0/fc"}, {"gpu_0/data", "w", "b"}, {"gpu_0/data", "w", "b"}},
			[][]string{{"gpu_0/prob"}, {"gpu_0/fc"}, {"gpu_0/fc"}}},
		{"empty mask", []int{}, nil, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := n.Clone("cloned", remap, tc.mask)
			if !strings.HasPrefix(c.Name(), "cloned") {
				t.Errorf("name = %q", c.Name())
			}
			ops := c.Proto().GetOp()
			if len(ops) != len(tc.types) {
				t.Fatalf("ops = %d, want %d", len(ops), len(tc.types))
			}
			for i, op := range ops {
				if op.GetType() != tc.types[i] || !slices.Equal(op.Input, tc.inputs[i]) || !slices.Equal(op.Output, tc.outputs[i]) {
					t.Errorf("op %d = %s %q -> %q", i, op.GetType(), op.Input, op.Output)
				}
			}
			if got, want := c.ExternalInputs(), []string{"gpu_0/data", "w", "b"}; !slices.Equal(got, want) {
				t.Errorf("external inputs = %q, want %q", got, want)
			}
			if got := c.ExternalOutputs(); !slices.Equal(got, []string{"gpu_0/prob"}) {
				t.Errorf("external outputs = %q", got)
			}
			if c.Proto().GetType() != "dag" || c.Proto().GetDeviceOption().GetDeviceId() != 1 {
				t.Errorf("net-level fields not copied")
			}
			if len(ops) > 1 && ops[1] == ops[2] {
				t.Errorf("a repeated mask index shares one op")
			}
		})
	}
	c := n.Clone("cloned", remap, nil)
	if got := c.Proto().Op[1].ControlInput; !slices.Equal(got, []string{"gpu_0/data"}) {
		t.Errorf("control inputs = %q", got)
	}
	// The original is untouched.
	if got := n.Proto().Op[0].Input[0]; got != "data" {
		t.Errorf("Clone changed the original: %q", got)
	}
	c.Proto().Op[0].Type = proto.String("X")
	if n.Proto().Op[0].GetType() != "FC" {
		t.Errorf("Clone shares ops")
	}
	if !c.BlobIsDefined("gpu_0/fc") || c.BlobIsDefined("fc") {
		t.Errorf("clone lookup tables wrong")
	}
}

func TestCloneRemapsEmbeddedNets(t *testing.T) {
	thenNet := &netdef.NetDef{
		Name: proto.String("then"),
		Op:   []*netdef.OperatorDef{netdef.NewOperator("Copy", []string{"x"}, []string{"y"})},
	}
	loopNet := &netdef.NetDef{
		Name: proto.String("loop"),
		Op:   []*netdef.OperatorDef{netdef.NewOperator("Add", []string{"y", "x"}, []string{"y"})},
	}
	stepNet := &netdef.NetDef{
		Name: proto.String("step"),
		Op:   []*netdef.OperatorDef{netdef.NewOperator("FC", []string{"x"}, []string{"h"})},
	}
	n := netdef.NewNet("ctrl")
	n.Op("If", []string{"cond"}, []string{"y"}, netdef.ArgNet("then_net", thenNet), netdef.ArgNet("other", thenNet))
	n.Op("While", []string{"cond"}, []string{"y"}, netdef.ArgNet("loop_net", loopNet))
	n.Op("RecurrentNetwork", []string{"x"}, []string{"h"},
		netdef.ArgNet("step_net", stepNet), netdef.ArgStrings("link_external", "x", "h"), netdef.ArgString("timestep", "x"))
	n.Op("Do", []string{"x"}, []string{"y"}, netdef.ArgNet("net", thenNet))

	c := n.Clone("ctrl_clone", map[string]string{"x": "X", "y": "Y", "h": "H"}, nil)
	ops := c.Proto().Op
	then := netdef.FindArg(ops[0].Arg, "then_net").GetN()
	if got := then.Op[0]; !slices.Equal(got.Input, []string{"X"}) || !slices.Equal(got.Output, []string{"Y"}) {
		t.Errorf("then_net op = %q -> %q", got.Input, got.Output)
	}
	if !strings.HasPrefix(then.GetName(), "then") || !strings.Contains(then.GetName(), "_remapped") {
		t.Errorf("then_net name = %q", then.GetName())
	}
	if got := netdef.FindArg(ops[0].Arg, "other").GetN().Op[0].Input[0]; got != "x" {
		t.Errorf("unrelated net argument remapped: %q", got)
	}
	if got := netdef.FindArg(ops[1].Arg, "loop_net").GetN().Op[0].Input; !slices.Equal(got, []string{"Y", "X"}) {
		t.Errorf("loop_net inputs = %q", got)
	}
	rnn := ops[2]
	if got := netdef.FindArg(rnn.Arg, "step_net").GetN().Op[0].Output[0]; got != "H" {
		t.Errorf("step_net output = %q", got)
	}
	if got := netdef.FindArg(rnn.Arg, "link_external").GetStrings(); string(got[0]) != "X" || string(got[1]) != "H" {
		t.Errorf("link_external = %q", got)
	}
	if got := string(netdef.FindArg(rnn.Arg, "timestep").GetS()); got != "X" {
		t.Errorf("timestep = %q", got)
	}
	if got := netdef.FindArg(ops[3].Arg, "net").GetN().Op[0].Input[0]; got != "x" {
		t.Errorf("Do's net was remapped: %q", got)
	}
	// The originals are untouched.
	if thenNet.Op[0].Input[0] != "x" || thenNet.GetName() != "then" || stepNet.Op[0].Output[0] != "h" {
		t.Errorf("Clone changed an embedded net of the original")
	}
}
