package norm

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/internal/parallel"
	"github.com/caffe2go/caffe2go/operators/internal/vec"
)

func init() {
	lnArgs := []operators.ArgSpec{
		{Name: "axis", Default: int64(1), Doc: "the dimensions from axis on form the normalized rows; negative counts from the end"},
		{Name: "epsilon", Default: 1e-5, Doc: "added to the variance"},
		{Name: "elementwise_affine", Default: int64(0), Doc: "1: Y = normalized·gamma + beta with gamma and beta (inputs 1 and 2) shaped like a row"},
	}
	operators.MustRegisterCPU(operators.Schema{
		Type: "LayerNorm", MinInputs: 1, MaxInputs: 3, InputsCheck: func(n int) bool { return n == 1 || n == 3 },
		MinOutputs: 3, MaxOutputs: 3, Args: lnArgs,
		Doc: "LayerNorm(X[, gamma, beta]) → (Y, mean, std): X is flattened to M rows at axis; per row " +
			"Y = (X − μ)/std with std = √(σ² + ε) (biased σ²), then ·gamma + beta with elementwise_affine. " +
			"mean and std have X's leading dimensions and a trailing 1.",
	}, newLayerNorm)
	operators.MustRegisterCPU(operators.Schema{
		Type: "LayerNormGradient", MinInputs: 5, MaxInputs: 6, MinOutputs: 1, MaxOutputs: 3,
		InputsCheck: func(n int) bool { return n == 5 || n == 6 }, Args: lnArgs,
		Doc: "LayerNormGradient(dY, Y, mean, std, X[, gamma]) → dX[, dgamma, dbeta].",
	}, newLayerNormGradient)
	operators.MustRegisterGradient("LayerNorm", func(g *operators.GradientContext) error {
		if g.ArgInt("elementwise_affine", 0) != 0 {
			g.Op("LayerNormGradient", []string{g.GO(0), g.O(0), g.O(1), g.O(2), g.I(0), g.I(1)}, []string{g.GI(0), g.GI(1), g.GI(2)})
			return nil
		}
		g.Op("LayerNormGradient", []string{g.GO(0), g.O(0), g.O(1), g.O(2), g.I(0)}, []string{g.GI(0)})
		return nil
	})
}

// Phases of layerKernel.
const (
	lnForward    = iota // statistics and output of each row
	lnGradient          // dx of each row
	lnAffineGrad        // dgamma and dbeta of each column
)

// layerKernel is the row-wise work of LayerNorm and its gradient over m
// rows of k elements.
type layerKernel[T blob.Float] struct {
	m, k        int
	eps         float64
	phase       int
	x, y, dy    []T
	gamma, beta []T // nil without elementwise affine
	mean, std   []T // per row
	dg, db      []float64
	threads     int // the operator's kernel thread budget
}

// run runs one phase over the rows (or, for lnAffineGrad, the columns).
func (k *layerKernel[T]) run(phase int) {
	k.phase = phase
	items := k.m
	if phase == lnAffineGrad {
		items = k.k
	}
	parallel.Run(k, items, parallel.Parts(k.threads, items, k.m*k.k))
}

// RunRange processes the rows [lo, hi) of the phase.
func (k *layerKernel[T]) RunRange(_, lo, hi int) {
	K := k.k
	switch k.phase {
	case lnForward:
		for i := lo; i < hi; i++ {
			k.forwardRow(i, k.x[i*K:(i+1)*K], k.y[i*K:(i+1)*K])
		}
	case lnGradient:
		for i := lo; i < hi; i++ {
			k.gradientRow(i, k.x[i*K:(i+1)*K], k.dy[i*K:(i+1)*K], k.y[i*K:(i+1)*K])
		}
	case lnAffineGrad:
		dg, db := k.dg[lo:hi], k.db[lo:hi]
		clear(dg)
		clear(db)
		for i := range k.m {
			m, r := float64(k.mean[i]), 1/float64(k.std[i])
			x, dy := k.x[i*K+lo:i*K+hi], k.dy[i*K+lo:i*K+hi]
			for j, g := range dy {
				dg[j] += float64(g) * (float64(x[j]) - m) * r
				db[j] += float64(g)
			}
		}
	}
}

