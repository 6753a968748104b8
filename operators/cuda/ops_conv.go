//go:build cuda && cgo

package cuda

/*
#include "cudnn_calls.h"
*/
import "C"

import (
	"fmt"
	"slices"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/internal/convargs"
)

// convLayout is the geometry a convolution's descriptors were set for,
// from the input and filter shapes; a run with other shapes sets them
// again.
type convLayout struct {
	x, w    []int
	win     convargs.Window
	n, c, m int
	y       []int // output dims
	cudnnOK bool  // symmetric pads and cuDNN's output size: else the host runs it
}

// convBase is what the cuDNN convolutions share: the parsed arguments, the
// descriptors (x, y, bias tensors; filter; convolution) and, for the
// windows cuDNN cannot do (asymmetric pads), the host fallback.
type convBase struct {
	op
	args     *convargs.Args
	d        *descriptors
	layout   convLayout
	fallback operators.Operator
}

func newConvBase(b *operators.Base) (convBase, error) {
	o, err := newOp(b)
	if err != nil {
		return convBase{}, err
	}
	a, err := convargs.Parse(b, convargs.KindConv)
	if err != nil {
		return convBase{}, err
	}
	d, err := newDescriptors(3, true, true, false)
	if err != nil {
		return convBase{}, err
	}
	fb, err := operators.HostFallback(b)
	if err != nil {
		return convBase{}, err
	}
	return convBase{op: o, args: a, d: d, fallback: fb}, nil
}

// inputs returns X and the filter and prepares the descriptors for them
// (see prepare).
func (o *convBase) inputs() (x, w *blob.Tensor, ok, changed bool, err error) {
	if x, err = o.floatInput(0); err != nil {
		return nil, nil, false, false, err
	}
	if w, err = o.floatInput(1); err != nil {
		return nil, nil, false, false, err
	}
	ok, changed, err = o.prepare(x, w)
	return x, w, ok, changed, err
}

// prepare sets the descriptors for x and filter w when their shapes
// changed (then changed is true) and reports whether cuDNN can run the
// convolution.
func (o *convBase) prepare(x, w *blob.Tensor) (ok, changed bool, err error) {
	if o.layout.x != nil && slices.Equal(x.Dims(), o.layout.x) && slices.Equal(w.Dims(), o.layout.w) {
		return o.layout.cudnnOK, false, nil
	}
	ok, err = o.setLayout(x, w)
	return ok, true, err
}

