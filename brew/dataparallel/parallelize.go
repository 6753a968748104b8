package dataparallel

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/comm"
	"github.com/caffe2go/caffe2go/workspace"
)

// DefaultNetType is the executor Parallelize gives the train net unless
// Options.NetType says otherwise.
const DefaultNetType = "dag"

// DefaultThreadsPerDevice is Options.NumThreadsPerDevice's default.
const DefaultThreadsPerDevice = 4

// Parallel is a model parallelized over devices: the result of
// Parallelize, Caffe2's ModelHelper after data_parallel_model.Parallelize
// (its _devices, _device_grouped_blobs and recorded nets). Its methods are
// the rest of Caffe2's data_parallel_model API.
//
// A Parallel is not safe for concurrent use; the nets it runs use the
// devices concurrently themselves.
type Parallel struct {
	model   *brew.Model
	opts    Options
	rdv     *Rendezvous // completed Options.Rendezvous; nil without
	devices []int
	prefix  string // "cpu" or "gpu"

	// groups maps a name without its device scope ("fc_w", "fc_w_grad")
	// to its blob on each device.
	groups map[string]map[int]string
	// paramNames, computedNames and gradNames are the stripped names of
	// the data-parallel parameters, computed parameters and gradients, in
	// creation order.
	paramNames, computedNames, gradNames []string
	losses                               map[int][]string
	// allParams are the data-parallel trainable parameters (all devices)
	// before a shared model pruned them.
	allParams map[string]bool

	initNets, nets []*netdef.Net
	checkpointNet  *netdef.Net
	warnings       []string

	// staging holds, per device blob, the host tensor Scatter gathers
	// rows into before copying them to a device with memory of its own.
	staging map[string]*blob.Tensor
}

// Parallelize builds the data-parallel version of m, as Caffe2's
// data_parallel_model.Parallelize does. For every device d it calls the
// input and forward builders under DeviceScope(d) and NameScope
// "<cpu|gpu>_<d>", so each replica's blobs and parameters are prefixed
// "cpu_<d>/" (or "gpu_<d>/") and its operators run on device d. With an
// update builder it then
//
//   - adds the gradient operators, seeding each loss with a ConstantFill
//     of 1 into "<loss>_grad" on its device;
//   - with CombineSpatialBN, interleaves the replicas' operators and makes
//     every training SpatialBN use statistics over all devices;
//   - copies the computed parameters from the master to the other devices
//     after the backward pass (unless NoComputedParamBroadcast);
//   - all-reduces the gradients (summing them, one Allreduce operator per
//     parameter, in reverse creation order, with the chosen engine), or
//     with SharedModel sums them into the master's;
//   - adds the parameter updates (per device, or one optimizer);
//   - broadcasts every blob the init net creates on the devices (the
//     parameters, the optimizer's momentum, …) from the master in the init
//     net, so replicas start identical.
//
// The train net gets the NetType executor (default dag),
// len(Devices)·NumThreadsPerDevice workers and, with
// KernelThreadsPerDevice, that kernel thread budget.
//
// Parallelize refuses to run inside a non-CPU device scope and needs a
// non-empty device list. A model with an error is refused (Parallelize
// returns its Err), and a builder that records an error in the model
// fails as if it had returned it. Errors name what failed; on error m may
// be left partially built.
func Parallelize(m *brew.Model, o Options) (*Parallel, error) {
	if cur := devicescope.Current().Device(); cur != nil && cur.Type() != netdef.CPU {
		return nil, fmt.Errorf("dataparallel: Parallelize must not run inside a %s device scope (%s): it sets each replica's device itself",
			cur.Type(), devicescope.KeyOf(cur))
	}
	if m == nil {
		return nil, errors.New("dataparallel: Parallelize: nil model")
	}
	if err := m.Err(); err != nil {
		return nil, err
	}
	p, err := newParallel(m, o)
	if err != nil {
		return nil, err
	}
	if err := p.build(); err != nil {
		return nil, fmt.Errorf("dataparallel: model %q: %w", m.Name, err)
	}
	return p, nil
}

