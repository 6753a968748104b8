package nn

import (
	"errors"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/kernels/gemm"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "MatMul", MinInputs: 2, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{
			{Name: "axis_a", Default: int64(1), Doc: "A is flattened to a matrix at this axis"},
			{Name: "axis_b", Default: int64(1), Doc: "B is flattened to a matrix at this axis"},
			{Name: "trans_a", Default: int64(0), Doc: "1 to transpose the flattened A"},
			{Name: "trans_b", Default: int64(0), Doc: "1 to transpose the flattened B"},
		},
		Doc: "MatMul(A, B[, shape]) computes the matrix product Y = op(A)·op(B) of A and B flattened to matrices at axis_a and axis_b; " +
			"Y is M×N, or takes the shape of the optional third input (as the gradient operators use it).",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &matMulOp{
			Base:  b,
			axisA: int(b.ArgInt("axis_a", 1)), axisB: int(b.ArgInt("axis_b", 1)),
			transA: b.ArgBool("trans_a", false), transB: b.ArgBool("trans_b", false),
		}, nil
	})
	operators.MustRegisterGradient("MatMul", matMulGradient)

	operators.MustRegisterCPU(operators.Schema{
		Type: "BatchMatMul", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{
			{Name: "trans_a", Default: int64(0), Doc: "1 to transpose the last two dimensions of A"},
			{Name: "trans_b", Default: int64(0), Doc: "1 to transpose the last two dimensions of B"},
			{Name: "broadcast", Default: int64(0), Doc: "1 to broadcast the batch dimensions as numpy.matmul does (no gradient then)"},
		},
		Doc: "BatchMatMul(A, B) multiplies the matrices in the last two dimensions of A and B batch by batch: " +
			"A is (…, M, K), B is (…, K, N) and Y is (…, M, N). A 1-D operand is a vector, as in numpy.matmul.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &batchMatMulOp{
			Base:   b,
			transA: b.ArgBool("trans_a", false), transB: b.ArgBool("trans_b", false),
			broadcast: b.ArgBool("broadcast", false),
		}, nil
	})
	operators.MustRegisterGradient("BatchMatMul", batchMatMulGradient)
}

// matMulGradient emits two MatMul operators, as Caffe2's GetMatMulGradient
// does, with one deliberate difference: Caffe2 keeps axis_a and axis_b in C++
// bools there and so writes them back as 0 or 1, which makes the gradient of
// a MatMul with an axis of 2 or more fail; the axes are passed through
// unchanged here, so those gradients are correct (the definitions are equal
// to Caffe2's whenever the axes are 0 or 1). Each operator also takes the
// input whose gradient it computes, for its shape.
func matMulGradient(g *operators.GradientContext) error {
	g.CopyArguments = false
	axes := [2]int64{g.ArgInt("axis_a", 1), g.ArgInt("axis_b", 1)}
	for i, p := range gradProducts(g) {
		// The other forward operand keeps its axis, named for its side.
		other := 1 - i
		axis := netdef.ArgInt("axis_b", axes[other])
		if p.l == other {
			axis = netdef.ArgInt("axis_a", axes[other])
		}
		g.Op("MatMul", append(p.operands(g), g.I(i)), []string{g.GI(i)}, append(p.flags(), axis)...)
	}
	return nil
}

// batchMatMulGradient emits two BatchMatMul operators, as Caffe2's
// GetBatchMatMulGradient does; it has no gradient with broadcast=1.
func batchMatMulGradient(g *operators.GradientContext) error {
	g.CopyArguments = false
	if g.ArgInt("broadcast", 0) != 0 {
		return errors.New("gradient is not supported with broadcast=1 for BatchMatMul")
	}
	for i, p := range gradProducts(g) {
		g.Op("BatchMatMul", p.operands(g), []string{g.GI(i)}, p.flags()...)
	}
	return nil
}

// gradOperand stands for dY among the operands of a product; 0 and 1 are
// the forward inputs A and B.
const gradOperand = -1

// product is op(l)·op(r), op transposing where transL or transR is set.
type product struct {
	l, r           int
	transL, transR bool
}

