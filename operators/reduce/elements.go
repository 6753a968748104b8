package reduce

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/internal/vec"
)

func init() {
	average := []operators.ArgSpec{{Name: "average", Default: 0, Doc: "divide by the number of elements"}}
	operators.MustRegisterCPU(operators.Schema{
		Type:      "SumElements",
		MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Args: average,
		Doc:  "The sum (or with average, the mean) of all elements of X, as a 0-d tensor.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &sumElementsOp{Base: b, average: b.ArgBool("average", false)}, nil
	})
	operators.MustRegisterCPU(operators.Schema{
		Type:      "SumElementsGradient",
		MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Args: average,
		Doc:  "(X, dY) → dX, every element dY (divided by the size of X with average).",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &sumElementsGradientOp{Base: b, average: b.ArgBool("average", false)}, nil
	})
	operators.MustRegisterGradient("SumElements", func(g *operators.GradientContext) error {
		g.Op("SumElementsGradient", []string{g.I(0), g.GO(0)}, []string{g.GI(0)})
		return nil
	})

	operators.MustRegisterCPU(operators.Schema{
		Type:      "SumElementsInt",
		MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Doc: "The sum of the elements of an int32 tensor, as an int32 0-d tensor.",
	}, func(b *operators.Base) (operators.Operator, error) { return &sumElementsIntOp{b}, nil })
	operators.MustRegisterGradientForbidden("SumElementsInt")

	operators.MustRegisterCPU(operators.Schema{
		Type:      "SumSqrElements",
		MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Args: average,
		Doc:  "The sum of the squares (or with average, their mean) of all elements of X, as a 0-d tensor. No gradient is registered.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &sumElementsOp{Base: b, average: b.ArgBool("average", false), squares: true}, nil
	})

	for _, m := range []struct {
		typ     string
		rowwise bool
	}{{"RowwiseMax", true}, {"ColwiseMax", false}} {
		what := "the maximum of each row: X [B, M, N] → Y [B, M]"
		if !m.rowwise {
			what = "the maximum of each column: X [B, M, N] → Y [B, N]"
		}
		operators.MustRegisterCPU(operators.Schema{
			Type:      m.typ,
			MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
			Doc: "For each matrix of the batch, " + what + ".",
		}, func(b *operators.Base) (operators.Operator, error) {
			return &matrixMaxOp{matrixMaxBase{b, m.rowwise}}, nil
		})
		gradType := m.typ + "Gradient"
		operators.MustRegisterCPU(operators.Schema{
			Type:      gradType,
			MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
			Doc: "(X, Y, dY) → dX for " + m.typ + ".",
		}, func(b *operators.Base) (operators.Operator, error) {
			return &matrixMaxGradientOp{matrixMaxBase{b, m.rowwise}}, nil
		})
		operators.MustRegisterGradient(m.typ, func(g *operators.GradientContext) error {
			g.Op(gradType, []string{g.I(0), g.O(0), g.GO(0)}, []string{g.GI(0)})
			return nil
		})
	}
}

// sumElementsOp is SumElements, or with squares SumSqrElements.
type sumElementsOp struct {
	*operators.Base
	average, squares bool
}

func (o *sumElementsOp) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	y := o.Output(0)
	if err := y.Init(x.DataType()); err != nil {
		return err
	}
	if x.DataType() == blob.Float32 {
		blob.Data[float32](y)[0] = sumElements(blob.Data[float32](x), o.average, o.squares)
	} else {
		blob.Data[float64](y)[0] = sumElements(blob.Data[float64](x), o.average, o.squares)
	}
	return nil
}

// sumElements returns Σx (Σx² with squares), divided by len(x) with average
// when x is not empty.
func sumElements[T number](x []T, average, squares bool) T {
	s := sumRun(x, squares)
	if average && len(x) > 0 {
		s /= T(len(x))
	}
	return s
}

type sumElementsIntOp struct{ *operators.Base }

func (o *sumElementsIntOp) Run() error {
	x, err := o.InputOf(0, blob.Int32)
	if err != nil {
		return err
	}
	y := o.Output(0)
	if err := y.Init(blob.Int32); err != nil {
		return err
	}
	blob.Data[int32](y)[0] = sumElements(blob.Data[int32](x), false, false)
	return nil
}

type sumElementsGradientOp struct {
	*operators.Base
	average bool
}

