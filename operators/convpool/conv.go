package convpool

import (
	"fmt"

	"github.com/caffe2go/caffe2go/operators/internal/convargs"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/internal/parallel"
)

// convPoolArgSpecs documents ConvPoolOpBase's arguments.
var convPoolArgSpecs = []operators.ArgSpec{
	{Name: "kernel", Doc: "kernel size of every spatial dimension (2-D); or kernel_h and kernel_w; or kernels, one per dimension"},
	{Name: "stride", Default: int64(1), Doc: "stride (2-D); or stride_h and stride_w; or strides"},
	{Name: "pad", Default: int64(0), Doc: "padding of every side (2-D); or pad_t, pad_l, pad_b and pad_r; or pads (all heads, then all tails)"},
	{Name: "dilation", Default: int64(1), Doc: "dilation (2-D); or dilation_h and dilation_w; or dilations"},
	{Name: "order", Default: "NCHW", Doc: "storage order, NCHW or NHWC"},
	{Name: "legacy_pad", Doc: "1 VALID, 2 SAME, 3 CAFFE_LEGACY_POOLING (Caffe's ceil-mode output size); unset: explicit pads"},
	{Name: "global_pooling", Default: int64(0), Doc: "pool over the whole spatial extent"},
	{Name: "group", Default: int64(1), Doc: "number of channel groups"},
	{Name: "shared_buffer", Default: int64(0), Doc: "accepted; every operator keeps its own buffers"},
	{Name: "float16_compute", Default: false, Doc: "accepted; the CPU kernels compute in the input type"},
}

var convGradArgSpecs = append(append([]operators.ArgSpec{}, convPoolArgSpecs...),
	operators.ArgSpec{Name: "no_bias", Default: int64(0), Doc: "the forward operator had no bias: outputs are (dW[, dX])"},
	operators.ArgSpec{Name: "no_gradient_to_input", Default: int64(0), Doc: "on the forward operator: the gradient maker omits dX"})

func init() {
	for _, typ := range []string{"Conv", "Conv1D", "Conv2D", "Conv3D"} {
		grad := typ + "Gradient"
		operators.MustRegisterCPU(operators.Schema{
			Type: typ, MinInputs: 2, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1, Args: convPoolArgSpecs,
			Doc: typ + "(X, filter[, bias]) is a convolution: X is NCHW [N, C, spatial…] (NHWC [N, spatial…, C]), " +
				"filter [M, C/group, kernel…] (NHWC [M, kernel…, C/group]), bias [M]; Y has M channels and the " +
				"spatial sizes of Caffe2's output-size rule. 1-D, 2-D and 3-D windows.",
		}, newConv)
		operators.MustRegisterCPU(operators.Schema{
			Type: grad, MinInputs: 2, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 3, Args: convGradArgSpecs,
			Doc: grad + "(X, filter, dY) computes (dfilter, dbias[, dX]), or (dfilter[, dX]) with no_bias, of " + typ + ".",
		}, newConvGradient)
		operators.MustRegisterGradient(typ, convGradientMaker(grad))
	}
}

// convGradientMaker is Caffe2's GetConvGradient (also ConvTranspose's):
// (X, W, dY) → (dW, db, dX), without db and with no_bias=1 when there is no
// bias, and without dX when no_gradient_to_input is set.
func convGradientMaker(grad string) operators.GradientMaker {
	return func(g *operators.GradientContext) error {
		if n := g.NumInputs(); n != 2 && n != 3 {
			return fmt.Errorf("%d inputs, want 2 or 3", n)
		}
		computeDX := g.ArgInt("no_gradient_to_input", 0) == 0
		in := []string{g.I(0), g.I(1), g.GO(0)}
		if g.NumInputs() == 3 {
			out := []string{g.GI(1), g.GI(2)}
			if computeDX {
				out = append(out, g.GI(0))
			}
			g.Op(grad, in, out)
			return nil
		}
		out := []string{g.GI(1)}
		if computeDX {
			out = append(out, g.GI(0))
		}
		g.Op(grad, in, out, netdef.ArgInt("no_bias", 1))
		return nil
	}
}

// convBase is what Conv and ConvGradient share.
type convBase struct {
	*operators.Base
	args  *convargs.Args
	shape []int // scratch for an output shape
	sp    []int // scratch for output spatial sizes
	l     layer
	s32   scratch[float32]
	s64   scratch[float64]
	// colBytes is the largest column buffer checkColumns has admitted: the
	// scratch it sizes is kept, so a run needing no more is not checked
	// against the heap again.
	colBytes float64
}

