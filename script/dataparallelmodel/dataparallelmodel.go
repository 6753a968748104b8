package dataparallelmodel

import (
	"fmt"
	"runtime"
	"strings"

	"go.starlark.net/starlark"

	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/brew/dataparallel"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/script/caffe2pb2"
	"github.com/caffe2go/caffe2go/script/core"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/script/internal/convert"
	"github.com/caffe2go/caffe2go/script/internal/protoarg"
	"github.com/caffe2go/caffe2go/script/modelhelper"
)

const parallelizeDoc = "(model_helper_obj, input_builder_fun, forward_pass_builder_fun, param_update_builder_fun=None,\n" +
	"            optimizer_builder_fun=None, post_sync_builder_fun=None, devices=None, rendezvous=None,\n" +
	"            net_type=\"dag\", broadcast_computed_params=True, optimize_gradient_memory=False,\n" +
	"            dynamic_memory_management=False, blobs_to_keep=None, use_nccl=False,\n" +
	"            max_concurrent_distributed_ops=16, cpu_device=False, num_threads_per_device=4,\n" +
	"            shared_model=False, combine_spatial_bn=False, allreduce_engine=\"SUM_TREE\")\n\n" +
	"Makes the model data-parallel, as Caffe2's data_parallel_model.Parallelize: for each device d,\n" +
	"under its device scope and name scope cpu_<d>, input_builder_fun(model) and\n" +
	"forward_pass_builder_fun(model, loss_scale) build one replica (loss_scale = 1/len(devices); the\n" +
	"forward function scales its losses by it and returns them as a list). Then the gradients are\n" +
	"added and summed over the devices, and the updates come from param_update_builder_fun(model)\n" +
	"(per device) or optimizer_builder_fun(model) (once); with neither the model is forward-only.\n" +
	"The first device is the master; devices=None means every CPU (range(number of CPUs)).\n" +
	"Only CPU devices exist: cpu_device=True is required (Caffe2's default is GPU). rendezvous is\n" +
	"Caffe2's dict (kv_handler, shard_id, num_shards, engine, transport, interface; caffe2go adds\n" +
	"store=\"file:///dir\" or \"redis://host:port\" in place of kv_handler, hostname, timeout_ms\n" +
	"and barrier_timeout_ms): with num_shards > 1 it trains across processes with Gloo (a build\n" +
	"with -tags gloo); loss_scale is then 1/(len(devices) × num_shards). NCCL and the memory\n" +
	"optimizers are not supported. allreduce_engine\n" +
	"(SUM_TREE or RING) is a caffe2go extension; max_concurrent_distributed_ops only matters for\n" +
	"multi-host training and is only checked. Returns None; the other functions of this module\n" +
	"take the model."

// Module is the data_parallel_model module.
var Module = binding.NewModule(binding.ModuleSpec{
	Name: "data_parallel_model",
	Doc: "data_parallel_model: trains one model on several devices, as Caffe2's\n" +
		"caffe2.python.data_parallel_model (CPU devices cpu_0/, cpu_1/, …). Feed each device's\n" +
		"batch to \"cpu_<d>/data\" (and so on), then RunNet.",
	Funcs: []binding.Fn{
		{Name: "Parallelize", Doc: "Parallelize" + parallelizeDoc, Body: dpmParallelize(false)},
		{Name: "Parallelize_CPU", Doc: "Parallelize_CPU(model_helper_obj, input_builder_fun, forward_pass_builder_fun, **kwargs)\n\nParallelize with cpu_device=True.", Body: dpmParallelize(true)},
		{Name: "RunInitNet", Doc: "RunInitNet(model)\n\nRuns the parallelized model's init net once and creates its train net.", Body: dpmRunInitNet},
		{Name: "RunNet", Doc: "RunNet(model, num_iterations)\n\nRuns the parallelized model's train net num_iterations times.", Body: dpmRunNet},
		{Name: "GetCheckpointParams", Doc: "GetCheckpointParams(model)\n\nReturns, sorted, the blobs a checkpoint needs: the master device's parameters, computed\nparameters and optimizer state, and the iteration counters (e.g. \"optimizer_iteration\").", Body: dpmCheckpointParams},
		{Name: "FinalizeAfterCheckpoint", Doc: "FinalizeAfterCheckpoint(model, blobs=None)\n\nCopies blobs loaded into the master device's copies (None: every blob the init net syncs) to\nthe other devices. Call it after loading a checkpoint.", Body: dpmFinalizeAfterCheckpoint},
		{Name: "AddBlobSync", Doc: "AddBlobSync(model, blobs, net=None)\n\nMakes net (None: model.Net()) copy each blob, named without its device scope, from the master to\nthe other devices every time it runs. Call it before RunInitNet.", Body: dpmAddBlobSync},
		{Name: "ConvertNetForDevice", Doc: "ConvertNetForDevice(net, device=None)\n\nReturns a copy of net (a Net or NetDef) for a device (None: the current device scope): names get\nthe device's prefix \"cpu_<id>/\" and operators its DeviceOption.", Body: dpmConvertNetForDevice},
		{Name: "ExtractPredictorNet", Doc: "ExtractPredictorNet(model, inputs, outputs, device)\n\nReturns (predict_net, export_blobs): the master device's replica from inputs to outputs (names\nwithout device scope), renamed back to the unscoped names, and the parameters it reads.\ndevice (a DeviceOption or None) is given to every operator.", Body: dpmExtractPredictorNet},
		{Name: "GetLearningRateBlobNames", Doc: "GetLearningRateBlobNames(model)\n\nReturns the learning-rate blobs of the train net (e.g. [\"SgdOptimizer_0_lr_cpu\"]).", Body: dpmLearningRateBlobNames},
		{Name: "GetDevices", Doc: "GetDevices(model)\n\nReturns the device ids of a parallelized model, the master first.", Body: dpmGetDevices},
	},
})

