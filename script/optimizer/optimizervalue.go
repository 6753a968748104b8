package optimizer

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/script/internal/convert"
)

// optimizerValue is the optimizer a builder returns.
type optimizerValue struct {
	opt *brew.Optimizer
}

var _ starlark.HasAttrs = (*optimizerValue)(nil)

// wrapOptimizer returns the value of the optimizer a builder built, or
// the builder's error.
func wrapOptimizer(opt *brew.Optimizer, err error) (starlark.Value, error) {
	if err != nil {
		return nil, err
	}
	return &optimizerValue{opt: opt}, nil
}

var optimizerMethods = binding.NewMethodTable("Optimizer",
	"Optimizer: what optimizer.build_* return (Caffe2's SgdOptimizer, AdamOptimizer, …).",
	[]binding.Fn{
		{Name: "get_auxiliary_parameters", Doc: "get_auxiliary_parameters()\n\nReturns AuxParams(local, shared): the per-parameter blobs the optimizer made (momentum,\nmoments, …) and the blobs all parameters share (ONE_*, optimizer_iteration, …).", Body: optAux},
		{Name: "get_cpu_blob_name", Doc: "get_cpu_blob_name(base_str, node_name=\"\")\n\nReturns the optimizer's unique name for a CPU blob: <Class>_<n>_<base_str><node_name>_cpu.", Body: optBlobName(false)},
		{Name: "get_gpu_blob_name", Doc: "get_gpu_blob_name(base_str, gpu_id, node_name)\n\nReturns the optimizer's unique name for a blob on a GPU: <Class>_<n>_<base_str><node_name>_gpu<id>.", Body: optBlobName(true)},
	})

// String names the optimizer's class and instance: <SgdOptimizer 0>.
func (o *optimizerValue) String() string {
	return fmt.Sprintf("<%s %d>", o.opt.ClassName(), o.opt.InstanceNum())
}

// Type returns "Optimizer".
func (o *optimizerValue) Type() string { return "Optimizer" }

// Freeze does nothing: the optimizer's settings are fixed.
func (o *optimizerValue) Freeze() {}

// Truth reports true.
func (o *optimizerValue) Truth() starlark.Bool { return true }

// Hash fails: optimizers are unhashable.
func (o *optimizerValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: Optimizer") }

// Attr returns the class name, the instance number or a method.
func (o *optimizerValue) Attr(name string) (starlark.Value, error) {
	switch name {
	case "class_name":
		return starlark.String(o.opt.ClassName()), nil
	case "instance_num":
		return starlark.MakeInt(o.opt.InstanceNum()), nil
	}
	if m := optimizerMethods.Bind(name, o); m != nil {
		return m, nil
	}
	return nil, nil
}

// AttrNames lists the attributes and methods.
func (o *optimizerValue) AttrNames() []string {
	return append([]string{"class_name", "instance_num"}, optimizerMethods.Names()...)
}

func optAux(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	aux := b.Receiver().(*optimizerValue).opt.AuxiliaryParameters()
	return convert.StructOf("AuxParams", starlark.StringDict{"local": convert.StringList(aux.Local), "shared": convert.StringList(aux.Shared)}), nil
}

func optBlobName(gpu bool) binding.Func {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		opt := b.Receiver().(*optimizerValue).opt
		var base, node string
		if gpu {
			var id int
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "base_str", &base, "gpu_id", &id, "node_name", &node); err != nil {
				return nil, err
			}
			return starlark.String(opt.GPUBlobName(base, id, node)), nil
		}
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "base_str", &base, "node_name?", &node); err != nil {
			return nil, err
		}
		return starlark.String(opt.CPUBlobName(base, node)), nil
	}
}