func (o *convBase) setLayout(x, w *blob.Tensor) (bool, error) {
	if x.NumDims() < 3 {
		return false, fmt.Errorf("input %q has shape %v; a convolution needs N, C and at least one spatial dimension", o.InputName(0), x.Dims())
	}
	n, c, sp := convargs.Spatial(x.Dims(), o.args.Order)
	win, err := o.args.Window(sp)
	if err != nil {
		return false, err
	}
	m := w.Dim(0)
	g := o.args.Group
	want := convargs.ImageShape(nil, o.args.Order, m, c/max(g, 1), o.args.Kernel)
	if c%g != 0 || m%g != 0 || !slices.Equal(w.Dims(), want) {
		return false, fmt.Errorf("filter %q has shape %v, want %v for X %q of shape %v with %d channels, group %d, kernel %v and order %v",
			o.InputName(1), w.Dims(), want, o.InputName(0), x.Dims(), c, g, o.args.Kernel, o.args.Order)
	}
	l := convLayout{x: slices.Clone(x.Dims()), w: slices.Clone(w.Dims()), win: win, n: n, c: c, m: m}
	l.y = convargs.ImageShape(nil, o.args.Order, n, m, win.OutDims(nil))
	k, pad, stride, dil, symmetric := windowParams(&win)
	dt := x.DataType()
	xd, xs := imageDims(o.args.Order, n, c, sp)
	yd, ys := imageDims(o.args.Order, n, m, win.OutDims(nil))
	if err := setTensor(o.d.tensors[0], dt, xd, xs); err != nil {
		return false, err
	}
	if err := setTensor(o.d.tensors[1], dt, yd, ys); err != nil {
		return false, err
	}
	// The bias: [1, M, 1, …] with the channels contiguous.
	bd, bs := make([]C.int, len(xd)), make([]C.int, len(xd))
	for i := range bd {
		bd[i], bs[i] = 1, C.int(m)
		if o.args.Order == convargs.NCHW {
			bs[i] = 1
		}
	}
	bd[1], bs[0], bs[1] = C.int(m), C.int(m), 1
	if err := setTensor(o.d.tensors[2], dt, bd, bs); err != nil {
		return false, err
	}
	format := C.int(C.CUDNN_TENSOR_NCHW)
	if o.args.Order == convargs.NHWC {
		format = C.CUDNN_TENSOR_NHWC
	}
	fd := append([]C.int{C.int(m), C.int(c / g)}, k...)
	if err := dnnCheck("cudnnSetFilterNdDescriptor", C.cudnnSetFilterNdDescriptor(o.d.filter, dnnType(dt), format, C.int(len(fd)), &fd[0])); err != nil {
		return false, err
	}
	if err := dnnCheck("cudnnSetConvolutionNdDescriptor", C.cudnnSetConvolutionNdDescriptor(o.d.conv, C.int(len(k)), &pad[0], &stride[0], &dil[0],
		C.CUDNN_CROSS_CORRELATION, dnnType(dt))); err != nil {
		return false, err
	}
	if err := dnnCheck("cudnnSetConvolutionGroupCount", C.cudnnSetConvolutionGroupCount(o.d.conv, C.int(g))); err != nil {
		return false, err
	}
	// Full FP32 (or FP64) arithmetic, no TF32 tensor cores: the results
	// must agree with the CPU's.
	if err := dnnCheck("cudnnSetConvolutionMathType", C.cudnnSetConvolutionMathType(o.d.conv, C.CUDNN_FMA_MATH)); err != nil {
		return false, err
	}
	l.cudnnOK = symmetric
	if symmetric {
		got := make([]C.int, len(yd))
		if err := dnnCheck("cudnnGetConvolutionNdForwardOutputDim", C.cudnnGetConvolutionNdForwardOutputDim(o.d.conv, o.d.tensors[0], o.d.filter, C.int(len(got)), &got[0])); err != nil {
			return false, err
		}
		l.cudnnOK = slices.Equal(got, yd)
	}
	o.layout = l
	return l.cudnnOK, nil
}

// convOp is Conv (and Conv1D, Conv2D, Conv3D) on cuDNN.
type convOp struct {
	convBase
	algo C.int
	ws   int
}

func newConv(b *operators.Base) (operators.Operator, error) {
	cb, err := newConvBase(b)
	if err != nil {
		return nil, err
	}
	o := &convOp{convBase: cb}
	o.self = o
	return o, nil
}

func (o *convOp) RunOnDevice() error {
	x, w, ok, changed, err := o.inputs()
	if err != nil {
		return err
	}
	if !ok {
		return o.fallback.Run()
	}
	dt := x.DataType()
	if changed {
		if err := o.chooseAlgo(); err != nil {
			return err
		}
	}
	y, err := o.output(0, dt, o.layout.y...)
	if err != nil {
		return err
	}
	dnn := o.g.dnn
	ws, err := dnn.workspace(o.ws)
	if err != nil {
		return err
	}
	if err := dnnCheck("cudnnConvolutionForward", C.c2g_conv_fwd(dnn.h, isDouble(dt), 1, o.d.tensors[0], ptr(x), o.d.filter, ptr(w), o.d.conv,
		o.algo, ws, C.size_t(o.ws), 0, o.d.tensors[1], ptr(y))); err != nil {
		return err
	}
	if o.NumInputs() == 3 {
		bias, err := o.floatInput(2)
		if err != nil {
			return err
		}
		if bias.Size() != o.layout.m {
			return fmt.Errorf("bias %q has %d elements, want %d", o.InputName(2), bias.Size(), o.layout.m)
		}
		return dnnCheck("cudnnAddTensor", C.c2g_add_tensor(dnn.h, isDouble(dt), 1, o.d.tensors[2], ptr(bias), 1, o.d.tensors[1], ptr(y)))
	}
	return nil
}

