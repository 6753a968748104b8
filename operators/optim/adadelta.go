package optim

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// Dense optimizers of Caffe2's caffe2/sgd beyond SGD, Adam and Adagrad:
// Adadelta, Wngrad, Ftrl and LearningRateAdaption. They are FLOAT only, as
// in Caffe2, and never differentiated.
func init() {
	adadeltaArgs := []operators.ArgSpec{
		{Name: "epsilon", Default: float32(1e-5), Doc: "added under both square roots (≥ 0)"},
		{Name: "decay", Default: float32(0.95), Doc: "the decay of both running averages, in (0, 1)"},
	}
	operators.MustRegisterCPU(operators.Schema{
		Type: "Adadelta", MinInputs: 5, MaxInputs: 5, MinOutputs: 3, MaxOutputs: 3,
		AllowInplace: operators.InplacePairs([2]int{0, 0}, [2]int{1, 1}, [2]int{2, 2}),
		Args:         adadeltaArgs,
		Doc: "(param, moment, moment_delta, grad, lr) → (param, moment, moment_delta): " +
			"moment = decay·moment + (1 − decay)·g², u = √(moment_delta + ε)/√(moment + ε)·g, param += lr·u, " +
			"moment_delta = decay·moment_delta + (1 − decay)·u².",
	}, func(b *operators.Base) (operators.Operator, error) {
		eps, decay, err := adadeltaParams(b)
		return &adadeltaOp{Base: b, eps: eps, decay: decay}, err
	})
	operators.MustRegisterGradientForbidden("Adadelta")
	operators.MustRegisterShapeFunc("Adadelta", operators.SameShapes([]int{0, 1, 2, 3}, 0, 1, 2))

	operators.MustRegisterCPU(operators.Schema{
		Type: "Wngrad", MinInputs: 4, MaxInputs: 4, MinOutputs: 2, MaxOutputs: 4,
		AllowInplace: operators.InplacePairs([2]int{0, 0}, [2]int{1, 1}),
		Args:         []operators.ArgSpec{{Name: "epsilon", Default: float32(1e-5), Doc: "added to seq_b"}},
		Doc: "(param, seq_b, grad, lr) → (param, seq_b[, effective_lr[, update]]): effective_lr = lr/(seq_b + ε), " +
			"update = effective_lr·g, param += update, seq_b += Σg²/(seq_b + ε). seq_b and lr hold one element each.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &wngradOp{Base: b, eps: b.ArgFloat("epsilon", 1e-5)}, nil
	})
	operators.MustRegisterGradientForbidden("Wngrad")
	operators.MustRegisterShapeFunc("Wngrad", wngradShape)

	operators.MustRegisterCPU(operators.Schema{
		Type: "Ftrl", MinInputs: 3, MaxInputs: 4, MinOutputs: 2, MaxOutputs: 2,
		AllowInplace: operators.InplacePairs([2]int{0, 0}, [2]int{1, 1}),
		Args: []operators.ArgSpec{
			{Name: "alpha", Default: float32(0.005), Doc: "the learning rate (the optional input 3 overrides it)"},
			{Name: "beta", Default: float32(1)},
			{Name: "lambda1", Default: float32(0.001), Doc: "the L1 strength"},
			{Name: "lambda2", Default: float32(0.001), Doc: "the L2 strength"},
		},
		Doc: "(var, n_z, grad[, alpha]) → (var, n_z): FTRL-proximal. n_z holds n and z interleaved, two per " +
			"element of var: n' = n + g², z += g − (√n' − √n)/alpha·var; var = (lambda1·sign(z) − z)/((beta + √n')/alpha + lambda2) " +
			"where |z| > lambda1, else 0.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &ftrlOp{Base: b, alpha: b.ArgFloat("alpha", 0.005), beta: b.ArgFloat("beta", 1),
			lambda1: b.ArgFloat("lambda1", 0.001), lambda2: b.ArgFloat("lambda2", 0.001)}, nil
	})
	operators.MustRegisterGradientForbidden("Ftrl")
	operators.MustRegisterShapeFunc("Ftrl", operators.SameShapes([]int{0, 2}, 0, 1))

	operators.MustRegisterCPU(operators.Schema{
		Type: "LearningRateAdaption", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		AllowInplace: operators.InplacePairs([2]int{0, 0}),
		Args: []operators.ArgSpec{
			{Name: "lr_alpha", Default: float32(0.01), Doc: "the step of the learning rate"},
			{Name: "normalized_lr_adaption", Default: true, Doc: "use the cosine of grad and effgrad instead of their dot product"},
		},
		Doc: "(lr, grad, effgrad) → lr': lr' = lr·(1 − lr_alpha·cos(grad, effgrad)) (norms at least 1e-12), " +
			"or without normalization lr − lr_alpha·(grad·effgrad). lr holds one element.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &lrAdaptionOp{Base: b, alpha: b.ArgFloat("lr_alpha", 0.01), normalized: b.ArgBool("normalized_lr_adaption", true)}, nil
	})
	operators.MustRegisterGradientForbidden("LearningRateAdaption")
	operators.MustRegisterShapeFunc("LearningRateAdaption", operators.SameShapes(nil, 0))
}

