package workspace

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/workspace"
)

// planHandle reports on a plan started by RunPlanInBackground.
type planHandle struct {
	h *workspace.PlanHandle
}

// String returns "<PlanHandle>".
func (p *planHandle) String() string { return "<PlanHandle>" }

// Type returns "PlanHandle".
func (p *planHandle) Type() string { return "PlanHandle" }

// Freeze does nothing: the handle only reports on the plan.
func (p *planHandle) Freeze() {}

// Truth reports true.
func (p *planHandle) Truth() starlark.Bool { return true }

// Hash fails: handles are unhashable.
func (p *planHandle) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: PlanHandle") }

var planHandleMethods = binding.NewMethodTable("PlanHandle",
	"PlanHandle: a plan running in the background.",
	[]binding.Fn{
		{Name: "is_done", Doc: "is_done()\n\nReports whether the plan has finished.", Body: handleIsDone},
		{Name: "is_succeeded", Doc: "is_succeeded()\n\nReports whether the plan has finished without an error.", Body: handleSucceeded},
		{Name: "wait", Doc: "wait()\n\nWaits for the plan to finish; fails with the plan's error if it failed.", Body: handleWait},
	})

// Attr returns a method.
func (p *planHandle) Attr(name string) (starlark.Value, error) {
	return planHandleMethods.Bind(name, p), nil
}

// AttrNames lists the methods.
func (p *planHandle) AttrNames() []string { return planHandleMethods.Names() }

func handleIsDone(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	return starlark.Bool(b.Receiver().(*planHandle).h.IsDone()), nil
}

func handleSucceeded(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	h := b.Receiver().(*planHandle).h
	return starlark.Bool(h.IsDone() && h.Wait() == nil), nil
}

func handleWait(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	if err := b.Receiver().(*planHandle).h.Wait(); err != nil {
		return nil, err
	}
	return starlark.True, nil
}
