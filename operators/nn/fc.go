package nn

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/internal/vec"
	"github.com/caffe2go/caffe2go/operators/kernels/gemm"
)

var fcArgs = []operators.ArgSpec{
	{Name: "axis", Default: int64(1), Doc: "X is flattened to M×K at this axis"},
	{Name: "axis_w", Default: int64(1), Doc: "W is flattened to a matrix at this axis"},
	{Name: "float16_compute", Default: false, Doc: "accepted for compatibility; the CPU kernels compute in the input type"},
}

func init() {
	for _, transposed := range []bool{false, true} {
		typ, wDoc := "FC", "W is N×K (flattened at axis_w) and Y = X·Wᵀ + b"
		if transposed {
			typ, wDoc = "FCTransposed", "W is K×N (flattened at axis_w, pre-transposed) and Y = X·W + b"
		}
		operators.MustRegisterCPU(operators.Schema{
			Type: typ, MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1, Args: fcArgs,
			Doc: typ + "(X, W, b) is a fully connected layer: X is flattened to M×K at axis, " + wDoc +
				", b has N elements, and Y has X's dimensions before axis followed by N.",
		}, func(b *operators.Base) (operators.Operator, error) {
			return &fcOp{newFC(b, transposed)}, nil
		})
		grad := typ + "Gradient"
		operators.MustRegisterCPU(operators.Schema{
			Type: grad, MinInputs: 3, MaxInputs: 3, MinOutputs: 2, MaxOutputs: 3, Args: fcArgs,
			Doc: grad + "(X, W, dY) computes (dW, db[, dX]) of " + typ + ".",
		}, func(b *operators.Base) (operators.Operator, error) {
			return &fcGradOp{newFC(b, transposed)}, nil
		})
		operators.MustRegisterGradient(typ, func(g *operators.GradientContext) error {
			g.Op(grad, []string{g.I(0), g.I(1), g.GO(0)}, []string{g.GI(1), g.GI(2), g.GI(0)})
			return nil
		})
	}
}

// fcDims are the matrix sizes of a fully connected layer.
type fcDims struct {
	ax      int // canonical axis of X
	m, k    int
	n       int
	threads int // the operator's kernel thread budget
}

// fc is what FC, FCTransposed and their gradient operators share: the
// arguments, and the checks of X, W and the third input (b or dY).
type fc struct {
	*operators.Base
	axis, axisW int
	transposed  bool
	shape       []int // scratch for an output shape
}

func newFC(b *operators.Base, transposed bool) fc {
	return fc{Base: b, axis: int(b.ArgInt("axis", 1)), axisW: int(b.ArgInt("axis_w", 1)), transposed: transposed}
}

// inputs returns X, W and the third input, all of X's float type, and the
// layer's sizes.
func (o *fc) inputs() (x, w, third *blob.Tensor, d fcDims, err error) {
	if x, err = o.FloatInput(0); err != nil {
		return nil, nil, nil, d, err
	}
	if w, err = inputLike(o.Base, 1, 0, x); err != nil {
		return nil, nil, nil, d, err
	}
	if third, err = inputLike(o.Base, 2, 0, x); err != nil {
		return nil, nil, nil, d, err
	}
	d, err = o.dims(x, w)
	return x, w, third, d, err
}

// dims checks X and W and returns the layer's sizes.
func (o *fc) dims(x, w *blob.Tensor) (fcDims, error) {
	ax, ok := operators.CanonicalAxis(o.axis, x.NumDims())
	if !ok {
		return fcDims{}, o.Errorf("axis %d is out of range for input 0 (%q) of shape %v", o.axis, o.InputName(0), x.Dims())
	}
	axw, ok := operators.CanonicalAxis(o.axisW, w.NumDims())
	if !ok {
		return fcDims{}, o.Errorf("axis_w %d is out of range for input 1 (%q) of shape %v", o.axisW, o.InputName(1), w.Dims())
	}
	d := fcDims{ax: ax, m: x.SizeToDim(ax), k: x.SizeFromDim(ax), threads: o.Threads()}
	wk := w.SizeFromDim(axw)
	d.n = w.SizeToDim(axw)
	if o.transposed {
		wk, d.n = d.n, wk
	}
	if wk != d.k {
		return fcDims{}, o.Errorf("dimension mismatch: X (%q) of shape %v flattened at axis %d is %d×%d, but W (%q) of shape %v flattened at axis_w %d has %d inputs, not %d",
			o.InputName(0), x.Dims(), o.axis, d.m, d.k, o.InputName(1), w.Dims(), o.axisW, wk, d.k)
	}
	return d, nil
}

// fcOp is FC or FCTransposed.
type fcOp struct{ fc }