func newParallel(m *brew.Model, o Options) (*Parallel, error) {
	if o.ForwardBuilder == nil {
		return nil, errors.New("dataparallel: Parallelize needs Options.ForwardBuilder")
	}
	if o.ParamUpdateBuilder != nil && o.OptimizerBuilder != nil {
		return nil, errors.New("dataparallel: set at most one of Options.ParamUpdateBuilder and Options.OptimizerBuilder")
	}
	if len(o.Devices) == 0 {
		return nil, errors.New("dataparallel: Options.Devices is empty: list the device ids, the master first (for one CPU device: []int{0})")
	}
	p := &Parallel{model: m, opts: o, devices: slices.Clone(o.Devices), groups: map[string]map[int]string{},
		losses: map[int][]string{}, allParams: map[string]bool{}}
	seen := map[int]bool{}
	for _, d := range p.devices {
		if d < 0 {
			return nil, fmt.Errorf("dataparallel: invalid device id %d", d)
		}
		if seen[d] {
			return nil, fmt.Errorf("dataparallel: device %d is listed twice in %v", d, p.devices)
		}
		seen[d] = true
	}
	switch o.DeviceType {
	case netdef.CPU:
		p.prefix = "cpu"
		if o.AllreduceEngine != "" && !operators.IsOperatorWithEngine("Allreduce", o.AllreduceEngine) {
			return nil, fmt.Errorf("dataparallel: no Allreduce engine %q is registered (CPU engines: %s, %s)", o.AllreduceEngine, comm.SumTree, comm.Ring)
		}
	case netdef.CUDA:
		p.prefix = "gpu"
		if o.SharedModel {
			return nil, errors.New("dataparallel: SharedModel is only supported on CPU devices")
		}
		if o.CombineSpatialBN {
			return nil, errors.New("dataparallel: CombineSpatialBN is only supported on CPU devices")
		}
		if n := workspace.NumCudaDevices(); slices.Max(p.devices) >= n {
			p.warnings = append(p.warnings, fmt.Sprintf("device ids %v: this machine has %d CUDA devices", p.devices, n))
		}
	default:
		return nil, fmt.Errorf("dataparallel: device type %s is not supported (use netdef.CPU or netdef.CUDA)", o.DeviceType)
	}
	if o.CombineSpatialBN && !p.hasUpdates() {
		return nil, errors.New("dataparallel: CombineSpatialBN needs a training model (an update builder)")
	}
	if p.opts.NetType == "" {
		p.opts.NetType = DefaultNetType
	}
	if p.opts.NumThreadsPerDevice <= 0 {
		p.opts.NumThreadsPerDevice = DefaultThreadsPerDevice
	}
	if p.opts.AllreduceEngine == "" {
		p.opts.AllreduceEngine = comm.SumTree
	}
	if err := p.checkRendezvous(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Parallel) hasUpdates() bool {
	return p.opts.ParamUpdateBuilder != nil || p.opts.OptimizerBuilder != nil
}

// build runs Caffe2's Parallelize steps after the argument checks.
func (p *Parallel) build() error {
	m := p.model
	net := m.Net.Proto()
	net.Type = &p.opts.NetType
	workers := int32(len(p.devices) * p.opts.NumThreadsPerDevice)
	net.NumWorkers = &workers
	if p.opts.KernelThreadsPerDevice > 0 {
		net.Arg = slices.DeleteFunc(net.Arg, func(a *netdef.Argument) bool { return a.GetName() == workspace.KernelThreadsArg })
		net.Arg = append(net.Arg, netdef.ArgInt(workspace.KernelThreadsArg, int64(p.opts.KernelThreadsPerDevice)))
	}

	// Parameters that exist already are not data-parallel.
	nonDataParams := len(m.ParamsIn(""))
	nonDataComputed := len(m.ComputedParamsIn(""))
	if !p.hasUpdates() && m.InitParams {
		p.warnings = append(p.warnings, "no update builder and the model initializes its parameters: "+
			"a forward-only model usually shares a trained model's parameters (InitParams false)")
	}

	lossScale := float32(1) / float32(len(p.devices)*p.opts.numShards())
	for _, d := range p.devices {
		var losses []string
		var err error
		p.inDeviceScope(d, func() {
			if p.opts.InputBuilder != nil {
				if err = built(m, p.opts.InputBuilder(m)); err != nil {
					err = fmt.Errorf("input builder on %s: %w", p.deviceName(d), err)
					return
				}
			}
			losses, err = p.opts.ForwardBuilder(m, lossScale)
			if err = built(m, err); err != nil {
				err = fmt.Errorf("forward builder on %s: %w", p.deviceName(d), err)
			}
		})
		if err != nil {
			return err
		}
		if p.hasUpdates() && len(losses) == 0 {
			return fmt.Errorf("forward builder on %s returned no loss", p.deviceName(d))
		}
		p.losses[d] = losses
	}
	if dup := m.Validate(); len(dup) > 0 {
		return fmt.Errorf("duplicate params: %v", dup)
	}
	params := m.ParamsIn("")
	var err error
	if p.paramNames, err = p.group(params[nonDataParams:]); err != nil {
		return err
	}
	if p.computedNames, err = p.group(m.ComputedParamsIn("")[nonDataComputed:]); err != nil {
		return err
	}
	for _, name := range params[nonDataParams:] {
		p.allParams[name] = true
	}
	p.initNets = []*netdef.Net{m.InitNet}
	p.nets = []*netdef.Net{m.Net}
	if !p.hasUpdates() {
		return nil
	}

	if err := p.addGradientOperators(); err != nil {
		return err
	}
	if p.opts.CombineSpatialBN {
		if err := p.interleaveOps(); err != nil {
			return err
		}
		if err := p.combineSpatialBN(); err != nil {
			return err
		}
	}
	var grads []string
	toGrad := m.ParamToGrad()
	for _, param := range params[nonDataParams:] {
		if g, ok := toGrad[param]; ok {
			grads = append(grads, g)
		}
	}
	if p.gradNames, err = p.group(grads); err != nil {
		return err
	}

	if !p.opts.NoComputedParamBroadcast && len(p.devices) > 1 {
		for _, name := range p.computedNames {
			if err := p.broadcast(m.Net, name); err != nil {
				return err
			}
		}
	}
	if err := p.allReduceGradients(); err != nil {
		return err
	}
	if p.opts.SharedModel {
		master := p.masterPrefix()
		m.KeepParams(func(name string) bool { return strings.HasPrefix(name, master) || !p.allParams[name] })
	}

	if p.opts.ParamUpdateBuilder != nil {
		for _, d := range p.devices {
			p.inDeviceScope(d, func() { err = built(m, p.opts.ParamUpdateBuilder(m)) })
			if err != nil {
				return fmt.Errorf("param update builder on %s: %w", p.deviceName(d), err)
			}
		}
	} else if err := built(m, p.opts.OptimizerBuilder(m)); err != nil {
		return fmt.Errorf("optimizer builder: %w", err)
	}

	syncNames, err := p.blobsToSync()
	if err != nil {
		return err
	}
	if p.opts.isGPU() {
		if err := p.checkGPUOps(); err != nil {
			return err
		}
	}
	m.Net.Proto().Arg = append(m.Net.Proto().Arg, netdef.ArgInt("first_iter_only_one_worker", 1))
	if p.multiHost() {
		if err := p.addMultiHostInit(); err != nil {
			return err
		}
	}
	for _, name := range syncNames {
		if err := p.broadcast(m.InitNet, name); err != nil {
			return err
		}
	}
	if p.opts.PostSyncBuilder != nil {
		for _, d := range p.devices {
			p.inDeviceScope(d, func() { err = built(m, p.opts.PostSyncBuilder(m)) })
			if err != nil {
				return fmt.Errorf("post-sync builder on %s: %w", p.deviceName(d), err)
			}
		}
	}
	if p.opts.SharedModel {
		p.remapSharedParams()
	}
	return nil
}

// built returns the error a builder returned, else the error it recorded
// in the model.
func built(m *brew.Model, err error) error {
	if err != nil {
		return err
	}
	return m.Err()
}

// inDeviceScope runs fn with device d's device scope and name scope
// "<prefix>_<d>" (replacing the caller's name scope).
func (p *Parallel) inDeviceScope(d int, fn func()) {
	s := devicescope.Current().WithNameReset(p.deviceName(d)).WithDevice(p.DeviceOption(d))
	devicescope.With(s, fn)
}

// deviceName returns "cpu_<d>" or "gpu_<d>".
func (p *Parallel) deviceName(d int) string { return p.prefix + "_" + strconv.Itoa(d) }

func (p *Parallel) masterPrefix() string { return p.deviceName(p.devices[0]) + "/" }

// split parses "<prefix>_<id>/<rest>" into the device id and rest.
func (p *Parallel) split(blob string) (device int, rest string, ok bool) {
	scope, rest, found := strings.Cut(blob, "/")
	if !found {
		return 0, "", false
	}
	id, found := strings.CutPrefix(scope, p.prefix+"_")
	if !found {
		return 0, "", false
	}
	d, err := strconv.Atoi(id)
	if err != nil || d < 0 || strconv.Itoa(d) != id {
		return 0, "", false
	}
	return d, rest, true
}

// group records blobs (each "<prefix>_<d>/<name>") in p.groups and returns
// their distinct stripped names in first-seen order (Caffe2's
// _GroupByDevice).
func (p *Parallel) group(blobs []string) ([]string, error) {
	var names []string
	seen := map[string]bool{}
	for _, b := range blobs {
		d, name, ok := p.split(b)
		if !ok || !slices.Contains(p.devices, d) {
			return nil, fmt.Errorf("blob %q should be in the name scope of one of the devices %v (%s_<id>/)", b, p.devices, p.prefix)
		}
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
		g := p.groups[name]
		if g == nil {
			g = map[int]string{}
			p.groups[name] = g
		}
		g[d] = b
	}
	return names, nil
}

// addGradientOperators seeds each loss with a gradient of ones on its
// device, then differentiates all replicas at once (Caffe2's
// _AddGradientOperators).
func (p *Parallel) addGradientOperators() error {
	var ys []string
	given := map[string]operators.Gradient{}
	for _, d := range p.devices {
		for _, loss := range p.losses[d] {
			grad := loss + "_grad"
			op := netdef.NewOperator("ConstantFill", []string{loss}, []string{grad}, netdef.ArgFloat("value", 1))
			op.DeviceOption = p.DeviceOption(d)
			p.model.Net.AddOp(op)
			ys = append(ys, loss)
			given[loss] = operators.Dense(grad)
		}
	}
	if _, err := p.model.AddGradientOperatorsWith(ys, given); err != nil {
		return err
	}
	return nil
}

// blobsToSync returns the stripped names of the blobs the init net
// broadcasts from the master, sorted, and groups their copies (Caffe2's
// _ComputeBlobsToSync): every blob the init net creates in a device's name
// scope, or with a shared model only the computed parameters.
func (p *Parallel) blobsToSync() ([]string, error) {
	if p.opts.SharedModel {
		return slices.Sorted(slices.Values(p.computedNames)), nil
	}
	var outs []string
	for _, op := range p.model.InitNet.Proto().GetOp() {
		for _, o := range op.GetOutput() {
			if d, _, ok := p.split(o); ok && slices.Contains(p.devices, d) {
				outs = append(outs, o)
			}
		}
	}
	names, err := p.group(outs)
	if err != nil {
		return nil, err
	}
	if p.model.InitParams {
		var missing []string
		for _, name := range p.paramNames {
			if !slices.Contains(names, name) {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("some params are not instantiated in the param init net: %v", missing)
		}
	}
	slices.Sort(names)
	return names, nil
}

// checkGPUOps checks that every CUDA operator touches only its own GPU's
// data-parallel blobs (Caffe2's _AnalyzeOperators). Collectives and
// copies are exempt.
func (p *Parallel) checkGPUOps() error {
	for i, op := range p.model.Net.Proto().GetOp() {
		typ := op.GetType()
		if strings.Contains(typ, "NCCL") || strings.Contains(typ, "Copy") || strings.Contains(typ, "Concat") ||
			typ == "Allreduce" || (typ == "Sum" && op.GetName() == "dpm") {
			continue
		}
		dev := op.GetDeviceOption()
		if dev.Type() != netdef.CUDA {
			continue
		}
		want := p.deviceName(int(dev.GetDeviceId())) + "/"
		for _, b := range slices.Concat(op.GetInput(), op.GetOutput()) {
			if strings.HasPrefix(b, p.prefix+"_") && !strings.HasPrefix(b, want) {
				return fmt.Errorf("blob %q of operator %d (%s) should have the name scope %s", b, i, typ, want)
			}
		}
	}
	return nil
}

// remapSharedParams removes the operators that create the non-master
// copies of the parameters and makes every reader use the master's
// (Caffe2's _RemapParameterBlobsForSharedModel).
func (p *Parallel) remapSharedParams() {
	master := p.masterPrefix()
	nonMaster := func(b string) bool { return p.allParams[b] && !strings.HasPrefix(b, master) }
	for _, net := range []*netdef.Net{p.model.InitNet, p.model.Net} {
		def := net.Proto()
		def.Op = slices.DeleteFunc(def.Op, func(op *netdef.OperatorDef) bool {
			return slices.ContainsFunc(op.GetOutput(), nonMaster)
		})
		for _, op := range def.Op {
			for i, in := range op.Input {
				if nonMaster(in) {
					_, rest, _ := p.split(in)
					op.Input[i] = master + rest
				}
			}
		}
		var ext []string
		for _, in := range def.ExternalInput {
			if nonMaster(in) {
				_, rest, _ := p.split(in)
				in = master + rest
			}
			if !slices.Contains(ext, in) {
				ext = append(ext, in)
			}
		}
		def.ExternalInput = ext
	}
}
