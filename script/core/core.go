package core

import (
	"fmt"

	"go.starlark.net/starlark"
	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/script/caffe2pb2"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/script/internal/convert"
	"github.com/caffe2go/caffe2go/script/internal/protoarg"
)

// Module is the core module.
var Module = binding.NewModule(binding.ModuleSpec{
	Name: "core",
	Doc: "core: graph building, as Caffe2's caffe2.python.core.\n\n" +
		"Caffe2's `with core.DeviceScope(opt):` and `with core.NameScope(\"p\"):` blocks are\n" +
		"calls here that take the block as a callable: core.DeviceScope(opt, lambda: ...),\n" +
		"also spelled with_device(opt, fn) and with_namescope(prefix, fn).",
	Funcs: []binding.Fn{
		{Name: "DeviceOption", Doc: "DeviceOption(device_type, device_id=0, random_seed=None, node_name=None, numa_node_id=None, extra_info=None)\n\nReturns a DeviceOption (cuda_gpu_id is accepted for device_id).", Body: coreDeviceOption},
		{Name: "DeviceScope", Doc: "DeviceScope(scope, fn, node_name=None)\n\nCalls fn() with scope (a DeviceOption, or None with a node_name) as the current device scope;\nreturns fn's result.", Body: coreDeviceScope},
		{Name: "with_device", Doc: "with_device(scope, fn, node_name=None)\n\nThe same as core.DeviceScope.", Body: coreDeviceScope},
		{Name: "NameScope", Doc: "NameScope(prefix, fn, reset=False)\n\nCalls fn() with prefix appended to the current name scope (replacing it with reset);\nreturns fn's result.", Body: coreNameScope},
		{Name: "with_namescope", Doc: "with_namescope(prefix, fn, reset=False)\n\nThe same as core.NameScope.", Body: coreNameScope},
		{Name: "EmptyDeviceScope", Doc: "EmptyDeviceScope(fn)\n\nCalls fn() with no device scope; returns fn's result.", Body: coreEmptyDeviceScope},
		{Name: "CurrentNameScope", Doc: "CurrentNameScope()\n\nReturns the current name scope (\"\" or \"a/b/\").", Body: CurrentNameScope},
		{Name: "CurrentDeviceScope", Doc: "CurrentDeviceScope()\n\nReturns the current device scope's DeviceOption, or None.", Body: coreCurrentDeviceScope},
		{Name: "ScopedName", Doc: "ScopedName(name)\n\nReturns name with the current name scope prepended.", Body: coreScopedName},
		{Name: "ScopedBlobReference", Doc: "ScopedBlobReference(name, net=None)\n\nReturns a BlobReference to name in the current name scope.", Body: coreBlobReference(true)},
		{Name: "BlobReference", Doc: "BlobReference(name, net=None)\n\nReturns a BlobReference to name (no name scope added).", Body: coreBlobReference(false)},
		{Name: "GradientSlice", Doc: "GradientSlice(indices, values)\n\nReturns a sparse gradient naming its indices and values blobs.", Body: coreGradientSlice},
		{Name: "device_option_equal", Doc: "device_option_equal(opt1, opt2, ignore_node_name=True, ignore_random_seed=True)\n\nReports whether two DeviceOptions name the same device (CPU ids are not compared).", Body: coreDeviceOptionEqual},
		{Name: "IsOperator", Doc: "IsOperator(op_type)\n\nReports whether an operator type is registered.", Body: coreIsOperator},
		{Name: "IsOperatorWithEngine", Doc: "IsOperatorWithEngine(op_type, engine)\n\nReports whether an operator type is registered with an engine.", Body: coreIsOperatorWithEngine},
		{Name: "CreateOperator", Doc: "CreateOperator(operator_type, inputs, outputs, name='', control_input=None, device_option=None, arg=None, engine=None, **kwargs)\n\nReturns an OperatorDef: names get the current name scope, the device option defaults to the\ncurrent device scope, and other keywords become arguments (utils.MakeArgument).", Body: coreCreateOperator},
		{Name: "Net", Doc: "Net(name_or_proto)\n\nReturns a net builder: a new empty net (its name made process-unique), or a copy of a NetDef.", Body: coreNet},
		{Name: "ExecutionStep", Doc: "ExecutionStep(name, nets=None, num_iter=None)\n\nReturns an execution-step builder that runs nets (a Net or a list of Nets).", Body: coreExecutionStep},
		{Name: "execution_step", Doc: "execution_step(default_name, steps_or_nets, num_iter=None, report_net=None, report_interval=None,\n               concurrent_substeps=None, should_stop_blob=None, only_once=None,\n               num_concurrent_instances=None, create_workspace=False, run_every_ms=None)\n\nReturns an ExecutionStep running a net, a step, or a list of either, with the given settings;\nnum_iter defaults to 1 when there is no should_stop_blob.", Body: coreExecutionStepHelper},
		{Name: "Plan", Doc: "Plan(name_or_step)\n\nReturns a plan builder: an empty plan, or one running a step.", Body: corePlan},
	},
	Values: func() starlark.StringDict {
		dataTypes := starlark.StringDict{}
		for name, v := range netdef.TensorProto_DataType_value {
			dataTypes[name] = starlark.MakeInt(int(v))
		}
		return starlark.StringDict{
			"CPU":           starlark.MakeInt(int(netdef.CPU)),
			"CUDA":          starlark.MakeInt(int(netdef.CUDA)),
			"GpuDeviceType": starlark.MakeInt(int(netdef.CUDA)),
			"DataType":      convert.StructOf("DataType", dataTypes),
		}
	},
})

