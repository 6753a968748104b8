//go:build cuda && cgo

package cuda

import (
	"fmt"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope/cuda"
	"github.com/caffe2go/caffe2go/operators"
)

// fcImpl is FC and FCTransposed, and their gradients, on cuBLAS: Y = X·Wᵀ
// + b (X·W + b transposed) with X flattened at axis and W at axis_w.
type fcImpl struct {
	op
	transposed, grad bool
	axis, axisW      int
	shape            []int
	bias, colSums    typed
	a                *cuda.Args
}

func newFCImpl(transposed, grad bool) operators.Factory {
	return func(b *operators.Base) (operators.Operator, error) {
		base, err := newOp(b)
		if err != nil {
			return nil, err
		}
		o := &fcImpl{op: base, transposed: transposed, grad: grad, axis: int(b.ArgInt("axis", 1)), axisW: int(b.ArgInt("axis_w", 1)), a: cuda.NewArgs(4)}
		if o.bias, err = base.g.typedKernel("add_bias"); err != nil {
			return nil, err
		}
		if o.colSums, err = base.g.typedKernel("col_sums"); err != nil {
			return nil, err
		}
		o.self = o
		return o, nil
	}
}

func (o *fcImpl) RunOnDevice() error {
	x, err := o.floatInput(0)
	if err != nil {
		return err
	}
	w, err := o.floatInput(1)
	if err != nil {
		return err
	}
	third, err := o.floatInput(2)
	if err != nil {
		return err
	}
	dt := x.DataType()
	if w.DataType() != dt || third.DataType() != dt {
		return fmt.Errorf("inputs %q, %q and %q are %v, %v and %v: they must have one float type",
			o.InputName(0), o.InputName(1), o.InputName(2), dt, w.DataType(), third.DataType())
	}
	ax, ok := operators.CanonicalAxis(o.axis, x.NumDims())
	if !ok {
		return fmt.Errorf("axis %d is out of range for input 0 (%q) of shape %v", o.axis, o.InputName(0), x.Dims())
	}
	axw, ok := operators.CanonicalAxis(o.axisW, w.NumDims())
	if !ok {
		return fmt.Errorf("axis_w %d is out of range for input 1 (%q) of shape %v", o.axisW, o.InputName(1), w.Dims())
	}
	m, k := x.SizeToDim(ax), x.SizeFromDim(ax)
	n, wk := w.SizeToDim(axw), w.SizeFromDim(axw)
	if o.transposed {
		n, wk = wk, n
	}
	if wk != k {
		return fmt.Errorf("dimension mismatch: X (%q) of shape %v flattened at axis %d is %d×%d, but W (%q) of shape %v flattened at axis_w %d has %d inputs, not %d",
			o.InputName(0), x.Dims(), o.axis, m, k, o.InputName(1), w.Dims(), o.axisW, wk, k)
	}
	if o.grad {
		return o.backward(x, w, third, m, n, k)
	}
	if third.NumDims() != 1 || third.Size() != n {
		return fmt.Errorf("dimension mismatch: b (%q) has shape %v, want [%d] for W (%q) of shape %v", o.InputName(2), third.Dims(), n, o.InputName(1), w.Dims())
	}
	o.shape = append(append(o.shape[:0], x.Dims()[:ax]...), n)
	y, err := o.output(0, dt, o.shape...)
	if err != nil {
		return err
	}
	if o.transposed {
		err = o.g.gemm(dt, false, false, m, n, k, 1, x, k, w, n, 0, y, n)
	} else {
		err = o.g.gemm(dt, false, true, m, n, k, 1, x, k, w, k, 0, y, n)
	}
	if err != nil {
		return err
	}
	o.a.Mem(0, y.Storage(), 0)
	o.a.Mem(1, third.Storage(), 0)
	o.a.Int(2, m)
	o.a.Int(3, n)
	return launch1D(o.bias.of(dt), int64(m)*int64(n), o.a)
}

