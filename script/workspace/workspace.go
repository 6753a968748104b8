package workspace

import (
	"fmt"

	"go.starlark.net/starlark"
	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/script/caffe2pb2"
	"github.com/caffe2go/caffe2go/script/core"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/script/internal/convert"
	"github.com/caffe2go/caffe2go/script/internal/protoarg"
	"github.com/caffe2go/caffe2go/script/np"
	"github.com/caffe2go/caffe2go/workspace"
)

// Module is the workspace module.
var Module = binding.NewModule(binding.ModuleSpec{
	Name: "workspace",
	Doc: "workspace: the current workspace's blobs and nets, as Caffe2's caffe2.python.workspace.\n\n" +
		"workspace.blobs is a dict-like view: workspace.blobs[\"x\"] fetches, assignment feeds,\n" +
		"len() and iteration list the blobs, \"x\" in workspace.blobs tests for one.",
	Funcs: []binding.Fn{
		{Name: "FeedBlob", Doc: "FeedBlob(name, arr, device_option=None)\n\nStores a copy of arr (an ndarray, keeping its exact dtype; a string or bytes, as a byte-string blob;\nor a TensorProto) under name, on device_option's device, else the current device scope's. Returns True.", Body: wsFeedBlob},
		{Name: "FetchBlob", Doc: "FetchBlob(name)\n\nReturns a copy of a blob: an ndarray for a tensor, bytes for a byte string,\nelse a description of the blob's content.", Body: wsFetchBlob},
		{Name: "FetchBlobs", Doc: "FetchBlobs(names)\n\nReturns FetchBlob of each name, as a list.", Body: wsFetchBlobs},
		{Name: "HasBlob", Doc: "HasBlob(name)\n\nReports whether the blob exists (the parent workspace's included).", Body: wsHasBlob},
		{Name: "Blobs", Doc: "Blobs()\n\nReturns the blob names: local, then forwarded, then the parent's, each sorted.", Body: wsBlobs},
		{Name: "CreateBlob", Doc: "CreateBlob(name)\n\nCreates an empty blob unless one exists. Returns True.", Body: wsCreateBlob},
		{Name: "ResetBlob", Doc: "ResetBlob(name)\n\nEmpties an existing blob, keeping its name.", Body: wsResetBlob},
		{Name: "RemoveBlob", Doc: "RemoveBlob(name)\n\nDeletes a local blob; returns whether there was one.", Body: wsRemoveBlob},
		{Name: "SerializeBlob", Doc: "SerializeBlob(name)\n\nReturns the blob as Caffe2 BlobProto bytes.", Body: wsSerializeBlob},
		{Name: "DeserializeBlob", Doc: "DeserializeBlob(name, serialized_blob)\n\nCreates the blob if needed and fills it from BlobProto bytes.", Body: wsDeserializeBlob},
		{Name: "GetBlobSizeBytes", Doc: "GetBlobSizeBytes(name)\n\nReturns the size of the blob's content in bytes.", Body: wsBlobSize},
		{Name: "CreateNet", Doc: "CreateNet(net, overwrite=False, input_blobs=None)\n\nInstantiates a net (a Net or a NetDef), first creating input_blobs. Returns True.", Body: wsCreateNet},
		{Name: "RunNet", Doc: "RunNet(name, num_iter=1, allow_fail=False)\n\nRuns a created net (by name or Net) num_iter times. Returns True; with allow_fail a failure returns False.", Body: wsRunNet},
		{Name: "RunNetOnce", Doc: "RunNetOnce(net)\n\nRuns a net once without registering it. Returns True.", Body: wsRunNetOnce},
		{Name: "RunOperatorOnce", Doc: "RunOperatorOnce(operator)\n\nRuns one OperatorDef (or its serialized bytes) once. Returns True.", Body: wsRunOperatorOnce},
		{Name: "RunOperatorsOnce", Doc: "RunOperatorsOnce(operators)\n\nRuns OperatorDefs once, in order. Returns True.", Body: wsRunOperatorsOnce},
		{Name: "RunPlan", Doc: "RunPlan(plan_or_step)\n\nRuns a plan (a Plan, an ExecutionStep, or their messages). Returns True.", Body: wsRunPlan},
		{Name: "RunPlanInBackground", Doc: "RunPlanInBackground(plan_or_step)\n\nStarts a plan; returns a handle with is_done(), is_succeeded() and wait().", Body: wsRunPlanInBackground},
		{Name: "Nets", Doc: "Nets()\n\nReturns the names of the created nets, sorted.", Body: wsNets},
		{Name: "DeleteNet", Doc: "DeleteNet(name)\n\nRemoves a created net; returns whether there was one.", Body: wsDeleteNet},
		{Name: "SwitchWorkspace", Doc: "SwitchWorkspace(name, create_if_missing=None)\n\nMakes a workspace current, creating it when create_if_missing is true.", Body: wsSwitchWorkspace},
		{Name: "CurrentWorkspace", Doc: "CurrentWorkspace()\n\nReturns the current workspace's name.", Body: wsCurrentWorkspace},
		{Name: "Workspaces", Doc: "Workspaces()\n\nReturns the registered workspace names, sorted.", Body: wsWorkspaces},
		{Name: "ResetWorkspace", Doc: "ResetWorkspace(root_folder=None)\n\nEmpties the current workspace (None keeps its root folder). Returns True.", Body: wsResetWorkspace},
		{Name: "RootFolder", Doc: "RootFolder()\n\nReturns the current workspace's root folder.", Body: wsRootFolder},
		{Name: "CreateChildWorkspace", Doc: "CreateChildWorkspace(parent_name, child_name)\n\nRegisters a child of a workspace that sees the parent's blobs.", Body: wsCreateChild},
		{Name: "SaveNet", Doc: "SaveNet(name, net)\n\nSaves a net in the root folder's store under name (\"\": the net's own name).", Body: wsSaveNet},
		{Name: "LoadNet", Doc: "LoadNet(name)\n\nReturns the NetDef saved under name (create it with CreateNet to run it).", Body: wsLoadNet},
		{Name: "SavedNets", Doc: "SavedNets()\n\nReturns the names of the saved nets, sorted.", Body: wsSavedNets},
		{Name: "SaveCheckpoint", Doc: "SaveCheckpoint(id, blobs=None)\n\nSaves blobs (None: every local tensor blob) as checkpoint id, atomically.", Body: wsSaveCheckpoint},
		{Name: "LoadCheckpoint", Doc: "LoadCheckpoint(id)\n\nLoads checkpoint id into the workspace.", Body: wsLoadCheckpoint},
		{Name: "LatestCheckpoint", Doc: "LatestCheckpoint()\n\nReturns the highest saved checkpoint id, or None.", Body: wsLatestCheckpoint},
		{Name: "BenchmarkNet", Doc: "BenchmarkNet(name, warmup_runs, main_runs, run_individual)\n\nReturns [ms per run] plus, with run_individual, each operator's ms per run.", Body: wsBenchmarkNet},
		{Name: "NumCudaDevices", Doc: "NumCudaDevices()\n\nReturns the number of usable CUDA GPUs (0 without the cuda build).", Body: wsNumCuda},
		{Name: "NumGpuDevices", Doc: "NumGpuDevices()\n\nThe same as NumCudaDevices.", Body: wsNumCuda},
		{Name: "RegisteredOperators", Doc: "RegisteredOperators()\n\nReturns every registered operator key, sorted.", Body: wsRegisteredOperators},
		{Name: "GetNameScope", Doc: "GetNameScope()\n\nReturns the current name scope.", Body: core.CurrentNameScope},
	},
	Values: func() starlark.StringDict {
		return starlark.StringDict{"blobs": blobsView{}}
	},
})

