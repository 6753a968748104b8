package brew

import (
	"fmt"
	"strings"

	"go.starlark.net/starlark"

	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/script/core"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/script/internal/brewopt"
	"github.com/caffe2go/caffe2go/script/internal/convert"
	"github.com/caffe2go/caffe2go/script/modelhelper"
)

// Module is the brew module.
var Module = binding.NewModule(binding.ModuleSpec{
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
				return brew.FC(c.model.Model(), in, out, dimIn, dimOut, c.opts...), nil
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
				return brew.SpatialBN(c.model.Model(), in, out, dimIn, c.opts...), nil
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
				return brew.PRelu(c.model.Model(), in, out, n, c.opts...), nil
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
				return brew.Iter(c.model.Model(), out, c.opts...), nil
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
				return brew.Accuracy(c.model.Model(), ins[0], ins[1], out, c.opts...), nil
			})},
		{Name: "add_weight_decay", Doc: "add_weight_decay(model, weight_decay)\n\nAdds weight_decay * param to the gradient of every weight (as optimizer.add_weight_decay).",
			Body: brewHelper([]string{"weight_decay"}, func(c *helperCall) (string, error) {
				wd, ok := starlark.AsFloat(c.args["weight_decay"])
				if !ok {
					return "", fmt.Errorf("weight_decay must be a number")
				}
				return "", brew.AddWeightDecay(c.model.Model(), float32(wd))
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

func brewDBInput(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var model *modelhelper.ModelHelper
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
	full := brew.DBInput(model.Model(), outs, batch, db, dbType)
	if err := model.Model().TakeErr(); err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	refs := make(starlark.Tuple, len(full))
	for i, n := range full {
		refs[i] = core.NewBlobReference(n, model.Net())
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
	opts, err := brewopt.Options(kwargs)
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