// backward computes (dW, db[, dX]) from X, W and dY.
func (o *fcImpl) backward(x, w, dy *blob.Tensor, m, n, k int) error {
	dt := x.DataType()
	if dy.Size() != m*n {
		return fmt.Errorf("dimension mismatch: dY (%q) has shape %v, want %d×%d elements for X (%q) of shape %v and W (%q) of shape %v",
			o.InputName(2), dy.Dims(), m, n, o.InputName(0), x.Dims(), o.InputName(1), w.Dims())
	}
	dw, err := o.output(0, dt, w.Dims()...)
	if err != nil {
		return err
	}
	db, err := o.output(1, dt, n)
	if err != nil {
		return err
	}
	if o.transposed {
		err = o.g.gemm(dt, true, false, k, n, m, 1, x, k, dy, n, 0, dw, n) // dW (K×N) = Xᵀ·dY
	} else {
		err = o.g.gemm(dt, true, false, n, k, m, 1, dy, n, x, k, 0, dw, k) // dW (N×K) = dYᵀ·X
	}
	if err != nil {
		return err
	}
	o.a.Mem(0, dy.Storage(), 0)
	o.a.Int(1, m)
	o.a.Int(2, n)
	o.a.Mem(3, db.Storage(), 0)
	if err := launch1D(o.colSums.of(dt), int64(n), o.a); err != nil {
		return err
	}
	if o.NumOutputs() < 3 {
		return nil
	}
	dx, err := o.output(2, dt, x.Dims()...)
	if err != nil {
		return err
	}
	if o.transposed {
		return o.g.gemm(dt, false, true, m, k, n, 1, dy, n, w, n, 0, dx, k) // dX = dY·Wᵀ
	}
	return o.g.gemm(dt, false, false, m, k, n, 1, dy, n, w, k, 0, dx, k) // dX = dY·W
}

// rows returns the rows and columns of x flattened at axis.
func rows(b *operators.Base, x *blob.Tensor, axis int) (n, d int, err error) {
	ax, ok := operators.CanonicalAxis(axis, x.NumDims())
	if !ok {
		return 0, 0, fmt.Errorf("axis %d is out of range for input %q of shape %v", axis, b.InputName(0), x.Dims())
	}
	return x.SizeToDim(ax), x.SizeFromDim(ax), nil
}

// softmaxImpl is Softmax and SoftmaxGradient over the rows of X flattened
// at axis.
type softmaxImpl struct {
	op
	grad bool
	axis int
	k    typed
	a    *cuda.Args
}

func newSoftmax(grad bool) operators.Factory {
	return func(b *operators.Base) (operators.Operator, error) {
		base, err := newOp(b)
		if err != nil {
			return nil, err
		}
		o := &softmaxImpl{op: base, grad: grad, axis: int(b.ArgInt("axis", 1)), a: cuda.NewArgs(9)}
		name := "softmax_rows"
		if grad {
			name = "softmax_grad"
		}
		if o.k, err = base.g.typedKernel(name); err != nil {
			return nil, err
		}
		o.self = o
		return o, nil
	}
}

func (o *softmaxImpl) RunOnDevice() error {
	x, err := o.floatInput(0)
	if err != nil {
		return err
	}
	n, d, err := rows(o.Base, x, o.axis)
	if err != nil {
		return err
	}
	y, err := o.output(0, x.DataType(), x.Dims()...)
	if err != nil {
		return err
	}
	grid := cuda.Dim3{X: min(max(n, 1), maxBlocks)}
	if !o.grad {
		o.a.Mem(0, x.Storage(), 0)
		o.a.Mem(1, y.Storage(), 0)
		o.a.Int(2, n)
		o.a.Int(3, d)
		for i := 4; i < 9; i++ {
			o.a.Int64(i, 0) // no labels, probabilities, weights or losses
		}
		return o.k.of(x.DataType()).Launch(grid, cuda.Dim3{X: rowThreads}, 0, o.a)
	}
	// SoftmaxGradient(Y, dY) → dX: input 0 is Y.
	dy, err := o.floatInput(1)
	if err != nil {
		return err
	}
	if dy.Size() != x.Size() || dy.DataType() != x.DataType() {
		return fmt.Errorf("dY (%q) is %v %v, Y (%q) %v %v", o.InputName(1), dy.DataType(), dy.Dims(), o.InputName(0), x.DataType(), x.Dims())
	}
	o.a.Mem(0, x.Storage(), 0)
	o.a.Mem(1, dy.Storage(), 0)
	o.a.Mem(2, y.Storage(), 0)
	o.a.Int(3, n)
	o.a.Int(4, d)
	return o.k.of(x.DataType()).Launch(grid, cuda.Dim3{X: rowThreads}, 0, o.a)
}