// feedValue converts what FeedBlob accepts to what workspace.FeedBlob
// takes.
func feedValue(v starlark.Value) (any, error) {
	switch x := v.(type) {
	case *np.Array:
		return x.Tensor(), nil
	case starlark.String:
		return []byte(x), nil
	case starlark.Bytes:
		return []byte(x), nil
	case *caffe2pb2.Message:
		if p, ok := x.Proto().(*netdef.TensorProto); ok {
			return blob.TensorFromProto(p)
		}
	}
	return nil, fmt.Errorf("Unexpected type of argument - only numpy array or string are supported for feeding (got %s)", v.Type())
}

// fetchedValue converts what workspace.FetchValue returns.
func fetchedValue(v any) starlark.Value {
	switch x := v.(type) {
	case *blob.Tensor:
		return np.NewArray(x)
	case []byte:
		return starlark.Bytes(x)
	case string:
		return starlark.String(x)
	}
	return starlark.None
}

func nameArg(b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple, param string) (string, error) {
	var v starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, param, &v); err != nil {
		return "", err
	}
	name, err := convert.BlobName(v)
	if err != nil {
		return "", fmt.Errorf("%s: %v", b.Name(), err)
	}
	return name, nil
}

func wsFeedBlob(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var nameV, arr, dev starlark.Value = nil, nil, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &nameV, "arr", &arr, "device_option?", &dev); err != nil {
		return nil, err
	}
	name, err := convert.BlobName(nameV)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	val, err := feedValue(arr)
	if err != nil {
		return nil, err
	}
	var opts []workspace.FeedOption
	if dev != starlark.None {
		opt, err := protoarg.DeviceOption(dev)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		opts = append(opts, workspace.OnDevice(opt))
	}
	if err := workspace.FeedBlob(name, val, opts...); err != nil {
		return nil, err
	}
	return starlark.True, nil
}

