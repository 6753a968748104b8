package workspace_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/workspace"
)

func scalar(t *testing.T, ws *workspace.Workspace, name string) float32 {
	t.Helper()
	x, err := ws.FetchBlob(name)
	if err != nil {
		t.Fatal(err)
	}
	return blob.Data[float32](x)[0]
}

// chainNet builds `width` independent chains of `depth` TestInc ops, each
// chain on its own logical CPU device.
func chainNet(name, typ string, width, depth int) *netdef.NetDef {
	n := &netdef.NetDef{Name: &name, Type: &typ}
	for c := 0; c < width; c++ {
		in := fmt.Sprintf("x%d", c)
		for d := 0; d < depth; d++ {
			out := fmt.Sprintf("c%d_%d", c, d)
			op := netdef.NewOperator("TestInc", []string{in}, []string{out})
			op.DeviceOption = devicescope.CPUDevice(c)
			n.Op = append(n.Op, op)
			in = out
		}
	}
	return n
}

func TestExecutorsAgree(t *testing.T) {
	for _, typ := range []string{"", "simple", "dag", "async_scheduling"} {
		t.Run("type="+typ, func(t *testing.T) {
			ws := workspace.New("")
			for c := 0; c < 4; c++ {
				if err := ws.FeedBlob(fmt.Sprintf("x%d", c), []float32{float32(c)}); err != nil {
					t.Fatal(err)
				}
			}
			if err := ws.CreateNet(chainNet("chains", typ, 4, 25), false); err != nil {
				t.Fatal(err)
			}
			if err := ws.RunNet("chains", 3); err != nil {
				t.Fatal(err)
			}
			for c := 0; c < 4; c++ {
				if got := scalar(t, ws, fmt.Sprintf("c%d_24", c)); got != float32(c+25) {
					t.Fatalf("chain %d ends at %v, want %v", c, got, c+25)
				}
			}
		})
	}
}

func TestDAGRespectsWriteAfterRead(t *testing.T) {
	// a = x+1; b = a+1 (reads a); a = x+1+... (rewrites a) must wait for the
	// reader; the final values must equal the sequential ones.
	ws := workspace.New("")
	_ = ws.FeedBlob("x", []float32{0})
	name, typ := "war", "dag"
	n := &netdef.NetDef{Name: &name, Type: &typ, NumWorkers: new(int32)}
	*n.NumWorkers = 4
	n.Op = []*netdef.OperatorDef{
		netdef.NewOperator("TestInc", []string{"x"}, []string{"a"}),
		netdef.NewOperator("TestInc", []string{"a"}, []string{"b"}),
		netdef.NewOperator("TestInc", []string{"b"}, []string{"a"}),
		netdef.NewOperator("TestInc", []string{"a"}, []string{"a"}),
	}
	if err := ws.CreateNet(n, false); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		if err := ws.RunNet("war", 1); err != nil {
			t.Fatal(err)
		}
		if a, b := scalar(t, ws, "a"), scalar(t, ws, "b"); a != 4 || b != 2 {
			t.Fatalf("run %d: a=%v b=%v, want 4 and 2", i, a, b)
		}
	}
}