// softmaxLossImpl is SoftmaxWithLoss and its gradient, for int32 labels or
// (label_prob) label probabilities, with optional weights.
type softmaxLossImpl struct {
	op
	grad      bool
	scale     float64
	labelProb bool
	axis      int
	rowsK     typed
	totalK    typed
	gradK     typed
	scratch   *blob.Tensor // per-row losses and weights, in double
	a, at     *cuda.Args
}

func newSoftmaxLoss(grad bool) operators.Factory {
	return func(b *operators.Base) (operators.Operator, error) {
		base, err := newOp(b)
		if err != nil {
			return nil, err
		}
		o := &softmaxLossImpl{op: base, grad: grad, scale: float64(b.ArgFloat("scale", 1)), labelProb: b.ArgBool("label_prob", false),
			axis: int(b.ArgInt("axis", 1)), a: cuda.NewArgs(9), at: cuda.NewArgs(5)}
		if !(o.scale >= 0) {
			return nil, fmt.Errorf("scale must be non-negative, got %v", o.scale)
		}
		if order := b.ArgString("order", "NCHW"); order != "NCHW" {
			return nil, fmt.Errorf("only NCHW order is supported, got %q", order)
		}
		if o.rowsK, err = base.g.typedKernel("softmax_rows"); err != nil {
			return nil, err
		}
		if o.totalK, err = base.g.typedKernel("softmax_loss_total"); err != nil {
			return nil, err
		}
		if o.gradK, err = base.g.typedKernel("softmax_loss_grad"); err != nil {
			return nil, err
		}
		o.scratch = &blob.Tensor{}
		o.scratch.SetDevice(b.Def().GetDeviceOption())
		o.self = o
		return o, nil
	}
}

// labels checks input 1 against the logits' n rows of d classes and
// returns its memory and the probabilities' (one of them nil).
func (o *softmaxLossImpl) labels(x *blob.Tensor, n, d int) (labels, probs *blob.Tensor, err error) {
	t, err := o.gpuInput(1)
	if err != nil {
		return nil, nil, err
	}
	if o.labelProb {
		if t.DataType() != x.DataType() || t.Size() != n*d {
			return nil, nil, fmt.Errorf("label probabilities %q are %v %v, want %d rows of %d %v", o.InputName(1), t.DataType(), t.Dims(), n, d, x.DataType())
		}
		return nil, t, nil
	}
	if t.DataType() != blob.Int32 || t.Size() != n {
		return nil, nil, fmt.Errorf("labels %q are %v %v, want %d INT32 labels for logits of shape %v", o.InputName(1), t.DataType(), t.Dims(), n, x.Dims())
	}
	return t, nil, nil
}

// mem returns t's storage for an argument slot, nil when t is nil.
func setMem(a *cuda.Args, i int, t *blob.Tensor) {
	if t == nil {
		a.Int64(i, 0)
		return
	}
	a.Mem(i, t.Storage(), 0)
}

