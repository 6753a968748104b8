package core

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/script/caffe2pb2"
	"github.com/caffe2go/caffe2go/script/internal/binding"
)

// Plan is the Starlark value of a plan builder (Caffe2's core.Plan).
type Plan struct {
	plan *netdef.Plan
}

// Builder returns the wrapped plan builder.
func (p *Plan) Builder() *netdef.Plan { return p.plan }

var _ starlark.HasAttrs = (*Plan)(nil)

// String returns the plan's name.
func (p *Plan) String() string { return p.plan.Name() }

// Type returns "Plan".
func (p *Plan) Type() string { return "Plan" }

// Freeze does nothing: plans stay editable, like Caffe2's.
func (p *Plan) Freeze() {}

// Truth reports true.
func (p *Plan) Truth() starlark.Bool { return true }

// Hash hashes the plan's name.
func (p *Plan) Hash() (uint32, error) { return starlark.String(p.plan.Name()).Hash() }

var planMethods = binding.NewMethodTable("Plan",
	"Plan: a plan builder holding steps and the nets they use.",
	[]binding.Fn{
		{Name: "Name", Doc: "Name()\n\nReturns the plan's name.", Body: planName},
		{Name: "Proto", Doc: "Proto()\n\nReturns the live PlanDef.", Body: planProto},
		{Name: "AddStep", Doc: "AddStep(step)\n\nAppends a copy of a step and adds the nets it uses.", Body: planAddStep},
		{Name: "AddNets", Doc: "AddNets(nets)\n\nAdds nets (a Net or a list) to the plan's network list.", Body: planAddNets},
	})

// Attr returns a method.
func (p *Plan) Attr(name string) (starlark.Value, error) { return planMethods.Bind(name, p), nil }

// AttrNames lists the methods.
func (p *Plan) AttrNames() []string { return planMethods.Names() }

func planName(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	return starlark.String(b.Receiver().(*Plan).plan.Name()), nil
}

func planProto(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	return caffe2pb2.NewMessage(b.Receiver().(*Plan).plan.Proto()), nil
}

func planAddStep(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var s *Step
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &s); err != nil {
		return nil, err
	}
	if err := b.Receiver().(*Plan).plan.AddStep(s.step); err != nil {
		return nil, err
	}
	return starlark.None, nil
}

func planAddNets(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &v); err != nil {
		return nil, err
	}
	nets, err := netList(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	if err := b.Receiver().(*Plan).plan.AddNets(nets...); err != nil {
		return nil, err
	}
	return starlark.None, nil
}
