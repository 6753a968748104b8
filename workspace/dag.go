package workspace

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/operators"
)

// dagExecutor runs operators as soon as the operators they depend on have
// finished, each on a worker of its own device, so that the per-device
// replicas of a data-parallel net run at the same time. The dependency graph
// is built once; a run allocates nothing.
type dagExecutor struct {
	ops      []operators.Operator
	children [][]int32
	parents  []int32 // number of parents of each op
	roots    []int32
	tasks    []dagTask
	devices  []devicescope.Device

	pending   []atomic.Int32 // parents still running, per op
	remaining atomic.Int32   // ops not yet finished in this run
	failed    atomic.Bool
	ctx       context.Context // the current run's
	errMu     sync.Mutex
	err       error
	done      chan struct{}
}

type dagTask struct {
	e  *dagExecutor
	op int32
}

func (t *dagTask) Run() { t.e.runTask(t.op) }

func newDAGExecutor(n *Net) (executor, error) {
	workers := int(n.def.GetNumWorkers())
	if workers < 1 {
		workers = 1
	}
	e := &dagExecutor{
		ops:      n.ops,
		children: make([][]int32, len(n.ops)),
		parents:  make([]int32, len(n.ops)),
		tasks:    make([]dagTask, len(n.ops)),
		devices:  make([]devicescope.Device, len(n.ops)),
		pending:  make([]atomic.Int32, len(n.ops)),
		done:     make(chan struct{}, 1),
	}
	for i, deps := range dependencies(n) {
		for _, p := range deps {
			e.children[p] = append(e.children[p], int32(i))
		}
		e.parents[i] = int32(len(deps))
		if len(deps) == 0 {
			e.roots = append(e.roots, int32(i))
		}
	}
	for i, op := range n.ops {
		e.tasks[i] = dagTask{e: e, op: int32(i)}
		e.devices[i] = op.OpBase().Device()
		e.devices[i].EnsureWorkers(workers)
	}
	return e, nil
}

// dependencies returns, for each operator, the earlier operators it must
// wait for: the last writer of each input and control input
// (read-after-write), and the last writer and the readers since then of each
// output (write-after-write, write-after-read).
func dependencies(n *Net) [][]int {
	lastWriter := map[string]int{}
	readers := map[string][]int{}
	deps := make([][]int, len(n.ops))
	for i, op := range n.ops {
		d := op.OpBase().Def()
		set := map[int]bool{}
		for _, names := range [][]string{d.GetInput(), d.GetControlInput()} {
			for _, in := range names {
				if w, ok := lastWriter[in]; ok {
					set[w] = true
				}
			}
		}
		for _, out := range d.GetOutput() {
			if w, ok := lastWriter[out]; ok {
				set[w] = true
			}
			for _, r := range readers[out] {
				set[r] = true
			}
		}
		delete(set, i)
		for p := range set {
			deps[i] = append(deps[i], p)
		}
		for _, in := range d.GetInput() {
			readers[in] = append(readers[in], i)
		}
		for _, out := range d.GetOutput() {
			lastWriter[out] = i
			readers[out] = nil
		}
	}
	return deps
}

func (e *dagExecutor) run(ctx context.Context) error {
	if len(e.ops) == 0 {
		return nil
	}
	e.ctx = ctx
	for i := range e.pending {
		e.pending[i].Store(e.parents[i])
	}
	e.remaining.Store(int32(len(e.ops)))
	e.failed.Store(false)
	e.err = nil
	for _, r := range e.roots {
		e.devices[r].Submit(&e.tasks[r])
	}
	<-e.done
	e.ctx = nil
	return e.err
}

// runTask runs one operator (unless the run already failed, in which case
// it only passes completion on) and schedules the children it unblocks.
func (e *dagExecutor) runTask(i int32) {
	if !e.failed.Load() {
		if err := runOp(e.ctx, e.ops, int(i)); err != nil {
			e.errMu.Lock()
			if e.err == nil {
				e.err = err
			}
			e.errMu.Unlock()
			e.failed.Store(true)
		}
	}
	for _, c := range e.children[i] {
		if e.pending[c].Add(-1) == 0 {
			e.devices[c].Submit(&e.tasks[c])
		}
	}
	if e.remaining.Add(-1) == 0 {
		e.done <- struct{}{}
	}
}
