package math

import (
	"math"
	"slices"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// Row-wise products of two tensors (DotProduct, CosineSimilarity) and
// SquareRootDivide, with their gradients. FLOAT, as in Caffe2.
func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "DotProduct", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Doc: "(X, Y) → Z [N]: Z[i] = Σⱼ X[i, j]·Y[i, j] over the rows (dim 0) of same-shaped X and Y; a scalar is one row.",
	}, func(b *operators.Base) (operators.Operator, error) { return &rowProductOp{Base: b}, nil })
	operators.MustRegisterCPU(operators.Schema{
		Type: "DotProductGradient", MinInputs: 3, MaxInputs: 3, MinOutputs: 2, MaxOutputs: 2,
		Doc: "(X, Y, dZ) → (dX, dY): dX[i] = dZ[i]·Y[i], dY[i] = dZ[i]·X[i].",
	}, func(b *operators.Base) (operators.Operator, error) { return &rowProductOp{Base: b, grad: true}, nil })
	operators.MustRegisterCPU(operators.Schema{
		Type: "CosineSimilarity", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Doc: "(X, Y) → Z [N]: the cosine of rows X[i] and Y[i], X[i]·Y[i]/√(max(‖X[i]‖², 1e-12)·max(‖Y[i]‖², 1e-12)).",
	}, func(b *operators.Base) (operators.Operator, error) { return &rowProductOp{Base: b, cosine: true}, nil })
	operators.MustRegisterCPU(operators.Schema{
		Type: "CosineSimilarityGradient", MinInputs: 3, MaxInputs: 3, MinOutputs: 2, MaxOutputs: 2,
		Doc: "(X, Y, dZ) → (dX, dY), the gradient of CosineSimilarity (norms at least 1e-6).",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &rowProductOp{Base: b, cosine: true, grad: true}, nil
	})
	for _, typ := range []string{"DotProduct", "CosineSimilarity"} {
		grad := typ + "Gradient"
		operators.MustRegisterGradient(typ, func(g *operators.GradientContext) error {
			g.Op(grad, []string{g.I(0), g.I(1), g.GO(0)}, []string{g.GI(0), g.GI(1)})
			return nil
		})
		operators.MustRegisterShapeFunc(typ, rowProductShape)
		operators.MustRegisterShapeFunc(grad, operators.SameShapes([]int{0, 1}, 0, 1))
	}

	operators.MustRegisterCPU(operators.Schema{
		Type: "SquareRootDivide", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		AllowInplace: inplace00,
		Doc: "(data, scale) → Y: Y[i] = data[i]/√scale[i] for each row i of data (dim 0), data[i] itself where scale[i] is 0; " +
			"scale holds one non-negative FLOAT, INT32 or INT64 per row.",
	}, func(b *operators.Base) (operators.Operator, error) { return &sqrtDivideOp{Base: b}, nil })
	operators.MustRegisterGradient("SquareRootDivide", func(g *operators.GradientContext) error {
		g.Op("SquareRootDivide", []string{g.GO(0), g.I(1)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterShapeFunc("SquareRootDivide", operators.SameAsInput0)
}

// rowProductShape: Z has one element per row of X.
func rowProductShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	if _, err := operators.SameShapes([]int{0, 1})(b, in); err != nil {
		return nil, err
	}
	x := in[0]
	switch {
	case x.Unknown:
		return []operators.TensorShape{operators.Shape(blob.Float32, operators.AnyDim)}, nil
	case x.Rank() == 0:
		return []operators.TensorShape{operators.Shape(blob.Float32, 1)}, nil
	}
	return []operators.TensorShape{operators.Shape(blob.Float32, x.Dim(0))}, nil
}

// rowProductOp is DotProduct or CosineSimilarity, forward or gradient.
type rowProductOp struct {
	*operators.Base
	cosine, grad bool
	dims         [1]int
}

// cosEps bounds the squared norms of CosineSimilarity from below.
const cosEps = 1e-12

func (o *rowProductOp) Run() error {
	x, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	y, err := o.InputOf(1, blob.Float32)
	if err != nil {
		return err
	}
	if !slices.Equal(x.Dims(), y.Dims()) {
		return o.Errorf("X (%q) and Y (%q) must have one shape, got %v and %v", o.InputName(0), o.InputName(1), x.Dims(), y.Dims())
	}
	n := 1
	if x.NumDims() > 0 {
		n = x.Dim(0)
	}
	d := 0
	if n > 0 {
		d = x.Size() / n
	}
	xv, yv := blob.Data[float32](x), blob.Data[float32](y)
	if !o.grad {
		o.dims[0] = n
		z := o.Output(0)
		if err := z.Init(blob.Float32, o.dims[:]...); err != nil {
			return err
		}
		zv := blob.Data[float32](z)
		for i := range zv {
			xr, yr := xv[i*d:(i+1)*d], yv[i*d:(i+1)*d]
			xy := dot32(xr, yr)
			if o.cosine {
				xy /= math.Sqrt(max(dot32(xr, xr), cosEps) * max(dot32(yr, yr), cosEps))
			}
			zv[i] = float32(xy)
		}
		return nil
	}
	dz, err := o.InputOf(2, blob.Float32)
	if err != nil {
		return err
	}
	if dz.NumDims() != 1 || dz.Dim(0) != n {
		return o.Errorf("input 2 (%q) has shape %v, want [%d], one per row of X %v", o.InputName(2), dz.Dims(), n, x.Dims())
	}
	dx, dy := o.Output(0), o.Output(1)
	if err := dx.Init(blob.Float32, x.Dims()...); err != nil {
		return err
	}
	if err := dy.Init(blob.Float32, y.Dims()...); err != nil {
		return err
	}
	dxv, dyv, dzv := blob.Data[float32](dx), blob.Data[float32](dy), blob.Data[float32](dz)
	for i, g := range dzv {
		xr, yr := xv[i*d:(i+1)*d], yv[i*d:(i+1)*d]
		dxr, dyr := dxv[i*d:(i+1)*d], dyv[i*d:(i+1)*d]
		if !o.cosine {
			for j := range xr {
				dxr[j], dyr[j] = g*yr[j], g*xr[j]
			}
			continue
		}
		xn := math.Sqrt(max(dot32(xr, xr), cosEps))
		yn := math.Sqrt(max(dot32(yr, yr), cosEps))
		xyn, xy, gf := xn*yn, dot32(xr, yr), float64(g)
		for j := range xr {
			xj, yj := float64(xr[j]), float64(yr[j])
			dxr[j] = float32(gf/xyn*yj - gf*xy/(xn*xn*xyn)*xj)
			dyr[j] = float32(gf/xyn*xj - gf*xy/(yn*yn*xyn)*yj)
		}
	}
	return nil
}

// dot32 is Σ a[i]·b[i], accumulated in float64.
func dot32(a, b []float32) float64 {
	b = b[:len(a)]
	var s float64
	for i, v := range a {
		s += float64(v) * float64(b[i])
	}
	return s
}

type sqrtDivideOp struct{ *operators.Base }

func (o *sqrtDivideOp) Run() error {
	data, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	scale, err := o.Input(1)
	if err != nil {
		return err
	}
	if data.NumDims() == 0 {
		return o.Errorf("data (%q) is a scalar: it needs a dimension of rows", o.InputName(0))
	}
	n := data.Dim(0)
	if scale.Size() != n {
		return o.Errorf("scale (%q) has shape %v, want %d elements, one per row of data %v", o.InputName(1), scale.Dims(), n, data.Dims())
	}
	var s func(i int) float64
	switch scale.DataType() {
	case blob.Float32:
		v := blob.Data[float32](scale)
		s = func(i int) float64 { return float64(v[i]) }
	case blob.Int32:
		v := blob.Data[int32](scale)
		s = func(i int) float64 { return float64(v[i]) }
	case blob.Int64:
		v := blob.Data[int64](scale)
		s = func(i int) float64 { return float64(v[i]) }
	default:
		return o.Errorf("scale (%q) has type %v, want FLOAT, INT32 or INT64", o.InputName(1), scale.DataType())
	}
	for i := range n {
		if !(s(i) >= 0) {
			return o.Errorf("scale %d of %q is %g < 0", i, o.InputName(1), s(i))
		}
	}
	y := o.Output(0)
	if y != data {
		if err := y.Init(blob.Float32, data.Dims()...); err != nil {
			return err
		}
	}
	d := 0
	if n > 0 {
		d = data.Size() / n
	}
	xv, yv := blob.Data[float32](data), blob.Data[float32](y)
	for i := range n {
		m := float32(1)
		if v := s(i); v != 0 {
			m = float32(1 / math.Sqrt(v))
		}
		for j := i * d; j < (i+1)*d; j++ {
			yv[j] = m * xv[j]
		}
	}
	return nil
}