func (o *softmaxLossImpl) RunOnDevice() error {
	x, err := o.floatInput(0)
	if err != nil {
		return err
	}
	dt := x.DataType()
	n, d, err := rows(o.Base, x, o.axis)
	if err != nil {
		return err
	}
	labels, probs, err := o.labels(x, n, d)
	if err != nil {
		return err
	}
	weighted := (!o.grad && o.NumInputs() == 3) || (o.grad && o.NumInputs() == 5)
	var w *blob.Tensor
	if weighted {
		if w, err = o.floatInput(2); err != nil {
			return err
		}
		if w.Size() != n || w.DataType() != dt {
			return fmt.Errorf("weights %q are %v %v, want %d %v", o.InputName(2), w.DataType(), w.Dims(), n, dt)
		}
	}
	if o.grad {
		return o.backward(x, labels, probs, w, n, d)
	}
	p, err := o.output(0, dt, x.Dims()...)
	if err != nil {
		return err
	}
	loss, err := o.output(1, dt)
	if err != nil {
		return err
	}
	if err := o.scratch.Init(blob.Float64, 2*max(n, 1)); err != nil {
		return err
	}
	o.a.Mem(0, x.Storage(), 0)
	o.a.Mem(1, p.Storage(), 0)
	o.a.Int(2, n)
	o.a.Int(3, d)
	setMem(o.a, 4, labels)
	setMem(o.a, 5, probs)
	setMem(o.a, 6, w)
	o.a.Mem(7, o.scratch.Storage(), 0)
	o.a.Mem(8, o.scratch.Storage(), 8*max(n, 1))
	if n > 0 {
		if err := o.rowsK.of(dt).Launch(cuda.Dim3{X: min(n, maxBlocks)}, cuda.Dim3{X: rowThreads}, 0, o.a); err != nil {
			return err
		}
	}
	o.at.Mem(0, o.scratch.Storage(), 0)
	o.at.Mem(1, o.scratch.Storage(), 8*max(n, 1))
	o.at.Int(2, n)
	o.at.Double(3, o.scale)
	o.at.Mem(4, loss.Storage(), 0)
	return o.totalK.of(dt).Launch(cuda.Dim3{X: 1}, cuda.Dim3{X: rowThreads}, 0, o.at)
}

// backward is SoftmaxWithLossGradient(X, labels[, w], P, dLoss) → dX.
func (o *softmaxLossImpl) backward(x, labels, probs, w *blob.Tensor, n, d int) error {
	dt := x.DataType()
	pIdx := o.NumInputs() - 2
	p, err := o.floatInput(pIdx)
	if err != nil {
		return err
	}
	dloss, err := o.floatInput(pIdx + 1)
	if err != nil {
		return err
	}
	if p.Size() != x.Size() || p.DataType() != dt || dloss.Size() != 1 || dloss.DataType() != dt {
		return fmt.Errorf("softmax %q (%v %v) and loss gradient %q (%v %v) do not fit logits of shape %v", o.InputName(pIdx), p.DataType(), p.Dims(),
			o.InputName(pIdx+1), dloss.DataType(), dloss.Dims(), x.Dims())
	}
	dx, err := o.output(0, dt, x.Dims()...)
	if err != nil {
		return err
	}
	o.a.Mem(0, p.Storage(), 0)
	o.a.Mem(1, dx.Storage(), 0)
	o.a.Int(2, n)
	o.a.Int(3, d)
	setMem(o.a, 4, labels)
	setMem(o.a, 5, probs)
	setMem(o.a, 6, w)
	o.a.Mem(7, dloss.Storage(), 0)
	o.a.Double(8, o.scale)
	return launch1D(o.gradK.of(dt), int64(n)*int64(d), o.a)
}

// accuracyImpl is Accuracy: the fraction of rows whose label is among the
// top_k scores.
type accuracyImpl struct {
	op
	topK int
	k    typed
	a    *cuda.Args
}

func newAccuracy(b *operators.Base) (operators.Operator, error) {
	base, err := newOp(b)
	if err != nil {
		return nil, err
	}
	o := &accuracyImpl{op: base, topK: int(b.ArgInt("top_k", 1)), a: cuda.NewArgs(6)}
	if o.topK < 1 {
		return nil, fmt.Errorf("top_k must be at least 1, got %d", o.topK)
	}
	if o.k, err = base.g.typedKernel("accuracy"); err != nil {
		return nil, err
	}
	o.self = o
	return o, nil
}