// parallelOf returns the data-parallel model Parallelize made of v.
func parallelOf(b *starlark.Builtin, v starlark.Value) (*dataparallel.Parallel, error) {
	h, ok := v.(*modelhelper.ModelHelper)
	if !ok {
		return nil, fmt.Errorf("%s: model must be a ModelHelper, got %s", b.Name(), v.Type())
	}
	if h.Parallel() == nil {
		return nil, fmt.Errorf("%s: model %q is not parallelized (call data_parallel_model.Parallelize first)", b.Name(), h.Model().Name)
	}
	return h.Parallel(), nil
}

// modelArg unpacks the single model argument of a module function.
func modelArg(b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (*dataparallel.Parallel, error) {
	var v starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "model", &v); err != nil {
		return nil, err
	}
	return parallelOf(b, v)
}

// builderCalls calls the Starlark builder functions from the Go builders
// and keeps the first error one of them raised, so that the script sees
// it with its own traceback.
type builderCalls struct {
	thread *starlark.Thread
	model  *modelhelper.ModelHelper
	err    error
}

// call calls fn(model, extra...) and returns its result.
func (c *builderCalls) call(fn starlark.Callable, extra ...starlark.Value) (starlark.Value, error) {
	v, err := starlark.Call(c.thread, fn, append(starlark.Tuple{c.model}, extra...), nil)
	if err != nil && c.err == nil {
		c.err = err
	}
	return v, err
}

// builder returns the Go builder that calls fn, or nil for None.
func (c *builderCalls) builder(fn starlark.Value) func(*brew.Model) error {
	if fn == starlark.None {
		return nil
	}
	return func(*brew.Model) error {
		_, err := c.call(fn.(starlark.Callable))
		return err
	}
}

// forward returns the Go forward builder that calls fn and reads the
// losses it returns: a list of BlobReferences or names (names are resolved
// in the device's name scope), or None for a forward-only model.
func (c *builderCalls) forward(fn starlark.Callable) func(*brew.Model, float32) ([]string, error) {
	return func(_ *brew.Model, scale float32) ([]string, error) {
		v, err := c.call(fn, starlark.Float(scale))
		if err != nil || v == starlark.None {
			return nil, err
		}
		var names []string
		if _, single := v.(*core.BlobReference); single {
			names = []string{v.(*core.BlobReference).BlobName()}
		} else if names, err = convert.BlobNames(v); err != nil {
			return nil, fmt.Errorf("forward_pass_builder_fun must return a list of losses: %v", err)
		}
		scope := devicescope.Current().Name()
		for i, n := range names {
			if !strings.HasPrefix(n, scope) {
				names[i] = scope + n
			}
		}
		return names, nil
	}
}

// callableOrNone checks a builder argument.
func callableOrNone(b *starlark.Builtin, name string, v starlark.Value) error {
	if _, ok := v.(starlark.Callable); ok || v == starlark.None {
		return nil
	}
	return fmt.Errorf("%s: %s must be a function or None, got %s", b.Name(), name, v.Type())
}

