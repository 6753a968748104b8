package convpool

import (
	"fmt"
	"github.com/caffe2go/caffe2go/operators/internal/convargs"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

var convTransposeArgSpecs = []operators.ArgSpec{
	{Name: "kernel", Doc: "kernel size (2-D); or kernel_h and kernel_w; or kernels"},
	{Name: "stride", Default: int64(1), Doc: "stride; or stride_h and stride_w; or strides"},
	{Name: "pad", Default: int64(0), Doc: "padding removed from every side of the output; or pad_t, pad_l, pad_b and pad_r; or pads"},
	{Name: "adj", Default: int64(0), Doc: "extra output rows and columns at the tail, 0 ≤ adj ≤ stride; or adj_h and adj_w; or adjs"},
	{Name: "legacy_pad", Doc: "1 VALID or 2 SAME: no padding; unset: explicit pads"},
	{Name: "group", Default: int64(1), Doc: "number of channel groups"},
	{Name: "order", Default: "NCHW", Doc: "storage order, NCHW or NHWC"},
	{Name: "shared_buffer", Default: int64(0), Doc: "accepted; every operator keeps its own buffers"},
}

var convTransposeGradArgSpecs = append(append([]operators.ArgSpec{}, convTransposeArgSpecs...),
	operators.ArgSpec{Name: "no_bias", Default: int64(0), Doc: "the forward operator had no bias: outputs are (dW[, dX])"})

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "ConvTranspose", MinInputs: 2, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1, Args: convTransposeArgSpecs,
		Doc: "ConvTranspose(X, filter[, bias]) is a 2-D transposed convolution: X is NCHW [N, M, H, W] (NHWC [N, H, W, M]), " +
			"filter [M, C/group, kH, kW] (NHWC [M, kH, kW, C/group]), bias [C]; Y has C channels and spatial sizes " +
			"(in − 1)·stride + kernel + adj − pad_head − pad_tail.",
	}, newConvTranspose)
	operators.MustRegisterCPU(operators.Schema{
		Type: "ConvTransposeGradient", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 3, Args: convTransposeGradArgSpecs,
		Doc: "ConvTransposeGradient(X, filter, dY) computes (dfilter, dbias[, dX]), or (dfilter[, dX]) with no_bias, of ConvTranspose.",
	}, newConvTransposeGradient)
	operators.MustRegisterGradient("ConvTranspose", convGradientMaker("ConvTransposeGradient"))
}

// transposeArgs are the arguments of Caffe2's ConvTransposeUnpoolBase.
type transposeArgs struct {
	kernel, stride, adj, pads []int
	implicit                  bool // legacy_pad VALID or SAME: no padding
	group                     int
	order                     convargs.Order
}

