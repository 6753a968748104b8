package netdef_test

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
)

func namedNet(name string, opType string) *netdef.NetDef {
	return &netdef.NetDef{
		Name: proto.String(name),
		Op:   []*netdef.OperatorDef{netdef.NewOperator(opType, nil, []string{name + "_out"})},
	}
}

func netNames(nets []*netdef.NetDef) []string {
	var names []string
	for _, n := range nets {
		names = append(names, n.GetName())
	}
	return names
}

func TestStepNames(t *testing.T) {
	a := netdef.NewExecutionStep("")
	b := netdef.NewExecutionStep("")
	if !strings.HasPrefix(a.Name(), "step") || a.Name() == b.Name() {
		t.Errorf("generated step names %q, %q", a.Name(), b.Name())
	}
	if got := netdef.NewExecutionStep("train").Name(); got != "train" {
		t.Errorf("given name changed to %q", got)
	}
	if got := netdef.NewExecutionStep("train").Proto().GetName(); got != "train" {
		t.Errorf("given name changed to %q", got)
	}
}

func TestStepSetters(t *testing.T) {
	s := netdef.NewExecutionStep("setters").
		SetIter(5).
		SetShouldStopBlob("stop").
		SetOnlyOnce(true).
		SetConcurrentSubsteps(true).
		SetCreateWorkspace(true).
		SetNumConcurrentInstances(4).
		RunEveryMillis(250)
	want := &netdef.ExecutionStep{
		Name:                   proto.String("setters"),
		NumIter:                proto.Int64(5),
		ShouldStopBlob:         proto.String("stop"),
		OnlyOnce:               proto.Bool(true),
		ConcurrentSubsteps:     proto.Bool(true),
		CreateWorkspace:        proto.Bool(true),
		NumConcurrentInstances: proto.Int32(4),
		RunEveryMs:             proto.Int64(250),
	}
	if !proto.Equal(s.Proto(), want) {
		t.Errorf("step = %v, want %v", s.Proto(), want)
	}
}

func TestStepNets(t *testing.T) {
	n1, n2 := namedNet("n1", "A"), namedNet("n2", "B")
	s := netdef.NewExecutionStep("nets", n1, nil, n2, n1, namedNet("n1", "Other"))
	if got := s.Proto().Network; !slices.Equal(got, []string{"n1", "n2"}) {
		t.Errorf("network = %q", got)
	}
	// AddNet may repeat a net.
	if err := s.AddNet(n1); err != nil {
		t.Fatal(err)
	}
	if got := s.Proto().Network; !slices.Equal(got, []string{"n1", "n2", "n1"}) {
		t.Errorf("network = %q", got)
	}
	if err := s.AddNet(namedNet("n1", "Different")); err == nil || !strings.Contains(err.Error(), `"n1"`) {
		t.Errorf("conflicting net: error %v", err)
	}
	if err := s.AddNet(namedNet("n1", "A")); err != nil {
		t.Errorf("equal net with the same name: %v", err)
	}
	if err := s.AddNet(nil); err == nil {
		t.Errorf("AddNet(nil): no error")
	}
	if err := s.AddSubstep(netdef.NewExecutionStep("sub", n1)); err == nil {
		t.Errorf("substep on a step with nets: no error")
	}
	if got := netNames(s.Nets()); !slices.Equal(got, []string{"n1", "n2"}) {
		t.Errorf("Nets = %q", got)
	}
}

