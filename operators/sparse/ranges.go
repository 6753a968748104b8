package sparse

import (
	"container/heap"
	"slices"
	"sort"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "GatherRanges", MinInputs: 2, MaxInputs: 2, MinOutputs: 2, MaxOutputs: 2,
		Doc: "(DATA [N], RANGES [B, F, 2] of (start, length)) -> (OUTPUT, LENGTHS INT32 [B]): the ranges of DATA concatenated, " +
			"and the total length of each example's ranges.",
	}, func(b *operators.Base) (operators.Operator, error) { return &rangesOp{Base: b}, nil })
	operators.MustRegisterShapeFunc("GatherRanges", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		return []operators.TensorShape{operators.Shape(in[0].Type, operators.AnyDim), operators.Shape(blob.Int32, dim0(in[1]))}, nil
	})
	operators.MustRegisterNoGradient("GatherRanges")

	operators.MustRegisterCPU(operators.Schema{
		Type: "GatherRangesToDense", MinInputs: 2, MaxInputs: 3, MinOutputs: 1, MaxOutputs: operators.Unbounded,
		Args: []operators.ArgSpec{
			{Name: "lengths", Doc: "the length of each feature's ranges, one per output (required, > 0)"},
			{Name: "min_observation", Default: 10000, Doc: "examples seen before the ratios below are enforced"},
			{Name: "max_mismatched_ratio", Default: 0.01, Doc: "the largest share of ranges whose length is not the feature's"},
			{Name: "max_empty_ratio", Default: 1.0, Doc: "the largest share of empty ranges"},
		},
		Doc: "(DATA [N], RANGES [B, F, 2][, KEY INT64 [N]]) -> F outputs [B, lengths[f]]: each range of the feature's length, " +
			"sorted by KEY when given; empty or mismatched ranges give zeros.",
	}, newGatherRangesToDense)
	operators.MustRegisterShapeFunc("GatherRangesToDense", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		var out []operators.TensorShape
		for _, l := range b.ArgInts("lengths", nil) {
			out = append(out, operators.Shape(in[0].Type, dim0(in[1]), max(int(l), operators.AnyDim)))
		}
		return out, nil
	})
	operators.MustRegisterNoGradient("GatherRangesToDense")

	operators.MustRegisterCPU(operators.Schema{
		Type: "MergeIdLists", MinInputs: 2, MaxInputs: operators.Unbounded, MinOutputs: 2, MaxOutputs: 2,
		InputsCheck: func(n int) bool { return n%2 == 0 },
		Doc: "(LENGTHS_0, VALUES_0, LENGTHS_1, VALUES_1, ...) -> (MERGED_LENGTHS INT32, MERGED_VALUES): per example, " +
			"the union of its id lists, sorted, without repeats.",
	}, func(b *operators.Base) (operators.Operator, error) { return &rangesOp{Base: b}, nil })
	operators.MustRegisterShapeFunc("MergeIdLists", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		return []operators.TensorShape{operators.Shape(blob.Int32, dim0(in[0])), operators.Shape(in[1].Type, operators.AnyDim)}, nil
	})
	operators.MustRegisterNoGradient("MergeIdLists")

	operators.MustRegisterCPU(operators.Schema{
		Type: "LengthsTopK", MinInputs: 2, MaxInputs: 2, MinOutputs: 2, MaxOutputs: 2,
		Args: []operators.ArgSpec{{Name: "k", Default: -1, Doc: "how many values to keep per segment (required, > 0)"}},
		Doc: "(X, LENGTHS) -> (TOPK_VALUES [N, k], TOPK_INDICES INT32 [N, k]): each segment's k largest values, largest first, " +
			"and their positions in the segment; short segments are padded with 0 and -1.",
	}, newLengthsTopK)
	operators.MustRegisterShapeFunc("LengthsTopK", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		k := max(int(b.ArgInt("k", -1)), operators.AnyDim)
		return []operators.TensorShape{operators.Shape(blob.Float32, dim0(in[1]), k), operators.Shape(blob.Int32, dim0(in[1]), k)}, nil
	})
	operators.MustRegisterGradient("LengthsTopK", func(g *operators.GradientContext) error {
		g.Op("LengthsTopKGradient", []string{g.I(1), g.O(1), g.GO(0)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterCPU(operators.Schema{
		Type: "LengthsTopKGradient", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Doc: "(LENGTHS, TOPK_INDICES, dTOPK_VALUES) -> dX: each kept value's gradient at its position, 0 elsewhere.",
	}, newLengthsTopK)
	operators.MustRegisterShapeFunc("LengthsTopKGradient", vectorShape(blob.Float32))
	operators.MustRegisterNoGradient("LengthsTopKGradient")
}

// rangesOp is GatherRanges or MergeIdLists.
type rangesOp struct {
	*operators.Base
	rangesInput
	lens []int
}

// rangesInput reads the inputs the GatherRanges operators begin with,
// keeping the ranges from run to run.
type rangesInput struct{ ranges []int }

// dataAndRanges reads the DATA vector (input 0) and RANGES (input 1), of
// shape [batch, f, 2] (f < 0: any number of features), whose values it
// keeps in ranges.
func (r *rangesInput) dataAndRanges(b *operators.Base, f int) (data, rt *blob.Tensor, err error) {
	if data, err = b.Input(0); err != nil {
		return nil, nil, err
	}
	if data.NumDims() != 1 {
		return nil, nil, b.Errorf("DATA input 0 (%q) must be a vector, has shape %v", b.InputName(0), data.Dims())
	}
	if r.ranges, rt, err = readInts(b, 1, "RANGES", r.ranges); err != nil {
		return nil, nil, err
	}
	switch {
	case f < 0 && (rt.NumDims() != 3 || rt.Dim(2) != 2):
		return nil, nil, b.Errorf("RANGES input 1 (%q) has shape %v, want [batch, features, 2]", b.InputName(1), rt.Dims())
	case f >= 0 && (rt.NumDims() != 3 || rt.Dim(1) != f || rt.Dim(2) != 2):
		return nil, nil, b.Errorf("RANGES input 1 (%q) has shape %v, want [batch, %d, 2]", b.InputName(1), rt.Dims(), f)
	}
	return data, rt, nil
}

func (o *rangesOp) Run() error {
	if o.Type() == "MergeIdLists" {
		return o.mergeIDLists()
	}
	data, rt, err := o.dataAndRanges(o.Base, -1)
	if err != nil {
		return err
	}
	batch := rt.Dim(0)
	total, err := checkRanges(o.Base, o.ranges, data.Size())
	if err != nil {
		return err
	}
	lens := o.Output(1)
	if err := lens.Init(blob.Int32, batch); err != nil {
		return err
	}
	y := o.Output(0)
	if err := y.Init(data.DataType(), total); err != nil {
		return err
	}
	if err := blob.CheckElements(blob.Int64, total); err != nil {
		return o.Errorf("GatherRanges of %d elements: %w", total, err)
	}
	per := 0
	if batch > 0 {
		per = len(o.ranges) / 2 / batch
	}
	from := make([]int, 0, total)
	ls := blob.Data[int32](lens)
	for b := range batch {
		n := 0
		for f := range per {
			r := o.ranges[2*(b*per+f):]
			for j := range r[1] {
				from = append(from, r[0]+j)
			}
			n += r[1]
		}
		ls[b] = int32(n)
	}
	if total > 0 {
		copyRows(y, data, 1, from)
	}
	return nil
}

// checkRanges checks (start, length) pairs against n elements and returns
// the sum of the lengths.
func checkRanges(b *operators.Base, ranges []int, n int) (int, error) {
	total := 0
	for k := 0; k < len(ranges); k += 2 {
		s, l := ranges[k], ranges[k+1]
		if s < 0 || l < 0 || s > n || l > n-s {
			return 0, b.Errorf("RANGES input 1 (%q) holds the range (%d, %d), outside DATA input 0 (%q) of %d elements", b.InputName(1), s, l, b.InputName(0), n)
		}
		total += l
	}
	return total, nil
}

func (o *rangesOp) mergeIDLists() error {
	var batch int
	var dt blob.DataType
	var lists [][2][]int
	total := 0
	for i := 0; i < o.NumInputs(); i += 2 {
		lens, lt, err := readInts(o.Base, i, "LENGTHS", nil)
		if err != nil {
			return err
		}
		vals, vt, err := readInts(o.Base, i+1, "VALUES", nil)
		if err != nil {
			return err
		}
		if i == 0 {
			batch, dt = len(lens), vt.DataType()
		}
		sum := 0
		for _, l := range lens {
			if l < 0 {
				return o.Errorf("LENGTHS input %d (%q) holds %d, must be >= 0", i, o.InputName(i), l)
			}
			sum += l
		}
		switch {
		case lt.NumDims() != 1 || len(lens) != batch:
			return o.Errorf("LENGTHS input %d (%q) has shape %v, want [%d] like input 0 (%q)", i, o.InputName(i), lt.Dims(), batch, o.InputName(0))
		case vt.NumDims() != 1 || len(vals) != sum:
			return o.Errorf("VALUES input %d (%q) has shape %v, want [%d], the sum of its lengths", i+1, o.InputName(i+1), vt.Dims(), sum)
		case vt.DataType() != dt:
			return o.Errorf("VALUES input %d (%q) has type %v, input 1 (%q) has type %v", i+1, o.InputName(i+1), vt.DataType(), o.InputName(1), dt)
		}
		lists = append(lists, [2][]int{lens, vals})
		total += sum
	}
	ml := o.Output(0)
	if err := ml.Init(blob.Int32, batch); err != nil {
		return err
	}
	merged := make([]int, 0, total)
	offsets := make([]int, len(lists))
	var set []int
	for s := range batch {
		set = set[:0]
		for i, l := range lists {
			n := l[0][s]
			set = append(set, l[1][offsets[i]:offsets[i]+n]...)
			offsets[i] += n
		}
		slices.Sort(set)
		set = slices.Compact(set)
		merged = append(merged, set...)
		blob.Data[int32](ml)[s] = int32(len(set))
	}
	mv := o.Output(1)
	if err := mv.Init(dt, len(merged)); err != nil {
		return err
	}
	setInts(mv, merged)
	return nil
}

type gatherRangesToDenseOp struct {
	*operators.Base
	lengths               []int
	minObs                int64
	maxMismatch, maxEmpty float64
	total                 int64
	empty, mismatched     []int64
	rangesInput
}

func newGatherRangesToDense(b *operators.Base) (operators.Operator, error) {
	o := &gatherRangesToDenseOp{Base: b, minObs: b.ArgInt("min_observation", 10000),
		maxMismatch: float64(b.ArgFloat("max_mismatched_ratio", 0.01)), maxEmpty: float64(b.ArgFloat("max_empty_ratio", 1))}
	for _, l := range b.ArgInts("lengths", nil) {
		if l <= 0 || l > 1<<31 {
			return nil, b.Errorf("argument lengths holds %d: each length must be > 0", l)
		}
		o.lengths = append(o.lengths, int(l))
	}
	switch {
	case len(o.lengths) == 0:
		return nil, b.Errorf("argument lengths must hold at least one length")
	case len(o.lengths) != b.NumOutputs():
		return nil, b.Errorf("argument lengths has %d lengths for %d outputs", len(o.lengths), b.NumOutputs())
	case o.minObs <= 0:
		return nil, b.Errorf("argument min_observation is %d, must be > 0", o.minObs)
	}
	o.empty, o.mismatched = make([]int64, len(o.lengths)), make([]int64, len(o.lengths))
	return o, nil
}

func (o *gatherRangesToDenseOp) Run() error {
	f := len(o.lengths)
	data, rt, err := o.dataAndRanges(o.Base, f)
	if err != nil {
		return err
	}
	if _, err := checkRanges(o.Base, o.ranges, data.Size()); err != nil {
		return err
	}
	var key []int64
	if o.NumInputs() == 3 {
		kt, err := o.InputOf(2, blob.Int64)
		if err != nil {
			return err
		}
		if kt.NumDims() != 1 || kt.Size() != data.Size() {
			return o.Errorf("KEY input 2 (%q) has shape %v, want [%d] like DATA", o.InputName(2), kt.Dims(), data.Size())
		}
		key = blob.Data[int64](kt)
	}
	batch := rt.Dim(0)
	outs := make([]*blob.Tensor, f)
	for j := range f {
		outs[j] = o.Output(j)
		if err := outs[j].Init(data.DataType(), batch, o.lengths[j]); err != nil {
			return err
		}
		zero, err := blob.New(data.DataType(), 1)
		if err != nil {
			return err
		}
		if outs[j].Size() > 0 {
			copyRows(outs[j], zero, 1, make([]int, outs[j].Size()))
		}
	}
	var to, from []int
	for j := range f {
		to, from = to[:0], from[:0]
		for i := range batch {
			start, l := o.ranges[2*(i*f+j)], o.ranges[2*(i*f+j)+1]
			if l == 0 {
				o.empty[j]++
				continue
			}
			if l != o.lengths[j] {
				o.mismatched[j]++
				continue
			}
			src := make([]int, l)
			for b := range src {
				src[b] = start + b
			}
			if key != nil {
				sort.SliceStable(src, func(a, b int) bool { return key[src[a]] < key[src[b]] })
			}
			for b, s := range src {
				to, from = append(to, i*l+b), append(from, s)
			}
		}
		if len(to) > 0 {
			moveRows(outs[j], data, 1, to, from)
		}
	}
	o.total += int64(batch)
	seen := float64(max(o.total, o.minObs))
	for j := range f {
		if o.maxMismatch < 1 && seen*o.maxMismatch < float64(o.mismatched[j]) {
			return o.Errorf("the ratio of ranges of feature %d whose length is not %d is %d/%d, above max_mismatched_ratio %g",
				j, o.lengths[j], o.mismatched[j], o.total, o.maxMismatch)
		}
		if o.maxEmpty < 1 && seen*o.maxEmpty < float64(o.empty[j]) {
			return o.Errorf("the ratio of empty ranges of feature %d is %d/%d, above max_empty_ratio %g", j, o.empty[j], o.total, o.maxEmpty)
		}
	}
	return nil
}

type lengthsTopKOp struct {
	*operators.Base
	k    int
	lens []int
	idx  []int
}

func newLengthsTopK(b *operators.Base) (operators.Operator, error) {
	o := &lengthsTopKOp{Base: b}
	if b.Type() == "LengthsTopK" {
		k := b.ArgInt("k", -1)
		if k <= 0 || k > 1<<31 {
			return nil, b.Errorf("argument k is %d, must be > 0", k)
		}
		o.k = int(k)
	}
	return o, nil
}

// topItem is a (value, position) pair of LengthsTopK's min-heap.
type topItem struct {
	v float32
	j int
}

func less(a, b topItem) bool { return a.v < b.v || a.v == b.v && a.j < b.j }

type topHeap []topItem

func (h topHeap) Len() int           { return len(h) }
func (h topHeap) Less(i, j int) bool { return less(h[i], h[j]) }
func (h topHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *topHeap) Push(x any)        { *h = append(*h, x.(topItem)) }
func (h *topHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (o *lengthsTopKOp) Run() error {
	if o.Type() == "LengthsTopKGradient" {
		return o.runGrad()
	}
	x, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	var total int
	if o.lens, total, err = o.LengthsInput(1, o.lens); err != nil {
		return err
	}
	if x.Size() != total {
		return o.Errorf("X input 0 (%q) has %d elements, LENGTHS input 1 (%q) adds up to %d", o.InputName(0), x.Size(), o.InputName(1), total)
	}
	n := len(o.lens)
	vals, inds := o.Output(0), o.Output(1)
	if err := vals.Init(blob.Float32, n, o.k); err != nil {
		return err
	}
	if err := inds.Init(blob.Int32, n, o.k); err != nil {
		return err
	}
	in, ov, oi := blob.Data[float32](x), blob.Data[float32](vals), blob.Data[int32](inds)
	var h topHeap
	next := 0
	for i, l := range o.lens {
		// Caffe2's min-heap of (value, position): a value enters when the
		// heap is not full or it beats the smallest kept value.
		h = h[:0]
		for j := range l {
			v := in[next]
			next++
			if len(h) < o.k || v > h[0].v {
				heap.Push(&h, topItem{v, j})
			}
			if len(h) > o.k {
				heap.Pop(&h)
			}
		}
		kept := len(h)
		for j := range o.k {
			if j < kept {
				it := heap.Pop(&h).(topItem)
				ov[i*o.k+kept-j-1], oi[i*o.k+kept-j-1] = it.v, int32(it.j)
			} else {
				ov[i*o.k+j], oi[i*o.k+j] = 0, -1
			}
		}
	}
	return nil
}

func (o *lengthsTopKOp) runGrad() error {
	var err error
	var total int
	if o.lens, total, err = o.LengthsInput(0, o.lens); err != nil {
		return err
	}
	var it *blob.Tensor
	if o.idx, it, err = readInts(o.Base, 1, "TOPK_INDICES", o.idx); err != nil {
		return err
	}
	g, err := o.InputOf(2, blob.Float32)
	if err != nil {
		return err
	}
	n := len(o.lens)
	if it.NumDims() != 2 || it.Dim(0) != n || !equalDims(g.Dims(), it.Dims()) {
		return o.Errorf("TOPK_INDICES input 1 (%q) of shape %v and dTOPK_VALUES input 2 (%q) of shape %v must both be [%d, k]",
			o.InputName(1), it.Dims(), o.InputName(2), g.Dims(), n)
	}
	k := it.Dim(1)
	y := o.Output(0)
	if err := y.Init(blob.Float32, total); err != nil {
		return err
	}
	out, gv := blob.Data[float32](y), blob.Data[float32](g)
	clear(out)
	off := 0
	for i, l := range o.lens {
		for j := range k {
			p := o.idx[i*k+j]
			if p == -1 {
				continue
			}
			if p < 0 || p >= l {
				return o.Errorf("TOPK_INDICES input 1 (%q) holds %d for segment %d of length %d", o.InputName(1), p, i, l)
			}
			out[off+p] = gv[i*k+j]
		}
		off += l
	}
	return nil
}
