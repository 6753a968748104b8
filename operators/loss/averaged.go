package loss

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/internal/vec"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{Type: "AveragedLoss", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Doc: "AveragedLoss(X) → Y: the mean of all elements of X as a 0-d scalar (0 for an empty X)."},
		func(b *operators.Base) (operators.Operator, error) { return &averagedLoss{b}, nil })
	operators.MustRegisterCPU(operators.Schema{Type: "AveragedLossGradient", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Doc: "AveragedLossGradient(X, dY) → dX: every element is dY/size(X)."},
		func(b *operators.Base) (operators.Operator, error) { return &averagedLossGradient{b}, nil })
	operators.MustRegisterGradient("AveragedLoss", func(g *operators.GradientContext) error {
		g.Op("AveragedLossGradient", []string{g.I(0), g.GO(0)}, []string{g.GI(0)})
		return nil
	})
}

type averagedLoss struct{ *operators.Base }

func (o *averagedLoss) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	y, err := initOutput(o.Base, 0, x.DataType())
	if err != nil {
		return err
	}
	if x.DataType() == blob.Float32 {
		blob.Data[float32](y)[0] = float32(mean(blob.Data[float32](x)))
	} else {
		blob.Data[float64](y)[0] = mean(blob.Data[float64](x))
	}
	return nil
}

// mean returns the mean of v, 0 when v is empty.
func mean[T blob.Float](v []T) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += float64(x)
	}
	return s / float64(len(v))
}

type averagedLossGradient struct{ *operators.Base }

func (o *averagedLossGradient) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	g, err := scalarGradient(o.Base, 1, x.DataType())
	if err != nil {
		return err
	}
	dx, err := initOutput(o.Base, 0, x.DataType(), x.Dims()...)
	if err != nil {
		return err
	}
	if x.Size() == 0 {
		return nil
	}
	g /= float64(x.Size())
	if x.DataType() == blob.Float32 {
		vec.Fill(blob.Data[float32](dx), float32(g))
	} else {
		vec.Fill(blob.Data[float64](dx), g)
	}
	return nil
}