// adadeltaParams reads and checks Adadelta's arguments.
func adadeltaParams(b *operators.Base) (eps, decay float32, err error) {
	eps, decay = b.ArgFloat("epsilon", 1e-5), b.ArgFloat("decay", 0.95)
	if !(eps >= 0) {
		return 0, 0, b.Errorf("epsilon is %g, want ≥ 0", eps)
	}
	if !(decay > 0 && decay < 1) {
		return 0, 0, b.Errorf("decay is %g, want it in (0, 1)", decay)
	}
	return eps, decay, nil
}

// float32Inputs stores inputs idx, which must be FLOAT, in dst.
func float32Inputs(o *operators.Base, dst []*blob.Tensor, idx ...int) error {
	for k, i := range idx {
		t, err := o.InputOf(i, blob.Float32)
		if err != nil {
			return err
		}
		dst[k] = t
	}
	return nil
}

// adadelta updates the elements of one block; the outputs may be the
// inputs.
func adadelta(w, g, h, d, nw, nh, nd []float32, eps, decay, lr float32) {
	g = g[:len(w)]
	for i, gi := range g {
		di := d[i]
		hi := decay*h[i] + (1-decay)*gi*gi
		nh[i] = hi
		ng := sqrt32(di+eps) / sqrt32(hi+eps) * gi
		nw[i] = w[i] + lr*ng
		nd[i] = decay*di + (1-decay)*ng*ng
	}
}

func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) }

type adadeltaOp struct {
	*operators.Base
	eps, decay float32
	in         [5]*blob.Tensor
}

func (o *adadeltaOp) Run() error {
	if err := float32Inputs(o.Base, o.in[:], 0, 1, 2, 3, 4); err != nil {
		return err
	}
	defer clear(o.in[:])
	p, h, d, g, lr := o.in[0], o.in[1], o.in[2], o.in[3], o.in[4]
	for i, t := range []*blob.Tensor{h, d, g} {
		if err := sameSize(o.Base, t, i+1, p, 0); err != nil {
			return err
		}
	}
	if err := scalarInput(o.Base, lr, 4); err != nil {
		return err
	}
	var out [3]*blob.Tensor
	for i, t := range []*blob.Tensor{p, h, d} {
		y, err := resizeLike(o.Base, i, t, false)
		if err != nil {
			return err
		}
		out[i] = y
	}
	f := blob.Data[float32]
	adadelta(f(p), f(g), f(h), f(d), f(out[0]), f(out[1]), f(out[2]), o.eps, o.decay, f(lr)[0])
	return nil
}

// wngradShape: param and grad have one shape; the outputs are like param,
// seq_b, seq_b and grad.
func wngradShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	out, err := operators.SameShapes([]int{0, 2}, 0, 1, 1, 2)(b, in)
	if err != nil {
		return nil, err
	}
	return out[:b.NumOutputs()], nil
}

type wngradOp struct {
	*operators.Base
	eps float32
	in  [4]*blob.Tensor
}

