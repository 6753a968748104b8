package loss

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// SoftmaxFocalLoss is Detectron's RetinaNet loss (Caffe2 has only its CUDA
// kernels; this is their arithmetic on the CPU).
func init() {
	args := []operators.ArgSpec{
		{Name: "scale", Default: float32(1), Doc: "the loss is multiplied by it"},
		{Name: "alpha", Default: float32(0.25), Doc: "the weight of foreground labels (1 − alpha for label 0)"},
		{Name: "gamma", Default: float32(1), Doc: "the focusing exponent"},
		{Name: "num_classes", Default: 81, Doc: "the classes of each softmax group"},
	}
	operators.MustRegisterCPU(operators.Schema{
		Type: "SoftmaxFocalLoss", MinInputs: 3, MaxInputs: 3, MinOutputs: 2, MaxOutputs: 2, Args: args,
		Doc: "(scores [N, A·num_classes, H, W], labels [N, A, H, W] int32, normalizer) → (loss, probabilities): " +
			"a softmax over each group of num_classes channels, then loss = scale·Σ −(1 − p_t)^gamma·log p_t·z over the " +
			"cells whose label t ≥ 0 (negative labels are ignored), z = (label 0 ? 1 − alpha : alpha)/max(normalizer, 1). " +
			"The probabilities are flat, [N·A·num_classes·H·W], as in Caffe2.",
	}, func(b *operators.Base) (operators.Operator, error) { return newFocal(b, false) })
	operators.MustRegisterCPU(operators.Schema{
		Type: "SoftmaxFocalLossGradient", MinInputs: 5, MaxInputs: 5, MinOutputs: 1, MaxOutputs: 1, Args: args,
		Doc: "(scores, labels, normalizer, probabilities, dloss) → dscores, the gradient of SoftmaxFocalLoss.",
	}, func(b *operators.Base) (operators.Operator, error) { return newFocal(b, true) })
	operators.MustRegisterGradient("SoftmaxFocalLoss", func(g *operators.GradientContext) error {
		g.Op("SoftmaxFocalLossGradient", []string{g.I(0), g.I(1), g.I(2), g.O(1), g.GO(0)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterShapeFunc("SoftmaxFocalLoss", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		p := operators.Shape(blob.Float32, operators.AnyDim)
		if x := in[0]; !x.Unknown {
			if n, ok := x.Size(0, x.Rank()); ok {
				p = operators.Shape(blob.Float32, n)
			}
		}
		return []operators.TensorShape{operators.Shape(blob.Float32), p}, nil
	})
	operators.MustRegisterShapeFunc("SoftmaxFocalLossGradient", operators.SameShapes(nil, 0))
}

type focalOp struct {
	*operators.Base
	grad                bool
	scale, alpha, gamma float64
	classes             int
	dims                [1]int
}

func newFocal(b *operators.Base, grad bool) (operators.Operator, error) {
	c := b.ArgInt("num_classes", 81)
	if c <= 0 || c > math.MaxInt32 {
		return nil, b.Errorf("num_classes is %d, want > 0", c)
	}
	return &focalOp{Base: b, grad: grad, classes: int(c), scale: float64(b.ArgFloat("scale", 1)),
		alpha: float64(b.ArgFloat("alpha", 0.25)), gamma: float64(b.ArgFloat("gamma", 1))}, nil
}

func (o *focalOp) Run() error {
	x, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	if x.NumDims() != 4 {
		return o.Errorf("scores (%q) have shape %v, want [N, A·num_classes, H, W]", o.InputName(0), x.Dims())
	}
	n, d, h, w := x.Dim(0), x.Dim(1), x.Dim(2), x.Dim(3)
	if d%o.classes != 0 {
		return o.Errorf("scores (%q) have %d channels, not a multiple of num_classes %d", o.InputName(0), d, o.classes)
	}
	a, hw := d/o.classes, h*w
	if x.Size() == 0 {
		n, hw = 0, 0 // nothing to loop over, whatever the other dims
	}
	lt, err := o.InputOf(1, blob.Int32)
	if err != nil {
		return err
	}
	if lt.Size() != n*a*hw && x.Size() != 0 {
		return o.Errorf("labels (%q) have shape %v, want %d elements ([N, A, H, W] = [%d, %d, %d, %d])", o.InputName(1), lt.Dims(), n*a*hw, n, a, h, w)
	}
	labels := blob.Data[int32](lt)
	for k, l := range labels {
		if int(l) >= o.classes {
			return o.Errorf("label %d of %q is %d, not below num_classes %d", k, o.InputName(1), l, o.classes)
		}
	}
	wp, err := o.InputOf(2, blob.Float32)
	if err != nil {
		return err
	}
	if wp.Size() < 1 {
		return o.Errorf("normalizer (%q) is empty", o.InputName(2))
	}
	np := max(float64(blob.Data[float32](wp)[0]), 1)
	xv := blob.Data[float32](x)
	// weight is z for the cell (i, anchor, pixel) with label l.
	weight := func(l int32) float64 {
		if l == 0 {
			return (1 - o.alpha) / np
		}
		return o.alpha / np
	}
	// at is the flat index of class c of anchor k at pixel p of image i.
	at := func(i, k, c, p int) int { return ((i*a+k)*o.classes+c)*hw + p }
	if !o.grad {
		o.dims[0] = x.Size()
		loss, prob := o.Output(0), o.Output(1)
		if err := loss.Init(blob.Float32); err != nil {
			return err
		}
		if err := prob.Init(blob.Float32, o.dims[:]...); err != nil {
			return err
		}
		pv := blob.Data[float32](prob)
		var sum float64
		for i := range n {
			for k := range a {
				for p := range hw {
					mx := math.Inf(-1)
					for c := range o.classes {
						mx = max(mx, float64(xv[at(i, k, c, p)]))
					}
					var es float64
					for c := range o.classes {
						e := math.Exp(float64(xv[at(i, k, c, p)]) - mx)
						pv[at(i, k, c, p)] = float32(e)
						es += e
					}
					for c := range o.classes {
						pv[at(i, k, c, p)] = float32(float64(pv[at(i, k, c, p)]) / es)
					}
					l := labels[(i*a+k)*hw+p]
					if l < 0 {
						continue
					}
					pt := float64(pv[at(i, k, int(l), p)])
					sum -= math.Pow(1-pt, o.gamma) * math.Log(max(pt, fltMin)) * weight(l)
				}
			}
		}
		blob.Data[float32](loss)[0] = float32(o.scale * sum)
		return nil
	}
	pt, err := o.InputOf(3, blob.Float32)
	if err != nil {
		return err
	}
	if pt.Size() != x.Size() {
		return o.Errorf("probabilities (%q) have shape %v, want %d elements like the scores", o.InputName(3), pt.Dims(), x.Size())
	}
	dl, err := o.InputOf(4, blob.Float32)
	if err != nil {
		return err
	}
	if dl.Size() != 1 {
		return o.Errorf("the loss gradient (%q) has shape %v, want one element", o.InputName(4), dl.Dims())
	}
	dx := o.Output(0)
	if err := dx.Init(blob.Float32, x.Dims()...); err != nil {
		return err
	}
	dxv, pv := blob.Data[float32](dx), blob.Data[float32](pt)
	clear(dxv)
	g := o.scale * float64(blob.Data[float32](dl)[0])
	for i := range n {
		for k := range a {
			for p := range hw {
				l := labels[(i*a+k)*hw+p]
				if l < 0 {
					continue
				}
				q := float64(pv[at(i, k, int(l), p)])
				buff := (-math.Pow(1-q, o.gamma) + o.gamma*math.Pow(1-q, o.gamma-1)*q*math.Log(max(q, fltMin))) * weight(l)
				for c := range o.classes {
					delta := 0.0
					if c == int(l) {
						delta = 1
					}
					dxv[at(i, k, c, p)] = float32(g * buff * (delta - float64(pv[at(i, k, c, p)])))
				}
			}
		}
	}
	return nil
}

// fltMin is C's FLT_MIN, the smallest normal float32, where the loss's
// logarithm stops.
const fltMin = 0x1p-126
