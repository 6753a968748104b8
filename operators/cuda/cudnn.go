//go:build cuda && cgo

package cuda

/*
#cgo LDFLAGS: -lcudnn
#include "cudnn_calls.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/devicescope/cuda"
	"github.com/caffe2go/caffe2go/operators/internal/convargs"
)

// maxWorkspace bounds the scratch memory a convolution algorithm may use.
const maxWorkspace = 1 << 30

// cudnn is a device's cuDNN handle (bound to its stream) and the scratch
// memory its convolutions share; the device's operators run one at a time
// on its worker, so one workspace serves them all.
type cudnn struct {
	h       C.cudnnHandle_t
	dev     *cuda.Device
	ws      devicescope.Memory
	wsBytes int
}

func newCudnn(d *cuda.Device) (*cudnn, error) {
	c := &cudnn{dev: d}
	if err := dnnCheck("cudnnCreate", C.cudnnCreate(&c.h)); err != nil {
		return nil, fmt.Errorf("cuda: gpu_%d: %w", d.Key().ID, err)
	}
	if err := dnnCheck("cudnnSetStream", C.cudnnSetStream(c.h, C.cudnnStream_t(d.Stream()))); err != nil {
		return nil, fmt.Errorf("cuda: gpu_%d: %w", d.Key().ID, err)
	}
	return c, nil
}

// workspace returns scratch memory of at least n bytes (its address, 0 for
// none), growing the shared block when needed. It runs on the worker.
func (c *cudnn) workspace(n int) (C.uintptr_t, error) {
	if n == 0 {
		return 0, nil
	}
	if n > c.wsBytes {
		m, err := c.dev.Allocate(n)
		if err != nil {
			return 0, fmt.Errorf("cuDNN workspace of %d bytes: %w", n, err)
		}
		c.ws, c.wsBytes = m, n
	}
	return C.uintptr_t(c.ws.(*cuda.Block).Ptr()), nil
}

func dnnCheck(call string, s C.cudnnStatus_t) error {
	if s == C.CUDNN_STATUS_SUCCESS {
		return nil
	}
	return fmt.Errorf("%s: %s (cuDNN status %d)", call, C.GoString(C.cudnnGetErrorString(s)), int(s))
}

func dnnType(dt blob.DataType) C.int {
	if dt == blob.Float64 {
		return C.CUDNN_DATA_DOUBLE
	}
	return C.CUDNN_DATA_FLOAT
}

func isDouble(dt blob.DataType) C.int { return cBool(dt == blob.Float64) }

// descriptors are the cuDNN descriptors one operator owns; they are freed
// with it.
type descriptors struct {
	tensors []C.cudnnTensorDescriptor_t
	filter  C.cudnnFilterDescriptor_t
	conv    C.cudnnConvolutionDescriptor_t
	pool    C.cudnnPoolingDescriptor_t
}

// newDescriptors creates n tensor descriptors and, as asked, a filter, a
// convolution and a pooling descriptor.
func newDescriptors(n int, filter, conv, pool bool) (*descriptors, error) {
	d := &descriptors{tensors: make([]C.cudnnTensorDescriptor_t, n)}
	for i := range d.tensors {
		if err := dnnCheck("cudnnCreateTensorDescriptor", C.cudnnCreateTensorDescriptor(&d.tensors[i])); err != nil {
			return nil, err
		}
	}
	if filter {
		if err := dnnCheck("cudnnCreateFilterDescriptor", C.cudnnCreateFilterDescriptor(&d.filter)); err != nil {
			return nil, err
		}
	}
	if conv {
		if err := dnnCheck("cudnnCreateConvolutionDescriptor", C.cudnnCreateConvolutionDescriptor(&d.conv)); err != nil {
			return nil, err
		}
	}
	if pool {
		if err := dnnCheck("cudnnCreatePoolingDescriptor", C.cudnnCreatePoolingDescriptor(&d.pool)); err != nil {
			return nil, err
		}
	}
	runtime.AddCleanup(d, freeDescriptors, *d)
	return d, nil
}

func freeDescriptors(d descriptors) {
	for _, t := range d.tensors {
		C.cudnnDestroyTensorDescriptor(t)
	}
	if d.filter != nil {
		C.cudnnDestroyFilterDescriptor(d.filter)
	}
	if d.conv != nil {
		C.cudnnDestroyConvolutionDescriptor(d.conv)
	}
	if d.pool != nil {
		C.cudnnDestroyPoolingDescriptor(d.pool)
	}
}

// imageDims returns the cuDNN dimensions (N, C, spatial…, at least two
// spatial) and strides of an image tensor of n images, c channels and
// spatial sizes sp in storage order o. 1-D images get a leading spatial
// dimension of 1.
func imageDims(o convargs.Order, n, c int, sp []int) (dims, strides []C.int) {
	for len(sp) < 2 {
		sp = append([]int{1}, sp...)
	}
	dims = append([]C.int{C.int(n), C.int(c)}, cInts(sp)...)
	strides = make([]C.int, len(dims))
	if o == convargs.NHWC {
		// Channels are innermost, then the spatial dimensions, last first.
		s := 1
		strides[1] = 1
		s *= c
		for i := len(sp) - 1; i >= 0; i-- {
			strides[2+i] = C.int(s)
			s *= sp[i]
		}
		strides[0] = C.int(s)
		return dims, strides
	}
	s := 1
	for i := len(dims) - 1; i >= 0; i-- {
		strides[i] = C.int(s)
		s *= int(dims[i])
	}
	return dims, strides
}

func cInts(v []int) []C.int {
	out := make([]C.int, len(v))
	for i, x := range v {
		out[i] = C.int(x)
	}
	return out
}

// setTensor sets a tensor descriptor from dims and strides.
func setTensor(t C.cudnnTensorDescriptor_t, dt blob.DataType, dims, strides []C.int) error {
	return dnnCheck("cudnnSetTensorNdDescriptor", C.cudnnSetTensorNdDescriptor(t, dnnType(dt), C.int(len(dims)), &dims[0], &strides[0]))
}

// windowParams returns a window's kernel, head pads, strides and
// dilations over at least two spatial dimensions (1-D windows get a leading
// dimension of 1), and whether its pads are symmetric, which cuDNN needs.
func windowParams(w *convargs.Window) (k, pad, stride, dil []C.int, symmetric bool) {
	first := convargs.MaxSpatial - max(w.ND, 2)
	symmetric = true
	for i := first; i < convargs.MaxSpatial; i++ {
		k = append(k, C.int(w.K[i]))
		pad = append(pad, C.int(w.Pad[i]))
		stride = append(stride, C.int(w.S[i]))
		dil = append(dil, C.int(w.D[i]))
		if w.Pad[i] != w.Tail[i] {
			symmetric = false
		}
	}
	return k, pad, stride, dil, symmetric
}

// perf is what the _v7 algorithm queries return.
type perf = C.cudnnAlgoPerf_t

// pickAlgo returns the first algorithm of results (cuDNN's heuristic order)
// that works, fits maxWorkspace and, when deterministic is set, gives the
// same bits on every run.
func pickAlgo(results []perf, deterministic bool) (C.int, error) {
	for _, p := range results {
		if p.status != C.CUDNN_STATUS_SUCCESS || p.memory > maxWorkspace {
			continue
		}
		if deterministic && p.determinism != C.CUDNN_DETERMINISTIC {
			continue
		}
		return C.int(p.algo), nil
	}
	return 0, fmt.Errorf("cuDNN offers no usable algorithm (deterministic %v)", deterministic)
}

// algoResults is room for the algorithm queries' answers.
const algoResults = 16

func perfSlice() ([]perf, *perf) {
	r := make([]perf, algoResults)
	return r, (*perf)(unsafe.Pointer(&r[0]))
}
