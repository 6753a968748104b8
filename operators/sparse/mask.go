package sparse

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "SparseToDenseMask", MinInputs: 3, MaxInputs: 4, MinOutputs: 1, MaxOutputs: 2,
		Args: []operators.ArgSpec{
			{Name: "mask", Doc: "the ids, in output order (required, distinct, >= 0)"},
			{Name: "return_presence_mask", Default: 0, Doc: "1 adds a BOOL output: which cells a value filled"},
			{Name: "max_skipped_indices", Default: 5, Doc: "how many negative indices may be skipped over the operator's life"},
		},
		Doc: "(INDICES, VALUES, DEFAULT[, LENGTHS]) -> (OUTPUT [len(LENGTHS),] len(mask), DEFAULT.dims..., [PRESENCE_MASK]): " +
			"cell (r, c) holds the value of id mask[c] in row r, else DEFAULT; ids not in mask are dropped.",
	}, newSparseToDenseMask)
	operators.MustRegisterShapeFunc("SparseToDenseMask", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		cols := len(b.ArgInts("mask", nil))
		var dims []int
		if len(in) == 4 {
			dims = append(dims, dim0(in[3]))
		}
		dims = append(dims, cols)
		out := []operators.TensorShape{operators.UnknownShape}
		if !in[2].Unknown {
			out[0] = operators.Shape(in[1].Type, append(append([]int{}, dims...), in[2].Dims...)...)
		}
		if b.NumOutputs() == 2 {
			out = append(out, operators.Shape(blob.Bool, dims...))
		}
		return out, nil
	})
	operators.MustRegisterGradient("SparseToDenseMask", func(g *operators.GradientContext) error {
		in := []string{g.I(0), g.GO(0)}
		if g.NumInputs() == 4 {
			in = append(in, g.I(3))
		}
		g.Op("SparseToDenseMaskGradient", in, []string{g.GI(1)})
		return nil
	})
	operators.MustRegisterCPU(operators.Schema{
		Type: "SparseToDenseMaskGradient", MinInputs: 2, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{{Name: "mask", Doc: "the forward operator's mask"}},
		Doc:  "(INDICES, dOUTPUT[, LENGTHS]) -> dVALUES: each value gets its cell's gradient; of repeated ids in a row only the last gets it.",
	}, newSparseToDenseMask)
	operators.MustRegisterShapeFunc("SparseToDenseMaskGradient", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		return nil, nil
	})
	operators.MustRegisterNoGradient("SparseToDenseMaskGradient")

	operators.MustRegisterCPU(operators.Schema{
		Type: "BatchSparseToDense", MinInputs: 3, MaxInputs: 4, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{
			{Name: "dense_last_dim", Default: -1, Doc: "the output's width (or dim 1 of input 3)"},
			{Name: "default_value", Default: 0.0, Doc: "the value of the cells no index names"},
		},
		Doc: "(LENGTHS, INDICES, VALUES[, SHAPER]) -> FLOAT [len(LENGTHS), dense_last_dim]: row i holds the values of its segment at their indices.",
	}, func(b *operators.Base) (operators.Operator, error) { return &batchDenseOp{Base: b, toDense: true}, nil })
	operators.MustRegisterShapeFunc("BatchSparseToDense", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		w := int(b.ArgInt("dense_last_dim", -1))
		if len(in) == 4 && in[3].Rank() == 2 {
			w = in[3].Dim(1)
		}
		return []operators.TensorShape{operators.Shape(blob.Float32, dim0(in[0]), max(w, operators.AnyDim))}, nil
	})
	operators.MustRegisterGradient("BatchSparseToDense", func(g *operators.GradientContext) error {
		g.Op("BatchDenseToSparse", []string{g.I(0), g.I(1), g.GO(0)}, []string{g.GI(2)})
		return nil
	})
	operators.MustRegisterCPU(operators.Schema{
		Type: "BatchDenseToSparse", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Doc: "(LENGTHS, INDICES, DENSE [len(LENGTHS), W]) -> FLOAT VALUES of INDICES' shape: BatchSparseToDense's inverse.",
	}, func(b *operators.Base) (operators.Operator, error) { return &batchDenseOp{Base: b}, nil })
	operators.MustRegisterShapeFunc("BatchDenseToSparse", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		return []operators.TensorShape{in[1].WithType(blob.Float32)}, nil
	})
	operators.MustRegisterGradient("BatchDenseToSparse", func(g *operators.GradientContext) error {
		g.Op("BatchSparseToDense", []string{g.I(0), g.I(1), g.GO(0), g.I(2)}, []string{g.GI(2)})
		return nil
	})
}

