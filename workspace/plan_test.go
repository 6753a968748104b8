package workspace_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/workspace"
)

func incNet(name string, ops ...[2]string) *netdef.NetDef {
	n := &netdef.NetDef{Name: proto.String(name)}
	for _, io := range ops {
		n.Op = append(n.Op, netdef.NewOperator("TestInc", []string{io[0]}, []string{io[1]}))
	}
	return n
}

func TestPlanNumIter(t *testing.T) {
	ws := workspace.New("")
	_ = ws.FeedBlob("counter", []float32{0})
	plan := &netdef.PlanDef{
		Name:    proto.String("p"),
		Network: []*netdef.NetDef{incNet("inc", [2]string{"counter", "counter"})},
		ExecutionStep: []*netdef.ExecutionStep{
			{Name: proto.String("s"), Network: []string{"inc"}, NumIter: proto.Int64(7)},
		},
	}
	if err := ws.RunPlan(plan); err != nil {
		t.Fatal(err)
	}
	if got := scalar(t, ws, "counter"); got != 7 {
		t.Fatalf("counter = %v, want 7", got)
	}
	if ws.GetNet("inc") == nil {
		t.Fatal("the plan's net is not left registered")
	}
}

func TestPlanShouldStopBlob(t *testing.T) {
	ws := workspace.New("")
	_ = ws.FeedBlob("counter", []float32{0})
	stop := &netdef.NetDef{Name: proto.String("check"), Op: []*netdef.OperatorDef{
		netdef.NewOperator("TestStop", []string{"counter"}, []string{"stop"}, netdef.ArgFloat("at", 5)),
	}}
	plan := &netdef.PlanDef{
		Name:    proto.String("p"),
		Network: []*netdef.NetDef{incNet("inc", [2]string{"counter", "counter"}), stop},
		ExecutionStep: []*netdef.ExecutionStep{{
			Name:           proto.String("loop"),
			ShouldStopBlob: proto.String("stop"),
			Substep: []*netdef.ExecutionStep{
				{Name: proto.String("a"), Network: []string{"inc"}},
				{Name: proto.String("b"), Network: []string{"check"}},
			},
		}},
	}
	if err := ws.RunPlan(plan); err != nil {
		t.Fatal(err)
	}
	if got := scalar(t, ws, "counter"); got != 5 {
		t.Fatalf("counter = %v, want 5", got)
	}
}

func TestPlanConcurrentSubsteps(t *testing.T) {
	ws := workspace.New("")
	for _, b := range []string{"a", "b", "c"} {
		_ = ws.FeedBlob(b, []float32{0})
	}
	var subs []*netdef.ExecutionStep
	var nets []*netdef.NetDef
	for _, b := range []string{"a", "b", "c"} {
		nets = append(nets, incNet("inc_"+b, [2]string{b, b}))
		subs = append(subs, &netdef.ExecutionStep{Name: proto.String("s_" + b), Network: []string{"inc_" + b}, NumIter: proto.Int64(10)})
	}
	plan := &netdef.PlanDef{Name: proto.String("p"), Network: nets, ExecutionStep: []*netdef.ExecutionStep{
		{Name: proto.String("par"), Substep: subs, ConcurrentSubsteps: proto.Bool(true)},
	}}
	if err := ws.RunPlan(plan); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"a", "b", "c"} {
		if got := scalar(t, ws, b); got != 10 {
			t.Fatalf("%s = %v, want 10", b, got)
		}
	}
}

func TestPlanCreateWorkspaceAndPeriodic(t *testing.T) {
	ws := workspace.New("")
	_ = ws.FeedBlob("x", []float32{0})
	_ = ws.FeedBlob("ticks", []float32{0})
	plan := &netdef.PlanDef{
		Name: proto.String("p"),
		Network: []*netdef.NetDef{
			incNet("local", [2]string{"x", "only_in_child"}),
			incNet("tick", [2]string{"ticks", "ticks"}),
		},
		ExecutionStep: []*netdef.ExecutionStep{{
			Name:            proto.String("outer"),
			CreateWorkspace: proto.Bool(true),
			Substep: []*netdef.ExecutionStep{
				{Name: proto.String("work"), Network: []string{"local"}},
				{Name: proto.String("periodic"), Network: []string{"tick"}, RunEveryMs: proto.Int64(1000)},
			},
		}},
	}
	if err := ws.RunPlan(plan); err != nil {
		t.Fatal(err)
	}
	if ws.HasBlob("only_in_child") {
		t.Fatal("a create_workspace step leaked a blob into the parent")
	}
	// The periodic substep runs at least once after the others finish and
	// writes through to the parent's existing blob.
	if got := scalar(t, ws, "ticks"); got < 1 {
		t.Fatalf("periodic substep ran %v times", got)
	}
}

func TestPlanErrors(t *testing.T) {
	dup := incNet("same", [2]string{"x", "y"})
	cases := []struct {
		name string
		plan *netdef.PlanDef
		want string
	}{
		{"duplicate nets", &netdef.PlanDef{Name: proto.String("p"), Network: []*netdef.NetDef{dup, dup}}, "duplicate"},
		{"both substeps and nets", &netdef.PlanDef{Name: proto.String("p"), Network: []*netdef.NetDef{dup}, ExecutionStep: []*netdef.ExecutionStep{
			{Name: proto.String("s"), Network: []string{"same"}, Substep: []*netdef.ExecutionStep{{Name: proto.String("t")}}},
		}}, "both substeps and networks"},
		{"num_iter and stop blob", &netdef.PlanDef{Name: proto.String("p"), ExecutionStep: []*netdef.ExecutionStep{
			{Name: proto.String("s"), NumIter: proto.Int64(2), ShouldStopBlob: proto.String("b")},
		}}, "num_iter and should_stop_blob"},
		{"only_once alone", &netdef.PlanDef{Name: proto.String("p"), ExecutionStep: []*netdef.ExecutionStep{
			{Name: proto.String("s"), OnlyOnce: proto.Bool(true)},
		}}, "only_once"},
		{"unknown net", &netdef.PlanDef{Name: proto.String("p"), ExecutionStep: []*netdef.ExecutionStep{
			{Name: proto.String("s"), Network: []string{"ghost"}},
		}}, `"ghost"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := workspace.New("")
			_ = ws.FeedBlob("x", []float32{0})
			if err := ws.RunPlan(c.plan); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("RunPlan error %v, want one mentioning %s", err, c.want)
			}
		})
	}
	// An empty plan succeeds.
	if err := workspace.New("").RunPlan(&netdef.PlanDef{Name: proto.String("empty")}); err != nil {
		t.Fatal(err)
	}
}

func TestPlanReportNet(t *testing.T) {
	ws := workspace.New("")
	_ = ws.FeedBlob("x", []float32{0})
	_ = ws.FeedBlob("reports", []float32{0})
	plan := &netdef.PlanDef{
		Name: proto.String("p"),
		Network: []*netdef.NetDef{
			incNet("work", [2]string{"x", "x"}),
			incNet("report", [2]string{"reports", "reports"}),
		},
		ExecutionStep: []*netdef.ExecutionStep{{
			Name: proto.String("s"), Network: []string{"work"}, NumIter: proto.Int64(3),
			ReportNet: proto.String("report"), ReportInterval: proto.Int32(60),
		}},
	}
	if err := ws.RunPlan(plan); err != nil {
		t.Fatal(err)
	}
	if x, r := scalar(t, ws, "x"), scalar(t, ws, "reports"); x != 3 || r != 1 {
		t.Fatalf("x=%v reports=%v, want 3 and 1 (the report net runs once at the end)", x, r)
	}
}
