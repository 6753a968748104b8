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
		return &ncclEngine{peerTree: peerTree{b: b}, timeout: time.Duration(b.ArgInt("timeout_ms", int64(defaultTimeout/time.Millisecond))) * time.Millisecond}
	})
}

// localSum sums replicas into the first of them on that one's device, in
// replica order, with peer copies and an add kernel, and copies the sum
// back to the others. It runs on the first replica's device.
type localSum struct {
	g       *gpu
	add     typedNumeric
	a       *cuda.Args
	scratch *blob.Tensor
	bufs    []*blob.Tensor
	phase   int // 0: sum into bufs[0]; 1: copy bufs[0] to the others
}

func newLocalSum(d *cuda.Device) (*localSum, error) {
	g, err := gpuOf(d)
	if err != nil {
		return nil, err
	}
	add, err := g.numericKernel("add_into")
	if err != nil {
		return nil, err
	}
	s := &localSum{g: g, add: add, a: cuda.NewArgs(3), scratch: &blob.Tensor{}}
	s.scratch.SetDevice(d.Option())
	return s, nil
}

// run does phase p for bufs on the first replica's device.
func (s *localSum) run(bufs []*blob.Tensor, p int) error {
	s.bufs, s.phase = bufs, p
	return s.g.dev.Exec(s)
}

func (s *localSum) RunOnDevice() error {
	sum := s.bufs[0]
	if s.phase == 1 {
		// A copy to another device waits for this one's stream first
		// (CopyDevice); on this device the stream orders it.
		for _, t := range s.bufs[1:] {
			if err := t.CopyFrom(sum); err != nil {
				return err
			}
		}
		return nil
	}
	k, ok := s.add[sum.DataType()]
	if !ok {
		return fmt.Errorf("cannot all-reduce %v tensors", sum.DataType())
	}
	n := int64(sum.Size())
	for _, t := range s.bufs[1:] {
		if err := s.scratch.CopyFrom(t); err != nil {
			return err
		}
		s.a.Mem(0, s.scratch.Storage(), 0)
		s.a.Mem(1, sum.Storage(), 0)
		s.a.Int64(2, n)
		if err := launch1D(k, n, s.a); err != nil {
			return err
		}
	}
	return nil
}

// replicaDevices checks that every replica is a GPU tensor and returns
// their devices, in devs when it is long enough.
func replicaDevices(b *operators.Base, bufs []*blob.Tensor, devs []*cuda.Device) ([]*cuda.Device, error) {
	if len(devs) < len(bufs) {
		devs = make([]*cuda.Device, len(bufs))
	}
	devs = devs[:len(bufs)]
	for i, t := range bufs {
		blk, ok := t.Storage().(*cuda.Block)
		if !ok {
			return nil, fmt.Errorf("replica %d (%q) is not on a GPU", i, b.InputName(i))
		}
		devs[i] = blk.Device()
	}
	return devs, nil
}

// peerTree sums the replicas into the first one and copies the sum back
// (localSum): Caffe2's SUM_TREE on one host. It also works for logical
// devices that share one GPU (ShareGPUs).
type peerTree struct {
	b    *operators.Base
	sums map[*cuda.Device]*localSum
	devs []*cuda.Device
}

func (e *peerTree) Allreduce(bufs []*blob.Tensor) error {
	devs, err := replicaDevices(e.b, bufs, e.devs)
	if err != nil {
		return err
	}
	e.devs = devs
	s, err := e.sum(devs[0])
	if err != nil {
		return err
	}
	if err := s.run(bufs, 0); err != nil {
		return err
	}
	return s.run(bufs, 1)
}

// sum returns the local sum working on device d.
func (e *peerTree) sum(d *cuda.Device) (*localSum, error) {
	if s, ok := e.sums[d]; ok {
		return s, nil
	}
	s, err := newLocalSum(d)
	if err != nil {
		return nil, err
	}
	if e.sums == nil {
		e.sums = map[*cuda.Device]*localSum{}
	}
	e.sums[d] = s
	return s, nil
}

