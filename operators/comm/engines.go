package comm

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/internal/parallel"
)

// tree is the SUM_TREE engine.
type tree struct {
	op     *operators.Base // for its kernel thread budget
	levels [][][]int       // per level, groups {dst, src…}
	bcast  [][]int         // the broadcast: one group {0, 1, …, n−1}
	phase  treePhase
}

// treeLevels returns Caffe2's reduction tree over n replicas.
func treeLevels(n int) [][][]int {
	switch n {
	case 4, 8, 16:
		var levels [][][]int
		for step := 1; step < n; step *= 2 {
			var level [][]int
			for i := 0; i < n; i += 2 * step {
				level = append(level, []int{i, i + step})
			}
			levels = append(levels, level)
		}
		return levels
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return [][][]int{{all}}
}

func newTree(op *operators.Base, n int) *tree {
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return &tree{op: op, levels: treeLevels(n), bcast: [][]int{all}}
}

// treePhase is one level of the tree (copy false: group[0] += the rest) or
// the broadcast (copy true: every other replica = group[0]), over the
// element range of each chunk.
type treePhase struct {
	groups   [][]int
	copy     bool
	bufs     []*blob.Tensor
	elements int
	chunks   int
}

func (p *treePhase) RunRange(_, lo, hi int) {
	for u := lo; u < hi; u++ {
		g := p.groups[u/p.chunks]
		c := u % p.chunks
		a, b := c*p.elements/p.chunks, (c+1)*p.elements/p.chunks
		switch p.bufs[0].DataType() {
		case blob.Float32:
			treeStep(p.copy, g, p.bufs, a, b, blob.Data[float32])
		case blob.Float64:
			treeStep(p.copy, g, p.bufs, a, b, blob.Data[float64])
		}
	}
}

func treeStep[T blob.Float](copyOut bool, g []int, bufs []*blob.Tensor, a, b int, data func(*blob.Tensor) []T) {
	dst := data(bufs[g[0]])[a:b]
	for _, s := range g[1:] {
		src := data(bufs[s])[a:b]
		if copyOut {
			copy(src, dst)
			continue
		}
		for i, v := range src {
			dst[i] += v
		}
	}
}

func (t *tree) Allreduce(bufs []*blob.Tensor) error {
	if len(bufs) < 2 {
		return nil
	}
	n := bufs[0].Size()
	threads := t.op.Threads()
	phase := func(groups [][]int, copyOut bool) {
		chunks := parallel.Parts(threads, n, n*len(groups))
		t.phase = treePhase{groups: groups, copy: copyOut, bufs: bufs, elements: n, chunks: chunks}
		units := len(groups) * chunks
		parallel.Run(&t.phase, units, parallel.Parts(threads, units, n*len(groups)))
	}
	for _, level := range t.levels {
		phase(level, false)
	}
	phase(t.bcast, true)
	t.phase = treePhase{}
	return nil
}

// ring is the RING engine.
type ring struct {
	op    *operators.Base // for its kernel thread budget
	n     int
	phase ringPhase
}

func newRing(op *operators.Base, n int) *ring { return &ring{op: op, n: n} }

// ringPhase is one step of the ring: every replica d takes chunk
// (d − offset) mod n from replica d−1 and adds it to (gather false) or
// copies it over (gather true) its own.
type ringPhase struct {
	bufs     []*blob.Tensor
	n        int
	offset   int
	gather   bool
	elements int
}

func (p *ringPhase) RunRange(_, lo, hi int) {
	for d := lo; d < hi; d++ {
		from := (d - 1 + p.n) % p.n
		c := ((d-p.offset)%p.n + p.n) % p.n
		a, b := c*p.elements/p.n, (c+1)*p.elements/p.n
		switch p.bufs[0].DataType() {
		case blob.Float32:
			ringStep(p.gather, blob.Data[float32](p.bufs[d])[a:b], blob.Data[float32](p.bufs[from])[a:b])
		case blob.Float64:
			ringStep(p.gather, blob.Data[float64](p.bufs[d])[a:b], blob.Data[float64](p.bufs[from])[a:b])
		}
	}
}

func ringStep[T blob.Float](gather bool, dst, src []T) {
	if gather {
		copy(dst, src)
		return
	}
	for i, v := range src {
		dst[i] += v
	}
}

func (r *ring) Allreduce(bufs []*blob.Tensor) error {
	n := len(bufs)
	if n < 2 {
		return nil
	}
	elements := bufs[0].Size()
	parts := parallel.Parts(r.op.Threads(), n, elements)
	// Reduce-scatter: at step s replica d adds chunk d−s−1 of replica d−1;
	// after n−1 steps replica d holds the whole sum of chunk d+1.
	for s := 0; s < n-1; s++ {
		r.phase = ringPhase{bufs: bufs, n: n, offset: s + 1, elements: elements}
		parallel.Run(&r.phase, n, parts)
	}
	// All-gather: at step s replica d copies chunk d−s, complete at d−1.
	for s := 0; s < n-1; s++ {
		r.phase = ringPhase{bufs: bufs, n: n, offset: s, gather: true, elements: elements}
		parallel.Run(&r.phase, n, parts)
	}
	r.phase = ringPhase{}
	return nil
}
