package optim

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	momentumArgs := []operators.ArgSpec{
		{Name: "momentum", Default: 0.0, Doc: "momentum coefficient"},
		{Name: "nesterov", Default: 0, Doc: "1 for Nesterov accelerated gradient"},
	}
	operators.MustRegisterCPU(operators.Schema{
		Type:      "MomentumSGD",
		MinInputs: 3, MaxInputs: 3, MinOutputs: 2, MaxOutputs: 2,
		AllowInplace: operators.InplacePairs([2]int{0, 0}, [2]int{1, 1}),
		Args:         momentumArgs,
		Doc: "(grad, moment, lr) → (adjusted grad, moment). Plain: a = lr·grad + momentum·moment, " +
			"returns (a, a). Nesterov: m' = momentum·moment + lr·grad, returns ((1+momentum)·m' − momentum·moment, m').",
	}, newMomentumSGD(false))
	operators.MustRegisterGradientForbidden("MomentumSGD")

	operators.MustRegisterCPU(operators.Schema{
		Type:      "MomentumSGDUpdate",
		MinInputs: 4, MaxInputs: 4, MinOutputs: 3, MaxOutputs: 3,
		AllowInplace: operators.InplacePairs([2]int{0, 0}, [2]int{1, 1}, [2]int{3, 2}),
		Args:         momentumArgs,
		Doc:          "(grad, moment, lr, param) → (adjusted grad, moment, param): MomentumSGD, then param −= adjusted grad.",
	}, newMomentumSGD(true))
	operators.MustRegisterGradientForbidden("MomentumSGDUpdate")

	operators.MustRegisterCPU(operators.Schema{
		Type:      "Adam",
		MinInputs: 6, MaxInputs: 6, MinOutputs: 3, MaxOutputs: 4,
		CPUInputs:    []int{5}, // the iteration counter
		AllowInplace: operators.InplacePairs([2]int{0, 0}, [2]int{1, 1}, [2]int{2, 2}),
		Args: []operators.ArgSpec{
			{Name: "beta1", Default: 0.9},
			{Name: "beta2", Default: 0.999},
			{Name: "epsilon", Default: 1e-5},
		},
		Doc: "(param, moment_1, moment_2, grad, lr, iter) → (param, moment_1, moment_2[, effective grad]); " +
			"t = iter+1, m1 = β1·m1 + (1−β1)·g, m2 = β2·m2 + (1−β2)·g², " +
			"param += lr·√(1−β2ᵗ)/(1−β1ᵗ)·m1/(√m2 + ε). iter is an int64 CPU tensor.",
	}, newAdam)
	operators.MustRegisterGradientForbidden("Adam")

	operators.MustRegisterCPU(operators.Schema{
		Type:      "Adagrad",
		MinInputs: 4, MaxInputs: 4, MinOutputs: 2, MaxOutputs: 4,
		AllowInplace: operators.InplacePairs([2]int{0, 0}, [2]int{1, 1}),
		Args: []operators.ArgSpec{
			{Name: "epsilon", Default: 1e-5},
			{Name: "decay", Default: 1.0, Doc: "the squared-gradient sum is multiplied by it before each update"},
		},
		Doc: "(param, moment, grad, lr) → (param, moment[, effective_lr[, update]]); " +
			"moment = decay·moment + g², effective_lr = lr/(√moment + ε), param += effective_lr·g.",
	}, newAdagrad)
	operators.MustRegisterGradientForbidden("Adagrad")
}

// floatInputs checks that the inputs idx all have the element type of the
// first, float32 or float64, stores them in dst and returns that type.
func floatInputs(o *operators.Base, dst []*blob.Tensor, idx ...int) (blob.DataType, error) {
	first, err := o.FloatInput(idx[0])
	if err != nil {
		return 0, err
	}
	dt := first.DataType()
	for k, i := range idx {
		t, err := o.InputOf(i, dt)
		if err != nil {
			return 0, err
		}
		dst[k] = t
	}
	return dt, nil
}

// sameSize checks that t, input i, has as many elements as ref, input
// refIdx.
func sameSize(o *operators.Base, t *blob.Tensor, i int, ref *blob.Tensor, refIdx int) error {
	if t.Size() != ref.Size() {
		return o.Errorf("input %d (%q) has shape %v, but input %d (%q) has shape %v: their sizes must match",
			i, o.InputName(i), t.Dims(), refIdx, o.InputName(refIdx), ref.Dims())
	}
	return nil
}

// scalarInput checks that t, input i, holds exactly one element.
func scalarInput(o *operators.Base, t *blob.Tensor, i int) error {
	if t.Size() != 1 {
		return o.Errorf("input %d (%q) must hold one element, has shape %v", i, o.InputName(i), t.Dims())
	}
	return nil
}

// resizeLike gives output i the type and shape of t and returns it; with
// copyData it also copies t's elements when the output is another tensor.
func resizeLike(o *operators.Base, i int, t *blob.Tensor, copyData bool) (*blob.Tensor, error) {
	y := o.Output(i)
	if y == t {
		return y, nil
	}
	if copyData {
		return y, y.CopyFrom(t)
	}
	return y, y.Init(t.DataType(), t.Dims()...)
}

