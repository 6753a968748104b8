package workspace

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// Net is an instantiated net: its operators bound to the workspace's blobs
// and an executor that runs them. Runs of one net are serialized.
type Net struct {
	name    string
	def     *netdef.NetDef
	ops     []operators.Operator
	devices []devicescope.Device // the devices other than the CPU its operators run on
	exec    executor
	// mu serializes runs; a net that replaces another of the same name
	// (CreateNet with overwrite) shares its mutex.
	mu *sync.Mutex
}

// executor runs a net's operators once, checking ctx before each
// operator.
type executor interface {
	run(ctx context.Context) error
}

// executorFactory builds an executor for a net's operators.
type executorFactory func(n *Net) (executor, error)

// executorType is a net type's executor.
type executorType struct {
	build executorFactory
	// concurrent: the executor runs the operators of different devices at
	// the same time.
	concurrent bool
}

var executors = map[string]executorType{
	"":                   {newSimpleExecutor, false},
	"simple":             {newSimpleExecutor, false},
	"singlethread_async": {newSimpleExecutor, false},
	"dag":                {newDAGExecutor, true},
	"async_dag":          {newDAGExecutor, true},
	"async_scheduling":   {newDAGExecutor, true},
	"async_polling":      {newDAGExecutor, true},
	"prof_dag":           {newDAGExecutor, true},
	"parallel":           {newDAGExecutor, true},
}

// KernelThreadsArg is the net argument (an int, at least 1) that sets the
// kernel thread budget of every operator of the net, operators.Base.Threads:
// the most goroutines one kernel call may split its work into. Without it
// a net whose executor runs the operators of several CPU devices at once
// (dag and its aliases) gives each operator an equal share of the cores,
// GOMAXPROCS at each call divided by the number of CPU devices (at least 1),
// so that data-parallel replicas share the cores instead of each splitting
// its kernels over all of them, which brings LeNet training on 2 devices
// of batch 32 closer to 1 device of batch 64 using both cores
// (BenchmarkLeNet in examples/dataparallel). Any other net's operators use
// GOMAXPROCS at each call. No budget exceeds GOMAXPROCS at the time of
// the call, whatever the argument says.
const KernelThreadsArg = "kernel_threads"