func (o *fcOp) Run() error {
	x, w, bias, d, err := o.inputs()
	if err != nil {
		return err
	}
	if bias.NumDims() != 1 || bias.Size() != d.n {
		return o.Errorf("dimension mismatch: b (%q) has shape %v, want [%d] for W (%q) of shape %v", o.InputName(2), bias.Dims(), d.n, o.InputName(1), w.Dims())
	}
	o.shape = append(append(o.shape[:0], x.Dims()[:d.ax]...), d.n)
	y := o.Output(0)
	if err := y.Init(x.DataType(), o.shape...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	switch x.DataType() {
	case blob.Float32:
		fcForward(d, o.transposed, blob.Data[float32](x), blob.Data[float32](w), blob.Data[float32](bias), blob.Data[float32](y))
	case blob.Float64:
		fcForward(d, o.transposed, blob.Data[float64](x), blob.Data[float64](w), blob.Data[float64](bias), blob.Data[float64](y))
	}
	return nil
}

// fcForward computes y = x·wᵀ + b (x·w + b when transposed).
func fcForward[T blob.Float](d fcDims, transposed bool, x, w, b, y []T) {
	for i := 0; i < d.m; i++ {
		copy(y[i*d.n:(i+1)*d.n], b)
	}
	if transposed {
		gemm.Gemm(d.threads, false, false, d.m, d.n, d.k, 1, x, ld(d.k), w, ld(d.n), 1, y, ld(d.n))
		return
	}
	gemm.Gemm(d.threads, false, true, d.m, d.n, d.k, 1, x, ld(d.k), w, ld(d.k), 1, y, ld(d.n))
}

// fcGradOp is FCGradient or FCTransposedGradient.
type fcGradOp struct{ fc }

func (o *fcGradOp) Run() error {
	x, w, dy, d, err := o.inputs()
	if err != nil {
		return err
	}
	if dy.Size() != d.m*d.n {
		return o.Errorf("dimension mismatch: dY (%q) has shape %v, want %d×%d elements for X (%q) of shape %v and W (%q) of shape %v",
			o.InputName(2), dy.Dims(), d.m, d.n, o.InputName(0), x.Dims(), o.InputName(1), w.Dims())
	}
	dt := x.DataType()
	dw, db := o.Output(0), o.Output(1)
	if err := dw.Init(dt, w.Dims()...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	o.shape = append(o.shape[:0], d.n)
	if err := db.Init(dt, o.shape...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(1), err)
	}
	var dx *blob.Tensor
	if o.NumOutputs() == 3 {
		dx = o.Output(2)
		if err := dx.Init(dt, x.Dims()...); err != nil {
			return o.Errorf("output %q: %v", o.OutputName(2), err)
		}
	}
	switch dt {
	case blob.Float32:
		fcBackward(d, o.transposed, blob.Data[float32](x), blob.Data[float32](w), blob.Data[float32](dy),
			blob.Data[float32](dw), blob.Data[float32](db), dataOrNil[float32](dx))
	case blob.Float64:
		fcBackward(d, o.transposed, blob.Data[float64](x), blob.Data[float64](w), blob.Data[float64](dy),
			blob.Data[float64](dw), blob.Data[float64](db), dataOrNil[float64](dx))
	}
	return nil
}

func dataOrNil[T blob.Float](t *blob.Tensor) []T {
	if t == nil {
		return nil
	}
	return blob.Data[T](t)
}

// fcBackward computes dw, db and (when dx is not nil) dx of a fully
// connected layer from x, w and dy.
func fcBackward[T blob.Float](d fcDims, transposed bool, x, w, dy, dw, db, dx []T) {
	if transposed {
		// dW (K×N) = Xᵀ·dY.
		gemm.Gemm(d.threads, true, false, d.k, d.n, d.m, 1, x, ld(d.k), dy, ld(d.n), 0, dw, ld(d.n))
	} else {
		// dW (N×K) = dYᵀ·X.
		gemm.Gemm(d.threads, true, false, d.n, d.k, d.m, 1, dy, ld(d.n), x, ld(d.k), 0, dw, ld(d.k))
	}
	// db is the column sums of dY, added a row at a time with the vector
	// kernel (in row order, as a scalar loop would: the same bits).
	clear(db)
	for i := 0; i < d.m; i++ {
		vec.Add(db, dy[i*d.n:(i+1)*d.n])
	}
	if dx == nil {
		return
	}
	if transposed {
		// dX = dY·Wᵀ with W K×N.
		gemm.Gemm(d.threads, false, true, d.m, d.k, d.n, 1, dy, ld(d.n), w, ld(d.n), 0, dx, ld(d.k))
		return
	}
	// dX = dY·W with W N×K.
	gemm.Gemm(d.threads, false, false, d.m, d.k, d.n, 1, dy, ld(d.n), w, ld(d.k), 0, dx, ld(d.k))
}
