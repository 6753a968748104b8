package convargs

import (
	"fmt"
	"math"

	"github.com/caffe2go/caffe2go/operators"
)

// Caffe2's LegacyPadding values (caffe2_legacy.proto).
const (
	PadNotSet          = 0 // explicit pads
	PadValid           = 1 // no padding
	PadSame            = 2 // TensorFlow's SAME: pads chosen so that out = ⌈in/stride⌉
	PadCaffeLegacyPool = 3 // Caffe's pooling: ceil-mode output size
)

// MaxSpatial is the most spatial dimensions a convolution or pooling
// window has here (1-D, 2-D and 3-D).
const MaxSpatial = 3

// Order is a storage order of image tensors.
type Order int

const (
	NCHW Order = iota // channels before the spatial dimensions
	NHWC              // channels last
)

// String returns "NCHW" or "NHWC".
func (o Order) String() string {
	if o == NHWC {
		return "NHWC"
	}
	return "NCHW"
}

// ParseOrder reads the order argument.
func ParseOrder(s string) (Order, error) {
	switch s {
	case "NCHW":
		return NCHW, nil
	case "NHWC":
		return NHWC, nil
	}
	return NCHW, fmt.Errorf("unknown storage order %q (want NCHW or NHWC)", s)
}

// Kind says which checks of Caffe2's operator constructors apply on top
// of ConvPoolOpBase's.
type Kind int

const (
	KindConv Kind = iota // Conv*: kernel required, pads ≥ 0
	KindPool             // *Pool*: as conv, plus no dilation and pads < kernel
	KindPad              // PadImage: kernel 1, stride 1, explicit pads (may be negative)
)

// Args are the arguments of Caffe2's ConvPoolOpBase, resolved the
// way its constructor resolves them: the list forms (kernels, strides, pads,
// dilations) are read first; the single-value forms (kernel, stride, pad,
// dilation) then resize the list to 2 (4 for pads) entries filled with the
// value, and otherwise the per-side forms (kernel_h and kernel_w; pad_t,
// pad_l, pad_b and pad_r; …) are appended when all of them are given; missing
// lists default to a 2-D kernel of 0, stride and dilation 1 and pads 0.
type Args struct {
	LegacyPad int
	Global    bool
	Kernel    []int
	Stride    []int
	Dilation  []int
	Pads      []int // heads of every dimension, then tails
	Group     int
	Order     Order
}