func coreDeviceOption(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	for i, kv := range kwargs {
		if kv[0] == starlark.String("cuda_gpu_id") {
			kwargs[i] = starlark.Tuple{starlark.String("device_id"), kv[1]}
		}
	}
	var typ, id int = 0, 0
	var seed, node, numa, extra starlark.Value = starlark.None, starlark.None, starlark.None, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "device_type", &typ, "device_id?", &id,
		"random_seed?", &seed, "node_name?", &node, "numa_node_id?", &numa, "extra_info?", &extra); err != nil {
		return nil, err
	}
	opt := netdef.NewDeviceOption(netdef.DeviceType(typ), int32(id))
	if seed != starlark.None {
		s, ok := convert.IntOf(seed)
		if !ok || s < 0 || s > 1<<32-1 {
			return nil, fmt.Errorf("%s: random_seed must be a non-negative int, got %s", b.Name(), seed)
		}
		opt.RandomSeed = proto.Uint32(uint32(s))
	}
	if node != starlark.None {
		s, ok := starlark.AsString(node)
		if !ok {
			return nil, fmt.Errorf("%s: node_name must be a string, got %s", b.Name(), node.Type())
		}
		opt.NodeName = proto.String(s)
	}
	if numa != starlark.None {
		n, ok := convert.IntOf(numa)
		if !ok {
			return nil, fmt.Errorf("%s: numa_node_id must be an int, got %s", b.Name(), numa.Type())
		}
		opt.NumaNodeId = proto.Int32(int32(n))
	}
	if extra != starlark.None {
		names, err := convert.BlobNames(extra)
		if err != nil {
			return nil, fmt.Errorf("%s: extra_info must be a list of strings", b.Name())
		}
		opt.ExtraInfo = names
	}
	return caffe2pb2.NewMessage(opt), nil
}

// callIn calls fn with s as the process-wide current scope.
func callIn(thread *starlark.Thread, s devicescope.Scope, fn starlark.Callable) (starlark.Value, error) {
	var v starlark.Value
	var err error
	devicescope.With(s, func() { v, err = starlark.Call(thread, fn, nil, nil) })
	return v, err
}

func coreDeviceScope(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var scopeV starlark.Value
	var fnV starlark.Callable
	var node starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "scope", &scopeV, "fn", &fnV, "node_name?", &node); err != nil {
		return nil, err
	}
	opt, err := protoarg.DeviceOption(scopeV)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	cur := devicescope.Current()
	var s devicescope.Scope
	if node != starlark.None {
		name, ok := starlark.AsString(node)
		if !ok {
			return nil, fmt.Errorf("%s: node_name must be a string", b.Name())
		}
		if s, err = cur.WithDeviceNode(opt, name); err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
	} else {
		if opt == nil {
			return nil, fmt.Errorf("%s: a device scope needs a DeviceOption (or a node_name)", b.Name())
		}
		s = cur.WithDevice(opt)
	}
	return callIn(thread, s, fnV)
}

func coreNameScope(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var prefixV starlark.Value
	var fnV starlark.Callable
	reset := false
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "prefix", &prefixV, "fn", &fnV, "reset?", &reset); err != nil {
		return nil, err
	}
	prefix := ""
	if prefixV != starlark.None {
		p, err := convert.BlobName(prefixV)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		prefix = p
	}
	cur := devicescope.Current()
	s := cur.WithName(prefix)
	if reset {
		s = cur.WithNameReset(prefix)
	}
	return callIn(thread, s, fnV)
}

func coreEmptyDeviceScope(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var fnV starlark.Callable
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "fn", &fnV); err != nil {
		return nil, err
	}
	return callIn(thread, devicescope.Current().WithoutDevice(), fnV)
}