func TestStepSubstepsAndPlan(t *testing.T) {
	init, train, report := namedNet("init", "Fill"), namedNet("train", "SGD"), namedNet("report", "Print")
	initStep := netdef.NewExecutionStep("init_step", init)
	trainStep := netdef.NewExecutionStep("train_step", train).SetIter(10)
	reportStep := netdef.NewExecutionStep("report_step", report).RunEveryMillis(1000)
	loop := netdef.NewExecutionStep("loop")
	for _, sub := range []*netdef.Step{trainStep, reportStep, netdef.NewExecutionStep("empty")} {
		if err := loop.AddSubstep(sub); err != nil {
			t.Fatal(err)
		}
	}
	loop.SetConcurrentSubsteps(true)
	if got := len(loop.Proto().Substep); got != 2 {
		t.Errorf("substeps = %d, want 2 (empty one skipped)", got)
	}
	if err := loop.AddNet(train); err == nil {
		t.Errorf("net on a step with substeps: no error")
	}
	// Later changes to a substep do not reach the parent.
	trainStep.SetIter(99)
	if got := loop.Proto().Substep[0].GetNumIter(); got != 10 {
		t.Errorf("substep num_iter = %d, want the value at AddSubstep time", got)
	}
	if err := loop.AddSubstep(netdef.NewExecutionStep("clash", namedNet("train", "Other"))); err == nil {
		t.Errorf("substep with a clashing net: no error")
	}

	plan := netdef.NewPlan("training")
	for _, s := range []*netdef.Step{initStep, loop, netdef.NewExecutionStep("empty")} {
		if err := plan.AddStep(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := plan.AddStep(netdef.NewExecutionStep("again", init)); err != nil {
		t.Fatal(err)
	}
	p := plan.Proto()
	if p.GetName() != "training" || plan.Name() != "training" {
		t.Errorf("plan name = %q", p.GetName())
	}
	if got := netNames(p.Network); !slices.Equal(got, []string{"init", "train", "report"}) {
		t.Errorf("plan nets = %q, want init, train, report", got)
	}
	var steps []string
	for _, s := range p.ExecutionStep {
		steps = append(steps, s.GetName())
	}
	if !slices.Equal(steps, []string{"init_step", "loop", "again"}) {
		t.Errorf("plan steps = %q", steps)
	}
	// The plan holds copies.
	init.Op[0].Type = proto.String("Changed")
	if p.Network[0].Op[0].GetType() != "Fill" {
		t.Errorf("plan shares its nets")
	}
	if err := plan.AddNets(namedNet("train", "Other")); err == nil || !strings.Contains(err.Error(), `"train"`) {
		t.Errorf("conflicting net: error %v", err)
	}
	if err := plan.AddNets(namedNet("x", "A"), namedNet("x", "B")); err == nil {
		t.Errorf("conflicting nets in one call: no error")
	}
	if got := len(p.Network); got != 3 {
		t.Errorf("failed AddNets added nets: %d", got)
	}
	if err := plan.AddNets(namedNet("train", "SGD"), init); err != nil {
		t.Errorf("re-adding the same nets: %v", err)
	}
	if err := plan.AddStep(nil); err == nil {
		t.Errorf("AddStep(nil): no error")
	}

	// The plan survives a round trip and is what the runtime expects.
	b, err := netdef.MarshalPlanDef(p)
	if err != nil {
		t.Fatal(err)
	}
	back, err := netdef.UnmarshalPlanDef(b)
	if err != nil || !proto.Equal(back, p) {
		t.Errorf("plan round trip: %v", err)
	}
}

func TestReportNet(t *testing.T) {
	main, report := namedNet("main", "A"), namedNet("rep", "Print")
	s := netdef.NewExecutionStep("with_report", main)
	if err := s.SetReportNet(report, 5); err != nil {
		t.Fatal(err)
	}
	if s.Proto().GetReportNet() != "rep" || s.Proto().GetReportInterval() != 5 {
		t.Errorf("report net not set: %v", s.Proto())
	}
	plan := netdef.NewPlan("p")
	if err := plan.AddStep(s); err != nil {
		t.Fatal(err)
	}
	if got := netNames(plan.Proto().Network); !slices.Equal(got, []string{"main", "rep"}) {
		t.Errorf("plan nets = %q", got)
	}
	if err := s.SetReportNet(nil, 1); err == nil {
		t.Errorf("SetReportNet(nil): no error")
	}
}

// The builders are accepted where the workspace takes a net or a plan.
var (
	_ netdef.NetSource  = (*netdef.Net)(nil)
	_ netdef.PlanSource = (*netdef.Plan)(nil)
	_ netdef.PlanSource = (*netdef.Step)(nil)
)

func TestPlanSources(t *testing.T) {
	n := namedNet("src", "Relu")
	s := netdef.NewExecutionStep("as_plan", n).SetIter(2)
	p := s.PlanProto()
	if p.GetName() != "as_plan" || len(p.ExecutionStep) != 1 || p.ExecutionStep[0].GetNumIter() != 2 {
		t.Errorf("step as plan = %v", p)
	}
	if got := netNames(p.Network); !slices.Equal(got, []string{"src"}) {
		t.Errorf("step as plan nets = %q", got)
	}
	s.Proto().Network = append(s.Proto().Network, "unknown")
	if p := s.PlanProto(); len(p.ExecutionStep) != 1 || len(p.Network) != 0 {
		t.Errorf("step with an unknown net as plan = %v", p)
	}
	if p := netdef.NewExecutionStep("").PlanProto(); len(p.ExecutionStep) != 0 {
		t.Errorf("empty step as plan = %v", p)
	}
	plan := netdef.NewPlan("pp")
	if plan.PlanProto() != plan.Proto() {
		t.Errorf("Plan.PlanProto is not the live proto")
	}
}