// forwardRow normalizes row i: y = (x − μ)/std (·γ + β), and records μ
// and std = √(σ² + ε).
func (k *layerKernel[T]) forwardRow(i int, x, y []T) {
	shift := at(x, 0)
	s, s2 := vec.ShiftedSums(x, shift)
	mean, variance := moments(s, s2, len(x), shift)
	std := math.Sqrt(variance + k.eps)
	k.mean[i], k.std[i] = T(mean), T(std)
	m, r := T(mean), T(1/std)
	if k.gamma == nil {
		vec.Normalize(x, y, m, r, 0)
		return
	}
	g, b := k.gamma[:len(x)], k.beta[:len(x)]
	y = y[:len(x)]
	for j, v := range x {
		y[j] = (v-m)*r*g[j] + b[j]
	}
}

// gradientRow computes dx = dy·γ·r + (x − μ)·c + d with r = 1/std,
// c = −r³·Σ dy·γ·(x − μ)/K and d = −r·Σ dy·γ/K: Caffe2's
// LayerNormGradient, written around the row mean.
func (k *layerKernel[T]) gradientRow(i int, x, dy, dx []T) {
	m := float64(k.mean[i])
	r := 1 / float64(k.std[i])
	var sdy, sdyx float64
	if k.gamma == nil {
		sdy, sdyx = vec.GradSums(dy, x, m)
	} else {
		g := k.gamma[:len(dy)]
		for j, v := range dy {
			gv := float64(v) * float64(g[j])
			sdy += gv
			sdyx += gv * (float64(x[j]) - m)
		}
	}
	inv := 1 / float64(len(dy))
	c, d := T(-sdyx*r*r*r*inv), T(-sdy*r*inv)
	mt, rt := T(m), T(r)
	if k.gamma == nil {
		vec.NormalizeGrad(dy, x, dx, mt, rt, c, d)
		return
	}
	g := k.gamma[:len(dy)]
	x, dx = x[:len(dy)], dx[:len(dy)]
	for j, v := range dy {
		dx[j] = v*g[j]*rt + (x[j]-mt)*c + d
	}
}

// layerShape reads axis and returns the rows m, the row length k and the
// shape of the statistics (X's dimensions before axis, then 1).
func layerShape(b *operators.Base, i int, x *blob.Tensor, axis int, stat []int) (m, k int, dims []int, err error) {
	if x.NumDims() < 2 {
		return 0, 0, nil, b.Errorf("input %d (%q) has shape %v; LayerNorm needs at least 2 dimensions", i, b.InputName(i), x.Dims())
	}
	ax, ok := operators.CanonicalAxis(axis, x.NumDims())
	if !ok {
		return 0, 0, nil, b.Errorf("axis %d is out of range for input %d (%q) of shape %v", axis, i, b.InputName(i), x.Dims())
	}
	dims = append(append(stat[:0], x.Dims()[:ax]...), 1)
	return x.SizeToDim(ax), x.SizeFromDim(ax), dims, nil
}

type layerNorm struct {
	*operators.Base
	axis   int
	eps    float64
	affine bool
	dims   []int
	k32    layerKernel[float32]
	k64    layerKernel[float64]
}

func newLayerNorm(b *operators.Base) (operators.Operator, error) {
	o := &layerNorm{Base: b, axis: int(b.ArgInt("axis", 1)), eps: float64(b.ArgFloat("epsilon", 1e-5)), affine: b.ArgBool("elementwise_affine", false)}
	if o.affine && b.NumInputs() != 3 {
		return nil, b.Errorf("with elementwise_affine LayerNorm takes 3 inputs (X, gamma, beta), got %d", b.NumInputs())
	}
	return o, nil
}

func (o *layerNorm) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	if x.DataType() == blob.Float32 {
		return runLayerNorm(o, &o.k32, x)
	}
	return runLayerNorm(o, &o.k64, x)
}

