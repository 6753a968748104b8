package quant

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/internal/convargs"
	"github.com/caffe2go/caffe2go/operators/internal/parallel"
	"github.com/caffe2go/caffe2go/operators/kernels/gemm"
)

func init() {
	convArgs := append([]operators.ArgSpec{
		{Name: "kernel", Doc: "kernel size (or kernel_h and kernel_w, or kernels); must match the filter's"},
		{Name: "stride", Default: 1, Doc: "stride (or stride_h and stride_w, or strides)"},
		{Name: "pad", Default: 0, Doc: "padding (or pad_t, pad_l, pad_b and pad_r, or pads)"},
		{Name: "dilation", Default: 1, Doc: "dilation (or dilation_h and dilation_w, or dilations)"},
		{Name: "group", Default: 1, Doc: "number of channel groups"},
		{Name: "order", Default: "NCHW", Doc: "storage order; only NHWC is supported, and must be given"},
		{Name: "legacy_pad", Default: 0, Doc: "Caffe2 LegacyPadding (1 VALID, 2 SAME, 3 CAFFE_LEGACY_POOLING)"},
	}, quantArgs...)
	for _, relu := range []bool{false, true} {
		typ, doc := "Int8Conv", "2-D convolution of an NHWC int8 image X with an int8 filter [M, kH, kW, C/group] and an INT32 int8 bias [M] (scale sx·sw, zero point 0), requantized to Y_scale and Y_zero_point."
		if relu {
			typ, doc = "Int8ConvRelu", doc+" The output goes through a Relu (codes below the code of 0 are raised to it)."
		}
		operators.MustRegisterCPU(operators.Schema{
			Type: typ, MinInputs: 2, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
			Args: convArgs, Doc: doc,
		}, func(b *operators.Base) (operators.Operator, error) { return newInt8Conv(b, relu) })
		operators.MustRegisterNoGradient(typ)
		operators.MustRegisterShapeFunc(typ, int8ConvShape)
	}

	operators.MustRegisterCPU(operators.Schema{
		Type: "Int8FC", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Args: quantArgs,
		Doc:  "Fully connected layer on int8 tensors: X flattened to [M, K] at axis 1, W [N, K], INT32 bias [N]; Y = X·Wᵀ + b, [M, N], requantized to Y_scale and Y_zero_point.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &int8FCOp{Base: b, oq: readOutputQuant(b)}, nil
	})
	operators.MustRegisterNoGradient("Int8FC")
	operators.MustRegisterShapeFunc("Int8FC", int8FCShape)
}

type int8ConvOp struct {
	*operators.Base
	args *convargs.Args
	relu bool
	oq   outputQuant
	dims []int
	wq   []int32 // the filter's codes less its zero point
	cols [][]int32
	// Scratch of the matrix-product path, in float64.
	wf, colf, outf []float64
	r              convRanger // the run's geometry
	sp             [2]int     // the input's spatial sizes
}

func newInt8Conv(b *operators.Base, relu bool) (operators.Operator, error) {
	a, err := convargs.Parse(b, convargs.KindConv)
	if err != nil {
		return nil, err
	}
	if a.Order != convargs.NHWC {
		return nil, b.Errorf("%s only supports NHWC order (give order \"NHWC\"), got %v", b.Type(), a.Order)
	}
	if len(a.Kernel) != 2 {
		return nil, b.Errorf("%s is 2-D: kernel %v", b.Type(), a.Kernel)
	}
	if b.NumInputs() != 3 {
		return nil, b.Errorf("%s needs its bias input (3 inputs, got %d)", b.Type(), b.NumInputs())
	}
	return &int8ConvOp{Base: b, args: a, relu: relu, oq: readOutputQuant(b)}, nil
}

// requantizerFor returns the requantizer of a GEMM-like operator whose
// accumulators have scale sx·sw: its float32 multiplier sx·sw/sy must be
// below 1.
func requantizerFor(b *operators.Base, sx, sw float32, oq outputQuant, relu bool) (requantizer, error) {
	if err := checkQuant(b, "the output's", oq.scale, oq.zero); err != nil {
		return requantizer{}, err
	}
	m := float32(sx*sw) / oq.scale
	if !(m < 1) {
		return requantizer{}, b.Errorf("the requantization scale (input scale %g × weight scale %g) / Y_scale %g = %g must be below 1", sx, sw, oq.scale, m)
	}
	q, shift, err := quantizeMultiplierSmallerThanOne(float64(m))
	if err != nil {
		return requantizer{}, b.Errorf("%v", err)
	}
	lo, hi := activationLimits(oq.scale, oq.zero, relu)
	return requantizer{mult: q, shift: shift, zero: oq.zero, lo: lo, hi: hi}, nil
}