// ExecutorTypes returns the net types (NetDef.type values) this runtime
// accepts, sorted; "" means "simple".
func ExecutorTypes() []string {
	out := make([]string, 0, len(executors))
	for k := range executors {
		if k != "" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Name returns the net's name.
func (n *Net) Name() string { return n.name }

// Proto returns a copy of the definition the net was created from.
func (n *Net) Proto() *netdef.NetDef { return proto.Clone(n.def).(*netdef.NetDef) }

// NumOperators returns the number of operators.
func (n *Net) NumOperators() int { return len(n.ops) }

// Run runs the net once. It returns when the work is done on every device
// the net uses, also on devices that work asynchronously (a GPU's
// stream), so that a run's time is its work's.
func (n *Net) Run() error { return n.RunContext(context.Background()) }

// RunContext runs the net once, as Run does, unless ctx ends first: ctx is
// checked before each operator starts, and once it is done no further
// operator starts, the operators already running finish, and the error
// names the net and the first operator that did not run and wraps
// ctx.Err() (errors.Is(err, context.Canceled)). Blobs keep what the
// operators that ran wrote.
func (n *Net) RunContext(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.exec.run(ctx); err != nil {
		return fmt.Errorf("net %q: %w", n.name, err)
	}
	for _, d := range n.devices {
		if err := d.Synchronize(); err != nil {
			return fmt.Errorf("net %q: %v: %w", n.name, d.Key(), err)
		}
	}
	return nil
}

// newNet checks def as Caffe2 does at net construction and instantiates its
// operators in ws.
func newNet(def *netdef.NetDef, ws *Workspace) (*Net, error) {
	ex, ok := executors[def.GetType()]
	if !ok {
		return nil, fmt.Errorf("net type %q does not exist (known types: %s)", def.GetType(), strings.Join(ExecutorTypes(), ", "))
	}
	if err := checkDeclarations(def); err != nil {
		return nil, err
	}
	threads, err := kernelThreads(def, ex.concurrent)
	if err != nil {
		return nil, err
	}
	n := &Net{name: def.GetName(), def: proto.Clone(def).(*netdef.NetDef), mu: new(sync.Mutex)}
	n.ops = make([]operators.Operator, len(def.GetOp()))
	for i, opDef := range def.GetOp() {
		if opDef.GetDeviceOption().GetNodeName() != "" {
			return nil, &operators.OpError{Index: i, Type: opDef.GetType(), Name: opDef.GetName(), Err: fmt.Errorf("node_name must be empty for all operators at execution time")}
		}
		d := opDef
		if d.DeviceOption == nil && def.DeviceOption != nil {
			d = proto.Clone(opDef).(*netdef.OperatorDef)
			d.DeviceOption = proto.Clone(def.DeviceOption).(*netdef.DeviceOption)
		}
		op, err := operators.CreateWithThreads(d, ws, i, threads)
		if err != nil {
			return nil, err
		}
		n.ops[i] = op
	}
	if err := operators.CheckDevices(n.ops); err != nil {
		return nil, err
	}
	seen := map[devicescope.Device]bool{}
	for _, op := range n.ops {
		if d := op.OpBase().Device(); !seen[d] && d.Key().Type != netdef.CPU {
			seen[d] = true
			n.devices = append(n.devices, d)
		}
	}
	exec, err := ex.build(n)
	if err != nil {
		return nil, err
	}
	n.exec = exec
	return n, nil
}

// kernelThreads returns the kernel thread budget of def's operators: the
// KernelThreadsArg argument where the net has one, else, for a concurrent
// executor running the operators of several CPU devices, an equal share of
// GOMAXPROCS for each device.
func kernelThreads(def *netdef.NetDef, concurrent bool) (operators.ThreadBudget, error) {
	if a := netdef.FindArg(def.GetArg(), KernelThreadsArg); a != nil {
		if a.I == nil || a.GetI() < 1 {
			return operators.ThreadBudget{}, fmt.Errorf("net argument %s must be an integer of at least 1, got %v", KernelThreadsArg, a)
		}
		return operators.ThreadBudget{Max: int(a.GetI())}, nil
	}
	if !concurrent {
		return operators.ThreadBudget{}, nil
	}
	cpus := map[devicescope.Key]bool{}
	for _, op := range def.GetOp() {
		opt := op.GetDeviceOption()
		if opt == nil {
			opt = def.GetDeviceOption()
		}
		if opt.Type() == netdef.CPU {
			cpus[devicescope.KeyOf(opt)] = true
		}
	}
	return operators.ThreadBudget{Share: len(cpus)}, nil
}

// checkDeclarations enforces Caffe2's declared-input rule (only when the net
// declares external inputs) and its declared-output rule.
func checkDeclarations(def *netdef.NetDef) error {
	known := map[string]bool{}
	for _, in := range def.GetExternalInput() {
		known[in] = true
	}
	strict := len(def.GetExternalInput()) > 0
	for i, op := range def.GetOp() {
		if strict {
			for _, in := range op.GetInput() {
				if !known[in] {
					return &operators.OpError{Index: i, Type: op.GetType(), Name: op.GetName(),
						Err: fmt.Errorf("source for input %q is unknown for net %q: it is neither an external input nor produced by an earlier operator", in, def.GetName())}
				}
			}
		}
		for _, out := range op.GetOutput() {
			known[out] = true
		}
	}
	for _, out := range def.GetExternalOutput() {
		if !known[out] {
			return fmt.Errorf("some of the blobs are declared as output but never produced by the net %q, the first one is %q", def.GetName(), out)
		}
	}
	return nil
}

// runOp runs one operator unless ctx is done, turning an error or a panic
// into an OpError that names it.
func runOp(ctx context.Context, ops []operators.Operator, i int) error {
	if err := ctx.Err(); err != nil {
		d := ops[i].OpBase().Def()
		return &operators.OpError{Index: i, Type: d.GetType(), Name: d.GetName(), Err: fmt.Errorf("not started: %w", contextError(ctx))}
	}
	ops[i].OpBase().SetContext(ctx)
	if err := operators.RunSafely(ops[i]); err != nil {
		d := ops[i].OpBase().Def()
		return &operators.OpError{Index: i, Type: d.GetType(), Name: d.GetName(), Err: err}
	}
	return nil
}

// contextError returns the error of a done ctx: ctx.Err(), with the cause
// it was cancelled with when there is one of its own (context.Cause), so
// that errors.Is finds both and the message says why ("context canceled
// (interrupted)").
func contextError(ctx context.Context) error {
	err := ctx.Err()
	if cause := context.Cause(ctx); cause != nil && cause != err {
		return fmt.Errorf("%w (%w)", err, cause)
	}
	return err
}

// simpleExecutor runs operators in order and stops at the first error.
type simpleExecutor struct{ ops []operators.Operator }

func newSimpleExecutor(n *Net) (executor, error) { return &simpleExecutor{ops: n.ops}, nil }

func (e *simpleExecutor) run(ctx context.Context) error {
	for i := range e.ops {
		if err := runOp(ctx, e.ops, i); err != nil {
			return err
		}
	}
	return nil
}