func dpmParallelize(cpuOnly bool) binding.Func {
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var model *modelhelper.ModelHelper
		var input, forward, update, optim, postSync starlark.Value = starlark.None, nil, starlark.None, starlark.None, starlark.None
		var devices, rendezvous, blobsToKeep starlark.Value = starlark.None, starlark.None, starlark.None
		netType, engine := dataparallel.DefaultNetType, ""
		broadcastComputed, optimizeMemory, dynamicMemory, nccl := true, false, false, false
		maxConcurrent, threads := 16, dataparallel.DefaultThreadsPerDevice
		cpu, shared, combineBN := cpuOnly, false, false
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "model_helper_obj", &model, "input_builder_fun", &input,
			"forward_pass_builder_fun", &forward, "param_update_builder_fun?", &update, "optimizer_builder_fun?", &optim,
			"post_sync_builder_fun?", &postSync, "devices?", &devices, "rendezvous?", &rendezvous, "net_type?", &netType,
			"broadcast_computed_params?", &broadcastComputed, "optimize_gradient_memory?", &optimizeMemory,
			"dynamic_memory_management?", &dynamicMemory, "blobs_to_keep?", &blobsToKeep, "use_nccl?", &nccl,
			"max_concurrent_distributed_ops?", &maxConcurrent, "cpu_device?", &cpu, "num_threads_per_device?", &threads,
			"shared_model?", &shared, "combine_spatial_bn?", &combineBN, "allreduce_engine?", &engine); err != nil {
			return nil, err
		}
		switch {
		case !cpu:
			return nil, fmt.Errorf("%s: GPU devices are not available in caffe2go (no CUDA backend); pass cpu_device=True or call Parallelize_CPU", b.Name())
		case nccl:
			return nil, fmt.Errorf("%s: use_nccl needs GPU devices, which caffe2go does not have", b.Name())
		case optimizeMemory || dynamicMemory || blobsToKeep != starlark.None:
			return nil, fmt.Errorf("%s: the memory optimizers (optimize_gradient_memory, dynamic_memory_management, blobs_to_keep) are not supported", b.Name())
		case maxConcurrent <= 0:
			return nil, fmt.Errorf("%s: max_concurrent_distributed_ops must be > 0, got %d", b.Name(), maxConcurrent)
		case threads <= 0:
			return nil, fmt.Errorf("%s: num_threads_per_device must be > 0, got %d", b.Name(), threads)
		case model.Parallel() != nil:
			return nil, fmt.Errorf("%s: model %q is parallelized already", b.Name(), model.Model().Name)
		}
		for _, f := range []struct {
			name string
			v    starlark.Value
		}{{"input_builder_fun", input}, {"forward_pass_builder_fun", forward}, {"param_update_builder_fun", update},
			{"optimizer_builder_fun", optim}, {"post_sync_builder_fun", postSync}} {
			if err := callableOrNone(b, f.name, f.v); err != nil {
				return nil, err
			}
		}
		if forward == starlark.None {
			return nil, fmt.Errorf("%s: forward_pass_builder_fun is required", b.Name())
		}
		rdv, err := parseRendezvous(rendezvous)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		ids, err := deviceIDs(devices)
		if err != nil {
			return nil, fmt.Errorf("%s: devices: %v", b.Name(), err)
		}
		calls := &builderCalls{thread: thread, model: model}
		p, err := dataparallel.Parallelize(model.Model(), dataparallel.Options{
			InputBuilder:             calls.builder(input),
			ForwardBuilder:           calls.forward(forward.(starlark.Callable)),
			ParamUpdateBuilder:       calls.builder(update),
			OptimizerBuilder:         calls.builder(optim),
			PostSyncBuilder:          calls.builder(postSync),
			Devices:                  ids,
			DeviceType:               netdef.CPU,
			NetType:                  netType,
			NumThreadsPerDevice:      threads,
			NoComputedParamBroadcast: !broadcastComputed,
			SharedModel:              shared,
			CombineSpatialBN:         combineBN,
			AllreduceEngine:          engine,
			Rendezvous:               rdv,
		})
		if calls.err != nil {
			// A builder failed: its error keeps the traceback into the
			// script's function.
			return nil, calls.err
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		model.SetParallel(p)
		return starlark.None, nil
	}
}

// deviceIDs reads the devices argument: a list of ints, or None for every
// CPU.
func deviceIDs(v starlark.Value) ([]int, error) {
	if v == starlark.None {
		ids := make([]int, runtime.NumCPU())
		for i := range ids {
			ids[i] = i
		}
		return ids, nil
	}
	seq, ok := v.(starlark.Indexable)
	if !ok || convert.IsStringLike(v) {
		return nil, fmt.Errorf("want a list of device ids, got %s", v.Type())
	}
	ids := make([]int, seq.Len())
	for i := range ids {
		d, err := starlark.AsInt32(seq.Index(i))
		if err != nil {
			return nil, fmt.Errorf("want a list of device ids, got %s", seq.Index(i).Type())
		}
		ids[i] = d
	}
	return ids, nil
}

