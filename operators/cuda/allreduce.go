//go:build cuda && cgo

package cuda

/*
#cgo LDFLAGS: -lnccl
#include "nccl_min.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope/cuda"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/comm"
)

// NCCL is the engine name of the all-reduce between GPUs through NCCL.
const NCCL = "NCCL"

// defaultTimeout bounds how long an all-reduce may take before it is
// aborted and reported, instead of hanging (the operator argument
// timeout_ms overrides it).
const defaultTimeout = 5 * time.Minute

func init() {
	peer := func(b *operators.Base, n int) comm.Engine { return &peerTree{b: b} }
	comm.MustRegisterEngine(netdef.CUDA, "", peer)
	comm.MustRegisterEngine(netdef.CUDA, comm.SumTree, peer)
	comm.MustRegisterEngine(netdef.CUDA, NCCL, func(b *operators.Base, n int) comm.Engine {
		return &ncclEngine{b: b, timeout: time.Duration(b.ArgInt("timeout_ms", int64(defaultTimeout/time.Millisecond))) * time.Millisecond}
	})
}

// peerTree sums the replicas into the first one, in replica order, with
// peer copies and an add kernel on the first replica's device, then copies
// the sum back to the others: Caffe2's SUM_TREE on one host. It also works
// for logical devices that share one GPU (ShareGPUs), where NCCL cannot.
type peerTree struct {
	b       *operators.Base
	g       *gpu
	add     typedNumeric
	a       *cuda.Args
	scratch *blob.Tensor
	bufs    []*blob.Tensor
	err     error
}

func (e *peerTree) Allreduce(bufs []*blob.Tensor) error {
	if e.g == nil {
		d, ok := bufs[0].Storage().(*cuda.Block)
		if !ok {
			return fmt.Errorf("replica 0 is not on a GPU")
		}
		g, err := gpuOf(d.Device())
		if err != nil {
			return err
		}
		if e.add, err = g.numericKernel("add_into"); err != nil {
			return err
		}
		e.g, e.a, e.scratch = g, cuda.NewArgs(3), &blob.Tensor{}
		e.scratch.SetDevice(d.Device().Option())
	}
	for i, t := range bufs {
		if b, ok := t.Storage().(*cuda.Block); !ok && t.Size() > 0 {
			return fmt.Errorf("replica %d (%q) is not on a GPU", i, e.b.InputName(i))
		} else if ok && i == 0 && b.Device() != e.g.dev {
			return fmt.Errorf("replica 0 (%q) moved from %v to %v", e.b.InputName(0), e.g.dev.Key(), b.Device().Key())
		}
	}
	e.bufs = bufs
	return e.g.dev.Exec(e)
}

// RunOnDevice runs on the first replica's device.
func (e *peerTree) RunOnDevice() error {
	sum := e.bufs[0]
	k, ok := e.add[sum.DataType()]
	if !ok {
		return fmt.Errorf("cannot all-reduce %v tensors", sum.DataType())
	}
	n := int64(sum.Size())
	for _, t := range e.bufs[1:] {
		if err := e.scratch.CopyFrom(t); err != nil {
			return err
		}
		e.a.Mem(0, e.scratch.Storage(), 0)
		e.a.Mem(1, sum.Storage(), 0)
		e.a.Int64(2, n)
		if err := launch1D(k, n, e.a); err != nil {
			return err
		}
	}
	if err := e.g.dev.Synchronize(); err != nil {
		return err
	}
	for _, t := range e.bufs[1:] {
		if err := t.CopyFrom(sum); err != nil {
			return err
		}
	}
	return nil
}

// ncclEngine all-reduces with NCCL: one communicator per operator over
// the replicas' GPUs, created at the first run, and one in-place ncclAllReduce
// per replica on its device's stream, in one group.
type ncclEngine struct {
	b       *operators.Base
	timeout time.Duration
	comms   []C.ncclComm_t
	devs    []*cuda.Device
}

func ncclCheck(call string, r C.ncclResult_t) error {
	if r == C.ncclSuccess {
		return nil
	}
	return fmt.Errorf("%s: %s (NCCL result %d)", call, C.GoString(C.ncclGetErrorString(r)), int(r))
}

func ncclType(dt blob.DataType) (C.int, error) {
	switch dt {
	case blob.Float32:
		return C.ncclFloat32, nil
	case blob.Float64:
		return C.ncclFloat64, nil
	case blob.Int32:
		return C.ncclInt32, nil
	case blob.Int64:
		return C.ncclInt64, nil
	}
	return 0, fmt.Errorf("NCCL cannot all-reduce %v tensors", dt)
}

func (e *ncclEngine) init(bufs []*blob.Tensor) error {
	devs := make([]*cuda.Device, len(bufs))
	list := make([]C.int, len(bufs))
	seen := map[int]int{}
	for i, t := range bufs {
		b, ok := t.Storage().(*cuda.Block)
		if !ok {
			return fmt.Errorf("replica %d (%q) is not on a GPU", i, e.b.InputName(i))
		}
		devs[i] = b.Device()
		gpu := devs[i].GPU()
		if j, dup := seen[gpu]; dup {
			return fmt.Errorf("replicas %d and %d are on one GPU (%d): NCCL needs a GPU per replica; use engine %s for logical devices sharing a GPU",
				j, i, gpu, comm.SumTree)
		}
		seen[gpu] = i
		list[i] = C.int(gpu)
	}
	comms := make([]C.ncclComm_t, len(bufs))
	if err := ncclCheck("ncclCommInitAll", C.ncclCommInitAll(&comms[0], C.int(len(comms)), &list[0])); err != nil {
		return err
	}
	e.comms, e.devs = comms, devs
	return nil
}

func (e *ncclEngine) Allreduce(bufs []*blob.Tensor) error {
	if e.comms == nil {
		if err := e.init(bufs); err != nil {
			return err
		}
	}
	dt, err := ncclType(bufs[0].DataType())
	if err != nil {
		return err
	}
	for i, t := range bufs {
		if b, ok := t.Storage().(*cuda.Block); !ok || b.Device() != e.devs[i] {
			return fmt.Errorf("replica %d (%q) is not on %v any more", i, e.b.InputName(i), e.devs[i].Key())
		}
	}
	// Every replica's earlier work is on its stream, which the collective
	// joins: enqueue the group, then wait for the streams, aborting the
	// communicators if that takes longer than the timeout.
	if err := ncclCheck("ncclGroupStart", C.ncclGroupStart()); err != nil {
		return err
	}
	var enqueueErr error
	for i, t := range bufs {
		r := C.c2g_nccl_allreduce(C.uintptr_t(t.Storage().(*cuda.Block).Ptr()), C.size_t(t.Size()), dt, e.comms[i], unsafe.Pointer(e.devs[i].Stream()))
		if err := ncclCheck("ncclAllReduce", r); err != nil && enqueueErr == nil {
			enqueueErr = fmt.Errorf("replica %d (%q): %w", i, e.b.InputName(i), err)
		}
	}
	if err := ncclCheck("ncclGroupEnd", C.ncclGroupEnd()); err != nil {
		return errors.Join(enqueueErr, err)
	}
	if enqueueErr != nil {
		return enqueueErr
	}
	done := make(chan error, 1)
	go func() {
		var errs []error
		for _, d := range e.devs {
			errs = append(errs, d.Synchronize())
		}
		done <- errors.Join(errs...)
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(e.timeout):
		for _, c := range e.comms {
			C.ncclCommAbort(c)
		}
		e.comms = nil
		<-done
		return fmt.Errorf("NCCL all-reduce of %d replicas took longer than %v and was aborted", len(bufs), e.timeout)
	}
}
