package norm

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/internal/parallel"
)

func init() {
	lrnArgs := []operators.ArgSpec{
		{Name: "size", Default: int64(0), Doc: "number of channels in the window (> 0; odd in Caffe2's models)"},
		{Name: "alpha", Default: 0.0, Doc: "scaling factor of the window's sum of squares"},
		{Name: "beta", Default: 0.0, Doc: "exponent"},
		{Name: "bias", Default: 1.0, Doc: "additive term"},
		orderArg,
	}
	operators.MustRegisterCPU(operators.Schema{
		Type: "LRN", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 2, Args: lrnArgs,
		Doc: "LRN(X) → Y[, scale]: local response normalization across channels of a 4-D X: " +
			"scale = bias + alpha/size·Σ X[c']² over c' in [c − (size−1)/2, c + size/2] (clipped to the channels), " +
			"Y = X·scale^(−beta).",
	}, newLRN)
	operators.MustRegisterCPU(operators.Schema{
		Type: "LRNGradient", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1, Args: lrnArgs,
		Doc: "LRNGradient(X, Y, dY) → dX.",
	}, newLRNGradient)
	operators.MustRegisterGradient("LRN", func(g *operators.GradientContext) error {
		g.Op("LRNGradient", []string{g.I(0), g.O(0), g.GO(0)}, []string{g.GI(0)})
		return nil
	})
}

// lrnBlock is how many spatial positions of an NCHW image one work item
// processes; its window sums live in a stack array of this length.
const lrnBlock = 256

// Phases of lrnKernel.
const (
	lrnPhaseForward  = iota // scale and y
	lrnPhaseGradient        // scale (scratch) and dx
)

// lrnKernel is the work of LRN and LRNGradient. Window sums slide along the
// channels, accumulated in float64.
type lrnKernel[T blob.Float] struct {
	l                   layout
	size, pre, post     int // window [c − pre, c + post]
	alpha, beta, bias   float64
	phase               int
	x, y, scale, dy, dx []T
	blocks              int // NCHW work items per image
}

// run runs one phase over the NCHW blocks or NHWC positions. An element
// costs a few operations and a square root or power.
func (k *lrnKernel[T]) run(phase int) {
	k.phase = phase
	l := k.l
	items := l.n * l.hw
	if !l.nhwc {
		k.blocks = (l.hw + lrnBlock - 1) / lrnBlock
		items = l.n * k.blocks
	}
	parallel.Run(k, items, parallel.Parts(l.threads, items, 8*l.n*l.c*l.hw))
}

// RunRange processes NHWC positions or NCHW blocks [lo, hi).
func (k *lrnKernel[T]) RunRange(_, lo, hi int) {
	if k.l.nhwc {
		for r := lo; r < hi; r++ {
			k.row(r * k.l.c)
		}
		return
	}
	for it := lo; it < hi; it++ {
		n, b := it/k.blocks, it%k.blocks
		h0 := b * lrnBlock
		k.planes(n, h0, min(k.l.hw, h0+lrnBlock))
	}
}

// negPow is s^(−beta): the usual exponents by square roots, others by
// exp(−beta·log s) for positive finite s (much faster than math.Pow).
func negPow(s, beta float64) float64 {
	switch beta {
	case 0.75:
		r := 1 / math.Sqrt(s)
		return r * math.Sqrt(r)
	case 0.5:
		return 1 / math.Sqrt(s)
	case 1:
		return 1 / s
	}
	if s > 0 && s <= math.MaxFloat64 {
		return math.Exp(-beta * math.Log(s))
	}
	return math.Pow(s, -beta)
}

