//go:build cuda && cgo

package cuda

/*
#cgo LDFLAGS: -lcuda
#include <cuda.h>
#include <pthread.h>

static int c2g_same_thread(pthread_t t) { return pthread_equal(t, pthread_self()); }
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
)

func init() {
	devicescope.MustRegisterDeviceType(netdef.CUDA, newDevice, NumDevices)
}

// NumDevices returns the number of GPUs the driver reports, or the number
// of logical devices ShareGPUs set.
func NumDevices() int {
	shared.Lock()
	n := shared.n
	shared.Unlock()
	if n > 0 {
		return n
	}
	n, err := cu.NumDevices()
	if err != nil {
		return 0
	}
	return n
}

var shared struct {
	sync.Mutex
	n int
}

// ShareGPUs makes gpu_0 … gpu_{n-1} logical devices laid over the
// machine's GPUs in turn (gpu_i on GPU i mod the GPU count), each with its
// own stream and worker, as several CPU devices share the cores. It lets
// multi-device code (data parallelism, all-reduce) run and be tested on a
// machine with fewer GPUs. Call it before the first CUDA device is used; n
// ≤ 0 goes back to one device per GPU.
func ShareGPUs(n int) { shared.Lock(); shared.n = n; shared.Unlock() }

// Runner is work for a device's worker (Exec).
type Runner interface {
	// RunOnDevice runs on the device's worker thread, with the device's
	// context current.
	RunOnDevice() error
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func() error

// RunOnDevice calls f.
func (f RunnerFunc) RunOnDevice() error { return f() }

// Device is one GPU (or one logical device on a GPU, see ShareGPUs): its
// primary context, a stream, and the OS-locked worker that makes every
// driver call for it.
type Device struct {
	id           int32
	gpu          cu.Device
	ctx          cu.CUContext
	cctx         C.CUcontext // ctx, as the driver's own handle
	stream       C.CUstream
	major, minor int
	name         string

	exec   sync.Mutex // one Exec at a time
	work   chan Runner
	done   chan error
	thread C.pthread_t // the worker's OS thread

	tasks chan devicescope.Task
	poolN int
	poolM sync.Mutex

	alloc allocator

	resM      sync.Mutex
	resources map[any]any
}

func newDevice(id int32) (devicescope.Device, error) {
	count, err := cu.NumDevices()
	if err != nil {
		return nil, fmt.Errorf("cuda: counting GPUs: %w", err)
	}
	if count == 0 {
		return nil, errors.New("cuda: the driver reports no GPU")
	}
	if int(id) >= NumDevices() {
		return nil, fmt.Errorf("cuda: gpu_%d does not exist: the machine has %d GPUs (ShareGPUs lays more logical devices over them)", id, NumDevices())
	}
	gpu, err := cu.GetDevice(int(id) % count)
	if err != nil {
		return nil, fmt.Errorf("cuda: gpu_%d: %w", id, err)
	}
	d := &Device{id: id, gpu: gpu, work: make(chan Runner), done: make(chan error), tasks: make(chan devicescope.Task, 1024)}
	d.alloc.free = map[int][]cu.DevicePtr{}
	if d.name, err = gpu.Name(); err != nil {
		return nil, fmt.Errorf("cuda: gpu_%d: %w", id, err)
	}
	if d.major, d.minor, err = gpu.ComputeCapability(); err != nil {
		return nil, fmt.Errorf("cuda: gpu_%d: %w", id, err)
	}
	started := make(chan error)
	go d.worker(started)
	if err := <-started; err != nil {
		return nil, err
	}
	return d, nil
}

// worker owns the device's OS thread: it makes the primary context current
// there once and runs every Runner Exec hands it.
func (d *Device) worker(started chan<- error) {
	runtime.LockOSThread()
	d.thread = C.pthread_self()
	ctx, err := d.gpu.RetainPrimaryCtx()
	if err == nil {
		d.ctx = ctx
		err = cu.SetCurrentContext(ctx)
	}
	if err == nil {
		err = check("cuCtxGetCurrent", C.cuCtxGetCurrent(&d.cctx))
	}
	if err == nil {
		err = check("cuStreamCreate", C.cuStreamCreate(&d.stream, C.CU_STREAM_NON_BLOCKING))
	}
	if err != nil {
		started <- fmt.Errorf("cuda: starting gpu_%d (%s): %w", d.id, d.name, err)
		return
	}
	started <- nil
	for r := range d.work {
		d.done <- runSafely(r)
	}
}

// runSafely runs r, turning a panic into an error so that the worker
// survives it.
func runSafely(r Runner) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("cuda: panic on the device worker: %v", p)
		}
	}()
	return r.RunOnDevice()
}

// onWorker reports whether the caller runs on the device's worker thread.
func (d *Device) onWorker() bool { return C.c2g_same_thread(d.thread) != 0 }

// Exec runs r on the device's worker and returns its error. Called from
// the worker itself (by a Runner), it runs r at once.
func (d *Device) Exec(r Runner) error {
	if d.onWorker() {
		return runSafely(r)
	}
	d.exec.Lock()
	d.work <- r
	err := <-d.done
	d.exec.Unlock()
	return err
}

// Key implements devicescope.Device.
func (d *Device) Key() devicescope.Key { return devicescope.Key{Type: netdef.CUDA, ID: d.id} }

// Option implements devicescope.Device.
func (d *Device) Option() *netdef.DeviceOption { return netdef.NewDeviceOption(netdef.CUDA, d.id) }

// Name returns the GPU's name, as the driver reports it.
func (d *Device) Name() string { return d.name }

// ComputeCapability returns the GPU's compute capability.
func (d *Device) ComputeCapability() (major, minor int) { return d.major, d.minor }

// Stream returns the device's CUstream, for libraries (cuBLAS, cuDNN, NCCL)
// that take one; use it only on the worker.
func (d *Device) Stream() unsafe.Pointer { return unsafe.Pointer(d.stream) }

// EnsureWorkers implements devicescope.Device: it grows the pool of
// goroutines that run executors' tasks (which hand GPU work to the
// worker).
func (d *Device) EnsureWorkers(n int) {
	d.poolM.Lock()
	defer d.poolM.Unlock()
	for ; d.poolN < n; d.poolN++ {
		go func() {
			for t := range d.tasks {
				t.Run()
			}
		}()
	}
}

// Submit implements devicescope.Device.
func (d *Device) Submit(t devicescope.Task) {
	d.EnsureWorkers(1)
	select {
	case d.tasks <- t:
	default:
		go t.Run()
	}
}

// Synchronize implements devicescope.Device: it waits until the work
// queued on the device's stream has finished. It waits on the calling
// thread (with the device's context pushed there), not through the worker,
// so that one device's worker may wait for another's stream without the
// two workers ever waiting for each other.
func (d *Device) Synchronize() error {
	if d.onWorker() {
		return d.sync()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := check("cuCtxPushCurrent", C.cuCtxPushCurrent(d.cctx)); err != nil {
		return fmt.Errorf("cuda: gpu_%d: %w", d.id, err)
	}
	err := d.sync()
	var popped C.CUcontext
	C.cuCtxPopCurrent(&popped)
	return err
}

func (d *Device) sync() error {
	if err := check("cuStreamSynchronize", C.cuStreamSynchronize(d.stream)); err != nil {
		return fmt.Errorf("cuda: gpu_%d: %w", d.id, err)
	}
	return nil
}

// GPU returns the ordinal of the physical GPU the device runs on (several
// logical devices share one under ShareGPUs).
func (d *Device) GPU() int { return int(d.gpu) }

// Resource returns the device's value for key, calling create on the
// worker the first time: a per-device handle (cuBLAS, cuDNN) or module
// that operators share.
func (d *Device) Resource(key any, create func(d *Device) (any, error)) (any, error) {
	d.resM.Lock()
	v, ok := d.resources[key]
	d.resM.Unlock()
	if ok {
		return v, nil
	}
	err := d.Exec(RunnerFunc(func() error {
		d.resM.Lock()
		defer d.resM.Unlock()
		if _, ok := d.resources[key]; ok {
			return nil
		}
		nv, err := create(d)
		if err != nil {
			return err
		}
		if d.resources == nil {
			d.resources = map[any]any{}
		}
		d.resources[key] = nv
		return nil
	}))
	if err != nil {
		return nil, err
	}
	d.resM.Lock()
	defer d.resM.Unlock()
	return d.resources[key], nil
}

// check turns a driver result into an error naming the call.
func check(call string, r C.CUresult) error {
	if r == C.CUDA_SUCCESS {
		return nil
	}
	var name, desc *C.char
	C.cuGetErrorName(r, &name)
	C.cuGetErrorString(r, &desc)
	if name == nil || desc == nil {
		return fmt.Errorf("%s: CUDA error %d", call, int(r))
	}
	return &DriverError{Call: call, Code: int(r), Name: C.GoString(name), Desc: C.GoString(desc)}
}

// DriverError is a failed CUDA driver call.
type DriverError struct {
	Call string // the driver function
	Code int    // its CUresult
	Name string // CUDA_ERROR_…
	Desc string // the driver's description
}

func (e *DriverError) Error() string { return fmt.Sprintf("%s: %s (%s)", e.Call, e.Name, e.Desc) }

// OutOfMemory reports whether the error is the driver's
// CUDA_ERROR_OUT_OF_MEMORY.
func (e *DriverError) OutOfMemory() bool { return e.Code == int(C.CUDA_ERROR_OUT_OF_MEMORY) }
