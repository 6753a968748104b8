package image

import (
	"fmt"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/internal/convargs"
)

// lcArgs are ConvPoolOpBase's arguments, which the locally connected
// operators read.
var lcArgs = []operators.ArgSpec{
	{Name: "kernel", Doc: "kernel size of every spatial dimension (or kernels, kernel_h and kernel_w)"},
	{Name: "kernels", Doc: "kernel size per spatial dimension"},
	{Name: "stride", Default: int64(1), Doc: "stride of every spatial dimension (or strides, stride_h and stride_w)"},
	{Name: "pad", Default: int64(0), Doc: "padding at both ends of every spatial dimension (or pads, pad_t, pad_l, pad_b and pad_r)"},
	{Name: "dilation", Default: int64(1), Doc: "kernel dilation (or dilations, dilation_h and dilation_w)"},
	{Name: "group", Default: int64(1), Doc: "channel groups (NCHW only)"},
	{Name: "legacy_pad", Default: int64(0), Doc: "Caffe2's LegacyPadding: 0 explicit, 1 VALID, 2 SAME"},
	orderArg,
	{Name: "no_bias", Default: int64(0), Doc: "gradient: the forward operator had no bias, the outputs are (dfilter[, dX])"},
	{Name: "no_gradient_to_input", Default: int64(0), Doc: "the gradient maker omits dX"},
}

func init() {
	for _, typ := range []string{"LC", "LC1D", "LC2D", "LC3D"} {
		grad := typ + "Gradient"
		operators.MustRegisterCPU(operators.Schema{
			Type: typ, MinInputs: 2, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1, Args: lcArgs,
			Doc: typ + "(X, filter[, bias]) → Y is a locally connected layer: a convolution whose weights differ at " +
				"every output position. For NCHW X (N, C, spatial…) the filter is (Y spatial…, M, C/group, kernel…); " +
				"for NHWC (2-D only) it is (YH, YW, M, kH, kW, C); the bias is (Y spatial…, M).",
		}, func(b *operators.Base) (operators.Operator, error) { return newLC(b, false) })
		operators.MustRegisterCPU(operators.Schema{
			Type: grad, MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 3, Args: lcArgs,
			Doc: grad + "(X, filter, dY) → (dfilter, dbias[, dX]), or (dfilter[, dX]) with no_bias, of " + typ + ".",
		}, func(b *operators.Base) (operators.Operator, error) { return newLC(b, true) })
		operators.MustRegisterGradient(typ, lcGradientMaker(grad))
		operators.MustRegisterShapeFunc(typ, lcShape)
		operators.MustRegisterShapeFunc(grad, lcGradShape)
	}
}

// lcGradientMaker is Caffe2's GetLocallyConnectedGradient: (X, filter,
// dY) → (dfilter, dbias, dX), without dbias (and with no_bias=1) when there
// is no bias, without dX when no_gradient_to_input is set.
func lcGradientMaker(grad string) operators.GradientMaker {
	return func(g *operators.GradientContext) error {
		if n := g.NumInputs(); n != 2 && n != 3 {
			return fmt.Errorf("%d inputs, want 2 or 3", n)
		}
		dx := g.ArgInt("no_gradient_to_input", 0) == 0
		in := []string{g.I(0), g.I(1), g.GO(0)}
		out := []string{g.GI(1)}
		var args []*netdef.Argument
		if g.NumInputs() == 3 {
			out = append(out, g.GI(2))
		} else {
			args = append(args, netdef.ArgInt("no_bias", 1))
		}
		if dx {
			out = append(out, g.GI(0))
		}
		g.Op(grad, in, out, args...)
		return nil
	}
}

func lcShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	w := in[1]
	if w.Unknown || in[0].Unknown {
		return nil, nil
	}
	nd := in[0].Rank() - 2
	if nd < 1 || w.Rank() != in[0].Rank()+nd {
		return nil, b.InputShapeError(in, "the filter must have rank %d for X of rank %d", in[0].Rank()+nd, in[0].Rank())
	}
	dims := []int{in[0].Dims[0], w.Dims[nd]}
	dims = append(dims, w.Dims[:nd]...)
	if b.ArgString("order", "NCHW") == "NHWC" {
		dims = append(append([]int{in[0].Dims[0]}, w.Dims[:nd]...), w.Dims[nd])
	}
	return []operators.TensorShape{operators.Shape(blob.Float32, dims...)}, nil
}

func lcGradShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	out := []operators.TensorShape{in[1].WithType(blob.Float32)}
	if in[1].Unknown {
		out[0] = operators.UnknownShape
	}
	if b.ArgInt("no_bias", 0) == 0 {
		bias := operators.UnknownShape
		if nd := in[0].Rank() - 2; !in[1].Unknown && nd >= 1 && in[1].Rank() > nd {
			bias = operators.Shape(blob.Float32, in[1].Dims[:nd+1]...)
		}
		out = append(out, bias)
	}
	out = append(out, in[0].WithType(blob.Float32))
	if in[0].Unknown {
		out[len(out)-1] = operators.UnknownShape
	}
	return out[:min(len(out), len(b.Def().GetOutput()))], nil
}

