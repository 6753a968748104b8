package optim

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// The sparse updates apply a gradient slice (indices, values) to the rows
// of a parameter: row indices[i] of the parameter (and of its optimizer
// state) takes block i of values, where a block is one row, that is
// size(param)/dim(param, 0) elements. Rows named twice are updated twice,
// one after the other, as Caffe2's CPU kernels do.

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type:      "ScatterWeightedSum",
		MinInputs: 5, MaxInputs: operators.Unbounded, MinOutputs: 1, MaxOutputs: 1,
		InputsCheck:    func(n int) bool { return n > 3 && (n-3)%2 == 0 },
		EnforceInplace: [][2]int{{0, 0}},
		Doc: "(X_0, weight_0, INDICES, X_1, weight_1, …) → X_0 (in place): for each i, row INDICES[i] of X_0 " +
			"becomes weight_0·X_0[INDICES[i]] + Σ_k weight_k·X_k[i]. The weights hold one element each.",
	}, newScatterWeightedSum)
	operators.MustRegisterGradientForbidden("ScatterWeightedSum")

	operators.MustRegisterCPU(operators.Schema{
		Type:      "SparseMomentumSGDUpdate",
		MinInputs: 5, MaxInputs: 5, MinOutputs: 3, MaxOutputs: 3,
		AllowInplace:   operators.InplacePairs([2]int{0, 0}),
		EnforceInplace: [][2]int{{1, 1}, {3, 2}},
		Args: []operators.ArgSpec{
			{Name: "momentum", Default: 0.0, Doc: "momentum coefficient"},
			{Name: "nesterov", Default: 0, Doc: "1 for Nesterov accelerated gradient"},
		},
		Doc: "(grad, moment, lr, param, indices) → (adjusted grad, moment, param): MomentumSGDUpdate of the " +
			"rows indices[i] of moment and param with block i of grad.",
	}, newSparseMomentumSGD)
	operators.MustRegisterGradientForbidden("SparseMomentumSGDUpdate")

	operators.MustRegisterCPU(operators.Schema{
		Type:      "SparseAdagrad",
		MinInputs: 5, MaxInputs: 5, MinOutputs: 2, MaxOutputs: 2,
		EnforceInplace: [][2]int{{0, 0}, {1, 1}},
		Args:           []operators.ArgSpec{{Name: "epsilon", Default: 1e-5}},
		Doc: "(param, moment, indices, grad, lr) → (param, moment): Adagrad on the rows indices[i], " +
			"moment += g², param += lr·g/(√moment + ε).",
	}, newSparseAdagrad)
	operators.MustRegisterGradientForbidden("SparseAdagrad")

	operators.MustRegisterCPU(operators.Schema{
		Type:      "SparseAdam",
		MinInputs: 7, MaxInputs: 7, MinOutputs: 3, MaxOutputs: 3,
		CPUInputs:      []int{6}, // the iteration counter
		EnforceInplace: [][2]int{{0, 0}, {1, 1}, {2, 2}},
		Args: []operators.ArgSpec{
			{Name: "beta1", Default: 0.9},
			{Name: "beta2", Default: 0.999},
			{Name: "epsilon", Default: 1e-5},
		},
		Doc: "(param, moment_1, moment_2, indices, grad, lr, iter) → (param, moment_1, moment_2): " +
			"Adam on the rows indices[i]. iter is an int64 CPU tensor.",
	}, newSparseAdam)
	operators.MustRegisterGradientForbidden("SparseAdam")

	// The sparse updates write their state in place: each output has the
	// shape of the input it overwrites.
	inPlace := func(ins ...int) operators.ShapeFunc {
		return func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
			out := make([]operators.TensorShape, len(ins))
			for k, i := range ins {
				out[k] = in[i]
			}
			return out, nil
		}
	}
	operators.MustRegisterShapeFunc("ScatterWeightedSum", inPlace(0))
	operators.MustRegisterShapeFunc("SparseMomentumSGDUpdate", inPlace(0, 1, 3))
	operators.MustRegisterShapeFunc("SparseAdagrad", inPlace(0, 1))
	operators.MustRegisterShapeFunc("SparseAdam", inPlace(0, 1, 2))
}

// rowIndices checks that input i holds int32 or int64 indices and returns
// them converted into dst (reused between runs).
func rowIndices(o *operators.Base, i int, dst []int) ([]int, error) {
	t, err := o.Input(i)
	if err != nil {
		return nil, err
	}
	dst = dst[:0]
	switch t.DataType() {
	case blob.Int32:
		for _, v := range blob.Data[int32](t) {
			dst = append(dst, int(v))
		}
	case blob.Int64:
		for _, v := range blob.Data[int64](t) {
			dst = append(dst, int(v))
		}
	default:
		return nil, o.Errorf("input %d (%q) holds %v indices, want INT32 or INT64", i, o.InputName(i), t.DataType())
	}
	return dst, nil
}

