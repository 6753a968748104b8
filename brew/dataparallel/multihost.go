package dataparallel

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/gloo"
)

// DefaultBarrierTimeout is how long the start barrier waits for every
// shard unless Rendezvous.BarrierTimeout says otherwise (Caffe2's
// _DEFAULT_BARRIER_NET_TIMEOUT_SEC).
const DefaultBarrierTimeout = 300 * time.Second

// Blob and operator names of the multi-host machinery.
const (
	// StoreHandlerBlob holds the store handler Parallelize creates when
	// Rendezvous.KVHandler is empty.
	StoreHandlerBlob = "dpm_store_handler"
	// CommonWorldBlob holds the common world of the parameter broadcast
	// and the gradient all-reduce.
	CommonWorldBlob = "dpm_common_world"
	// BarrierWorldBlob holds the common world of the start barrier.
	BarrierWorldBlob = "dpm_barrier_world"
)

// Rendezvous makes Parallelize train across processes, on one machine or
// several (Caffe2's rendezvous dict): every process (shard) runs the same
// model on its own devices; gradients are summed inside the process first,
// then across shards with Gloo (package operators/gloo, the gloo build
// tag), then copied back to the devices; parameters start as shard 0's.
type Rendezvous struct {
	// KVHandler names a blob that holds a store handler (a gloo.Store,
	// from FileStoreHandlerCreate or RedisStoreHandlerCreate) when
	// RunInitNet runs: Caffe2's kv_handler. Empty: RunInitNet creates one
	// in StoreHandlerBlob from Store.
	KVHandler string
	// Store is where the shards meet when KVHandler is empty: a directory
	// every shard can reach, or a Redis server. Its Prefix keeps one run's
	// keys apart from another's: a restarted job needs a fresh prefix (or
	// directory), since a store refuses keys an earlier run left.
	Store gloo.StoreAddr
	// ShardID is this process's rank, 0 ≤ ShardID < NumShards; shard 0's
	// parameters are the initial ones, and it writes the checkpoints.
	ShardID, NumShards int
	// Engine is the collectives' engine; only "GLOO" (the default).
	Engine string
	// Transport is Gloo's transport; only "tcp" (the default).
	Transport string
	// Interface is the network interface the shards connect through
	// ("eth0"); Hostname an address to listen on instead. Both empty: the
	// address of this machine's host name.
	Interface, Hostname string
	// Timeout is the deadline of every collective (default
	// gloo.DefaultTimeout, 30 s): a shard that dies or hangs makes the
	// others fail within it.
	Timeout time.Duration
	// BarrierTimeout is how long RunInitNet waits for every shard to
	// start (default DefaultBarrierTimeout).
	BarrierTimeout time.Duration
	// Coalesce all-reduces the gradients across shards as one buffer per
	// step, once the last one is ready, instead of one all-reduce per
	// gradient (Caffe2's way, which lets the last layers' all-reduces
	// overlap the back-propagation of the first). Every all-reduce costs
	// a few round trips whatever its size, and on a busy machine each
	// round trip waits for the scheduler: a model with many small
	// gradients then trains faster coalesced. The parameters are the
	// same either way; the gradients must all be float tensors.
	Coalesce bool
}

// numShards returns the number of shards: 1 without a rendezvous.
func (o *Options) numShards() int {
	if o.Rendezvous == nil {
		return 1
	}
	return o.Rendezvous.NumShards
}

// checkRendezvous validates and completes o.Rendezvous.
func (p *Parallel) checkRendezvous() error {
	r := p.opts.Rendezvous
	if r == nil {
		return nil
	}
	c := *r
	if c.NumShards < 1 {
		return fmt.Errorf("dataparallel: Rendezvous.NumShards %d: want at least 1", c.NumShards)
	}
	if c.ShardID < 0 || c.ShardID >= c.NumShards {
		return fmt.Errorf("dataparallel: Rendezvous.ShardID %d: want 0 ≤ ShardID < NumShards %d", c.ShardID, c.NumShards)
	}
	if c.Engine == "" {
		c.Engine = gloo.Engine
	}
	if c.Engine != gloo.Engine {
		return fmt.Errorf("dataparallel: Rendezvous.Engine %q: only %s is supported", c.Engine, gloo.Engine)
	}
	if c.Transport == "" {
		c.Transport = "tcp"
	}
	if c.Timeout <= 0 {
		c.Timeout = gloo.DefaultTimeout
	}
	if c.BarrierTimeout <= 0 {
		c.BarrierTimeout = DefaultBarrierTimeout
	}
	if c.KVHandler == "" {
		if _, err := c.Store.StoreOp(StoreHandlerBlob); err != nil {
			return fmt.Errorf("dataparallel: Rendezvous needs a KVHandler blob or a Store: %w", err)
		}
	}
	if c.NumShards > 1 {
		if p.opts.isGPU() {
			return errors.New("dataparallel: training across processes is only supported on CPU devices")
		}
		if !operators.IsOperatorWithEngine("CreateCommonWorld", gloo.Engine) {
			return errors.New("dataparallel: training across processes needs the Gloo collectives: build with -tags gloo (and libgloo-dev)")
		}
	}
	p.rdv = &c
	return nil
}