// lcOp is LC* (grad false) or LC*Gradient.
type lcOp struct {
	*operators.Base
	args   *convargs.Args
	grad   bool
	noBias bool
	taps   []int // input offsets of one output position's kernel taps, −1 outside
	// Scratch shapes, kept between runs: the output's spatial sizes, the
	// filter's expected shape, Y's and the bias's.
	out, want, yShape, bShape []int
}

func newLC(b *operators.Base, grad bool) (operators.Operator, error) {
	a, err := convargs.Parse(b, convargs.KindConv)
	if err != nil {
		return nil, b.Errorf("%v", err)
	}
	if a.LegacyPad == convargs.PadCaffeLegacyPool {
		return nil, b.Errorf("legacy_pad %d (CAFFE_LEGACY_POOLING) is for pooling", a.LegacyPad)
	}
	if a.Order == convargs.NHWC && (len(a.Kernel) != 2 || a.Group != 1) {
		return nil, b.Errorf("NHWC supports only 2-D kernels without groups (kernel %v, group %d)", a.Kernel, a.Group)
	}
	o := &lcOp{Base: b, args: a, grad: grad, noBias: b.ArgInt("no_bias", 0) != 0}
	if grad {
		want := 2
		if o.noBias {
			want = 1
		}
		if n := b.NumOutputs(); n != want && n != want+1 {
			return nil, b.Errorf("has %d outputs; want dfilter%s[, dX]", n, map[bool]string{true: "", false: ", dbias"}[o.noBias])
		}
	}
	return o, nil
}

// geometry is one run's shapes.
type geometry struct {
	win      convargs.Window
	n, c, m  int
	cg, mg   int // channels per group, in and out
	nhwc     bool
	outShape []int
	biasDims []int
}

// setup checks X and the filter (and the bias) and returns the geometry.
func (o *lcOp) setup(x, w *blob.Tensor) (geometry, error) {
	a := o.args
	if x.NumDims() < 3 {
		return geometry{}, o.Errorf("input 0 (%q) has shape %v: want N, C and at least one spatial dimension", o.InputName(0), x.Dims())
	}
	n, c, sp := convargs.Spatial(x.Dims(), a.Order)
	win, err := a.Window(sp)
	if err != nil {
		return geometry{}, o.Errorf("X (%q) of shape %v: %v", o.InputName(0), x.Dims(), err)
	}
	nd := len(sp)
	g := geometry{win: win, n: n, c: c, nhwc: a.Order == convargs.NHWC}
	o.out = win.OutDims(o.out[:0])
	out := o.out
	if w.NumDims() != x.NumDims()+nd {
		return geometry{}, o.Errorf("filter (%q) has shape %v; want rank %d for X (%q) of shape %v", o.InputName(1), w.Dims(), x.NumDims()+nd, o.InputName(0), x.Dims())
	}
	g.m = w.Dim(nd)
	want := append(append(o.want[:0], out...), g.m)
	if g.nhwc {
		want = append(append(want, a.Kernel...), c)
	} else {
		if c%a.Group != 0 || g.m%a.Group != 0 {
			return geometry{}, o.Errorf("group %d does not divide the %d channels of X (%q) of shape %v and the %d outputs of the filter (%q) of shape %v", a.Group, c, o.InputName(0), x.Dims(), g.m, o.InputName(1), w.Dims())
		}
		want = append(append(want, c/a.Group), a.Kernel...)
	}
	o.want = want
	if !sameInts(w.Dims(), want) {
		return geometry{}, o.Errorf("filter (%q) has shape %v; want %v for X (%q) of shape %v, kernel %v, group %d and order %v", o.InputName(1), w.Dims(), want, o.InputName(0), x.Dims(), a.Kernel, a.Group, a.Order)
	}
	g.cg, g.mg = c/a.Group, g.m/a.Group
	o.yShape = convargs.ImageShape(o.yShape, a.Order, n, g.m, out)
	o.bShape = append(append(o.bShape[:0], out...), g.m)
	g.outShape, g.biasDims = o.yShape, o.bShape
	return g, nil
}

