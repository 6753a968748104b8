package norm

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	inArgs := []operators.ArgSpec{
		{Name: "epsilon", Default: 1e-5, Doc: "added to the variance (≥ 0)"},
		orderArg,
	}
	operators.MustRegisterCPU(operators.Schema{
		Type: "InstanceNorm", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 3,
		AllowInplace: operators.InplacePairs([2]int{0, 0}),
		Args:         inArgs,
		Doc: "InstanceNorm(X, scale, bias) → Y[, mean[, inv_stdev]]: per image and channel, " +
			"Y = scale·(X − μ)/√(σ² + ε) + bias with μ and the biased σ² over the spatial positions. " +
			"mean and inv_stdev have shape [N, C].",
	}, newInstanceNorm)
	operators.MustRegisterCPU(operators.Schema{
		Type: "InstanceNormGradient", MinInputs: 4, MaxInputs: 6, MinOutputs: 3, MaxOutputs: 3, Args: inArgs,
		Doc: "InstanceNormGradient(X, scale, bias, dY[, mean, inv_stdev]) → (dX, dscale, dbias). Without both saved " +
			"statistics (fewer than 6 inputs), the mean and inverse standard deviation are computed from X.",
	}, newInstanceNormGradient)
	operators.MustRegisterGradient("InstanceNorm", func(g *operators.GradientContext) error {
		ins := []string{g.I(0), g.I(1), g.I(2), g.GO(0)}
		for i := 1; i < g.NumOutputs(); i++ {
			ins = append(ins, g.O(i))
		}
		g.Op("InstanceNormGradient", ins, []string{g.GI(0), g.GI(1), g.GI(2)})
		return nil
	})
}

// instanceNormBase holds what InstanceNorm and its gradient share: their
// arguments.
type instanceNormBase struct {
	*operators.Base
	eps  float64
	nhwc bool
}

func newInstanceNormBase(b *operators.Base) (instanceNormBase, error) {
	o := instanceNormBase{Base: b, eps: float64(b.ArgFloat("epsilon", 1e-5))}
	var err error
	if o.nhwc, err = readOrder(b); err != nil {
		return o, err
	}
	if !(o.eps >= 0) {
		return o, b.Errorf("epsilon must be non-negative, got %v", o.eps)
	}
	return o, nil
}

type instanceNorm struct {
	instanceNormBase
	k32 groupKernel[float32]
	k64 groupKernel[float64]
}

func newInstanceNorm(b *operators.Base) (operators.Operator, error) {
	o, err := newInstanceNormBase(b)
	return &instanceNorm{instanceNormBase: o}, err
}

func (o *instanceNorm) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	if x.DataType() == blob.Float32 {
		return runInstanceNorm(o, &o.k32, x)
	}
	return runInstanceNorm(o, &o.k64, x)
}

func runInstanceNorm[T blob.Float](o *instanceNorm, k *groupKernel[T], x *blob.Tensor) error {
	l, err := spatialLayout(o.Base, 0, x, o.nhwc, 2)
	if err != nil {
		return err
	}
	scale, err := inputLike(o.Base, 1, x, l.c)
	if err != nil {
		return err
	}
	bias, err := inputLike(o.Base, 2, x, l.c)
	if err != nil {
		return err
	}
	y, err := initOutput(o.Base, 0, x.DataType(), x.Dims()...)
	if err != nil {
		return err
	}
	if err := k.setup(l, l.c, o.eps); err != nil {
		return o.Errorf("input 0 (%q) of shape %v: %w", o.InputName(0), x.Dims(), err)
	}
	k.forward(blob.Data[T](x), blob.Data[T](y), blob.Data[T](scale), blob.Data[T](bias))
	if o.NumOutputs() >= 2 {
		if err := storeStat[T](o.Base, k.mean, 1, l.n, l.c); err != nil {
			return err
		}
	}
	if o.NumOutputs() == 3 {
		return storeStat[T](o.Base, k.rstd, 2, l.n, l.c)
	}
	return nil
}

type instanceNormGradient struct {
	instanceNormBase
	k32 groupKernel[float32]
	k64 groupKernel[float64]
}

func newInstanceNormGradient(b *operators.Base) (operators.Operator, error) {
	o, err := newInstanceNormBase(b)
	return &instanceNormGradient{instanceNormBase: o}, err
}

func (o *instanceNormGradient) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	if x.DataType() == blob.Float32 {
		return runInstanceNormGradient(o, &o.k32, x)
	}
	return runInstanceNormGradient(o, &o.k64, x)
}

func runInstanceNormGradient[T blob.Float](o *instanceNormGradient, k *groupKernel[T], x *blob.Tensor) error {
	l, err := spatialLayout(o.Base, 0, x, o.nhwc, 2)
	if err != nil {
		return err
	}
	scale, err := inputLike(o.Base, 1, x, l.c)
	if err != nil {
		return err
	}
	dy, err := inputLike(o.Base, 3, x, x.Size())
	if err != nil {
		return err
	}
	if err := k.setup(l, l.c, o.eps); err != nil {
		return o.Errorf("input 0 (%q) of shape %v: %w", o.InputName(0), x.Dims(), err)
	}
	if o.NumInputs() == 6 {
		mean, err := inputLike(o.Base, 4, x, l.n*l.c)
		if err != nil {
			return err
		}
		rstd, err := inputLike(o.Base, 5, x, l.n*l.c)
		if err != nil {
			return err
		}
		loadStats(k, blob.Data[T](mean), blob.Data[T](rstd))
	} else {
		k.x = blob.Data[T](x)
		k.run(gStats, nil)
	}
	outs, err := gradOutputs(o.Base, x, scale, scale)
	if err != nil {
		return err
	}
	k.backward(blob.Data[T](dy), blob.Data[T](x), blob.Data[T](scale), blob.Data[T](outs[0]), blob.Data[T](outs[1]), blob.Data[T](outs[2]))
	return nil
}