func wsFetchBlob(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	name, err := nameArg(b, args, kwargs, "name")
	if err != nil {
		return nil, err
	}
	v, err := workspace.FetchValue(name)
	if err != nil {
		return nil, err
	}
	return fetchedValue(v), nil
}

func wsFetchBlobs(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "names", &v); err != nil {
		return nil, err
	}
	names, err := convert.BlobNames(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	vals, err := workspace.FetchValues(names)
	if err != nil {
		return nil, err
	}
	out := make([]starlark.Value, len(vals))
	for i, x := range vals {
		out[i] = fetchedValue(x)
	}
	return starlark.NewList(out), nil
}

func wsHasBlob(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	name, err := nameArg(b, args, kwargs, "name")
	if err != nil {
		return nil, err
	}
	return starlark.Bool(workspace.HasBlob(name)), nil
}

func wsBlobs(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	return convert.StringList(workspace.Blobs()), nil
}

func wsCreateBlob(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	name, err := nameArg(b, args, kwargs, "name")
	if err != nil {
		return nil, err
	}
	workspace.CreateBlob(name)
	return starlark.True, nil
}

func wsResetBlob(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	name, err := nameArg(b, args, kwargs, "name")
	if err != nil {
		return nil, err
	}
	if err := workspace.ResetBlob(name); err != nil {
		return nil, err
	}
	return starlark.None, nil
}

func wsRemoveBlob(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	name, err := nameArg(b, args, kwargs, "name")
	if err != nil {
		return nil, err
	}
	return starlark.Bool(workspace.RemoveBlob(name)), nil
}

func wsSerializeBlob(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	name, err := nameArg(b, args, kwargs, "name")
	if err != nil {
		return nil, err
	}
	data, err := workspace.SerializeBlob(name)
	if err != nil {
		return nil, err
	}
	return starlark.Bytes(data), nil
}

func wsDeserializeBlob(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var nameV, data starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &nameV, "serialized_blob", &data); err != nil {
		return nil, err
	}
	name, err := convert.BlobName(nameV)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	raw, ok := convert.BytesOf(data)
	if !ok {
		return nil, fmt.Errorf("%s: serialized_blob must be bytes, got %s", b.Name(), data.Type())
	}
	if err := workspace.DeserializeBlob(name, raw); err != nil {
		return nil, err
	}
	return starlark.None, nil
}

func wsBlobSize(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	name, err := nameArg(b, args, kwargs, "name")
	if err != nil {
		return nil, err
	}
	n, err := workspace.BlobSizeBytes(name)
	if err != nil {
		return nil, err
	}
	return starlark.MakeInt(n), nil
}