func dpmRunInitNet(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	p, err := modelArg(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	return starlark.None, p.RunInitNet()
}

func dpmRunNet(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	var n int
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "model", &v, "num_iterations", &n); err != nil {
		return nil, err
	}
	p, err := parallelOf(b, v)
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("%s: num_iterations must be >= 0, got %d", b.Name(), n)
	}
	return starlark.None, p.RunNetContext(binding.Context(thread), n)
}

func dpmCheckpointParams(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	p, err := modelArg(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	return convert.StringList(p.CheckpointParams()), nil
}

func dpmFinalizeAfterCheckpoint(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v, blobsV starlark.Value = nil, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "model", &v, "blobs?", &blobsV); err != nil {
		return nil, err
	}
	p, err := parallelOf(b, v)
	if err != nil {
		return nil, err
	}
	var blobs []string
	if blobsV != starlark.None {
		if blobs, err = convert.BlobNames(blobsV); err != nil {
			return nil, fmt.Errorf("%s: blobs: %v", b.Name(), err)
		}
		if len(blobs) == 0 {
			return nil, fmt.Errorf("%s: blobs is empty (None syncs every blob the init net syncs)", b.Name())
		}
	}
	return starlark.None, p.FinalizeAfterCheckpoint(blobs...)
}

func dpmAddBlobSync(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v, blobsV, netV starlark.Value = nil, nil, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "model", &v, "blobs", &blobsV, "net?", &netV); err != nil {
		return nil, err
	}
	p, err := parallelOf(b, v)
	if err != nil {
		return nil, err
	}
	blobs, err := convert.BlobNames(blobsV)
	if err != nil {
		return nil, fmt.Errorf("%s: blobs: %v", b.Name(), err)
	}
	var net *netdef.Net
	if netV != starlark.None {
		n, ok := netV.(*core.Net)
		if !ok {
			return nil, fmt.Errorf("%s: net must be a Net, got %s", b.Name(), netV.Type())
		}
		if err := n.CheckMutable("add a blob sync to"); err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		net = n.Builder()
	}
	return starlark.None, p.AddBlobSync(net, blobs...)
}

func dpmConvertNetForDevice(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var netV, devV starlark.Value = nil, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "net", &netV, "device?", &devV); err != nil {
		return nil, err
	}
	src, err := protoarg.NetArg(b.Name(), netV)
	if err != nil {
		return nil, err
	}
	dev, err := protoarg.DeviceOption(devV)
	if err != nil {
		return nil, fmt.Errorf("%s: device: %v", b.Name(), err)
	}
	def, err := dataparallel.ConvertNetForDevice(src.Proto(), dev)
	if err != nil {
		return nil, err
	}
	return caffe2pb2.NewMessage(def), nil
}

func dpmExtractPredictorNet(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v, inV, outV, devV starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "model", &v, "inputs", &inV, "outputs", &outV, "device", &devV); err != nil {
		return nil, err
	}
	p, err := parallelOf(b, v)
	if err != nil {
		return nil, err
	}
	inputs, err := convert.BlobNames(inV)
	if err != nil {
		return nil, fmt.Errorf("%s: inputs: %v", b.Name(), err)
	}
	outputs, err := convert.BlobNames(outV)
	if err != nil {
		return nil, fmt.Errorf("%s: outputs: %v", b.Name(), err)
	}
	dev, err := protoarg.DeviceOption(devV)
	if err != nil {
		return nil, fmt.Errorf("%s: device: %v", b.Name(), err)
	}
	// As Caffe2: the master's replica, its names renamed back.
	master := p.Devices()[0]
	renames := map[string]string{}
	scoped := func(names []string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = p.DeviceBlob(master, n)
			renames[out[i]] = n
		}
		return out
	}
	net, export, err := brew.ExtractPredictorNet(p.Model().Net.Proto(), scoped(inputs), scoped(outputs), brew.PredictorOptions{Device: dev, Renames: renames})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return starlark.Tuple{core.NewNet(net), convert.StringList(export)}, nil
}

func dpmLearningRateBlobNames(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	p, err := modelArg(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	return convert.StringList(p.LearningRateBlobNames()), nil
}

func dpmGetDevices(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	p, err := modelArg(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	ids := p.Devices()
	vals := make([]starlark.Value, len(ids))
	for i, d := range ids {
		vals[i] = starlark.MakeInt(d)
	}
	return starlark.NewList(vals), nil
}
