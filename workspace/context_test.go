package workspace_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/workspace"
)

// TestRunNetContextStopsBetweenOperators cancels the run from inside its
// third operator: the operators before it have run, none after it starts,
// and the error names the net and the first operator that did not run.
func TestRunNetContextStopsBetweenOperators(t *testing.T) {
	for _, typ := range []string{"simple", "dag"} {
		t.Run(typ, func(t *testing.T) {
			ws := workspace.New("")
			if err := ws.FeedBlob("x", []float32{0}); err != nil {
				t.Fatal(err)
			}
			n := incNet("chain_"+typ, [2]string{"x", "a"}, [2]string{"a", "b"})
			n.Type = proto.String(typ)
			n.Op = append(n.Op,
				netdef.NewOperator("TestCancel", []string{"b"}, []string{"b"}),
				netdef.NewOperator("TestInc", []string{"b"}, []string{"c"}),
				netdef.NewOperator("TestInc", []string{"c"}, []string{"d"}))
			if err := ws.CreateNet(n, false); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cancelHook = cancel
			err := ws.RunNetContext(ctx, n.GetName(), 5)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want one wrapping context.Canceled", err)
			}
			for _, want := range []string{n.GetName(), "operator 3 TestInc", "not started"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
			if got := scalar(t, ws, "b"); got != 2 {
				t.Errorf("b = %v, want 2 (the operators before the cancellation ran)", got)
			}
			if ws.HasBlob("c") {
				if c, err := ws.FetchBlob("c"); err == nil && c.Size() > 0 {
					t.Errorf("operator 3 ran after the cancellation: c = %v", c)
				}
			}
			// The net and the workspace stay usable.
			cancelHook = func() {}
			if err := ws.RunNet(n.GetName(), 1); err != nil {
				t.Fatal(err)
			}
			if got := scalar(t, ws, "d"); got != 4 {
				t.Errorf("after a fresh run d = %v, want 4", got)
			}
		})
	}
}

// TestRunPlanContextEndsALongPlan stops a plan of a billion iterations, and
// one whose should_stop_blob never becomes true, by the context's deadline.
func TestRunPlanContextEndsALongPlan(t *testing.T) {
	steps := map[string]*netdef.ExecutionStep{
		"num_iter":  {Name: proto.String("long"), Network: []string{"inc"}, NumIter: proto.Int64(1e9)},
		"stop_blob": {Name: proto.String("forever"), Network: []string{"inc"}, ShouldStopBlob: proto.String("never")},
		"periodic": {Name: proto.String("outer"), Substep: []*netdef.ExecutionStep{
			{Name: proto.String("tick"), Network: []string{"inc2"}, RunEveryMs: proto.Int64(1)},
			{Name: proto.String("long"), Network: []string{"inc"}, NumIter: proto.Int64(1e9)},
		}},
	}
	for name, step := range steps {
		t.Run(name, func(t *testing.T) {
			ws := workspace.New("")
			_ = ws.FeedBlob("counter", []float32{0})
			_ = ws.FeedBlob("counter2", []float32{0})
			plan := &netdef.PlanDef{
				Name: proto.String("p"),
				Network: []*netdef.NetDef{
					incNet("inc", [2]string{"counter", "counter"}),
					incNet("inc2", [2]string{"counter2", "counter2"}),
				},
				ExecutionStep: []*netdef.ExecutionStep{step},
			}
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := ws.RunPlanContext(ctx, plan)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want one wrapping context.DeadlineExceeded", err)
			}
			if !strings.Contains(err.Error(), `plan "p"`) {
				t.Errorf("error %q does not name the plan", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the plan took %v to stop", d)
			}
			if got := scalar(t, ws, "counter"); got < 1 {
				t.Errorf("counter = %v: the plan did not run before the deadline", got)
			}
		})
	}
}

// TestCreateNetOverwriteWhileRunning re-creates a net while other
// goroutines run it: no run fails, none sees the net missing, runs of the
// old and new net never overlap (run under -race), and a failed overwrite
// keeps the old net.
func TestCreateNetOverwriteWhileRunning(t *testing.T) {
	for _, typ := range []string{"simple", "dag"} {
		t.Run(typ, func(t *testing.T) {
			ws := workspace.New("")
			_ = ws.FeedBlob("counter", []float32{0})
			def := incNet("loop", [2]string{"counter", "tmp"}, [2]string{"tmp", "counter"})
			def.Type = proto.String(typ)
			if err := ws.CreateNet(def, false); err != nil {
				t.Fatal(err)
			}
			const runners, runs, recreations = 4, 50, 20
			var wg sync.WaitGroup
			errs := make(chan error, runners*runs+recreations)
			for g := 0; g < runners; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < runs; i++ {
						if err := ws.RunNet("loop", 1); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			for i := 0; i < recreations; i++ {
				if err := ws.CreateNet(def, true); err != nil {
					errs <- err
				}
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if got := scalar(t, ws, "counter"); got != 2*runners*runs {
				t.Errorf("counter = %v, want %d: runs overlapped or were lost", got, 2*runners*runs)
			}

			bad := incNet("loop", [2]string{"nope", "tmp"})
			err := ws.CreateNet(bad, true)
			if !errors.Is(err, workspace.ErrBlobNotFound) {
				t.Fatalf("overwrite with a missing input: err = %v, want ErrBlobNotFound", err)
			}
			if err := ws.RunNet("loop", 1); err != nil {
				t.Fatalf("the old net is gone after a failed overwrite: %v", err)
			}
		})
	}
}

// TestSentinelErrors: the errors of everyday mistakes match the sentinels
// with errors.Is and still read as before.
func TestSentinelErrors(t *testing.T) {
	ws := workspace.New("")
	_ = ws.FeedBlob("x", []float32{1})
	name := "unknown_op"
	cases := []struct {
		name string
		err  error
		want error
		text string
	}{
		{"FetchBlob", func() error { _, err := ws.FetchBlob("missing"); return err }(), workspace.ErrBlobNotFound, `can't find blob: "missing"`},
		{"ResetBlob", ws.ResetBlob("missing"), workspace.ErrBlobNotFound, `"missing"`},
		{"RunNet", ws.RunNet("no_net", 1), workspace.ErrNetNotFound, `can't find net "no_net"`},
		{"CreateNet unknown type", ws.CreateNet(&netdef.NetDef{Name: &name, Op: []*netdef.OperatorDef{
			netdef.NewOperator("NoSuchOperatorType", []string{"x"}, []string{"y"})}}, false),
			workspace.ErrUnknownOperator, "NoSuchOperatorType"},
		{"CreateNet missing input", ws.CreateNet(incNet("missing_input", [2]string{"nope", "y"}), false),
			workspace.ErrBlobNotFound, `"nope"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !errors.Is(c.err, c.want) {
				t.Fatalf("err = %v, want one wrapping %v", c.err, c.want)
			}
			if !strings.Contains(c.err.Error(), c.text) {
				t.Errorf("error %q does not say %q", c.err, c.text)
			}
		})
	}
}