func wsCreateNet(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var netV, inputs starlark.Value = nil, starlark.None
	overwrite := false
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "net", &netV, "overwrite?", &overwrite, "input_blobs?", &inputs); err != nil {
		return nil, err
	}
	src, err := protoarg.NetArg(b.Name(), netV)
	if err != nil {
		return nil, err
	}
	if inputs != starlark.None {
		names, err := convert.BlobNames(inputs)
		if err != nil {
			return nil, fmt.Errorf("%s: input_blobs: %v", b.Name(), err)
		}
		for _, n := range names {
			workspace.CreateBlob(n)
		}
	}
	if err := workspace.CreateNet(src, overwrite); err != nil {
		return nil, err
	}
	return starlark.True, nil
}

func wsRunNet(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var nameV starlark.Value
	iters, allowFail := 1, false
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &nameV, "num_iter?", &iters, "allow_fail?", &allowFail); err != nil {
		return nil, err
	}
	var name string
	switch x := nameV.(type) {
	case *core.Net:
		name = x.Builder().Name()
	case starlark.String:
		name = string(x)
	default:
		return nil, fmt.Errorf("%s: want a net name or a Net, got %s (a NetDef must be created with CreateNet first)", b.Name(), nameV.Type())
	}
	if err := workspace.RunNetContext(binding.Context(thread), name, iters); err != nil {
		if allowFail {
			return starlark.False, nil
		}
		return nil, err
	}
	return starlark.True, nil
}

func wsRunNetOnce(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var netV starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "net", &netV); err != nil {
		return nil, err
	}
	src, err := protoarg.NetArg(b.Name(), netV)
	if err != nil {
		return nil, err
	}
	if err := workspace.RunNetOnce(src); err != nil {
		return nil, err
	}
	return starlark.True, nil
}

// operatorArg reads an OperatorDef message or its serialized bytes.
func operatorArg(v starlark.Value) (*netdef.OperatorDef, error) {
	if m, ok := v.(*caffe2pb2.Message); ok {
		if op, ok := m.Proto().(*netdef.OperatorDef); ok {
			return op, nil
		}
	}
	if raw, ok := v.(starlark.Bytes); ok {
		op := &netdef.OperatorDef{}
		if err := proto.Unmarshal([]byte(raw), op); err != nil {
			return nil, fmt.Errorf("cannot parse an OperatorDef: %v", err)
		}
		return op, nil
	}
	return nil, fmt.Errorf("want an OperatorDef, got %s", v.Type())
}

func wsRunOperatorOnce(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "operator", &v); err != nil {
		return nil, err
	}
	op, err := operatorArg(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	if err := workspace.RunOperatorOnce(op); err != nil {
		return nil, err
	}
	return starlark.True, nil
}

func wsRunOperatorsOnce(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Iterable
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "operators", &v); err != nil {
		return nil, err
	}
	var ops []*netdef.OperatorDef
	it := v.Iterate()
	defer it.Done()
	var x starlark.Value
	for it.Next(&x) {
		op, err := operatorArg(x)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		ops = append(ops, op)
	}
	if err := workspace.RunOperatorsOnce(ops); err != nil {
		return nil, err
	}
	return starlark.True, nil
}

func planSourceArg(name string, v starlark.Value) (netdef.PlanSource, error) {
	switch x := v.(type) {
	case *core.Plan:
		return x.Builder(), nil
	case *core.Step:
		return x.Builder(), nil
	case *caffe2pb2.Message:
		switch p := x.Proto().(type) {
		case *netdef.PlanDef:
			return p, nil
		case *netdef.ExecutionStep:
			return p, nil
		}
	}
	return nil, fmt.Errorf("%s: want a Plan or an ExecutionStep, got %s", name, v.Type())
}

func wsRunPlan(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "plan_or_step", &v); err != nil {
		return nil, err
	}
	src, err := planSourceArg(b.Name(), v)
	if err != nil {
		return nil, err
	}
	if err := workspace.RunPlanContext(binding.Context(thread), src); err != nil {
		return nil, err
	}
	return starlark.True, nil
}

func wsRunPlanInBackground(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "plan_or_step", &v); err != nil {
		return nil, err
	}
	src, err := planSourceArg(b.Name(), v)
	if err != nil {
		return nil, err
	}
	return &planHandle{h: workspace.RunPlanInBackground(src)}, nil
}

