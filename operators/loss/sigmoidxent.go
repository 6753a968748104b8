package loss

import (
	"math"
	"slices"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	args := []operators.ArgSpec{
		{Name: "log_D_trick", Default: false, Doc: "use the log-D trick: the loss of the target 1 is −log σ(x), of 0 it is log σ(x) (GAN generators)"},
		{Name: "unjoined_lr_loss", Default: false, Doc: "the unjoined logistic-regression loss: a negative example counts −log(1 − σ(x)), a positive one x·t"},
	}
	operators.MustRegisterCPU(operators.Schema{
		Type: "SigmoidCrossEntropyWithLogits", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1, Args: args,
		Doc: "SigmoidCrossEntropyWithLogits(logits, targets) → xentropy: the mean over the last dimension of the sigmoid cross entropy " +
			"−(t·log σ(x) + (1 − t)·log(1 − σ(x))), computed stably from the logits; xentropy has the logits' shape without its last dimension. FLOAT.",
	}, func(b *operators.Base) (operators.Operator, error) { return newSigmoidXent(b, false, false) })
	operators.MustRegisterCPU(operators.Schema{
		Type: "SigmoidCrossEntropyWithLogitsGradient", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1, Args: args,
		Doc: "SigmoidCrossEntropyWithLogitsGradient(dxentropy, logits, targets) → dlogits = −dxentropy/D·(t − σ(x)) (D the last dimension).",
	}, func(b *operators.Base) (operators.Operator, error) { return newSigmoidXent(b, false, true) })
	operators.MustRegisterCPU(operators.Schema{
		Type: "WeightedSigmoidCrossEntropyWithLogits", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Doc: "WeightedSigmoidCrossEntropyWithLogits(logits, targets, weights) → xentropy: SigmoidCrossEntropyWithLogits with each element's loss " +
			"multiplied by its weight (weights of the logits' shape). FLOAT.",
	}, func(b *operators.Base) (operators.Operator, error) { return newSigmoidXent(b, true, false) })
	operators.MustRegisterCPU(operators.Schema{
		Type: "WeightedSigmoidCrossEntropyWithLogitsGradient", MinInputs: 4, MaxInputs: 4, MinOutputs: 1, MaxOutputs: 1,
		Doc: "WeightedSigmoidCrossEntropyWithLogitsGradient(dxentropy, logits, targets, weights) → dlogits = −dxentropy/D·(t − σ(x))·w.",
	}, func(b *operators.Base) (operators.Operator, error) { return newSigmoidXent(b, true, true) })

	operators.MustRegisterGradient("SigmoidCrossEntropyWithLogits", func(g *operators.GradientContext) error {
		g.Op("SigmoidCrossEntropyWithLogitsGradient", []string{g.GO(0), g.I(0), g.I(1)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterGradient("WeightedSigmoidCrossEntropyWithLogits", func(g *operators.GradientContext) error {
		g.Op("WeightedSigmoidCrossEntropyWithLogitsGradient", []string{g.GO(0), g.I(0), g.I(1), g.I(2)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterShapeFunc("SigmoidCrossEntropyWithLogits", sigmoidXentShape, "WeightedSigmoidCrossEntropyWithLogits")
	operators.MustRegisterShapeFunc("SigmoidCrossEntropyWithLogitsGradient", operators.SameShapes([]int{1, 2}, 1))
	operators.MustRegisterShapeFunc("WeightedSigmoidCrossEntropyWithLogitsGradient", operators.SameShapes([]int{1, 2, 3}, 1))
}

// sigmoidXentShape: the logits, targets (and weights) have one shape; the
// loss drops its last dimension.
func sigmoidXentShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	same := []int{0, 1, 2}[:len(in)]
	if _, err := operators.SameShapes(same)(b, in); err != nil {
		return nil, err
	}
	x := in[0]
	if x.Unknown {
		return []operators.TensorShape{{Type: blob.Float32, Unknown: true}}, nil
	}
	dims := x.Dims
	if len(dims) > 0 {
		dims = dims[:len(dims)-1]
	}
	return []operators.TensorShape{operators.Shape(blob.Float32, slices.Clone(dims)...)}, nil
}

// sigmoidXent is (Weighted)SigmoidCrossEntropyWithLogits and its gradient.
type sigmoidXent struct {
	*operators.Base
	weighted, grad bool
	logD, unjoined bool
	ins            [3]*blob.Tensor // the logits, targets and weights of a run
}

func newSigmoidXent(b *operators.Base, weighted, grad bool) (operators.Operator, error) {
	o := &sigmoidXent{Base: b, weighted: weighted, grad: grad}
	if !weighted {
		o.logD = b.ArgBool("log_D_trick", false)
		o.unjoined = b.ArgBool("unjoined_lr_loss", false)
		if o.logD && o.unjoined {
			return nil, b.Errorf("log_D_trick and unjoined_lr_loss cannot both be set")
		}
	}
	return o, nil
}

// partition is log(1 + exp(x)), computed without overflow.
func partition(x float64) float64 {
	if x >= 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

// term is the element's contribution to the negated loss (Caffe2's
// sigmoid_xent_forward and its variants).
func (o *sigmoidXent) term(x, t float64) float64 {
	switch {
	case o.unjoined:
		// x·t + (t − 1)·x·[x ≥ 0] − (1 − t)·log(1 + exp(−|x|))
		pos := 0.0
		if x >= 0 {
			pos = x
		}
		return x*t + (t-1)*pos - (1-t)*math.Log1p(math.Exp(-math.Abs(x)))
	case o.logD:
		return (2*t - 1) * (x - partition(x))
	}
	return t*x - partition(x)
}

// slope is the derivative of term with respect to x.
func (o *sigmoidXent) slope(x, t float64) float64 {
	switch {
	case o.unjoined:
		return t - (1-t)/(1+math.Exp(-x))
	case o.logD:
		return (2*t - 1) / (1 + math.Exp(x))
	}
	return t - 1/(1+math.Exp(-x))
}

func (o *sigmoidXent) Run() error {
	first := 0
	if o.grad {
		first = 1
	}
	n := 2
	if o.weighted {
		n = 3
	}
	ins := o.ins[:n]
	defer clear(ins)
	for i := range ins {
		t, err := o.InputOf(first+i, blob.Float32)
		if err != nil {
			return err
		}
		if i > 0 && !slices.Equal(t.Dims(), ins[0].Dims()) {
			return o.Errorf("input %d (%q) has shape %v, the logits (%q) %v: they must have one shape", first+i, o.InputName(first+i), t.Dims(), o.InputName(first), ins[0].Dims())
		}
		ins[i] = t
	}
	logits := ins[0]
	inner := 1
	var outer []int
	if logits.NumDims() > 0 {
		inner = logits.Dim(logits.NumDims() - 1)
		outer = logits.Dims()[:logits.NumDims()-1]
	}
	if inner == 0 {
		return o.Errorf("the logits (%q) have shape %v: the last dimension, which the loss averages over, is 0", o.InputName(first), logits.Dims())
	}
	rows := logits.Size() / inner
	x, t := blob.Data[float32](logits), blob.Data[float32](ins[1])
	var w []float32
	if o.weighted {
		w = blob.Data[float32](ins[2])
	}
	weight := func(k int) float64 {
		if w == nil {
			return 1
		}
		return float64(w[k])
	}
	if !o.grad {
		y := o.Output(0)
		if err := y.Init(blob.Float32, outer...); err != nil {
			return err
		}
		out := blob.Data[float32](y)
		for r := range rows {
			var sum float64
			for k := r * inner; k < (r+1)*inner; k++ {
				sum += o.term(float64(x[k]), float64(t[k])) * weight(k)
			}
			out[r] = float32(-sum / float64(inner))
		}
		return nil
	}
	g, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	if g.Size() != rows {
		return o.Errorf("the loss gradient (%q) has shape %v, want %d elements, one per row of the logits %v", o.InputName(0), g.Dims(), rows, logits.Dims())
	}
	dx := o.Output(0)
	if err := dx.Init(blob.Float32, logits.Dims()...); err != nil {
		return err
	}
	gd, out := blob.Data[float32](g), blob.Data[float32](dx)
	for r := range rows {
		f := -float64(gd[r]) / float64(inner)
		for k := r * inner; k < (r+1)*inner; k++ {
			out[k] = float32(f * o.slope(float64(x[k]), float64(t[k])) * weight(k))
		}
	}
	return nil
}
