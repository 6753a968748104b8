package loss

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	for _, x := range []struct {
		typ     string
		soft    bool
		doc     string
		gradDoc string
	}{
		{"LabelCrossEntropy", false,
			"Y[i] = -log(max(X[i, label[i]], 1e-20)) for X [N×D] (a 1-D X is one row) and int32 labels [N] or [N, 1].",
			"LabelCrossEntropyGradient(X, label, dY) → dX: dX[i, label[i]] = -dY[i]/max(X[i, label[i]], 1e-20), 0 elsewhere."},
		{"CrossEntropy", true,
			"Y[i] = -Σⱼ label[i, j]·log(max(X[i, j], 1e-20)) for X [N×D] and soft labels of X's shape (probabilities in [0, 1]).",
			"CrossEntropyGradient(X, label, dY) → dX = -dY[i]·label[i, j]/max(X[i, j], 1e-20)."},
	} {
		grad := x.typ + "Gradient"
		operators.MustRegisterCPU(operators.Schema{Type: x.typ, MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1, Doc: x.doc}, newXent(x.soft))
		operators.MustRegisterCPU(operators.Schema{Type: grad, MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1, Doc: x.gradDoc}, newXentGradient(x.soft))
		operators.MustRegisterGradient(x.typ, func(g *operators.GradientContext) error {
			g.Op(grad, []string{g.I(0), g.I(1), g.GO(0)}, []string{g.GI(0)})
			return nil
		})
	}
}

// xent is LabelCrossEntropy (int32 class labels) and CrossEntropy (soft
// labels), forward or gradient.
type xent struct {
	*operators.Base
	soft bool
	dims [1]int // scratch for the [N] output shape
}

func newXent(soft bool) operators.Factory {
	return func(b *operators.Base) (operators.Operator, error) {
		return &xentForward{xent{Base: b, soft: soft}}, nil
	}
}

func newXentGradient(soft bool) operators.Factory {
	return func(b *operators.Base) (operators.Operator, error) {
		return &xentGradient{xent{Base: b, soft: soft}}, nil
	}
}

// inputs checks X and the labels: it returns X, N, D and either the class
// labels or the soft-label tensor.
func (o *xent) inputs() (x *blob.Tensor, n, d int, labels []int32, soft *blob.Tensor, err error) {
	if x, err = o.FloatInput(0); err != nil {
		return
	}
	if n, d, err = batchShape(o.Base, x); err != nil {
		return
	}
	l, err := o.Input(1)
	if err != nil {
		return
	}
	if !o.soft {
		if !(l.NumDims() == 1 || (l.NumDims() == 2 && l.Dim(1) == 1)) || l.Dim(0) != n {
			err = o.Errorf("labels %q have shape %v, want [%d] or [%d, 1] for X of shape %v", o.InputName(1), l.Dims(), n, n, x.Dims())
			return
		}
		labels, err = classLabels(o.Base, 1, d)
		return
	}
	if soft, err = o.InputOf(1, x.DataType()); err != nil {
		return
	}
	if soft.Size() != n*d || soft.NumDims() == 0 || (soft.Dim(0) != n && x.NumDims() > 1) {
		err = o.Errorf("labels %q have shape %v, want [%d, %d] for X of shape %v", o.InputName(1), soft.Dims(), n, d, x.Dims())
		return
	}
	var k int
	var p float64
	if x.DataType() == blob.Float32 {
		k, p = firstNonProbability(blob.Data[float32](soft))
	} else {
		k, p = firstNonProbability(blob.Data[float64](soft))
	}
	if k >= 0 {
		err = o.Errorf("soft label %d of %q is %v, not a probability in [0, 1]; use LabelCrossEntropy for integer class labels", k, o.InputName(1), p)
	}
	return
}

// firstNonProbability returns the index and value of the first element of v
// outside [0, 1], or -1.
func firstNonProbability[T blob.Float](v []T) (int, float64) {
	for k, p := range v {
		if !(p >= 0 && p <= 1) {
			return k, float64(p)
		}
	}
	return -1, 0
}

type xentForward struct{ xent }

func (o *xentForward) Run() error {
	x, n, d, labels, soft, err := o.inputs()
	if err != nil {
		return err
	}
	o.dims[0] = n
	y, err := initOutput(o.Base, 0, x.DataType(), o.dims[:]...)
	if err != nil {
		return err
	}
	switch {
	case x.DataType() == blob.Float32 && o.soft:
		softXent(blob.Data[float32](x), blob.Data[float32](soft), blob.Data[float32](y), d)
	case x.DataType() == blob.Float32:
		labelXent(blob.Data[float32](x), labels, blob.Data[float32](y), d)
	case o.soft:
		softXent(blob.Data[float64](x), blob.Data[float64](soft), blob.Data[float64](y), d)
	default:
		labelXent(blob.Data[float64](x), labels, blob.Data[float64](y), d)
	}
	return nil
}

type xentGradient struct{ xent }

func (o *xentGradient) Run() error {
	x, n, d, labels, soft, err := o.inputs()
	if err != nil {
		return err
	}
	dy, err := rowGradient(o.Base, 2, x.DataType(), n)
	if err != nil {
		return err
	}
	dx, err := initOutput(o.Base, 0, x.DataType(), x.Dims()...)
	if err != nil {
		return err
	}
	switch {
	case x.DataType() == blob.Float32 && o.soft:
		softXentGrad(blob.Data[float32](x), blob.Data[float32](soft), blob.Data[float32](dy), blob.Data[float32](dx), d)
	case x.DataType() == blob.Float32:
		labelXentGrad(blob.Data[float32](x), labels, blob.Data[float32](dy), blob.Data[float32](dx), d)
	case o.soft:
		softXentGrad(blob.Data[float64](x), blob.Data[float64](soft), blob.Data[float64](dy), blob.Data[float64](dx), d)
	default:
		labelXentGrad(blob.Data[float64](x), labels, blob.Data[float64](dy), blob.Data[float64](dx), d)
	}
	return nil
}

// clampProb returns p, raised to logThreshold.
func clampProb[T blob.Float](p T) float64 { return math.Max(float64(p), logThreshold) }

// labelXent sets y[i] = -log(x[i, labels[i]]) over rows of d elements.
func labelXent[T blob.Float](x []T, labels []int32, y []T, d int) {
	for i, l := range labels {
		y[i] = T(-math.Log(clampProb(x[i*d+int(l)])))
	}
}

// labelXentGrad sets dx to zero except dx[i, labels[i]] = -dy[i]/x[i, labels[i]].
func labelXentGrad[T blob.Float](x []T, labels []int32, dy, dx []T, d int) {
	clear(dx)
	for i, l := range labels {
		k := i*d + int(l)
		dx[k] = T(-float64(dy[i]) / clampProb(x[k]))
	}
}

// softXent sets y[i] = -Σⱼ label[i, j]·log(x[i, j]).
func softXent[T blob.Float](x, label, y []T, d int) {
	for i := range y {
		var s float64
		for k := i * d; k < (i+1)*d; k++ {
			s += float64(label[k]) * math.Log(clampProb(x[k]))
		}
		y[i] = T(-s)
	}
}

// softXentGrad sets dx[i, j] = -dy[i]·label[i, j]/x[i, j].
func softXentGrad[T blob.Float](x, label, dy, dx []T, d int) {
	for i, g := range dy {
		for k := i * d; k < (i+1)*d; k++ {
			dx[k] = T(-float64(g) * float64(label[k]) / clampProb(x[k]))
		}
	}
}
