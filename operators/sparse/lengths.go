package sparse

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/internal/vec"
)

// reduceKind is the reduction a segment operator applies to its rows.
type reduceKind int

const (
	reduceSum reduceKind = iota
	reduceMean
	reduceWeightedSum
	reduceMax
)

// layout gives the input positions of a segment reduction (-1: absent).
type layout struct{ data, weights, indices, lengths int }

var (
	sparseLayout         = layout{data: 0, weights: -1, indices: 1, lengths: 2}
	sparseWeightedLayout = layout{data: 0, weights: 1, indices: 2, lengths: 3}
	denseLayout          = layout{data: 0, weights: -1, indices: -1, lengths: 1}
	denseWeightedLayout  = layout{data: 0, weights: 1, indices: -1, lengths: 2}
)

func init() {
	fwd := []struct {
		typ  string
		kind reduceKind
		l    layout
		doc  string
	}{
		{"SparseLengthsSum", reduceSum, sparseLayout, "(DATA, INDICES, LENGTHS) -> OUTPUT: row m of OUTPUT is the sum of the rows DATA[INDICES[k]] of segment m, whose sizes LENGTHS gives."},
		{"SparseLengthsMean", reduceMean, sparseLayout, "(DATA, INDICES, LENGTHS) -> OUTPUT: SparseLengthsSum divided by each segment's length (an empty segment gives 0)."},
		{"SparseLengthsWeightedSum", reduceWeightedSum, sparseWeightedLayout, "(DATA, WEIGHTS, INDICES, LENGTHS) -> OUTPUT: row m of OUTPUT is Σ WEIGHTS[k]·DATA[INDICES[k]] over segment m."},
		{"LengthsSum", reduceSum, denseLayout, "(DATA, LENGTHS) -> OUTPUT: row m of OUTPUT is the sum of the rows of DATA in segment m; sum(LENGTHS) = dim 0 of DATA."},
		{"LengthsMean", reduceMean, denseLayout, "(DATA, LENGTHS) -> OUTPUT: the mean of the rows of DATA in each segment (an empty segment gives 0)."},
		{"LengthsMax", reduceMax, denseLayout, "(DATA, LENGTHS) -> OUTPUT: the element-wise maximum of the rows of DATA in each segment (an empty segment gives 0)."},
		{"LengthsWeightedSum", reduceWeightedSum, denseWeightedLayout, "(DATA, SCALARS, LENGTHS) -> OUTPUT: row m of OUTPUT is Σ SCALARS[k]·DATA[k] over segment m."},
	}
	for _, f := range fwd {
		f := f
		n := 3
		if f.l.weights >= 0 {
			n++
		}
		if f.l.indices < 0 {
			n--
		}
		var args []operators.ArgSpec
		if f.kind == reduceWeightedSum {
			args = []operators.ArgSpec{{Name: "grad_on_weights", Default: 0, Doc: "1 also gives the gradient of the weights"}}
		}
		operators.MustRegisterCPU(operators.Schema{
			Type: f.typ, MinInputs: n, MaxInputs: n, MinOutputs: 1, MaxOutputs: 1, Args: args, Doc: f.doc,
		}, func(b *operators.Base) (operators.Operator, error) {
			return &lengthsOp{Base: b, kind: f.kind, l: f.l}, nil
		})
		operators.MustRegisterShapeFunc(f.typ, shapeRows(f.l.data, f.l.lengths, blob.Float32))
	}
	operators.MustRegisterGradient("SparseLengthsSum", func(g *operators.GradientContext) error {
		return sparseGrad(g, "SparseLengthsIndicesInGradientSumGradient", []string{g.GO(0), g.I(2), g.I(1)})
	})
	operators.MustRegisterGradient("SparseLengthsMean", func(g *operators.GradientContext) error {
		return sparseGrad(g, "SparseLengthsMeanGradient", []string{g.GO(0), g.I(2)})
	})
	operators.MustRegisterGradient("SparseLengthsWeightedSum", func(g *operators.GradientContext) error {
		if g.ArgInt("grad_on_weights", 0) != 0 {
			_, v := g.GISparse(0)
			g.Op("SparseLengthsWeightedSumWithMainInputGradient", []string{g.I(1), g.GO(0), g.I(3), g.I(0), g.I(2)}, []string{v, g.GI(1)})
			g.SetGradient(0, operators.Gradient{Indices: g.I(2), Values: v})
			return nil
		}
		return sparseGrad(g, "SparseLengthsWeightedSumGradient", []string{g.I(1), g.GO(0), g.I(3)})
	})
	operators.MustRegisterGradient("LengthsSum", func(g *operators.GradientContext) error {
		g.Op("LengthsIndicesInGradientSumGradient", []string{g.GO(0), g.I(1), g.I(0)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterGradient("LengthsMean", func(g *operators.GradientContext) error {
		g.Op("LengthsMeanGradient", []string{g.GO(0), g.I(1)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterGradient("LengthsMax", func(g *operators.GradientContext) error {
		g.Op("LengthsMaxWithMainInputAndForwardOutputGradient", []string{g.O(0), g.GO(0), g.I(1), g.I(0)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterGradient("LengthsWeightedSum", func(g *operators.GradientContext) error {
		if g.ArgInt("grad_on_weights", 0) != 0 {
			g.Op("LengthsWeightedSumWithMainInputGradient", []string{g.I(1), g.GO(0), g.I(2), g.I(0)}, []string{g.GI(0), g.GI(1)})
			return nil
		}
		g.Op("LengthsWeightedSumGradient", []string{g.I(1), g.GO(0), g.I(2)}, []string{g.GI(0)})
		return nil
	})

	// The gradient operators: (…, dOUTPUT, LENGTHS, …) -> dDATA with one
	// row per index (or per row of DATA), and dWEIGHTS for the
	// WithMainInput ones. g is the position of dOUTPUT.
	grads := []struct {
		typ      string
		kind     reduceKind
		n        int
		g        layoutG
		withMain bool
		doc      string
	}{
		{"SparseLengthsSumGradient", reduceSum, 2, layoutG{-1, 0, 1, -1, -1, -1}, false, "(dOUTPUT, LENGTHS) -> dDATA values: row k is dOUTPUT's row of the segment of index k."},
		{"SparseLengthsIndicesInGradientSumGradient", reduceSum, 3, layoutG{-1, 0, 1, -1, -1, -1}, false, "(dOUTPUT, LENGTHS, INDICES) -> dDATA values: the gradient of SparseLengthsSum (INDICES are not read on the CPU)."},
		{"SparseLengthsMeanGradient", reduceMean, 2, layoutG{-1, 0, 1, -1, -1, -1}, false, "(dOUTPUT, LENGTHS) -> dDATA values: dOUTPUT's row of each index's segment divided by its length."},
		{"SparseLengthsWeightedSumGradient", reduceWeightedSum, 3, layoutG{0, 1, 2, -1, -1, -1}, false, "(WEIGHTS, dOUTPUT, LENGTHS) -> dDATA values: WEIGHTS[k] times dOUTPUT's row of the segment of index k."},
		{"SparseLengthsWeightedSumWithMainInputGradient", reduceWeightedSum, 5, layoutG{0, 1, 2, 3, 4, -1}, true, "(WEIGHTS, dOUTPUT, LENGTHS, DATA, INDICES) -> (dDATA values, dWEIGHTS): dWEIGHTS[k] = ⟨dOUTPUT[segment of k], DATA[INDICES[k]]⟩."},
		{"LengthsSumGradient", reduceSum, 2, layoutG{-1, 0, 1, -1, -1, -1}, false, "(dOUTPUT, LENGTHS) -> dDATA: row k is dOUTPUT's row of the segment of row k."},
		{"LengthsIndicesInGradientSumGradient", reduceSum, 3, layoutG{-1, 0, 1, -1, -1, -1}, false, "(dOUTPUT, LENGTHS, DATA) -> dDATA: the gradient of LengthsSum (DATA is not read on the CPU)."},
		{"LengthsMeanGradient", reduceMean, 2, layoutG{-1, 0, 1, -1, -1, -1}, false, "(dOUTPUT, LENGTHS) -> dDATA: dOUTPUT's row of each row's segment divided by its length."},
		{"LengthsWeightedSumGradient", reduceWeightedSum, 3, layoutG{0, 1, 2, -1, -1, -1}, false, "(SCALARS, dOUTPUT, LENGTHS) -> dDATA: SCALARS[k] times dOUTPUT's row of the segment of row k."},
		{"LengthsWeightedSumWithMainInputGradient", reduceWeightedSum, 4, layoutG{0, 1, 2, 3, -1, -1}, true, "(SCALARS, dOUTPUT, LENGTHS, DATA) -> (dDATA, dSCALARS): dSCALARS[k] = ⟨dOUTPUT[segment of k], DATA[k]⟩."},
		{"LengthsMaxWithMainInputAndForwardOutputGradient", reduceMax, 4, layoutG{-1, 1, 2, 3, -1, 0}, false, "(OUTPUT, dOUTPUT, LENGTHS, DATA) -> dDATA: dOUTPUT where DATA equals its segment's maximum, else 0."},
	}
	for _, gd := range grads {
		gd := gd
		outs := 1
		if gd.withMain {
			outs = 2
		}
		operators.MustRegisterCPU(operators.Schema{
			Type: gd.typ, MinInputs: gd.n, MaxInputs: gd.n, MinOutputs: outs, MaxOutputs: outs, Doc: gd.doc,
		}, func(b *operators.Base) (operators.Operator, error) {
			return &lengthsGradOp{Base: b, kind: gd.kind, l: gd.g, withMain: gd.withMain}, nil
		})
		operators.MustRegisterShapeFunc(gd.typ, lengthsGradShape(gd.g, gd.withMain))
		operators.MustRegisterNoGradient(gd.typ)
	}
}

// sparseGrad emits typ(inputs) -> values and declares the gradient slice
// (INDICES of the forward operator, values) for DATA.
func sparseGrad(g *operators.GradientContext, typ string, inputs []string) error {
	_, v := g.GISparse(0)
	g.Op(typ, inputs, []string{v})
	indices := g.I(1)
	if g.NumInputs() == 4 {
		indices = g.I(2)
	}
	g.SetGradient(0, operators.Gradient{Indices: indices, Values: v})
	return nil
}

// lengthsOp is the forward segment reduction over LENGTHS, of DATA's rows
// (Lengths…) or of the rows INDICES picks (SparseLengths…).
type lengthsOp struct {
	*operators.Base
	segments
	kind reduceKind
	l    layout
	dims []int
}

func (o *lengthsOp) Run() error {
	data, err := o.InputOf(o.l.data, blob.Float32)
	if err != nil {
		return err
	}
	if data.NumDims() < 1 {
		return o.Errorf("DATA input %d (%q) must have at least 1 dim, has shape %v", o.l.data, o.InputName(o.l.data), data.Dims())
	}
	rows, w, err := o.read(o.Base, o.l, data)
	if err != nil {
		return err
	}
	o.dims = outDims(o.dims, len(o.lens), data.Dims())
	y := o.Output(0)
	if err := y.Init(blob.Float32, o.dims...); err != nil {
		return err
	}
	if y.Size() == 0 {
		return nil
	}
	reduceSegments(blob.Data[float32](y), blob.Data[float32](data), y.Size()/len(o.lens), rows, o.lens, w, o.kind)
	return nil
}

// segments reads the LENGTHS of a segment reduction, and the rows its
// positions cover, into buffers kept from run to run.
type segments struct {
	lens []int // the segments' lengths
	idx  []int // the INDICES, where there are some
}

// read reads, for a forward reduction of layout l over data, the lengths,
// the rows (see rows) and the weights (nil without them).
func (s *segments) read(b *operators.Base, l layout, data *blob.Tensor) (rows []int, w []float32, err error) {
	var total int
	if s.lens, total, err = b.LengthsInput(l.lengths, s.lens); err != nil {
		return nil, nil, err
	}
	if rows, err = s.rows(b, data, l.data, l.indices, l.lengths, total); err != nil {
		return nil, nil, err
	}
	if l.weights >= 0 {
		if w, err = floatVector(b, l.weights, total, "WEIGHTS"); err != nil {
			return nil, nil, err
		}
	}
	return rows, w, nil
}

// rows returns the rows of data (input dataIn) that the total positions of
// the segments cover: with an INDICES input (indicesIn ≥ 0), its indices,
// which must be total and each a row of data; without one, data's own rows
// (nil), which must number total.
func (s *segments) rows(b *operators.Base, data *blob.Tensor, dataIn, indicesIn, lengthsIn, total int) ([]int, error) {
	if indicesIn < 0 {
		if data.Dim(0) != total {
			return nil, b.Errorf("LENGTHS input %d (%q) adds up to %d, but DATA input %d (%q) of shape %v has %d rows",
				lengthsIn, b.InputName(lengthsIn), total, dataIn, b.InputName(dataIn), data.Dims(), data.Dim(0))
		}
		return nil, nil
	}
	var err error
	if s.idx, err = readIndices(b, indicesIn, data.Dim(0), b.InputName(dataIn), s.idx); err != nil {
		return nil, err
	}
	if len(s.idx) != total {
		return nil, b.Errorf("LENGTHS input %d (%q) adds up to %d, but INDICES input %d (%q) has %d elements",
			lengthsIn, b.InputName(lengthsIn), total, indicesIn, b.InputName(indicesIn), len(s.idx))
	}
	return s.idx, nil
}

// reduceSegments writes into out one row of block elements per segment:
// the reduction of the rows of data that the segment covers, rows[k] for
// position k (k itself when rows is nil).
func reduceSegments(out, data []float32, block int, rows, lens []int, w []float32, kind reduceKind) {
	pos := 0
	for m, l := range lens {
		o := out[m*block : (m+1)*block]
		clear(o)
		for k := pos; k < pos+l; k++ {
			r := k
			if rows != nil {
				r = rows[k]
			}
			src := data[r*block : (r+1)*block]
			switch {
			case kind == reduceWeightedSum:
				vec.AddScaled(o, src, w[k])
			case kind == reduceMax && k == pos:
				copy(o, src)
			case kind == reduceMax:
				for j, v := range src {
					if v > o[j] {
						o[j] = v
					}
				}
			default:
				vec.Add(o, src)
			}
		}
		if kind == reduceMean && l > 0 {
			s := float32(1 / float64(l))
			for j := range o {
				o[j] *= s
			}
		}
		pos += l
	}
}

// layoutG gives the input positions of a segment gradient (-1: absent).
type layoutG struct{ weights, ograd, lengths, data, indices, output int }

// lengthsGradShape: dDATA is [?] + dOUTPUT.dims[1:] (the rows are the sum
// of LENGTHS); dWEIGHTS has WEIGHTS' shape.
func lengthsGradShape(l layoutG, withMain bool) operators.ShapeFunc {
	rows := shapeRows(l.ograd, -1, blob.Float32)
	return func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		out, err := rows(b, in)
		if err != nil || !withMain || len(out) == 0 {
			return out, err
		}
		return append(out, in[l.weights]), nil
	}
}

// lengthsGradOp is the gradient of a segment reduction: for each position
// k of a segment m, row k of dDATA is dOUTPUT[m] scaled (by the weight,
// 1/length, or the max mask).
type lengthsGradOp struct {
	*operators.Base
	segments
	kind     reduceKind
	l        layoutG
	withMain bool
	dims     []int
}

func (o *lengthsGradOp) Run() error {
	gy, err := o.InputOf(o.l.ograd, blob.Float32)
	if err != nil {
		return err
	}
	var total int
	if o.lens, total, err = o.LengthsInput(o.l.lengths, o.lens); err != nil {
		return err
	}
	if gy.NumDims() < 1 || gy.Dim(0) != len(o.lens) {
		return o.Errorf("dOUTPUT input %d (%q) of shape %v must have one row per segment of LENGTHS input %d (%q), %d",
			o.l.ograd, o.InputName(o.l.ograd), gy.Dims(), o.l.lengths, o.InputName(o.l.lengths), len(o.lens))
	}
	var w []float32
	if o.l.weights >= 0 {
		if w, err = floatVector(o.Base, o.l.weights, total, "WEIGHTS"); err != nil {
			return err
		}
	}
	var data []float32
	var rows []int
	if o.l.data >= 0 {
		d, err := o.InputOf(o.l.data, blob.Float32)
		if err != nil {
			return err
		}
		if d.NumDims() != gy.NumDims() || !equalDims(d.Dims()[1:], gy.Dims()[1:]) {
			return o.Errorf("DATA input %d (%q) of shape %v and dOUTPUT input %d (%q) of shape %v differ after dim 0",
				o.l.data, o.InputName(o.l.data), d.Dims(), o.l.ograd, o.InputName(o.l.ograd), gy.Dims())
		}
		if rows, err = o.rows(o.Base, d, o.l.data, o.l.indices, o.l.lengths, total); err != nil {
			return err
		}
		data = blob.Data[float32](d)
	}
	var fwd []float32
	if o.l.output >= 0 {
		f, err := o.InputOf(o.l.output, blob.Float32)
		if err != nil {
			return err
		}
		if !equalDims(f.Dims(), gy.Dims()) {
			return o.Errorf("OUTPUT input %d (%q) of shape %v and dOUTPUT input %d (%q) of shape %v differ",
				o.l.output, o.InputName(o.l.output), f.Dims(), o.l.ograd, o.InputName(o.l.ograd), gy.Dims())
		}
		fwd = blob.Data[float32](f)
	}
	o.dims = outDims(o.dims, total, gy.Dims())
	gx := o.Output(0)
	if err := gx.Init(blob.Float32, o.dims...); err != nil {
		return err
	}
	var gw []float32
	if o.withMain {
		t := o.Output(1)
		if err := t.Init(blob.Float32, total); err != nil {
			return err
		}
		gw = blob.Data[float32](t)
		clear(gw)
	}
	if gx.Size() == 0 {
		return nil
	}
	block := gx.Size() / total
	dx, g := blob.Data[float32](gx), blob.Data[float32](gy)
	pos := 0
	for m, l := range o.lens {
		gm := g[m*block : (m+1)*block]
		for k := pos; k < pos+l; k++ {
			dk := dx[k*block : (k+1)*block]
			switch o.kind {
			case reduceSum:
				copy(dk, gm)
			case reduceMean:
				s := float32(1 / float64(l))
				for j, v := range gm {
					dk[j] = v * s
				}
			case reduceWeightedSum:
				for j, v := range gm {
					dk[j] = w[k] * v
				}
			case reduceMax:
				src, fm := data[k*block:(k+1)*block], fwd[m*block:(m+1)*block]
				for j, v := range gm {
					dk[j] = 0
					if src[j] == fm[j] {
						dk[j] = v
					}
				}
			}
			if gw != nil {
				r := k
				if rows != nil {
					r = rows[k]
				}
				var dot float32
				for j, v := range data[r*block : (r+1)*block] {
					dot += gm[j] * v
				}
				gw[k] = dot
			}
		}
		pos += l
	}
	return nil
}

func equalDims(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
