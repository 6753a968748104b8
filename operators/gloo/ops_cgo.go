//go:build gloo && cgo

package gloo

import (
	"math"
	"slices"
	"time"
	"unsafe"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegister("CreateCommonWorld", netdef.CPU, Engine, newCreateCommonWorld)
	operators.MustRegister("DestroyCommonWorld", netdef.CPU, Engine, func(b *operators.Base) (operators.Operator, error) {
		return &destroyOp{b}, nil
	})
	operators.MustRegister("Allreduce", netdef.CPU, Engine, newCollective)
	operators.MustRegister("Broadcast", netdef.CPU, Engine, newCollective)
	operators.MustRegister("Allgather", netdef.CPU, Engine, newCollective)
	operators.MustRegister("Barrier", netdef.CPU, Engine, newCollective)
}

type createCommonWorldOp struct {
	*operators.Base
	args   worldArgs
	prefix string
}

func newCreateCommonWorld(b *operators.Base) (operators.Operator, error) {
	a, err := parseWorldArgs(b)
	if err != nil {
		return nil, err
	}
	prefix := b.Def().GetName()
	if prefix == "" {
		prefix = b.OutputName(0)
	}
	return &createCommonWorldOp{Base: b, args: a, prefix: prefix}, nil
}

func (o *createCommonWorldOp) Run() error {
	s, ok := o.InputBlob(0).Get().(Store)
	if !ok {
		return o.Errorf("input 0 (%q) holds %s, not a store handler (create it with FileStoreHandlerCreate or RedisStoreHandlerCreate)",
			o.InputName(0), o.InputBlob(0).TypeName())
	}
	w, err := newWorld(PrefixStore{Prefix: o.prefix, Store: s}, o.args.rank, o.args.size,
		worldOptions{timeout: o.args.timeout, iface: o.args.iface, hostname: o.args.hostname})
	if err != nil {
		return o.Errorf("%w", err)
	}
	o.OutputBlob(0).Set(w)
	return nil
}

type destroyOp struct{ *operators.Base }

func (o *destroyOp) Run() error {
	switch w := o.InputBlob(0).Get().(type) {
	case nil:
	case *commonWorld:
		w.close()
	default:
		return o.Errorf("input 0 (%q) holds %s, not a common world", o.InputName(0), o.InputBlob(0).TypeName())
	}
	return nil
}

// collectiveOp is Allreduce, Broadcast, Allgather and Barrier with engine
// GLOO: input 0 is the common world.
type collectiveOp struct {
	*operators.Base
	tag     uint32
	root    int
	timeout time.Duration // 0: the world's
	bufs    []*blob.Tensor
	scratch []byte // Allgather's packed inputs
}

func newCollective(b *operators.Base) (operators.Operator, error) {
	def := b.Def()
	if t := b.Type(); t == "Allreduce" || t == "Broadcast" {
		if !slices.Equal(def.GetInput()[1:], def.GetOutput()) {
			return nil, b.Errorf("works in place: outputs %v must be inputs 1… %v", def.GetOutput(), def.GetInput()[1:])
		}
	}
	if b.Type() == "Allreduce" && b.NumInputs() < 2 {
		return nil, b.Errorf("engine GLOO takes the common world and at least one tensor")
	}
	o := &collectiveOp{Base: b, tag: collectiveTag(def), root: int(b.ArgInt("root", 0)), timeout: opTimeout(b, 0)}
	o.bufs = make([]*blob.Tensor, max(b.NumInputs()-1, 0))
	return o, nil
}

func (o *collectiveOp) Run() error {
	w, ok := o.InputBlob(0).Get().(*commonWorld)
	if !ok {
		return o.Errorf("input 0 (%q) holds %s, not a common world (create it with CreateCommonWorld)", o.InputName(0), o.InputBlob(0).TypeName())
	}
	timeout := o.timeout
	if timeout == 0 {
		timeout = w.timeout
	}
	for i := range o.bufs {
		x, err := o.Input(i + 1)
		if err != nil {
			return err
		}
		if _, _, ok := rawBytes(x); !ok {
			return o.Errorf("input %d (%q) is %v %v: want a numeric tensor in host memory", i+1, o.InputName(i+1), x.DataType(), x.Dims())
		}
		if i > 0 && (x.DataType() != o.bufs[0].DataType() || x.Size() != o.bufs[0].Size()) {
			return o.Errorf("input %d (%q) is %v %v, input 1 (%q) is %v %v: they must match",
				i+1, o.InputName(i+1), x.DataType(), x.Dims(), o.InputName(1), o.bufs[0].DataType(), o.bufs[0].Dims())
		}
		o.bufs[i] = x
	}
	var err error
	switch o.Type() {
	case "Allreduce":
		if _, ok := dtypeCode(o.bufs[0].DataType()); !ok {
			return o.Errorf("input 1 (%q) is %v: Allreduce sums float, double, int32 or int64", o.InputName(1), o.bufs[0].DataType())
		}
		err = w.allreduce(o.bufs, o.tag, timeout)
	case "Broadcast":
		if o.root < 0 || o.root >= w.size {
			return o.Errorf("root %d is not a rank of the %d-rank world", o.root, w.size)
		}
		for i, x := range o.bufs {
			p, n, _ := rawBytes(x)
			if err = w.broadcast(p, n, o.root, o.tag+uint32(i), timeout); err != nil {
				break
			}
		}
	case "Allgather":
		err = o.allgather(w, timeout)
	case "Barrier":
		err = w.barrier(o.tag, timeout)
	}
	clear(o.bufs)
	if err != nil {
		return o.Errorf("%w", err)
	}
	return nil
}

// allgather gathers every rank's inputs into output 0 (Caffe2's layout:
// rank by rank, each rank's inputs in order).
func (o *collectiveOp) allgather(w *commonWorld, timeout time.Duration) error {
	per := o.bufs[0].Size() * len(o.bufs)
	if per > 0 && w.size > math.MaxInt/per {
		return o.Errorf("%d ranks × %d elements overflow", w.size, per)
	}
	y := o.Output(0)
	if err := y.Init(o.bufs[0].DataType(), per*w.size); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	out, _, _ := rawBytes(y)
	in, n, _ := rawBytes(o.bufs[0])
	if len(o.bufs) > 1 {
		o.scratch = o.scratch[:0]
		for _, x := range o.bufs {
			p, k, _ := rawBytes(x)
			o.scratch = append(o.scratch, unsafe.Slice((*byte)(p), k)...)
		}
		if len(o.scratch) > 0 {
			in, n = unsafe.Pointer(&o.scratch[0]), len(o.scratch)
		}
	}
	return w.allgather(in, n, out, o.tag, timeout)
}