func (o *convOp) chooseAlgo() error {
	r, p := perfSlice()
	var got C.int
	if err := dnnCheck("cudnnGetConvolutionForwardAlgorithm_v7", C.cudnnGetConvolutionForwardAlgorithm_v7(o.g.dnn.h, o.d.tensors[0], o.d.filter,
		o.d.conv, o.d.tensors[1], algoResults, &got, p)); err != nil {
		return err
	}
	algo, err := pickAlgo(r[:got], false)
	if err != nil {
		return err
	}
	var size C.size_t
	if err := dnnCheck("cudnnGetConvolutionForwardWorkspaceSize", C.cudnnGetConvolutionForwardWorkspaceSize(o.g.dnn.h, o.d.tensors[0], o.d.filter,
		o.d.conv, o.d.tensors[1], algo, &size)); err != nil {
		return err
	}
	o.algo, o.ws = algo, int(size)
	return nil
}

// convGradOp is ConvGradient on cuDNN: (X, W, dY) → (dW, db, dX), without
// db for no_bias and without dX when there is no output for it. Its
// algorithms are deterministic, so that training repeats bit for bit.
type convGradOp struct {
	convBase
	noBias                 bool
	filterAlgo, dataAlgo   C.int
	filterBytes, dataBytes int
}

func newConvGradient(b *operators.Base) (operators.Operator, error) {
	cb, err := newConvBase(b)
	if err != nil {
		return nil, err
	}
	o := &convGradOp{convBase: cb, noBias: b.ArgInt("no_bias", 0) != 0}
	if !o.noBias && b.NumOutputs() < 2 {
		return nil, fmt.Errorf("%d outputs: the bias gradient needs a second output (or no_bias=1)", b.NumOutputs())
	}
	o.self = o
	return o, nil
}

func (o *convGradOp) RunOnDevice() error {
	x, w, ok, changed, err := o.inputs()
	if err != nil {
		return err
	}
	if !ok {
		return o.fallback.Run()
	}
	dy, err := o.floatInput(2)
	if err != nil {
		return err
	}
	if !slices.Equal(dy.Dims(), o.layout.y) {
		return fmt.Errorf("output gradient %q has shape %v, want %v", o.InputName(2), dy.Dims(), o.layout.y)
	}
	if changed {
		if err := o.chooseAlgos(); err != nil {
			return err
		}
	}
	dt := x.DataType()
	dnn := o.g.dnn
	dw, err := o.output(0, dt, w.Dims()...)
	if err != nil {
		return err
	}
	ws, err := dnn.workspace(max(o.filterBytes, o.dataBytes))
	if err != nil {
		return err
	}
	if err := dnnCheck("cudnnConvolutionBackwardFilter", C.c2g_conv_bwd_filter(dnn.h, isDouble(dt), 1, o.d.tensors[0], ptr(x), o.d.tensors[1], ptr(dy),
		o.d.conv, o.filterAlgo, ws, C.size_t(o.filterBytes), 0, o.d.filter, ptr(dw))); err != nil {
		return err
	}
	next := 1
	if !o.noBias {
		db, err := o.output(1, dt, o.layout.m)
		if err != nil {
			return err
		}
		if err := dnnCheck("cudnnConvolutionBackwardBias", C.c2g_conv_bwd_bias(dnn.h, isDouble(dt), 1, o.d.tensors[1], ptr(dy), 0, o.d.tensors[2], ptr(db))); err != nil {
			return err
		}
		next = 2
	}
	if o.NumOutputs() <= next {
		return nil
	}
	dx, err := o.output(next, dt, x.Dims()...)
	if err != nil {
		return err
	}
	return dnnCheck("cudnnConvolutionBackwardData", C.c2g_conv_bwd_data(dnn.h, isDouble(dt), 1, o.d.filter, ptr(w), o.d.tensors[1], ptr(dy),
		o.d.conv, o.dataAlgo, ws, C.size_t(o.dataBytes), 0, o.d.tensors[0], ptr(dx)))
}