// CurrentNameScope is core.CurrentNameScope, which workspace.GetNameScope
// shares: it returns the current name scope.
func CurrentNameScope(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	return starlark.String(devicescope.Current().Name()), nil
}

func coreCurrentDeviceScope(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	opt := devicescope.Current().Device()
	if opt == nil {
		return starlark.None, nil
	}
	return caffe2pb2.NewMessage(opt), nil
}

func coreScopedName(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &v); err != nil {
		return nil, err
	}
	name, err := convert.BlobName(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return starlark.String(devicescope.Current().Scoped(name)), nil
}

func coreBlobReference(scoped bool) binding.Func {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var v, netV starlark.Value = nil, starlark.None
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &v, "net?", &netV); err != nil {
			return nil, err
		}
		name, err := convert.BlobName(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		if scoped {
			name = devicescope.Current().Scoped(name)
		}
		ref := &BlobReference{name: name}
		if netV != starlark.None {
			n, ok := netV.(*Net)
			if !ok {
				return nil, fmt.Errorf("%s: net must be a Net, got %s", b.Name(), netV.Type())
			}
			ref.net = n
		}
		return ref, nil
	}
}

func coreGradientSlice(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var iv, vv starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "indices", &iv, "values", &vv); err != nil {
		return nil, err
	}
	i, err := convert.BlobName(iv)
	if err != nil {
		return nil, fmt.Errorf("%s: indices: %v", b.Name(), err)
	}
	v, err := convert.BlobName(vv)
	if err != nil {
		return nil, fmt.Errorf("%s: values: %v", b.Name(), err)
	}
	return &GradientSlice{indices: i, values: v}, nil
}

func coreDeviceOptionEqual(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var av, bv starlark.Value
	ignoreNode, ignoreSeed := true, true
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "opt1", &av, "opt2", &bv, "ignore_node_name?", &ignoreNode, "ignore_random_seed?", &ignoreSeed); err != nil {
		return nil, err
	}
	x, err := protoarg.DeviceOption(av)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	y, err := protoarg.DeviceOption(bv)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return starlark.Bool(devicescope.EqualWith(x, y, devicescope.EqualOptions{CompareNodeName: !ignoreNode, CompareRandomSeed: !ignoreSeed})), nil
}

func coreIsOperator(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var typ string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "op_type", &typ); err != nil {
		return nil, err
	}
	return starlark.Bool(operators.IsOperator(typ)), nil
}

func coreIsOperatorWithEngine(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var typ, engine string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "op_type", &typ, "engine", &engine); err != nil {
		return nil, err
	}
	return starlark.Bool(operators.IsOperatorWithEngine(typ, engine)), nil
}

func coreCreateOperator(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	named := map[string]starlark.Value{}
	var rest []starlark.Tuple
	for _, kv := range kwargs {
		switch k := string(kv[0].(starlark.String)); k {
		case "operator_type", "inputs", "outputs":
			named[k] = kv[1]
		default:
			rest = append(rest, kv)
		}
	}
	params := []string{"operator_type", "inputs", "outputs"}
	if len(args) > len(params) {
		return nil, fmt.Errorf("%s: want at most 3 positional arguments, got %d", b.Name(), len(args))
	}
	for i, a := range args {
		if _, dup := named[params[i]]; dup {
			return nil, fmt.Errorf("%s: got multiple values for %s", b.Name(), params[i])
		}
		named[params[i]] = a
	}
	for _, p := range params {
		if _, ok := named[p]; !ok {
			return nil, fmt.Errorf("%s: missing argument for %s", b.Name(), p)
		}
	}
	typ, ok := starlark.AsString(named["operator_type"])
	if !ok {
		return nil, fmt.Errorf("%s: operator_type must be a string", b.Name())
	}
	scope := devicescope.Current()
	ins, err := rectify(named["inputs"], scope, "inputs")
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	outs, err := rectify(named["outputs"], scope, "outputs")
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	op, err := createOperator(typ, ins, outs, rest, scope)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return caffe2pb2.NewMessage(op), nil
}

func coreNet(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name_or_proto", &v); err != nil {
		return nil, err
	}
	if s, ok := starlark.AsString(v); ok {
		return &Net{net: netdef.NewNet(s)}, nil
	}
	if def, ok := protoarg.NetDef(v); ok {
		return &Net{net: netdef.NetFromProto(def)}, nil
	}
	return nil, fmt.Errorf("%s: want a name or a NetDef, got %s", b.Name(), v.Type())
}