func (o *int8ConvOp) Run() error {
	x, err := int8Input(o.Base, 0)
	if err != nil {
		return err
	}
	w, err := int8Input(o.Base, 1)
	if err != nil {
		return err
	}
	bias, err := int8InputOf(o.Base, 2, blob.Int32)
	if err != nil {
		return err
	}
	if err := checkQuant(o.Base, "X's", x.Scale, x.ZeroPoint); err != nil {
		return err
	}
	if err := checkQuant(o.Base, "the filter's", w.Scale, w.ZeroPoint); err != nil {
		return err
	}
	xd, wd := x.T.Dims(), w.T.Dims()
	if len(xd) != 4 || len(wd) != 4 {
		return o.Errorf("X %v and filter %v must be 4-D (NHWC, and [M, kH, kW, C/group])", xd, wd)
	}
	n, h, wid, c := xd[0], xd[1], xd[2], xd[3]
	m, kh, kw, cg := wd[0], wd[1], wd[2], wd[3]
	g := o.args.Group
	if c%g != 0 || m%g != 0 || cg != c/g {
		return o.Errorf("X %v has %d channels and the filter %v is [M, kH, kW, C/group]: with group %d, want C and M divisible by the group and the filter's last dim %d", xd, c, wd, g, c/g)
	}
	if kh != o.args.Kernel[0] || kw != o.args.Kernel[1] {
		return o.Errorf("the filter %v is %d×%d, the kernel argument %v", wd, kh, kw, o.args.Kernel)
	}
	if bias.T.Size() != m {
		return o.Errorf("the bias %q has %d elements, want M = %d", o.InputName(2), bias.T.Size(), m)
	}
	o.sp = [2]int{h, wid}
	win, err := o.args.Window(o.sp[:])
	if err != nil {
		return o.Errorf("X %v: %v", xd, err)
	}
	rq, err := requantizerFor(o.Base, x.Scale, w.Scale, o.oq, o.relu)
	if err != nil {
		return err
	}
	oh, ow := win.Out[1], win.Out[2]
	y := int8Output(o.Base, 0)
	o.dims = append(o.dims[:0], n, oh, ow, m)
	if err := y.T.Init(blob.Uint8, o.dims...); err != nil {
		return o.Errorf("output %q %v: %w", o.OutputName(0), o.dims, err)
	}
	y.Scale, y.ZeroPoint = o.oq.scale, o.oq.zero
	if y.T.Size() == 0 {
		return nil
	}
	k := kh * kw * cg
	if err := blob.CheckElements(blob.Int32, w.T.Size()); err != nil {
		return o.Errorf("filter %v: %w", wd, err)
	}
	o.wq = o.wq[:0]
	for _, v := range blob.Data[uint8](w.T) {
		o.wq = append(o.wq, int32(v)-w.ZeroPoint)
	}
	o.r = convRanger{
		op: o, x: blob.Data[uint8](x.T), y: blob.Data[uint8](y.T), bias: blob.Data[int32](bias.T),
		zx: x.ZeroPoint, rq: rq, h: h, w: wid, c: c, oh: oh, ow: ow, m: m, kh: kh, kw: kw, cg: cg, g: g,
		sh: win.S[1], sw: win.S[2], dh: win.D[1], dw: win.D[2], ph: win.Pad[1], pw: win.Pad[2],
	}
	r := &o.r
	if m/g >= gemmMinOutputs {
		return o.runGemm(r, n)
	}
	pixels := n * oh * ow
	parts := parallel.Parts(o.Threads(), pixels, pixels*m*k)
	if err := blob.CheckElements(blob.Int32, parts*k); err != nil {
		return o.Errorf("scratch of %d×%d: %w", parts, k, err)
	}
	for len(o.cols) < parts {
		o.cols = append(o.cols, nil)
	}
	parallel.Run(r, pixels, parts)
	return nil
}

// gemmMinOutputs is the least number of output channels per group for
// which Int8Conv multiplies matrices (exactly, in float64) instead of
// taking dot products pixel by pixel.
const gemmMinOutputs = 4