func parseTransposeArgs(b *operators.Base) (*transposeArgs, error) {
	legacy := int(b.ArgInt("legacy_pad", convargs.PadNotSet))
	a := &transposeArgs{group: int(b.ArgInt("group", 1))}
	var err error
	if a.order, err = convargs.ParseOrder(b.ArgString("order", "NCHW")); err != nil {
		return nil, err
	}
	switch legacy {
	case convargs.PadNotSet:
	case convargs.PadValid, convargs.PadSame:
		a.implicit = true
		if convargs.ExplicitPads(b) {
			return nil, fmt.Errorf("if you use legacy padding VALID or SAME, you should not specify any specific padding values")
		}
	case convargs.PadCaffeLegacyPool:
		return nil, fmt.Errorf("CAFFE_LEGACY_POOLING (legacy_pad 3) is no longer supported by ConvTranspose")
	default:
		return nil, fmt.Errorf("legacy_pad %d is not a LegacyPadding value", legacy)
	}
	a.kernel = convargs.PairArg(b, convargs.Ints(b.ArgInts("kernels", nil)), "kernel", "kernel_h", "kernel_w")
	a.stride = convargs.PairArg(b, convargs.Ints(b.ArgInts("strides", nil)), "stride", "stride_h", "stride_w")
	a.adj = convargs.PairArg(b, convargs.Ints(b.ArgInts("adjs", nil)), "adj", "adj_h", "adj_w")
	a.pads = convargs.PadArgs(b)
	if len(a.kernel) == 0 {
		a.kernel = []int{0, 0}
	}
	nk := len(a.kernel)
	if len(a.stride) == 0 {
		a.stride = convargs.Filled(nk, 1)
	}
	if len(a.pads) == 0 || a.implicit {
		a.pads = convargs.Filled(2*nk, 0)
	}
	if len(a.adj) == 0 {
		a.adj = convargs.Filled(nk, 0)
	}
	if len(a.stride) != nk || len(a.adj) != nk || len(a.pads) != 2*nk {
		return nil, fmt.Errorf("strides %v, adjs %v and pads %v do not fit a %d-D kernel %v", a.stride, a.adj, a.pads, nk, a.kernel)
	}
	for i := range nk {
		if a.kernel[i] <= 0 || a.stride[i] <= 0 || a.adj[i] < 0 || a.adj[i] > a.stride[i] {
			return nil, fmt.Errorf("want kernel %v > 0, strides %v > 0 and 0 ≤ adjs %v ≤ strides", a.kernel, a.stride, a.adj)
		}
		if a.pads[i] < 0 || a.pads[nk+i] < 0 {
			return nil, fmt.Errorf("pads %v must be non-negative", a.pads)
		}
	}
	if a.group <= 0 {
		return nil, fmt.Errorf("group %d must be positive", a.group)
	}
	return a, nil
}

// convTransposeBase is what ConvTranspose and its gradient share.
type convTransposeBase struct {
	convBase
	targs *transposeArgs
	in    [3]*blob.Tensor
}

// setup checks X and the filter and computes the layer (image side Y,
// column side X); it returns the batch size.
func (o *convTransposeBase) setup(x, w *blob.Tensor) (int, error) {
	a := o.targs
	if x.NumDims() != 4 || w.NumDims() != 4 {
		return 0, o.Errorf("X (%q) has shape %v and the filter (%q) shape %v: ConvTranspose wants 4-D tensors", o.InputName(0), x.Dims(), o.InputName(1), w.Dims())
	}
	if len(a.kernel) != 2 {
		return 0, o.Errorf("a %d-D kernel %v: ConvTranspose is 2-D", len(a.kernel), a.kernel)
	}
	n, m, sp := convargs.Spatial(x.Dims(), a.order)
	g := a.group
	kh, kw, cg := w.Dim(2), w.Dim(3), w.Dim(1)
	if a.order == convargs.NHWC {
		kh, kw, cg = w.Dim(1), w.Dim(2), w.Dim(3)
	}
	if w.Dim(0) != m || m%g != 0 || kh != a.kernel[0] || kw != a.kernel[1] {
		return 0, o.Errorf("filter (%q) has shape %v: want %d filters (the channels of X (%q) of shape %v, divisible by group %d) of kernel %v in order %v", o.InputName(1), w.Dims(), m, o.InputName(0), x.Dims(), g, a.kernel, a.order)
	}
	var out [2]int
	for i := range 2 {
		out[i] = (sp[i]-1)*a.stride[i] + a.kernel[i] + a.adj[i] - a.pads[i] - a.pads[2+i]
		if out[i] <= 0 {
			return 0, o.Errorf("X (%q) of shape %v: spatial dimension %d: input size %d, stride %d, kernel %d, adj %d and pads %d, %d give an output size of %d", o.InputName(0), x.Dims(), i, sp[i], a.stride[i], a.kernel[i], a.adj[i], a.pads[i], a.pads[2+i], out[i])
		}
	}
	ones := [2]int{1, 1}
	win := convargs.NewWindow(out[:], sp, a.kernel, a.stride, ones[:], a.pads[:2], a.pads[2:])
	if err := o.checkColumns(x, a.kernel, cg*g, win); err != nil {
		return 0, err
	}
	o.l = newLayer(win, a.order, cg*g, m, g)
	return n, nil
}

