package brewopt

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/script/internal/protoarg"
)

// Options converts helper keywords to brew options: Caffe2's
// weight_init/bias_init tuples ("XavierFill", {...}), the typed keywords
// brew knows (kernel, stride, pad, order, group, axis, is_test, engine,
// no_bias, use_cudnn, init_scale, init_bias), and any other keyword as an
// operator argument.
func Options(kwargs []starlark.Tuple) ([]brew.Option, error) {
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
