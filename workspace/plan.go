package workspace

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
)

// RunPlan runs a plan (or a bare execution step, wrapped in a plan): its
// steps in order, each step's nets created from the plan's NetDefs on first
// use (replacing an existing net of that name) and left registered
// afterwards.
func (w *Workspace) RunPlan(src netdef.PlanSource) error {
	return w.RunPlanContext(context.Background(), src)
}

// RunPlanContext runs a plan as RunPlan does unless ctx ends first: no net
// run and no step iteration starts once ctx is done, periodic substeps
// stop, and the error wraps ctx.Err().
func (w *Workspace) RunPlanContext(ctx context.Context, src netdef.PlanSource) error {
	plan := src.PlanProto()
	p := &planRun{ctx: ctx, defs: map[string]*netdef.NetDef{}, created: map[*Workspace]map[string]bool{}}
	for _, n := range plan.GetNetwork() {
		if _, dup := p.defs[n.GetName()]; dup {
			return fmt.Errorf("workspace: plan %q: duplicate net name %q", plan.GetName(), n.GetName())
		}
		p.defs[n.GetName()] = n
	}
	for _, step := range plan.GetExecutionStep() {
		if err := p.runStep(step, w); err != nil {
			return fmt.Errorf("workspace: plan %q: %w", plan.GetName(), err)
		}
	}
	return nil
}

// PlanHandle reports on a plan started with RunPlanInBackground.
type PlanHandle struct {
	done chan struct{}
	err  error
}

// IsDone reports whether the plan has finished.
func (h *PlanHandle) IsDone() bool {
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}

// Wait blocks until the plan finishes and returns its error.
func (h *PlanHandle) Wait() error {
	<-h.done
	return h.err
}

// RunPlanInBackground starts RunPlan in a goroutine.
func (w *Workspace) RunPlanInBackground(src netdef.PlanSource) *PlanHandle {
	h := &PlanHandle{done: make(chan struct{})}
	go func() {
		defer close(h.done)
		h.err = w.RunPlan(src)
	}()
	return h
}

type planRun struct {
	ctx     context.Context
	defs    map[string]*netdef.NetDef
	mu      sync.Mutex
	created map[*Workspace]map[string]bool
}

// net returns the named net of ws, creating it from the plan's definition
// the first time this plan uses it in ws.
func (p *planRun) net(ws *Workspace, name string) (*Net, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.created[ws][name] {
		def, ok := p.defs[name]
		if !ok {
			if n := ws.GetNet(name); n != nil {
				return n, nil
			}
			return nil, fmt.Errorf("net %q is not defined in the plan", name)
		}
		if err := ws.CreateNet(def, true); err != nil {
			return nil, err
		}
		if p.created[ws] == nil {
			p.created[ws] = map[string]bool{}
		}
		p.created[ws][name] = true
	}
	return ws.GetNet(name), nil
}

func checkStep(s *netdef.ExecutionStep) error {
	switch {
	case len(s.GetSubstep()) > 0 && len(s.GetNetwork()) > 0:
		return fmt.Errorf("step %q has both substeps and networks", s.GetName())
	case s.NumIter != nil && s.GetShouldStopBlob() != "":
		return fmt.Errorf("step %q sets both num_iter and should_stop_blob", s.GetName())
	case s.GetOnlyOnce() && s.GetShouldStopBlob() == "":
		return fmt.Errorf("step %q sets only_once without should_stop_blob", s.GetName())
	}
	return nil
}

func (p *planRun) runStep(s *netdef.ExecutionStep, ws *Workspace) error {
	if err := checkStep(s); err != nil {
		return err
	}
	if s.GetCreateWorkspace() {
		ws = ws.NewChild()
	}
	shouldStop := func() (bool, error) {
		name := s.GetShouldStopBlob()
		if name == "" {
			return false, nil
		}
		// Until a net has written the blob, the step keeps going, as in Caffe2.
		b := ws.GetBlob(name)
		if b == nil || b.IsEmpty() {
			return false, nil
		}
		if b.Tensor() == nil {
			return false, fmt.Errorf("step %q: should_stop_blob %q holds %s, not a bool tensor", s.GetName(), name, b.TypeName())
		}
		v := blob.Data[bool](b.Tensor())
		if len(v) != 1 {
			return false, fmt.Errorf("step %q: should_stop_blob %q must be a scalar bool, got %v", s.GetName(), name, b.Tensor())
		}
		return v[0], nil
	}
	if s.GetReportNet() != "" {
		// The deprecated report net runs every report_interval seconds
		// beside the step, like a run_every_ms substep.
		report := &netdef.ExecutionStep{
			Name:       proto.String(s.GetName() + "/report"),
			Network:    []string{s.GetReportNet()},
			RunEveryMs: proto.Int64(int64(max(s.GetReportInterval(), 1)) * 1000),
		}
		stopReport := p.startPeriodic([]*netdef.ExecutionStep{report}, ws)
		err := p.runIterations(s, ws, shouldStop)
		if rerr := stopReport(); err == nil {
			err = rerr
		}
		return err
	}
	return p.runIterations(s, ws, shouldStop)
}