// sparseBlock checks a sparse update's shapes: the rows of param (input
// pi), one block of the values (input vi) per index, and every index
// within the rows. It returns the block size.
func sparseBlock(o *operators.Base, param *blob.Tensor, pi int, values *blob.Tensor, vi int, idx []int, ii int) (int, error) {
	rows := 0
	if len(param.Dims()) > 0 {
		rows = param.Dim(0)
	}
	if rows == 0 {
		if len(idx) == 0 {
			return 0, nil
		}
		return 0, o.Errorf("input %d (%q) has shape %v: no rows to update", pi, o.InputName(pi), param.Dims())
	}
	block := param.Size() / rows
	if values.Size() != len(idx)*block {
		return 0, o.Errorf("input %d (%q) has %d elements, want %d (%d indices × %d per row of %q)",
			vi, o.InputName(vi), values.Size(), len(idx)*block, len(idx), block, o.InputName(pi))
	}
	for k, r := range idx {
		if r < 0 || r >= rows {
			return 0, o.Errorf("index %d of input %d (%q) is %d, out of range [0, %d)", k, ii, o.InputName(ii), r, rows)
		}
	}
	return block, nil
}

type scatterWeightedSumOp struct {
	*operators.Base
	idx []int
}

func newScatterWeightedSum(b *operators.Base) (operators.Operator, error) {
	return &scatterWeightedSumOp{Base: b}, nil
}

func (o *scatterWeightedSumOp) Run() error {
	x0, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	dt := x0.DataType()
	if o.idx, err = rowIndices(o.Base, 2, o.idx); err != nil {
		return err
	}
	for i := 1; i < o.NumInputs(); i++ {
		if i == 2 {
			continue
		}
		t, err := o.InputOf(i, dt)
		if err != nil {
			return err
		}
		if i == 1 || i%2 == 0 { // a weight
			if err := scalarInput(o.Base, t, i); err != nil {
				return err
			}
			continue
		}
		if _, err := sparseBlock(o.Base, x0, 0, t, i, o.idx, 2); err != nil {
			return err
		}
	}
	if len(o.idx) == 0 {
		return nil
	}
	if dt == blob.Float32 {
		scatterWeightedSum[float32](o)
	} else {
		scatterWeightedSum[float64](o)
	}
	return nil
}

// scatterWeightedSum scales the indexed rows of X_0 by weight_0 (once per
// occurrence of the index) and adds weight_k·X_k[i] to row INDICES[i].
func scatterWeightedSum[T blob.Float](o *scatterWeightedSumOp) {
	x0, _ := o.Input(0)
	data := blob.Data[T](x0)
	rows := x0.Dim(0)
	block := x0.Size() / rows
	w0t, _ := o.Input(1)
	if w0 := blob.Data[T](w0t)[0]; w0 != 1 {
		for _, r := range o.idx {
			row := data[r*block : (r+1)*block]
			for j := range row {
				row[j] *= w0
			}
		}
	}
	for in := 3; in < o.NumInputs(); in += 2 {
		xt, _ := o.Input(in)
		wt, _ := o.Input(in + 1)
		x, w := blob.Data[T](xt), blob.Data[T](wt)[0]
		for i, r := range o.idx {
			row, src := data[r*block:(r+1)*block], x[i*block:(i+1)*block]
			for j := range row {
				row[j] += w * src[j]
			}
		}
	}
}

type sparseMomentumSGDOp struct {
	*operators.Base
	momentum float32
	nesterov bool
	in       [4]*blob.Tensor
	idx      []int
}

func newSparseMomentumSGD(b *operators.Base) (operators.Operator, error) {
	return &sparseMomentumSGDOp{Base: b, momentum: b.ArgFloat("momentum", 0), nesterov: b.ArgInt("nesterov", 0) != 0}, nil
}

func (o *sparseMomentumSGDOp) Run() error {
	dt, err := floatInputs(o.Base, o.in[:], 0, 1, 2, 3)
	if err != nil {
		return err
	}
	g, m, lr, p := o.in[0], o.in[1], o.in[2], o.in[3]
	if err := scalarInput(o.Base, lr, 2); err != nil {
		return err
	}
	if err := sameSize(o.Base, m, 1, p, 3); err != nil {
		return err
	}
	if o.idx, err = rowIndices(o.Base, 4, o.idx); err != nil {
		return err
	}
	block, err := sparseBlock(o.Base, p, 3, g, 0, o.idx, 4)
	if err != nil {
		return err
	}
	ng, err := resizeLike(o.Base, 0, g, false)
	if err != nil {
		return err
	}
	if dt == blob.Float32 {
		sparseMomentumSGD(blob.Data[float32](g), blob.Data[float32](m), blob.Data[float32](ng), blob.Data[float32](p),
			o.idx, block, blob.Data[float32](lr)[0], o.momentum, o.nesterov)
	} else {
		sparseMomentumSGD(blob.Data[float64](g), blob.Data[float64](m), blob.Data[float64](ng), blob.Data[float64](p),
			o.idx, block, blob.Data[float64](lr)[0], float64(o.momentum), o.nesterov)
	}
	return nil
}

