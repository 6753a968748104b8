package sparse

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// The segment-id reductions: row i of DATA belongs to segment
// SEGMENT_IDS[i]. The Sorted… operators need ids that start anywhere and
// grow by 0 or 1 from row to row (Caffe2: sorted, without gaps); the
// Unsorted… ones take ids in any order, below num_segments (default: the
// largest id + 1).

func init() {
	for _, s := range []struct {
		typ    string
		mean   bool
		sorted bool
		doc    string
	}{
		{"SortedSegmentSum", false, true, "(DATA, SEGMENT_IDS) -> OUTPUT [last id + 1, ...]: the sum of the rows of each segment; ids sorted, without gaps."},
		{"SortedSegmentMean", true, true, "(DATA, SEGMENT_IDS) -> OUTPUT [last id + 1, ...]: the mean of the rows of each segment; ids sorted, without gaps."},
		{"UnsortedSegmentSum", false, false, "(DATA, SEGMENT_IDS) -> OUTPUT [num_segments, ...]: the sum of the rows of each segment, ids in any order."},
		{"UnsortedSegmentMean", true, false, "(DATA, SEGMENT_IDS) -> OUTPUT [num_segments, ...]: the mean of the rows of each segment (0 when empty), ids in any order."},
	} {
		s := s
		var args []operators.ArgSpec
		if !s.sorted {
			args = []operators.ArgSpec{{Name: "num_segments", Default: -1, Doc: "the number of segments; -1: the largest id + 1"}}
		}
		operators.MustRegisterCPU(operators.Schema{Type: s.typ, MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1, Args: args, Doc: s.doc},
			func(b *operators.Base) (operators.Operator, error) {
				return &segmentOp{Base: b, mean: s.mean, sorted: s.sorted, k: int(b.ArgInt("num_segments", -1))}, nil
			})
		operators.MustRegisterShapeFunc(s.typ, shapeRows(0, -1, blob.Float32))
		grad := s.typ + "Gradient"
		operators.MustRegisterGradient(s.typ, func(g *operators.GradientContext) error {
			g.Op(grad, []string{g.GO(0), g.I(1)}, []string{g.GI(0)})
			return nil
		})
		operators.MustRegisterCPU(operators.Schema{
			Type: grad, MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
			Doc: "(dOUTPUT, SEGMENT_IDS) -> dDATA: row i is dOUTPUT[SEGMENT_IDS[i]] (divided by the segment's size for a mean).",
		}, func(b *operators.Base) (operators.Operator, error) {
			return &segmentGradOp{Base: b, mean: s.mean, sorted: s.sorted}, nil
		})
		operators.MustRegisterShapeFunc(grad, shapeRows(0, 1, blob.Float32))
		operators.MustRegisterNoGradient(grad)
	}
}

// segmentIDs reads SEGMENT_IDS (input 1) for n rows and checks them: in
// sorted mode they must grow by 0 or 1; every id must be >= 0 and, when
// k >= 0, below k. It returns the ids and the number of segments.
func segmentIDs(b *operators.Base, n int, sorted bool, k int, dst []int) ([]int, int, error) {
	dst, t, err := readInts(b, 1, "SEGMENT_IDS", dst)
	if err != nil {
		return dst, 0, err
	}
	if t.NumDims() != 1 || len(dst) != n {
		return dst, 0, b.Errorf("SEGMENT_IDS input 1 (%q) has shape %v, want [%d], one id per row of input 0 (%q)", b.InputName(1), t.Dims(), n, b.InputName(0))
	}
	top := 0
	for i, s := range dst {
		switch {
		case s < 0:
			return dst, 0, b.Errorf("SEGMENT_IDS input 1 (%q) element %d is %d, must be >= 0", b.InputName(1), i, s)
		case sorted && i > 0 && s != dst[i-1] && s != dst[i-1]+1:
			return dst, 0, b.Errorf("SEGMENT_IDS input 1 (%q) must be sorted without gaps: element %d is %d after %d", b.InputName(1), i, s, dst[i-1])
		case k >= 0 && s >= k:
			return dst, 0, b.Errorf("SEGMENT_IDS input 1 (%q) element %d is %d, out of range for num_segments %d", b.InputName(1), i, s, k)
		}
		top = max(top, s+1)
	}
	if k >= 0 {
		return dst, k, nil
	}
	return dst, top, nil
}

type segmentOp struct {
	*operators.Base
	mean, sorted bool
	k            int
	ids          []int
	count        []int
	dims         []int
}

func (o *segmentOp) Run() error {
	data, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	if data.NumDims() < 1 {
		return o.Errorf("DATA input 0 (%q) must have at least 1 dim, has shape %v", o.InputName(0), data.Dims())
	}
	var k int
	if o.ids, k, err = segmentIDs(o.Base, data.Dim(0), o.sorted, o.k, o.ids); err != nil {
		return err
	}
	y := o.Output(0)
	if err := y.Init(blob.Float32, outDims(o.dims, k, data.Dims())...); err != nil {
		return err
	}
	if y.Size() == 0 {
		return nil
	}
	out, in := blob.Data[float32](y), blob.Data[float32](data)
	clear(out)
	block := y.Size() / k
	o.count = append(o.count[:0], make([]int, k)...)
	for i, s := range o.ids {
		dst := out[s*block : (s+1)*block]
		for j, v := range in[i*block : (i+1)*block] {
			dst[j] += v
		}
		o.count[s]++
	}
	if o.mean {
		for s, c := range o.count {
			if c > 0 {
				f := float32(1 / float64(c))
				for j := range out[s*block : (s+1)*block] {
					out[s*block+j] *= f
				}
			}
		}
	}
	return nil
}

type segmentGradOp struct {
	*operators.Base
	mean, sorted bool
	ids          []int
	count        []int
	dims         []int
}

func (o *segmentGradOp) Run() error {
	g, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	if g.NumDims() < 1 {
		return o.Errorf("dOUTPUT input 0 (%q) must have at least 1 dim, has shape %v", o.InputName(0), g.Dims())
	}
	ids, _, err := readInts(o.Base, 1, "SEGMENT_IDS", o.ids)
	if err != nil {
		return err
	}
	o.ids = ids
	if o.ids, _, err = segmentIDs(o.Base, len(ids), o.sorted, g.Dim(0), o.ids); err != nil {
		return err
	}
	y := o.Output(0)
	if err := y.Init(blob.Float32, outDims(o.dims, len(o.ids), g.Dims())...); err != nil {
		return err
	}
	if y.Size() == 0 {
		return nil
	}
	out, in := blob.Data[float32](y), blob.Data[float32](g)
	block := y.Size() / len(o.ids)
	o.count = append(o.count[:0], make([]int, g.Dim(0))...)
	for _, s := range o.ids {
		o.count[s]++
	}
	for i, s := range o.ids {
		dst, src := out[i*block:(i+1)*block], in[s*block:(s+1)*block]
		if !o.mean {
			copy(dst, src)
			continue
		}
		f := float32(1 / float64(o.count[s]))
		for j, v := range src {
			dst[j] = v * f
		}
	}
	return nil
}