func (o *convGradOp) chooseAlgos() error {
	h := o.g.dnn.h
	r, p := perfSlice()
	var got C.int
	if err := dnnCheck("cudnnGetConvolutionBackwardFilterAlgorithm_v7", C.cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, o.d.tensors[0], o.d.tensors[1],
		o.d.conv, o.d.filter, algoResults, &got, p)); err != nil {
		return err
	}
	fa, err := pickAlgo(r[:got], true)
	if err != nil {
		return fmt.Errorf("filter gradient: %w", err)
	}
	var fs C.size_t
	if err := dnnCheck("cudnnGetConvolutionBackwardFilterWorkspaceSize", C.cudnnGetConvolutionBackwardFilterWorkspaceSize(h, o.d.tensors[0], o.d.tensors[1],
		o.d.conv, o.d.filter, fa, &fs)); err != nil {
		return err
	}
	if err := dnnCheck("cudnnGetConvolutionBackwardDataAlgorithm_v7", C.cudnnGetConvolutionBackwardDataAlgorithm_v7(h, o.d.filter, o.d.tensors[1],
		o.d.conv, o.d.tensors[0], algoResults, &got, p)); err != nil {
		return err
	}
	da, err := pickAlgo(r[:got], true)
	if err != nil {
		return fmt.Errorf("input gradient: %w", err)
	}
	var ds C.size_t
	if err := dnnCheck("cudnnGetConvolutionBackwardDataWorkspaceSize", C.cudnnGetConvolutionBackwardDataWorkspaceSize(h, o.d.filter, o.d.tensors[1],
		o.d.conv, o.d.tensors[0], da, &ds)); err != nil {
		return err
	}
	o.filterAlgo, o.filterBytes, o.dataAlgo, o.dataBytes = fa, int(fs), da, int(ds)
	return nil
}

// poolOp is MaxPool and AveragePool (and their 1-D, 2-D, 3-D forms) and
// their gradients on cuDNN. Windows cuDNN cannot do — asymmetric pads,
// Caffe's ceil-mode output sizes, average pools whose divisor differs from
// cuDNN's — run on the host.
type poolOp struct {
	op
	args     *convargs.Args
	max      bool // max pooling, else average
	grad     bool
	countPad bool
	d        *descriptors
	x        []int // input dims the descriptors are for
	y        []int
	cudnnOK  bool
	fallback operators.Operator
}

func newPool(max, grad bool) func(b *operators.Base) (operators.Operator, error) {
	return func(b *operators.Base) (operators.Operator, error) {
		base, err := newOp(b)
		if err != nil {
			return nil, err
		}
		a, err := convargs.Parse(b, convargs.KindPool)
		if err != nil {
			return nil, err
		}
		d, err := newDescriptors(2, false, false, true)
		if err != nil {
			return nil, err
		}
		fb, err := operators.HostFallback(b)
		if err != nil {
			return nil, err
		}
		o := &poolOp{op: base, args: a, max: max, grad: grad, countPad: b.ArgBool("count_include_pad", false), d: d, fallback: fb}
		o.self = o
		return o, nil
	}
}

