package loss

import (
	"slices"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{Type: "SquaredL2Distance", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Doc: "SquaredL2Distance(X, Y) → Z [N]: Z[i] = ½‖X[i] − Y[i]‖² over the rows of same-shaped X and Y (N = dim0, 1 for a scalar)."},
		func(b *operators.Base) (operators.Operator, error) { return &squaredL2{Base: b}, nil })
	operators.MustRegisterCPU(operators.Schema{Type: "SquaredL2DistanceGradient", MinInputs: 3, MaxInputs: 3, MinOutputs: 2, MaxOutputs: 2,
		Doc: "SquaredL2DistanceGradient(X, Y, dZ) → (dX, dY): dX[i] = (X[i] − Y[i])·dZ[i], dY = −dX."},
		func(b *operators.Base) (operators.Operator, error) {
			return &squaredL2Gradient{squaredL2{Base: b}}, nil
		})
	operators.MustRegisterGradient("SquaredL2Distance", func(g *operators.GradientContext) error {
		g.Op("SquaredL2DistanceGradient", []string{g.I(0), g.I(1), g.GO(0)}, []string{g.GI(0), g.GI(1)})
		return nil
	})
}

type squaredL2 struct {
	*operators.Base
	dims [1]int // scratch for the [N] output shape
}

// inputs checks that X and Y have one float type and one shape, and returns
// them with the row count N and row length D.
func (o *squaredL2) inputs() (x, y *blob.Tensor, n, d int, err error) {
	if x, err = o.FloatInput(0); err != nil {
		return
	}
	if y, err = o.InputOf(1, x.DataType()); err != nil {
		return
	}
	if !slices.Equal(x.Dims(), y.Dims()) {
		err = o.Errorf("X (%q) and Y (%q) must have the same shape, got %v and %v", o.InputName(0), o.InputName(1), x.Dims(), y.Dims())
		return
	}
	n = 1
	if x.NumDims() > 0 {
		n = x.Dim(0)
	}
	if n > 0 {
		d = x.Size() / n
	}
	return
}

func (o *squaredL2) Run() error {
	x, y, n, d, err := o.inputs()
	if err != nil {
		return err
	}
	o.dims[0] = n
	z, err := initOutput(o.Base, 0, x.DataType(), o.dims[:]...)
	if err != nil {
		return err
	}
	if x.DataType() == blob.Float32 {
		squaredL2Rows(blob.Data[float32](x), blob.Data[float32](y), blob.Data[float32](z), d)
	} else {
		squaredL2Rows(blob.Data[float64](x), blob.Data[float64](y), blob.Data[float64](z), d)
	}
	return nil
}

type squaredL2Gradient struct{ squaredL2 }

func (o *squaredL2Gradient) Run() error {
	x, y, n, d, err := o.inputs()
	if err != nil {
		return err
	}
	dz, err := rowGradient(o.Base, 2, x.DataType(), n)
	if err != nil {
		return err
	}
	dx, err := initOutput(o.Base, 0, x.DataType(), x.Dims()...)
	if err != nil {
		return err
	}
	dy, err := initOutput(o.Base, 1, x.DataType(), x.Dims()...)
	if err != nil {
		return err
	}
	if x.DataType() == blob.Float32 {
		squaredL2Grad(blob.Data[float32](x), blob.Data[float32](y), blob.Data[float32](dz), blob.Data[float32](dx), blob.Data[float32](dy), d)
	} else {
		squaredL2Grad(blob.Data[float64](x), blob.Data[float64](y), blob.Data[float64](dz), blob.Data[float64](dx), blob.Data[float64](dy), d)
	}
	return nil
}

// squaredL2Rows sets z[i] = ½Σⱼ(x[i, j] − y[i, j])² over rows of d elements.
func squaredL2Rows[T blob.Float](x, y, z []T, d int) {
	for i := range z {
		var s float64
		for k := i * d; k < (i+1)*d; k++ {
			diff := float64(x[k]) - float64(y[k])
			s += diff * diff
		}
		z[i] = T(s / 2)
	}
}

// squaredL2Grad sets dx[i, j] = (x[i, j] − y[i, j])·dz[i] and dy = −dx.
func squaredL2Grad[T blob.Float](x, y, dz, dx, dy []T, d int) {
	for i, g := range dz {
		for k := i * d; k < (i+1)*d; k++ {
			v := (x[k] - y[k]) * g
			dx[k], dy[k] = v, -v
		}
	}
}