func TestRunErrorsNameNetAndOperator(t *testing.T) {
	for _, typ := range []string{"simple", "dag"} {
		for _, opType := range []string{"TestPanic", "TestFail"} {
			t.Run(typ+"/"+opType, func(t *testing.T) {
				ws := workspace.New("")
				_ = ws.FeedBlob("x", []float32{0})
				name := "failing_" + typ
				n := &netdef.NetDef{Name: &name, Type: &typ}
				bad := netdef.NewOperator(opType, []string{"y"}, []string{"z"})
				bad.Name = new(string)
				*bad.Name = "the_bad_one"
				n.Op = []*netdef.OperatorDef{netdef.NewOperator("TestInc", []string{"x"}, []string{"y"}), bad}
				if err := ws.CreateNet(n, false); err != nil {
					t.Fatal(err)
				}
				err := ws.RunNet(name, 1)
				if err == nil {
					t.Fatal("run succeeded")
				}
				for _, want := range []string{name, "operator 1", opType, "the_bad_one"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not mention %q", err, want)
					}
				}
				// The workspace stays usable.
				if err := ws.RunOperatorOnce(netdef.NewOperator("TestInc", []string{"x"}, []string{"w"})); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

func TestCreateNetChecks(t *testing.T) {
	named := func(name string, ops ...*netdef.OperatorDef) *netdef.NetDef {
		return &netdef.NetDef{Name: &name, Op: ops}
	}
	inc := func(in, out string) *netdef.OperatorDef {
		return netdef.NewOperator("TestInc", []string{in}, []string{out})
	}
	withNode := inc("x", "y")
	withNode.DeviceOption = &netdef.DeviceOption{NodeName: new(string)}
	*withNode.DeviceOption.NodeName = "node7"
	badType := named("badtype", inc("x", "y"))
	badType.Type = new(string)
	*badType.Type = "no_such_executor"
	declared := named("declared", inc("x", "y"), inc("q", "z"))
	declared.ExternalInput = []string{"x"}
	undeclaredOut := named("outs", inc("x", "y"))
	undeclaredOut.ExternalOutput = []string{"nope"}
	cases := []struct {
		name string
		net  *netdef.NetDef
		want string
	}{
		{"no name", &netdef.NetDef{}, "should have a name"},
		{"missing input", named("missing", inc("absent", "y")), `"absent"`},
		{"unknown op", named("unknown", netdef.NewOperator("NoSuchOp", nil, []string{"y"})), "NoSuchOp"},
		{"node name", named("node", withNode), "node_name"},
		{"executor", badType, "no_such_executor"},
		{"declared inputs", declared, `"q"`},
		{"declared outputs", undeclaredOut, `"nope"`},
		{"schema", named("schema", netdef.NewOperator("TestInc", []string{"x", "x"}, []string{"y"})), "schema"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := workspace.New("")
			_ = ws.FeedBlob("x", []float32{0})
			_ = ws.FeedBlob("q", []float32{0})
			// In "declared inputs", q exists in the workspace, but the check is
			// against the declarations, as in Caffe2.
			err := ws.CreateNet(c.net, false)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("CreateNet error %v, want one mentioning %s", err, c.want)
			}
			if len(ws.Nets()) != 0 {
				t.Fatalf("failed CreateNet left nets %v", ws.Nets())
			}
		})
	}
}

func TestNetInheritsDeviceOption(t *testing.T) {
	ws := workspace.New("")
	_ = ws.FeedBlob("x", []float32{1})
	n := netdef.NewNet("inherit")
	n.Op("TestInc", []string{"x"}, []string{"y"})
	n.Proto().DeviceOption = devicescope.CPUDevice(3)
	if err := ws.CreateNet(n, false); err != nil {
		t.Fatal(err)
	}
	if n.Proto().Op[0].DeviceOption != nil {
		t.Fatal("CreateNet changed the caller's NetDef")
	}
	if err := ws.RunNet(n.Name(), 1); err != nil {
		t.Fatal(err)
	}
	if got := ws.GetNet(n.Name()).Proto().Op[0].GetDeviceOption(); got != nil {
		t.Fatalf("stored NetDef changed: %v", got)
	}
}

func TestRunNetUnknown(t *testing.T) {
	ws := workspace.New("")
	if err := ws.RunNet("ghost", 1); err == nil || !strings.Contains(err.Error(), "ghost") {
		t.Fatalf("RunNet(ghost) = %v", err)
	}
}

func TestRegisteredOperatorsSorted(t *testing.T) {
	ops := workspace.RegisteredOperators()
	for i := 1; i < len(ops); i++ {
		if ops[i-1] >= ops[i] {
			t.Fatalf("not sorted/unique at %d: %q, %q", i, ops[i-1], ops[i])
		}
	}
	found := false
	for _, o := range ops {
		found = found || o == "TestInc"
	}
	if !found {
		t.Fatal("TestInc not listed")
	}
}

func TestBenchmarkNet(t *testing.T) {
	ws := workspace.New("")
	_ = ws.FeedBlob("x0", []float32{0})
	if err := ws.CreateNet(chainNet("bench", "simple", 1, 5), false); err != nil {
		t.Fatal(err)
	}
	before := incRuns.Load()
	res, err := ws.BenchmarkNet("bench", 2, 3, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1+5 {
		t.Fatalf("got %d results, want 6", len(res))
	}
	if runs := incRuns.Load() - before; runs != 5*(2+3+3) {
		t.Fatalf("ran %d ops, want %d", runs, 5*(2+3+3))
	}
	if _, err := ws.BenchmarkNet("bench", 0, 0, false); err == nil {
		t.Fatal("runs=0 accepted")
	}
}

func TestRunNetIterations(t *testing.T) {
	ws := workspace.New("")
	_ = ws.FeedBlob("x", []float32{0})
	n := netdef.NewNet("count")
	n.Op("TestInc", []string{"x"}, []string{"x"})
	if err := ws.CreateNet(n, false); err != nil {
		t.Fatal(err)
	}
	for _, iters := range []int{0, 1, 5} {
		before := scalar(t, ws, "x")
		if err := ws.RunNet(n.Name(), iters); err != nil {
			t.Fatal(err)
		}
		if got := scalar(t, ws, "x") - before; got != float32(iters) {
			t.Fatalf("RunNet(%d) ran %v times", iters, got)
		}
	}
	if err := ws.RunNet(n.Name(), -1); err == nil {
		t.Fatal("negative iteration count accepted")
	}
}
