package operators

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
)

// Workspace is what an operator sees of the workspace it runs in. Package
// workspace implements it.
type Workspace interface {
	// GetBlob returns the named blob (local, forwarded or the parent's), or
	// nil when there is none.
	GetBlob(name string) *blob.Blob
	// CreateBlob returns the named blob, creating it when it does not exist.
	CreateBlob(name string) *blob.Blob
	// RootFolder is the folder relative paths of file-writing operators
	// resolve against.
	RootFolder() string
}

// Operator is an instantiated operator, bound to its blobs.
type Operator interface {
	// Run executes the operator once. It returns an error describing what
	// failed; the executor adds the net name and the operator's position.
	Run() error
	// OpBase returns the operator's definition and bound blobs.
	OpBase() *Base
}

// Base holds what every operator has: its definition, its input and output
// blobs (resolved once at construction), its device and its arguments.
// Implementations embed *Base.
type Base struct {
	def     *netdef.OperatorDef
	ws      Workspace
	inputs  []*blob.Blob
	outputs []*blob.Blob
	device  devicescope.Device
	place   *netdef.DeviceOption // where outputs live: nil for the CPU
	hostOut []bool               // outputs the schema keeps on the CPU
	anyIn   bool                 // the schema lets inputs cross devices
	index   int                  // position in the net, -1 when alone
	impl    Implementation       // the registration chosen
	threads ThreadBudget         // kernel thread budget (see CreateWithThreads)
	rng     *rand.Rand
	ctx     context.Context // the current run's; nil outside a run
}

// OpBase returns b itself, so that embedding *Base satisfies
// Operator.OpBase.
func (b *Base) OpBase() *Base { return b }

// Def returns the operator's definition.
func (b *Base) Def() *netdef.OperatorDef { return b.def }

// Type returns the operator type.
func (b *Base) Type() string { return b.def.GetType() }

// Engine returns the engine whose implementation was chosen ("" = default).
func (b *Base) Engine() string { return b.impl.Engine }

// Implementation returns the registration the operator was created from:
// its type, the device type it was registered for (AnyDevice for a
// device-neutral one) and its engine.
func (b *Base) Implementation() Implementation { return b.impl }

// Workspace returns the workspace the operator was created in.
func (b *Base) Workspace() Workspace { return b.ws }

// Device returns the device the operator runs on.
func (b *Base) Device() devicescope.Device { return b.device }

// Context returns the context of the net run the operator is part of
// (context.Background() when it runs on its own). Kernels that can run
// long check it at a coarse grain, such as between the images of a batch,
// and return its error once it is done; the executor checks it between
// operators.
func (b *Base) Context() context.Context {
	if b.ctx == nil {
		return context.Background()
	}
	return b.ctx
}

// SetContext sets the context Context returns; executors call it before
// running the operator.
func (b *Base) SetContext(ctx context.Context) { b.ctx = ctx }

// ThreadBudget is the kernel thread budget a net gives an operator it
// creates (CreateWithThreads), read against GOMAXPROCS at each call. Its
// zero value is all of GOMAXPROCS.
type ThreadBudget struct {
	// Share, when above 1, is the number of replicas a net runs at once
	// (one per CPU device), each getting GOMAXPROCS/Share threads, at
	// least 1.
	Share int
	// Max, when positive, caps the budget at that many threads (a net's
	// kernel_threads argument).
	Max int
}

// Threads returns the operator's kernel thread budget: the most goroutines
// one kernel call of the operator may split its work into (the threads
// argument of parallel.Parts and gemm.Gemm). It is GOMAXPROCS unless the
// net that created the operator gave it a smaller ThreadBudget, and never
// more than GOMAXPROCS when it is called.
func (b *Base) Threads() int {
	n := runtime.GOMAXPROCS(0)
	if b.threads.Share > 1 {
		n = max(1, n/b.threads.Share)
	}
	if b.threads.Max > 0 {
		n = min(n, b.threads.Max)
	}
	return n
}

// ThreadBudget returns the budget the operator was created with, for an
// operator that creates operators of its own (a step net) to pass on.
func (b *Base) ThreadBudget() ThreadBudget { return b.threads }

// NumInputs returns the number of inputs.
func (b *Base) NumInputs() int { return len(b.inputs) }

// NumOutputs returns the number of outputs.
func (b *Base) NumOutputs() int { return len(b.outputs) }