// outShape returns Y's shape for n images (in o.shape).
func (o *convTransposeBase) outShape(n int) []int {
	o.sp = append(o.sp[:0], o.l.win.In[1], o.l.win.In[2])
	o.shape = convargs.ImageShape(o.shape, o.l.order, n, o.l.c, o.sp)
	return o.shape
}

// convTransposeOp is ConvTranspose.
type convTransposeOp struct{ convTransposeBase }

func newConvTranspose(b *operators.Base) (operators.Operator, error) {
	a, err := parseTransposeArgs(b)
	if err != nil {
		return nil, err
	}
	return &convTransposeOp{convTransposeBase{convBase: convBase{Base: b}, targs: a}}, nil
}

func (o *convTransposeOp) Run() error {
	in, err := floatInputs(o.Base, o.in[:0], o.NumInputs())
	if err != nil {
		return err
	}
	x, w := in[0], in[1]
	n, err := o.setup(x, w)
	if err != nil {
		return err
	}
	l := &o.l
	var bias *blob.Tensor
	if len(in) == 3 {
		bias = in[2]
		if bias.NumDims() != 1 || bias.Dim(0) != l.c {
			return o.Errorf("bias (%q) has shape %v, want [%d] (the output channels of the filter (%q) of shape %v)", o.InputName(2), bias.Dims(), l.c, o.InputName(1), w.Dims())
		}
	}
	y := o.Output(0)
	if err := y.Init(x.DataType(), o.outShape(n)...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	if x.DataType() == blob.Float32 {
		runConv(&o.convBase, &o.s32, transForward, n, blob.Data[float32](y), blob.Data[float32](w), data[float32](bias), blob.Data[float32](x))
	} else {
		runConv(&o.convBase, &o.s64, transForward, n, blob.Data[float64](y), blob.Data[float64](w), data[float64](bias), blob.Data[float64](x))
	}
	return o.Context().Err()
}

// convTransposeGradOp is ConvTransposeGradient.
type convTransposeGradOp struct {
	convTransposeBase
	noBias bool
}

func newConvTransposeGradient(b *operators.Base) (operators.Operator, error) {
	a, err := parseTransposeArgs(b)
	if err != nil {
		return nil, err
	}
	return &convTransposeGradOp{convTransposeBase{convBase: convBase{Base: b}, targs: a}, b.ArgInt("no_bias", 0) != 0}, nil
}

func (o *convTransposeGradOp) Run() error {
	in, err := floatInputs(o.Base, o.in[:0], 3)
	if err != nil {
		return err
	}
	x, w, dy := in[0], in[1], in[2]
	n, err := o.setup(x, w)
	if err != nil {
		return err
	}
	if want := o.outShape(n); !sameDims(dy.Dims(), want) {
		return o.Errorf("dY (%q) has shape %v, want %v for X (%q) of shape %v and the filter (%q) of shape %v", o.InputName(2), dy.Dims(), want, o.InputName(0), x.Dims(), o.InputName(1), w.Dims())
	}
	dw, db, dx, err := gradOutputs(o.Base, o.noBias, x, w, o.l.c)
	if err != nil {
		return err
	}
	if x.DataType() == blob.Float32 {
		runConvGrad(&o.convBase, &o.s32, transBackward, n, blob.Data[float32](x), blob.Data[float32](w), blob.Data[float32](dy), data[float32](dw), data[float32](db), data[float32](dx))
	} else {
		runConvGrad(&o.convBase, &o.s64, transBackward, n, blob.Data[float64](x), blob.Data[float64](w), blob.Data[float64](dy), data[float64](dw), data[float64](db), data[float64](dx))
	}
	return o.Context().Err()
}
