package brew

import (
	"fmt"
	"strings"

	"go.starlark.net/starlark"

	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/script/core"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/script/internal/brewopt"
	"github.com/caffe2go/caffe2go/script/internal/convert"
	"github.com/caffe2go/caffe2go/script/modelhelper"
)

// helperCall holds the parsed arguments of a brew helper call.
type helperCall struct {
	model *modelhelper.ModelHelper
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
	m, ok := c.args["model"].(*modelhelper.ModelHelper)
	if !ok {
		return nil, fmt.Errorf("%s: the first argument must be a ModelHelper, got %s", b.Name(), c.args["model"].Type())
	}
	c.model = m
	opts, err := brewopt.Options(rest)
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
	m := c.model.Model()
	full := name
	if prefix := devicescope.Current().Name(); !strings.HasPrefix(name, prefix) {
		full = prefix + name
	}
	known := func(n string) bool {
		return m.Net.BlobIsDefined(n) || m.InitNet.BlobIsDefined(n) || m.ParamInfo(n) != nil
	}
	if !known(full) && !known(name) {
		m.AddExternalInputs(name)
		if err := m.TakeErr(); err != nil {
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
	return core.NewBlobReference(name, c.model.Net())
}

// brewHelper builds a helper binding from its parameter list and a body
// that calls package brew. The body returns the errors of its arguments;
// the error the brew call recorded in the model is taken from it
// (Model.TakeErr), so that each call raises its own error and the model
// stays usable after a failed call (a typo in the REPL).
func brewHelper(params []string, body func(c *helperCall) (string, error)) binding.Func {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		c, err := parseHelper(b, args, kwargs, params...)
		if err != nil {
			return nil, err
		}
		out, err := body(c)
		if modelErr := c.model.Model().TakeErr(); err == nil {
			err = modelErr
		}
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
func unaryHelper(f func(m *brew.Model, in, out string, opts ...brew.Option) string, outOptional bool) binding.Func {
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
		return f(c.model.Model(), in, out, c.opts...), nil
	})
}

// listHelper binds a helper of the form f(model, blobs_in, blob_out, **kw).
func listHelper(inKey string, f func(m *brew.Model, ins []string, out string, opts ...brew.Option) string) binding.Func {
	return brewHelper([]string{inKey, "blob_out"}, func(c *helperCall) (string, error) {
		ins, err := c.inputs(inKey)
		if err != nil {
			return "", err
		}
		out, err := c.output("blob_out")
		if err != nil {
			return "", err
		}
		return f(c.model.Model(), ins, out, c.opts...), nil
	})
}

func convHelper(f func(m *brew.Model, in, out string, dimIn, dimOut, kernel int, opts ...brew.Option) string) binding.Func {
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
		return f(c.model.Model(), in, out, dimIn, dimOut, kernel, c.opts...), nil
	})
}
