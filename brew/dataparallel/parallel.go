package dataparallel

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/workspace"
)

// CheckpointSyncNetName is the name of the net FinalizeAfterCheckpoint
// builds (made process-unique, like every net name).
const CheckpointSyncNetName = "checkpoint_sync_net"

// Model returns the parallelized model.
func (p *Parallel) Model() *brew.Model { return p.model }

// Devices returns the device ids, the master first (Caffe2's GetDevices).
func (p *Parallel) Devices() []int { return slices.Clone(p.devices) }

// DeviceOption returns the device option of device id d in the model's
// device type.
func (p *Parallel) DeviceOption(d int) *netdef.DeviceOption {
	return netdef.NewDeviceOption(p.opts.DeviceType, int32(d))
}

// DeviceBlob returns the name blob has on device d: "cpu_<d>/<blob>" or
// "gpu_<d>/<blob>".
func (p *Parallel) DeviceBlob(d int, blob string) string { return p.deviceName(d) + "/" + blob }

// Blobs returns the copies of a data-parallel blob (a parameter, computed
// parameter, gradient, synced blob) by device id, given its name without
// the device scope ("fc_w"); nil if there is no such group.
func (p *Parallel) Blobs(name string) map[int]string {
	if g, ok := p.groups[name]; ok {
		return maps.Clone(g)
	}
	return nil
}

// ParamNames returns the names, without device scope, of the data-parallel
// trainable parameters in creation order (Caffe2's _param_names less the
// computed ones).
func (p *Parallel) ParamNames() []string { return slices.Clone(p.paramNames) }

// ComputedParamNames returns the names, without device scope, of the
// data-parallel computed parameters in creation order.
func (p *Parallel) ComputedParamNames() []string { return slices.Clone(p.computedNames) }

// GradNames returns the names, without device scope, of the gradients the
// train net all-reduces, in parameter creation order (they are reduced in
// the reverse order).
func (p *Parallel) GradNames() []string { return slices.Clone(p.gradNames) }

// Losses returns the losses the forward builder returned for device d.
func (p *Parallel) Losses(d int) []string { return slices.Clone(p.losses[d]) }

// Warnings returns what Caffe2 would have logged as warnings while
// parallelizing (a forward-only model that initializes its parameters, GPU
// ids beyond the machine's).
func (p *Parallel) Warnings() []string { return slices.Clone(p.warnings) }

// InitNets returns the nets RunInitNet runs once (the model's init net).
func (p *Parallel) InitNets() []*netdef.Net { return slices.Clone(p.initNets) }

// Nets returns the nets RunNet runs (the model's train net).
func (p *Parallel) Nets() []*netdef.Net { return slices.Clone(p.nets) }

// Workspace returns the workspace the model runs in: Options.Workspace, or
// the current workspace.
func (p *Parallel) Workspace() *workspace.Workspace {
	if p.opts.Workspace != nil {
		return p.opts.Workspace
	}
	return workspace.Current()
}

// RunInitNet runs the init net once and creates the train net (replacing
// a net of the same name), Caffe2's RunInitNet.
func (p *Parallel) RunInitNet() error {
	ws := p.Workspace()
	for _, net := range p.initNets {
		if err := ws.RunNetOnce(net); err != nil {
			return p.runError(net, err)
		}
	}
	for _, net := range p.nets {
		if err := ws.CreateNet(net, true); err != nil {
			return p.runError(net, err)
		}
	}
	return nil
}

// RunNet runs the train net iters times (Caffe2's RunNet). A failing
// operator stops the step; the error names the device it ran on, the net
// and the operator.
func (p *Parallel) RunNet(iters int) error {
	return p.RunNetContext(context.Background(), iters)
}

// RunNetContext is RunNet that stops once ctx is done, before the next
// operator starts (see workspace.Workspace.RunNetContext).
func (p *Parallel) RunNetContext(ctx context.Context, iters int) error {
	ws := p.Workspace()
	for _, net := range p.nets {
		if err := ws.RunNetContext(ctx, net.Name(), iters); err != nil {
			return p.runError(net, err)
		}
	}
	return nil
}

// runError adds to err the device of the operator of net it names.
func (p *Parallel) runError(net *netdef.Net, err error) error {
	var opErr *operators.OpError
	if errors.As(err, &opErr) {
		if ops := net.Proto().GetOp(); opErr.Index >= 0 && opErr.Index < len(ops) {
			return fmt.Errorf("dataparallel: device %s: %w", devicescope.KeyOf(ops[opErr.Index].GetDeviceOption()), err)
		}
	}
	return fmt.Errorf("dataparallel: %w", err)
}