// setup checks X and the filter and computes the layer; it returns the
// batch size.
func (o *convBase) setup(x, w *blob.Tensor) (int, error) {
	a := o.args
	if x.NumDims() < 3 {
		return 0, o.Errorf("input 0 (%q) has shape %v: want N, C and at least one spatial dimension", o.InputName(0), x.Dims())
	}
	if w.NumDims() != x.NumDims() {
		return 0, o.Errorf("filter (%q) has shape %v, but X (%q) has shape %v: they need the same number of dimensions", o.InputName(1), w.Dims(), o.InputName(0), x.Dims())
	}
	n, c, sp := convargs.Spatial(x.Dims(), a.Order)
	win, err := a.Window(sp)
	if err != nil {
		return 0, o.Errorf("X (%q) of shape %v: %v", o.InputName(0), x.Dims(), err)
	}
	m := w.Dim(0)
	g := a.Group
	if c%g != 0 || m%g != 0 {
		return 0, o.Errorf("group %d does not divide the %d input channels of X (%q) of shape %v and the %d output channels of the filter (%q) of shape %v", g, c, o.InputName(0), x.Dims(), m, o.InputName(1), w.Dims())
	}
	wsp, wc := w.Dims()[2:], w.Dim(1)
	if a.Order == convargs.NHWC {
		wsp, wc = w.Dims()[1:w.NumDims()-1], w.Dim(w.NumDims()-1)
	}
	ok := wc*g == c
	for i, k := range wsp {
		ok = ok && k == a.Kernel[i]
	}
	if !ok {
		o.shape = append(o.shape[:0], m)
		if a.Order == convargs.NCHW {
			o.shape = append(o.shape, c/g)
		}
		o.shape = append(o.shape, a.Kernel...)
		if a.Order == convargs.NHWC {
			o.shape = append(o.shape, c/g)
		}
		return 0, o.Errorf("filter (%q) has shape %v, want %v for X (%q) of shape %v with %d channels, group %d, kernel %v and order %v", o.InputName(1), w.Dims(), o.shape, o.InputName(0), x.Dims(), c, g, a.Kernel, a.Order)
	}
	if err := o.checkColumns(x, a.Kernel, c, win); err != nil {
		return 0, err
	}
	o.l = newLayer(win, a.Order, c, m, g)
	return n, nil
}

// checkColumns refuses a layer whose im2col buffer for one image (c
// channels × kernel positions × outputs of win) the memory budget does not
// allow. That buffer is sized by the arguments and dims, not by a tensor
// the budget admitted: a 2048² image and a 1024² kernel would ask for 4 TB.
func (o *convBase) checkColumns(x *blob.Tensor, kernel []int, c int, win convargs.Window) error {
	if win.OneByOne {
		return nil
	}
	cols := float64(c) * float64(win.KSize) * float64(win.OutSize)
	bytes := cols * float64(x.DataType().ItemSize())
	if bytes <= o.colBytes {
		return nil
	}
	if err := blob.CheckElements(x.DataType(), int(min(cols, 1<<62))); err != nil {
		return o.Errorf("X (%q) of shape %v with kernel %v: the im2col buffer of %d channels × %d kernel positions × %d outputs: %w", o.InputName(0), x.Dims(), kernel, c, win.KSize, win.OutSize, err)
	}
	o.colBytes = bytes
	return nil
}

// outSpatial returns the layer's output spatial sizes (in o.sp).
func (o *convBase) outSpatial() []int {
	o.sp = o.l.win.OutDims(o.sp[:0])
	return o.sp
}

// floatInputs returns inputs 0…n−1, all of input 0's float type.
func floatInputs(b *operators.Base, dst []*blob.Tensor, n int) ([]*blob.Tensor, error) {
	dst = dst[:0]
	x, err := b.FloatInput(0)
	if err != nil {
		return nil, err
	}
	dst = append(dst, x)
	for i := 1; i < n; i++ {
		t, err := b.Input(i)
		if err != nil {
			return nil, err
		}
		if t.DataType() != x.DataType() {
			return nil, b.Errorf("input %d (%q) has type %v, but input 0 (%q) has type %v", i, b.InputName(i), t.DataType(), b.InputName(0), x.DataType())
		}
		dst = append(dst, t)
	}
	return dst, nil
}