// multiHost reports whether gradients and parameters cross processes.
func (p *Parallel) multiHost() bool { return p.rdv != nil && p.rdv.NumShards > 1 }

// ShardID returns this process's shard (0 without a rendezvous).
func (p *Parallel) ShardID() int {
	if p.rdv == nil {
		return 0
	}
	return p.rdv.ShardID
}

// NumShards returns the number of processes training together (1 without
// a rendezvous).
func (p *Parallel) NumShards() int { return p.opts.numShards() }

// IsCheckpointWriter reports whether this process writes the checkpoints:
// shard 0 only, as in Caffe2. Every shard loads the same checkpoint to
// resume.
func (p *Parallel) IsCheckpointWriter() bool { return p.ShardID() == 0 }

// glooOp returns an operator with engine GLOO on the master device.
func (p *Parallel) glooOp(typ string, in, out []string, args ...*netdef.Argument) *netdef.OperatorDef {
	op := netdef.NewOperator(typ, in, out, args...)
	op.Engine = proto.String(gloo.Engine)
	op.DeviceOption = p.copyOption(p.devices[0])
	return op
}

// createWorld returns the CreateCommonWorld of the common world out, whose
// store keys are under name.
func (p *Parallel) createWorld(name, out string, timeout time.Duration) *netdef.OperatorDef {
	r := p.rdv
	args := []*netdef.Argument{
		netdef.ArgInt("size", int64(r.NumShards)), netdef.ArgInt("rank", int64(r.ShardID)),
		netdef.ArgInt("timeout_ms", timeout.Milliseconds()), netdef.ArgString("transport", r.Transport),
	}
	if r.Interface != "" {
		args = append(args, netdef.ArgString("interface", r.Interface))
	}
	if r.Hostname != "" {
		args = append(args, netdef.ArgString("hostname", r.Hostname))
	}
	kv := r.KVHandler
	if kv == "" {
		kv = StoreHandlerBlob
	}
	op := p.glooOp("CreateCommonWorld", []string{kv}, []string{out}, args...)
	op.Name = proto.String(name)
	return op
}

// addMultiHostInit adds the start barrier (a net of its own, run first by
// RunInitNet, that waits BarrierTimeout for every shard), and adds to the
// init net the common world and the broadcast from shard 0 of every blob
// the init net creates on the master device.
func (p *Parallel) addMultiHostInit() error {
	r := p.rdv
	barrier := netdef.NewNet("dpm_barrier_init")
	if r.KVHandler == "" {
		op, err := r.Store.StoreOp(StoreHandlerBlob)
		if err != nil {
			return err
		}
		op.DeviceOption = devicescope.CPU()
		barrier.AddOp(op)
	}
	barrier.AddOp(p.createWorld("dpm_barrier", BarrierWorldBlob, r.BarrierTimeout))
	barrier.AddOp(p.glooOp("Barrier", []string{BarrierWorldBlob}, nil, netdef.ArgInt("timeout_ms", r.BarrierTimeout.Milliseconds())))
	p.initNets = append([]*netdef.Net{barrier}, p.initNets...)

	init := p.model.InitNet
	master := p.masterPrefix()
	var blobs []string
	for _, op := range init.Proto().GetOp() {
		for _, o := range op.GetOutput() {
			if strings.HasPrefix(o, master) && !slices.Contains(blobs, o) {
				blobs = append(blobs, o)
			}
		}
	}
	slices.Sort(blobs)
	init.AddOp(p.createWorld("dpm_world", CommonWorldBlob, r.Timeout))
	for _, b := range blobs {
		init.AddOp(p.glooOp("Broadcast", []string{CommonWorldBlob, b}, []string{b}, netdef.ArgInt("root", 0)))
	}
	return nil
}