// InputName returns the blob name of input i.
func (b *Base) InputName(i int) string { return b.def.Input[i] }

// OutputName returns the blob name of output i.
func (b *Base) OutputName(i int) string { return b.def.Output[i] }

// InputBlob returns input i's blob.
func (b *Base) InputBlob(i int) *blob.Blob { return b.inputs[i] }

// OutputBlob returns output i's blob.
func (b *Base) OutputBlob(i int) *blob.Blob { return b.outputs[i] }

// Input returns input i's tensor, or an error naming the blob when it holds
// no tensor, or when an operator working in Go memory (a CPU operator) is
// given a tensor in a device's memory.
func (b *Base) Input(i int) (*blob.Tensor, error) {
	t := b.inputs[i].Tensor()
	if t == nil {
		return nil, fmt.Errorf("input %d (%q) holds %s, not a tensor", i, b.def.Input[i], b.inputs[i].TypeName())
	}
	if b.place == nil && !b.anyIn && !t.OnHost() {
		return nil, fmt.Errorf("input %d (%q) lives on %v, but the operator runs on %v: copy it to the CPU first (CopyGPUToCPU, EnsureCPUOutput)",
			i, b.def.Input[i], devicescope.KeyOf(t.Device()), b.device.Key())
	}
	return t, nil
}

