package loss

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// Criteria of pairs and rankings: CosineEmbeddingCriterion,
// MarginRankingCriterion, PairWiseLoss and BernoulliJSD, with their
// gradient operators. FLOAT, with int32 labels where they take labels.
func init() {
	margin := func(def float32) []operators.ArgSpec {
		return []operators.ArgSpec{{Name: "margin", Default: def}}
	}
	registerCriterion(operators.Schema{
		Type: "CosineEmbeddingCriterion", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1, Args: margin(0),
		Doc: "(S, Y) → loss, elementwise: 1 − S where Y = 1, max(0, S − margin) otherwise; S are cosine similarities, Y int32 labels of S's size.",
	}, operators.Schema{
		Type: "CosineEmbeddingCriterionGradient", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1, Args: margin(0),
		Doc: "(S, Y, dloss) → dS = dloss·(−1 where Y = 1, else [S ≥ margin]).",
	}, func(b *operators.Base, grad bool) operators.Operator {
		return &cosineEmbeddingOp{Base: b, margin: b.ArgFloat("margin", 0), grad: grad}
	}, func(g *operators.GradientContext) []string {
		return []string{g.I(0), g.I(1), g.GO(0)}
	}, operators.SameShapes([]int{0, 1}, 0), operators.SameShapes([]int{0, 1, 2}, 0))

	registerCriterion(operators.Schema{
		Type: "MarginRankingCriterion", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1, Args: margin(1),
		Doc: "(X1, X2, Y) → loss = max(0, −Y·(X1 − X2) + margin) elementwise; Y int32 (±1), all of one size.",
	}, operators.Schema{
		Type: "MarginRankingCriterionGradient", MinInputs: 4, MaxInputs: 4, MinOutputs: 2, MaxOutputs: 2, Args: margin(1),
		Doc: "(X1, X2, Y, dloss) → (dX1, dX2): where −Y·(X1 − X2) + margin ≥ 0, dX1 = −Y·dloss and dX2 = Y·dloss, else 0.",
	}, func(b *operators.Base, grad bool) operators.Operator {
		return &marginRankingOp{Base: b, margin: b.ArgFloat("margin", 1), grad: grad}
	}, func(g *operators.GradientContext) []string {
		return []string{g.I(0), g.I(1), g.I(2), g.GO(0)}
	}, operators.SameShapes([]int{0, 1, 2}, 0), operators.SameShapes([]int{0, 1, 2, 3}, 0, 1))

	registerCriterion(operators.Schema{
		Type: "PairWiseLoss", MinInputs: 2, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Doc: "(X, label[, lengths]) → Y: for each session (lengths, int32, summing to N; one session without it), " +
			"the mean over the pairs of differing labels of log(1 + exp(−(X_hi − X_lo))), X_hi the score of the higher label. " +
			"X and label are [N] or [N, 1]; Y has one element per session.",
	}, operators.Schema{
		Type: "PairWiseLossGradient", MinInputs: 3, MaxInputs: 4, MinOutputs: 1, MaxOutputs: 1,
		Doc: "(X, label, dY[, lengths]) → dX, the gradient of PairWiseLoss.",
	}, func(b *operators.Base, grad bool) operators.Operator {
		return &pairWiseLossOp{Base: b, grad: grad}
	}, func(g *operators.GradientContext) []string {
		in := []string{g.I(0), g.I(1), g.GO(0)}
		if g.NumInputs() == 3 {
			in = append(in, g.I(2))
		}
		return in
	}, pairWiseLossShape, operators.SameShapes([]int{0, 1}, 0))

	registerCriterion(operators.Schema{
		Type: "BernoulliJSD", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Doc: "(X, T) → L [N]: the Jensen-Shannon divergence between Bernoulli(X) and Bernoulli(T), elementwise over " +
			"the N elements of X and T: H((X + T)/2) − (H(X) + H(T))/2, H the binary entropy (0 within 1e-20 of 0 or 1).",
	}, operators.Schema{
		Type: "BernoulliJSDGradient", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Doc: "(dL, X, T) → dX = dL·(logit(X) − logit((X + T)/2))/2, the logits of probabilities clamped to [1e-20, 1 − 1e-20].",
	}, func(b *operators.Base, grad bool) operators.Operator {
		return &bernoulliJSDOp{Base: b, grad: grad}
	}, func(g *operators.GradientContext) []string {
		return []string{g.GO(0), g.I(0), g.I(1)}
	}, bernoulliJSDShape, operators.SameShapes([]int{1, 2}, 1))
}