// gradProducts returns the products giving dA and dB of Y = op(A)·op(B)
// (op as trans_a and trans_b say), as Caffe2's gradient makers order them.
func gradProducts(g *operators.GradientContext) [2]product {
	const dy = gradOperand
	switch transA, transB := g.ArgInt("trans_a", 0) != 0, g.ArgInt("trans_b", 0) != 0; {
	case transA && transB: // dA = Bᵀ·dYᵀ, dB = dYᵀ·Aᵀ
		return [2]product{{1, dy, true, true}, {dy, 0, true, true}}
	case transA: // dA = B·dYᵀ, dB = A·dY
		return [2]product{{1, dy, false, true}, {0, dy, false, false}}
	case transB: // dA = dY·B, dB = dYᵀ·A
		return [2]product{{dy, 1, false, false}, {dy, 0, true, false}}
	default: // dA = dY·Bᵀ, dB = Aᵀ·dY
		return [2]product{{dy, 1, false, true}, {0, dy, true, false}}
	}
}

// operands returns the blob names of p's operands.
func (p product) operands(g *operators.GradientContext) []string {
	name := func(k int) string {
		if k == gradOperand {
			return g.GO(0)
		}
		return g.I(k)
	}
	return []string{name(p.l), name(p.r)}
}

// flags returns trans_a and trans_b arguments for p's transpositions.
func (p product) flags() []*netdef.Argument {
	var args []*netdef.Argument
	if p.transL {
		args = append(args, netdef.ArgInt("trans_a", 1))
	}
	if p.transR {
		args = append(args, netdef.ArgInt("trans_b", 1))
	}
	return args
}

type matMulOp struct {
	*operators.Base
	axisA, axisB   int
	transA, transB bool
	shape          []int
}

