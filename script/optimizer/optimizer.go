package optimizer

import (
	"fmt"
	"strings"

	"go.starlark.net/starlark"

	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/script/internal/convert"
	"github.com/caffe2go/caffe2go/script/internal/protoarg"
	"github.com/caffe2go/caffe2go/script/modelhelper"
)

// lrDoc is the part of every builder's documentation that describes the
// keywords all of them share.
const lrDoc = "max_gradient_norm clips the global gradient norm (scaling every learning rate);\n" +
	"allow_lr_injection adds the multiplier blob \"lr_injection\" (1 at start); policy and the\n" +
	"remaining keywords (e.g. stepsize, gamma, power) configure the LearningRate operator; iter_val\n" +
	"is the first value of \"optimizer_iteration\"."

// Module is the optimizer module.
var Module = binding.NewModule(binding.ModuleSpec{
	Name: "optimizer",
	Doc:  "optimizer: adds parameter updates to a model whose gradients exist (model.AddGradientOperators).",
	Funcs: []binding.Fn{
		{Name: "build_sgd", Doc: "build_sgd(model, base_learning_rate, max_gradient_norm=None, allow_lr_injection=False, policy=\"fixed\",\n" +
			"          momentum=0.0, nesterov=1, lars=None, iter_val=0, **kwargs)\n\n" +
			"Stochastic gradient descent on every parameter: a LearningRate (policy and its kwargs, e.g.\n" +
			"stepsize, gamma), then WeightedSum updates, or MomentumSGDUpdate with momentum > 0.\n" + lrDoc, Body: optBuildSGD},
		{Name: "build_adam", Doc: "build_adam(model, base_learning_rate, max_gradient_norm=None, allow_lr_injection=False, policy=\"fixed\",\n" +
			"           beta1=0.9, beta2=0.999, epsilon=1e-8, engine=\"\", iter_val=0, **kwargs)\n\n" +
			"Adam on every parameter: <param>_first_moment and <param>_second_moment (zeros), then\n" +
			"Adam([param, m1, m2, grad, lr, optimizer_iteration]) (SparseAdam for a gradient slice).\n" + lrDoc, Body: optBuildAdam},
		{Name: "build_adagrad", Doc: "build_adagrad(model, base_learning_rate, parameters=None, max_gradient_norm=None, allow_lr_injection=False,\n" +
			"              policy=\"fixed\", epsilon=1e-4, decay=1, engine=\"\", lars=None, iter_val=0, **kwargs)\n\n" +
			"Adagrad on every parameter: <param>_squared_sum (zeros), then Adagrad([param, ss, grad, lr])\n" +
			"(SparseAdagrad for a gradient slice, which needs decay 1); base_learning_rate <= 0 adds nothing.\n" +
			"parameters is accepted and ignored, as in Caffe2.\n" + lrDoc, Body: optBuildAdagrad},
		{Name: "build_rms_prop", Doc: "build_rms_prop(model, base_learning_rate, max_gradient_norm=None, allow_lr_injection=False,\n" +
			"               policy=\"fixed\", decay=0.9, momentum=0.0, epsilon=1e-5, engine=\"\", iter_val=0, **kwargs)\n\n" +
			"RMSProp on every parameter: <param>_grad_o, <param>_mean_squares and <param>_momentum (zeros),\n" +
			"RmsProp([grad, ms, mom, ONE]), then MomentumSGDUpdate([grad_o, mom, lr, param]). Dense gradients only.\n" + lrDoc, Body: optBuildRMSProp},
		{Name: "add_weight_decay", Doc: "add_weight_decay(model, weight_decay)\n\n" +
			"L2 regularization of every weight (the params brew tags WEIGHT): grad += weight_decay * param,\n" +
			"with WeightedSum and the constants ONE_<type>_<id> and wd_<type>_<id>. Call it after\n" +
			"AddGradientOperators and before building the optimizer.", Body: optAddWeightDecay},
		{Name: "reset_optimizer_instance_count", Doc: "reset_optimizer_instance_count()\n\n" +
			"Restarts the per-class instance numbers (the <n> of SgdOptimizer_<n>_lr_cpu) from 0.", Body: optResetCount},
	},
})

// optArgs are the arguments every optimizer builder takes: the model, the
// base learning rate, the _build keywords and the LearningRate keywords.
type optArgs struct {
	model   *modelhelper.ModelHelper
	lr      convert.Float
	maxNorm starlark.Value
	inject  bool
	policy  string
	iterVal int
	// extra are the keywords the builder does not name: LearningRate
	// arguments, as Caffe2's **kwargs.
	extra []starlark.Tuple
}