func (p *planRun) runIterations(s *netdef.ExecutionStep, ws *Workspace, shouldStop func() (bool, error)) error {
	iters := int64(1)
	if s.NumIter != nil {
		iters = s.GetNumIter()
	}
	for it := int64(0); s.GetShouldStopBlob() != "" || it < iters; it++ {
		if err := p.ctx.Err(); err != nil {
			return fmt.Errorf("step %q: iteration %d not started: %w", s.GetName(), it, contextError(p.ctx))
		}
		stop, err := p.runStepOnce(s, ws, shouldStop)
		if err != nil {
			return err
		}
		if stop || s.GetOnlyOnce() {
			return nil
		}
	}
	return nil
}

// runStepOnce runs one iteration of a step's substeps or nets, checking the
// stop blob after each; it reports whether the step should stop.
func (p *planRun) runStepOnce(s *netdef.ExecutionStep, ws *Workspace, shouldStop func() (bool, error)) (bool, error) {
	if len(s.GetSubstep()) == 0 {
		for _, name := range s.GetNetwork() {
			n, err := p.net(ws, name)
			if err != nil {
				return false, fmt.Errorf("step %q: %w", s.GetName(), err)
			}
			if err := n.RunContext(p.ctx); err != nil {
				return false, fmt.Errorf("step %q: %w", s.GetName(), err)
			}
			if stop, err := shouldStop(); stop || err != nil {
				return stop, err
			}
		}
		return false, nil
	}
	var regular, periodic []*netdef.ExecutionStep
	for _, sub := range s.GetSubstep() {
		if sub.GetRunEveryMs() > 0 {
			periodic = append(periodic, sub)
		} else {
			regular = append(regular, sub)
		}
	}
	stopPeriodic := p.startPeriodic(periodic, ws)
	var err error
	stop := false
	if s.GetConcurrentSubsteps() {
		err = p.runConcurrently(s, regular, ws)
		if err == nil {
			stop, err = shouldStop()
		}
	} else {
		for _, sub := range regular {
			if err = p.runStep(sub, ws); err != nil {
				break
			}
			if stop, err = shouldStop(); stop || err != nil {
				break
			}
		}
	}
	if perr := stopPeriodic(); err == nil {
		err = perr
	}
	return stop, err
}

func (p *planRun) runConcurrently(s *netdef.ExecutionStep, subs []*netdef.ExecutionStep, ws *Workspace) error {
	instances := int(s.GetNumConcurrentInstances())
	if instances < 1 {
		instances = 1
	}
	var wg sync.WaitGroup
	errs := make([]error, len(subs)*instances)
	for k := 0; k < instances; k++ {
		for i, sub := range subs {
			wg.Add(1)
			go func(slot int, sub *netdef.ExecutionStep) {
				defer wg.Done()
				errs[slot] = p.runStep(sub, ws)
			}(k*len(subs)+i, sub)
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// startPeriodic runs each periodic substep every run_every_ms beside its
// siblings; the returned function stops them, runs each once more and
// returns the first error any of them hit.
func (p *planRun) startPeriodic(subs []*netdef.ExecutionStep, ws *Workspace) func() error {
	if len(subs) == 0 {
		return func() error { return nil }
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	errs := make([]error, len(subs))
	for i, sub := range subs {
		wg.Add(1)
		go func(i int, sub *netdef.ExecutionStep) {
			defer wg.Done()
			tick := time.NewTicker(time.Duration(sub.GetRunEveryMs()) * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-quit:
					if errs[i] == nil {
						errs[i] = p.runStep(sub, ws)
					}
					return
				case <-p.ctx.Done():
					return
				case <-tick.C:
					if errs[i] == nil {
						errs[i] = p.runStep(sub, ws)
					}
				}
			}
		}(i, sub)
	}
	return func() error {
		close(quit)
		wg.Wait()
		return errors.Join(errs...)
	}
}
