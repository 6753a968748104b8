package optim

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// The sparse forms of Adadelta and Wngrad: they update in place the rows
// of the parameter (and moments) that the indices name, one block of the
// gradient per index.
func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "SparseAdadelta", MinInputs: 6, MaxInputs: 6, MinOutputs: 3, MaxOutputs: 3,
		EnforceInplace: [][2]int{{0, 0}, {1, 1}, {2, 2}},
		Args: []operators.ArgSpec{
			{Name: "epsilon", Default: float32(1e-5), Doc: "added under both square roots (≥ 0)"},
			{Name: "decay", Default: float32(0.95), Doc: "the decay of both running averages, in (0, 1)"},
		},
		Doc: "(param, moment, moment_delta, indices, grad, lr) → (param, moment, moment_delta): Adadelta on the rows indices[i]. FLOAT.",
	}, func(b *operators.Base) (operators.Operator, error) {
		eps, decay, err := adadeltaParams(b)
		return &sparseAdadeltaOp{Base: b, eps: eps, decay: decay}, err
	})
	operators.MustRegisterGradientForbidden("SparseAdadelta")
	operators.MustRegisterShapeFunc("SparseAdadelta", operators.SameShapes([]int{0, 1, 2}, 0, 1, 2))

	operators.MustRegisterCPU(operators.Schema{
		Type: "SparseWngrad", MinInputs: 5, MaxInputs: 5, MinOutputs: 2, MaxOutputs: 2,
		EnforceInplace: [][2]int{{0, 0}, {1, 1}},
		Args:           []operators.ArgSpec{{Name: "epsilon", Default: float32(1e-5), Doc: "added to seq_b in the parameter step"}},
		Doc: "(param, seq_b, indices, grad, lr) → (param, seq_b): param[indices[i]] += lr·g/(seq_b + ε), then " +
			"seq_b += Σg²/seq_b (without ε, as in Caffe2). FLOAT.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &sparseWngradOp{Base: b, eps: b.ArgFloat("epsilon", 1e-5)}, nil
	})
	operators.MustRegisterGradientForbidden("SparseWngrad")
	operators.MustRegisterShapeFunc("SparseWngrad", operators.SameShapes(nil, 0, 1))
}

type sparseAdadeltaOp struct {
	*operators.Base
	eps, decay float32
	in         [5]*blob.Tensor
	idx        []int
}

func (o *sparseAdadeltaOp) Run() error {
	if err := float32Inputs(o.Base, o.in[:], 0, 1, 2, 4, 5); err != nil {
		return err
	}
	defer clear(o.in[:])
	p, h, d, g, lr := o.in[0], o.in[1], o.in[2], o.in[3], o.in[4]
	if err := sameSize(o.Base, h, 1, p, 0); err != nil {
		return err
	}
	if err := sameSize(o.Base, d, 2, p, 0); err != nil {
		return err
	}
	if err := scalarInput(o.Base, lr, 5); err != nil {
		return err
	}
	var err error
	if o.idx, err = rowIndices(o.Base, 3, o.idx); err != nil {
		return err
	}
	block, err := sparseBlock(o.Base, p, 0, g, 4, o.idx, 3)
	if err != nil {
		return err
	}
	f := blob.Data[float32]
	pw, ph, pd, gv, l := f(p), f(h), f(d), f(g), f(lr)[0]
	for i, r := range o.idx {
		rows := r * block
		w, hr, dr := pw[rows:rows+block], ph[rows:rows+block], pd[rows:rows+block]
		adadelta(w, gv[i*block:(i+1)*block], hr, dr, w, hr, dr, o.eps, o.decay, l)
	}
	return nil
}

type sparseWngradOp struct {
	*operators.Base
	eps float32
	in  [4]*blob.Tensor
	idx []int
}

func (o *sparseWngradOp) Run() error {
	if err := float32Inputs(o.Base, o.in[:], 0, 1, 3, 4); err != nil {
		return err
	}
	defer clear(o.in[:])
	p, b, g, lr := o.in[0], o.in[1], o.in[2], o.in[3]
	if err := scalarInput(o.Base, b, 1); err != nil {
		return err
	}
	if err := scalarInput(o.Base, lr, 4); err != nil {
		return err
	}
	var err error
	if o.idx, err = rowIndices(o.Base, 2, o.idx); err != nil {
		return err
	}
	block, err := sparseBlock(o.Base, p, 0, g, 3, o.idx, 2)
	if err != nil {
		return err
	}
	if len(o.idx) == 0 {
		return nil // Caffe2 leaves seq_b as it is too
	}
	f := blob.Data[float32]
	pw, gv, seqB := f(p), f(g), f(b)[0]
	step := f(lr)[0] / (seqB + o.eps)
	for i, r := range o.idx {
		w, gi := pw[r*block:(r+1)*block], gv[i*block:(i+1)*block]
		for j, v := range gi {
			w[j] += step * v
		}
	}
	var sum float32
	for _, v := range gv {
		sum += v * v
	}
	f(b)[0] = seqB + sum/seqB
	return nil
}
