package optim

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type:      "Lars",
		MinInputs: 2, MaxInputs: 5, MinOutputs: 1, MaxOutputs: 1,
		InputsCheck: func(n int) bool { return n == 2 || n == 5 },
		Args: []operators.ArgSpec{
			{Name: "offset", Default: 0.5, Doc: "added to ‖dX‖/‖X‖ to avoid dividing by a tiny ratio"},
			{Name: "lr_min", Default: 0.02, Doc: "lower bound of the rescaling factor (five-input form only)"},
		},
		Doc: "Layer-wise adaptive rate scaling (arXiv:1708.03888). (X, dX) → lr_rescale, a float [1] tensor: " +
			"1/(‖dX‖/‖X‖ + offset), or 1 when ‖X‖ is 0. The later five-input form (X, dX, wd, trust, lr_max) " +
			"computes trust/(‖dX‖/‖X‖ + wd + offset) and clamps it to [lr_min, lr_max].",
	}, newLars)
	operators.MustRegisterGradientForbidden("Lars")
}

type larsOp struct {
	*operators.Base
	offset, lrMin float64
	in            [5]*blob.Tensor
}

func newLars(b *operators.Base) (operators.Operator, error) {
	return &larsOp{Base: b, offset: float64(b.ArgFloat("offset", 0.5)), lrMin: float64(b.ArgFloat("lr_min", 0.02))}, nil
}

func (o *larsOp) Run() error {
	n := o.NumInputs()
	idx := [5]int{0, 1, 2, 3, 4}
	if _, err := floatInputs(o.Base, o.in[:n], idx[:n]...); err != nil {
		return err
	}
	x, dx := o.in[0], o.in[1]
	if err := sameSize(o.Base, dx, 1, x, 0); err != nil {
		return err
	}
	wd, trust, lrMax := 0.0, 1.0, math.Inf(1)
	if n == 5 {
		for i := 2; i < 5; i++ {
			if err := scalarInput(o.Base, o.in[i], i); err != nil {
				return err
			}
		}
		wd, trust, lrMax = first(o.in[2]), first(o.in[3]), first(o.in[4])
	}
	xNorm, dxNorm := l2Norm(x), l2Norm(dx)
	scale := 1.0
	if xNorm > 0 {
		scale = trust / (dxNorm/xNorm + wd + o.offset)
	}
	if n == 5 {
		scale = math.Max(math.Min(scale, lrMax), o.lrMin)
	}
	y := o.Output(0)
	if err := y.Init(x.DataType(), 1); err != nil {
		return err
	}
	if x.DataType() == blob.Float32 {
		blob.Data[float32](y)[0] = float32(scale)
	} else {
		blob.Data[float64](y)[0] = scale
	}
	return nil
}

// l2Norm returns the Euclidean norm of a float tensor's elements.
func l2Norm(t *blob.Tensor) float64 {
	if t.DataType() == blob.Float32 {
		return sqrtSumSq(blob.Data[float32](t))
	}
	return sqrtSumSq(blob.Data[float64](t))
}

func sqrtSumSq[T blob.Float](v []T) float64 {
	s := 0.0
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// first returns a float tensor's first element.
func first(t *blob.Tensor) float64 {
	if t.DataType() == blob.Float32 {
		return float64(blob.Data[float32](t)[0])
	}
	return blob.Data[float64](t)[0]
}