func sparseMomentumSGD[T blob.Float](g, m, ng, p []T, idx []int, block int, lr, momentum T, nesterov bool) {
	for i, r := range idx {
		gi, ngi := g[i*block:(i+1)*block], ng[i*block:(i+1)*block]
		mr, pr := m[r*block:(r+1)*block], p[r*block:(r+1)*block]
		momentumSGD(gi, mr, ngi, mr, pr, lr, momentum, nesterov)
	}
}

type sparseAdagradOp struct {
	*operators.Base
	epsilon float32
	in      [4]*blob.Tensor
	idx     []int
}

func newSparseAdagrad(b *operators.Base) (operators.Operator, error) {
	return &sparseAdagradOp{Base: b, epsilon: b.ArgFloat("epsilon", 1e-5)}, nil
}

func (o *sparseAdagradOp) Run() error {
	dt, err := floatInputs(o.Base, o.in[:], 0, 1, 3, 4)
	if err != nil {
		return err
	}
	p, h, g, lr := o.in[0], o.in[1], o.in[2], o.in[3]
	if err := scalarInput(o.Base, lr, 4); err != nil {
		return err
	}
	if err := sameSize(o.Base, h, 1, p, 0); err != nil {
		return err
	}
	if o.idx, err = rowIndices(o.Base, 2, o.idx); err != nil {
		return err
	}
	block, err := sparseBlock(o.Base, p, 0, g, 3, o.idx, 2)
	if err != nil {
		return err
	}
	if dt == blob.Float32 {
		sparseAdagrad(blob.Data[float32](p), blob.Data[float32](h), blob.Data[float32](g), o.idx, block,
			o.epsilon, blob.Data[float32](lr)[0])
	} else {
		sparseAdagrad(blob.Data[float64](p), blob.Data[float64](h), blob.Data[float64](g), o.idx, block,
			float64(o.epsilon), blob.Data[float64](lr)[0])
	}
	return nil
}

func sparseAdagrad[T blob.Float](p, h, g []T, idx []int, block int, eps, lr T) {
	for i, r := range idx {
		gi := g[i*block : (i+1)*block]
		pr, hr := p[r*block:(r+1)*block], h[r*block:(r+1)*block]
		adagrad(pr, gi, hr, pr, hr, nil, nil, eps, 1, lr)
	}
}

type sparseAdamOp struct {
	*operators.Base
	beta1, beta2, epsilon float32
	in                    [5]*blob.Tensor
	idx                   []int
}

func newSparseAdam(b *operators.Base) (operators.Operator, error) {
	return &sparseAdamOp{
		Base:    b,
		beta1:   b.ArgFloat("beta1", 0.9),
		beta2:   b.ArgFloat("beta2", 0.999),
		epsilon: b.ArgFloat("epsilon", 1e-5),
	}, nil
}

func (o *sparseAdamOp) Run() error {
	dt, err := floatInputs(o.Base, o.in[:], 0, 1, 2, 4, 5)
	if err != nil {
		return err
	}
	p, m1, m2, g, lr := o.in[0], o.in[1], o.in[2], o.in[3], o.in[4]
	if err := scalarInput(o.Base, lr, 5); err != nil {
		return err
	}
	for i, t := range []*blob.Tensor{m1, m2} {
		if err := sameSize(o.Base, t, i+1, p, 0); err != nil {
			return err
		}
	}
	it, err := o.InputOf(6, blob.Int64)
	if err != nil {
		return err
	}
	if it.Size() < 1 {
		return o.Errorf("iteration input %q is empty", o.InputName(6))
	}
	if o.idx, err = rowIndices(o.Base, 3, o.idx); err != nil {
		return err
	}
	block, err := sparseBlock(o.Base, p, 0, g, 4, o.idx, 3)
	if err != nil {
		return err
	}
	t := float64(blob.Data[int64](it)[0] + 1)
	corr := math.Sqrt(1-math.Pow(float64(o.beta2), t)) / (1 - math.Pow(float64(o.beta1), t))
	if dt == blob.Float32 {
		sparseAdam(blob.Data[float32](p), blob.Data[float32](m1), blob.Data[float32](m2), blob.Data[float32](g),
			o.idx, block, o.beta1, o.beta2, o.epsilon, float32(corr), blob.Data[float32](lr)[0])
	} else {
		sparseAdam(blob.Data[float64](p), blob.Data[float64](m1), blob.Data[float64](m2), blob.Data[float64](g),
			o.idx, block, float64(o.beta1), float64(o.beta2), float64(o.epsilon), corr, blob.Data[float64](lr)[0])
	}
	return nil
}

func sparseAdam[T blob.Float](p, m1, m2, g []T, idx []int, block int, beta1, beta2, eps, corr, lr T) {
	for i, r := range idx {
		gi := g[i*block : (i+1)*block]
		pr, m1r, m2r := p[r*block:(r+1)*block], m1[r*block:(r+1)*block], m2[r*block:(r+1)*block]
		adam(pr, gi, m1r, m2r, pr, m1r, m2r, nil, beta1, beta2, eps, corr, lr)
	}
}