// CheckpointParams returns, sorted, the blobs a complete checkpoint needs
// (Caffe2's GetCheckpointParams): the master's copies of the blobs the
// init net creates on the devices (parameters, computed parameters,
// optimizer state such as momentum) and the unscoped iteration counters
// that Iter and AtomicIter operators of the train net write (for example
// "optimizer_iteration").
func (p *Parallel) CheckpointParams() []string {
	master := p.masterPrefix()
	set := map[string]bool{}
	for _, op := range p.model.InitNet.Proto().GetOp() {
		for _, o := range op.GetOutput() {
			if strings.HasPrefix(o, master) {
				set[o] = true
			}
		}
	}
	for _, op := range p.model.Net.Proto().GetOp() {
		if t := op.GetType(); (t == "Iter" || t == "AtomicIter") && len(op.GetOutput()) > 0 {
			if o := op.GetOutput()[0]; !strings.HasPrefix(o, p.prefix+"_") {
				set[o] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// FinalizeAfterCheckpoint copies blobs loaded into the master's copies
// (from a checkpoint or an initial parameters file) to the other devices
// (Caffe2's FinalizeAfterCheckpoint). The first call builds and creates a
// net of copies, for the given blobs (names with or without their device
// scope; global blobs such as "optimizer_iteration", which have no copy on
// the master, are skipped) or, when
// none are given, for the blobs the init net broadcasts; every call runs
// it.
func (p *Parallel) FinalizeAfterCheckpoint(blobs ...string) error {
	ws := p.Workspace()
	if p.checkpointNet == nil {
		var names []string
		if len(blobs) == 0 {
			var err error
			if names, err = p.blobsToSync(); err != nil {
				return fmt.Errorf("dataparallel: FinalizeAfterCheckpoint: %w", err)
			}
		} else {
			for _, b := range blobs {
				if _, name, ok := p.split(b); ok {
					b = name
				} else if _, known := p.groups[b]; !known && !ws.HasBlob(p.DeviceBlob(p.devices[0], b)) {
					continue // a global blob such as optimizer_iteration
				}
				if !slices.Contains(names, b) {
					names = append(names, b)
				}
			}
		}
		net := netdef.NewNet(CheckpointSyncNetName)
		if p.opts.isGPU() {
			net.Proto().DeviceOption = p.DeviceOption(p.devices[0])
		}
		for _, name := range names {
			p.ensureGroup(name)
			if err := p.broadcast(net, name); err != nil {
				return fmt.Errorf("dataparallel: FinalizeAfterCheckpoint: %w", err)
			}
		}
		if err := ws.CreateNet(net, true); err != nil {
			return fmt.Errorf("dataparallel: FinalizeAfterCheckpoint: %w", err)
		}
		p.checkpointNet = net
	}
	if err := ws.RunNet(p.checkpointNet.Name(), 1); err != nil {
		return p.runError(p.checkpointNet, err)
	}
	return nil
}

// ensureGroup registers name's copy "<prefix>_<d>/<name>" on every device
// unless the group exists.
func (p *Parallel) ensureGroup(name string) {
	if _, ok := p.groups[name]; ok {
		return
	}
	g := map[int]string{}
	for _, d := range p.devices {
		g[d] = p.DeviceBlob(d, name)
	}
	p.groups[name] = g
}

// AddBlobSync makes net (nil: the train net) copy each of blobs, given
// without device scope, from the master to the other devices every time
// it runs (Caffe2's AddBlobSync). Call it before RunInitNet creates the
// net.
func (p *Parallel) AddBlobSync(net *netdef.Net, blobs ...string) error {
	if net == nil {
		net = p.model.Net
	}
	for _, b := range blobs {
		if _, _, ok := p.split(b); ok || strings.HasPrefix(b, p.prefix+"_") {
			return fmt.Errorf("dataparallel: AddBlobSync: give %q without its device scope", b)
		}
	}
	for _, b := range blobs {
		g := map[int]string{}
		for _, d := range p.devices {
			g[d] = p.DeviceBlob(d, b)
		}
		p.groups[b] = g
		if err := p.broadcast(net, b); err != nil {
			return fmt.Errorf("dataparallel: AddBlobSync: %w", err)
		}
	}
	return nil
}

// LearningRateBlobNames returns the learning-rate blobs of the train net,
// the outputs of its LearningRate operators in order and without repeats
// (Caffe2's GetLearningRateBlobNames: "SgdOptimizer_0_lr_cpu" on CPU, one
// per GPU on GPUs).
func (p *Parallel) LearningRateBlobNames() []string {
	var names []string
	for _, op := range p.model.Net.Proto().GetOp() {
		if op.GetType() == "LearningRate" && len(op.GetOutput()) > 0 && !slices.Contains(names, op.GetOutput()[0]) {
			names = append(names, op.GetOutput()[0])
		}
	}
	return names
}
