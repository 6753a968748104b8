package reduce

import (
	"fmt"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/internal/vec"
)

func init() {
	args := []operators.ArgSpec{
		{Name: "k", Doc: "number of elements to keep (required, >= 1)"},
		{Name: "axis", Default: -1, Doc: "the axis to search (negative counts from the end)"},
	}
	operators.MustRegisterCPU(operators.Schema{
		Type:      "TopK",
		MinInputs: 1, MaxInputs: 1, MinOutputs: 2, MaxOutputs: 3,
		Args: args,
		Doc: "X → (Values, Indices[, FlattenIndices]): the k largest elements along axis in descending order " +
			"(lower index first on ties), their int64 indices along axis, and optionally their indices into " +
			"the flattened X. When k exceeds the axis, values are padded with 0 and indices with −1.",
	}, newTopK)
	operators.MustRegisterCPU(operators.Schema{
		Type:      "TopKGradient",
		MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Args: args,
		Doc:  "(dValues, Indices, X) → dX: dValues scattered to the indices, 0 elsewhere.",
	}, newTopKGradient)
	operators.MustRegisterGradient("TopK", func(g *operators.GradientContext) error {
		g.Op("TopKGradient", []string{g.GO(0), g.O(1), g.I(0)}, []string{g.GI(0)})
		return nil
	})
}

type topKOp struct {
	*operators.Base
	k       int
	axis    int
	outDims []int
	heap    []int64 // scratch: indices along the axis of the current best k
}

func newTopK(b *operators.Base) (operators.Operator, error) {
	k := b.ArgInt("k", -1)
	if k < 1 {
		return nil, fmt.Errorf("argument \"k\" must be >= 1, got %d", k)
	}
	return &topKOp{Base: b, k: int(k), axis: int(b.ArgInt("axis", -1))}, nil
}

func (o *topKOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	dt := x.DataType()
	if err := checkType(o.Base, 0, dt, true); err != nil {
		return err
	}
	axis, err := canonicalAxis(o.Base, o.axis, x.NumDims(), 0)
	if err != nil {
		return err
	}
	dims := x.Dims()
	prev, n, next := x.SizeToDim(axis), dims[axis], x.SizeFromDim(axis+1)
	o.outDims = append(o.outDims[:0], dims...)
	o.outDims[axis] = o.k
	values, indices := o.Output(0), o.Output(1)
	if err := values.Init(dt, o.outDims...); err != nil {
		return o.outputError(0, err)
	}
	if err := indices.Init(blob.Int64, o.outDims...); err != nil {
		return o.outputError(1, err)
	}
	var flat []int64
	if o.NumOutputs() > 2 {
		f := o.Output(2)
		if err := f.Init(blob.Int64, indices.Size()); err != nil {
			return o.outputError(2, err)
		}
		flat = blob.Data[int64](f)
	}
	if values.Size() == 0 {
		return nil // else the kernel would loop over the 2^31 rows beside the output's 0
	}
	// The heap holds the best of the n elements along the axis: no more
	// than n, however large k is, and none when X is empty (n may be
	// anything beside a 0).
	m := min(o.k, n)
	if x.Size() == 0 {
		m = 0
	}
	if cap(o.heap) < m {
		o.heap = make([]int64, 0, m)
	}
	s := topKShape{prev: prev, n: n, next: next, k: o.k}
	idx := blob.Data[int64](indices)
	switch dt {
	case blob.Float32:
		topK(s, blob.Data[float32](x), blob.Data[float32](values), idx, flat, o.heap)
	case blob.Float64:
		topK(s, blob.Data[float64](x), blob.Data[float64](values), idx, flat, o.heap)
	case blob.Int32:
		topK(s, blob.Data[int32](x), blob.Data[int32](values), idx, flat, o.heap)
	case blob.Int64:
		topK(s, blob.Data[int64](x), blob.Data[int64](values), idx, flat, o.heap)
	}
	return nil
}

// outputError names output i and the k that sized it.
func (o *topKOp) outputError(i int, err error) error {
	return o.Errorf("output %d (%q) with k = %d: %w", i, o.OutputName(i), o.k, err)
}

// topKShape is the view of X as prev × n × next, reduced along n to k.
type topKShape struct{ prev, n, next, k int }

