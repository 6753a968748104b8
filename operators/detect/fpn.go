package detect

import (
	"cmp"
	"math"
	"slices"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

var (
	roiLevelArgs = []operators.ArgSpec{
		{Name: "roi_canonical_scale", Default: 224, Doc: "RoI size mapped to roi_canonical_level"},
		{Name: "roi_canonical_level", Default: 4, Doc: "level of a RoI of the canonical size"},
		{Name: "roi_max_level", Default: 5, Doc: "finest-to-coarsest FPN levels RoIs are distributed to: the largest"},
		{Name: "roi_min_level", Default: 2, Doc: "the smallest RoI level"},
	}
	rpnLevelArgs = []operators.ArgSpec{
		{Name: "rpn_max_level", Default: 6, Doc: "largest FPN level with RPN proposals"},
		{Name: "rpn_min_level", Default: 2, Doc: "smallest FPN level with RPN proposals"},
		{Name: "rpn_post_nms_topN", Default: 2000, Doc: "proposals kept over all levels, the best scoring; ≤ 0: all"},
	}
)

// fpnOp is CollectAndDistributeFpnRpnProposals (collect and distribute),
// CollectRpnProposals (collect) or DistributeFpnProposals (distribute).
type fpnOp struct {
	*operators.Base
	collect, distribute        bool
	rpnLevels, topN            int
	minLvl, maxLvl, canonLevel float32
	canonScale                 float32
	legacy                     bool
}

func init() {
	register := func(typ string, collect, distribute bool, minIn, minOut int, doc string) {
		args := []operators.ArgSpec{legacyArg}
		if collect {
			args = append(args, rpnLevelArgs...)
		}
		if distribute {
			args = append(args, roiLevelArgs...)
		}
		operators.MustRegisterCPU(operators.Schema{
			Type: typ, MinInputs: minIn, MaxInputs: operators.Unbounded, MinOutputs: minOut, MaxOutputs: operators.Unbounded,
			Args: args, Doc: doc,
		}, func(b *operators.Base) (operators.Operator, error) { return newFPN(b, collect, distribute) })
		operators.MustRegisterNoGradient(typ)
		operators.MustRegisterShapeFunc(typ, fpnShape)
	}
	register("CollectAndDistributeFpnRpnProposals", true, true, 2, 3,
		"CollectAndDistributeFpnRpnProposals(rpn_rois_fpn…, rpn_roi_probs_fpn…) → (rois, rois_fpn…, rois_idx_restore) "+
			"merges the RPN proposals (rows [image, x1, y1, x2, y2]) and scores of levels rpn_min_level…rpn_max_level, "+
			"keeps the rpn_post_nms_topN best, and distributes them to levels roi_min_level…roi_max_level by "+
			"⌊canonical_level + log₂(√area / canonical_scale + 1e-6)⌋; rois_idx_restore (INT32) maps the "+
			"concatenated levels back to rois' order.")
	register("CollectRpnProposals", true, false, 2, 1,
		"CollectRpnProposals(rpn_rois_fpn…, rpn_roi_probs_fpn…) → rois merges the RPN proposals of every level and keeps the rpn_post_nms_topN best.")
	register("DistributeFpnProposals", false, true, 1, 2,
		"DistributeFpnProposals(rois) → (rois_fpn…, rois_idx_restore) distributes RoIs ((R, 4) or (R, 5)) to the FPN levels "+
			"roi_min_level…roi_max_level by their size; rois_idx_restore (INT32) maps the concatenated levels back to the input order.")
}

func newFPN(b *operators.Base, collect, distribute bool) (operators.Operator, error) {
	o := &fpnOp{Base: b, collect: collect, distribute: distribute, legacy: b.ArgBool("legacy_plus_one", true)}
	wantIn, wantOut := 1, 1
	if collect {
		lo, hi := b.ArgInt("rpn_min_level", 2), b.ArgInt("rpn_max_level", 6)
		if hi < lo || hi-lo >= 1<<16 {
			return nil, b.Errorf("rpn_max_level %d must be at least rpn_min_level %d", hi, lo)
		}
		o.rpnLevels = int(hi - lo + 1)
		o.topN = int(max(min(b.ArgInt("rpn_post_nms_topN", 2000), math.MaxInt32), -1))
		wantIn = 2 * o.rpnLevels
	}
	if distribute {
		lo, hi := b.ArgInt("roi_min_level", 2), b.ArgInt("roi_max_level", 5)
		if hi < lo || hi-lo >= 1<<16 || lo < math.MinInt32 || hi > math.MaxInt32 {
			return nil, b.Errorf("roi_max_level %d must be at least roi_min_level %d", hi, lo)
		}
		o.minLvl, o.maxLvl = float32(lo), float32(hi)
		o.canonScale = float32(b.ArgInt("roi_canonical_scale", 224))
		o.canonLevel = float32(b.ArgInt("roi_canonical_level", 4))
		wantOut = int(hi-lo+1) + 1
		if collect {
			wantOut++
		}
	}
	if b.NumInputs() != wantIn || b.NumOutputs() != wantOut {
		return nil, b.Errorf("has %d inputs and %d outputs; its levels want %d and %d", b.NumInputs(), b.NumOutputs(), wantIn, wantOut)
	}
	return o, nil
}

func fpnShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	outs := b.Def().GetOutput()
	out := make([]operators.TensorShape, len(outs))
	for i := range out {
		out[i] = operators.Shape(blob.Float32, operators.AnyDim, 5)
	}
	if b.Type() != "CollectRpnProposals" && len(out) > 0 {
		out[len(out)-1] = operators.Shape(blob.Int32, operators.AnyDim)
	}
	return out, nil
}