// netList reads one net or a list of nets.
func netList(v starlark.Value) ([]*netdef.NetDef, error) {
	if def, ok := protoarg.NetDef(v); ok {
		return []*netdef.NetDef{def}, nil
	}
	seq, ok := v.(starlark.Indexable)
	if !ok {
		return nil, fmt.Errorf("want a Net or a list of Nets, got %s", v.Type())
	}
	out := make([]*netdef.NetDef, seq.Len())
	for i := range out {
		def, ok := protoarg.NetDef(seq.Index(i))
		if !ok {
			return nil, fmt.Errorf("want a Net or a list of Nets, got a %s element", seq.Index(i).Type())
		}
		out[i] = def
	}
	return out, nil
}

func coreExecutionStep(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	var netsV, iter starlark.Value = starlark.None, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name, "nets?", &netsV, "num_iter?", &iter); err != nil {
		return nil, err
	}
	var nets []*netdef.NetDef
	if netsV != starlark.None {
		var err error
		if nets, err = netList(netsV); err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
	}
	s := netdef.NewExecutionStep(name, nets...)
	if iter != starlark.None {
		n, ok := convert.IntOf(iter)
		if !ok {
			return nil, fmt.Errorf("%s: num_iter must be an int", b.Name())
		}
		s.SetIter(n)
	}
	return &Step{step: s}, nil
}

func coreExecutionStepHelper(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	var what, iter, reportNet, reportInterval, concurrent, stop, once, instances, every starlark.Value = nil,
		starlark.None, starlark.None, starlark.None, starlark.None, starlark.None, starlark.None, starlark.None, starlark.None
	createWS := false
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "default_name", &name, "steps_or_nets", &what,
		"num_iter?", &iter, "report_net?", &reportNet, "report_interval?", &reportInterval,
		"concurrent_substeps?", &concurrent, "should_stop_blob?", &stop, "only_once?", &once,
		"num_concurrent_instances?", &instances, "create_workspace?", &createWS, "run_every_ms?", &every); err != nil {
		return nil, err
	}
	s := netdef.NewExecutionStep(name)
	fail := func(err error) (starlark.Value, error) { return nil, fmt.Errorf("%s: %v", b.Name(), err) }
	if stop != starlark.None {
		blobN, err := convert.BlobName(stop)
		if err != nil {
			return fail(err)
		}
		s.SetShouldStopBlob(blobN)
	}
	if iter != starlark.None {
		n, ok := convert.IntOf(iter)
		if !ok {
			return fail(fmt.Errorf("num_iter must be an int"))
		}
		s.SetIter(n)
	} else if stop == starlark.None {
		s.SetIter(1)
	}
	if once != starlark.None {
		s.SetOnlyOnce(bool(once.Truth()))
	}
	if concurrent != starlark.None {
		s.SetConcurrentSubsteps(bool(concurrent.Truth()))
	}
	if instances != starlark.None {
		n, ok := convert.IntOf(instances)
		if !ok {
			return fail(fmt.Errorf("num_concurrent_instances must be an int"))
		}
		s.SetNumConcurrentInstances(int32(n))
	}
	if createWS {
		s.SetCreateWorkspace(true)
	}
	if every != starlark.None {
		n, ok := convert.IntOf(every)
		if !ok {
			return fail(fmt.Errorf("run_every_ms must be an int"))
		}
		s.RunEveryMillis(n)
	}
	if reportNet != starlark.None {
		def, ok := protoarg.NetDef(reportNet)
		if !ok {
			return fail(fmt.Errorf("report_net must be a Net"))
		}
		interval, _ := convert.IntOf(reportInterval)
		if err := s.SetReportNet(def, int32(interval)); err != nil {
			return fail(err)
		}
	}
	var items []starlark.Value
	switch x := what.(type) {
	case *starlark.List, starlark.Tuple:
		items = convert.IterValues(x.(starlark.Indexable))
	default:
		items = []starlark.Value{what}
	}
	for _, it := range items {
		if sub, ok := it.(*Step); ok {
			if err := s.AddSubstep(sub.step); err != nil {
				return fail(err)
			}
			continue
		}
		def, ok := protoarg.NetDef(it)
		if !ok {
			return fail(fmt.Errorf("steps_or_nets must hold ExecutionSteps or Nets, got %s", it.Type()))
		}
		if err := s.AddNet(def); err != nil {
			return fail(err)
		}
	}
	return &Step{step: s}, nil
}

func corePlan(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name_or_step", &v); err != nil {
		return nil, err
	}
	if s, ok := v.(*Step); ok {
		p := netdef.NewPlan(s.step.Name())
		if err := p.AddStep(s.step); err != nil {
			return nil, err
		}
		return &Plan{plan: p}, nil
	}
	name, ok := starlark.AsString(v)
	if !ok {
		return nil, fmt.Errorf("%s: want a name or an ExecutionStep, got %s", b.Name(), v.Type())
	}
	return &Plan{plan: netdef.NewPlan(name)}, nil
}