func wsNets(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	return convert.StringList(workspace.Nets()), nil
}

func wsDeleteNet(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &v); err != nil {
		return nil, err
	}
	name := ""
	if n, ok := v.(*core.Net); ok {
		name = n.Builder().Name()
	} else if s, ok := starlark.AsString(v); ok {
		name = s
	} else {
		return nil, fmt.Errorf("%s: want a net name or a Net, got %s", b.Name(), v.Type())
	}
	return starlark.Bool(workspace.DeleteNet(name)), nil
}

func wsSwitchWorkspace(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	var create starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name, "create_if_missing?", &create); err != nil {
		return nil, err
	}
	if err := workspace.SwitchWorkspace(name, bool(create.Truth())); err != nil {
		return nil, err
	}
	return starlark.None, nil
}

func wsCurrentWorkspace(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	return starlark.String(workspace.CurrentWorkspace()), nil
}

func wsWorkspaces(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	return convert.StringList(workspace.Workspaces()), nil
}

func wsResetWorkspace(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var root starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "root_folder?", &root); err != nil {
		return nil, err
	}
	var folders []string
	if root != starlark.None {
		s, ok := starlark.AsString(root)
		if !ok {
			return nil, fmt.Errorf("%s: root_folder must be a string, got %s", b.Name(), root.Type())
		}
		folders = append(folders, s)
	}
	if err := workspace.ResetWorkspace(folders...); err != nil {
		return nil, err
	}
	return starlark.True, nil
}

func wsRootFolder(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	return starlark.String(workspace.RootFolder()), nil
}

func wsCreateChild(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var parent, child string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "parent_name", &parent, "child_name", &child); err != nil {
		return nil, err
	}
	if err := workspace.CreateChildWorkspace(parent, child); err != nil {
		return nil, err
	}
	return starlark.None, nil
}

func wsSaveNet(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	var netV starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name, "net", &netV); err != nil {
		return nil, err
	}
	src, err := protoarg.NetArg(b.Name(), netV)
	if err != nil {
		return nil, err
	}
	if err := workspace.SaveNet(name, src); err != nil {
		return nil, err
	}
	return starlark.None, nil
}

func wsLoadNet(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name); err != nil {
		return nil, err
	}
	def, err := workspace.LoadNet(name)
	if err != nil {
		return nil, err
	}
	return caffe2pb2.NewMessage(def), nil
}

func wsSavedNets(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	names, err := workspace.SavedNets()
	if err != nil {
		return nil, err
	}
	return convert.StringList(names), nil
}

func wsSaveCheckpoint(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var id int64
	var blobsV starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "id", &id, "blobs?", &blobsV); err != nil {
		return nil, err
	}
	var names []string
	if blobsV != starlark.None {
		var err error
		if names, err = convert.BlobNames(blobsV); err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
	}
	if err := workspace.SaveCheckpoint(id, names); err != nil {
		return nil, err
	}
	return starlark.None, nil
}

func wsLoadCheckpoint(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var id int64
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "id", &id); err != nil {
		return nil, err
	}
	if err := workspace.LoadCheckpoint(id); err != nil {
		return nil, err
	}
	return starlark.None, nil
}

func wsLatestCheckpoint(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	id, ok, err := workspace.LatestCheckpoint()
	if err != nil {
		return nil, err
	}
	if !ok {
		return starlark.None, nil
	}
	return starlark.MakeInt64(id), nil
}

func wsBenchmarkNet(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	var warmup, runs int
	individual := false
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name, "warmup_runs", &warmup, "main_runs", &runs, "run_individual", &individual); err != nil {
		return nil, err
	}
	times, err := workspace.BenchmarkNet(name, warmup, runs, individual)
	if err != nil {
		return nil, err
	}
	out := make([]starlark.Value, len(times))
	for i, t := range times {
		out[i] = starlark.Float(t)
	}
	return starlark.NewList(out), nil
}

func wsNumCuda(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	return starlark.MakeInt(workspace.NumCudaDevices()), nil
}

func wsRegisteredOperators(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	return convert.StringList(workspace.RegisteredOperators()), nil
}