// unpackOpt unpacks a builder's arguments. params are the builder's own
// keywords, as name/pointer pairs for starlark.UnpackArgs; keywords that
// neither it nor the shared ones name are kept as LearningRate arguments.
func unpackOpt(b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple, params ...any) (*optArgs, error) {
	a := &optArgs{maxNorm: starlark.None, policy: "fixed"}
	pairs := append([]any{"model", &a.model, "base_learning_rate", &a.lr, "max_gradient_norm?", &a.maxNorm,
		"allow_lr_injection?", &a.inject, "policy?", &a.policy, "iter_val?", &a.iterVal}, params...)
	known := map[string]bool{}
	for i := 0; i < len(pairs); i += 2 {
		known[strings.TrimSuffix(pairs[i].(string), "?")] = true
	}
	var own []starlark.Tuple
	for _, kv := range kwargs {
		if k, _ := starlark.AsString(kv[0]); known[k] {
			own = append(own, kv)
		} else {
			a.extra = append(a.extra, kv)
		}
	}
	if err := starlark.UnpackArgs(b.Name(), args, own, pairs...); err != nil {
		return nil, err
	}
	return a, nil
}

// shared returns what every optimizer takes alike: the LearningRate
// arguments and the _build settings.
func (a *optArgs) shared(b *starlark.Builtin) ([]*netdef.Argument, brew.BuildOptions, error) {
	lr, err := a.lrArgs(b)
	if err != nil {
		return nil, brew.BuildOptions{}, err
	}
	o, err := a.buildOptions(b)
	return lr, o, err
}

// lrArgs returns the LearningRate arguments of the extra keywords.
func (a *optArgs) lrArgs(b *starlark.Builtin) ([]*netdef.Argument, error) {
	var out []*netdef.Argument
	for _, kv := range a.extra {
		k, _ := starlark.AsString(kv[0])
		arg, err := protoarg.MakeArgument(k, kv[1])
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		out = append(out, arg)
	}
	return out, nil
}

// buildOptions returns the _build settings: clipping and LR injection.
func (a *optArgs) buildOptions(b *starlark.Builtin) (brew.BuildOptions, error) {
	o := brew.BuildOptions{AllowLRInjection: a.inject}
	if a.maxNorm != starlark.None {
		f, ok := starlark.AsFloat(a.maxNorm)
		if !ok {
			return o, fmt.Errorf("%s: max_gradient_norm must be a number, got %s", b.Name(), a.maxNorm.Type())
		}
		o.MaxGradientNorm = float32(f)
	}
	return o, nil
}

// positive checks a keyword whose zero value the Go options read as "the
// default": an explicit 0 would silently become the default there.
func positive(b *starlark.Builtin, name string, v convert.Float) error {
	if !(v > 0) {
		return fmt.Errorf("%s: %s must be > 0, got %g", b.Name(), name, float64(v))
	}
	return nil
}

// noSparseOptions refuses Caffe2's sparse-update keywords that package
// brew does not implement (None and False, their defaults, are accepted).
func noSparseOptions(b *starlark.Builtin, dedup starlark.Value, rowWise bool) error {
	if dedup != starlark.None {
		return fmt.Errorf("%s: sparse_dedup_aggregator is not supported (only None)", b.Name())
	}
	if rowWise {
		return fmt.Errorf("%s: rowWise is not supported (only False)", b.Name())
	}
	return nil
}

// larsOffset reads Caffe2's lars keyword (None: off).
func larsOffset(b *starlark.Builtin, v starlark.Value) (on bool, offset float32, err error) {
	if v == starlark.None {
		return false, 0, nil
	}
	f, ok := starlark.AsFloat(v)
	if !ok {
		return false, 0, fmt.Errorf("%s: lars must be a number, got %s", b.Name(), v.Type())
	}
	return true, float32(f), nil
}

func optBuildSGD(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var momentum convert.Float
	var lars starlark.Value = starlark.None
	nesterov := 1
	a, err := unpackOpt(b, args, kwargs, "momentum?", &momentum, "nesterov?", &nesterov, "lars?", &lars)
	if err != nil {
		return nil, err
	}
	o := brew.SGDOptions{BaseLR: float32(a.lr), Policy: a.policy, IterVal: int64(a.iterVal), Momentum: float32(momentum), NoNesterov: nesterov == 0}
	if o.Lars, o.LarsOffset, err = larsOffset(b, lars); err != nil {
		return nil, err
	}
	if o.LRArgs, o.BuildOptions, err = a.shared(b); err != nil {
		return nil, err
	}
	return wrapOptimizer(brew.BuildSGD(a.model.Model(), o))
}

