package nn

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

var softmaxAxisArg = operators.ArgSpec{Name: "axis", Default: int64(1), Doc: "the input is flattened to N×D at this axis; the softmax runs over D"}

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "Softmax", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{softmaxAxisArg},
		Doc:  "Softmax flattens the input to N×D at axis and normalizes each row: Y = exp(X − max)/Σ exp(X − max).",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &softmaxOp{Base: b, axis: int(b.ArgInt("axis", 1))}, nil
	})
	operators.MustRegisterCPU(operators.Schema{
		Type: "SoftmaxGradient", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{softmaxAxisArg},
		Doc:  "SoftmaxGradient(Y, dY) computes dX = Y·(dY − Σ Y·dY), the sum taken over each row.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &softmaxGradOp{Base: b, axis: int(b.ArgInt("axis", 1))}, nil
	})
	operators.MustRegisterGradient("Softmax", func(g *operators.GradientContext) error {
		g.Op("SoftmaxGradient", []string{g.O(0), g.GO(0)}, []string{g.GI(0)})
		return nil
	})
}

type softmaxOp struct {
	*operators.Base
	axis int
}

func (o *softmaxOp) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	ax, ok := operators.CanonicalAxis(o.axis, x.NumDims())
	if !ok {
		return o.Errorf("axis %d is out of range for input %q of shape %v", o.axis, o.InputName(0), x.Dims())
	}
	n, d := x.SizeToDim(ax), x.SizeFromDim(ax)
	y := o.Output(0)
	if err := y.Init(x.DataType(), x.Dims()...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	switch x.DataType() {
	case blob.Float32:
		softmax(n, d, blob.Data[float32](x), blob.Data[float32](y))
	case blob.Float64:
		softmax(n, d, blob.Data[float64](x), blob.Data[float64](y))
	}
	return nil
}

// softmax normalizes each of the n rows of length d of x into y.
func softmax[T blob.Float](n, d int, x, y []T) {
	if d == 0 {
		return
	}
	for i := 0; i < n; i++ {
		xr := x[i*d : i*d+d]
		yr := y[i*d : i*d+d]
		m := xr[0]
		for _, v := range xr[1:] {
			m = max(m, v)
		}
		var s float64
		for j, v := range xr {
			e := math.Exp(float64(v - m))
			yr[j] = T(e)
			s += e
		}
		inv := 1 / s
		for j, v := range yr {
			yr[j] = T(float64(v) * inv)
		}
	}
}

type softmaxGradOp struct {
	*operators.Base
	axis int
}

func (o *softmaxGradOp) Run() error {
	y, dy, err := outputAndGradient(o.Base)
	if err != nil {
		return err
	}
	ax, ok := operators.CanonicalAxis(o.axis, y.NumDims())
	if !ok {
		return o.Errorf("axis %d is out of range for input %q of shape %v", o.axis, o.InputName(0), y.Dims())
	}
	n, d := y.SizeToDim(ax), y.SizeFromDim(ax)
	dx := o.Output(0)
	if err := dx.Init(y.DataType(), y.Dims()...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	switch y.DataType() {
	case blob.Float32:
		softmaxGrad(n, d, blob.Data[float32](y), blob.Data[float32](dy), blob.Data[float32](dx))
	case blob.Float64:
		softmaxGrad(n, d, blob.Data[float64](y), blob.Data[float64](dy), blob.Data[float64](dx))
	}
	return nil
}

// softmaxGrad computes dx = y·(dy − ⟨y, dy⟩) row by row; dx may be dy.
func softmaxGrad[T blob.Float](n, d int, y, dy, dx []T) {
	if d == 0 {
		return // n rows of nothing, n as large as the dims beside the 0 make it
	}
	for i := 0; i < n; i++ {
		yr := y[i*d : i*d+d]
		dyr := dy[i*d : i*d+d]
		dxr := dx[i*d : i*d+d]
		var dot float64
		for j, v := range yr {
			dot += float64(v) * float64(dyr[j])
		}
		for j, v := range yr {
			dxr[j] = T(float64(v) * (float64(dyr[j]) - dot))
		}
	}
}
