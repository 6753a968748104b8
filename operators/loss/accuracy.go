package loss

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{Type: "Accuracy", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{{Name: "top_k", Default: int64(1), Doc: "a row counts as correct when its label is among its top_k scores"}},
		Doc:  "Accuracy(predictions [N×D], labels int32 [N]) → accuracy: the fraction of rows whose label is among the top_k scores (ties go to the lower class index), a 0-d float scalar."},
		newAccuracy)
	operators.MustRegisterGradientForbidden("Accuracy")
}

type accuracy struct {
	*operators.Base
	topK int
}

func newAccuracy(b *operators.Base) (operators.Operator, error) {
	o := &accuracy{Base: b, topK: int(b.ArgInt("top_k", 1))}
	if o.topK < 1 {
		return nil, b.Errorf("top_k must be at least 1, got %d", o.topK)
	}
	return o, nil
}

func (o *accuracy) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	if x.NumDims() != 2 {
		return o.Errorf("predictions %q must be 2-D [N, D], got shape %v", o.InputName(0), x.Dims())
	}
	n, d := x.Dim(0), x.Dim(1)
	l, err := o.Input(1)
	if err != nil {
		return err
	}
	if l.NumDims() != 1 || l.Dim(0) != n {
		return o.Errorf("labels %q have shape %v, want [%d]", o.InputName(1), l.Dims(), n)
	}
	labels, err := classLabels(o.Base, 1, d)
	if err != nil {
		return err
	}
	y, err := initOutput(o.Base, 0, blob.Float32)
	if err != nil {
		return err
	}
	var correct int
	if x.DataType() == blob.Float32 {
		correct = topKCorrect(blob.Data[float32](x), labels, d, o.topK)
	} else {
		correct = topKCorrect(blob.Data[float64](x), labels, d, o.topK)
	}
	blob.Data[float32](y)[0] = float32(correct) / float32(n)
	return nil
}

// topKCorrect counts the rows of x (d scores each) whose label is among the
// k best scores, ranking equal scores by class index as a stable sort would.
func topKCorrect[T blob.Float](x []T, labels []int32, d, k int) int {
	correct := 0
	for i, l := range labels {
		row := x[i*d : (i+1)*d]
		target := row[l]
		rank := 1
		for j, v := range row {
			if v > target || (v == target && j < int(l)) {
				if rank++; rank > k {
					break
				}
			}
		}
		if rank <= k {
			correct++
		}
	}
	return correct
}
