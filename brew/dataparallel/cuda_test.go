//go:build cuda && cgo

package dataparallel_test

import (
	"fmt"
	"testing"

	"github.com/caffe2go/caffe2go/devicescope/cuda"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/comm"
)

// Four logical GPUs, whatever the machine has, so that N-device training
// runs on one GPU (each logical device has its own stream and worker).
func init() { cuda.ShareGPUs(4) }

// TestLeNetEquivGPU is TestLeNetEquiv on CUDA: LeNet trained on 2 and 4
// logical GPUs with batch B each matches 1 GPU with batch N·B, and 1 GPU
// matches the CPU. cuDNN's forward algorithms depend on the batch size and
// round differently from the CPU's GEMM, so the bounds are looser than on
// the CPU (where N devices agree to rtol 1e-5).
func TestLeNetEquivGPU(t *testing.T) {
	batches := lenetBatches(11, 50, 8)
	cpu := trainLeNet(t, []int{0}, "", batches)
	one := trainLeNetOn(t, netdef.CUDA, []int{0}, "", batches)
	for name, w := range cpu {
		if err := allclose(one[name], w, 1e-3, 1e-5); err != nil {
			t.Errorf("1 GPU against the CPU: %s: %v", name, err)
		}
	}
	for _, engine := range []string{comm.SumTree} {
		for _, n := range []int{2, 4} {
			t.Run(fmt.Sprintf("%s/%d", engine, n), func(t *testing.T) {
				devices := make([]int, n)
				for i := range devices {
					devices[i] = i
				}
				got := trainLeNetOn(t, netdef.CUDA, devices, engine, batches)
				for name, w := range one {
					if err := allclose(got[name], w, 1e-4, 1e-6); err != nil {
						t.Errorf("%s: %v", name, err)
					}
				}
			})
		}
	}
}