// Ints converts an integer-list argument.
func Ints(v []int64) []int {
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

// Filled returns n copies of v.
func Filled(n, v int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// PairArg reads the single-value form name (resizing list to 2 entries) or
// else the two per-side forms.
func PairArg(b *operators.Base, list []int, name, first, second string) []int {
	if b.HasArg(name) {
		return resize(list, 2, int(b.ArgInt(name, 0)))
	}
	if b.HasArg(first) && b.HasArg(second) {
		return append(list, int(b.ArgInt(first, 0)), int(b.ArgInt(second, 0)))
	}
	return list
}

// ExplicitPads reports whether any explicit padding argument is given.
func ExplicitPads(b *operators.Base) bool {
	return b.HasArg("pad") || b.HasArg("pads") ||
		(b.HasArg("pad_t") && b.HasArg("pad_l") && b.HasArg("pad_b") && b.HasArg("pad_r"))
}

// PadArgs reads pads, then pad (resizing to 4) or the four per-side forms.
func PadArgs(b *operators.Base) []int {
	pads := Ints(b.ArgInts("pads", nil))
	if b.HasArg("pad") {
		return resize(pads, 4, int(b.ArgInt("pad", 0)))
	}
	if b.HasArg("pad_t") && b.HasArg("pad_l") && b.HasArg("pad_b") && b.HasArg("pad_r") {
		return append(pads, int(b.ArgInt("pad_t", 0)), int(b.ArgInt("pad_l", 0)), int(b.ArgInt("pad_b", 0)), int(b.ArgInt("pad_r", 0)))
	}
	return pads
}

// Parse reads and checks the arguments of an operator built on
// ConvPoolOpBase.
func Parse(b *operators.Base, kind Kind) (*Args, error) {
	a := &Args{
		LegacyPad: int(b.ArgInt("legacy_pad", PadNotSet)),
		Global:    b.ArgInt("global_pooling", 0) != 0,
		Group:     int(b.ArgInt("group", 1)),
	}
	var err error
	if a.Order, err = ParseOrder(b.ArgString("order", "NCHW")); err != nil {
		return nil, err
	}
	if a.LegacyPad < PadNotSet || a.LegacyPad > PadCaffeLegacyPool {
		return nil, fmt.Errorf("legacy_pad %d is not a LegacyPadding value (0 NOTSET, 1 VALID, 2 SAME, 3 CAFFE_LEGACY_POOLING)", a.LegacyPad)
	}
	implicit := a.LegacyPad == PadValid || a.LegacyPad == PadSame
	if implicit && ExplicitPads(b) {
		return nil, fmt.Errorf("if you use legacy padding VALID or SAME, you should not specify any specific padding values")
	}
	a.Kernel = PairArg(b, Ints(b.ArgInts("kernels", nil)), "kernel", "kernel_h", "kernel_w")
	a.Stride = PairArg(b, Ints(b.ArgInts("strides", nil)), "stride", "stride_h", "stride_w")
	a.Dilation = PairArg(b, Ints(b.ArgInts("dilations", nil)), "dilation", "dilation_h", "dilation_w")
	a.Pads = PadArgs(b)
	if len(a.Kernel) == 0 {
		a.Kernel = []int{0, 0}
	}
	nk := len(a.Kernel)
	if len(a.Stride) == 0 {
		a.Stride = Filled(nk, 1)
	}
	if len(a.Pads) == 0 {
		a.Pads = Filled(2*nk, 0)
	}
	if len(a.Dilation) == 0 {
		a.Dilation = Filled(nk, 1)
	}
	if len(a.Stride) != nk {
		return nil, fmt.Errorf("%d strides %v for a %d-D kernel %v", len(a.Stride), a.Stride, nk, a.Kernel)
	}
	if len(a.Dilation) != nk {
		return nil, fmt.Errorf("%d dilations %v for a %d-D kernel %v", len(a.Dilation), a.Dilation, nk, a.Kernel)
	}
	if len(a.Pads) != 2*nk {
		return nil, fmt.Errorf("%d pads %v for a %d-D kernel %v (want %d: the heads, then the tails)", len(a.Pads), a.Pads, nk, a.Kernel, 2*nk)
	}
	if a.Global {
		for i := range nk {
			if a.Pads[i] != 0 || a.Pads[nk+i] != 0 || a.Dilation[i] != 1 || a.Stride[i] != 1 {
				return nil, fmt.Errorf("if global_pooling is set, pad, dilation and stride shouldn't be set (pads %v, dilations %v, strides %v)", a.Pads, a.Dilation, a.Stride)
			}
		}
	}
	for i := range nk {
		if a.Kernel[i] < 0 || a.Dilation[i] <= 0 || a.Stride[i] <= 0 {
			return nil, fmt.Errorf("kernel %v must be ≥ 0, dilations %v and strides %v > 0", a.Kernel, a.Dilation, a.Stride)
		}
	}
	if a.Group <= 0 {
		return nil, fmt.Errorf("group %d must be positive", a.Group)
	}
	switch kind {
	case KindConv, KindPool:
		for i := range nk {
			if !a.Global && a.Kernel[i] == 0 {
				return nil, fmt.Errorf("if you are doing convolution or pooling, you will need to set explicitly the kernel size (kernel %v)", a.Kernel)
			}
			if a.Pads[i] < 0 || a.Pads[nk+i] < 0 {
				return nil, fmt.Errorf("pads %v must be non-negative", a.Pads)
			}
		}
		if kind == KindPool {
			for i := range nk {
				if a.Dilation[i] != 1 {
					return nil, fmt.Errorf("pooling op does not support dilation right now (dilations %v)", a.Dilation)
				}
				if !a.Global && (a.Pads[i] >= a.Kernel[i] || a.Pads[nk+i] >= a.Kernel[i]) {
					return nil, fmt.Errorf("pad should be smaller than kernel (pads %v, kernel %v)", a.Pads, a.Kernel)
				}
			}
		}
	case KindPad:
		if a.LegacyPad != PadNotSet {
			return nil, fmt.Errorf("padding layer only supports explicit pad values (legacy_pad %d)", a.LegacyPad)
		}
		for i := range nk {
			if a.Dilation[i] != 1 || a.Stride[i] != 1 {
				return nil, fmt.Errorf("PadImage does not support dilation or stride (dilations %v, strides %v)", a.Dilation, a.Stride)
			}
		}
		// The pad operator uses no kernel: a kernel of 1 makes the output size
		// rule give in + pad_head + pad_tail.
		a.Kernel = Filled(len(a.Pads)/2, 1)
	}
	return a, nil
}

// ComputeSizeAndPad is Caffe2's output-size rule for one spatial dimension
// (ConvPoolOpBase::ComputeSizeAndPad): it returns the output size and the
// head and tail pads actually used, which VALID and SAME compute and
// CAFFE_LEGACY_POOLING adjusts at the tail. Sizes are computed in float32
// and truncated, as Caffe2 does.
func ComputeSizeAndPad(in, stride, kernel, dilation, legacy, padHead, padTail int) (out, head, tail int, err error) {
	dk := dilation*(kernel-1) + 1
	switch legacy {
	case PadNotSet:
		if in+padHead+padTail < dk {
			return 0, 0, 0, fmt.Errorf("input size %d with pads %d and %d is smaller than the dilated kernel %d", in, padHead, padTail, dk)
		}
		out = int(float32(in+padHead+padTail-dk)/float32(stride) + 1)
		return out, padHead, padTail, nil
	case PadValid:
		return (in-dk)/stride + 1, 0, 0, nil
	case PadSame:
		if dilation != 1 {
			return 0, 0, 0, fmt.Errorf("dilation not supported for legacy padding (dilation %d)", dilation)
		}
		target := (in + stride - 1) / stride
		need := (target-1)*stride + kernel - in
		head = need / 2
		return (in+need-dk)/stride + 1, head, need - head, nil
	case PadCaffeLegacyPool:
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

// SizeAndPad applies the output-size rule (ComputeSizeAndPad) to spatial
// dimension i of nd, of size in: the output size and the head and tail
// pads. An input too small for the window, which leaves no output, is an
// error naming the dimension and the window.
func (a *Args) SizeAndPad(i, nd, in int) (out, head, tail int, err error) {
	o, h, t, err := ComputeSizeAndPad(in, a.Stride[i], a.Kernel[i], a.Dilation[i], a.LegacyPad, a.Pads[i], a.Pads[nd+i])
	if err != nil {
		return 0, 0, 0, fmt.Errorf("spatial dimension %d: %v", i, err)
	}
	if o <= 0 {
		return 0, 0, 0, fmt.Errorf("spatial dimension %d: input size %d, kernel %d, dilation %d, stride %d and pads %d, %d give an output size of %d", i, in, a.Kernel[i], a.Dilation[i], a.Stride[i], h, t, o)
	}
	return o, h, t, nil
}

// Window is the geometry of a convolution or pooling window over up to three
// spatial dimensions, canonicalized to three (D, H, W): lower-dimensional
// windows get leading dimensions of size 1 with kernel, stride and dilation
// 1 and no padding.
type Window struct {
	ND       int    // spatial dimensions of the tensors
	In, Out  [3]int // input and output sizes
	K, S, D  [3]int // kernel, stride, dilation
	Pad      [3]int // head pads (the tails only shape the output size)
	Tail     [3]int // tail pads
	InSize   int    // product of in
	OutSize  int    // product of out
	KSize    int    // product of k
	OneByOne bool   // kernel 1, stride 1, no padding, out == in: im2col is the identity
}

// NewWindow canonicalizes per-dimension sizes (len(in) ≤ 3) into a window.
func NewWindow(in, out, k, s, d, head, tail []int) Window {
	w := Window{ND: len(in)}
	off := MaxSpatial - len(in)
	for i := range MaxSpatial {
		w.In[i], w.Out[i], w.K[i], w.S[i], w.D[i] = 1, 1, 1, 1, 1
	}
	for i := range in {
		w.In[off+i], w.Out[off+i], w.K[off+i], w.S[off+i], w.D[off+i] = in[i], out[i], k[i], s[i], d[i]
		w.Pad[off+i], w.Tail[off+i] = head[i], tail[i]
	}
	w.InSize, w.OutSize, w.KSize = 1, 1, 1
	w.OneByOne = true
	for i := range MaxSpatial {
		w.InSize *= w.In[i]
		w.OutSize *= w.Out[i]
		w.KSize *= w.K[i]
		if w.K[i] != 1 || w.S[i] != 1 || w.Pad[i] != 0 || w.In[i] != w.Out[i] {
			w.OneByOne = false
		}
	}
	return w
}

// OutDims returns the output sizes of the window's spatial dimensions.
func (w *Window) OutDims(dst []int) []int {
	return append(dst, w.Out[MaxSpatial-w.ND:]...)
}

// Spatial splits the dimensions of an image tensor into the batch size, the
// channels and the spatial sizes.
func Spatial(dims []int, o Order) (n, c int, sp []int) {
	if o == NHWC {
		return dims[0], dims[len(dims)-1], dims[1 : len(dims)-1]
	}
	return dims[0], dims[1], dims[2:]
}

// ImageShape appends to dst the shape of an image tensor with n images, c
// channels and the given spatial sizes in order o.
func ImageShape(dst []int, o Order, n, c int, sp []int) []int {
	dst = append(dst[:0], n)
	if o == NCHW {
		dst = append(dst, c)
	}
	dst = append(dst, sp...)
	if o == NHWC {
		dst = append(dst, c)
	}
	return dst
}

// Window applies Caffe2's output-size rule to an input with spatial sizes
// sp. Global pooling takes the whole input as one window.
func (a *Args) Window(sp []int) (Window, error) {
	nd := len(sp)
	if a.Global {
		// Global pooling averages or maximizes over all positions: a 1-D
		// window over the flattened spatial dimensions.
		n := 1
		for _, v := range sp {
			n *= v
		}
		return NewWindow([]int{n}, []int{1}, []int{n}, []int{1}, []int{1}, []int{0}, []int{0}), nil
	}
	if nd != len(a.Kernel) {
		return Window{}, fmt.Errorf("a %d-D kernel %v for an input with %d spatial dimensions %v", len(a.Kernel), a.Kernel, nd, sp)
	}
	if nd > MaxSpatial || nd == 0 {
		return Window{}, fmt.Errorf("%d spatial dimensions %v: only 1-D, 2-D and 3-D windows are supported", nd, sp)
	}
	var out, head, tail [MaxSpatial]int
	for i := range nd {
		o, h, t, err := a.SizeAndPad(i, nd, sp[i])
		if err != nil {
			return Window{}, err
		}
		out[i], head[i], tail[i] = o, h, t
	}
	return NewWindow(sp, out[:nd], a.Kernel, a.Stride, a.Dilation, head[:nd], tail[:nd]), nil
}