// allReduceAcrossHosts sums the gradient group name over the devices into
// the master's copy, all-reduces that over the shards, and (unless the
// model is shared) copies it back to the other devices (Caffe2's
// _AllReduceBlobsDistributed).
func (p *Parallel) allReduceAcrossHosts(name string) error {
	blobs, err := p.groupBlobs(name)
	if err != nil {
		return err
	}
	net := p.model.Net
	master := blobs[0]
	if len(blobs) > 1 {
		sum := netdef.NewOperator("Sum", blobs, []string{master})
		sum.Name = proto.String("dpm")
		sum.DeviceOption = p.DeviceOption(p.devices[0])
		net.AddOp(sum)
	}
	op := p.glooOp("Allreduce", []string{CommonWorldBlob, master}, []string{master})
	op.Name = proto.String(name)
	net.AddOp(op)
	if len(blobs) > 1 && !p.opts.SharedModel {
		return p.broadcast(net, name)
	}
	return nil
}

// allReduceCoalesced sums each gradient group of names (last first, as
// allReduceGradients) over the devices into the master's copy, then
// all-reduces them over the shards as one buffer: each is flattened
// (Reshape, which also records its shape), the pieces are concatenated,
// the buffer all-reduced, split, and each piece given back its shape;
// then (unless the model is shared) copied back to the other devices.
func (p *Parallel) allReduceCoalesced(names []string) error {
	net := p.model.Net
	master := p.DeviceOption(p.devices[0])
	add := func(op *netdef.OperatorDef) {
		op.Name = proto.String("dpm")
		op.DeviceOption = master
		net.AddOp(op)
	}
	var groups, grads, flats, shapes []string
	for _, name := range slices.Backward(names) {
		blobs, err := p.groupBlobs(name)
		if err != nil {
			return err
		}
		if len(blobs) > 1 {
			add(netdef.NewOperator("Sum", blobs, blobs[:1]))
		}
		groups = append(groups, name)
		grads = append(grads, blobs[0])
		flats = append(flats, blobs[0]+"_dpm_flat")
		shapes = append(shapes, blobs[0]+"_dpm_shape")
	}
	switch len(grads) {
	case 0:
		return nil
	case 1:
		net.AddOp(p.glooOp("Allreduce", []string{CommonWorldBlob, grads[0]}, grads))
	default:
		for i, g := range grads {
			add(netdef.NewOperator("Reshape", []string{g}, []string{flats[i], shapes[i]}, netdef.ArgInts("shape", -1)))
		}
		buf := p.masterPrefix() + "dpm_coalesced_grads"
		add(netdef.NewOperator("Concat", flats, []string{buf, buf + "_split"}, netdef.ArgInt("axis", 0)))
		op := p.glooOp("Allreduce", []string{CommonWorldBlob, buf}, []string{buf})
		op.Name = proto.String("dpm_coalesced_grads")
		net.AddOp(op)
		add(netdef.NewOperator("Split", []string{buf, buf + "_split"}, flats, netdef.ArgInt("axis", 0)))
		for i, g := range grads {
			add(netdef.NewOperator("Reshape", []string{flats[i], shapes[i]}, []string{g, flats[i] + "_shape"}))
		}
	}
	if len(p.devices) > 1 && !p.opts.SharedModel {
		for _, name := range groups {
			if err := p.broadcast(net, name); err != nil {
				return err
			}
		}
	}
	return nil
}

// BroadcastAcrossShards copies the blobs (full workspace names, which must
// exist with the same shapes on every shard) from shard 0 to every other
// shard. Every shard must call it with the same blobs, after RunInitNet:
// it is how shards resume together from the checkpoint shard 0 loaded.
// Without a rendezvous, or with one shard, it does nothing.
func (p *Parallel) BroadcastAcrossShards(blobs ...string) error {
	if !p.multiHost() || len(blobs) == 0 {
		return nil
	}
	net := netdef.NewNet("dpm_shard_broadcast")
	for _, b := range blobs {
		net.AddOp(p.glooOp("Broadcast", []string{CommonWorldBlob, b}, []string{b}, netdef.ArgInt("root", 0)))
	}
	if err := p.Workspace().RunNetOnce(net); err != nil {
		return p.runError(net, err)
	}
	return nil
}
