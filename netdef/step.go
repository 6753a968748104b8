package netdef

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"
)

// netSet records nets by name, in the order they were first added, the way
// Caffe2's builders keep their net dictionaries.
type netSet struct {
	names []string
	nets  map[string]*NetDef
}

// check reports an error if a different net with def's name is in the set.
// The same pointer, or a net with equal contents, is not a conflict.
func (s *netSet) check(def *NetDef) error {
	if old, ok := s.nets[def.GetName()]; ok && old != def && !proto.Equal(old, def) {
		return fmt.Errorf("netdef: different nets with the same name %q", def.GetName())
	}
	return nil
}

// add adds def unless a net of that name is there; it reports whether it
// added it. Call check first.
func (s *netSet) add(def *NetDef) bool {
	if _, ok := s.nets[def.GetName()]; ok {
		return false
	}
	if s.nets == nil {
		s.nets = map[string]*NetDef{}
	}
	s.names = append(s.names, def.GetName())
	s.nets[def.GetName()] = def
	return true
}

func (s *netSet) clone() netSet {
	c := netSet{names: slices.Clone(s.names), nets: make(map[string]*NetDef, len(s.nets))}
	for k, v := range s.nets {
		c.nets[k] = v
	}
	return c
}

// Step builds an ExecutionStep, mirroring Caffe2's core.ExecutionStep. It
// remembers the NetDefs its networks refer to, so that a Plan can include
// them. A step holds either nets or substeps, never both.
//
// The setters return the step so calls can be chained. A Step is not safe
// for concurrent use.
type Step struct {
	def      *ExecutionStep
	nets     netSet
	substeps []*Step // snapshots taken by AddSubstep
}

// NewExecutionStep returns a step that runs nets in order. An empty name is
// replaced by a process-unique generated one ("step", then "step_1", …);
// like Caffe2, a given name is used as is. Nil nets are skipped, and so is a
// net whose name is already among nets (each name is listed once).
func NewExecutionStep(name string, nets ...*NetDef) *Step {
	if name == "" {
		name = stepNames.unique("step")
	}
	s := &Step{def: &ExecutionStep{Name: proto.String(name)}}
	for _, net := range nets {
		if net != nil && s.nets.add(net) {
			s.def.Network = append(s.def.Network, net.GetName())
		}
	}
	return s
}

// Name returns the step's name.
func (s *Step) Name() string { return s.def.GetName() }

// Proto returns the live ExecutionStep the step builds.
func (s *Step) Proto() *ExecutionStep { return s.def }

// HasNets reports whether the step runs nets.
func (s *Step) HasNets() bool { return len(s.def.Network) > 0 }

// HasSubsteps reports whether the step runs substeps.
func (s *Step) HasSubsteps() bool { return len(s.def.Substep) > 0 }

// Nets returns the nets the step and its substeps use, in the order they
// were added.
func (s *Step) Nets() []*NetDef {
	nets := make([]*NetDef, len(s.nets.names))
	for i, name := range s.nets.names {
		nets[i] = s.nets.nets[name]
	}
	return nets
}

// SetIter sets the number of iterations (num_iter; unset means 1).
func (s *Step) SetIter(numIter int64) *Step {
	s.def.NumIter = proto.Int64(numIter)
	return s
}

// SetShouldStopBlob makes the step loop until the named scalar bool blob is
// true, checking it after every substep or net.
func (s *Step) SetShouldStopBlob(blob string) *Step {
	s.def.ShouldStopBlob = proto.String(blob)
	return s
}

// SetOnlyOnce sets only_once: with a should-stop blob, run the step's
// children once.
func (s *Step) SetOnlyOnce(onlyOnce bool) *Step {
	s.def.OnlyOnce = proto.Bool(onlyOnce)
	return s
}

// SetConcurrentSubsteps makes the substeps run concurrently, one goroutine
// each.
func (s *Step) SetConcurrentSubsteps(concurrent bool) *Step {
	s.def.ConcurrentSubsteps = proto.Bool(concurrent)
	return s
}

// SetCreateWorkspace makes each run of the step use a fresh child workspace.
func (s *Step) SetCreateWorkspace(create bool) *Step {
	s.def.CreateWorkspace = proto.Bool(create)
	return s
}

// SetNumConcurrentInstances sets how many copies of the step's children run
// concurrently.
func (s *Step) SetNumConcurrentInstances(n int32) *Step {
	s.def.NumConcurrentInstances = proto.Int32(n)
	return s
}

// RunEveryMillis makes the step, as a substep, run every interval
// milliseconds while its siblings run, and at least once after they finish.
// It is ignored for top-level steps.
func (s *Step) RunEveryMillis(interval int64) *Step {
	s.def.RunEveryMs = proto.Int64(interval)
	return s
}

// SetReportNet sets the deprecated report net, run every intervalSeconds;
// prefer RunEveryMillis on a substep.
func (s *Step) SetReportNet(net *NetDef, intervalSeconds int32) error {
	if net == nil {
		return fmt.Errorf("netdef: step %q: nil report net", s.Name())
	}
	if err := s.nets.check(net); err != nil {
		return fmt.Errorf("netdef: step %q: %w", s.Name(), err)
	}
	s.nets.add(net)
	s.def.ReportNet = proto.String(net.GetName())
	s.def.ReportInterval = proto.Int32(intervalSeconds)
	return nil
}