type momentumSGDOp struct {
	*operators.Base
	update   bool
	momentum float32
	nesterov bool
	in       [4]*blob.Tensor
}

func newMomentumSGD(update bool) operators.Factory {
	return func(b *operators.Base) (operators.Operator, error) {
		return &momentumSGDOp{
			Base:     b,
			update:   update,
			momentum: b.ArgFloat("momentum", 0),
			nesterov: b.ArgInt("nesterov", 0) != 0,
		}, nil
	}
}

func (o *momentumSGDOp) Run() error {
	in := o.in[:3]
	idx := [4]int{0, 1, 2, 3}
	if o.update {
		in = o.in[:4]
	}
	dt, err := floatInputs(o.Base, in, idx[:len(in)]...)
	if err != nil {
		return err
	}
	g, m, lr := in[0], in[1], in[2]
	if err := scalarInput(o.Base, lr, 2); err != nil {
		return err
	}
	if err := sameSize(o.Base, m, 1, g, 0); err != nil {
		return err
	}
	var p *blob.Tensor
	if o.update {
		if err := sameSize(o.Base, in[3], 3, g, 0); err != nil {
			return err
		}
		if p, err = resizeLike(o.Base, 2, in[3], true); err != nil {
			return err
		}
	}
	ng, err := resizeLike(o.Base, 0, g, false)
	if err != nil {
		return err
	}
	nm, err := resizeLike(o.Base, 1, m, false)
	if err != nil {
		return err
	}
	if dt == blob.Float32 {
		momentumSGD(blob.Data[float32](g), blob.Data[float32](m), blob.Data[float32](ng), blob.Data[float32](nm),
			paramData[float32](p), blob.Data[float32](lr)[0], o.momentum, o.nesterov)
	} else {
		momentumSGD(blob.Data[float64](g), blob.Data[float64](m), blob.Data[float64](ng), blob.Data[float64](nm),
			paramData[float64](p), blob.Data[float64](lr)[0], float64(o.momentum), o.nesterov)
	}
	return nil
}

// paramData returns p's elements, or nil when there is no parameter.
func paramData[T blob.Float](p *blob.Tensor) []T {
	if p == nil {
		return nil
	}
	return blob.Data[T](p)
}

// momentumSGD computes the momentum step for gradient g and momentum m into
// ng and nm (which may alias g and m) and, when param is not nil, subtracts
// the step from param.
func momentumSGD[T blob.Float](g, m, ng, nm, param []T, lr, momentum T, nesterov bool) {
	m, ng, nm = m[:len(g)], ng[:len(g)], nm[:len(g)]
	for i, gi := range g {
		var a T
		if nesterov {
			mi := m[i]
			mn := momentum*mi + lr*gi
			nm[i] = mn
			a = (1+momentum)*mn - momentum*mi
		} else {
			a = lr*gi + momentum*m[i]
			nm[i] = a
		}
		ng[i] = a
		if param != nil {
			param[i] -= a
		}
	}
}

type adamOp struct {
	*operators.Base
	beta1, beta2, epsilon float32
	in                    [5]*blob.Tensor
}

func newAdam(b *operators.Base) (operators.Operator, error) {
	return &adamOp{
		Base:    b,
		beta1:   b.ArgFloat("beta1", 0.9),
		beta2:   b.ArgFloat("beta2", 0.999),
		epsilon: b.ArgFloat("epsilon", 1e-5),
	}, nil
}

func (o *adamOp) Run() error {
	dt, err := floatInputs(o.Base, o.in[:], 0, 1, 2, 3, 4)
	if err != nil {
		return err
	}
	p, m1, m2, g, lr := o.in[0], o.in[1], o.in[2], o.in[3], o.in[4]
	if err := scalarInput(o.Base, lr, 4); err != nil {
		return err
	}
	for i, t := range []*blob.Tensor{p, m1, m2} {
		if err := sameSize(o.Base, t, i, g, 3); err != nil {
			return err
		}
	}
	it, err := o.InputOf(5, blob.Int64)
	if err != nil {
		return err
	}
	if it.Size() < 1 {
		return o.Errorf("iteration input %q is empty", o.InputName(5))
	}
	if dev := it.Device(); dev != nil {
		return o.Errorf("iteration input %q must live on the CPU", o.InputName(5))
	}
	t := float64(blob.Data[int64](it)[0] + 1)
	corr := math.Sqrt(1-math.Pow(float64(o.beta2), t)) / (1 - math.Pow(float64(o.beta1), t))

	np, err := resizeLike(o.Base, 0, p, false)
	if err != nil {
		return err
	}
	nm1, err := resizeLike(o.Base, 1, m1, false)
	if err != nil {
		return err
	}
	nm2, err := resizeLike(o.Base, 2, m2, false)
	if err != nil {
		return err
	}
	var ng *blob.Tensor
	if o.NumOutputs() > 3 {
		if ng, err = resizeLike(o.Base, 3, g, false); err != nil {
			return err
		}
	}
	if dt == blob.Float32 {
		adam(blob.Data[float32](p), blob.Data[float32](g), blob.Data[float32](m1), blob.Data[float32](m2),
			blob.Data[float32](np), blob.Data[float32](nm1), blob.Data[float32](nm2), paramData[float32](ng),
			o.beta1, o.beta2, o.epsilon, float32(corr), blob.Data[float32](lr)[0])
	} else {
		adam(blob.Data[float64](p), blob.Data[float64](g), blob.Data[float64](m1), blob.Data[float64](m2),
			blob.Data[float64](np), blob.Data[float64](nm1), blob.Data[float64](nm2), paramData[float64](ng),
			float64(o.beta1), float64(o.beta2), float64(o.epsilon), corr, blob.Data[float64](lr)[0])
	}
	return nil
}

