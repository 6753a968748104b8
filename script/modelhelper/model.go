package modelhelper

import (
	"fmt"
	"strings"

	"go.starlark.net/starlark"

	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/brew/dataparallel"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/script/caffe2pb2"
	"github.com/caffe2go/caffe2go/script/core"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/script/internal/convert"
)

// ModelHelper is the Starlark value of a brew.Model (Caffe2's
// model_helper.ModelHelper): net and param_init_net are its nets, params
// its trainable parameters, and operator types are forwarded to its net
// (model.Relu(...) is model.net.Relu(...)).
type ModelHelper struct {
	m            *brew.Model
	net, initNet *core.Net
	// dp is the data-parallel model data_parallel_model.Parallelize made
	// of m (nil before).
	dp *dataparallel.Parallel
}

var _ starlark.HasAttrs = (*ModelHelper)(nil)

// Model returns the wrapped model.
func (h *ModelHelper) Model() *brew.Model { return h.m }

// Net returns model.net, the Net value of the model's net.
func (h *ModelHelper) Net() *core.Net { return h.net }

// Parallel returns the data-parallel model that
// data_parallel_model.Parallelize made of the model, or nil.
func (h *ModelHelper) Parallel() *dataparallel.Parallel { return h.dp }

// SetParallel records the data-parallel model made of the model.
func (h *ModelHelper) SetParallel(p *dataparallel.Parallel) { h.dp = p }

// String returns the model's name.
func (h *ModelHelper) String() string { return h.m.Name }

// Repr describes the model for the REPL.
func (h *ModelHelper) Repr() string {
	return fmt.Sprintf("<ModelHelper %q: %d ops, %d params>", h.m.Name, len(h.m.Net.Proto().GetOp()), len(h.m.GetAllParams()))
}

// Type returns "ModelHelper".
func (h *ModelHelper) Type() string { return "ModelHelper" }

// Freeze freezes the model's nets.
func (h *ModelHelper) Freeze() {
	h.net.Freeze()
	h.initNet.Freeze()
}

// Truth reports true.
func (h *ModelHelper) Truth() starlark.Bool { return true }

// Hash hashes the model's name.
func (h *ModelHelper) Hash() (uint32, error) { return starlark.String(h.m.Name).Hash() }

var modelMethods = binding.NewMethodTable("ModelHelper",
	"ModelHelper(name=None, init_params=True, allow_not_known_ops=True, arg_scope=None, param_model=None):\n"+
		"a model built with brew helpers: net (the train or predict net), param_init_net (creates the\n"+
		"parameters), name, params, param_to_grad (param -> gradient, after AddGradientOperators).\n"+
		"Operator types are forwarded to net.",
	[]binding.Fn{
		{Name: "AddGradientOperators", Doc: "AddGradientOperators(*losses)\n\nAppends the backward pass for the losses (names, BlobReferences or one list) and records\neach parameter's gradient; returns the gradient map. Only once per model.", Body: modelAddGradients},
		{Name: "GetParams", Doc: "GetParams(namescope=None)\n\nThe trainable parameters under namescope (None: the current name scope; \"\": all), in creation order.", Body: modelGetParams},
		{Name: "GetAllParams", Doc: "GetAllParams(namescope=None)\n\nThe trainable, then the computed parameters under namescope (None: the current scope).", Body: modelGetAllParams},
		{Name: "GetComputedParams", Doc: "GetComputedParams(namescope=None)\n\nThe computed parameters (such as batch-norm statistics) under namescope (None: all).", Body: modelGetComputedParams},
		{Name: "Proto", Doc: "Proto()\n\nReturns the live NetDef of net.", Body: modelProto(false)},
		{Name: "InitProto", Doc: "InitProto()\n\nReturns the live NetDef of param_init_net.", Body: modelProto(true)},
	})

// Attr returns an attribute, a method or an operator builder of the net.
func (h *ModelHelper) Attr(name string) (starlark.Value, error) {
	switch name {
	case "net":
		return h.net, nil
	case "param_init_net":
		return h.initNet, nil
	case "name":
		return starlark.String(h.m.Name), nil
	case "params":
		return h.net.Refs(h.m.ParamsIn("")), nil
	case "init_params":
		return starlark.Bool(h.m.InitParams), nil
	case "param_to_grad":
		return h.paramToGrad(), nil
	}
	if m := modelMethods.Bind(name, h); m != nil {
		return m, nil
	}
	return h.net.Attr(name)
}

// AttrNames lists the attributes and methods.
func (h *ModelHelper) AttrNames() []string {
	return append([]string{"init_params", "name", "net", "param_init_net", "param_to_grad", "params"}, modelMethods.Names()...)
}

func modelAddGradients(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	h := b.Receiver().(*ModelHelper)
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("%s: unexpected keyword arguments", b.Name())
	}
	var losses []string
	for _, a := range args {
		if _, isList := a.(*starlark.List); isList {
			names, err := convert.BlobNames(a)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", b.Name(), err)
			}
			losses = append(losses, names...)
			continue
		}
		s, err := convert.BlobName(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		losses = append(losses, s)
	}
	grads, err := h.m.AddGradientOperators(losses...)
	if err != nil {
		return nil, err
	}
	return core.Gradients(grads, h.net), nil
}

func scopeArg(b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple, dflt string) (string, error) {
	var ns starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "namescope?", &ns); err != nil {
		return "", err
	}
	if ns == starlark.None {
		return dflt, nil
	}
	s, ok := starlark.AsString(ns)
	if !ok {
		return "", fmt.Errorf("%s: namescope must be a string", b.Name())
	}
	if s != "" && !strings.HasSuffix(s, "/") {
		s += "/"
	}
	return s, nil
}

func modelGetParams(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	h := b.Receiver().(*ModelHelper)
	s, err := scopeArg(b, args, kwargs, devicescope.Current().Name())
	if err != nil {
		return nil, err
	}
	return h.net.Refs(h.m.ParamsIn(s)), nil
}

func modelGetAllParams(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	h := b.Receiver().(*ModelHelper)
	s, err := scopeArg(b, args, kwargs, devicescope.Current().Name())
	if err != nil {
		return nil, err
	}
	return h.net.Refs(h.m.AllParamsIn(s)), nil
}

func modelGetComputedParams(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	h := b.Receiver().(*ModelHelper)
	s, err := scopeArg(b, args, kwargs, "")
	if err != nil {
		return nil, err
	}
	return h.net.Refs(h.m.ComputedParamsIn(s)), nil
}

func modelProto(init bool) binding.Func {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if err := binding.NoArgs(b, args, kwargs); err != nil {
			return nil, err
		}
		h := b.Receiver().(*ModelHelper)
		if init {
			return caffe2pb2.NewMessage(h.m.InitNet.Proto()), nil
		}
		return caffe2pb2.NewMessage(h.m.Net.Proto()), nil
	}
}

// paramToGrad returns Caffe2's model.param_to_grad: each parameter's
// gradient (a BlobReference, or a GradientSlice for a sparse one).
func (h *ModelHelper) paramToGrad() starlark.Value {
	sparse := h.m.GradMap()
	grads := map[string]operators.Gradient{}
	for p, g := range h.m.ParamToGrad() {
		grads[p] = operators.Dense(g)
		if sparse[p].IsSparse() {
			grads[p] = sparse[p]
		}
	}
	return core.Gradients(grads, h.net)
}
