package convpool

import (
	"fmt"
	"math"

	"github.com/caffe2go/caffe2go/operators"
)

// Caffe2's LegacyPadding values (caffe2_legacy.proto).
const (
	padNotSet          = 0 // explicit pads
	padValid           = 1 // no padding
	padSame            = 2 // TensorFlow's SAME: pads chosen so that out = ⌈in/stride⌉
	padCaffeLegacyPool = 3 // Caffe's pooling: ceil-mode output size
)

// maxSpatial is the most spatial dimensions a convolution or pooling
// window has here (1-D, 2-D and 3-D).
const maxSpatial = 3

// order is a storage order of image tensors.
type order int

const (
	nchw order = iota // channels before the spatial dimensions
	nhwc              // channels last
)

func (o order) String() string {
	if o == nhwc {
		return "NHWC"
	}
	return "NCHW"
}

func parseOrder(s string) (order, error) {
	switch s {
	case "NCHW":
		return nchw, nil
	case "NHWC":
		return nhwc, nil
	}
	return nchw, fmt.Errorf("unknown storage order %q (want NCHW or NHWC)", s)
}

// opKind says which checks of Caffe2's operator constructors apply on top
// of ConvPoolOpBase's.
type opKind int

const (
	kindConv opKind = iota // Conv*: kernel required, pads ≥ 0
	kindPool               // *Pool*: as conv, plus no dilation and pads < kernel
	kindPad                // PadImage: kernel 1, stride 1, explicit pads (may be negative)
)

// convPoolArgs are the arguments of Caffe2's ConvPoolOpBase, resolved the
// way its constructor resolves them: the list forms (kernels, strides, pads,
// dilations) are read first; the single-value forms (kernel, stride, pad,
// dilation) then resize the list to 2 (4 for pads) entries filled with the
// value, and otherwise the per-side forms (kernel_h and kernel_w; pad_t,
// pad_l, pad_b and pad_r; …) are appended when all of them are given; missing
// lists default to a 2-D kernel of 0, stride and dilation 1 and pads 0.
type convPoolArgs struct {
	legacyPad int
	global    bool
	kernel    []int
	stride    []int
	dilation  []int
	pads      []int // heads of every dimension, then tails
	group     int
	order     order
}

func ints(v []int64) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

// resize is std::vector::resize(n, fill): it truncates or extends v.
func resize(v []int, n, fill int) []int {
	if len(v) >= n {
		return v[:n]
	}
	for len(v) < n {
		v = append(v, fill)
	}
	return v
}

