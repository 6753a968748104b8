package loss

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	args := []operators.ArgSpec{
		{Name: "scale", Default: 1.0, Doc: "factor applied to the averaged loss (≥ 0)"},
		{Name: "label_prob", Default: int64(0), Doc: "1: labels are probability rows of the logits' shape"},
		{Name: "axis", Default: int64(1), Doc: "logits are flattened to [N, D] at this axis"},
		{Name: "order", Default: "NCHW", Doc: "only NCHW is supported"},
	}
	operators.MustRegisterCPU(operators.Schema{Type: "SoftmaxWithLoss", MinInputs: 2, MaxInputs: 3, MinOutputs: 2, MaxOutputs: 2, Args: args,
		Doc: "SoftmaxWithLoss(logits, labels[, weight]) → (softmax, loss): softmax over D of the logits flattened to [N, D]; " +
			"loss = scale·Σᵢ wᵢ·(-log pᵢ[labelᵢ])/Σᵢ wᵢ, a 0-d scalar (0 when Σ wᵢ = 0). Labels are int32 [N] or [N, 1], or probabilities with label_prob=1."},
		newSoftmaxWithLoss)
	operators.MustRegisterCPU(operators.Schema{Type: "SoftmaxWithLossGradient", MinInputs: 4, MaxInputs: 5, MinOutputs: 1, MaxOutputs: 1,
		Args: append(args, operators.ArgSpec{Name: "only_loss", Default: int64(0), Doc: "accepted and ignored on CPU, as in Caffe2"}),
		Doc:  "SoftmaxWithLossGradient(logits, labels[, weight], softmax, loss_grad) → logits_grad."},
		newSoftmaxWithLossGradient)
	operators.MustRegisterGradient("SoftmaxWithLoss", softmaxLossGradient("SoftmaxWithLossGradient"))
}

// softmaxLossGradient is the gradient maker of SoftmaxWithLoss and
// SpatialSoftmaxWithLoss: typ(logits, labels[, weights], softmax,
// loss_grad) → logits_grad.
func softmaxLossGradient(typ string) operators.GradientMaker {
	return func(g *operators.GradientContext) error {
		in := []string{g.I(0), g.I(1), g.O(0), g.GO(1)}
		if g.NumInputs() == 3 {
			in = []string{g.I(0), g.I(1), g.I(2), g.O(0), g.GO(1)}
		}
		g.Op(typ, in, []string{g.GI(0)})
		return nil
	}
}

// softmaxLoss holds what SoftmaxWithLoss and its gradient share: their
// arguments and the checks of logits, labels and weights.
type softmaxLoss struct {
	*operators.Base
	scale     float64
	labelProb bool
	axis      int
}

func newSoftmaxLoss(b *operators.Base) (softmaxLoss, error) {
	scale, err := softmaxLossScale(b)
	return softmaxLoss{Base: b, scale: scale, labelProb: b.ArgBool("label_prob", false), axis: int(b.ArgInt("axis", 1))}, err
}

// softmaxLossScale reads the arguments SoftmaxWithLoss,
// SpatialSoftmaxWithLoss and their gradients share: scale, which must be
// non-negative, and order, which must be NCHW.
func softmaxLossScale(b *operators.Base) (float64, error) {
	scale := float64(b.ArgFloat("scale", 1))
	if !(scale >= 0) {
		return scale, b.Errorf("scale must be non-negative, got %v", scale)
	}
	if order := b.ArgString("order", "NCHW"); order != "NCHW" {
		return scale, b.Errorf("only NCHW order is supported, got %q", order)
	}
	return scale, nil
}

// softmaxOutputs initializes the outputs of a softmax loss over logits x:
// the softmax (output 0) of x's shape and the loss (output 1), a 0-d
// scalar, both of x's type.
func softmaxOutputs(b *operators.Base, x *blob.Tensor) (p, loss *blob.Tensor, err error) {
	if p, err = initOutput(b, 0, x.DataType(), x.Dims()...); err != nil {
		return nil, nil, err
	}
	if loss, err = initOutput(b, 1, x.DataType()); err != nil {
		return nil, nil, err
	}
	return p, loss, nil
}

// setMeanLoss stores scale·sum/weightSum, or 0 when weightSum is 0, in
// loss, a FLOAT or DOUBLE scalar.
func setMeanLoss(loss *blob.Tensor, scale, sum, weightSum float64) {
	var l float64
	if weightSum != 0 {
		l = scale * sum / weightSum
	}
	if loss.DataType() == blob.Float32 {
		blob.Data[float32](loss)[0] = float32(l)
	} else {
		blob.Data[float64](loss)[0] = l
	}
}