func (o *wngradOp) Run() error {
	if err := float32Inputs(o.Base, o.in[:], 0, 1, 2, 3); err != nil {
		return err
	}
	defer clear(o.in[:])
	p, b, g, lr := o.in[0], o.in[1], o.in[2], o.in[3]
	if err := sameSize(o.Base, g, 2, p, 0); err != nil {
		return err
	}
	if err := scalarInput(o.Base, b, 1); err != nil {
		return err
	}
	if err := scalarInput(o.Base, lr, 3); err != nil {
		return err
	}
	f := blob.Data[float32]
	seqB := f(b)[0]
	var sum float32
	for _, v := range f(g) {
		sum += v * v
	}
	eff := f(lr)[0] / (seqB + o.eps)
	np, err := resizeLike(o.Base, 0, p, false)
	if err != nil {
		return err
	}
	nb, err := resizeLike(o.Base, 1, b, false)
	if err != nil {
		return err
	}
	var upd []float32
	if o.NumOutputs() > 2 {
		e, err := resizeLike(o.Base, 2, b, false)
		if err != nil {
			return err
		}
		f(e)[0] = eff
	}
	if o.NumOutputs() > 3 {
		u, err := resizeLike(o.Base, 3, g, false)
		if err != nil {
			return err
		}
		upd = f(u)
	}
	w, nw := f(p), f(np)
	for i, gi := range f(g) {
		u := eff * gi
		if upd != nil {
			upd[i] = u
		}
		nw[i] = w[i] + u
	}
	f(nb)[0] = seqB + sum/(seqB+o.eps)
	return nil
}

type ftrlOp struct {
	*operators.Base
	alpha, beta, lambda1, lambda2 float32
	in                            [3]*blob.Tensor
}

func (o *ftrlOp) Run() error {
	if err := float32Inputs(o.Base, o.in[:], 0, 1, 2); err != nil {
		return err
	}
	defer clear(o.in[:])
	w, nz, g := o.in[0], o.in[1], o.in[2]
	alpha := o.alpha
	if o.NumInputs() > 3 {
		a, err := o.InputOf(3, blob.Float32)
		if err != nil {
			return err
		}
		if err := scalarInput(o.Base, a, 3); err != nil {
			return err
		}
		alpha = blob.Data[float32](a)[0]
	}
	if err := sameSize(o.Base, g, 2, w, 0); err != nil {
		return err
	}
	if nz.Size() != 2*w.Size() {
		return o.Errorf("input 1 (%q) has shape %v, want %d elements (n and z for each of the %d of %q)", o.InputName(1), nz.Dims(), 2*w.Size(), w.Size(), o.InputName(0))
	}
	nw, err := resizeLike(o.Base, 0, w, false)
	if err != nil {
		return err
	}
	nnz, err := resizeLike(o.Base, 1, nz, false)
	if err != nil {
		return err
	}
	f := blob.Data[float32]
	ftrl(f(w), f(nz), f(g), f(nw), f(nnz), 1/alpha, o.beta, o.lambda1, o.lambda2)
	return nil
}

// ftrl is Caffe2's ftrl_update; the outputs may be the inputs.
func ftrl(w, nz, g, nw, nnz []float32, alphaInv, beta, lambda1, lambda2 float32) {
	g = g[:len(w)]
	for i, gi := range g {
		n, z := nz[2*i], nz[2*i+1]
		n2 := n + gi*gi
		sigma := (sqrt32(n2) - sqrt32(n)) * alphaInv
		z2 := z + gi - sigma*w[i]
		nnz[2*i], nnz[2*i+1] = n2, z2
		if abs32(z2) > lambda1 {
			nw[i] = (lambda1*sign32(z2) - z2) / ((beta+sqrt32(n2))*alphaInv + lambda2)
		} else {
			nw[i] = 0
		}
	}
}

func abs32(x float32) float32 { return float32(math.Abs(float64(x))) }

func sign32(x float32) float32 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

type lrAdaptionOp struct {
	*operators.Base
	alpha      float32
	normalized bool
	in         [3]*blob.Tensor
}

func (o *lrAdaptionOp) Run() error {
	if err := float32Inputs(o.Base, o.in[:], 0, 1, 2); err != nil {
		return err
	}
	defer clear(o.in[:])
	lr, g, e := o.in[0], o.in[1], o.in[2]
	if err := scalarInput(o.Base, lr, 0); err != nil {
		return err
	}
	if err := sameSize(o.Base, e, 2, g, 1); err != nil {
		return err
	}
	f := blob.Data[float32]
	var x, y, z float32
	ev := f(e)
	for i, gi := range f(g) {
		x += gi * ev[i]
		y += gi * gi
		z += ev[i] * ev[i]
	}
	l := f(lr)[0]
	out, err := resizeLike(o.Base, 0, lr, false)
	if err != nil {
		return err
	}
	if o.normalized {
		const eps = 1e-12
		y, z = max(sqrt32(y), eps), max(sqrt32(z), eps)
		f(out)[0] = l * (1 - o.alpha*x/(y*z))
	} else {
		f(out)[0] = l - o.alpha*x
	}
	return nil
}
