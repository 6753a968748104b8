package quant

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/internal/convargs"
)

func init() {
	poolArgs := append([]operators.ArgSpec{
		{Name: "kernel", Doc: "window size (or kernel_h and kernel_w, or kernels)"},
		{Name: "stride", Default: 1, Doc: "stride (or stride_h and stride_w, or strides)"},
		{Name: "pad", Default: 0, Doc: "padding (or pad_t, pad_l, pad_b and pad_r, or pads)"},
		{Name: "global_pooling", Default: 0, Doc: "pool over the whole image"},
		{Name: "order", Default: "NCHW", Doc: "storage order; only NHWC is supported, and must be given"},
		{Name: "legacy_pad", Default: 0, Doc: "Caffe2 LegacyPadding (1 VALID, 2 SAME, 3 CAFFE_LEGACY_POOLING)"},
	}, quantArgs...)
	for _, max := range []bool{true, false} {
		typ, doc := "Int8MaxPool", "Max pooling of an NHWC int8 image: the largest code of each window. Y_scale and Y_zero_point must equal X's."
		if !max {
			typ, doc = "Int8AveragePool", "Average pooling of an NHWC int8 image: each window's sum of codes over the positions inside the image, divided by their count with halves rounded up. Y_scale and Y_zero_point must equal X's."
		}
		operators.MustRegisterCPU(operators.Schema{
			Type: typ, MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
			Args: poolArgs, Doc: doc,
		}, func(b *operators.Base) (operators.Operator, error) { return newInt8Pool(b, max) })
		operators.MustRegisterNoGradient(typ)
		operators.MustRegisterShapeFunc(typ, int8PoolShape)
	}
}

type int8PoolOp struct {
	*operators.Base
	args *convargs.Args
	max  bool
	oq   outputQuant
	acc  []uint32
	sp   [2]int // the input's spatial sizes
}

func newInt8Pool(b *operators.Base, max bool) (operators.Operator, error) {
	a, err := convargs.Parse(b, convargs.KindPool)
	if err != nil {
		return nil, err
	}
	if a.Order != convargs.NHWC {
		return nil, b.Errorf("%s only supports NHWC order (give order \"NHWC\"), got %v", b.Type(), a.Order)
	}
	if !a.Global && len(a.Kernel) != 2 {
		return nil, b.Errorf("%s is 2-D: kernel %v", b.Type(), a.Kernel)
	}
	return &int8PoolOp{Base: b, args: a, max: max, oq: readOutputQuant(b)}, nil
}

// poolWindow returns the pooling geometry of an h×w image (sp is the
// scratch its spatial sizes are passed in): output size,
// kernel, stride and head pads.
func poolWindow(a *convargs.Args, sp *[2]int, h, w int) (oh, ow, kh, kw, sh, sw, ph, pw int, err error) {
	if a.Global {
		return 1, 1, h, w, 1, 1, 0, 0, nil
	}
	*sp = [2]int{h, w}
	win, err := a.Window(sp[:])
	if err != nil {
		return
	}
	return win.Out[1], win.Out[2], win.K[1], win.K[2], win.S[1], win.S[2], win.Pad[1], win.Pad[2], nil
}

func (o *int8PoolOp) Run() error {
	x, err := int8Input(o.Base, 0)
	if err != nil {
		return err
	}
	if err := o.oq.same(o.Base, x); err != nil {
		return err
	}
	xd := x.T.Dims()
	if len(xd) != 4 {
		return o.Errorf("X %v must be 4-D NHWC", xd)
	}
	n, h, w, c := xd[0], xd[1], xd[2], xd[3]
	oh, ow, kh, kw, sh, sw, ph, pw, err := poolWindow(o.args, &o.sp, h, w)
	if err != nil {
		return o.Errorf("X %v: %v", xd, err)
	}
	y := int8Output(o.Base, 0)
	scale, zero := x.Scale, x.ZeroPoint
	if err := y.T.Init(blob.Uint8, n, oh, ow, c); err != nil {
		return o.Errorf("output %q [%d %d %d %d]: %w", o.OutputName(0), n, oh, ow, c, err)
	}
	y.Scale, y.ZeroPoint = scale, zero
	if y.T.Size() == 0 {
		return nil
	}
	if err := blob.CheckElements(blob.Int32, c); err != nil {
		return o.Errorf("X %v: %w", xd, err)
	}
	if cap(o.acc) < c {
		o.acc = make([]uint32, c)
	}
	acc := o.acc[:c]
	xs, ys := blob.Data[uint8](x.T), blob.Data[uint8](y.T)
	for img := range n {
		for oy := range oh {
			for ox := range ow {
				y0, x0 := oy*sh-ph, ox*sw-pw
				fy0, fy1 := max(0, -y0), min(kh, h-y0)
				fx0, fx1 := max(0, -x0), min(kw, w-x0)
				clear(acc)
				for fy := fy0; fy < fy1; fy++ {
					for fx := fx0; fx < fx1; fx++ {
						base := ((img*h+y0+fy)*w + x0 + fx) * c
						src := xs[base : base+c]
						if o.max {
							for ch, v := range src {
								acc[ch] = max(acc[ch], uint32(v))
							}
						} else {
							for ch, v := range src {
								acc[ch] += uint32(v)
							}
						}
					}
				}
				out := ys[((img*oh+oy)*ow+ox)*c:][:c]
				count := uint32(max(0, fx1-fx0) * max(0, fy1-fy0))
				for ch, a := range acc {
					if !o.max {
						if count == 0 {
							a = 0
						} else {
							a = (a + count/2) / count
						}
					}
					out[ch] = uint8(min(a, 255))
				}
			}
		}
	}
	return nil
}

// int8PoolShape is the pools' output shape: NHWC with X's channels.
func int8PoolShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	x := in[0]
	a, err := convargs.Parse(b, convargs.KindPool)
	if err != nil || x.Rank() != 4 {
		return nil, nil
	}
	out := operators.Shape(blob.Uint8, x.Dim(0), operators.AnyDim, operators.AnyDim, x.Dim(3))
	if x.Dim(1) >= 0 && x.Dim(2) >= 0 {
		if oh, ow, _, _, _, _, _, _, err := poolWindow(a, new([2]int), x.Dim(1), x.Dim(2)); err == nil {
			out.Dims[1], out.Dims[2] = oh, ow
		}
	}
	return []operators.TensorShape{out}, nil
}