// row processes the C channels of one NHWC position starting at off.
func (k *lrnKernel[T]) row(off int) {
	C := k.l.c
	x, scale := k.x[off:off+C], k.scale[off:off+C]
	a := k.alpha / float64(k.size)
	var acc float64
	for c := range min(k.post, C) {
		acc += float64(x[c]) * float64(x[c])
	}
	for c := range C {
		if j := c + k.post; j < C {
			acc += float64(x[j]) * float64(x[j])
		}
		scale[c] = T(k.bias + a*acc)
		if j := c - k.pre; j >= 0 {
			acc -= float64(x[j]) * float64(x[j])
		}
	}
	if k.phase == lrnPhaseForward {
		y := k.y[off : off+C]
		for c, v := range x {
			y[c] = T(float64(v) * negPow(float64(scale[c]), k.beta))
		}
		return
	}
	y, dy, dx := k.y[off:off+C], k.dy[off:off+C], k.dx[off:off+C]
	ratio := func(c int) float64 { return float64(dy[c]) * float64(y[c]) / float64(scale[c]) }
	cr := 2 * k.alpha * k.beta / float64(k.size)
	acc = 0
	for c := range min(k.pre, C) {
		acc += ratio(c)
	}
	for c := range C {
		if j := c + k.pre; j < C {
			acc += ratio(j)
		}
		dx[c] = T(float64(dy[c])*negPow(float64(scale[c]), k.beta) - cr*float64(x[c])*acc)
		if j := c - k.post; j >= 0 {
			acc -= ratio(j)
		}
	}
}

// planes processes the spatial positions [h0, h1) of NCHW image n.
func (k *lrnKernel[T]) planes(n, h0, h1 int) {
	C, HW := k.l.c, k.l.hw
	w := h1 - h0
	var acc [lrnBlock]float64
	sums := acc[:w]
	base := n * C * HW
	at := func(c int) int { return base + c*HW + h0 }
	a := k.alpha / float64(k.size)
	addSq := func(c int, sign float64) {
		for i, v := range k.x[at(c) : at(c)+w] {
			sums[i] += sign * float64(v) * float64(v)
		}
	}
	for c := range min(k.post, C) {
		addSq(c, 1)
	}
	for c := range C {
		if j := c + k.post; j < C {
			addSq(j, 1)
		}
		o := at(c)
		scale, x := k.scale[o:o+w], k.x[o:o+w]
		for i, s := range sums {
			scale[i] = T(k.bias + a*s)
		}
		if k.phase == lrnPhaseForward {
			y := k.y[o : o+w]
			for i, v := range x {
				y[i] = T(float64(v) * negPow(float64(scale[i]), k.beta))
			}
		}
		if j := c - k.pre; j >= 0 {
			addSq(j, -1)
		}
	}
	if k.phase == lrnPhaseForward {
		return
	}
	clear(sums)
	addRatio := func(c int, sign float64) {
		o := at(c)
		dy, y, scale := k.dy[o:o+w], k.y[o:o+w], k.scale[o:o+w]
		for i, g := range dy {
			sums[i] += sign * float64(g) * float64(y[i]) / float64(scale[i])
		}
	}
	cr := 2 * k.alpha * k.beta / float64(k.size)
	for c := range min(k.pre, C) {
		addRatio(c, 1)
	}
	for c := range C {
		if j := c + k.pre; j < C {
			addRatio(j, 1)
		}
		o := at(c)
		dy, x, scale, dx := k.dy[o:o+w], k.x[o:o+w], k.scale[o:o+w], k.dx[o:o+w]
		for i, g := range dy {
			dx[i] = T(float64(g)*negPow(float64(scale[i]), k.beta) - cr*float64(x[i])*sums[i])
		}
		if j := c - k.post; j >= 0 {
			addRatio(j, -1)
		}
	}
}

// lrnBase holds the arguments LRN and LRNGradient share.
type lrnBase struct {
	*operators.Base
	size              int
	alpha, beta, bias float64
	nhwc              bool
}