// runGemm computes the convolution image by image and group by group as
// a matrix product: the image's windows less the input zero point
// (im2col, [pixels, kH·kW·C/group]) times the group's filters less theirs,
// transposed. The codes are integers below 2^8 in magnitude, so the
// float64 products and sums are exact (below 2^53); the sums wrap to
// int32 as Caffe2's accumulators do.
func (o *int8ConvOp) runGemm(r *convRanger, n int) error {
	k := r.kh * r.kw * r.cg
	mg := r.m / r.g
	pixels := r.oh * r.ow
	if err := blob.CheckElements(blob.Float64, pixels*k+pixels*mg+len(o.wq)); err != nil {
		return o.Errorf("scratch of %d×%d: %w", pixels, k+mg, err)
	}
	o.wf = o.wf[:0]
	for _, v := range o.wq {
		o.wf = append(o.wf, float64(v))
	}
	if cap(o.colf) < pixels*k {
		o.colf = make([]float64, pixels*k)
	}
	if cap(o.outf) < pixels*mg {
		o.outf = make([]float64, pixels*mg)
	}
	col, out := o.colf[:pixels*k], o.outf[:pixels*mg]
	for img := range n {
		for gi := range r.g {
			r.im2col(col, img, gi)
			gemm.Gemm(o.Threads(), false, true, pixels, mg, k, 1, col, k, o.wf[gi*mg*k:], k, 0, out, mg)
			for p := range pixels {
				dst := r.y[(img*pixels+p)*r.m+gi*mg:][:mg]
				for j, v := range out[p*mg : (p+1)*mg] {
					dst[j] = r.rq.apply(r.bias[gi*mg+j] + int32(int64(v)))
				}
			}
		}
	}
	return nil
}

// im2col writes the windows of group gi of image img, codes less the zero
// point (0 outside the image), one row of kH·kW·C/group per output pixel.
func (r *convRanger) im2col(col []float64, img, gi int) {
	i := 0
	for oy := range r.oh {
		for ox := range r.ow {
			for ky := range r.kh {
				iy := oy*r.sh - r.ph + ky*r.dh
				for kx := range r.kw {
					ix := ox*r.sw - r.pw + kx*r.dw
					dst := col[i : i+r.cg]
					i += r.cg
					if iy < 0 || iy >= r.h || ix < 0 || ix >= r.w {
						clear(dst)
						continue
					}
					base := ((img*r.h+iy)*r.w+ix)*r.c + gi*r.cg
					for j, v := range r.x[base : base+r.cg] {
						dst[j] = float64(int32(v) - r.zx)
					}
				}
			}
		}
	}
}

// convRanger computes output pixels [lo, hi) of an Int8Conv.
type convRanger struct {
	op                     *int8ConvOp
	x, y                   []uint8
	bias                   []int32
	zx                     int32
	rq                     requantizer
	h, w, c, oh, ow, m     int
	kh, kw, cg, g          int
	sh, sw, dh, dw, ph, pw int
}

func (r *convRanger) RunRange(part, lo, hi int) {
	k := r.kh * r.kw * r.cg
	col := r.op.cols[part]
	if cap(col) < k {
		// A line of spare capacity after the window keeps the parts'
		// windows, written at every pixel, off each other's cache lines.
		col = make([]int32, k, parallel.Padded(k, 4))
		r.op.cols[part] = col
	}
	col = col[:k]
	mg := r.m / r.g
	for p := lo; p < hi; p++ {
		ox := p % r.ow
		oy := p / r.ow % r.oh
		img := p / (r.ow * r.oh)
		out := r.y[p*r.m : (p+1)*r.m]
		for gi := range r.g {
			// Gather the window of group gi, codes less the zero point
			// (0 where the window leaves the image).
			i := 0
			for ky := range r.kh {
				iy := oy*r.sh - r.ph + ky*r.dh
				for kx := range r.kw {
					ix := ox*r.sw - r.pw + kx*r.dw
					dst := col[i : i+r.cg]
					i += r.cg
					if iy < 0 || iy >= r.h || ix < 0 || ix >= r.w {
						clear(dst)
						continue
					}
					base := ((img*r.h+iy)*r.w+ix)*r.c + gi*r.cg
					for j, v := range r.x[base : base+r.cg] {
						dst[j] = int32(v) - r.zx
					}
				}
			}
			for mi := gi * mg; mi < (gi+1)*mg; mi++ {
				acc := r.bias[mi] + dot(col, r.op.wq[mi*k:(mi+1)*k])
				out[mi] = r.rq.apply(acc)
			}
		}
	}
}

