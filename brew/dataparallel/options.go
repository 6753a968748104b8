package dataparallel

import (
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/workspace"
)

// Options configure Parallelize. They are Caffe2's keyword arguments of
// data_parallel_model.Parallelize; zero values take the defaults given.
// A builder fails when it returns an error or leaves one recorded in the
// model (brew.Model.Err), so a builder made of brew helpers can simply end
// with return m.Err().
type Options struct {
	// InputBuilder adds the operators that produce one device's input
	// blobs (Caffe2's input_builder_fun). It runs once per device inside
	// that device's scope. Create shared readers outside it (in the init
	// net, before Parallelize) so that the devices share them. May be nil.
	InputBuilder func(m *brew.Model) error
	// ForwardBuilder adds one device's forward pass and returns its losses
	// (Caffe2's forward_pass_builder_fun). It runs once per device inside
	// that device's scope and must scale each loss by lossScale, which is
	// 1/(len(Devices) × shards), so that the summed gradients are those of
	// the mean over the whole batch of every process. Required.
	ForwardBuilder func(m *brew.Model, lossScale float32) (losses []string, err error)
	// ParamUpdateBuilder adds one device's parameter updates (Caffe2's
	// param_update_builder_fun). It runs once per device inside that
	// device's scope, after the gradients are all-reduced; m.GetParams()
	// there returns that device's parameters.
	ParamUpdateBuilder func(m *brew.Model) error
	// OptimizerBuilder adds the updates of every parameter at once
	// (Caffe2's optimizer_builder_fun, typically brew.BuildSGD). It runs
	// once, outside the device scopes. At most one of ParamUpdateBuilder
	// and OptimizerBuilder may be set; with neither, the model is
	// forward-only (a test or evaluation model): no gradients, no
	// all-reduce, no initial sync.
	OptimizerBuilder func(m *brew.Model) error
	// PostSyncBuilder runs once per device inside its scope after the
	// initial parameter sync was added to the init net (Caffe2's
	// post_sync_builder_fun). May be nil.
	PostSyncBuilder func(m *brew.Model) error

	// Devices are the device ids; the first is the master, from which
	// parameters are broadcast and whose blobs are checkpointed. Required:
	// an empty list is an error.
	Devices []int
	// DeviceType is netdef.CPU (the zero value: replicas cpu_<id>/ on
	// logical CPU devices, Caffe2's cpu_device=True) or netdef.CUDA
	// (replicas gpu_<id>/; running such nets needs the CUDA backend).
	DeviceType netdef.DeviceType

	// NetType is the train net's executor; default "dag", which runs the
	// replicas concurrently.
	NetType string
	// NumThreadsPerDevice sets the net's num_workers to
	// len(Devices)·NumThreadsPerDevice; default 4.
	NumThreadsPerDevice int
	// KernelThreadsPerDevice is the kernel thread budget of each
	// operator of the train net (the net argument
	// workspace.KernelThreadsArg): the most goroutines one GEMM,
	// convolution or normalization call may split its work into. Default
	// (0): the net's executor gives each of the len(Devices) CPU replicas
	// GOMAXPROCS/len(Devices) (at least 1), so that replicas running at
	// the same time share the cores.
	KernelThreadsPerDevice int
	// NoComputedParamBroadcast turns off the per-iteration copy of the
	// computed parameters (batch-norm running statistics) from the master
	// to the other devices (Caffe2's broadcast_computed_params=False).
	NoComputedParamBroadcast bool
	// SharedModel keeps one set of parameters, the master's, which every
	// replica reads (CPU only): the other devices' parameter copies are
	// never created, their gradients are summed into the master's and only
	// the master's parameters are updated.
	SharedModel bool
	// CombineSpatialBN computes the batch statistics of every training
	// SpatialBN (and the scale and bias gradients) over all devices'
	// examples together, as one device with the whole batch would (CPU
	// only, training models only).
	CombineSpatialBN bool
	// AllreduceEngine is the engine of the gradient Allreduce operators:
	// "SUM_TREE" (the default: Caffe2's tree of sums into the master, then
	// copies) or "RING" (bandwidth-optimal ring); see package
	// operators/comm.
	AllreduceEngine string

	// Rendezvous, when set, trains across processes with Gloo (Caffe2's
	// rendezvous argument); nil trains in this process only.
	Rendezvous *Rendezvous

	// Workspace is where RunInitNet, RunNet, feeding and the checkpoint
	// helpers act; nil means the current workspace at each call.
	Workspace *workspace.Workspace
}

// isGPU reports whether the options ask for CUDA replicas.
func (o *Options) isGPU() bool { return o.DeviceType == netdef.CUDA }