func (o *sumElementsGradientOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	dy, err := o.FloatInput(1)
	if err != nil {
		return err
	}
	if dy.Size() != 1 {
		return o.Errorf("gradient input %q must hold one element, has shape %v", o.InputName(1), dy.Dims())
	}
	scale := 1.0
	if o.average && x.Size() > 0 {
		scale = 1 / float64(x.Size())
	}
	dx := o.Output(0)
	if err := dx.Init(dy.DataType(), x.Dims()...); err != nil {
		return err
	}
	if dy.DataType() == blob.Float32 {
		vec.Fill(blob.Data[float32](dx), float32(float64(blob.Data[float32](dy)[0])*scale))
	} else {
		vec.Fill(blob.Data[float64](dx), blob.Data[float64](dy)[0]*scale)
	}
	return nil
}

// matrixMaxBase is what RowwiseMax, ColwiseMax and their gradients share.
type matrixMaxBase struct {
	*operators.Base
	rowwise bool
}

// matrixDims are the sizes of a batch of b m×n matrices and of their k
// maxima per matrix (one per row or per column).
type matrixDims struct{ b, m, n, k int }

// input returns input 0, a float X [B, M, N], and its sizes.
func (o *matrixMaxBase) input() (*blob.Tensor, matrixDims, error) {
	x, err := o.FloatInput(0)
	if err != nil {
		return nil, matrixDims{}, err
	}
	if x.NumDims() != 3 {
		return nil, matrixDims{}, o.Errorf("input 0 (%q) must be 3-D [B, M, N], has shape %v", o.InputName(0), x.Dims())
	}
	d := matrixDims{b: x.Dim(0), m: x.Dim(1), n: x.Dim(2), k: x.Dim(2)}
	if o.rowwise {
		d.k = d.m
	}
	return x, d, nil
}

// matrixMaxOp is RowwiseMax or ColwiseMax.
type matrixMaxOp struct{ matrixMaxBase }

func (o *matrixMaxOp) Run() error {
	x, d, err := o.input()
	if err != nil {
		return err
	}
	y := o.Output(0)
	if err := y.Init(x.DataType(), d.b, d.k); err != nil {
		return err
	}
	if y.Size() == 0 {
		return nil // else the kernel would loop over the 2^31 matrices of no rows
	}
	if x.DataType() == blob.Float32 {
		matrixMax(o.rowwise, d, blob.Data[float32](x), blob.Data[float32](y))
	} else {
		matrixMax(o.rowwise, d, blob.Data[float64](x), blob.Data[float64](y))
	}
	return nil
}

// matrixMax computes the row (or column) maxima of each m×n matrix of x.
func matrixMax[T number](rowwise bool, d matrixDims, x, y []T) {
	mn := d.m * d.n
	for i := range d.b {
		frontBackForward(maxR, !rowwise, d.m, d.n, x[i*mn:(i+1)*mn], nil, y[i*d.k:(i+1)*d.k])
	}
}

// matrixMaxGradientOp is RowwiseMaxGradient or ColwiseMaxGradient.
type matrixMaxGradientOp struct{ matrixMaxBase }

func (o *matrixMaxGradientOp) Run() error {
	x, d, err := o.input()
	if err != nil {
		return err
	}
	y, err := o.InputOf(1, x.DataType())
	if err != nil {
		return err
	}
	dy, err := o.InputOf(2, x.DataType())
	if err != nil {
		return err
	}
	for i, t := range [2]*blob.Tensor{y, dy} {
		if t.Size() != d.b*d.k {
			return o.Errorf("input %d (%q) has shape %v, want %d elements for %q of shape %v",
				i+1, o.InputName(i+1), t.Dims(), d.b*d.k, o.InputName(0), x.Dims())
		}
	}
	dx := o.Output(0)
	if err := dx.Init(x.DataType(), x.Dims()...); err != nil {
		return err
	}
	if dx.Size() == 0 {
		return nil
	}
	if x.DataType() == blob.Float32 {
		matrixMaxBackward(o.rowwise, d, blob.Data[float32](x), blob.Data[float32](y), blob.Data[float32](dy), blob.Data[float32](dx))
	} else {
		matrixMaxBackward(o.rowwise, d, blob.Data[float64](x), blob.Data[float64](y), blob.Data[float64](dy), blob.Data[float64](dx))
	}
	return nil
}

// matrixMaxBackward routes each maximum's gradient to the elements of x
// equal to it.
func matrixMaxBackward[T number](rowwise bool, d matrixDims, x, y, dy, dx []T) {
	mn := d.m * d.n
	for i := range d.b {
		xs, ds := x[i*mn:(i+1)*mn], dx[i*mn:(i+1)*mn]
		frontBackBackward(maxR, !rowwise, d.m, d.n, dy[i*d.k:(i+1)*d.k], xs, y[i*d.k:(i+1)*d.k], nil, ds)
	}
}
