package loss

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterShapeFunc("SoftmaxWithLoss", softmaxLossShape)
	operators.MustRegisterShapeFunc("LabelCrossEntropy", labelXentShape)
	operators.MustRegisterShapeFunc("Accuracy", accuracyShape)
	operators.MustRegisterShapeFunc("AveragedLoss", averagedLossShape)
}

// scalar is the shape of a 0-d tensor of type dtype.
func scalar(dtype blob.DataType) operators.TensorShape { return operators.Shape(dtype) }

// batchLabels checks that labels (input 1) hold one label per row of the
// n rows of the predictions when both are known, accepting [n] and, where
// column is set, [n, 1].
func batchLabels(b *operators.Base, in []operators.TensorShape, n int, column bool) error {
	l := in[1]
	if l.Unknown || n < 0 {
		return nil
	}
	ok := l.Rank() == 1 || column && l.Rank() == 2 && operators.DimsAgree(l.Dim(1), 1)
	if !ok || !operators.DimsAgree(l.Dim(0), n) {
		return b.InputShapeError(in, "the labels must be [%d], one per row of the predictions", n)
	}
	return nil
}

// softmaxLossShape: P has the logits' shape, the loss is a scalar; with
// integer labels there is one label per row of the logits flattened at
// axis.
func softmaxLossShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	x := in[0]
	out := []operators.TensorShape{x, scalar(x.Type)}
	if x.Unknown || b.ArgBool("label_prob", false) {
		return out, nil
	}
	axis, ok := operators.CanonicalAxis(int(b.ArgInt("axis", 1)), x.Rank())
	if !ok {
		return nil, b.InputShapeError(in, "axis %d is out of range for the logits", b.ArgInt("axis", 1))
	}
	n, ok := x.Size(0, axis)
	l := in[1]
	if ok && !l.Unknown {
		if size, known := l.Size(0, l.Rank()); known && size != n {
			return nil, b.InputShapeError(in, "want %d labels, one per row of the logits flattened at axis %d", n, axis)
		}
	}
	return out, nil
}

// labelXentShape: Y has one loss per row of the 2-D predictions.
func labelXentShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	x := in[0]
	if x.Rank() != 2 {
		return nil, nil
	}
	if err := batchLabels(b, in, x.Dim(0), true); err != nil {
		return nil, err
	}
	return []operators.TensorShape{operators.Shape(x.Type, x.Dim(0))}, nil
}

// accuracyShape: the predictions are [N, D], the labels [N], the accuracy
// a float scalar.
func accuracyShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	x := in[0]
	if x.Rank() >= 0 && x.Rank() != 2 {
		return nil, b.InputShapeError(in, "the predictions must be 2-D [N, D]")
	}
	if err := batchLabels(b, in, x.Dim(0), false); err != nil {
		return nil, err
	}
	return []operators.TensorShape{scalar(blob.Float32)}, nil
}

func averagedLossShape(_ *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	return []operators.TensorShape{scalar(in[0].Type)}, nil
}

func init() {
	// (X, dY) → dX; (X, labels, dY) → dX; (X, labels[, weight], P, dloss) → dX.
	operators.MustRegisterShapeFunc("AveragedLossGradient", operators.SameShapes(nil, 0))
	operators.MustRegisterShapeFunc("LabelCrossEntropyGradient", operators.SameShapes(nil, 0))
	operators.MustRegisterShapeFunc("SoftmaxWithLossGradient", softmaxLossGradShape)
}

// softmaxLossGradShape: dX has the logits' shape, as has the softmax
// (input 2, or 3 with a weight input).
func softmaxLossGradShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	return operators.SameShapes([]int{0, len(in) - 2}, 0)(b, in)
}
