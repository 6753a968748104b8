package script

import (
	"fmt"
	"strings"

	"go.starlark.net/starlark"

	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/brew/dataparallel"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/script/caffe2pb2"
	"github.com/caffe2go/caffe2go/script/core"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/script/internal/convert"
	"github.com/caffe2go/caffe2go/script/internal/protoarg"
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

func wrapModel(m *brew.Model) *ModelHelper {
	return &ModelHelper{m: m, net: core.NewNet(m.Net), initNet: core.NewNet(m.InitNet)}
}

var modelHelperModule = binding.NewModule(binding.ModuleSpec{
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
		opts, err := brewOptions(d.Items())
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

// brewOptions converts helper keywords to brew options: Caffe2's
// weight_init/bias_init tuples ("XavierFill", {...}), the typed keywords
// brew knows (kernel, stride, pad, order, group, axis, is_test, engine,
// no_bias, use_cudnn, init_scale, init_bias), and any other keyword as an
// operator argument.
func brewOptions(kwargs []starlark.Tuple) ([]brew.Option, error) {
	var opts []brew.Option
	for _, kv := range kwargs {
		key, _ := starlark.AsString(kv[0])
		v := kv[1]
		intArg := func(f func(int) brew.Option) error {
			i, err := starlark.AsInt32(v)
			if err != nil {
				return fmt.Errorf("%s must be an int, got %s", key, v.Type())
			}
			opts = append(opts, f(i))
			return nil
		}
		var err error
		switch key {
		case "weight_init", "bias_init", "slope_init":
			if v == starlark.None {
				continue
			}
			var init brew.Initializer
			if init, err = initializerOf(key, v); err == nil {
				switch key {
				case "weight_init":
					opts = append(opts, brew.WeightInit(init))
				case "bias_init":
					opts = append(opts, brew.BiasInit(init))
				default:
					opts = append(opts, brew.SlopeInit(init))
				}
			}
		case "kernel":
			if seq, ok := v.(starlark.Indexable); ok && seq.Len() == 2 {
				kh, err1 := starlark.AsInt32(seq.Index(0))
				kw, err2 := starlark.AsInt32(seq.Index(1))
				if err1 != nil || err2 != nil {
					return nil, fmt.Errorf("kernel must be an int or two ints")
				}
				opts = append(opts, brew.KernelHW(kh, kw))
				continue
			}
			err = intArg(brew.Kernel)
		case "stride":
			err = intArg(brew.Stride)
		case "pad":
			err = intArg(brew.Pad)
		case "group":
			err = intArg(brew.Group)
		case "axis":
			err = intArg(brew.Axis)
		case "order", "engine":
			s, ok := starlark.AsString(v)
			if !ok {
				return nil, fmt.Errorf("%s must be a string, got %s", key, v.Type())
			}
			if key == "order" {
				opts = append(opts, brew.Order(s))
			} else {
				opts = append(opts, brew.Engine(s))
			}
		case "is_test":
			opts = append(opts, brew.IsTest(bool(v.Truth())))
		case "no_bias":
			if v.Truth() {
				opts = append(opts, brew.NoBias())
			}
		case "use_cudnn":
			if v.Truth() {
				opts = append(opts, brew.Engine("CUDNN"))
			}
		default:
			var arg *netdef.Argument
			if arg, err = protoarg.MakeArgument(key, v); err == nil {
				opts = append(opts, brew.Arg(arg))
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return opts, nil
}

// initializerOf reads a Caffe2 initializer tuple: ("Op", {"arg": value}).
func initializerOf(key string, v starlark.Value) (brew.Initializer, error) {
	t, ok := v.(starlark.Tuple)
	if !ok || len(t) == 0 || len(t) > 2 {
		return brew.Initializer{}, fmt.Errorf("%s must be a tuple (op_name, {args}), got %s", key, v)
	}
	op, ok := starlark.AsString(t[0])
	if !ok {
		return brew.Initializer{}, fmt.Errorf("%s: the op name must be a string, got %s", key, t[0].Type())
	}
	var args []*netdef.Argument
	if len(t) == 2 {
		d, ok := t[1].(*starlark.Dict)
		if !ok {
			return brew.Initializer{}, fmt.Errorf("%s: the arguments must be a dict, got %s", key, t[1].Type())
		}
		for _, kv := range d.Items() {
			name, ok := starlark.AsString(kv[0])
			if !ok {
				return brew.Initializer{}, fmt.Errorf("%s: argument names must be strings", key)
			}
			a, err := protoarg.MakeArgument(name, kv[1])
			if err != nil {
				return brew.Initializer{}, fmt.Errorf("%s: %v", key, err)
			}
			args = append(args, a)
		}
	}
	return brew.Init(op, args...), nil
}

// helperCall holds the parsed arguments of a brew helper call.
type helperCall struct {
	model *ModelHelper
	args  map[string]starlark.Value
	opts  []brew.Option
}

// parseHelper binds the positional and keyword arguments of a helper to
// its parameters (model first; names ending in "?" are optional); other
// keywords become brew options.
func parseHelper(b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple, params ...string) (*helperCall, error) {
	c := &helperCall{args: map[string]starlark.Value{}}
	names := append([]string{"model"}, params...)
	bare := make([]string, len(names))
	for i, p := range names {
		bare[i] = strings.TrimSuffix(p, "?")
	}
	if len(args) > len(names) {
		return nil, fmt.Errorf("%s: want at most %d positional arguments, got %d", b.Name(), len(names), len(args))
	}
	for i, a := range args {
		c.args[bare[i]] = a
	}
	var rest []starlark.Tuple
	for _, kv := range kwargs {
		k, _ := starlark.AsString(kv[0])
		isParam := false
		for _, p := range bare {
			if p == k {
				isParam = true
			}
		}
		if !isParam {
			rest = append(rest, kv)
			continue
		}
		if _, dup := c.args[k]; dup {
			return nil, fmt.Errorf("%s: got multiple values for %s", b.Name(), k)
		}
		c.args[k] = kv[1]
	}
	for i, p := range names {
		if _, ok := c.args[bare[i]]; !ok && !strings.HasSuffix(p, "?") {
			return nil, fmt.Errorf("%s: missing argument for %s", b.Name(), bare[i])
		}
	}
	m, ok := c.args["model"].(*ModelHelper)
	if !ok {
		return nil, fmt.Errorf("%s: the first argument must be a ModelHelper, got %s", b.Name(), c.args["model"].Type())
	}
	c.model = m
	opts, err := brewOptions(rest)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	c.opts = opts
	return c, nil
}

// input returns a blob argument for a helper. A name the model does not
// know yet is declared as an external input of its net, as Caffe2's nets
// do with undeclared inputs.
func (c *helperCall) input(key string) (string, error) {
	name, err := c.resolve(c.args[key])
	if err != nil {
		return "", fmt.Errorf("%s: %v", key, err)
	}
	return name, nil
}

// resolve returns the blob name v gives, declaring it as an external input
// when the model does not know it (see input).
func (c *helperCall) resolve(v starlark.Value) (string, error) {
	name, err := convert.BlobName(v)
	if err != nil {
		return "", err
	}
	if _, isRef := v.(*core.BlobReference); isRef {
		return name, nil
	}
	m := c.model.m
	full := name
	if prefix := devicescope.Current().Name(); !strings.HasPrefix(name, prefix) {
		full = prefix + name
	}
	known := func(n string) bool {
		return m.Net.BlobIsDefined(n) || m.InitNet.BlobIsDefined(n) || m.ParamInfo(n) != nil
	}
	if !known(full) && !known(name) {
		if err := m.AddExternalInputs(name); err != nil {
			return "", err
		}
	}
	return name, nil
}

func (c *helperCall) inputs(key string) ([]string, error) {
	v := c.args[key]
	if _, ok := v.(starlark.Indexable); !ok || convert.IsStringLike(v) {
		s, err := c.input(key)
		return []string{s}, err
	}
	seq := v.(starlark.Indexable)
	out := make([]string, seq.Len())
	for i := range out {
		s, err := c.resolve(seq.Index(i))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", key, err)
		}
		out[i] = s
	}
	return out, nil
}

// output returns an output name argument ("" when absent or None).
func (c *helperCall) output(key string) (string, error) {
	v, ok := c.args[key]
	if !ok || v == starlark.None {
		return "", nil
	}
	s, err := convert.BlobName(v)
	if err != nil {
		return "", fmt.Errorf("%s: %v", key, err)
	}
	return s, nil
}

func (c *helperCall) intArg(key string, dflt int) (int, error) {
	v, ok := c.args[key]
	if !ok {
		return dflt, nil
	}
	i, err := starlark.AsInt32(v)
	if err != nil {
		return 0, fmt.Errorf("%s must be an int, got %s", key, v.Type())
	}
	return i, nil
}

// ref returns the reference to a helper's output in the model's net.
func (c *helperCall) ref(name string) starlark.Value {
	return core.NewBlobReference(name, c.model.net)
}

// brewHelper builds a helper binding from its parameter list and a body
// that calls package brew.
func brewHelper(params []string, body func(c *helperCall) (string, error)) binding.Func {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		c, err := parseHelper(b, args, kwargs, params...)
		if err != nil {
			return nil, err
		}
		out, err := body(c)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		if out == "" {
			return starlark.None, nil
		}
		return c.ref(out), nil
	}
}

// unaryHelper binds a helper of the form f(model, blob_in, blob_out, **kw).
func unaryHelper(f func(m *brew.Model, in, out string, opts ...brew.Option) (string, error), outOptional bool) binding.Func {
	outParam := "blob_out"
	if outOptional {
		outParam += "?"
	}
	return brewHelper([]string{"blob_in", outParam}, func(c *helperCall) (string, error) {
		in, err := c.input("blob_in")
		if err != nil {
			return "", err
		}
		out, err := c.output("blob_out")
		if err != nil {
			return "", err
		}
		return f(c.model.m, in, out, c.opts...)
	})
}

// listHelper binds a helper of the form f(model, blobs_in, blob_out, **kw).
func listHelper(inKey string, f func(m *brew.Model, ins []string, out string, opts ...brew.Option) (string, error)) binding.Func {
	return brewHelper([]string{inKey, "blob_out"}, func(c *helperCall) (string, error) {
		ins, err := c.inputs(inKey)
		if err != nil {
			return "", err
		}
		out, err := c.output("blob_out")
		if err != nil {
			return "", err
		}
		return f(c.model.m, ins, out, c.opts...)
	})
}

var brewModule = binding.NewModule(binding.ModuleSpec{
	Name: "brew",
	Doc: "brew: Caffe2's model-building helpers. Each takes the model first and Caffe2's keywords:\n" +
		"weight_init / bias_init as (\"FillOp\", {args}) tuples, kernel, stride, pad, order, group, axis,\n" +
		"is_test, engine, no_bias, use_cudnn; other keywords become operator arguments. Blob inputs the\n" +
		"model does not know yet become external inputs of its net. Each returns its output's BlobReference.",
	Funcs: []binding.Fn{
		{Name: "fc", Doc: "fc(model, blob_in, blob_out, dim_in, dim_out, **kw)\n\nA fully connected layer: params <out>_w [dim_out, dim_in] (XavierFill) and <out>_b [dim_out] (ConstantFill 0).",
			Body: brewHelper([]string{"blob_in", "blob_out", "dim_in", "dim_out"}, func(c *helperCall) (string, error) {
				in, err := c.input("blob_in")
				if err != nil {
					return "", err
				}
				out, err := c.output("blob_out")
				if err != nil {
					return "", err
				}
				dimIn, err := c.intArg("dim_in", 0)
				if err != nil {
					return "", err
				}
				dimOut, err := c.intArg("dim_out", 0)
				if err != nil {
					return "", err
				}
				return brew.FC(c.model.m, in, out, dimIn, dimOut, c.opts...)
			})},
		{Name: "conv", Doc: "conv(model, blob_in, blob_out, dim_in, dim_out, kernel, **kw)\n\nA convolution: params <out>_w (XavierFill) and <out>_b (ConstantFill 0, absent with no_bias).", Body: convHelper(brew.Conv)},
		{Name: "conv_transpose", Doc: "conv_transpose(model, blob_in, blob_out, dim_in, dim_out, kernel, **kw)\n\nA transposed convolution: weight [dim_in, dim_out, k, k].", Body: convHelper(brew.ConvTranspose)},
		{Name: "relu", Doc: "relu(model, blob_in, blob_out, **kw)\n\nRelu.", Body: unaryHelper(brew.Relu, false)},
		{Name: "tanh", Doc: "tanh(model, blob_in, blob_out, **kw)\n\nTanh.", Body: unaryHelper(brew.Tanh, false)},
		{Name: "sigmoid", Doc: "sigmoid(model, blob_in, blob_out, **kw)\n\nSigmoid.", Body: unaryHelper(brew.Sigmoid, false)},
		{Name: "leaky_relu", Doc: "leaky_relu(model, blob_in, blob_out, alpha=0.01, **kw)\n\nLeakyRelu: x for x ≥ 0, alpha·x below.", Body: unaryHelper(brew.LeakyRelu, false)},
		{Name: "softmax", Doc: "softmax(model, blob_in, blob_out=None, **kw)\n\nSoftmax (None: an auto-named output).", Body: unaryHelper(brew.Softmax, true)},
		{Name: "max_pool", Doc: "max_pool(model, blob_in, blob_out, **kw)\n\nMaxPool (kernel, stride, pad, global_pooling).", Body: unaryHelper(brew.MaxPool, false)},
		{Name: "average_pool", Doc: "average_pool(model, blob_in, blob_out, **kw)\n\nAveragePool (kernel, stride, pad, global_pooling).", Body: unaryHelper(brew.AveragePool, false)},
		{Name: "dropout", Doc: "dropout(model, blob_in, blob_out, **kw)\n\nDropout; is_test is required (ratio defaults to 0.5).", Body: unaryHelper(brew.Dropout, false)},
		{Name: "lrn", Doc: "lrn(model, blob_in, blob_out, **kw)\n\nLocal response normalization.", Body: unaryHelper(brew.LRN, false)},
		{Name: "transpose", Doc: "transpose(model, blob_in, blob_out, **kw)\n\nTranspose (axes).", Body: unaryHelper(brew.Transpose, false)},
		{Name: "spatial_bn", Doc: "spatial_bn(model, blob_in, blob_out, dim_in, **kw)\n\nSpatial batch normalization: params <out>_s, <out>_b and computed <out>_rm, <out>_riv.",
			Body: brewHelper([]string{"blob_in", "blob_out", "dim_in"}, func(c *helperCall) (string, error) {
				in, err := c.input("blob_in")
				if err != nil {
					return "", err
				}
				out, err := c.output("blob_out")
				if err != nil {
					return "", err
				}
				dimIn, err := c.intArg("dim_in", 0)
				if err != nil {
					return "", err
				}
				return brew.SpatialBN(c.model.m, in, out, dimIn, c.opts...)
			})},
		{Name: "prelu", Doc: "prelu(model, blob_in, blob_out, num_channels=1, slope_init=None)\n\nParametric Relu with param <out>_slope [num_channels] (ConstantFill 0.25).",
			Body: brewHelper([]string{"blob_in", "blob_out", "num_channels?"}, func(c *helperCall) (string, error) {
				in, err := c.input("blob_in")
				if err != nil {
					return "", err
				}
				out, err := c.output("blob_out")
				if err != nil {
					return "", err
				}
				n, err := c.intArg("num_channels", 1)
				if err != nil {
					return "", err
				}
				return brew.PRelu(c.model.m, in, out, n, c.opts...)
			})},
		{Name: "concat", Doc: "concat(model, blobs_in, blob_out, **kw)\n\nConcat along axis (or the order's channel axis).", Body: listHelper("blobs_in", brew.Concat)},
		{Name: "depth_concat", Doc: "depth_concat(model, blobs_in, blob_out, **kw)\n\nConcat along the channels.", Body: listHelper("blobs_in", brew.DepthConcat)},
		{Name: "sum", Doc: "sum(model, blob_in, blob_out, **kw)\n\nSum of a list of blobs.", Body: listHelper("blob_in", brew.Sum)},
		{Name: "iter", Doc: "iter(model, blob_out, **kw)\n\nAn iteration counter (int64, on the CPU) incremented by each run.",
			Body: brewHelper([]string{"blob_out"}, func(c *helperCall) (string, error) {
				out, err := c.output("blob_out")
				if err != nil {
					return "", err
				}
				return brew.Iter(c.model.m, out, c.opts...)
			})},
		{Name: "accuracy", Doc: "accuracy(model, blob_in, blob_out, **kw)\n\nAccuracy of [predictions, labels] (top_k).",
			Body: brewHelper([]string{"blob_in", "blob_out"}, func(c *helperCall) (string, error) {
				ins, err := c.inputs("blob_in")
				if err != nil {
					return "", err
				}
				if len(ins) != 2 {
					return "", fmt.Errorf("blob_in must be [predictions, labels]")
				}
				out, err := c.output("blob_out")
				if err != nil {
					return "", err
				}
				return brew.Accuracy(c.model.m, ins[0], ins[1], out, c.opts...)
			})},
		{Name: "add_weight_decay", Doc: "add_weight_decay(model, weight_decay)\n\nAdds weight_decay * param to the gradient of every weight (as optimizer.add_weight_decay).",
			Body: brewHelper([]string{"weight_decay"}, func(c *helperCall) (string, error) {
				wd, ok := starlark.AsFloat(c.args["weight_decay"])
				if !ok {
					return "", fmt.Errorf("weight_decay must be a number")
				}
				return "", brew.AddWeightDecay(c.model.m, float32(wd))
			})},
		{Name: "db_input", Doc: "db_input(model, blobs_out, batch_size, db, db_type)\n\n" +
			"Reads batches of TensorProtos records from a DB: CreateDB([], \"dbreader_\" + db, db, db_type) in\n" +
			"param_init_net, then TensorProtosDBInput([reader], blobs_out, batch_size) in net, where output i\n" +
			"gets the i-th tensor of each record. Returns the outputs' BlobReferences as a tuple.", Body: brewDBInput},
		{Name: "arg_scope", Doc: "arg_scope(helpers, fn, **kw)\n\n" +
			"Calls fn() with kw added to the keywords of every call of the helpers (brew.conv, a list of\n" +
			"helpers, or their names such as \"fc\"): Caffe2's `with brew.arg_scope([brew.conv], order=\"NHWC\"):`.\n" +
			"Scopes nest, the inner one winning; explicit keywords win over every scope. Returns fn's result.", Body: brewArgScope},
	},
})

func convHelper(f func(m *brew.Model, in, out string, dimIn, dimOut, kernel int, opts ...brew.Option) (string, error)) binding.Func {
	return brewHelper([]string{"blob_in", "blob_out", "dim_in", "dim_out", "kernel"}, func(c *helperCall) (string, error) {
		in, err := c.input("blob_in")
		if err != nil {
			return "", err
		}
		out, err := c.output("blob_out")
		if err != nil {
			return "", err
		}
		dimIn, err := c.intArg("dim_in", 0)
		if err != nil {
			return "", err
		}
		dimOut, err := c.intArg("dim_out", 0)
		if err != nil {
			return "", err
		}
		kernel, err := c.intArg("kernel", 0)
		if err != nil {
			return "", err
		}
		return f(c.model.m, in, out, dimIn, dimOut, kernel, c.opts...)
	})
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

func brewDBInput(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var model *ModelHelper
	var outsV starlark.Value
	var batch int
	var db, dbType string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "model", &model, "blobs_out", &outsV,
		"batch_size", &batch, "db", &db, "db_type", &dbType); err != nil {
		return nil, err
	}
	outs, err := convert.BlobNames(outsV)
	if err != nil {
		return nil, fmt.Errorf("%s: blobs_out: %v", b.Name(), err)
	}
	full, err := brew.DBInput(model.m, outs, batch, db, dbType)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	refs := make(starlark.Tuple, len(full))
	for i, n := range full {
		refs[i] = core.NewBlobReference(n, model.net)
	}
	return refs, nil
}

func brewArgScope(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var helpersV starlark.Value
	var fnV starlark.Callable
	if err := starlark.UnpackPositionalArgs(b.Name(), args, nil, 2, &helpersV, &fnV); err != nil {
		return nil, err
	}
	var list []starlark.Value
	switch v := helpersV.(type) {
	case *starlark.List:
		for i := range v.Len() {
			list = append(list, v.Index(i))
		}
	case starlark.Tuple:
		list = v
	default:
		list = []starlark.Value{v}
	}
	helpers := make([]brew.Helper, len(list))
	for i, h := range list {
		switch x := h.(type) {
		case *starlark.Builtin:
			name, ok := strings.CutPrefix(x.Name(), "brew.")
			if !ok {
				return nil, fmt.Errorf("%s: %s is not a brew helper", b.Name(), x.Name())
			}
			helpers[i] = brew.Helper(name)
		case starlark.String:
			helpers[i] = brew.Helper(x)
		default:
			return nil, fmt.Errorf("%s: helpers must be brew helpers or their names, got %s", b.Name(), h.Type())
		}
	}
	opts, err := brewOptions(kwargs)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	var result starlark.Value
	var callErr error
	err = brew.WithArgScope(helpers, opts, func() error {
		result, callErr = starlark.Call(thread, fnV, nil, nil)
		return callErr
	})
	if callErr != nil {
		// The error of fn keeps its own traceback.
		return nil, callErr
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return result, nil
}