func optBuildAdam(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	beta1, beta2, epsilon := convert.Float(0.9), convert.Float(0.999), convert.Float(1e-8)
	engine, rowWise := "", false
	var dedup starlark.Value = starlark.None
	a, err := unpackOpt(b, args, kwargs, "beta1?", &beta1, "beta2?", &beta2, "epsilon?", &epsilon, "engine?", &engine,
		"sparse_dedup_aggregator?", &dedup, "rowWise?", &rowWise)
	if err != nil {
		return nil, err
	}
	if err := noSparseOptions(b, dedup, rowWise); err != nil {
		return nil, err
	}
	for _, p := range []struct {
		name string
		v    convert.Float
	}{{"beta1", beta1}, {"beta2", beta2}, {"epsilon", epsilon}} {
		if err := positive(b, p.name, p.v); err != nil {
			return nil, err
		}
	}
	o := brew.AdamOptions{BaseLR: float32(a.lr), Policy: a.policy, IterVal: int64(a.iterVal),
		Beta1: float32(beta1), Beta2: float32(beta2), Epsilon: float32(epsilon), Engine: engine}
	if o.LRArgs, o.BuildOptions, err = a.shared(b); err != nil {
		return nil, err
	}
	return wrapOptimizer(brew.BuildAdam(a.model.Model(), o))
}

func optBuildAdagrad(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	epsilon, decay := convert.Float(1e-4), convert.Float(1)
	engine, rowWise := "", false
	var dedup, lars, parameters starlark.Value = starlark.None, starlark.None, starlark.None
	a, err := unpackOpt(b, args, kwargs, "parameters?", &parameters, "epsilon?", &epsilon, "decay?", &decay, "engine?", &engine,
		"lars?", &lars, "sparse_dedup_aggregator?", &dedup, "rowWise?", &rowWise)
	if err != nil {
		return nil, err
	}
	if err := noSparseOptions(b, dedup, rowWise); err != nil {
		return nil, err
	}
	if err := positive(b, "epsilon", epsilon); err != nil {
		return nil, err
	}
	if err := positive(b, "decay", decay); err != nil {
		return nil, err
	}
	o := brew.AdagradOptions{BaseLR: float32(a.lr), Policy: a.policy, IterVal: int64(a.iterVal),
		Epsilon: float32(epsilon), Decay: float32(decay), Engine: engine}
	if o.Lars, o.LarsOffset, err = larsOffset(b, lars); err != nil {
		return nil, err
	}
	if o.LRArgs, o.BuildOptions, err = a.shared(b); err != nil {
		return nil, err
	}
	return wrapOptimizer(brew.BuildAdagrad(a.model.Model(), o))
}

func optBuildRMSProp(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	decay, epsilon := convert.Float(0.9), convert.Float(1e-5)
	var momentum convert.Float
	engine := ""
	a, err := unpackOpt(b, args, kwargs, "decay?", &decay, "momentum?", &momentum, "epsilon?", &epsilon, "engine?", &engine)
	if err != nil {
		return nil, err
	}
	if err := positive(b, "decay", decay); err != nil {
		return nil, err
	}
	if err := positive(b, "epsilon", epsilon); err != nil {
		return nil, err
	}
	o := brew.RMSPropOptions{BaseLR: float32(a.lr), Policy: a.policy, IterVal: int64(a.iterVal),
		Decay: float32(decay), Momentum: float32(momentum), Epsilon: float32(epsilon), Engine: engine}
	if o.LRArgs, o.BuildOptions, err = a.shared(b); err != nil {
		return nil, err
	}
	return wrapOptimizer(brew.BuildRMSProp(a.model.Model(), o))
}

func optAddWeightDecay(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var model *modelhelper.ModelHelper
	var wd convert.Float
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "model", &model, "weight_decay", &wd); err != nil {
		return nil, err
	}
	if err := brew.AddWeightDecay(model.Model(), float32(wd)); err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return starlark.None, nil
}

func optResetCount(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	brew.ResetOptimizerInstanceCount()
	return starlark.None, nil
}
