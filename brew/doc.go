// Package brew builds models the way Caffe2's brew and ModelHelper do: a
// Model holds a train net, the init net that creates its parameters and the
// record of those parameters (with Caffe2's names, shapes, tags and default
// initializers); helper functions add layers; optimizers add the update
// operators; training helpers run the loop.
//
// # Helpers
//
// Each Caffe2 helper is a Go function taking the model, the blob names,
// the required sizes and then options, and returning the full name of its
// output. A model records the first error of the calls that build it, as
// bufio.Scanner does: once a helper fails, the later ones add nothing and
// return "", and Model.Err reports the failure, naming the helper, its
// output and the blob or size at fault. So a model is built in a row of
// calls and checked once:
//
//	m := brew.NewModel("lenet")
//	m.AddExternalInputs("data", "label")
//	conv1 := brew.Conv(m, "data", "conv1", 1, 20, 5)
//	pool1 := brew.MaxPool(m, conv1, "pool1", brew.Kernel(2), brew.Stride(2))
//	fc2 := brew.Relu(m, brew.FC(m, pool1, "fc2", 20*12*12, 500), "fc2")
//	_, loss := brew.SoftmaxWithLoss(m, brew.FC(m, fc2, "pred", 500, 10), "label", "softmax", "loss")
//	if err := m.Err(); err != nil { … }
//
// Model.Op, Model.CreateParam, Model.AddExternalInputs and ResolveKwargs
// record their errors the same way, so helpers of one's own built on them
// behave like this package's. The steps that consume a model, AddGradientOperators
// and the optimizer builders (Build, BuildSGD, …, AddWeightDecay,
// Optimizer.Apply), return Err before doing anything, so checking their
// error also checks the building before them. Interactive front-ends that
// report each call's error and go on (the Starlark bindings of package
// script) take it with Model.TakeErr, which clears it.
//
// The losses are helpers too: SoftmaxWithLoss, or LabelCrossEntropy and
// AveragedLoss after a Softmax, as Caffe2 users call model.SoftmaxWithLoss
// or model.LabelCrossEntropy and model.AveragedLoss.
//
// Options are Caffe2's keyword arguments. Those a helper reads itself
// (WeightInit, BiasInit, Group, NoBias, Order, IsTest, …) change what it
// builds; the others become arguments of the operator it emits, after the
// arguments the helper always sets (a convolution gets kernel, then order,
// then the rest). Arg passes any argument; Stride, Pad, Axis and the
// other shortcuts are typed spellings of common ones. An argument named
// "engine" (Engine) sets the operator's engine.
//
// Parameters are named after the output (out+"_w", out+"_b", …), created
// in the init net with Caffe2's default initializers, and recorded with
// their shapes and tags; helpers that find a parameter already recorded
// with the same shape reuse it, which is how models share weights.
//
// # Names
//
// Blob names resolve in the current name scope of package devicescope, as
// Caffe2's string names do, and operators get its device scope. A name
// that already starts with the current name scope is taken as it is, so
// the full names helpers return can be passed on (Caffe2 passes
// BlobReferences for that). An input is looked up in the scope first and
// then, if the model does not know that blob, as given, which reaches blobs
// outside the scope.
//
// Unlike Caffe2, which silently turns any unknown input into an external
// input of the net, helpers accept only inputs the model knows: blobs its
// net or init net produces, parameters, and blobs declared with
// Model.AddExternalInputs. Declaring the fed blobs (data, labels) catches a
// misspelt name when the model is built instead of when the net runs.
// Model.Op, the counterpart of Caffe2's model.<Op>(…), keeps Caffe2's
// behaviour.
//
// # Arg scopes
//
// A helper call sees, from lowest to highest precedence: the model's arg
// scope (ModelOptions.ArgScope on top of the default {order: "NCHW"}), the
// options of every enclosing WithArgScope naming the helper (outer to
// inner), and its own options. Helpers of one's own can take part through
// Register and ResolveKwargs.
//
// # Differences from Caffe2
//
//   - There is no cuDNN, so the default model arg scope is {order: "NCHW"}
//     only (Caffe2 adds use_cudnn=True and cudnn_exhaustive_search=False,
//     which give convolutions and activations engine "CUDNN" and FC extra
//     arguments). Helpers drop use_cudnn, cudnn_exhaustive_search and
//     ws_nbytes_limit.
//   - Helpers check their inputs as described under Names.
//   - Accuracy passes its options (top_k) to the operator; Caffe2's CPU
//     path drops them. There is no GPU top_k > 1 copy to the host.
//   - PRelu passes its options (order) to the operator; Caffe2 drops them.
//   - ConvTranspose honours NoBias; Kernel and KernelHW options replace the
//     kernel parameter of Conv and ConvTranspose.
//   - A model built with ModelOptions.ParamModel shares the weight and bias
//     lists too (Caffe2 shares the parameter list but starts new weight and
//     bias lists).
//   - Orders Caffe2 leaves to Python sets are fixed: ExtractPredictorNet
//     lists inputs and outputs in the given order, then in operator order.
//   - Sigmoid, LeakyRelu, SoftmaxWithLoss, LabelCrossEntropy and
//     AveragedLoss are helpers here; in Caffe2 they are plain operators
//     (model.SoftmaxWithLoss, …).
//   - Building calls report errors through Model.Err instead of raising
//     an exception at the call.
package brew
