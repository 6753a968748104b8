package workspace_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/workspace"
)

// TestKernelThreadsNeverExceedGOMAXPROCS creates nets at GOMAXPROCS 4 and
// runs them after GOMAXPROCS changed: every operator's budget is read
// against GOMAXPROCS when it runs, so a program that lowers it gets no
// more threads per kernel than it allows — neither from a kernel_threads
// argument larger than GOMAXPROCS nor from a share of the cores worked out
// before it changed — and a program that raises it gets its share of the
// new cores.
func TestKernelThreadsNeverExceedGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, tc := range []struct {
		name string
		net  *netdef.NetDef
		want map[int]int32 // GOMAXPROCS at the run: budget of each operator
	}{
		{"dag, 2 devices", threadsNet("dag", 2), map[int]int32{4: 2, 2: 1, 1: 1, 8: 4}},
		{"dag, 1 device", threadsNet("dag", 1), map[int]int32{4: 4, 2: 2, 1: 1}},
		{"kernel_threads 64", threadsNet("", 1, netdef.ArgInt(workspace.KernelThreadsArg, 64)), map[int]int32{4: 4, 2: 2, 1: 1}},
		{"dag, 2 devices, kernel_threads 3", threadsNet("dag", 2, netdef.ArgInt(workspace.KernelThreadsArg, 3)), map[int]int32{4: 3, 2: 2, 8: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runtime.GOMAXPROCS(4)
			ws := workspace.New(t.TempDir())
			defer ws.Close()
			if err := ws.CreateNet(tc.net, false); err != nil {
				t.Fatal(err)
			}
			for _, procs := range []int{4, 2, 1, 8} {
				want, ok := tc.want[procs]
				if !ok {
					continue
				}
				runtime.GOMAXPROCS(procs)
				if err := ws.RunNet(tc.net.GetName(), 1); err != nil {
					t.Fatal(err)
				}
				for d := range tc.net.GetOp() {
					x, err := ws.FetchBlob(fmt.Sprintf("t%d", d))
					if err != nil {
						t.Fatal(err)
					}
					if got := blob.Data[int32](x)[0]; got != want {
						t.Errorf("GOMAXPROCS %d: operator on cpu_%d has %d kernel threads, want %d", procs, d, got, want)
					}
				}
			}
		})
	}
}
