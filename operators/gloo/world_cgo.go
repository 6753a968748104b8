//go:build gloo && cgo

package gloo

// -O3: Gloo's reduce functions (gloo/math.h) are templates compiled
// here, and cgo's default -O2 leaves their loops scalar.

/*
#cgo CXXFLAGS: -std=c++17 -O3
#cgo LDFLAGS: -lgloo -lstdc++
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"runtime/cgo"
	"sync"
	"time"
	"unsafe"

	"github.com/caffe2go/caffe2go/blob"
)

// commonWorld is a Gloo context: this process's connections to every
// other rank, the value of a common world blob. Collectives on it may run
// concurrently when their tags differ. The first failure breaks it: its
// connections are closed, and every later collective fails with ErrBroken.
type commonWorld struct {
	c          *C.c2g_world
	rank, size int
	timeout    time.Duration

	mu     sync.Mutex
	broken *CollectiveError
}

// BlobTypeName is the blob type Caffe2 gives a common world.
func (w *commonWorld) BlobTypeName() string { return "std::shared_ptr<gloo::Context>" }

func (w *commonWorld) String() string {
	return fmt.Sprintf("gloo common world (rank %d of %d)", w.rank, w.size)
}

// worldOptions configure newWorld.
type worldOptions struct {
	timeout         time.Duration // rendezvous and collective deadline
	iface, hostname string        // what the TCP device listens on
}

// newWorld meets the other ranks through s and connects to each.
func newWorld(s Store, rank, size int, o worldOptions) (*commonWorld, error) {
	if o.timeout <= 0 {
		o.timeout = DefaultTimeout
	}
	h := cgo.NewHandle(s)
	defer h.Delete()
	iface, host := C.CString(o.iface), C.CString(o.hostname)
	defer C.free(unsafe.Pointer(iface))
	defer C.free(unsafe.Pointer(host))
	var c *C.c2g_world
	if msg := C.c2g_world_new(C.uintptr_t(h), C.int(rank), C.int(size), C.int64_t(o.timeout.Milliseconds()), iface, host, &c); msg != nil {
		cause := goError(msg)
		return nil, &CollectiveError{Op: "rendezvous", Rank: rank, Size: size, Cause: cause, TimedOut: isTimeout(cause)}
	}
	w := &commonWorld{c: c, rank: rank, size: size, timeout: o.timeout}
	runtime.AddCleanup(w, func(c *C.c2g_world) { C.c2g_world_free(c) }, c)
	return w, nil
}

func goError(msg *C.char) string {
	defer C.free(unsafe.Pointer(msg))
	return C.GoString(msg)
}

// run runs one collective unless the world is broken, and breaks it when
// the collective fails.
func (w *commonWorld) run(op string, f func() *C.char) error {
	w.mu.Lock()
	broken := w.broken
	w.mu.Unlock()
	if broken != nil {
		return &CollectiveError{Op: op, Rank: w.rank, Size: w.size, Cause: broken.Error(), Earlier: true}
	}
	msg := f()
	runtime.KeepAlive(w)
	if msg == nil {
		return nil
	}
	cause := goError(msg)
	err := &CollectiveError{Op: op, Rank: w.rank, Size: w.size, Cause: cause, TimedOut: isTimeout(cause)}
	w.mu.Lock()
	if w.broken == nil {
		w.broken = err
	}
	w.mu.Unlock()
	return err
}

// close closes the world's connections; later collectives fail.
func (w *commonWorld) close() {
	w.mu.Lock()
	if w.broken == nil {
		w.broken = &CollectiveError{Op: "DestroyCommonWorld", Rank: w.rank, Size: w.size, Cause: "closed by DestroyCommonWorld"}
	}
	w.mu.Unlock()
	C.c2g_world_close(w.c)
	runtime.KeepAlive(w)
}

// dtypeCode maps an element type to the shim's.
func dtypeCode(d blob.DataType) (C.int, bool) {
	switch d {
	case blob.Float32:
		return C.C2G_FLOAT, true
	case blob.Float64:
		return C.C2G_DOUBLE, true
	case blob.Int32:
		return C.C2G_INT32, true
	case blob.Int64:
		return C.C2G_INT64, true
	}
	return 0, false
}

// ms converts a deadline for the shim.
func ms(d time.Duration) C.int64_t { return C.int64_t(max(d.Milliseconds(), 1)) }

// allreduce sums bufs (same dtype and size; dtypeCode accepts the dtype)
// here and on every rank, in place.
func (w *commonWorld) allreduce(bufs []*blob.Tensor, tag uint32, timeout time.Duration) error {
	count := bufs[0].Size()
	if count == 0 {
		return nil
	}
	code, _ := dtypeCode(bufs[0].DataType())
	var pin runtime.Pinner
	defer pin.Unpin()
	ptrs := (*[1 << 20]unsafe.Pointer)(C.malloc(C.size_t(len(bufs)) * C.size_t(unsafe.Sizeof(unsafe.Pointer(nil)))))[:len(bufs):len(bufs)]
	defer C.free(unsafe.Pointer(&ptrs[0]))
	for i, b := range bufs {
		p, _, _ := rawBytes(b)
		pin.Pin(p)
		ptrs[i] = p
	}
	return w.run("allreduce", func() *C.char {
		return C.c2g_allreduce(w.c, &ptrs[0], C.int(len(bufs)), C.size_t(count), code, C.uint32_t(tag), ms(timeout))
	})
}

// broadcast copies root's n bytes at p to every rank's.
func (w *commonWorld) broadcast(p unsafe.Pointer, n int, root int, tag uint32, timeout time.Duration) error {
	if n == 0 {
		return nil
	}
	return w.run("broadcast", func() *C.char {
		return C.c2g_broadcast(w.c, p, C.size_t(n), C.int(root), C.uint32_t(tag), ms(timeout))
	})
}

// allgather writes each rank r's n bytes at in to out + r·n.
func (w *commonWorld) allgather(in unsafe.Pointer, n int, out unsafe.Pointer, tag uint32, timeout time.Duration) error {
	if n == 0 {
		return nil
	}
	return w.run("allgather", func() *C.char {
		return C.c2g_allgather(w.c, in, C.size_t(n), out, C.uint32_t(tag), ms(timeout))
	})
}

// barrier returns once every rank has called it.
func (w *commonWorld) barrier(tag uint32, timeout time.Duration) error {
	return w.run("barrier", func() *C.char {
		return C.c2g_barrier(w.c, C.uint32_t(tag), ms(timeout))
	})
}