// AddNet appends net to the nets the step runs; a net may be listed more
// than once. It is an error if the step has substeps, or if a different net
// of the same name was added before.
func (s *Step) AddNet(net *NetDef) error {
	switch {
	case net == nil:
		return fmt.Errorf("netdef: step %q: nil net", s.Name())
	case s.HasSubsteps():
		return fmt.Errorf("netdef: step %q cannot have both nets and substeps (adding net %q)", s.Name(), net.GetName())
	}
	if err := s.nets.check(net); err != nil {
		return fmt.Errorf("netdef: step %q: %w", s.Name(), err)
	}
	s.nets.add(net)
	s.def.Network = append(s.def.Network, net.GetName())
	return nil
}

// AddSubstep appends a copy of sub's current ExecutionStep to the step's
// substeps; later changes to sub do not reach the step. A substep without
// nets or substeps is skipped, as in Caffe2. It is an error if the step has
// nets, or if sub uses a net whose name the step already uses for a
// different net.
func (s *Step) AddSubstep(sub *Step) error {
	switch {
	case sub == nil:
		return fmt.Errorf("netdef: step %q: nil substep", s.Name())
	case s.HasNets():
		return fmt.Errorf("netdef: step %q cannot have both nets and substeps (adding substep %q)", s.Name(), sub.Name())
	case !sub.HasNets() && !sub.HasSubsteps():
		return nil
	}
	for _, net := range sub.Nets() {
		if err := s.nets.check(net); err != nil {
			return fmt.Errorf("netdef: step %q, substep %q: %w", s.Name(), sub.Name(), err)
		}
	}
	for _, net := range sub.Nets() {
		s.nets.add(net)
	}
	snapshot := &Step{
		def:      proto.Clone(sub.def).(*ExecutionStep),
		nets:     sub.nets.clone(),
		substeps: slices.Clone(sub.substeps),
	}
	s.substeps = append(s.substeps, snapshot)
	s.def.Substep = append(s.def.Substep, proto.Clone(sub.def).(*ExecutionStep))
	return nil
}

// netsInOrder appends to names, without duplicates, the names of the nets
// the step uses in order of use: substeps first, then its own nets, then its
// report net (Caffe2's add_nets_in_order).
func (s *Step) netsInOrder(names []string) []string {
	for _, sub := range s.substeps {
		names = sub.netsInOrder(names)
	}
	for _, name := range s.def.Network {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if r := s.def.GetReportNet(); r != "" && !slices.Contains(names, r) {
		names = append(names, r)
	}
	return names
}

// Plan builds a PlanDef, mirroring Caffe2's core.Plan: its steps and, once
// each, the nets they use.
type Plan struct {
	def  *PlanDef
	nets netSet // the nets as passed in, to tell them apart by identity
}

// NewPlan returns an empty plan called name.
func NewPlan(name string) *Plan {
	return &Plan{def: &PlanDef{Name: proto.String(name)}}
}

// Name returns the plan's name.
func (p *Plan) Name() string { return p.def.GetName() }

// Proto returns the live PlanDef the plan builds.
func (p *Plan) Proto() *PlanDef { return p.def }

// AddStep appends a copy of step's ExecutionStep to the plan and adds the
// nets it uses (see AddNets), in order of use. A step without nets or
// substeps is skipped, as in Caffe2.
func (p *Plan) AddStep(step *Step) error {
	if step == nil {
		return fmt.Errorf("netdef: plan %q: nil step", p.Name())
	}
	if !step.HasNets() && !step.HasSubsteps() {
		return nil
	}
	names := step.netsInOrder(nil)
	nets := make([]*NetDef, len(names))
	for i, name := range names {
		net, ok := step.nets.nets[name]
		if !ok {
			return fmt.Errorf("netdef: plan %q: step %q uses net %q, which was not added through the step builder", p.Name(), step.Name(), name)
		}
		nets[i] = net
	}
	if err := p.AddNets(nets...); err != nil {
		return err
	}
	p.def.ExecutionStep = append(p.def.ExecutionStep, proto.Clone(step.def).(*ExecutionStep))
	return nil
}

// AddNets adds a copy of each net to the plan's network list, skipping nets
// whose name is already there. It is an error, and nothing is added, if a
// net is nil or differs from an earlier net of the same name.
func (p *Plan) AddNets(nets ...*NetDef) error {
	all := p.nets.clone()
	for _, net := range nets {
		if net == nil {
			return fmt.Errorf("netdef: plan %q: nil net", p.Name())
		}
		if err := all.check(net); err != nil {
			return fmt.Errorf("netdef: plan %q: %w", p.Name(), err)
		}
		all.add(net)
	}
	for _, net := range nets {
		if p.nets.add(net) {
			p.def.Network = append(p.def.Network, proto.Clone(net).(*NetDef))
		}
	}
	return nil
}

// PlanProto returns the live PlanDef, the same as Proto, so that a *Plan is
// a PlanSource.
func (p *Plan) PlanProto() *PlanDef { return p.def }

// PlanProto returns a new plan named after the step that holds the step and
// the nets it uses, as Caffe2's core.Plan(step) does, so that a *Step is a
// PlanSource. A step without nets or substeps gives a plan without steps.
func (s *Step) PlanProto() *PlanDef {
	p := NewPlan(s.Name())
	if err := p.AddStep(s); err != nil {
		// Only possible for a network name added to Proto by hand: keep the
		// step, and let the runtime report the missing net.
		p.def.ExecutionStep = append(p.def.ExecutionStep, proto.Clone(s.def).(*ExecutionStep))
	}
	return p.def
}