type sparseToDenseMaskOp struct {
	*operators.Base
	grad     bool
	ids      map[int]int
	cols     int
	presence bool
	maxSkip  int
	skipped  int
	idx      []int
	lens     []int
	dims     []int
	to, from []int
}

func newSparseToDenseMask(b *operators.Base) (operators.Operator, error) {
	mask := b.ArgInts("mask", nil)
	if len(mask) == 0 {
		return nil, b.Errorf("argument mask must list at least one id")
	}
	o := &sparseToDenseMaskOp{Base: b, grad: b.Type() == "SparseToDenseMaskGradient", ids: make(map[int]int, len(mask)), cols: len(mask),
		presence: b.ArgBool("return_presence_mask", false), maxSkip: int(b.ArgInt("max_skipped_indices", 5))}
	for i, id := range mask {
		if id < 0 {
			return nil, b.Errorf("argument mask element %d is %d: only ids >= 0 are allowed", i, id)
		}
		if _, dup := o.ids[int(id)]; dup {
			return nil, b.Errorf("argument mask names id %d twice", id)
		}
		o.ids[int(id)] = i
	}
	if o.grad {
		o.presence = false
	}
	if o.presence && b.NumOutputs() < 2 {
		return nil, b.Errorf("return_presence_mask needs a second output")
	}
	return o, nil
}

// rows reads INDICES and the optional LENGTHS (input li) and returns the
// number of rows (-1: no LENGTHS, one row without a leading dim).
func (o *sparseToDenseMaskOp) rows(li int) (int, error) {
	var err error
	var t *blob.Tensor
	if o.idx, t, err = readInts(o.Base, 0, "INDICES", o.idx); err != nil {
		return 0, err
	}
	if t.NumDims() != 1 {
		return 0, o.Errorf("INDICES input 0 (%q) must be a vector, has shape %v", o.InputName(0), t.Dims())
	}
	if o.NumInputs() <= li {
		o.lens = append(o.lens[:0], len(o.idx))
		return -1, nil
	}
	var total int
	if o.lens, total, err = o.LengthsInput(li, o.lens); err != nil {
		return 0, err
	}
	if total != len(o.idx) {
		return 0, o.Errorf("LENGTHS input %d (%q) adds up to %d, INDICES input 0 (%q) has %d elements", li, o.InputName(li), total, o.InputName(0), len(o.idx))
	}
	return len(o.lens), nil
}

func (o *sparseToDenseMaskOp) Run() error {
	if o.grad {
		return o.runGrad()
	}
	vals, err := o.Input(1)
	if err != nil {
		return err
	}
	def, err := o.InputOf(2, vals.DataType())
	if err != nil {
		return err
	}
	rows, err := o.rows(3)
	if err != nil {
		return err
	}
	if vals.NumDims() != def.NumDims()+1 || vals.Dim(0) != len(o.idx) || !equalDims(vals.Dims()[1:], def.Dims()) {
		return o.Errorf("VALUES input 1 (%q) has shape %v, want [%d] + the shape %v of DEFAULT input 2 (%q)",
			o.InputName(1), vals.Dims(), len(o.idx), def.Dims(), o.InputName(2))
	}
	o.dims = o.dims[:0]
	if rows >= 0 {
		o.dims = append(o.dims, rows)
	} else {
		rows = 1
	}
	o.dims = append(o.dims, o.cols)
	var present []bool
	if o.presence {
		p := o.Output(1)
		if err := p.Init(blob.Bool, o.dims...); err != nil {
			return err
		}
		present = blob.Data[bool](p)
		clear(present)
	}
	y := o.Output(0)
	if err := y.Init(vals.DataType(), append(o.dims, def.Dims()...)...); err != nil {
		return err
	}
	cells := rows * o.cols
	block := def.Size()
	o.to, o.from = o.to[:0], o.from[:0]
	off := 0
	for r := range rows {
		for c := range o.lens[r] {
			id := o.idx[off+c]
			if id < 0 || id >= math.MaxInt32 && o.isInt32() {
				o.skipped++
				if o.skipped >= o.maxSkip {
					return o.Errorf("too many sparse indices skipped: INDICES input 0 (%q) element %d is %d", o.InputName(0), off+c, id)
				}
				continue
			}
			if col, ok := o.ids[id]; ok {
				o.to, o.from = append(o.to, r*o.cols+col), append(o.from, off+c)
				if present != nil {
					present[r*o.cols+col] = true
				}
			}
		}
		off += o.lens[r]
	}
	if y.Size() == 0 {
		return nil
	}
	fill := make([]int, cells)
	copyRows(y, def, block, fill)
	moveRows(y, vals, block, o.to, o.from)
	return nil
}

func (o *sparseToDenseMaskOp) isInt32() bool {
	t, _ := o.Input(0)
	return t.DataType() == blob.Int32
}