func (o *accuracyImpl) RunOnDevice() error {
	x, err := o.floatInput(0)
	if err != nil {
		return err
	}
	if x.NumDims() != 2 {
		return fmt.Errorf("predictions %q must be 2-D [N, D], got shape %v", o.InputName(0), x.Dims())
	}
	n, d := x.Dim(0), x.Dim(1)
	l, err := o.gpuInput(1)
	if err != nil {
		return err
	}
	if l.DataType() != blob.Int32 || l.NumDims() != 1 || l.Dim(0) != n {
		return fmt.Errorf("labels %q are %v %v, want INT32 [%d]", o.InputName(1), l.DataType(), l.Dims(), n)
	}
	y, err := o.output(0, blob.Float32)
	if err != nil {
		return err
	}
	o.a.Mem(0, x.Storage(), 0)
	o.a.Mem(1, l.Storage(), 0)
	o.a.Int(2, n)
	o.a.Int(3, d)
	o.a.Int(4, o.topK)
	o.a.Mem(5, y.Storage(), 0)
	return o.k.of(x.DataType()).Launch(cuda.Dim3{X: 1}, cuda.Dim3{X: rowThreads}, 0, o.a)
}

// matMulImpl is MatMul on cuBLAS: Y = op(A)·op(B) with A and B flattened
// to matrices at axis_a and axis_b. The three-input form (Y shaped like a
// third input, as the gradient operators use it) runs on the host.
type matMulImpl struct {
	op
	axisA, axisB   int
	transA, transB bool
	fallback       operators.Operator
}

func newMatMul(b *operators.Base) (operators.Operator, error) {
	base, err := newOp(b)
	if err != nil {
		return nil, err
	}
	o := &matMulImpl{op: base, axisA: int(b.ArgInt("axis_a", 1)), axisB: int(b.ArgInt("axis_b", 1)),
		transA: b.ArgBool("trans_a", false), transB: b.ArgBool("trans_b", false)}
	if o.fallback, err = operators.HostFallback(b); err != nil {
		return nil, err
	}
	o.self = o
	return o, nil
}

func (o *matMulImpl) RunOnDevice() error {
	if o.NumInputs() == 3 {
		return o.fallback.Run()
	}
	a, err := o.floatInput(0)
	if err != nil {
		return err
	}
	b, err := o.floatInput(1)
	if err != nil {
		return err
	}
	if a.DataType() != b.DataType() {
		return fmt.Errorf("A (%q) is %v, B (%q) %v", o.InputName(0), a.DataType(), o.InputName(1), b.DataType())
	}
	ax, ok := operators.CanonicalAxis(o.axisA, a.NumDims())
	if !ok {
		return fmt.Errorf("axis_a %d is out of range for A (%q) of shape %v", o.axisA, o.InputName(0), a.Dims())
	}
	bx, ok := operators.CanonicalAxis(o.axisB, b.NumDims())
	if !ok {
		return fmt.Errorf("axis_b %d is out of range for B (%q) of shape %v", o.axisB, o.InputName(1), b.Dims())
	}
	ar, ac := a.SizeToDim(ax), a.SizeFromDim(ax)
	br, bc := b.SizeToDim(bx), b.SizeFromDim(bx)
	m, k := ar, ac
	if o.transA {
		m, k = ac, ar
	}
	kb, n := br, bc
	if o.transB {
		kb, n = bc, br
	}
	if k != kb {
		return fmt.Errorf("dimension mismatch: op(A) (%q, shape %v) is %d×%d, op(B) (%q, shape %v) is %d×%d",
			o.InputName(0), a.Dims(), m, k, o.InputName(1), b.Dims(), kb, n)
	}
	y, err := o.output(0, a.DataType(), m, n)
	if err != nil {
		return err
	}
	return o.g.gemm(a.DataType(), o.transA, o.transB, m, n, k, 1, a, ac, b, bc, 0, y, n)
}