func (o *matMulOp) Run() error {
	a, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	b, err := inputLike(o.Base, 1, 0, a)
	if err != nil {
		return err
	}
	ca, ok := operators.CanonicalAxis(o.axisA, a.NumDims())
	if !ok {
		return o.Errorf("axis_a %d is out of range for input 0 (%q) of shape %v", o.axisA, o.InputName(0), a.Dims())
	}
	cb, ok := operators.CanonicalAxis(o.axisB, b.NumDims())
	if !ok {
		return o.Errorf("axis_b %d is out of range for input 1 (%q) of shape %v", o.axisB, o.InputName(1), b.Dims())
	}
	// The stored matrices are A0×A1 and B0×B1.
	a0, a1 := a.SizeToDim(ca), a.SizeFromDim(ca)
	b0, b1 := b.SizeToDim(cb), b.SizeFromDim(cb)
	m, k := a0, a1
	if o.transA {
		m, k = a1, a0
	}
	kb, n := b0, b1
	if o.transB {
		kb, n = b1, b0
	}
	if k != kb {
		return o.Errorf("dimension mismatch: %s is %d×%d (input 0 %q of shape %v), %s is %d×%d (input 1 %q of shape %v)",
			opName("A", o.transA), m, k, o.InputName(0), a.Dims(), opName("B", o.transB), kb, n, o.InputName(1), b.Dims())
	}
	var shape *blob.Tensor
	if o.NumInputs() == 3 {
		if shape, err = o.Input(2); err != nil {
			return err
		}
		if shape.Size() != m*n {
			return o.Errorf("input 2 (%q) has shape %v (%d elements), but the product is %d×%d", o.InputName(2), shape.Dims(), shape.Size(), m, n)
		}
	}
	y := o.Output(0)
	o.shape = append(o.shape[:0], m, n)
	if err := y.Init(a.DataType(), o.shape...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	switch a.DataType() {
	case blob.Float32:
		gemm.Gemm(o.Threads(), o.transA, o.transB, m, n, k, 1, blob.Data[float32](a), ld(a1), blob.Data[float32](b), ld(b1), 0, blob.Data[float32](y), ld(n))
	case blob.Float64:
		gemm.Gemm(o.Threads(), o.transA, o.transB, m, n, k, 1, blob.Data[float64](a), ld(a1), blob.Data[float64](b), ld(b1), 0, blob.Data[float64](y), ld(n))
	}
	if shape != nil {
		if err := y.Reshape(shape.Dims()...); err != nil {
			return o.Errorf("output %q: %v", o.OutputName(0), err)
		}
	}
	return nil
}

func opName(name string, trans bool) string {
	if trans {
		return "trans(" + name + ")"
	}
	return name
}

type batchMatMulOp struct {
	*operators.Base
	transA, transB bool
	broadcast      bool
	// scratch, reused between runs
	shape               []int
	aDims, bDims, yDims []int
	aStride, bStride    []int
	index               []int
}

func (o *batchMatMulOp) Run() error {
	a, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	b, err := inputLike(o.Base, 1, 0, a)
	if err != nil {
		return err
	}
	switch a.DataType() {
	case blob.Float32:
		return batchMatMul[float32](o, a, b, blob.Float32)
	case blob.Float64:
		return batchMatMul[float64](o, a, b, blob.Float64)
	}
	return nil
}

func (o *batchMatMulOp) mismatch(a, b *blob.Tensor) error {
	return o.Errorf("dimension mismatch: input 0 (%q) has shape %v, input 1 (%q) has shape %v (trans_a=%v, trans_b=%v)",
		o.InputName(0), a.Dims(), o.InputName(1), b.Dims(), o.transA, o.transB)
}

func batchMatMul[T blob.Float](o *batchMatMulOp, a, b *blob.Tensor, dt blob.DataType) error {
	threads := o.Threads()
	ad, bd := a.Dims(), b.Dims()
	na, nb := len(ad), len(bd)
	if na == 0 || nb == 0 {
		return o.Errorf("inputs must have at least one dimension: input 0 (%q) has shape %v, input 1 (%q) has shape %v", o.InputName(0), ad, o.InputName(1), bd)
	}
	y := o.Output(0)
	A, B := blob.Data[T](a), blob.Data[T](b)
	switch {
	case na == 1 && nb == 1:
		// Dot product.
		if a.Size() != b.Size() {
			return o.mismatch(a, b)
		}
		o.shape = append(o.shape[:0], 1)
		if err := y.Init(dt, o.shape...); err != nil {
			return o.Errorf("output %q: %v", o.OutputName(0), err)
		}
		gemm.Gemm(threads, false, false, 1, 1, len(A), 1, A, ld(len(A)), B, 1, 0, blob.Data[T](y), 1)
		return nil
	case na == 1:
		// Vector times a batch of matrices.
		k := len(A)
		if o.transB {
			if bd[nb-1] != k {
				return o.mismatch(a, b)
			}
			o.shape = append(o.shape[:0], bd[:nb-1]...)
			if err := y.Init(dt, o.shape...); err != nil {
				return o.Errorf("output %q: %v", o.OutputName(0), err)
			}
			rows := b.SizeToDim(nb - 1)
			gemm.Gemm(threads, false, false, rows, 1, k, 1, B, ld(k), A, 1, 0, blob.Data[T](y), 1)
			return nil
		}
		if bd[nb-2] != k {
			return o.mismatch(a, b)
		}
		n := bd[nb-1]
		o.shape = append(append(o.shape[:0], bd[:nb-2]...), n)
		if err := y.Init(dt, o.shape...); err != nil {
			return o.Errorf("output %q: %v", o.OutputName(0), err)
		}
		Y := blob.Data[T](y)
		for i := range b.SizeToDim(nb - 2) {
			gemm.Gemm(threads, false, false, 1, n, k, 1, A, ld(k), B[i*k*n:], ld(n), 0, Y[i*n:], ld(n))
		}
		return nil
	case nb == 1:
		// A batch of matrices times a vector.
		k := len(B)
		if o.transA {
			if ad[na-2] != k {
				return o.mismatch(a, b)
			}
			m := ad[na-1]
			o.shape = append(append(o.shape[:0], ad[:na-2]...), m)
			if err := y.Init(dt, o.shape...); err != nil {
				return o.Errorf("output %q: %v", o.OutputName(0), err)
			}
			Y := blob.Data[T](y)
			for i := range a.SizeToDim(na - 2) {
				gemm.Gemm(threads, true, false, m, 1, k, 1, A[i*k*m:], ld(m), B, 1, 0, Y[i*m:], 1)
			}
			return nil
		}
		if ad[na-1] != k {
			return o.mismatch(a, b)
		}
		o.shape = append(o.shape[:0], ad[:na-1]...)
		if err := y.Init(dt, o.shape...); err != nil {
			return o.Errorf("output %q: %v", o.OutputName(0), err)
		}
		gemm.Gemm(threads, false, false, a.SizeToDim(na-1), 1, k, 1, A, ld(k), B, 1, 0, blob.Data[T](y), 1)
		return nil
	}

	m, k := ad[na-2], ad[na-1]
	if o.transA {
		m, k = k, m
	}
	kb, n := bd[nb-2], bd[nb-1]
	if o.transB {
		kb, n = n, kb
	}
	if k != kb {
		return o.mismatch(a, b)
	}
	// Align the batch dimensions to the right, padding with 1s.
	nd := max(na, nb) - 2
	o.aDims = padDims(o.aDims, ad[:na-2], nd)
	o.bDims = padDims(o.bDims, bd[:nb-2], nd)
	o.yDims = o.yDims[:0]
	for i := 0; i < nd; i++ {
		da, db := o.aDims[i], o.bDims[i]
		switch {
		case da == db:
			o.yDims = append(o.yDims, da)
		case da == 1:
			o.yDims = append(o.yDims, db)
		case db == 1:
			o.yDims = append(o.yDims, da)
		default:
			return o.Errorf("batch dimensions are not broadcastable: input 0 (%q) has shape %v, input 1 (%q) has shape %v", o.InputName(0), ad, o.InputName(1), bd)
		}
		if da != db && !o.broadcast {
			return o.Errorf("batch dimensions differ: input 0 (%q) has shape %v, input 1 (%q) has shape %v; set broadcast=1 to broadcast them", o.InputName(0), ad, o.InputName(1), bd)
		}
	}
	o.shape = append(append(o.shape[:0], o.yDims...), m, n)
	if err := y.Init(dt, o.shape...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	Y := blob.Data[T](y)
	batches := 1
	for _, d := range o.yDims {
		batches *= d
	}
	if batches == 0 {
		return nil
	}
	// Strides, in matrices, of each batch dimension (0 where broadcast).
	o.aStride = batchStrides(o.aStride, o.aDims)
	o.bStride = batchStrides(o.bStride, o.bDims)
	o.index = o.index[:0]
	for range nd {
		o.index = append(o.index, 0)
	}
	lda, ldb := ld(k), ld(n)
	if o.transA {
		lda = ld(m)
	}
	if o.transB {
		ldb = ld(k)
	}
	aMat, bMat, yMat := m*k, k*n, m*n
	ai, bi := 0, 0
	for t := 0; t < batches; t++ {
		gemm.Gemm(threads, o.transA, o.transB, m, n, k, 1, A[ai*aMat:], lda, B[bi*bMat:], ldb, 0, Y[t*yMat:], ld(n))
		for d := nd - 1; d >= 0; d-- {
			o.index[d]++
			ai += o.aStride[d]
			bi += o.bStride[d]
			if o.index[d] < o.yDims[d] {
				break
			}
			ai -= o.aStride[d] * o.yDims[d]
			bi -= o.bStride[d] * o.yDims[d]
			o.index[d] = 0
		}
	}
	return nil
}

// padDims sets dst to dims right-aligned in n dimensions, padded with 1s on
// the left.
func padDims(dst, dims []int, n int) []int {
	dst = dst[:0]
	for i := len(dims); i < n; i++ {
		dst = append(dst, 1)
	}
	return append(dst, dims...)
}

// batchStrides sets dst to the stride, counted in matrices, of each batch
// dimension, 0 for a dimension of size 1 (which broadcasts).
func batchStrides(dst, dims []int) []int {
	dst = append(dst[:0], dims...)
	s := 1
	for i := len(dims) - 1; i >= 0; i-- {
		if dims[i] == 1 {
			dst[i] = 0
		} else {
			dst[i] = s
		}
		s *= dims[i]
	}
	return dst
}