func (o *sparseToDenseMaskOp) runGrad() error {
	g, err := o.Input(1)
	if err != nil {
		return err
	}
	rows, err := o.rows(2)
	if err != nil {
		return err
	}
	lead := 1
	if rows < 0 {
		rows, lead = 1, 0
	}
	if g.NumDims() < lead+1 || (lead == 1 && g.Dim(0) != rows) || g.Dim(lead) != o.cols {
		return o.Errorf("dOUTPUT input 1 (%q) has shape %v, want %d rows of %d cells", o.InputName(1), g.Dims(), rows, o.cols)
	}
	o.dims = append(append(o.dims[:0], len(o.idx)), g.Dims()[lead+1:]...)
	y := o.Output(0)
	if err := y.Init(g.DataType(), o.dims...); err != nil {
		return err
	}
	if y.Size() == 0 {
		return nil
	}
	block := y.Size() / len(o.idx)
	zero, err := blob.New(g.DataType(), block)
	if err != nil {
		return err
	}
	copyRows(y, zero, block, make([]int, len(o.idx)))
	o.to, o.from = o.to[:0], o.from[:0]
	used := make([]bool, o.cols)
	off := 0
	for r := range rows {
		clear(used)
		for c := o.lens[r] - 1; c >= 0; c-- {
			if col, ok := o.ids[o.idx[off+c]]; ok && !used[col] {
				used[col] = true
				o.to, o.from = append(o.to, off+c), append(o.from, r*o.cols+col)
			}
		}
		off += o.lens[r]
	}
	moveRows(y, g, block, o.to, o.from)
	return nil
}

// batchDenseOp is BatchSparseToDense (toDense) and its inverse
// BatchDenseToSparse.
type batchDenseOp struct {
	*operators.Base
	toDense bool
	lens    []int
	idx     []int
}

func (o *batchDenseOp) Run() error {
	var err error
	var total int
	if o.lens, total, err = o.LengthsInput(0, o.lens); err != nil {
		return err
	}
	var it *blob.Tensor
	if o.idx, it, err = readInts(o.Base, 1, "INDICES", o.idx); err != nil {
		return err
	}
	if it.NumDims() != 1 || len(o.idx) != total {
		return o.Errorf("INDICES input 1 (%q) has shape %v, want [%d], the sum of LENGTHS input 0 (%q)", o.InputName(1), it.Dims(), total, o.InputName(0))
	}
	x, err := o.InputOf(2, blob.Float32)
	if err != nil {
		return err
	}
	n := len(o.lens)
	if !o.toDense {
		if x.NumDims() != 2 || x.Dim(0) != n {
			return o.Errorf("DENSE input 2 (%q) has shape %v, want %d rows", o.InputName(2), x.Dims(), n)
		}
		if err := o.checkIndices(x.Dim(1)); err != nil {
			return err
		}
		y := o.Output(0)
		if err := y.Init(blob.Float32, len(o.idx)); err != nil {
			return err
		}
		out, in, w := blob.Data[float32](y), blob.Data[float32](x), x.Dim(1)
		k := 0
		for i, l := range o.lens {
			for range l {
				out[k] = in[i*w+o.idx[k]]
				k++
			}
		}
		return nil
	}
	if x.Size() != total {
		return o.Errorf("VALUES input 2 (%q) has %d elements, want %d, one per index", o.InputName(2), x.Size(), total)
	}
	w := int(o.ArgInt("dense_last_dim", -1))
	if o.NumInputs() == 4 {
		s, err := o.Input(3)
		if err != nil {
			return err
		}
		if s.NumDims() != 2 || (w != -1 && w != s.Dim(1)) {
			return o.Errorf("input 3 (%q) of shape %v must be 2-D, its dim 1 equal to dense_last_dim %d when that is set", o.InputName(3), s.Dims(), w)
		}
		w = s.Dim(1)
	}
	if w < 1 {
		return o.Errorf("dense_last_dim is %d, must be >= 1", w)
	}
	if err := o.checkIndices(w); err != nil {
		return err
	}
	y := o.Output(0)
	if err := y.Init(blob.Float32, n, w); err != nil {
		return err
	}
	out, in := blob.Data[float32](y), blob.Data[float32](x)
	dv := o.ArgFloat("default_value", 0)
	for i := range out {
		out[i] = dv
	}
	k := 0
	for i, l := range o.lens {
		for range l {
			out[i*w+o.idx[k]] = in[k]
			k++
		}
	}
	return nil
}

func (o *batchDenseOp) checkIndices(w int) error {
	for k, v := range o.idx {
		if v < 0 || v >= w {
			return o.Errorf("INDICES input 1 (%q) element %d is %d, out of range for a width of %d", o.InputName(1), k, v, w)
		}
	}
	return nil
}
