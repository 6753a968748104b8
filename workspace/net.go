package workspace

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// Net is an instantiated net: its operators bound to the workspace's blobs
// and an executor that runs them. Runs of one net are serialized.
type Net struct {
	name string
	def  *netdef.NetDef
	ops  []operators.Operator
	exec executor
	mu   sync.Mutex
}

// executor runs a net's operators once.
type executor interface {
	run() error
}

// executorFactory builds an executor for a net's operators.
type executorFactory func(n *Net) (executor, error)

var executors = map[string]executorFactory{
	"":                   newSimpleExecutor,
	"simple":             newSimpleExecutor,
	"singlethread_async": newSimpleExecutor,
	"dag":                newDAGExecutor,
	"async_dag":          newDAGExecutor,
	"async_scheduling":   newDAGExecutor,
	"async_polling":      newDAGExecutor,
	"prof_dag":           newDAGExecutor,
	"parallel":           newDAGExecutor,
}

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

// Run runs the net once.
func (n *Net) Run() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.exec.run(); err != nil {
		return fmt.Errorf("net %q: %w", n.name, err)
	}
	return nil
}

// newNet checks def as Caffe2 does at net construction and instantiates its
// operators in ws.
func newNet(def *netdef.NetDef, ws *Workspace) (*Net, error) {
	mkExec, ok := executors[def.GetType()]
	if !ok {
		return nil, fmt.Errorf("net type %q does not exist (known types: %s)", def.GetType(), strings.Join(ExecutorTypes(), ", "))
	}
	if err := checkDeclarations(def); err != nil {
		return nil, err
	}
	n := &Net{name: def.GetName(), def: proto.Clone(def).(*netdef.NetDef)}
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
		op, err := operators.Create(d, ws, i)
		if err != nil {
			return nil, err
		}
		n.ops[i] = op
	}
	exec, err := mkExec(n)
	if err != nil {
		return nil, err
	}
	n.exec = exec
	return n, nil
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

// runOp runs one operator, turning an error or a panic into an OpError that
// names it.
func runOp(ops []operators.Operator, i int) error {
	if err := operators.RunSafely(ops[i]); err != nil {
		d := ops[i].OpBase().Def()
		return &operators.OpError{Index: i, Type: d.GetType(), Name: d.GetName(), Err: err}
	}
	return nil
}

// simpleExecutor runs operators in order and stops at the first error.
type simpleExecutor struct{ ops []operators.Operator }

func newSimpleExecutor(n *Net) (executor, error) { return &simpleExecutor{ops: n.ops}, nil }

func (e *simpleExecutor) run() error {
	for i := range e.ops {
		if err := runOp(e.ops, i); err != nil {
			return err
		}
	}
	return nil
}
