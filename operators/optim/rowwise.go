package optim

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type:      "RowWiseSparseAdagrad",
		MinInputs: 5, MaxInputs: 6, MinOutputs: 2, MaxOutputs: 2,
		EnforceInplace: [][2]int{{0, 0}, {1, 1}},
		Args: []operators.ArgSpec{
			{Name: "epsilon", Default: 1e-5},
			{Name: "weight_decay", Default: 0.0, Doc: "adds weight_decay·param to each row's gradient"},
		},
		Doc: "(param, moment, indices, grad, lr[, counter]) → (param, moment): Adagrad with one moment per row " +
			"(moment has dim 0 of param elements): for row r = indices[i] with gradient block g, " +
			"moment[r] += mean(g²), param[r] += lr·g/(√moment[r] + ε). counter is accepted and not read.",
	}, newRowWiseSparseAdagrad)
	operators.MustRegisterGradientForbidden("RowWiseSparseAdagrad")
	operators.MustRegisterShapeFunc("RowWiseSparseAdagrad", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		return []operators.TensorShape{in[0], in[1]}, nil
	})
}

type rowWiseSparseAdagradOp struct {
	*operators.Base
	epsilon, decay float32
	idx            []int
}

func newRowWiseSparseAdagrad(b *operators.Base) (operators.Operator, error) {
	return &rowWiseSparseAdagradOp{Base: b, epsilon: b.ArgFloat("epsilon", 1e-5), decay: b.ArgFloat("weight_decay", 0)}, nil
}

func (o *rowWiseSparseAdagradOp) Run() error {
	p, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	var in [3]*blob.Tensor
	for k, i := range []int{1, 3, 4} {
		if in[k], err = o.InputOf(i, blob.Float32); err != nil {
			return err
		}
	}
	h, g, lr := in[0], in[1], in[2]
	if err := scalarInput(o.Base, lr, 4); err != nil {
		return err
	}
	rows := 0
	if p.NumDims() > 0 {
		rows = p.Dim(0)
	}
	if h.Size() != rows {
		return o.Errorf("moment input 1 (%q) has shape %v, want %d elements, one per row of param input 0 (%q) of shape %v",
			o.InputName(1), h.Dims(), rows, o.InputName(0), p.Dims())
	}
	if o.idx, err = rowIndices(o.Base, 2, o.idx); err != nil {
		return err
	}
	block, err := sparseBlock(o.Base, p, 0, g, 3, o.idx, 2)
	if err != nil || len(o.idx) == 0 || block == 0 {
		return err
	}
	rowWiseSparseAdagrad(blob.Data[float32](p), blob.Data[float32](h), blob.Data[float32](g), o.idx, block,
		o.epsilon, o.decay, blob.Data[float32](lr)[0])
	return nil
}

// rowWiseSparseAdagrad is Caffe2's CPU kernel: the moment of a row grows
// by the mean square of its gradient, and the row moves by lr·g/(√h + ε).
func rowWiseSparseAdagrad(p, h, g []float32, idx []int, block int, eps, decay, lr float32) {
	for i, r := range idx {
		gi, pr := g[i*block:(i+1)*block], p[r*block:(r+1)*block]
		var sq float32
		for j, v := range gi {
			v += decay * pr[j]
			sq += v * v
		}
		h[r] += sq / float32(block)
		step := lr / (float32(math.Sqrt(float64(h[r]))) + eps)
		for j, v := range gi {
			pr[j] += (v + decay*pr[j]) * step
		}
	}
}