// registerCriterion registers a criterion and its gradient operator, both
// made by newOp (grad true for the gradient); the gradient maker, which
// runs the gradient operator on gradIn's blobs and gives the gradients of
// the criterion's first inputs, one per output of the gradient operator;
// and the shape functions of both.
func registerCriterion(fwd, grad operators.Schema, newOp func(b *operators.Base, grad bool) operators.Operator,
	gradIn func(g *operators.GradientContext) []string, fwdShape, gradShape operators.ShapeFunc) {
	operators.MustRegisterCPU(fwd, func(b *operators.Base) (operators.Operator, error) { return newOp(b, false), nil })
	operators.MustRegisterCPU(grad, func(b *operators.Base) (operators.Operator, error) { return newOp(b, true), nil })
	operators.MustRegisterGradient(fwd.Type, func(g *operators.GradientContext) error {
		out := make([]string, grad.MaxOutputs)
		for i := range out {
			out[i] = g.GI(i)
		}
		g.Op(grad.Type, gradIn(g), out)
		return nil
	})
	operators.MustRegisterShapeFunc(fwd.Type, fwdShape)
	operators.MustRegisterShapeFunc(grad.Type, gradShape)
}

// float32Sized returns the FLOAT inputs idx, checking that each has n
// elements (n < 0: as many as the first).
func float32Sized(b *operators.Base, dst []*blob.Tensor, n int, idx ...int) error {
	for k, i := range idx {
		t, err := b.InputOf(i, blob.Float32)
		if err != nil {
			return err
		}
		if n < 0 {
			n = t.Size()
		}
		if t.Size() != n {
			return b.Errorf("input %d (%q) has shape %v, want %d elements like input %d (%q)", i, b.InputName(i), t.Dims(), n, idx[0], b.InputName(idx[0]))
		}
		dst[k] = t
	}
	return nil
}

// int32Sized returns input i, which must hold n int32 labels.
func int32Sized(b *operators.Base, i, n int) ([]int32, error) {
	t, err := b.InputOf(i, blob.Int32)
	if err != nil {
		return nil, err
	}
	if t.Size() != n {
		return nil, b.Errorf("input %d (%q) has shape %v, want %d labels", i, b.InputName(i), t.Dims(), n)
	}
	return blob.Data[int32](t), nil
}

type cosineEmbeddingOp struct {
	*operators.Base
	margin float32
	grad   bool
	in     [2]*blob.Tensor
}

func (o *cosineEmbeddingOp) Run() error {
	idx := []int{0}
	if o.grad {
		idx = []int{0, 2}
	}
	if err := float32Sized(o.Base, o.in[:], -1, idx...); err != nil {
		return err
	}
	defer clear(o.in[:])
	s := o.in[0]
	y, err := int32Sized(o.Base, 1, s.Size())
	if err != nil {
		return err
	}
	out, err := initOutput(o.Base, 0, blob.Float32, s.Dims()...)
	if err != nil {
		return err
	}
	sv, ov := blob.Data[float32](s), blob.Data[float32](out)
	if !o.grad {
		for i, v := range sv {
			if y[i] == 1 {
				ov[i] = 1 - v
			} else {
				ov[i] = max(0, v-o.margin)
			}
		}
		return nil
	}
	dv := blob.Data[float32](o.in[1])
	for i, v := range sv {
		switch {
		case y[i] == 1:
			ov[i] = -dv[i]
		case v >= o.margin:
			ov[i] = dv[i]
		default:
			ov[i] = 0
		}
	}
	return nil
}

type marginRankingOp struct {
	*operators.Base
	margin float32
	grad   bool
	in     [3]*blob.Tensor
}

func (o *marginRankingOp) Run() error {
	idx := []int{0, 1}
	if o.grad {
		idx = []int{0, 1, 3}
	}
	if err := float32Sized(o.Base, o.in[:], -1, idx...); err != nil {
		return err
	}
	defer clear(o.in[:])
	x1, x2 := o.in[0], o.in[1]
	y, err := int32Sized(o.Base, 2, x1.Size())
	if err != nil {
		return err
	}
	a, b := blob.Data[float32](x1), blob.Data[float32](x2)
	out, err := initOutput(o.Base, 0, blob.Float32, x1.Dims()...)
	if err != nil {
		return err
	}
	if !o.grad {
		ov := blob.Data[float32](out)
		for i := range ov {
			ov[i] = max(0, -float32(y[i])*(a[i]-b[i])+o.margin)
		}
		return nil
	}
	out2, err := initOutput(o.Base, 1, blob.Float32, x2.Dims()...)
	if err != nil {
		return err
	}
	d, d1, d2 := blob.Data[float32](o.in[2]), blob.Data[float32](out), blob.Data[float32](out2)
	for i := range d1 {
		yi := float32(y[i])
		if -yi*(a[i]-b[i])+o.margin < 0 {
			d1[i], d2[i] = 0, 0
		} else {
			d1[i], d2[i] = -yi*d[i], yi*d[i]
		}
	}
	return nil
}

