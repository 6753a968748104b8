package dataparallel_test

import (
	"testing"

	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/brew/dataparallel"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/workspace"
)

// TestKernelThreadsPerDevice checks that the option becomes the train
// net's kernel thread budget and that, without it, the net leaves the
// budget to the executor's per-device share.
func TestKernelThreadsPerDevice(t *testing.T) {
	for _, tc := range []struct {
		threads int
		want    int64 // 0: no argument
	}{{0, 0}, {1, 1}, {3, 3}} {
		m := brew.NewModel("kernel_threads")
		if _, err := dataparallel.Parallelize(m, dataparallel.Options{
			Devices: []int{0, 1}, KernelThreadsPerDevice: tc.threads,
			ForwardBuilder: fcForward(nil), ParamUpdateBuilder: perDeviceSGD(0.1),
		}); err != nil {
			t.Fatal(err)
		}
		a := netdef.FindArg(m.Net.Proto().GetArg(), workspace.KernelThreadsArg)
		switch {
		case tc.want == 0 && a != nil:
			t.Errorf("KernelThreadsPerDevice %d: net argument %v, want none", tc.threads, a)
		case tc.want != 0 && (a == nil || a.I == nil || a.GetI() != tc.want):
			t.Errorf("KernelThreadsPerDevice %d: net argument %v, want %d", tc.threads, a, tc.want)
		}
	}
}
