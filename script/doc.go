// Package script is caffe2go's scripting front end: Starlark (a small,
// deterministic dialect of Python, go.starlark.net) with Starlark modules
// that mirror Caffe2's Python API, so that a Caffe2 REPL session or notebook
// cell ports nearly line for line:
//
//	net = core.Net("my_net")
//	net.FC(["data", "w", "b"], "fc")
//	workspace.FeedBlob("data", np.random.rand(64, 16).astype(np.float32))
//	workspace.RunNetOnce(net)
//	print(workspace.FetchBlob("fc").shape)
//
// # Modules
//
// Each module is a package of its own under script/ exporting Module (as
// go.starlark.net/lib/math exports math.Module) and the value types it
// owns:
//
//   - workspace (script/workspace): the package-level API of package
//     workspace (FeedBlob, FetchBlob, CreateNet, RunNet, RunPlan, SaveNet,
//     LoadNet, …) and the workspace.blobs view.
//   - core (script/core): DeviceOption, the CPU and CUDA device types, name
//     and device scopes, Net (a net builder whose attributes are the
//     registered operator types), BlobReference, CreateOperator,
//     ExecutionStep and Plan.
//   - np (script/np): NumPy's names for making and inspecting arrays.
//     Arrays (ndarray) are Starlark values wrapping *blob.Tensor, with
//     shape, dtype, indexing, arithmetic and NumPy's printing.
//   - utils (script/utils): MakeArgument, tensor-proto conversions,
//     make_mnist_db (Caffe2's tool that turns the MNIST files into a DB) and
//     TempDir (a fresh directory for what a script writes).
//   - caffe2_pb2 (script/caffe2pb2): constructors of caffe2.proto messages.
//     Messages read and write their fields as attributes and print in the
//     text format.
//   - model_helper, brew, optimizer (script/modelhelper, script/brew,
//     script/optimizer): package brew's models, helpers and optimizers with
//     Caffe2's names and keywords: model_helper.ModelHelper(name = "m"),
//     brew.fc(model, "data", "fc", dim_in = 784, dim_out = 10),
//     optimizer.build_sgd(model, 0.1); brew.arg_scope and brew.db_input;
//     build_adam, build_adagrad, build_rms_prop and add_weight_decay.
//   - data_parallel_model (script/dataparallelmodel): package
//     brew/dataparallel with Caffe2's names: Parallelize(model,
//     input_builder_fun, forward_pass_builder_fun, …, devices = [0, 1],
//     cpu_device = True) taking Starlark functions, then RunInitNet(model),
//     RunNet(model, n) and the checkpoint helpers. Only CPU devices exist.
//
// What the modules share is under script/internal: binding (declaring
// functions, modules and method tables with their documentation, the
// per-interpreter state), convert (scalars, blob names), ndarray (NumPy's
// semantics on tensors), protoarg (operator arguments, nets and device
// options) and brewopt (brew's keywords). A new module is a new package and
// one more entry in the interpreter's module list (script.go).
//
// Python's `with core.DeviceScope(opt):` blocks become calls that take the
// block as a callable: with_device(opt, lambda: workspace.FeedBlob(...)).
// Keyword arguments and their defaults follow Caffe2's. A failing call stops
// the script with a Starlark error that carries the Go error's message and
// the script position (FormatError renders the traceback).
//
// Like Caffe2's modules, these act on the process-wide current workspace
// and scopes.
package script