func filled(n, v int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// pairArg reads the single-value form name (resizing list to 2 entries) or
// else the two per-side forms.
func pairArg(b *operators.Base, list []int, name, first, second string) []int {
	if b.HasArg(name) {
		return resize(list, 2, int(b.ArgInt(name, 0)))
	}
	if b.HasArg(first) && b.HasArg(second) {
		return append(list, int(b.ArgInt(first, 0)), int(b.ArgInt(second, 0)))
	}
	return list
}

// explicitPads reports whether any explicit padding argument is given.
func explicitPads(b *operators.Base) bool {
	return b.HasArg("pad") || b.HasArg("pads") ||
		(b.HasArg("pad_t") && b.HasArg("pad_l") && b.HasArg("pad_b") && b.HasArg("pad_r"))
}

// padArgs reads pads, then pad (resizing to 4) or the four per-side forms.
func padArgs(b *operators.Base) []int {
	pads := ints(b.ArgInts("pads", nil))
	if b.HasArg("pad") {
		return resize(pads, 4, int(b.ArgInt("pad", 0)))
	}
	if b.HasArg("pad_t") && b.HasArg("pad_l") && b.HasArg("pad_b") && b.HasArg("pad_r") {
		return append(pads, int(b.ArgInt("pad_t", 0)), int(b.ArgInt("pad_l", 0)), int(b.ArgInt("pad_b", 0)), int(b.ArgInt("pad_r", 0)))
	}
	return pads
}

// parseConvPoolArgs reads and checks the arguments of an operator built on
// ConvPoolOpBase.
func parseConvPoolArgs(b *operators.Base, kind opKind) (*convPoolArgs, error) {
	a := &convPoolArgs{
		legacyPad: int(b.ArgInt("legacy_pad", padNotSet)),
		global:    b.ArgInt("global_pooling", 0) != 0,
		group:     int(b.ArgInt("group", 1)),
	}
	var err error
	if a.order, err = parseOrder(b.ArgString("order", "NCHW")); err != nil {
		return nil, err
	}
	if a.legacyPad < padNotSet || a.legacyPad > padCaffeLegacyPool {
		return nil, fmt.Errorf("legacy_pad %d is not a LegacyPadding value (0 NOTSET, 1 VALID, 2 SAME, 3 CAFFE_LEGACY_POOLING)", a.legacyPad)
	}
	implicit := a.legacyPad == padValid || a.legacyPad == padSame
	if implicit && explicitPads(b) {
		return nil, fmt.Errorf("if you use legacy padding VALID or SAME, you should not specify any specific padding values")
	}
	a.kernel = pairArg(b, ints(b.ArgInts("kernels", nil)), "kernel", "kernel_h", "kernel_w")
	a.stride = pairArg(b, ints(b.ArgInts("strides", nil)), "stride", "stride_h", "stride_w")
	a.dilation = pairArg(b, ints(b.ArgInts("dilations", nil)), "dilation", "dilation_h", "dilation_w")
	a.pads = padArgs(b)
	if len(a.kernel) == 0 {
		a.kernel = []int{0, 0}
	}
	nk := len(a.kernel)
	if len(a.stride) == 0 {
		a.stride = filled(nk, 1)
	}
	if len(a.pads) == 0 {
		a.pads = filled(2*nk, 0)
	}
	if len(a.dilation) == 0 {
		a.dilation = filled(nk, 1)
	}
	if len(a.stride) != nk {
		return nil, fmt.Errorf("%d strides %v for a %d-D kernel %v", len(a.stride), a.stride, nk, a.kernel)
	}
	if len(a.dilation) != nk {
		return nil, fmt.Errorf("%d dilations %v for a %d-D kernel %v", len(a.dilation), a.dilation, nk, a.kernel)
	}
	if len(a.pads) != 2*nk {
		return nil, fmt.Errorf("%d pads %v for a %d-D kernel %v (want %d: the heads, then the tails)", len(a.pads), a.pads, nk, a.kernel, 2*nk)
	}
	if a.global {
		for i := range nk {
			if a.pads[i] != 0 || a.pads[nk+i] != 0 || a.dilation[i] != 1 || a.stride[i] != 1 {
				return nil, fmt.Errorf("if global_pooling is set, pad, dilation and stride shouldn't be set (pads %v, dilations %v, strides %v)", a.pads, a.dilation, a.stride)
			}
		}
	}
	for i := range nk {
		if a.kernel[i] < 0 || a.dilation[i] <= 0 || a.stride[i] <= 0 {
			return nil, fmt.Errorf("kernel %v must be ≥ 0, dilations %v and strides %v > 0", a.kernel, a.dilation, a.stride)
		}
	}
	if a.group <= 0 {
		return nil, fmt.Errorf("group %d must be positive", a.group)
	}
	switch kind {
	case kindConv, kindPool:
		for i := range nk {
			if !a.global && a.kernel[i] == 0 {
				return nil, fmt.Errorf("if you are doing convolution or pooling, you will need to set explicitly the kernel size (kernel %v)", a.kernel)
			}
			if a.pads[i] < 0 || a.pads[nk+i] < 0 {
				return nil, fmt.Errorf("pads %v must be non-negative", a.pads)
			}
		}
		if kind == kindPool {
			for i := range nk {
				if a.dilation[i] != 1 {
					return nil, fmt.Errorf("pooling op does not support dilation right now (dilations %v)", a.dilation)
				}
				if !a.global && (a.pads[i] >= a.kernel[i] || a.pads[nk+i] >= a.kernel[i]) {
					return nil, fmt.Errorf("pad should be smaller than kernel (pads %v, kernel %v)", a.pads, a.kernel)
				}
			}
		}
	case kindPad:
		if a.legacyPad != padNotSet {
			return nil, fmt.Errorf("padding layer only supports explicit pad values (legacy_pad %d)", a.legacyPad)
		}
		for i := range nk {
			if a.dilation[i] != 1 || a.stride[i] != 1 {
				return nil, fmt.Errorf("PadImage does not support dilation or stride (dilations %v, strides %v)", a.dilation, a.stride)
			}
		}
		// The pad operator uses no kernel: a kernel of 1 makes the output size
		// rule give in + pad_head + pad_tail.
		a.kernel = filled(len(a.pads)/2, 1)
	}
	return a, nil
}

// computeSizeAndPad is Caffe2's output-size rule for one spatial dimension
// (ConvPoolOpBase::ComputeSizeAndPad): it returns the output size and the
// head and tail pads actually used, which VALID and SAME compute and
// CAFFE_LEGACY_POOLING adjusts at the tail. Sizes are computed in float32
// and truncated, as Caffe2 does.
func computeSizeAndPad(in, stride, kernel, dilation, legacy, padHead, padTail int) (out, head, tail int, err error) {
	dk := dilation*(kernel-1) + 1
	switch legacy {
	case padNotSet:
		if in+padHead+padTail < dk {
			return 0, 0, 0, fmt.Errorf("input size %d with pads %d and %d is smaller than the dilated kernel %d", in, padHead, padTail, dk)
		}
		out = int(float32(in+padHead+padTail-dk)/float32(stride) + 1)
		return out, padHead, padTail, nil
	case padValid:
		return (in-dk)/stride + 1, 0, 0, nil
	case padSame:
		if dilation != 1 {
			return 0, 0, 0, fmt.Errorf("dilation not supported for legacy padding (dilation %d)", dilation)
		}
		target := (in + stride - 1) / stride
		need := (target-1)*stride + kernel - in
		head = need / 2
		return (in+need-dk)/stride + 1, head, need - head, nil
	case padCaffeLegacyPool:
		if padHead < 0 {
			return 0, 0, 0, fmt.Errorf("negative pad %d", padHead)
		}
		// Caffe rounds the output size up where Caffe2 rounds it down.
		out = int(math.Ceil(float64(float32(in+2*padHead-kernel)/float32(stride) + 1)))
		// With padding, the last window must start inside the image.
		if padHead > 0 && (out-1)*stride >= in+padHead {
			out--
		}
		standard := int(float32(in+2*padHead-kernel)/float32(stride) + 1)
		return out, padHead, padHead + stride*(out-standard), nil
	}
	return 0, 0, 0, fmt.Errorf("legacy_pad %d is not a LegacyPadding value", legacy)
}

// window is the geometry of a convolution or pooling window over up to three
// spatial dimensions, canonicalized to three (D, H, W): lower-dimensional
// windows get leading dimensions of size 1 with kernel, stride and dilation
// 1 and no padding.
type window struct {
	nd       int    // spatial dimensions of the tensors
	in, out  [3]int // input and output sizes
	k, s, d  [3]int // kernel, stride, dilation
	pad      [3]int // head pads (the tails only shape the output size)
	tail     [3]int // tail pads
	inSize   int    // product of in
	outSize  int    // product of out
	kSize    int    // product of k
	oneByOne bool   // kernel 1, stride 1, no padding, out == in: im2col is the identity
}

// newWindow canonicalizes per-dimension sizes (len(in) ≤ 3) into a window.
func newWindow(in, out, k, s, d, head, tail []int) window {
	w := window{nd: len(in)}
	off := maxSpatial - len(in)
	for i := range maxSpatial {
		w.in[i], w.out[i], w.k[i], w.s[i], w.d[i] = 1, 1, 1, 1, 1
	}
	for i := range in {
		w.in[off+i], w.out[off+i], w.k[off+i], w.s[off+i], w.d[off+i] = in[i], out[i], k[i], s[i], d[i]
		w.pad[off+i], w.tail[off+i] = head[i], tail[i]
	}
	w.inSize, w.outSize, w.kSize = 1, 1, 1
	w.oneByOne = true
	for i := range maxSpatial {
		w.inSize *= w.in[i]
		w.outSize *= w.out[i]
		w.kSize *= w.k[i]
		if w.k[i] != 1 || w.s[i] != 1 || w.pad[i] != 0 || w.in[i] != w.out[i] {
			w.oneByOne = false
		}
	}
	return w
}

// outDims returns the output sizes of the window's spatial dimensions.
func (w *window) outDims(dst []int) []int {
	return append(dst, w.out[maxSpatial-w.nd:]...)
}

// spatial splits the dimensions of an image tensor into the batch size, the
// channels and the spatial sizes.
func spatial(dims []int, o order) (n, c int, sp []int) {
	if o == nhwc {
		return dims[0], dims[len(dims)-1], dims[1 : len(dims)-1]
	}
	return dims[0], dims[1], dims[2:]
}

// imageShape appends to dst the shape of an image tensor with n images, c
// channels and the given spatial sizes in order o.
func imageShape(dst []int, o order, n, c int, sp []int) []int {
	dst = append(dst[:0], n)
	if o == nchw {
		dst = append(dst, c)
	}
	dst = append(dst, sp...)
	if o == nhwc {
		dst = append(dst, c)
	}
	return dst
}

// window applies Caffe2's output-size rule to an input with spatial sizes
// sp. Global pooling takes the whole input as one window.
func (a *convPoolArgs) window(sp []int) (window, error) {
	nd := len(sp)
	if a.global {
		// Global pooling averages or maximizes over all positions: a 1-D
		// window over the flattened spatial dimensions.
		n := 1
		for _, v := range sp {
			n *= v
		}
		return newWindow([]int{n}, []int{1}, []int{n}, []int{1}, []int{1}, []int{0}, []int{0}), nil
	}
	if nd != len(a.kernel) {
		return window{}, fmt.Errorf("a %d-D kernel %v for an input with %d spatial dimensions %v", len(a.kernel), a.kernel, nd, sp)
	}
	if nd > maxSpatial || nd == 0 {
		return window{}, fmt.Errorf("%d spatial dimensions %v: only 1-D, 2-D and 3-D windows are supported", nd, sp)
	}
	var out, head, tail [maxSpatial]int
	for i := range nd {
		o, h, t, err := computeSizeAndPad(sp[i], a.stride[i], a.kernel[i], a.dilation[i], a.legacyPad, a.pads[i], a.pads[nd+i])
		if err != nil {
			return window{}, fmt.Errorf("spatial dimension %d: %v", i, err)
		}
		if o <= 0 {
			return window{}, fmt.Errorf("spatial dimension %d: input size %d, kernel %d, dilation %d, stride %d and pads %d, %d give an output size of %d", i, sp[i], a.kernel[i], a.dilation[i], a.stride[i], h, t, o)
		}
		out[i], head[i], tail[i] = o, h, t
	}
	return newWindow(sp, out[:nd], a.kernel, a.stride, a.dilation, head[:nd], tail[:nd]), nil
}