// convOp is Conv (and Conv1D, Conv2D, Conv3D).
type convOp struct {
	convBase
	in [3]*blob.Tensor
}

func newConv(b *operators.Base) (operators.Operator, error) {
	a, err := convargs.Parse(b, convargs.KindConv)
	if err != nil {
		return nil, err
	}
	return &convOp{convBase: convBase{Base: b, args: a}}, nil
}

func (o *convOp) Run() error {
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
		if bias.NumDims() != 1 || bias.Dim(0) != l.m {
			return o.Errorf("bias (%q) has shape %v, want [%d] for the filter (%q) of shape %v", o.InputName(2), bias.Dims(), l.m, o.InputName(1), w.Dims())
		}
	}
	o.shape = convargs.ImageShape(o.shape, l.order, n, l.m, o.outSpatial())
	y := o.Output(0)
	if err := y.Init(x.DataType(), o.shape...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	if x.DataType() == blob.Float32 {
		runConv(&o.convBase, &o.s32, convForward, n, blob.Data[float32](x), blob.Data[float32](w), data[float32](bias), blob.Data[float32](y))
	} else {
		runConv(&o.convBase, &o.s64, convForward, n, blob.Data[float64](x), blob.Data[float64](w), data[float64](bias), blob.Data[float64](y))
	}
	return o.Context().Err()
}

// data is blob.Data, nil for a nil tensor.
func data[T blob.Element](t *blob.Tensor) []T {
	if t == nil {
		return nil
	}
	return blob.Data[T](t)
}

// split returns how many parts a batch of n images is split into for a
// job of kind, and gives each part's products an equal share of the
// operator's thread budget, so that the parts and their GEMMs together use
// at most Threads goroutines: a GEMM inside a part asking for helpers of
// its own would only take cores from the other parts. It also sets the
// layer's images per product (layer.setBatch).
func (o *convBase) split(kind jobKind, n int) int {
	threads := o.Threads()
	parts := parallel.Parts(threads, n, n*(o.l.colLen+o.l.sideLen))
	o.l.threads = max(1, threads/parts)
	o.l.setBatch(kind, n, parts)
	return parts
}

// runConv runs a forward job (convForward or transForward) over n images.
func runConv[T blob.Float](o *convBase, s *scratch[T], kind jobKind, n int, img, w, b, side []T) {
	l := &o.l
	parts := o.split(kind, n)
	wino := kind == convForward && l.wino
	s.prepare(l, parts, 0, 0, !wino)
	s.job = batchJob[T]{kind: kind, l: l, img: img, side: side, w: w, b: b, cols: s.cols, sides: s.sides, done: o.Context().Done()}
	if wino {
		s.prepareWino(l, &l.wf, parts, false, w)
		s.job.wu, s.job.wv, s.job.wo, s.job.wpad = s.wu, s.wv, s.wo, s.wpad
	}
	parallel.Run(&s.job, n, parts)
	s.job = batchJob[T]{}
}

// convGradOp is ConvGradient (and its 1-D, 2-D and 3-D names).
type convGradOp struct {
	convBase
	noBias bool
	in     [3]*blob.Tensor
}

func newConvGradient(b *operators.Base) (operators.Operator, error) {
	a, err := convargs.Parse(b, convargs.KindConv)
	if err != nil {
		return nil, err
	}
	return &convGradOp{convBase: convBase{Base: b, args: a}, noBias: b.ArgInt("no_bias", 0) != 0}, nil
}

func (o *convGradOp) Run() error {
	if o.NumInputs() != 3 {
		return o.Errorf("%d inputs, want X, filter and dY", o.NumInputs())
	}
	in, err := floatInputs(o.Base, o.in[:0], 3)
	if err != nil {
		return err
	}
	x, w, dy := in[0], in[1], in[2]
	n, err := o.setup(x, w)
	if err != nil {
		return err
	}
	l := &o.l
	o.shape = convargs.ImageShape(o.shape, l.order, n, l.m, o.outSpatial())
	if !sameDims(dy.Dims(), o.shape) {
		return o.Errorf("dY (%q) has shape %v, want %v for X (%q) of shape %v and the filter (%q) of shape %v", o.InputName(2), dy.Dims(), o.shape, o.InputName(0), x.Dims(), o.InputName(1), w.Dims())
	}
	dw, db, dx, err := gradOutputs(o.Base, o.noBias, x, w, l.m)
	if err != nil {
		return err
	}
	if x.DataType() == blob.Float32 {
		runConvGrad(&o.convBase, &o.s32, convBackward, n, blob.Data[float32](x), blob.Data[float32](w), blob.Data[float32](dy), data[float32](dw), data[float32](db), data[float32](dx))
	} else {
		runConvGrad(&o.convBase, &o.s64, convBackward, n, blob.Data[float64](x), blob.Data[float64](w), blob.Data[float64](dy), data[float64](dw), data[float64](db), data[float64](dx))
	}
	return o.Context().Err()
}