// softmaxGradInputs reads what the gradients of the softmax losses take
// after the logits x, labels and weights: the softmax (the input before
// last), of x's type and size, and the loss gradient (the last input), a
// scalar; and it initializes dX (output 0) like x.
func softmaxGradInputs(b *operators.Base, x *blob.Tensor) (p, dx *blob.Tensor, dloss float64, err error) {
	dtype := x.DataType()
	pIdx := b.NumInputs() - 2
	if p, err = b.InputOf(pIdx, dtype); err != nil {
		return nil, nil, 0, err
	}
	if p.Size() != x.Size() {
		return nil, nil, 0, b.Errorf("softmax %q has shape %v, want the logits' shape %v", b.InputName(pIdx), p.Dims(), x.Dims())
	}
	if dloss, err = scalarGradient(b, pIdx+1, dtype); err != nil {
		return nil, nil, 0, err
	}
	if dx, err = initOutput(b, 0, dtype, x.Dims()...); err != nil {
		return nil, nil, 0, err
	}
	return p, dx, dloss, nil
}

func newSoftmaxWithLoss(b *operators.Base) (operators.Operator, error) {
	o, err := newSoftmaxLoss(b)
	return &softmaxWithLoss{o}, err
}

func newSoftmaxWithLossGradient(b *operators.Base) (operators.Operator, error) {
	o, err := newSoftmaxLoss(b)
	return &softmaxWithLossGradient{o}, err
}

// softmaxInputs are the checked inputs of either operator.
type softmaxInputs struct {
	x       *blob.Tensor
	n, d    int
	labels  []int32      // class labels (label_prob = 0)
	probs   *blob.Tensor // label probabilities (label_prob = 1)
	weights *blob.Tensor // nil when there is no weight input
}

// inputs checks the logits (input 0), the labels (input 1) and, when
// weightInput is true, the weights (input 2).
func (o *softmaxLoss) inputs(weightInput bool) (in softmaxInputs, err error) {
	if in.x, err = o.FloatInput(0); err != nil {
		return in, err
	}
	x := in.x
	axis := o.axis
	if axis < 0 {
		axis += x.NumDims()
	}
	if axis < 0 || axis >= x.NumDims() {
		return in, o.Errorf("axis %d is out of range for logits %q of shape %v", o.axis, o.InputName(0), x.Dims())
	}
	in.n, in.d = x.SizeToDim(axis), x.SizeFromDim(axis)
	t, err := o.Input(1)
	if err != nil {
		return in, err
	}
	if o.labelProb {
		if t.NumDims() < 2 || t.NumDims() < axis || t.SizeToDim(axis) != in.n || t.SizeFromDim(axis) != in.d {
			return in, o.Errorf("label probabilities %q have shape %v, want %d rows of %d for logits of shape %v (axis %d)", o.InputName(1), t.Dims(), in.n, in.d, x.Dims(), axis)
		}
		if in.probs, err = o.InputOf(1, x.DataType()); err != nil {
			return in, err
		}
		if err := o.checkProbabilities(in); err != nil {
			return in, err
		}
	} else {
		ok := t.NumDims() == axis && t.Size() == in.n ||
			t.NumDims() > axis && t.SizeToDim(axis) == in.n && t.SizeFromDim(axis) == 1
		if !ok {
			return in, o.Errorf("labels %q have shape %v, want %d labels for logits of shape %v (axis %d)", o.InputName(1), t.Dims(), in.n, x.Dims(), axis)
		}
		if in.labels, err = classLabels(o.Base, 1, in.d); err != nil {
			return in, err
		}
	}
	if weightInput {
		if in.weights, err = o.InputOf(2, x.DataType()); err != nil {
			return in, err
		}
		if in.weights.Size() != in.n {
			return in, o.Errorf("weights %q have shape %v, want %d elements", o.InputName(2), in.weights.Dims(), in.n)
		}
	}
	return in, nil
}

// checkProbabilities requires every label probability to be non-negative
// and every row to sum to 1 (±1e-5).
func (o *softmaxLoss) checkProbabilities(in softmaxInputs) error {
	var row, col int
	var v float64
	if in.x.DataType() == blob.Float32 {
		row, col, v = badProbabilityRow(blob.Data[float32](in.probs), in.n, in.d)
	} else {
		row, col, v = badProbabilityRow(blob.Data[float64](in.probs), in.n, in.d)
	}
	switch {
	case row < 0:
		return nil
	case col >= 0:
		return o.Errorf("label probability [%d, %d] of %q is %v; label probabilities must be non-negative", row, col, o.InputName(1), v)
	}
	return o.Errorf("label probabilities of row %d of %q sum to %v, not 1.0 (±1e-5)", row, o.InputName(1), v)
}

