package image

import (
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "NCHW2NHWC", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Doc: "NCHW2NHWC(X) → Y moves the channels of a tensor of rank ≥ 3 from dimension 1 to the end: " +
			"(N, C, H₁…Hₖ) becomes (N, H₁…Hₖ, C).",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &orderSwitchOp{Base: b, toNHWC: true}, nil
	})
	operators.MustRegisterGradient("NCHW2NHWC", func(g *operators.GradientContext) error {
		g.Op("NHWC2NCHW", []string{g.GO(0)}, []string{g.GI(0)})
		return nil
	})

	operators.MustRegisterCPU(operators.Schema{
		Type: "NHWC2NCHW", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Doc: "NHWC2NCHW(X) → Y moves the channels of a tensor of rank ≥ 3 from the end to dimension 1: " +
			"(N, H₁…Hₖ, C) becomes (N, C, H₁…Hₖ).",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &orderSwitchOp{Base: b, toNHWC: false}, nil
	})
	operators.MustRegisterGradient("NHWC2NCHW", func(g *operators.GradientContext) error {
		g.Op("NCHW2NHWC", []string{g.GO(0)}, []string{g.GI(0)})
		return nil
	})
}

// orderSwitchOp is NCHW2NHWC (toNHWC) or NHWC2NCHW.
type orderSwitchOp struct {
	*operators.Base
	toNHWC bool
	dims   []int // the output shape, kept between runs
}

func (o *orderSwitchOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	nd := x.NumDims()
	if nd < 3 {
		return o.Errorf("input 0 (%q) has shape %v; it must have at least 3 dimensions", o.InputName(0), x.Dims())
	}
	xd := x.Dims()
	o.dims = append(o.dims[:0], xd...)
	n := xd[0]
	var c, hw int
	if o.toNHWC {
		c = xd[1]
		copy(o.dims[1:], xd[2:])
		o.dims[nd-1] = c
		hw = x.SizeFromDim(2)
	} else {
		c = xd[nd-1]
		copy(o.dims[2:], xd[1:nd-1])
		o.dims[1] = c
		hw = x.SizeFromDim(1) / max(c, 1)
	}
	y := o.Output(0)
	if err := y.Init(x.DataType(), o.dims...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	if x.Size() == 0 {
		return nil
	}
	if o.toNHWC {
		transposeTensor(x, y, n, c, hw, 1)
	} else {
		transposeTensor(x, y, n, hw, c, 1)
	}
	return nil
}