func sameDims(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// gradOutputs shapes the outputs of a (transposed) convolution gradient:
// dW like W, then db [biasLen] unless noBias, then dX like X when there is
// an output left for it (Caffe2: three outputs, or two with no_bias).
func gradOutputs(b *operators.Base, noBias bool, x, w *blob.Tensor, biasLen int) (dw, db, dx *blob.Tensor, err error) {
	dw = b.Output(0)
	if err = dw.Init(w.DataType(), w.Dims()...); err != nil {
		return nil, nil, nil, b.Errorf("output %q: %v", b.OutputName(0), err)
	}
	next := 1
	if !noBias {
		if b.NumOutputs() < 2 {
			return nil, nil, nil, b.Errorf("%d outputs: the bias gradient needs a second output (or no_bias=1)", b.NumOutputs())
		}
		db = b.Output(1)
		if err = db.Init(w.DataType(), biasLen); err != nil {
			return nil, nil, nil, b.Errorf("output %q: %v", b.OutputName(1), err)
		}
		next = 2
	}
	if b.NumOutputs() > next {
		dx = b.Output(next)
		if err = dx.Init(x.DataType(), x.Dims()...); err != nil {
			return nil, nil, nil, b.Errorf("output %q: %v", b.OutputName(next), err)
		}
	}
	return dw, db, dx, nil
}

// runConvGrad runs a gradient job (convBackward or transBackward) over n
// images: dw (required), db (optional, the sum of the column side's
// gradient for Conv, of the image side's for ConvTranspose) and the input
// gradient dx (optional).
func runConvGrad[T blob.Float](o *convBase, s *scratch[T], kind jobKind, n int, x, w, dy, dw, db, dx []T) {
	l := &o.l
	clear(dw)
	parts := o.split(kind, n)
	// Part 0 accumulates into dw itself unless accDW's layout is the
	// transpose of dw's.
	from := 1
	if l.dwT {
		from = 0
	}
	wino := kind == convBackward && l.wino
	s.prepare(l, parts, from, len(dw), !wino)
	if from == 1 {
		s.dw[0] = dw
	}
	s.job = batchJob[T]{kind: kind, l: l, w: w, cols: s.cols, sides: s.sides, dw: s.dw, done: o.Context().Done()}
	if kind == convBackward {
		s.job.img, s.job.side, s.job.dimg = x, dy, dx
		if wino {
			s.prepareWinoDW(l, parts)
			s.job.dz, s.job.dv, s.job.dy, s.job.dpad = s.dz, s.dv, s.dy, s.dpad
		}
		switch {
		case dx != nil && l.wino:
			s.prepareWino(l, &l.wb, parts, true, w)
			s.job.wu, s.job.wv, s.job.wo, s.job.wpad = s.wu, s.wv, s.wo, s.wpad
		case dx != nil && l.order == convargs.NCHW:
			s.wt = grow(s.wt, len(w))
			transposeFilter(l, w, s.wt)
			s.job.wt = s.wt
		}
	} else {
		s.job.img, s.job.side, s.job.dside = dy, x, dx
	}
	if db != nil && l.order == convargs.NCHW {
		s.sums = grow(s.sums, n*len(db))
		s.job.sums = s.sums
	}
	parallel.Run(&s.job, n, parts)
	if from == 1 {
		s.sumPartials(1, parts, dw)
		s.dw[0] = nil
	} else {
		s.addTransposed(l, parts, dw)
	}
	s.job = batchJob[T]{}
	switch {
	case db == nil:
	case l.order == convargs.NCHW:
		foldSums(n, s.sums, db)
	default:
		biasGradNHWC(n, len(db), len(dy)/(n*len(db)), dy, db)
	}
}