func runLayerNorm[T blob.Float](o *layerNorm, k *layerKernel[T], x *blob.Tensor) error {
	m, rowLen, dims, err := layerShape(o.Base, 0, x, o.axis, o.dims)
	if err != nil {
		return err
	}
	o.dims = dims
	k.gamma, k.beta = nil, nil
	if o.affine {
		gamma, err := inputLike(o.Base, 1, x, rowLen)
		if err != nil {
			return err
		}
		beta, err := inputLike(o.Base, 2, x, rowLen)
		if err != nil {
			return err
		}
		k.gamma, k.beta = blob.Data[T](gamma), blob.Data[T](beta)
	}
	dtype := x.DataType()
	y, err := initOutput(o.Base, 0, dtype, x.Dims()...)
	if err != nil {
		return err
	}
	mean, err := initOutput(o.Base, 1, dtype, dims...)
	if err != nil {
		return err
	}
	std, err := initOutput(o.Base, 2, dtype, dims...)
	if err != nil {
		return err
	}
	k.m, k.k, k.eps, k.threads = m, rowLen, o.eps, o.Threads()
	k.x, k.y, k.mean, k.std = blob.Data[T](x), blob.Data[T](y), blob.Data[T](mean), blob.Data[T](std)
	k.run(lnForward)
	return nil
}

type layerNormGradient struct {
	*operators.Base
	axis   int
	affine bool
	k32    layerKernel[float32]
	k64    layerKernel[float64]
}

func newLayerNormGradient(b *operators.Base) (operators.Operator, error) {
	o := &layerNormGradient{Base: b, axis: int(b.ArgInt("axis", 1)), affine: b.ArgBool("elementwise_affine", false)}
	switch {
	case b.NumOutputs() == 2:
		return nil, b.Errorf("LayerNormGradient has 1 or 3 outputs, got 2")
	case o.affine && (b.NumInputs() != 6 || b.NumOutputs() != 3):
		return nil, b.Errorf("with elementwise_affine LayerNormGradient takes 6 inputs and 3 outputs, got %d and %d", b.NumInputs(), b.NumOutputs())
	}
	return o, nil
}

func (o *layerNormGradient) Run() error {
	x, err := o.FloatInput(4)
	if err != nil {
		return err
	}
	if x.DataType() == blob.Float32 {
		return runLayerNormGradient(o, &o.k32, x)
	}
	return runLayerNormGradient(o, &o.k64, x)
}

func runLayerNormGradient[T blob.Float](o *layerNormGradient, k *layerKernel[T], x *blob.Tensor) error {
	ax, ok := operators.CanonicalAxis(o.axis, x.NumDims())
	if !ok {
		return o.Errorf("axis %d is out of range for input 4 (%q) of shape %v", o.axis, o.InputName(4), x.Dims())
	}
	m, rowLen := x.SizeToDim(ax), x.SizeFromDim(ax)
	dy, err := inputLike(o.Base, 0, x, x.Size())
	if err != nil {
		return err
	}
	mean, err := inputLike(o.Base, 2, x, m)
	if err != nil {
		return err
	}
	std, err := inputLike(o.Base, 3, x, m)
	if err != nil {
		return err
	}
	k.gamma = nil
	var gamma *blob.Tensor
	if o.affine {
		if gamma, err = inputLike(o.Base, 5, x, rowLen); err != nil {
			return err
		}
		k.gamma = blob.Data[T](gamma)
	}
	dx, err := initOutput(o.Base, 0, x.DataType(), x.Dims()...)
	if err != nil {
		return err
	}
	k.m, k.k, k.threads = m, rowLen, o.Threads()
	k.x, k.dy, k.y = blob.Data[T](x), blob.Data[T](dy), blob.Data[T](dx)
	k.mean, k.std = blob.Data[T](mean), blob.Data[T](std)
	k.run(lnGradient)
	if !o.affine {
		return nil
	}
	dgamma, err := initOutput(o.Base, 1, x.DataType(), gamma.Dims()...)
	if err != nil {
		return err
	}
	dbeta, err := initOutput(o.Base, 2, x.DataType(), gamma.Dims()...)
	if err != nil {
		return err
	}
	k.dg, k.db = grow(k.dg, rowLen), grow(k.db, rowLen)
	k.run(lnAffineGrad)
	dgd, dbd := blob.Data[T](dgamma), blob.Data[T](dbeta)
	for j := range rowLen {
		dgd[j], dbd[j] = T(k.dg[j]), T(k.db[j])
	}
	return nil
}