func sameInts(a, b []int) bool {
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

// tapsAt fills o.taps with the input pixel (flat spatial index) of each
// kernel tap of output position p, −1 where the tap falls in the padding.
func (o *lcOp) tapsAt(win *convargs.Window, p int) []int {
	t := o.taps[:win.KSize]
	o0 := p / (win.Out[1] * win.Out[2])
	o1 := p / win.Out[2] % win.Out[1]
	o2 := p % win.Out[2]
	k := 0
	for k0 := range win.K[0] {
		i0 := o0*win.S[0] - win.Pad[0] + k0*win.D[0]
		for k1 := range win.K[1] {
			i1 := o1*win.S[1] - win.Pad[1] + k1*win.D[1]
			for k2 := range win.K[2] {
				i2 := o2*win.S[2] - win.Pad[2] + k2*win.D[2]
				if i0 < 0 || i0 >= win.In[0] || i1 < 0 || i1 >= win.In[1] || i2 < 0 || i2 >= win.In[2] {
					t[k] = -1
				} else {
					t[k] = (i0*win.In[1]+i1)*win.In[2] + i2
				}
				k++
			}
		}
	}
	return t
}

// index maps (image, channel, pixel) of X or Y, and (position, output,
// channel, tap) of the filter, to flat offsets.
type index struct {
	g geometry
}

func (ix index) x(n, c, pix int) int {
	if ix.g.nhwc {
		return (n*ix.g.win.InSize+pix)*ix.g.c + c
	}
	return (n*ix.g.c+c)*ix.g.win.InSize + pix
}

func (ix index) y(n, m, p int) int {
	if ix.g.nhwc {
		return (n*ix.g.win.OutSize+p)*ix.g.m + m
	}
	return (n*ix.g.m+m)*ix.g.win.OutSize + p
}

// w is the filter offset of output m's weight for channel c (within its
// group) and tap k at position p.
func (ix index) w(p, m, c, k int) int {
	if ix.g.nhwc {
		return ((p*ix.g.m+m)*ix.g.win.KSize+k)*ix.g.c + c
	}
	return ((p*ix.g.m+m)*ix.g.cg+c)*ix.g.win.KSize + k
}

func (o *lcOp) Run() error {
	x, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	w, err := o.InputOf(1, blob.Float32)
	if err != nil {
		return err
	}
	g, err := o.setup(x, w)
	if err != nil {
		return err
	}
	if cap(o.taps) < g.win.KSize {
		if err := blob.CheckElements(blob.Int64, g.win.KSize); err != nil {
			return o.Errorf("kernel %v: %v", o.args.Kernel, err)
		}
		o.taps = make([]int, g.win.KSize)
	}
	if o.grad {
		return o.runGrad(x, w, g)
	}
	var bias []float32
	if o.NumInputs() == 3 {
		b, err := o.InputOf(2, blob.Float32)
		if err != nil {
			return err
		}
		if !sameInts(b.Dims(), g.biasDims) {
			return o.Errorf("bias (%q) has shape %v; want %v", o.InputName(2), b.Dims(), g.biasDims)
		}
		bias = blob.Data[float32](b)
	}
	y := o.Output(0)
	if err := y.Init(blob.Float32, g.outShape...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	if y.Size() == 0 {
		return nil
	}
	xd, wd, yd := blob.Data[float32](x), blob.Data[float32](w), blob.Data[float32](y)
	ix := index{g}
	for p := range g.win.OutSize {
		taps := o.tapsAt(&g.win, p)
		for n := range g.n {
			for m := range g.m {
				c0 := m / g.mg * g.cg
				var acc float32
				for c := range g.cg {
					for k, pix := range taps {
						if pix >= 0 {
							acc += wd[ix.w(p, m, c, k)] * xd[ix.x(n, c0+c, pix)]
						}
					}
				}
				if bias != nil {
					acc += bias[p*g.m+m]
				}
				yd[ix.y(n, m, p)] = acc
			}
		}
	}
	return nil
}

func (o *lcOp) runGrad(x, w *blob.Tensor, g geometry) error {
	dy, err := o.InputOf(2, blob.Float32)
	if err != nil {
		return err
	}
	if !sameInts(dy.Dims(), g.outShape) {
		return o.Errorf("input 2 (%q) has shape %v; the layer's output is %v", o.InputName(2), dy.Dims(), g.outShape)
	}
	dw := o.Output(0)
	if err := dw.Init(blob.Float32, w.Dims()...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	var db, dx []float32
	next := 1
	if !o.noBias {
		t := o.Output(1)
		if err := t.Init(blob.Float32, g.biasDims...); err != nil {
			return o.Errorf("output %q: %v", o.OutputName(1), err)
		}
		db = blob.Data[float32](t)
		clear(db)
		next = 2
	}
	if o.NumOutputs() > next {
		t := o.Output(next)
		if err := t.Init(blob.Float32, x.Dims()...); err != nil {
			return o.Errorf("output %q: %v", o.OutputName(next), err)
		}
		dx = blob.Data[float32](t)
		clear(dx)
	}
	dwd := blob.Data[float32](dw)
	clear(dwd)
	if dy.Size() == 0 {
		return nil
	}
	xd, wd, dyd := blob.Data[float32](x), blob.Data[float32](w), blob.Data[float32](dy)
	ix := index{g}
	for p := range g.win.OutSize {
		taps := o.tapsAt(&g.win, p)
		for n := range g.n {
			for m := range g.m {
				c0 := m / g.mg * g.cg
				gy := dyd[ix.y(n, m, p)]
				if db != nil {
					db[p*g.m+m] += gy
				}
				for c := range g.cg {
					for k, pix := range taps {
						if pix < 0 {
							continue
						}
						wi, xi := ix.w(p, m, c, k), ix.x(n, c0+c, pix)
						dwd[wi] += gy * xd[xi]
						if dx != nil {
							dx[xi] += gy * wd[wi]
						}
					}
				}
			}
		}
	}
	return nil
}