// pairWiseLossShape: Y has one element per session.
func pairWiseLossShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	if len(in) > 2 {
		if l := in[2]; !l.Unknown {
			if l.Rank() != 1 {
				return nil, b.InputShapeError(in, "the lengths must be 1-D")
			}
			return []operators.TensorShape{operators.Shape(blob.Float32, l.Dim(0))}, nil
		}
		return []operators.TensorShape{operators.Shape(blob.Float32, operators.AnyDim)}, nil
	}
	if x := in[0]; !x.Unknown && x.Rank() > 0 && x.Dim(0) == 0 {
		return []operators.TensorShape{operators.Shape(blob.Float32, 0)}, nil // no items, no session
	}
	return []operators.TensorShape{operators.Shape(blob.Float32, 1)}, nil
}

// maxSessionPairs bounds the pairs of one PairWiseLoss session, whose work
// grows with their count.
const maxSessionPairs = 1 << 32

type pairWiseLossOp struct {
	*operators.Base
	grad bool
	in   [3]*blob.Tensor
	one  [1]int32
	dims [1]int
}

// kMinLogDiff is log(FLT_EPSILON), where Caffe2's logLogit cuts off.
var kMinLogDiff = math.Log(float64(math.Nextafter32(1, 2) - 1))

// logLogit is Caffe2's log(1 + exp(x)) for PairWiseLoss.
func logLogit(x float64) float64 {
	switch {
	case x < kMinLogDiff:
		return 0
	case x > -kMinLogDiff:
		return x
	}
	return math.Log(math.Exp(x) + 1)
}

func (o *pairWiseLossOp) Run() error {
	idx := []int{0, 1}
	if o.grad {
		idx = []int{0, 1, 2}
	}
	for k, i := range idx {
		t, err := o.InputOf(i, blob.Float32)
		if err != nil {
			return err
		}
		o.in[k] = t
	}
	defer clear(o.in[:])
	x, label := o.in[0], o.in[1]
	n := 0
	if x.NumDims() > 0 {
		n = x.Dim(0)
	}
	if x.Size() != n {
		return o.Errorf("X (%q) has shape %v: it must be [N] or [N, 1] (one score per item)", o.InputName(0), x.Dims())
	}
	if !(label.NumDims() == 1 || label.NumDims() == 2 && label.Dim(1) == 1) || label.Dim(0) != n {
		return o.Errorf("label (%q) has shape %v, want [%d] or [%d, 1]", o.InputName(1), label.Dims(), n, n)
	}
	lengths := o.one[:]
	o.one[0] = int32(min(n, math.MaxInt32))
	li := 2
	if o.grad {
		li = 3
	}
	if o.NumInputs() > li {
		l, err := o.InputOf(li, blob.Int32)
		if err != nil {
			return err
		}
		if l.NumDims() != 1 {
			return o.Errorf("lengths (%q) have shape %v, want 1-D", o.InputName(li), l.Dims())
		}
		lengths = blob.Data[int32](l)
		sum := 0
		for k, v := range lengths {
			if v < 0 {
				return o.Errorf("length %d of %q is %d", k, o.InputName(li), v)
			}
			sum += int(v)
		}
		if sum != n {
			return o.Errorf("the lengths (%q) sum to %d, but X (%q) has %d items", o.InputName(li), sum, o.InputName(0), n)
		}
	} else if n == 0 {
		lengths = nil
	}
	for k, v := range lengths {
		if int64(v)*int64(v-1)/2 > maxSessionPairs {
			return o.Errorf("session %d has %d items: more than %d pairs", k, v, int64(maxSessionPairs))
		}
	}
	xs, ls := blob.Data[float32](x), blob.Data[float32](label)
	if !o.grad {
		o.dims[0] = len(lengths)
		y, err := initOutput(o.Base, 0, blob.Float32, o.dims[:]...)
		if err != nil {
			return err
		}
		yv := blob.Data[float32](y)
		off := 0
		for s, l := range lengths {
			var sum float64
			xl := xs[off : off+int(l)]
			pairs := labelPairs(ls[off:off+int(l)], func(i, j int, sign float64) {
				sum += logLogit(sign * float64(xl[j]-xl[i]))
			})
			if pairs > 0 {
				sum /= float64(pairs)
			}
			yv[s] = float32(sum)
			off += int(l)
		}
		return nil
	}
	dy := o.in[2]
	if dy.NumDims() != 1 || dy.Dim(0) != len(lengths) {
		return o.Errorf("dY (%q) has shape %v, want [%d], one per session", o.InputName(2), dy.Dims(), len(lengths))
	}
	dx, err := initOutput(o.Base, 0, blob.Float32, x.Dims()...)
	if err != nil {
		return err
	}
	dxv, dyv := blob.Data[float32](dx), blob.Data[float32](dy)
	clear(dxv)
	off := 0
	for s, l := range lengths {
		xl, dxl, dys := xs[off:off+int(l)], dxv[off:off+int(l)], float64(dyv[s])
		pairs := labelPairs(ls[off:off+int(l)], func(i, j int, sign float64) {
			g := float32(sign * dys / (1 + math.Exp(-sign*float64(xl[j]-xl[i]))))
			dxl[i] -= g
			dxl[j] += g
		})
		if pairs > 0 {
			for i := off; i < off+int(l); i++ {
				dxv[i] /= float32(pairs)
			}
		}
		off += int(l)
	}
	return nil
}

