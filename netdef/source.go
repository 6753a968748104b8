package netdef

// NetSource is anything that yields a NetDef: a *NetDef itself or a *Net
// builder. Functions that take a net accept either, as Caffe2 accepts a
// NetDef or a core.Net.
type NetSource interface {
	Proto() *NetDef
}

// Proto returns x itself, so that a *NetDef is a NetSource.
func (x *NetDef) Proto() *NetDef { return x }

// PlanSource is anything that yields a PlanDef: a *PlanDef or a plan builder.
type PlanSource interface {
	PlanProto() *PlanDef
}

// PlanProto returns x itself, so that a *PlanDef is a PlanSource.
func (x *PlanDef) PlanProto() *PlanDef { return x }

// PlanProto wraps a bare execution step in a plan of the same name, the way
// Caffe2's RunPlan accepts a step. The plan's network list is empty: the
// step's nets must already exist in the workspace.
func (x *ExecutionStep) PlanProto() *PlanDef {
	return &PlanDef{Name: x.Name, ExecutionStep: []*ExecutionStep{x}}
}