// Inputs returns every input's tensor, or the first error.
func (b *Base) Inputs() ([]*blob.Tensor, error) {
	out := make([]*blob.Tensor, len(b.inputs))
	for i := range b.inputs {
		t, err := b.Input(i)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// CanonicalAxis maps an axis that may count from the end, -ndim ≤ axis <
// ndim, into [0, ndim) (Caffe2's canonical_axis_index_); ok is false when
// it is out of range.
func CanonicalAxis(axis, ndim int) (a int, ok bool) {
	if axis < -ndim || axis >= ndim {
		return 0, false
	}
	if axis < 0 {
		axis += ndim
	}
	return axis, true
}

// FloatInput returns input i's tensor after checking that it holds FLOAT or
// DOUBLE elements; the error names the blob and its type.
func (b *Base) FloatInput(i int) (*blob.Tensor, error) {
	t, err := b.Input(i)
	if err != nil {
		return nil, err
	}
	if dt := t.DataType(); dt != blob.Float32 && dt != blob.Float64 {
		return nil, fmt.Errorf("input %d (%q) has type %v, want FLOAT or DOUBLE", i, b.def.Input[i], dt)
	}
	return t, nil
}

// InputOf returns input i's tensor after checking its element type; the
// error names the blob and both types.
func (b *Base) InputOf(i int, dtype blob.DataType) (*blob.Tensor, error) {
	t, err := b.Input(i)
	if err != nil {
		return nil, err
	}
	if t.DataType() != dtype {
		return nil, fmt.Errorf("input %d (%q) has type %v, want %v", i, b.def.Input[i], t.DataType(), dtype)
	}
	return t, nil
}

// LengthsInput reads input i, a vector of INT32 or INT64 lengths (the
// LENGTHS input of Caffe2's segment, sparse and sequence operators), into
// buf, and returns the lengths and their sum. A length below 0, or a sum
// past 2^53, is an error naming the input.
func (b *Base) LengthsInput(i int, buf []int) ([]int, int, error) {
	t, err := b.Input(i)
	if err != nil {
		return buf, 0, err
	}
	if t.NumDims() != 1 {
		return buf, 0, fmt.Errorf("input %d (%q) holds lengths and must be a vector, has shape %v", i, b.def.Input[i], t.Dims())
	}
	buf = buf[:0]
	switch t.DataType() {
	case blob.Int32:
		for _, v := range blob.Data[int32](t) {
			buf = append(buf, int(v))
		}
	case blob.Int64:
		for _, v := range blob.Data[int64](t) {
			buf = append(buf, int(v))
		}
	default:
		return buf, 0, fmt.Errorf("input %d (%q) holds lengths and must be INT32 or INT64, is %v", i, b.def.Input[i], t.DataType())
	}
	sum := 0
	for k, v := range buf {
		if v < 0 {
			return buf, 0, fmt.Errorf("input %d (%q): length %d is negative (%d); lengths must be >= 0", i, b.def.Input[i], k, v)
		}
		if sum += v; sum > 1<<53 {
			return buf, 0, fmt.Errorf("input %d (%q): the lengths add up past 2^53", i, b.def.Input[i])
		}
	}
	return buf, sum, nil
}

// Output returns output i's tensor, replacing any non-tensor content of the
// blob with a tensor, and placed on the operator's device (see
// blob.Tensor.SetDevice: a tensor that lived elsewhere loses its storage,
// which the operator's Init then allocates on its device). The schema's CPU
// outputs stay on the CPU.
func (b *Base) Output(i int) *blob.Tensor {
	t := b.outputs[i].MutableTensor()
	t.SetDevice(b.outPlace(i))
	return t
}

// Errorf returns an error about this operator's inputs, shapes or
// arguments. The executor adds the operator's index, type and name.
func (b *Base) Errorf(format string, args ...any) error {
	return fmt.Errorf(format, args...)
}

// Rand returns the operator's random source: seeded from the device
// option's random_seed when set (so runs are reproducible), else from a
// process-wide sequence.
func (b *Base) Rand() *rand.Rand {
	if b.rng == nil {
		var seed uint64
		if b.def.GetDeviceOption() != nil && b.def.DeviceOption.RandomSeed != nil {
			seed = uint64(b.def.DeviceOption.GetRandomSeed())
		} else {
			seed = seedSequence.Add(0x9e3779b97f4a7c15)
		}
		b.rng = rand.New(rand.NewPCG(seed, seed^0xda3e39cb94b95bdb))
	}
	return b.rng
}

var seedSequence atomic.Uint64

func (b *Base) arg(name string) *netdef.Argument { return netdef.FindArg(b.def.Arg, name) }

// HasArg reports whether the argument is given.
func (b *Base) HasArg(name string) bool { return b.arg(name) != nil }

// ArgInt returns an integer argument, or def when it is absent. A float
// given for it is truncated.
func (b *Base) ArgInt(name string, def int64) int64 { return intValue(b.arg(name), def) }

// intValue is the integer value of a (a float truncated), or def when a is
// nil or holds neither.
func intValue(a *netdef.Argument, def int64) int64 {
	switch {
	case a == nil:
		return def
	case a.I != nil:
		return a.GetI()
	case a.F != nil:
		return int64(a.GetF())
	}
	return def
}

// ArgBool returns a boolean argument (an integer, non-zero = true).
func (b *Base) ArgBool(name string, def bool) bool {
	d := int64(0)
	if def {
		d = 1
	}
	return b.ArgInt(name, d) != 0
}

// ArgFloat returns a float argument, or def when it is absent. An integer
// given for it is converted.
func (b *Base) ArgFloat(name string, def float32) float32 {
	a := b.arg(name)
	switch {
	case a == nil:
		return def
	case a.F != nil:
		return a.GetF()
	case a.I != nil:
		return float32(a.GetI())
	}
	return def
}

// ArgString returns a string argument, or def when it is absent.
func (b *Base) ArgString(name string, def string) string {
	a := b.arg(name)
	if a == nil || a.S == nil {
		return def
	}
	return string(a.S)
}

// ArgInts returns an integer-list argument, or def when it is absent.
func (b *Base) ArgInts(name string, def []int64) []int64 {
	a := b.arg(name)
	if a == nil {
		return def
	}
	return a.Ints
}

// ArgFloats returns a float-list argument, or def when it is absent.
func (b *Base) ArgFloats(name string, def []float32) []float32 {
	a := b.arg(name)
	if a == nil {
		return def
	}
	return a.Floats
}

// ArgStrings returns a string-list argument, or def when it is absent.
func (b *Base) ArgStrings(name string, def []string) []string {
	a := b.arg(name)
	if a == nil {
		return def
	}
	out := make([]string, len(a.Strings))
	for i, s := range a.Strings {
		out[i] = string(s)
	}
	return out
}

// OpError is the error of an operator failing to be created or to run. It
// names the operator by index, type and name.
type OpError struct {
	Index int // position in its net, -1 when run on its own
	Type  string
	Name  string
	Err   error
}

func (e *OpError) Error() string {
	var sb strings.Builder
	if e.Index >= 0 {
		fmt.Fprintf(&sb, "operator %d ", e.Index)
	} else {
		sb.WriteString("operator ")
	}
	sb.WriteString(e.Type)
	if e.Name != "" {
		fmt.Fprintf(&sb, " (%q)", e.Name)
	}
	sb.WriteString(": ")
	sb.WriteString(e.Err.Error())
	return sb.String()
}

// Unwrap returns the underlying error.
func (e *OpError) Unwrap() error { return e.Err }

// ErrUnknownOperator is wrapped by the error of creating an operator whose
// type no implementation is registered for, on any device.
var ErrUnknownOperator = errors.New("no operator of that type is registered")

// ErrBlobNotFound is wrapped by the errors for a blob name that does not
// exist where it is looked up: an operator's input, and (package
// workspace) a fetched or reset blob.
var ErrBlobNotFound = errors.New("can't find blob")

// Create instantiates def in ws: it checks that its outputs are distinct
// blobs and that it fits its schema, resolves the device and the
// implementation (with engine fallback), requires every input blob to
// exist, creates every output blob, and calls the implementation's
// factory. index is the operator's position in its net, for errors. The
// operator's kernels may use all of GOMAXPROCS.
func Create(def *netdef.OperatorDef, ws Workspace, index int) (Operator, error) {
	return CreateWithThreads(def, ws, index, ThreadBudget{})
}

// CreateWithThreads is Create with a kernel thread budget for the operator
// (see ThreadBudget and Base.Threads).
func CreateWithThreads(def *netdef.OperatorDef, ws Workspace, index int, threads ThreadBudget) (Operator, error) {
	wrap := func(err error) error {
		return &OpError{Index: index, Type: def.GetType(), Name: def.GetName(), Err: err}
	}
	if def.GetType() == "" {
		return nil, wrap(fmt.Errorf("operator has no type"))
	}
	if err := distinctOutputs(def); err != nil {
		return nil, wrap(err)
	}
	if s, ok := SchemaOf(def.GetType()); ok {
		if err := s.Verify(def); err != nil {
			return nil, wrap(fmt.Errorf("operator def did not pass schema checking: %w", err))
		}
	}
	devType := def.GetDeviceOption().Type()
	f, impl, ok := lookup(def.GetType(), devType, def.GetEngine())
	if !ok {
		if len(Implementations(def.GetType())) > 0 {
			return nil, wrap(fmt.Errorf("cannot create operator of type %q on the device %v: no implementation for that device", def.GetType(), devType))
		}
		return nil, wrap(fmt.Errorf("cannot create operator of type %q on the device %v: %w", def.GetType(), devType, ErrUnknownOperator))
	}
	dev, err := devicescope.Get(def.GetDeviceOption())
	if err != nil {
		return nil, wrap(err)
	}
	b := &Base{def: def, ws: ws, device: dev, impl: impl, threads: threads, index: index}
	s, _ := SchemaOf(def.GetType())
	b.anyIn = s != nil && s.InputsCanCrossDevices
	if devType != netdef.CPU {
		b.place = def.GetDeviceOption()
		if s != nil && len(s.CPUOutputs) > 0 {
			b.hostOut = make([]bool, len(def.GetOutput()))
			for _, o := range s.CPUOutputs {
				if o < len(b.hostOut) {
					b.hostOut[o] = true
				}
			}
		}
	}
	b.inputs = make([]*blob.Blob, len(def.GetInput()))
	for i, name := range def.GetInput() {
		bl := ws.GetBlob(name)
		if bl == nil {
			return nil, wrap(fmt.Errorf("encountered a non-existing input blob %q: %w", name, ErrBlobNotFound))
		}
		b.inputs[i] = bl
	}
	b.outputs = make([]*blob.Blob, len(def.GetOutput()))
	for i, name := range def.GetOutput() {
		b.outputs[i] = ws.CreateBlob(name)
	}
	op, err := f(b)
	if err != nil {
		return nil, wrap(err)
	}
	return op, nil
}

// distinctOutputs checks that no blob is two of def's outputs: an operator
// writes each output as a tensor of its own type and shape, so two outputs
// in one blob would leave the first pointing at storage the second
// replaced.
func distinctOutputs(def *netdef.OperatorDef) error {
	seen := make(map[string]int, len(def.GetOutput()))
	for i, name := range def.GetOutput() {
		if j, dup := seen[name]; dup {
			return fmt.Errorf("outputs %d and %d are both %q: an operator cannot write two outputs to one blob", j, i, name)
		}
		seen[name] = i
	}
	return nil
}

// RunSafely runs op, turning a panic inside the kernel into an error so
// that no panic crosses the public API.
func RunSafely(op Operator) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return op.Run()
}
