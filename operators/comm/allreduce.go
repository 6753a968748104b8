package comm

import (
	"fmt"
	"slices"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// Engine names of the CPU Allreduce.
const (
	SumTree = "SUM_TREE"
	Ring    = "RING"
)

// Engine sums replicas' buffers in place. An Engine belongs to one
// operator instance, which runs it from one goroutine at a time, so it may
// keep scratch state between runs.
type Engine interface {
	// Allreduce leaves in each of bufs, which have the same dtype and
	// shape, the element-wise sum of all of them.
	Allreduce(bufs []*blob.Tensor) error
}

// RegisterEngine registers the Allreduce operator for deviceType with the
// given engine name; newEngine makes the engine of the operator instance b
// summing n replicas (an engine may read b's device, arguments or kernel
// thread budget). Registering a (device type, engine) pair twice is an
// error.
func RegisterEngine(deviceType netdef.DeviceType, engine string, newEngine func(b *operators.Base, n int) Engine) error {
	if newEngine == nil {
		return fmt.Errorf("comm: RegisterEngine(%v, %q) needs an engine constructor", deviceType, engine)
	}
	return operators.Register("Allreduce", deviceType, engine, func(b *operators.Base) (operators.Operator, error) {
		return newAllreduce(b, newEngine)
	})
}

// MustRegisterEngine is RegisterEngine for init functions: it panics on an
// error.
func MustRegisterEngine(deviceType netdef.DeviceType, engine string, newEngine func(b *operators.Base, n int) Engine) {
	if err := RegisterEngine(deviceType, engine, newEngine); err != nil {
		panic(err)
	}
}

func init() {
	operators.MustRegisterSchema(operators.Schema{
		Type: "Allreduce", MinInputs: 1, MaxInputs: operators.Unbounded,
		MinOutputs: 1, MaxOutputs: operators.Unbounded,
		InputsCheck: func(n int) bool { return n >= 1 },
		// Engine GLOO (operators/gloo) takes the common world as input 0:
		// there output i is input i+1.
		AllowInplace: func(in, out int) bool { return in == out || in == out+1 },
		// The replicas live on their own devices; the engine moves data
		// between them.
		InputsCanCrossDevices: true,
		Doc: "Sums the inputs, one per replica, element-wise and writes the sum into every one " +
			"of them; output i must be input i. The engine (SUM_TREE, RING) picks the algorithm. With engine GLOO " +
			"input 0 is a common world (CreateCommonWorld), output i is input i+1, and the sum runs over every rank too.",
	})
	operators.MustRegisterNoGradient("Allreduce")
	sumTree := func(b *operators.Base, n int) Engine { return newTree(b, n) }
	MustRegisterEngine(netdef.CPU, "", sumTree)
	MustRegisterEngine(netdef.CPU, SumTree, sumTree)
	MustRegisterEngine(netdef.CPU, Ring, func(b *operators.Base, n int) Engine { return newRing(b, n) })
}

type allreduceOp struct {
	*operators.Base
	engine Engine
	bufs   []*blob.Tensor
}

func newAllreduce(b *operators.Base, newEngine func(b *operators.Base, n int) Engine) (operators.Operator, error) {
	def := b.Def()
	if !slices.Equal(def.GetInput(), def.GetOutput()) {
		return nil, fmt.Errorf("Allreduce works in place: outputs %v must be the inputs %v", def.GetOutput(), def.GetInput())
	}
	n := b.NumInputs()
	return &allreduceOp{Base: b, engine: newEngine(b, n), bufs: make([]*blob.Tensor, n)}, nil
}

func (o *allreduceOp) Run() error {
	for i := range o.bufs {
		x, err := o.FloatInput(i)
		if err != nil {
			return err
		}
		if i > 0 && (x.DataType() != o.bufs[0].DataType() || !slices.Equal(x.Dims(), o.bufs[0].Dims())) {
			return o.Errorf("input %d %q is %v %v, input 0 %q is %v %v: replicas must match",
				i, o.InputName(i), x.DataType(), x.Dims(), o.InputName(0), o.bufs[0].DataType(), o.bufs[0].Dims())
		}
		o.bufs[i] = x
	}
	if err := o.engine.Allreduce(o.bufs); err != nil {
		return o.Errorf("%v", err)
	}
	return nil
}