// dot is Σ a[i]·b[i] in int32 arithmetic, wrapping as Caffe2's
// accumulators do.
func dot(a, b []int32) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

type int8FCOp struct {
	*operators.Base
	oq outputQuant
	xq []int32
	wq []int32
}

func (o *int8FCOp) Run() error {
	x, err := int8Input(o.Base, 0)
	if err != nil {
		return err
	}
	w, err := int8Input(o.Base, 1)
	if err != nil {
		return err
	}
	bias, err := int8InputOf(o.Base, 2, blob.Int32)
	if err != nil {
		return err
	}
	if err := checkQuant(o.Base, "X's", x.Scale, x.ZeroPoint); err != nil {
		return err
	}
	if err := checkQuant(o.Base, "W's", w.Scale, w.ZeroPoint); err != nil {
		return err
	}
	if x.T.NumDims() < 1 || w.T.NumDims() != 2 {
		return o.Errorf("X %v must have a dimension and W %v must be 2-D [N, K]", x.T.Dims(), w.T.Dims())
	}
	k := x.T.SizeFromDim(1)
	nOut := w.T.Dim(0)
	if k != w.T.Dim(1) || k == 0 {
		return o.Errorf("X %v flattens to K = %d columns, W %v has %d (K must be positive)", x.T.Dims(), k, w.T.Dims(), w.T.Dim(1))
	}
	if bias.T.Size() != nOut {
		return o.Errorf("the bias %q has %d elements, want N = %d", o.InputName(2), bias.T.Size(), nOut)
	}
	rq, err := requantizerFor(o.Base, x.Scale, w.Scale, o.oq, false)
	if err != nil {
		return err
	}
	mRows := x.T.Size() / k
	y := int8Output(o.Base, 0)
	if err := y.T.Init(blob.Uint8, mRows, nOut); err != nil {
		return o.Errorf("output %q [%d %d]: %w", o.OutputName(0), mRows, nOut, err)
	}
	y.Scale, y.ZeroPoint = o.oq.scale, o.oq.zero
	if y.T.Size() == 0 {
		return nil
	}
	if err := blob.CheckElements(blob.Int32, x.T.Size()+w.T.Size()); err != nil {
		return o.Errorf("X %v and W %v as int32: %w", x.T.Dims(), w.T.Dims(), err)
	}
	o.xq, o.wq = o.xq[:0], o.wq[:0]
	for _, v := range blob.Data[uint8](x.T) {
		o.xq = append(o.xq, int32(v)-x.ZeroPoint)
	}
	for _, v := range blob.Data[uint8](w.T) {
		o.wq = append(o.wq, int32(v)-w.ZeroPoint)
	}
	yd, bd := blob.Data[uint8](y.T), blob.Data[int32](bias.T)
	for i := range mRows {
		row := o.xq[i*k : (i+1)*k]
		for j := range nOut {
			yd[i*nOut+j] = rq.apply(bd[j] + dot(row, o.wq[j*k:(j+1)*k]))
		}
	}
	return nil
}

// int8ConvShape is Int8Conv's output shape: NHWC, M channels.
func int8ConvShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	x, w := in[0], in[1]
	a, err := convargs.Parse(b, convargs.KindConv)
	if err != nil || x.Rank() != 4 || len(a.Kernel) != 2 {
		return nil, nil
	}
	out := operators.Shape(blob.Uint8, x.Dim(0), operators.AnyDim, operators.AnyDim, w.Dim(0))
	if x.Dim(1) >= 0 && x.Dim(2) >= 0 {
		if win, err := a.Window([]int{x.Dim(1), x.Dim(2)}); err == nil {
			out.Dims[1], out.Dims[2] = win.Out[1], win.Out[2]
		}
	}
	return []operators.TensorShape{out}, nil
}

// int8FCShape is Int8FC's output shape [M, N].
func int8FCShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	x, w := in[0], in[1]
	rows := operators.AnyDim
	if x.Rank() >= 1 {
		if k, ok := x.Size(1, x.Rank()); ok && k > 0 {
			if n, ok := x.Size(0, x.Rank()); ok {
				rows = n / k
			}
		}
	}
	return []operators.TensorShape{operators.Shape(blob.Uint8, rows, w.Dim(0))}, nil
}
