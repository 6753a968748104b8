package core

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/script/caffe2pb2"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/script/internal/convert"
	"github.com/caffe2go/caffe2go/script/internal/protoarg"
)

// Step is the Starlark value of an execution-step builder (Caffe2's
// core.ExecutionStep).
type Step struct {
	step *netdef.Step
}

// Builder returns the wrapped step builder.
func (s *Step) Builder() *netdef.Step { return s.step }

var _ starlark.HasAttrs = (*Step)(nil)

// String returns the step's name.
func (s *Step) String() string { return s.step.Name() }

// Type returns "ExecutionStep".
func (s *Step) Type() string { return "ExecutionStep" }

// Freeze does nothing: steps stay editable, like Caffe2's.
func (s *Step) Freeze() {}

// Truth reports true.
func (s *Step) Truth() starlark.Bool { return true }

// Hash hashes the step's name.
func (s *Step) Hash() (uint32, error) { return starlark.String(s.step.Name()).Hash() }

var stepMethods = binding.NewMethodTable("ExecutionStep",
	"ExecutionStep: an execution-step builder; setters return the step.",
	[]binding.Fn{
		{Name: "Name", Doc: "Name()\n\nReturns the step's name.", Body: stepName},
		{Name: "Proto", Doc: "Proto()\n\nReturns the live ExecutionStep message.", Body: stepProto},
		{Name: "SetIter", Doc: "SetIter(num_iter)\n\nSets the number of iterations.", Body: stepSetInt("SetIter")},
		{Name: "SetShouldStopBlob", Doc: "SetShouldStopBlob(should_stop_blob)\n\nLoops until the named scalar bool blob is true.", Body: stepSetShouldStop},
		{Name: "SetOnlyOnce", Doc: "SetOnlyOnce(only_once)\n\nWith a should-stop blob, runs the children once.", Body: stepSetBool("SetOnlyOnce")},
		{Name: "SetConcurrentSubsteps", Doc: "SetConcurrentSubsteps(concurrent_substeps)\n\nRuns the substeps concurrently.", Body: stepSetBool("SetConcurrentSubsteps")},
		{Name: "SetCreateWorkspace", Doc: "SetCreateWorkspace(create_workspace)\n\nRuns each iteration in a fresh child workspace.", Body: stepSetBool("SetCreateWorkspace")},
		{Name: "SetNumConcurrentInstances", Doc: "SetNumConcurrentInstances(num_concurrent_instances)\n\nRuns that many copies of the children concurrently.", Body: stepSetInt("SetNumConcurrentInstances")},
		{Name: "RunEveryMillis", Doc: "RunEveryMillis(interval)\n\nAs a substep, runs every interval milliseconds beside its siblings.", Body: stepSetInt("RunEveryMillis")},
		{Name: "SetReportNet", Doc: "SetReportNet(report_net, report_interval)\n\nSets the (deprecated) report net, run every report_interval seconds.", Body: stepSetReportNet},
		{Name: "AddNet", Doc: "AddNet(net)\n\nAppends a net to run.", Body: stepAddNet},
		{Name: "AddSubstep", Doc: "AddSubstep(substep)\n\nAppends a copy of a substep.", Body: stepAddSubstep},
		{Name: "HasNets", Doc: "HasNets()\n\nReports whether the step runs nets.", Body: stepHas(true)},
		{Name: "HasSubsteps", Doc: "HasSubsteps()\n\nReports whether the step runs substeps.", Body: stepHas(false)},
	})

// Attr returns a method.
func (s *Step) Attr(name string) (starlark.Value, error) { return stepMethods.Bind(name, s), nil }

// AttrNames lists the methods.
func (s *Step) AttrNames() []string { return stepMethods.Names() }

func stepName(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	return starlark.String(b.Receiver().(*Step).step.Name()), nil
}

func stepProto(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	return caffe2pb2.NewMessage(b.Receiver().(*Step).step.Proto()), nil
}

func stepSetInt(name string) binding.Func {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var n int64
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &n); err != nil {
			return nil, err
		}
		s := b.Receiver().(*Step)
		switch name {
		case "SetIter":
			s.step.SetIter(n)
		case "SetNumConcurrentInstances":
			s.step.SetNumConcurrentInstances(int32(n))
		default:
			s.step.RunEveryMillis(n)
		}
		return s, nil
	}
}

func stepSetBool(name string) binding.Func {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		v := true
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0, &v); err != nil {
			return nil, err
		}
		s := b.Receiver().(*Step)
		switch name {
		case "SetOnlyOnce":
			s.step.SetOnlyOnce(v)
		case "SetConcurrentSubsteps":
			s.step.SetConcurrentSubsteps(v)
		default:
			s.step.SetCreateWorkspace(v)
		}
		return s, nil
	}
}

func stepSetShouldStop(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &v); err != nil {
		return nil, err
	}
	name, err := convert.BlobName(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	s := b.Receiver().(*Step)
	s.step.SetShouldStopBlob(name)
	return s, nil
}

func stepSetReportNet(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var netV starlark.Value
	var interval int
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "report_net", &netV, "report_interval", &interval); err != nil {
		return nil, err
	}
	def, ok := protoarg.NetDef(netV)
	if !ok {
		return nil, fmt.Errorf("%s: want a Net, got %s", b.Name(), netV.Type())
	}
	s := b.Receiver().(*Step)
	if err := s.step.SetReportNet(def, int32(interval)); err != nil {
		return nil, err
	}
	return s, nil
}

func stepAddNet(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var netV starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &netV); err != nil {
		return nil, err
	}
	def, ok := protoarg.NetDef(netV)
	if !ok {
		return nil, fmt.Errorf("%s: want a Net, got %s", b.Name(), netV.Type())
	}
	s := b.Receiver().(*Step)
	if err := s.step.AddNet(def); err != nil {
		return nil, err
	}
	return s, nil
}

func stepAddSubstep(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var sub *Step
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &sub); err != nil {
		return nil, err
	}
	s := b.Receiver().(*Step)
	if err := s.step.AddSubstep(sub.step); err != nil {
		return nil, err
	}
	return s, nil
}

func stepHas(nets bool) binding.Func {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if err := binding.NoArgs(b, args, kwargs); err != nil {
			return nil, err
		}
		s := b.Receiver().(*Step)
		if nets {
			return starlark.Bool(s.step.HasNets()), nil
		}
		return starlark.Bool(s.step.HasSubsteps()), nil
	}
}