// ncclEngine all-reduces with NCCL: one communicator per operator over
// the replicas' GPUs, created at the first run, and one in-place
// ncclAllReduce per GPU on its stream, in one group. Replicas that share a
// GPU (logical devices, ShareGPUs) are first summed into the first of them
// on that GPU and get the result back afterwards, so NCCL sees one rank per
// GPU.
type ncclEngine struct {
	peerTree
	timeout time.Duration
	comms   []C.ncclComm_t
	groups  [][]int          // replicas by GPU, the leader first
	members [][]*blob.Tensor // each group's replicas, refilled every run
	leaders []*cuda.Device
	lbufs   []*blob.Tensor
	done    chan error  // the streams' synchronization, from syncLeaders
	timer   *time.Timer // the deadline of a run
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

func (e *ncclEngine) init(devs []*cuda.Device) error {
	e.groups, e.leaders = nil, nil
	byGPU := map[int]int{}
	var list []C.int
	for i, d := range devs {
		g, ok := byGPU[d.GPU()]
		if !ok {
			g = len(e.groups)
			byGPU[d.GPU()] = g
			e.groups = append(e.groups, nil)
			e.leaders = append(e.leaders, d)
			list = append(list, C.int(d.GPU()))
		}
		e.groups[g] = append(e.groups[g], i)
	}
	comms := make([]C.ncclComm_t, len(list))
	if err := ncclCheck("ncclCommInitAll", C.ncclCommInitAll(&comms[0], C.int(len(comms)), &list[0])); err != nil {
		return err
	}
	e.comms = comms
	e.lbufs = make([]*blob.Tensor, len(list))
	e.members = make([][]*blob.Tensor, len(list))
	e.done = make(chan error, 1)
	return nil
}

func (e *ncclEngine) Allreduce(bufs []*blob.Tensor) error {
	devs, err := replicaDevices(e.b, bufs, e.devs)
	if err != nil {
		return err
	}
	e.devs = devs
	if e.comms == nil {
		if err := e.init(devs); err != nil {
			return err
		}
	}
	dt, err := ncclType(bufs[0].DataType())
	if err != nil {
		return err
	}
	for g, members := range e.groups {
		e.members[g] = e.members[g][:0]
		for _, i := range members {
			if devs[i].GPU() != e.leaders[g].GPU() {
				return fmt.Errorf("replica %d (%q) moved to %v", i, e.b.InputName(i), devs[i].Key())
			}
			e.members[g] = append(e.members[g], bufs[i])
		}
		e.lbufs[g] = bufs[members[0]]
	}
	// Replicas sharing a GPU: sum them into their leader first.
	if err := e.localRuns(0); err != nil {
		return err
	}
	if err := e.reduce(dt); err != nil {
		return err
	}
	return e.localRuns(1)
}

// localRuns runs phase p of the local sum of every GPU that holds several
// replicas.
func (e *ncclEngine) localRuns(p int) error {
	for _, group := range e.members {
		if len(group) < 2 {
			continue
		}
		s, err := e.sum(group[0].Storage().(*cuda.Block).Device())
		if err != nil {
			return err
		}
		if err := s.run(group, p); err != nil {
			return err
		}
	}
	return nil
}

// syncLeaders waits for every leader's stream and sends the first error.
func (e *ncclEngine) syncLeaders() {
	var first error
	for _, d := range e.leaders {
		if err := d.Synchronize(); err != nil && first == nil {
			first = err
		}
	}
	e.done <- first
}

// reduce all-reduces the leaders' buffers with NCCL.
func (e *ncclEngine) reduce(dt C.int) error {
	// Every replica's earlier work is on its stream, which the collective
	// joins: enqueue the group, then wait for the streams, aborting the
	// communicators if that takes longer than the timeout.
	if err := ncclCheck("ncclGroupStart", C.ncclGroupStart()); err != nil {
		return err
	}
	var enqueueErr error
	for g, t := range e.lbufs {
		r := C.c2g_nccl_allreduce(C.uintptr_t(t.Storage().(*cuda.Block).Ptr()), C.size_t(t.Size()), dt, e.comms[g], unsafe.Pointer(e.leaders[g].Stream()))
		if err := ncclCheck("ncclAllReduce", r); err != nil && enqueueErr == nil {
			enqueueErr = fmt.Errorf("replica %d (%q): %w", e.groups[g][0], e.b.InputName(e.groups[g][0]), err)
		}
	}
	if err := ncclCheck("ncclGroupEnd", C.ncclGroupEnd()); err != nil {
		return errors.Join(enqueueErr, err)
	}
	if enqueueErr != nil {
		return enqueueErr
	}
	if e.timer == nil {
		e.timer = time.NewTimer(e.timeout)
	} else {
		e.timer.Reset(e.timeout)
	}
	go e.syncLeaders()
	select {
	case err := <-e.done:
		e.timer.Stop()
		return err
	case <-e.timer.C:
		for _, c := range e.comms {
			C.ncclCommAbort(c)
		}
		e.comms = nil
		<-e.done
		return fmt.Errorf("NCCL all-reduce over %d GPUs took longer than %v and was aborted", len(e.leaders), e.timeout)
	}
}
