package optim

import (
	"math"
	"sync"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// Mutex is what CreateMutex stores in its output blob and AtomicIter locks.
// A blob holding one reports Caffe2's type name for it.
type Mutex struct{ sync.Mutex }

// BlobTypeName returns Caffe2's name for a mutex blob,
// "std::unique_ptr<std::mutex>".
func (*Mutex) BlobTypeName() string { return "std::unique_ptr<std::mutex>" }

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type:      "Iter",
		MinInputs: 0, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		EnforceInplace: [][2]int{{0, 0}},
		CPUInputs:      []int{0}, CPUOutputs: []int{0}, // the counter, on any device
		Doc: "Stores an int64 [1] counter on the CPU and increments it on every run. " +
			"An empty blob starts at 0, so the first run leaves 1.",
	}, func(b *operators.Base) (operators.Operator, error) { return &iterOp{b}, nil })
	operators.MustRegisterNoGradient("Iter")

	operators.MustRegisterCPU(operators.Schema{
		Type:      "AtomicIter",
		MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		EnforceInplace: [][2]int{{1, 0}},
		CPUInputs:      []int{1}, CPUOutputs: []int{0}, // the counter, on any device
		Doc: "Iter under a mutex: inputs (mutex, iter), output iter (in place).",
	}, func(b *operators.Base) (operators.Operator, error) { return &atomicIterOp{b}, nil })
	operators.MustRegisterNoGradient("AtomicIter")

	operators.MustRegisterCPU(operators.Schema{
		Type:      "CreateMutex",
		MinInputs: 0, MaxInputs: 0, MinOutputs: 1, MaxOutputs: 1,
		Doc: "Stores a new unlocked mutex in its output blob.",
	}, func(b *operators.Base) (operators.Operator, error) { return &createMutexOp{b}, nil })
	operators.MustRegisterGradientForbidden("CreateMutex")
}

// register records a schema and its CPU implementation.
type iterOp struct{ *operators.Base }

func (o *iterOp) Run() error {
	b := o.OutputBlob(0)
	if b.IsEmpty() {
		t, err := blob.New(blob.Int64, 1)
		if err != nil {
			return err
		}
		b.Set(t)
	}
	t := b.Tensor()
	if t == nil {
		return o.Errorf("iteration blob %q holds %s, not a tensor", o.OutputName(0), b.TypeName())
	}
	return incrementIter(o.Base, t, o.OutputName(0))
}

type atomicIterOp struct{ *operators.Base }

func (o *atomicIterOp) Run() error {
	mu, ok := o.InputBlob(0).Get().(*Mutex)
	if !ok {
		return o.Errorf("input 0 (%q) holds %s, not a mutex made by CreateMutex", o.InputName(0), o.InputBlob(0).TypeName())
	}
	t, err := o.Input(1)
	if err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	return incrementIter(o.Base, t, o.InputName(1))
}

// incrementIter adds one to the int64 [1] counter t, refusing counters of
// another type or size, negative counters and overflow.
func incrementIter(o *operators.Base, t *blob.Tensor, name string) error {
	if t.DataType() != blob.Int64 {
		return o.Errorf("iteration blob %q has type %v, want INT64", name, t.DataType())
	}
	if t.Size() != 1 {
		return o.Errorf("iteration blob %q exists but has shape %v, want one element", name, t.Dims())
	}
	it := blob.Data[int64](t)
	switch {
	case it[0] < 0:
		return o.Errorf("iteration blob %q: previous iteration number %d is negative", name, it[0])
	case it[0] == math.MaxInt64:
		return o.Errorf("iteration blob %q: overflow will happen", name)
	}
	it[0]++
	return nil
}

type createMutexOp struct{ *operators.Base }

func (o *createMutexOp) Run() error {
	o.OutputBlob(0).Set(&Mutex{})
	return nil
}