func (o *fpnOp) Run() error {
	var rois []float32
	if o.collect {
		var scores []float32
		for l := range o.rpnLevels {
			r, err := o.InputOf(l, blob.Float32)
			if err != nil {
				return err
			}
			s, err := o.InputOf(o.rpnLevels+l, blob.Float32)
			if err != nil {
				return err
			}
			if r.NumDims() != 2 || r.Dim(1) != 5 || s.NumDims() < 1 || s.Dim(0) != r.Dim(0) || s.Size() != r.Dim(0) {
				return o.Errorf("inputs %d (%q) and %d (%q) have shapes %v and %v; want (n, 5) RoIs and n scores",
					l, o.InputName(l), o.rpnLevels+l, o.InputName(o.rpnLevels+l), r.Dims(), s.Dims())
			}
			rois = append(rois, blob.Data[float32](r)...)
			scores = append(scores, blob.Data[float32](s)...)
		}
		idx := make([]int, len(scores))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
		if o.topN > 0 && o.topN < len(idx) {
			idx = idx[:o.topN]
		}
		sorted := make([]float32, 0, 5*len(idx))
		for _, i := range idx {
			sorted = append(sorted, rois[i*5:i*5+5]...)
		}
		rois = sorted
		out := o.Output(0)
		if err := out.Init(blob.Float32, len(idx), 5); err != nil {
			return o.Errorf("output %q: %v", o.OutputName(0), err)
		}
		copy(blob.Data[float32](out), rois)
		if !o.distribute {
			return nil
		}
	} else {
		r, err := o.InputOf(0, blob.Float32)
		if err != nil {
			return err
		}
		if r.NumDims() != 2 || (r.Dim(1) != 4 && r.Dim(1) != 5) {
			return o.Errorf("input 0 (%q) has shape %v; want (R, 4) or (R, 5) RoIs", o.InputName(0), r.Dims())
		}
		cols, v := r.Dim(1), blob.Data[float32](r)
		rois = make([]float32, 5*r.Dim(0))
		for i := range r.Dim(0) {
			copy(rois[i*5+5-cols:i*5+5], v[i*cols:i*cols+cols])
		}
	}
	return o.distributeRoIs(rois)
}

// distributeRoIs writes the rows of rois (5 columns) to the level outputs
// and the restoring permutation to the last output.
func (o *fpnOp) distributeRoIs(rois []float32) error {
	n := len(rois) / 5
	one := plusOne(o.legacy)
	lvls := make([]int, n)
	for i := range n {
		b := rois[i*5+1 : i*5+5]
		a := area(b, one)
		if !(a >= 0) {
			return o.Errorf("RoI %d %v has a negative area", i, b)
		}
		s := float32(math.Sqrt(float64(a)))
		l := float32(math.Log(float64(s/o.canonScale+1e-6))) / float32(math.Ln2)
		lvl := float32(math.Floor(float64(o.canonLevel + l)))
		lvls[i] = int(max(min(lvl, o.maxLvl), o.minLvl))
	}
	first := 0
	if o.collect {
		first = 1
	}
	restore := make([]int, 0, n)
	for q, lvl := 0, int(o.minLvl); lvl <= int(o.maxLvl); q, lvl = q+1, lvl+1 {
		var rows []int
		for i, l := range lvls {
			if l == lvl {
				rows = append(rows, i)
			}
		}
		out := o.Output(first + q)
		if err := out.Init(blob.Float32, len(rows), 5); err != nil {
			return o.Errorf("output %q: %v", o.OutputName(first+q), err)
		}
		d := blob.Data[float32](out)
		for k, i := range rows {
			copy(d[k*5:k*5+5], rois[i*5:i*5+5])
		}
		restore = append(restore, rows...)
	}
	last := o.Output(o.NumOutputs() - 1)
	if err := last.Init(blob.Int32, len(restore)); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(o.NumOutputs()-1), err)
	}
	d := blob.Data[int32](last)
	for pos, i := range restore {
		d[i] = int32(pos)
	}
	return nil
}
