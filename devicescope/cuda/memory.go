//go:build cuda && cgo

package cuda

/*
#include <cuda.h>
#include <stdint.h>

static CUresult c2g_htod(CUdeviceptr dst, const void *src, size_t n, CUstream s) { return cuMemcpyHtoDAsync(dst, src, n, s); }
static CUresult c2g_dtoh(void *dst, CUdeviceptr src, size_t n, CUstream s) {
	CUresult r = cuMemcpyDtoHAsync(dst, src, n, s);
	if (r != CUDA_SUCCESS) return r;
	return cuStreamSynchronize(s);
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/caffe2go/caffe2go/devicescope"
)

// Block is a block of one device's memory: the storage of a GPU tensor.
// Its memory goes back to the device's cache once the Block is
// unreachable.
type Block struct {
	ptr  cu.DevicePtr
	size int
	dev  *Device
}

// Bytes implements devicescope.Memory.
func (b *Block) Bytes() int { return b.size }

// Ptr returns the block's device address, for kernels and libraries.
func (b *Block) Ptr() uintptr { return uintptr(b.ptr) }

// Device returns the device the block belongs to.
func (b *Block) Device() *Device { return b.dev }

// allocator is a device's cache of free blocks by size class.
type allocator struct {
	mu     sync.Mutex
	free   map[int][]cu.DevicePtr
	cached int // bytes in free
	inUse  int // bytes handed out
}

// take returns a cached block of the class, if there is one.
func (a *allocator) take(class int) (cu.DevicePtr, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	l := a.free[class]
	if len(l) == 0 {
		return 0, false
	}
	p := l[len(l)-1]
	a.free[class] = l[:len(l)-1]
	a.cached -= class
	a.inUse += class
	return p, true
}

// put caches a block no tensor references any more.
func (a *allocator) put(r released) {
	a.mu.Lock()
	a.free[r.class] = append(a.free[r.class], r.ptr)
	a.cached += r.class
	a.inUse -= r.class
	a.mu.Unlock()
}

// drain takes every cached block out of the cache, to be freed.
func (a *allocator) drain() []cu.DevicePtr {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []cu.DevicePtr
	for class, l := range a.free {
		out = append(out, l...)
		delete(a.free, class)
	}
	a.cached = 0
	return out
}

// released is what a Block's cleanup gives back.
type released struct {
	ptr   cu.DevicePtr
	class int
}

// Allocate implements devicescope.Allocator: a zero-filled block of nbytes
// bytes, from the cache when it holds one of the size class.
func (d *Device) Allocate(nbytes int) (devicescope.Memory, error) {
	if nbytes < 0 {
		return nil, fmt.Errorf("cuda: gpu_%d: allocating %d bytes", d.id, nbytes)
	}
	var b *Block
	run := func() error {
		var err error
		b, err = d.allocate(nbytes)
		return err
	}
	var err error
	if d.onWorker() {
		err = run()
	} else {
		err = d.Exec(RunnerFunc(run))
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

// allocate runs on the worker.
func (d *Device) allocate(nbytes int) (*Block, error) {
	class := sizeClass(nbytes)
	ptr, ok := d.alloc.take(class)
	if !ok {
		var err error
		if ptr, err = d.memAlloc(class); err != nil {
			return nil, err
		}
	}
	if err := check("cuMemsetD8Async", C.cuMemsetD8Async(C.CUdeviceptr(ptr), 0, C.size_t(class), d.stream)); err != nil {
		d.alloc.put(released{ptr, class})
		return nil, fmt.Errorf("cuda: gpu_%d: %w", d.id, err)
	}
	b := &Block{ptr: ptr, size: nbytes, dev: d}
	runtime.AddCleanup(b, d.alloc.put, released{ptr, class})
	return b, nil
}

// memAlloc asks the driver for a block; when the device is out of memory
// it collects garbage (whose cleanups refill the cache), frees the cache
// and tries once more.
func (d *Device) memAlloc(class int) (cu.DevicePtr, error) {
	var p C.CUdeviceptr
	err := check("cuMemAlloc", C.cuMemAlloc(&p, C.size_t(class)))
	if de, ok := err.(*DriverError); ok && de.OutOfMemory() {
		runtime.GC()
		runtime.GC() // the first cycle queues the cleanups, the second lets them run
		if ptr, ok := d.alloc.take(class); ok {
			return ptr, nil
		}
		for _, q := range d.alloc.drain() {
			C.cuMemFree(C.CUdeviceptr(q))
		}
		err = check("cuMemAlloc", C.cuMemAlloc(&p, C.size_t(class)))
	}
	if err != nil {
		d.alloc.mu.Lock()
		inUse := d.alloc.inUse
		d.alloc.mu.Unlock()
		return 0, fmt.Errorf("cuda: gpu_%d: allocating %d bytes with %d in use: %w", d.id, class, inUse, err)
	}
	d.alloc.mu.Lock()
	d.alloc.inUse += class
	d.alloc.mu.Unlock()
	return cu.DevicePtr(p), nil
}

// MemoryStats returns the bytes of the device's memory that tensors hold
// and the bytes its cache keeps for reuse.
func (d *Device) MemoryStats() (inUse, cached int) {
	d.alloc.mu.Lock()
	defer d.alloc.mu.Unlock()
	return d.alloc.inUse, d.alloc.cached
}

// block checks that m is memory of a CUDA device and [off, off+n) lies in
// it, and returns its address at off.
func block(m devicescope.Memory, off, n int) (*Block, C.CUdeviceptr, error) {
	b, ok := m.(*Block)
	if !ok {
		return nil, 0, fmt.Errorf("cuda: %T is not GPU memory", m)
	}
	if off < 0 || n < 0 || off+n > b.size {
		return nil, 0, fmt.Errorf("cuda: bytes [%d, %d) outside a block of %d", off, off+n, b.size)
	}
	return b, C.CUdeviceptr(uintptr(b.ptr) + uintptr(off)), nil
}

// CopyFromHost implements devicescope.Copier. The bytes are staged by the
// driver before it returns, so src may change afterwards.
func (d *Device) CopyFromHost(dst devicescope.Memory, dstOff int, src []byte) error {
	_, p, err := block(dst, dstOff, len(src))
	if err != nil || len(src) == 0 {
		return err
	}
	run := func() error {
		return check("cuMemcpyHtoDAsync", C.c2g_htod(p, unsafe.Pointer(&src[0]), C.size_t(len(src)), d.stream))
	}
	if d.onWorker() {
		return run()
	}
	return d.Exec(RunnerFunc(run))
}

// CopyToHost implements devicescope.Copier; it returns once the bytes are
// in dst, after the work queued before it.
func (d *Device) CopyToHost(dst []byte, src devicescope.Memory, srcOff int) error {
	_, p, err := block(src, srcOff, len(dst))
	if err != nil || len(dst) == 0 {
		return err
	}
	run := func() error {
		return check("cuMemcpyDtoHAsync", C.c2g_dtoh(unsafe.Pointer(&dst[0]), p, C.size_t(len(dst)), d.stream))
	}
	if d.onWorker() {
		return run()
	}
	return d.Exec(RunnerFunc(run))
}

// CopyDevice implements devicescope.Copier. Within one context (one GPU,
// or logical devices sharing one) it queues a device-to-device copy after
// the source device's work; across GPUs it is a peer copy.
func (d *Device) CopyDevice(dst devicescope.Memory, dstOff int, src devicescope.Memory, srcOff, nbytes int) error {
	_, dp, err := block(dst, dstOff, nbytes)
	if err != nil {
		return err
	}
	sb, sp, err := block(src, srcOff, nbytes)
	if err != nil || nbytes == 0 {
		return err
	}
	if sb.dev != d {
		// The source's writes are on its own stream: wait for them.
		if err := sb.dev.Synchronize(); err != nil {
			return err
		}
	}
	run := func() error {
		if sb.dev.gpu == d.gpu {
			return check("cuMemcpyDtoDAsync", C.cuMemcpyDtoDAsync(dp, sp, C.size_t(nbytes), d.stream))
		}
		return check("cuMemcpyPeerAsync", C.cuMemcpyPeerAsync(dp, d.cctx, sp, sb.dev.cctx, C.size_t(nbytes), d.stream))
	}
	if d.onWorker() {
		return run()
	}
	return d.Exec(RunnerFunc(run))
}
