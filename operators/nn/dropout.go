package nn

import (
	"errors"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

var dropoutArgs = []operators.ArgSpec{
	{Name: "ratio", Default: float32(0.5), Doc: "probability of zeroing an element, in [0, 1)"},
	{Name: "is_test", Default: int64(0), Doc: "non-zero for test mode, where Y = X"},
}

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "Dropout", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 2,
		AllowInplace: operators.InplacePairs([2]int{0, 0}),
		Args:         dropoutArgs,
		Doc: "Dropout(X) → (Y[, mask]). Training: each element is kept with probability 1 − ratio (mask, bool, true = kept) " +
			"and Y = X·mask/(1 − ratio); the mask output is required. Test (is_test ≠ 0): Y = X and the mask is not written.",
	}, func(b *operators.Base) (operators.Operator, error) {
		ratio, err := dropoutRatio(b)
		if err != nil {
			return nil, err
		}
		return &dropoutOp{Base: b, ratio: ratio, isTest: b.ArgBool("is_test", false)}, nil
	})
	operators.MustRegisterCPU(operators.Schema{
		Type: "DropoutGrad", MinInputs: 1, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		AllowInplace: operators.InplacePairs([2]int{0, 0}),
		Args:         dropoutArgs,
		Doc:          "DropoutGrad(dY[, mask]) → dX: dX = dY·mask/(1 − ratio) in training, dX = dY in test mode.",
	}, func(b *operators.Base) (operators.Operator, error) {
		ratio, err := dropoutRatio(b)
		if err != nil {
			return nil, err
		}
		return &dropoutGradOp{Base: b, ratio: ratio, isTest: b.ArgBool("is_test", false)}, nil
	})
	operators.MustRegisterGradient("Dropout", func(g *operators.GradientContext) error {
		if g.ArgInt("is_test", 0) != 0 {
			g.Op("DropoutGrad", []string{g.GO(0)}, []string{g.GI(0)})
			return nil
		}
		if g.NumOutputs() < 2 {
			return errors.New("in training mode (is_test=0) Dropout needs its mask output to be differentiated")
		}
		g.Op("DropoutGrad", []string{g.GO(0), g.O(1)}, []string{g.GI(0)})
		return nil
	})
}

func dropoutRatio(b *operators.Base) (float64, error) {
	r := b.ArgFloat("ratio", 0.5)
	if !(r >= 0 && r < 1) {
		return 0, b.Errorf("argument ratio is %v; it must be in [0, 1)", r)
	}
	return float64(r), nil
}

type dropoutOp struct {
	*operators.Base
	ratio  float64
	isTest bool
}

func (o *dropoutOp) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	y := o.Output(0)
	if o.isTest {
		return copyTensor(o.Base, x, y)
	}
	if o.NumOutputs() < 2 {
		return o.Errorf("in training mode (is_test=0) Dropout needs a second output for the mask")
	}
	if err := y.Init(x.DataType(), x.Dims()...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	mask := o.Output(1)
	if err := mask.Init(blob.Bool, x.Dims()...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(1), err)
	}
	m := blob.Data[bool](mask)
	// mask[i] = true keeps element i, with probability 1 − ratio.
	keep := 1 - o.ratio
	rng := o.Rand()
	for i := range m {
		m[i] = rng.Float64() < keep
	}
	switch x.DataType() {
	case blob.Float32:
		applyMask(float32(1/keep), blob.Data[float32](x), m, blob.Data[float32](y))
	case blob.Float64:
		applyMask(1/keep, blob.Data[float64](x), m, blob.Data[float64](y))
	}
	return nil
}

// applyMask sets y = x·scale·mask; y may be x.
func applyMask[T blob.Float](scale T, x []T, mask []bool, y []T) {
	mask = mask[:len(x)]
	y = y[:len(x)]
	for i, v := range x {
		var k T
		if mask[i] {
			k = 1
		}
		y[i] = v * scale * k
	}
}

type dropoutGradOp struct {
	*operators.Base
	ratio  float64
	isTest bool
}

func (o *dropoutGradOp) Run() error {
	dy, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	dx := o.Output(0)
	if o.isTest {
		return copyTensor(o.Base, dy, dx)
	}
	if o.NumInputs() < 2 {
		return o.Errorf("in training mode (is_test=0) DropoutGrad needs the mask as its second input")
	}
	mask, err := o.InputOf(1, blob.Bool)
	if err != nil {
		return err
	}
	if mask.Size() != dy.Size() {
		return o.Errorf("input 1 (%q) has shape %v, but input 0 (%q) has shape %v", o.InputName(1), mask.Dims(), o.InputName(0), dy.Dims())
	}
	if err := dx.Init(dy.DataType(), dy.Dims()...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	m := blob.Data[bool](mask)
	switch dy.DataType() {
	case blob.Float32:
		applyMask(float32(1/(1-o.ratio)), blob.Data[float32](dy), m, blob.Data[float32](dx))
	case blob.Float64:
		applyMask(1/(1-o.ratio), blob.Data[float64](dy), m, blob.Data[float64](dx))
	}
	return nil
}

// copyTensor makes output 0, dst, a copy of the float tensor src (nothing
// to do when they are the same tensor, in place).
func copyTensor(o *operators.Base, src, dst *blob.Tensor) error {
	if dst == src {
		return nil
	}
	if err := dst.Init(src.DataType(), src.Dims()...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	switch src.DataType() {
	case blob.Float32:
		copy(blob.Data[float32](dst), blob.Data[float32](src))
	case blob.Float64:
		copy(blob.Data[float64](dst), blob.Data[float64](src))
	}
	return nil
}
