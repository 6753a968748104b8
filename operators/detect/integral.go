package detect

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "IntegralImage", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Doc: "IntegralImage(X) → Y takes float images (N, C, H, W) to their integral images (N, C, H+1, W+1): " +
			"Y[r][c] is the sum of X[i][j] over i < r, j < c (row 0 and column 0 are 0).",
	}, func(b *operators.Base) (operators.Operator, error) { return &integralOp{Base: b}, nil })
	operators.MustRegisterCPU(operators.Schema{
		Type: "IntegralImageGradient", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Doc: "IntegralImageGradient(X, dY) → dX: dX[i][j] is the sum of dY[r][c] over r > i, c > j, the " +
			"transpose of IntegralImage.",
	}, func(b *operators.Base) (operators.Operator, error) { return &integralOp{Base: b, grad: true}, nil })
	operators.MustRegisterGradient("IntegralImage", func(g *operators.GradientContext) error {
		g.Op("IntegralImageGradient", []string{g.I(0), g.GO(0)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterShapeFunc("IntegralImage", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		x := in[0]
		if x.Unknown {
			return nil, nil
		}
		if x.Rank() != 4 {
			return nil, b.InputShapeError(in, "X must have rank 4")
		}
		dims := append([]int{}, x.Dims...)
		for _, a := range []int{2, 3} {
			if dims[a] >= 0 {
				dims[a]++
			}
		}
		return []operators.TensorShape{operators.Shape(blob.Float32, dims...)}, nil
	})
	operators.MustRegisterShapeFunc("IntegralImageGradient", likeInput0)
}

type integralOp struct {
	*operators.Base
	grad bool
}

func (o *integralOp) Run() error {
	x, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	if x.NumDims() != 4 {
		return o.Errorf("input 0 (%q) has shape %v; want rank 4 (N, C, H, W)", o.InputName(0), x.Dims())
	}
	n, c, h, w := x.Dim(0), x.Dim(1), x.Dim(2), x.Dim(3)
	if !o.grad {
		y := o.Output(0)
		if err := y.Init(blob.Float32, n, c, h+1, w+1); err != nil {
			return o.Errorf("output %q: %v", o.OutputName(0), err)
		}
		if y.Size() == 0 {
			return nil
		}
		integrate(blob.Data[float32](x), blob.Data[float32](y), y.Size()/((h+1)*(w+1)), h, w)
		return nil
	}
	dy, err := o.InputOf(1, blob.Float32)
	if err != nil {
		return err
	}
	if want := []int{n, c, h + 1, w + 1}; !sameDims(dy.Dims(), want) {
		return o.Errorf("input 1 (%q) has shape %v; IntegralImage of X %v is %v", o.InputName(1), dy.Dims(), x.Dims(), want)
	}
	dx := o.Output(0)
	if err := dx.Init(blob.Float32, x.Dims()...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	if dx.Size() == 0 {
		return nil
	}
	integrateBack(blob.Data[float32](dy), blob.Data[float32](dx), dx.Size()/(h*w), h, w)
	return nil
}

// integrate writes the integral images of planes h×w planes of x into y
// ((h+1)×(w+1) each): rows prefix sums first, then columns, as Caffe2 sums.
func integrate(x, y []float32, planes, h, w int) {
	W := w + 1
	for p := range planes {
		xp, yp := x[p*h*w:][:h*w], y[p*(h+1)*W:][:(h+1)*W]
		clear(yp[:W])
		for r := 1; r <= h; r++ {
			yr, xr := yp[r*W:][:W], xp[(r-1)*w:][:w]
			yr[0] = 0
			for j, v := range xr {
				yr[j+1] = yr[j] + v
			}
		}
		for r := 2; r <= h; r++ {
			yr, up := yp[r*W:][:W], yp[(r-1)*W:][:W]
			for j := range yr {
				yr[j] += up[j]
			}
		}
	}
}

// integrateBack writes into dx the transpose of integrate applied to dy:
// suffix sums of dy over rows and columns, shifted by one.
func integrateBack(dy, dx []float32, planes, h, w int) {
	W := w + 1
	for p := range planes {
		gp, xp := dy[p*(h+1)*W:][:(h+1)*W], dx[p*h*w:][:h*w]
		for i := h - 1; i >= 0; i-- {
			xr, gr := xp[i*w:][:w], gp[(i+1)*W:][:W]
			var acc float32
			for j := w - 1; j >= 0; j-- {
				acc += gr[j+1]
				xr[j] = acc
			}
			if i < h-1 {
				for j, v := range xp[(i+1)*w:][:w] {
					xr[j] += v
				}
			}
		}
	}
}