// badProbabilityRow returns the first of the n rows of p (d elements each)
// with a negative element (row, column, value) or whose sum is not 1 within
// 1e-5 (row, -1, sum); row is -1 when every row is a distribution.
func badProbabilityRow[T blob.Float](p []T, n, d int) (row, col int, v float64) {
	for i := 0; i < n; i++ {
		var sum float64
		for j, q := range p[i*d : (i+1)*d] {
			if !(q >= 0) {
				return i, j, float64(q)
			}
			sum += float64(q)
		}
		if math.Abs(sum-1) >= 1e-5 {
			return i, -1, sum
		}
	}
	return -1, -1, 0
}

type softmaxWithLoss struct{ softmaxLoss }

func (o *softmaxWithLoss) Run() error {
	in, err := o.inputs(o.NumInputs() > 2)
	if err != nil {
		return err
	}
	p, loss, err := softmaxOutputs(o.Base, in.x)
	if err != nil {
		return err
	}
	var sum, weightSum float64
	if in.x.DataType() == blob.Float32 {
		sum, weightSum = softmaxForward(blob.Data[float32](in.x), blob.Data[float32](p), in.labels, floatData[float32](in.probs), floatData[float32](in.weights), in.n, in.d)
	} else {
		sum, weightSum = softmaxForward(blob.Data[float64](in.x), blob.Data[float64](p), in.labels, floatData[float64](in.probs), floatData[float64](in.weights), in.n, in.d)
	}
	setMeanLoss(loss, o.scale, sum, weightSum)
	return nil
}

// floatData returns t's elements, or nil for a nil t.
func floatData[T blob.Float](t *blob.Tensor) []T {
	if t == nil {
		return nil
	}
	return blob.Data[T](t)
}

// softmaxForward writes the softmax of each of the n rows of x (d elements
// each) to p and returns Σᵢ wᵢ·lossᵢ and Σᵢ wᵢ, where lossᵢ is
// -log pᵢ[labelᵢ] with class labels, or -Σⱼ probsᵢⱼ·log max(pᵢⱼ, 1e-20) with
// label probabilities. A nil w weighs every row 1.
func softmaxForward[T blob.Float](x, p []T, labels []int32, probs, w []T, n, d int) (lossSum, weightSum float64) {
	for i := 0; i < n; i++ {
		row, prow := x[i*d:(i+1)*d], p[i*d:(i+1)*d]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, float64(v))
		}
		var sum float64
		for j, v := range row {
			e := math.Exp(float64(v) - mx)
			prow[j] = T(e)
			sum += e
		}
		var l float64
		if labels != nil {
			// -log softmax = log Σ - (x - max), without the rounding of p.
			l = math.Log(sum) - (float64(row[labels[i]]) - mx)
		}
		inv := 1 / sum
		for j := range prow {
			q := float64(prow[j]) * inv
			prow[j] = T(q)
			if labels == nil {
				l -= math.Log(math.Max(q, logThreshold)) * float64(probs[i*d+j])
			}
		}
		wi := 1.0
		if w != nil {
			wi = float64(w[i])
		}
		lossSum += l * wi
		weightSum += wi
	}
	return lossSum, weightSum
}

type softmaxWithLossGradient struct{ softmaxLoss }

func (o *softmaxWithLossGradient) Run() error {
	in, err := o.inputs(o.NumInputs() == 5)
	if err != nil {
		return err
	}
	p, dx, dloss, err := softmaxGradInputs(o.Base, in.x)
	if err != nil {
		return err
	}
	if in.x.DataType() == blob.Float32 {
		softmaxBackward(blob.Data[float32](p), blob.Data[float32](dx), in.labels, floatData[float32](in.probs), floatData[float32](in.weights), in.n, in.d, o.scale*dloss)
	} else {
		softmaxBackward(blob.Data[float64](p), blob.Data[float64](dx), in.labels, floatData[float64](in.probs), floatData[float64](in.weights), in.n, in.d, o.scale*dloss)
	}
	return nil
}

// softmaxBackward sets dx = (p - target)·wᵢ·g/Σw, the gradient of
// g·Σᵢ wᵢ·lossᵢ/Σᵢ wᵢ, where target is the one-hot label or the label
// probabilities. dx is zero when Σ wᵢ = 0, as the loss is then 0.
func softmaxBackward[T blob.Float](p, dx []T, labels []int32, probs, w []T, n, d int, g float64) {
	total := float64(n)
	if w != nil {
		total = 0
		for _, v := range w {
			total += float64(v)
		}
	}
	var factor float64
	if total != 0 {
		factor = g / total
	}
	for i := 0; i < n; i++ {
		c := factor
		if w != nil {
			c *= float64(w[i])
		}
		prow, drow := p[i*d:(i+1)*d], dx[i*d:(i+1)*d]
		if labels != nil {
			for j, q := range prow {
				drow[j] = T(float64(q) * c)
			}
			drow[labels[i]] = T((float64(prow[labels[i]]) - 1) * c)
		} else {
			for j, q := range prow {
				drow[j] = T((float64(q) - float64(probs[i*d+j])) * c)
			}
		}
	}
}
