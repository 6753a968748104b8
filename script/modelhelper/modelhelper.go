package modelhelper

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/script/core"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/script/internal/brewopt"
)

// Module is the model_helper module.
var Module = binding.NewModule(binding.ModuleSpec{
	Name: "model_helper",
	Doc:  "model_helper: ModelHelper, the model that brew helpers and optimizers build on.",
	Funcs: []binding.Fn{
		{Name: "ModelHelper", Doc: "ModelHelper(name=None, init_params=True, allow_not_known_ops=True, arg_scope=None, param_model=None)\n\n" +
			"Returns a new model with nets name and name + \"_init\" (name defaults to \"model\").\n" +
			"arg_scope is a dict of helper keywords every helper call sees; param_model shares another\n" +
			"model's parameters and init net; init_params=False emits no parameter initializers.", Body: mhModelHelper},
	},
})

func mhModelHelper(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name, argScope, paramModel starlark.Value = starlark.None, starlark.None, starlark.None
	initParams, allowUnknown := true, true
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name?", &name, "init_params?", &initParams,
		"allow_not_known_ops?", &allowUnknown, "arg_scope?", &argScope, "param_model?", &paramModel); err != nil {
		return nil, err
	}
	var o brew.ModelOptions
	o.NoInitParams = !initParams
	o.KnownOpsOnly = !allowUnknown
	if argScope != starlark.None {
		d, ok := argScope.(*starlark.Dict)
		if !ok {
			return nil, fmt.Errorf("%s: arg_scope must be a dict, got %s", b.Name(), argScope.Type())
		}
		opts, err := brewopt.Options(d.Items())
		if err != nil {
			return nil, fmt.Errorf("%s: arg_scope: %v", b.Name(), err)
		}
		o.ArgScope = opts
	}
	if paramModel != starlark.None {
		pm, ok := paramModel.(*ModelHelper)
		if !ok {
			return nil, fmt.Errorf("%s: param_model must be a ModelHelper, got %s", b.Name(), paramModel.Type())
		}
		o.ParamModel = pm.m
	}
	n := ""
	if name != starlark.None {
		s, ok := starlark.AsString(name)
		if !ok {
			return nil, fmt.Errorf("%s: name must be a string, got %s", b.Name(), name.Type())
		}
		n = s
	}
	m, err := brew.NewModelWith(n, o)
	if err != nil {
		return nil, err
	}
	return wrapModel(m), nil
}

func wrapModel(m *brew.Model) *ModelHelper {
	return &ModelHelper{m: m, net: core.NewNet(m.Net), initNet: core.NewNet(m.InitNet)}
}
