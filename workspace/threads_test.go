package workspace_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/workspace"
)

// threadsOp (TestThreads, no input, one output) writes its kernel thread
// budget into its output.
type threadsOp struct{ *operators.Base }

func (o *threadsOp) Run() error {
	y := o.Output(0)
	if err := y.Init(blob.Int32); err != nil {
		return err
	}
	blob.Data[int32](y)[0] = int32(o.Threads())
	return nil
}

func init() {
	operators.MustRegister("TestThreads", netdef.CPU, "", func(b *operators.Base) (operators.Operator, error) { return &threadsOp{b}, nil })
}

// threadsNet is a net of the given type with one TestThreads operator on
// each of devices CPU devices, writing t0, t1, ….
func threadsNet(typ string, devices int, args ...*netdef.Argument) *netdef.NetDef {
	n := netdef.NewNet("threads")
	n.Proto().Type = &typ
	n.Proto().Arg = args
	for d := range devices {
		op := n.Op("TestThreads", nil, []string{fmt.Sprintf("t%d", d)})
		op.DeviceOption = devicescope.CPUDevice(d)
	}
	return n.Proto()
}

// TestKernelThreadBudget checks each net's kernel thread budget: all of
// GOMAXPROCS (read at each call) for one device or a sequential executor,
// an equal share per device when a dag net runs several CPU devices at
// once, and the kernel_threads argument when the net sets one.
func TestKernelThreadBudget(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, tc := range []struct {
		name    string
		net     *netdef.NetDef
		threads int32
	}{
		{"dag, 1 device", threadsNet("dag", 1), 4},
		{"dag, 2 devices", threadsNet("dag", 2), 2},
		{"async_scheduling, 3 devices", threadsNet("async_scheduling", 3), 1},
		{"dag, 8 devices", threadsNet("dag", 8), 1},
		{"simple, 2 devices", threadsNet("simple", 2), 4},
		{"dag, 2 devices, kernel_threads", threadsNet("dag", 2, netdef.ArgInt(workspace.KernelThreadsArg, 3)), 3},
		{"simple, kernel_threads", threadsNet("", 1, netdef.ArgInt(workspace.KernelThreadsArg, 1)), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := workspace.New(t.TempDir())
			defer ws.Close()
			if err := ws.RunNetOnce(tc.net); err != nil {
				t.Fatal(err)
			}
			for d := range tc.net.GetOp() {
				x, err := ws.FetchBlob(fmt.Sprintf("t%d", d))
				if err != nil {
					t.Fatal(err)
				}
				if got := blob.Data[int32](x)[0]; got != tc.threads {
					t.Errorf("operator on cpu_%d: %d kernel threads, want %d", d, got, tc.threads)
				}
			}
		})
	}
}

// TestKernelThreadsFollowGOMAXPROCS checks that a net without a share
// reads GOMAXPROCS when it runs, not when it was created.
func TestKernelThreadsFollowGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	ws := workspace.New(t.TempDir())
	defer ws.Close()
	net := threadsNet("dag", 1)
	if err := ws.CreateNet(net, false); err != nil {
		t.Fatal(err)
	}
	runtime.GOMAXPROCS(3)
	if err := ws.RunNet(net.GetName(), 1); err != nil {
		t.Fatal(err)
	}
	x, err := ws.FetchBlob("t0")
	if err != nil {
		t.Fatal(err)
	}
	if got := blob.Data[int32](x)[0]; got != 3 {
		t.Errorf("%d kernel threads, want GOMAXPROCS = 3", got)
	}
}

func TestKernelThreadsArgumentChecked(t *testing.T) {
	ws := workspace.New(t.TempDir())
	defer ws.Close()
	for _, a := range []*netdef.Argument{netdef.ArgInt(workspace.KernelThreadsArg, 0), netdef.ArgFloat(workspace.KernelThreadsArg, 2)} {
		err := ws.CreateNet(threadsNet("dag", 2, a), true)
		if err == nil {
			t.Errorf("argument %v: no error", a)
		}
	}
}