// adam computes one Adam step from param w, gradient g and moments m, v into
// nw, nm, nv (which may alias w, m, v) and, when ng is not nil, stores the
// effective gradient corr·m/(√v + ε) in it.
func adam[T blob.Float](w, g, m, v, nw, nm, nv, ng []T, beta1, beta2, eps, corr, lr T) {
	w, m, v, nw, nm, nv = w[:len(g)], m[:len(g)], v[:len(g)], nw[:len(g)], nm[:len(g)], nv[:len(g)]
	for i, gi := range g {
		mi := m[i]*beta1 + gi*(1-beta1)
		vi := v[i]*beta2 + gi*gi*(1-beta2)
		nm[i], nv[i] = mi, vi
		if ng == nil {
			nw[i] = w[i] + lr*corr*mi/(T(math.Sqrt(float64(vi)))+eps)
		} else {
			e := corr * mi / (T(math.Sqrt(float64(vi))) + eps)
			ng[i] = e
			nw[i] = w[i] + lr*e
		}
	}
}

type adagradOp struct {
	*operators.Base
	epsilon, decay float32
	in             [4]*blob.Tensor
}

func newAdagrad(b *operators.Base) (operators.Operator, error) {
	return &adagradOp{Base: b, epsilon: b.ArgFloat("epsilon", 1e-5), decay: b.ArgFloat("decay", 1)}, nil
}

func (o *adagradOp) Run() error {
	dt, err := floatInputs(o.Base, o.in[:], 0, 1, 2, 3)
	if err != nil {
		return err
	}
	p, h, g, lr := o.in[0], o.in[1], o.in[2], o.in[3]
	if err := scalarInput(o.Base, lr, 3); err != nil {
		return err
	}
	if err := sameSize(o.Base, h, 1, g, 2); err != nil {
		return err
	}
	if err := sameSize(o.Base, p, 0, g, 2); err != nil {
		return err
	}
	np, err := resizeLike(o.Base, 0, p, false)
	if err != nil {
		return err
	}
	nh, err := resizeLike(o.Base, 1, h, false)
	if err != nil {
		return err
	}
	var elr, upd *blob.Tensor
	if o.NumOutputs() > 2 {
		if elr, err = resizeLike(o.Base, 2, g, false); err != nil {
			return err
		}
	}
	if o.NumOutputs() > 3 {
		if upd, err = resizeLike(o.Base, 3, g, false); err != nil {
			return err
		}
	}
	if dt == blob.Float32 {
		adagrad(blob.Data[float32](p), blob.Data[float32](g), blob.Data[float32](h),
			blob.Data[float32](np), blob.Data[float32](nh), paramData[float32](elr), paramData[float32](upd),
			o.epsilon, o.decay, blob.Data[float32](lr)[0])
	} else {
		adagrad(blob.Data[float64](p), blob.Data[float64](g), blob.Data[float64](h),
			blob.Data[float64](np), blob.Data[float64](nh), paramData[float64](elr), paramData[float64](upd),
			float64(o.epsilon), float64(o.decay), blob.Data[float64](lr)[0])
	}
	return nil
}

// adagrad computes one Adagrad step from param w, gradient g and squared
// sum h into nw, nh (which may alias w, h); elr and upd, when not nil,
// receive the effective learning rate and the update.
func adagrad[T blob.Float](w, g, h, nw, nh, elr, upd []T, eps, decay, lr T) {
	w, h, nw, nh = w[:len(g)], h[:len(g)], nw[:len(g)], nh[:len(g)]
	for i, gi := range g {
		hi := decay*h[i] + gi*gi
		nh[i] = hi
		if elr == nil {
			nw[i] = w[i] + lr*gi/(T(math.Sqrt(float64(hi)))+eps)
			continue
		}
		e := lr / (T(math.Sqrt(float64(hi))) + eps)
		elr[i] = e
		u := e * gi
		if upd != nil {
			upd[i] = u
		}
		nw[i] = w[i] + u
	}
}