// topK writes, for every (i, j) of prev × next, the k largest of
// x[i, ·, j] in descending order (lower index first on ties) and their
// indices, padding with 0 and −1 when k > n; flat, when not nil, gets the
// indices into the flattened x. heap is scratch with capacity ≥ min(k, n).
func topK[T number](s topKShape, x, values []T, indices, flat, heap []int64) {
	clear(values)
	vec.Fill(indices, -1)
	vec.Fill(flat, -1)
	m := min(s.k, s.n)
	h := topKHeap[T]{x: x, stride: s.next}
	for i := range s.prev {
		for j := range s.next {
			h.src, h.h = i*s.n*s.next+j, heap[:0]
			var worst T // value of the root once the heap is full
			for e, p := int64(0), h.src; e < int64(s.n); e, p = e+1, p+s.next {
				v := x[p]
				switch {
				case len(h.h) < m:
					h.h = append(h.h, e)
					h.up(len(h.h) - 1)
					worst = h.at(h.h[0])
				case v > worst:
					h.h[0] = e
					h.down(0)
					worst = h.at(h.h[0])
				}
			}
			dst := i*s.k*s.next + j
			for p := len(h.h) - 1; p >= 0; p-- {
				e := h.h[0]
				pos := dst + p*s.next
				values[pos], indices[pos] = h.at(e), e
				if flat != nil {
					flat[pos] = int64(h.src) + e*int64(s.next)
				}
				h.h[0] = h.h[len(h.h)-1]
				h.h = h.h[:len(h.h)-1]
				h.down(0)
			}
		}
	}
}

// topKHeap is a binary heap of indices along the axis of one slice of x,
// x[src], x[src+stride], …, with the worst-ranked entry at the root.
type topKHeap[T number] struct {
	x           []T
	src, stride int
	h           []int64
}

// at returns the value of entry e.
func (t *topKHeap[T]) at(e int64) T { return t.x[t.src+int(e)*t.stride] }

// worse reports whether entry a ranks below entry b: a smaller value, or an
// equal value at a higher index.
func (t *topKHeap[T]) worse(a, b int64) bool {
	va, vb := t.at(a), t.at(b)
	return va < vb || (va == vb && a > b)
}

// up restores the heap order after h[i] changed.
func (t *topKHeap[T]) up(i int) {
	h := t.h
	for i > 0 {
		p := (i - 1) / 2
		if !t.worse(h[i], h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

// down restores the heap order below h[i].
func (t *topKHeap[T]) down(i int) {
	h := t.h
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && t.worse(h[c+1], h[c]) {
			c++
		}
		if !t.worse(h[c], h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

type topKGradientOp struct {
	*operators.Base
	axis int
}

func newTopKGradient(b *operators.Base) (operators.Operator, error) {
	return &topKGradientOp{Base: b, axis: int(b.ArgInt("axis", -1))}, nil
}

func (o *topKGradientOp) Run() error {
	dv, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	idx, err := o.InputOf(1, blob.Int64)
	if err != nil {
		return err
	}
	x, err := o.Input(2)
	if err != nil {
		return err
	}
	vd, xd := dv.Dims(), x.Dims()
	if len(vd) != len(xd) {
		return o.Errorf("gradient input %q has shape %v, but %q has shape %v: their ranks must match", o.InputName(0), vd, o.InputName(2), xd)
	}
	axis, err := canonicalAxis(o.Base, o.axis, len(vd), 0)
	if err != nil {
		return err
	}
	for d := range vd {
		if d != axis && vd[d] != xd[d] {
			return o.Errorf("gradient input %q has shape %v, but %q has shape %v: they may differ only along axis %d", o.InputName(0), vd, o.InputName(2), xd, axis)
		}
	}
	if idx.Size() != dv.Size() {
		return o.Errorf("indices %q have shape %v, want that of %q, %v", o.InputName(1), idx.Dims(), o.InputName(0), vd)
	}
	dx := o.Output(0)
	if err := dx.Init(dv.DataType(), xd...); err != nil {
		return err
	}
	if dv.Size() == 0 {
		// Nothing to scatter: dX is zeros, at once however large the dims
		// beside dValues' 0 (the kernel loops over them).
		clear(blob.Data[float32](dx))
		clear(blob.Data[float64](dx))
		return nil
	}
	s := topKShape{prev: dv.SizeToDim(axis), n: xd[axis], next: dv.SizeFromDim(axis + 1), k: vd[axis]}
	var bad int64
	if dv.DataType() == blob.Float32 {
		bad = topKBackward(s, blob.Data[float32](dv), blob.Data[int64](idx), blob.Data[float32](dx))
	} else {
		bad = topKBackward(s, blob.Data[float64](dv), blob.Data[int64](idx), blob.Data[float64](dx))
	}
	if bad >= 0 {
		return o.Errorf("indices %q hold %d, out of range for axis %d of %q (size %d)", o.InputName(1), bad, axis, o.InputName(2), s.n)
	}
	return nil
}

// topKBackward scatters dv into dx at the indices (−1 entries skipped). It
// returns the first index out of [0, n), or −1 when all are in range.
func topKBackward[T number](s topKShape, dv []T, indices []int64, dx []T) int64 {
	clear(dx)
	for i := range s.prev {
		for j := range s.next {
			src, dst := i*s.k*s.next+j, i*s.n*s.next+j
			for p := range s.k {
				e := indices[src+p*s.next]
				if e < 0 {
					continue
				}
				if e >= int64(s.n) {
					return e
				}
				dx[dst+int(e)*s.next] = dv[src+p*s.next]
			}
		}
	}
	return -1
}