// prepare sets the descriptors for input dims x and reports whether cuDNN
// computes the pooling exactly as the CPU does.
func (o *poolOp) prepare(x *blob.Tensor) (bool, error) {
	if slices.Equal(x.Dims(), o.x) {
		return o.cudnnOK, nil
	}
	if x.NumDims() < 3 {
		return false, fmt.Errorf("input %q has shape %v; pooling needs N, C and at least one spatial dimension", o.InputName(0), x.Dims())
	}
	n, c, sp := convargs.Spatial(x.Dims(), o.args.Order)
	win, err := o.args.Window(sp)
	if err != nil {
		return false, err
	}
	o.x = slices.Clone(x.Dims())
	if o.args.Global {
		// The CPU pools the flattened positions; to cuDNN it is a window
		// of the whole image, and the output keeps its spatial
		// dimensions, of size 1.
		ones := slices.Repeat([]int{1}, len(sp))
		win = convargs.NewWindow(sp, ones, sp, ones, ones, make([]int, len(sp)), make([]int, len(sp)))
	}
	o.y = convargs.ImageShape(nil, o.args.Order, n, c, win.OutDims(nil))
	k, pad, stride, _, symmetric := windowParams(&win)
	o.cudnnOK = symmetric
	// Without count_include_pad the CPU divides by the in-bounds elements,
	// which cuDNN's EXCLUDE_PADDING mode also does; with it, by the kernel
	// size, which cuDNN's INCLUDE_PADDING does only while windows stay
	// within the padding (always, with symmetric pads and floor sizes).
	mode := C.int(C.CUDNN_POOLING_MAX_DETERMINISTIC)
	if !o.max {
		mode = C.CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING
		if o.countPad {
			mode = C.CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
		}
	}
	if err := dnnCheck("cudnnSetPoolingNdDescriptor", C.cudnnSetPoolingNdDescriptor(o.d.pool, mode, C.CUDNN_PROPAGATE_NAN, C.int(len(k)), &k[0], &pad[0], &stride[0])); err != nil {
		return false, err
	}
	dt := x.DataType()
	xd, xs := imageDims(o.args.Order, n, c, sp)
	yd, ys := imageDims(o.args.Order, n, c, win.OutDims(nil))
	if err := setTensor(o.d.tensors[0], dt, xd, xs); err != nil {
		return false, err
	}
	if err := setTensor(o.d.tensors[1], dt, yd, ys); err != nil {
		return false, err
	}
	if symmetric {
		// cuDNN's floor rule must give Caffe2's sizes.
		for i, p := range pad {
			in := int(xd[2+i])
			if want := (in+2*int(p)-int(k[i]))/int(stride[i]) + 1; want != int(yd[2+i]) {
				o.cudnnOK = false
			}
		}
	}
	return o.cudnnOK, nil
}

func (o *poolOp) RunOnDevice() error {
	x, err := o.floatInput(0)
	if err != nil {
		return err
	}
	ok, err := o.prepare(x)
	if err != nil {
		return err
	}
	if !ok {
		return o.fallback.Run()
	}
	dt := x.DataType()
	dnn := o.g.dnn
	if !o.grad {
		y, err := o.output(0, dt, o.y...)
		if err != nil {
			return err
		}
		return dnnCheck("cudnnPoolingForward", C.c2g_pool_fwd(dnn.h, o.d.pool, isDouble(dt), 1, o.d.tensors[0], ptr(x), 0, o.d.tensors[1], ptr(y)))
	}
	y, err := o.floatInput(1)
	if err != nil {
		return err
	}
	dy, err := o.floatInput(2)
	if err != nil {
		return err
	}
	if !slices.Equal(y.Dims(), o.y) || !slices.Equal(dy.Dims(), o.y) {
		return fmt.Errorf("Y %q and dY %q have shapes %v and %v, want %v", o.InputName(1), o.InputName(2), y.Dims(), dy.Dims(), o.y)
	}
	dx, err := o.output(0, dt, x.Dims()...)
	if err != nil {
		return err
	}
	return dnnCheck("cudnnPoolingBackward", C.c2g_pool_bwd(dnn.h, o.d.pool, isDouble(dt), 1, o.d.tensors[1], ptr(y), o.d.tensors[1], ptr(dy),
		o.d.tensors[0], ptr(x), 0, o.d.tensors[0], ptr(dx)))
}