func newLRNBase(b *operators.Base) (lrnBase, error) {
	o := lrnBase{Base: b, size: int(b.ArgInt("size", 0)), alpha: float64(b.ArgFloat("alpha", 0)),
		beta: float64(b.ArgFloat("beta", 0)), bias: float64(b.ArgFloat("bias", 1))}
	var err error
	if o.nhwc, err = readOrder(b); err != nil {
		return o, err
	}
	if o.size <= 0 {
		return o, b.Errorf("size must be positive, got %d", o.size)
	}
	return o, nil
}

// setup points k at the layout of the 4-D input i and the arguments.
func setupLRN[T blob.Float](o *lrnBase, k *lrnKernel[T], i int, x *blob.Tensor) error {
	if x.NumDims() != 4 {
		return o.Errorf("input %d (%q) has shape %v; LRN needs a 4-D input", i, o.InputName(i), x.Dims())
	}
	l, err := spatialLayout(o.Base, i, x, o.nhwc, 4)
	if err != nil {
		return err
	}
	k.l, k.size, k.alpha, k.beta, k.bias = l, o.size, o.alpha, o.beta, o.bias
	k.pre = (o.size - 1) / 2
	k.post = o.size - 1 - k.pre
	k.x = blob.Data[T](x)
	return nil
}

type lrn struct {
	lrnBase
	scratch32 []float32
	scratch64 []float64
	k32       lrnKernel[float32]
	k64       lrnKernel[float64]
}

func newLRN(b *operators.Base) (operators.Operator, error) {
	o, err := newLRNBase(b)
	return &lrn{lrnBase: o}, err
}

func (o *lrn) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	if x.DataType() == blob.Float32 {
		return runLRN(o, &o.k32, &o.scratch32, x)
	}
	return runLRN(o, &o.k64, &o.scratch64, x)
}

func runLRN[T blob.Float](o *lrn, k *lrnKernel[T], scratch *[]T, x *blob.Tensor) error {
	if err := setupLRN(&o.lrnBase, k, 0, x); err != nil {
		return err
	}
	y, err := initOutput(o.Base, 0, x.DataType(), x.Dims()...)
	if err != nil {
		return err
	}
	k.x, k.y = blob.Data[T](x), blob.Data[T](y)
	if o.NumOutputs() == 2 {
		s, err := initOutput(o.Base, 1, x.DataType(), x.Dims()...)
		if err != nil {
			return err
		}
		k.scale = blob.Data[T](s)
	} else {
		*scratch = grow(*scratch, x.Size())
		k.scale = *scratch
	}
	k.run(lrnPhaseForward)
	return nil
}

type lrnGradient struct {
	lrnBase
	scratch32 []float32
	scratch64 []float64
	k32       lrnKernel[float32]
	k64       lrnKernel[float64]
}

func newLRNGradient(b *operators.Base) (operators.Operator, error) {
	o, err := newLRNBase(b)
	return &lrnGradient{lrnBase: o}, err
}

func (o *lrnGradient) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	if x.DataType() == blob.Float32 {
		return runLRNGradient(o, &o.k32, &o.scratch32, x)
	}
	return runLRNGradient(o, &o.k64, &o.scratch64, x)
}

func runLRNGradient[T blob.Float](o *lrnGradient, k *lrnKernel[T], scratch *[]T, x *blob.Tensor) error {
	if err := setupLRN(&o.lrnBase, k, 0, x); err != nil {
		return err
	}
	y, err := inputLike(o.Base, 1, x, x.Size())
	if err != nil {
		return err
	}
	dy, err := inputLike(o.Base, 2, x, x.Size())
	if err != nil {
		return err
	}
	dx, err := initOutput(o.Base, 0, x.DataType(), x.Dims()...)
	if err != nil {
		return err
	}
	*scratch = grow(*scratch, x.Size())
	k.x, k.y, k.dy, k.dx, k.scale = blob.Data[T](x), blob.Data[T](y), blob.Data[T](dy), blob.Data[T](dx), *scratch
	k.run(lrnPhaseGradient)
	return nil
}