// labelPairs is PairWiseLoss's loop over the pairs of one session's items,
// whose labels are ls: it calls f(i, j, sign) for every j < i whose labels
// differ by FLT_EPSILON or more, sign 1 where item i has the higher label
// and −1 where it has the lower, and returns the number of those pairs.
func labelPairs(ls []float32, f func(i, j int, sign float64)) int {
	eps := float32(math.Nextafter32(1, 2) - 1)
	pairs := 0
	for i := range ls {
		for j := range i {
			if abs32(ls[i]-ls[j]) < eps {
				continue
			}
			pairs++
			sign := -1.0
			if ls[i] > ls[j] {
				sign = 1
			}
			f(i, j, sign)
		}
	}
	return pairs
}

func abs32(x float32) float32 { return float32(math.Abs(float64(x))) }

// bernoulliJSDShape: L is [N], N the elements of X.
func bernoulliJSDShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	if _, err := operators.SameShapes([]int{0, 1})(b, in); err != nil {
		return nil, err
	}
	n, ok := in[0].Size(0, in[0].Rank())
	if in[0].Unknown || !ok {
		n = operators.AnyDim
	}
	return []operators.TensorShape{operators.Shape(blob.Float32, n)}, nil
}

type bernoulliJSDOp struct {
	*operators.Base
	grad bool
	in   [3]*blob.Tensor
	dims [1]int
}

// jsdEntropy is the binary entropy of p, 0 within 1e-20 of 0 or 1.
func jsdEntropy(p float64) float64 {
	if p < logThreshold || 1-p < logThreshold {
		return 0
	}
	q := 1 - p
	return -p*math.Log(p) - q*math.Log(q)
}

// jsdLogit is log(p/(1 − p)) of p clamped to [1e-20, 1 − 1e-20].
func jsdLogit(p float64) float64 {
	x := min(max(p, logThreshold), 1-logThreshold)
	return -math.Log(1/x - 1)
}

func (o *bernoulliJSDOp) Run() error {
	idx := []int{0, 1}
	if o.grad {
		idx = []int{1, 2, 0}
	}
	if err := float32Sized(o.Base, o.in[:], -1, idx...); err != nil {
		return err
	}
	defer clear(o.in[:])
	x, t := o.in[0], o.in[1]
	xv, tv := blob.Data[float32](x), blob.Data[float32](t)
	if !o.grad {
		o.dims[0] = x.Size()
		l, err := initOutput(o.Base, 0, blob.Float32, o.dims[:]...)
		if err != nil {
			return err
		}
		lv := blob.Data[float32](l)
		for i, p := range xv {
			pm, pe := float64(p), float64(tv[i])
			lv[i] = float32(jsdEntropy((pm+pe)/2) - (jsdEntropy(pm)+jsdEntropy(pe))/2)
		}
		return nil
	}
	gi, err := initOutput(o.Base, 0, blob.Float32, x.Dims()...)
	if err != nil {
		return err
	}
	gv, gov := blob.Data[float32](gi), blob.Data[float32](o.in[2])
	for i, p := range xv {
		pm, pe := float64(p), float64(tv[i])
		gv[i] = float32(float64(gov[i]) * (jsdLogit(pm) - jsdLogit((pm+pe)/2)) / 2)
	}
	return nil
}
