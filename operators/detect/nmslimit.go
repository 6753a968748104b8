package detect

import (
	"cmp"
	"math"
	"slices"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "BoxWithNMSLimit", MinInputs: 2, MaxInputs: 3, MinOutputs: 3, MaxOutputs: 6,
		Args: []operators.ArgSpec{
			{Name: "score_thresh", Default: 0.05, Doc: "boxes of a class scoring at most this are dropped"},
			{Name: "nms", Default: 0.3, Doc: "IoU above which NMS suppresses a box"},
			{Name: "detections_per_im", Default: 100, Doc: "boxes kept per image over all classes, the best scoring; ≤ 0: all"},
			{Name: "soft_nms_enabled", Default: false, Doc: "decay overlapping boxes' scores (Soft-NMS) instead of dropping them"},
			{Name: "soft_nms_method", Default: "linear", Doc: `"linear" or "gaussian"`},
			{Name: "soft_nms_sigma", Default: 0.5, Doc: "Gaussian Soft-NMS's sigma"},
			{Name: "soft_nms_min_score_thres", Default: 0.001, Doc: "Soft-NMS drops boxes whose decayed score falls below this"},
			{Name: "rotated", Default: false, Doc: "boxes are rotated, [ctr_x, ctr_y, w, h, angle°] (5 values per class)"},
			{Name: "cls_agnostic_bbox_reg", Default: false, Doc: "boxes holds one box per row shared by every class"},
			{Name: "input_boxes_include_bg_cls", Default: true, Doc: "boxes and scores start with the background class"},
			{Name: "output_classes_include_bg_cls", Default: true, Doc: "class ids count the background class (foreground starts at 1)"},
			legacyArg,
		},
		Doc: "BoxWithNMSLimit(scores, boxes[, batch_splits]) → (scores, boxes, classes[, batch_splits[, keeps, keeps_size]]) " +
			"runs per-class NMS on each image's boxes (scores (N, K), boxes (N, 4K), or (N, 5K) rotated) skipping the background class, " +
			"then keeps the detections_per_im best over all classes; outputs are grouped by image, then class. " +
			"keeps (INT32) are the kept rows of each image, keeps_size (INT32, (batch, K)) their count per class.",
	}, func(b *operators.Base) (operators.Operator, error) {
		o := &nmsLimitOp{Base: b,
			scoreThresh: b.ArgFloat("score_thresh", 0.05), nmsThresh: b.ArgFloat("nms", 0.3),
			perImage: int(max(min(b.ArgInt("detections_per_im", 100), math.MaxInt32), -1)),
			soft:     b.ArgBool("soft_nms_enabled", false), sigma: b.ArgFloat("soft_nms_sigma", 0.5),
			minScore: b.ArgFloat("soft_nms_min_score_thres", 0.001), agnostic: b.ArgBool("cls_agnostic_bbox_reg", false),
			inBG: b.ArgBool("input_boxes_include_bg_cls", true), outBG: b.ArgBool("output_classes_include_bg_cls", true),
			legacy: b.ArgBool("legacy_plus_one", true), dim: 4}
		switch m := b.ArgString("soft_nms_method", "linear"); m {
		case "linear":
			o.method = 1
		case "gaussian":
			o.method = 2
		default:
			return nil, b.Errorf("soft_nms_method is %q; want \"linear\" or \"gaussian\"", m)
		}
		if n := b.NumOutputs(); n == 5 {
			return nil, b.Errorf("has 5 outputs; keeps and keeps_size come together (3, 4 or 6 outputs)")
		}
		if b.ArgBool("rotated", false) {
			o.dim = 5
		}
		return o, nil
	})
	operators.MustRegisterNoGradient("BoxWithNMSLimit")
	operators.MustRegisterShapeFunc("BoxWithNMSLimit", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		out := []operators.TensorShape{
			operators.Shape(blob.Float32, operators.AnyDim), operators.Shape(blob.Float32, operators.AnyDim, map[bool]int{false: 4, true: 5}[b.ArgBool("rotated", false)]),
			operators.Shape(blob.Float32, operators.AnyDim), operators.Shape(blob.Float32, operators.AnyDim),
			operators.Shape(blob.Int32, operators.AnyDim), operators.Shape(blob.Int32, operators.AnyDim, in[0].Dim(1)),
		}
		return out[:len(b.Def().GetOutput())], nil
	})
}

type nmsLimitOp struct {
	*operators.Base
	scoreThresh, nmsThresh, sigma, minScore float32
	perImage, method, dim                   int
	soft, agnostic, inBG, outBG, legacy     bool
}

// boxClass maps class j (0 = background) to its column block of boxes.
func (o *nmsLimitOp) boxClass(j int) int {
	switch {
	case o.agnostic:
		return 0
	case !o.inBG:
		return j - 1
	}
	return j
}

// scoreClass maps class j to its column of scores.
func (o *nmsLimitOp) scoreClass(j int) int {
	if o.inBG {
		return j
	}
	return j - 1
}

// rows2D checks a (N, D) or (N, D, 1, 1) tensor and returns N and D.
func rows2D(o *operators.Base, t *blob.Tensor, i int) (int, int, error) {
	if t.NumDims() == 2 || (t.NumDims() == 4 && t.Dim(2) == 1 && t.Dim(3) == 1) {
		return t.Dim(0), t.Dim(1), nil
	}
	return 0, 0, o.Errorf("input %d (%q) has shape %v; want (N, D) or (N, D, 1, 1)", i, o.InputName(i), t.Dims())
}

func (o *nmsLimitOp) Run() error {
	ts, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	tb, err := o.InputOf(1, blob.Float32)
	if err != nil {
		return err
	}
	n, k, err := rows2D(o.Base, ts, 0)
	if err != nil {
		return err
	}
	nb, bc, err := rows2D(o.Base, tb, 1)
	if err != nil {
		return err
	}
	if k < 1 {
		return o.Errorf("input 0 (%q) has shape %v; it needs a class", o.InputName(0), ts.Dims())
	}
	if nb != n || (o.boxClass(k-1)+1)*o.dim != bc {
		return o.Errorf("inputs 0 (%q) and 1 (%q) have shapes %v and %v; want (N, K) scores and (N, %d) boxes",
			o.InputName(0), o.InputName(1), ts.Dims(), tb.Dims(), (o.boxClass(k-1)+1)*o.dim)
	}
	splits := []int{n}
	if o.NumInputs() > 2 {
		if splits, err = batchSplits(o.Base, 2, n); err != nil {
			return err
		}
	}
	if err := blob.CheckElements(blob.Int64, len(splits)*k); err != nil {
		return o.Errorf("%d images of %d classes (input 0 (%q) of shape %v): %v", len(splits), k, o.InputName(0), ts.Dims(), err)
	}
	sd, bd := blob.Data[float32](ts), blob.Data[float32](tb)
	scores := sd
	if o.soft {
		scores = slices.Clone(sd)
	}
	type kept struct{ rows [][]int }
	var all []kept
	var total []int
	count := 0
	offset := 0
	for _, nbox := range splits {
		sc := scores[offset*k : (offset+nbox)*k]
		bx := bd[offset*bc : (offset+nbox)*bc]
		keeps := make([][]int, k)
		imageKeep := 0
		for j := 1; j < k; j++ {
			col := o.scoreClass(j)
			var inds []int
			for i := range nbox {
				if sc[i*k+col] > o.scoreThresh {
					inds = append(inds, i)
				}
			}
			if len(inds) == 0 {
				continue
			}
			boxes := bx[o.boxClass(j)*o.dim:]
			if o.soft {
				keeps[j] = softNMS(boxes, bc, o.dim, sc[col:], k, inds, o.sigma, o.nmsThresh, o.minScore, o.method, o.legacy)
			} else {
				slices.SortStableFunc(inds, func(a, b int) int { return cmp.Compare(sc[b*k+col], sc[a*k+col]) })
				keepMax := -1
				if o.perImage > 0 {
					keepMax = o.perImage
				}
				keeps[j] = nms(boxes, bc, o.dim, inds, o.nmsThresh, keepMax, o.legacy)
			}
			imageKeep += len(keeps[j])
		}
		if o.perImage > 0 && imageKeep > o.perImage {
			type pair struct{ j, i int }
			var ps []pair
			for j := 1; j < k; j++ {
				for _, i := range keeps[j] {
					ps = append(ps, pair{j, i})
				}
			}
			slices.SortStableFunc(ps, func(a, b pair) int {
				return cmp.Compare(sc[b.i*k+o.scoreClass(b.j)], sc[a.i*k+o.scoreClass(a.j)])
			})
			for j := range keeps {
				keeps[j] = keeps[j][:0]
			}
			for _, p := range ps[:o.perImage] {
				keeps[p.j] = append(keeps[p.j], p.i)
			}
			imageKeep = o.perImage
		}
		all = append(all, kept{keeps})
		total = append(total, imageKeep)
		count += imageKeep
		offset += nbox
	}
	outS, outB, outC := o.Output(0), o.Output(1), o.Output(2)
	for i, t := range []*blob.Tensor{outS, outC} {
		if err := t.Init(blob.Float32, count); err != nil {
			return o.Errorf("output %q: %v", o.OutputName(2*i), err)
		}
	}
	if err := outB.Init(blob.Float32, count, o.dim); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(1), err)
	}
	var keepsOut, sizesOut []int32
	if o.NumOutputs() > 4 {
		ko, so := o.Output(4), o.Output(5)
		if err := ko.Init(blob.Int32, count); err != nil {
			return o.Errorf("output %q: %v", o.OutputName(4), err)
		}
		if err := so.Init(blob.Int32, len(splits), k); err != nil {
			return o.Errorf("output %q: %v", o.OutputName(5), err)
		}
		keepsOut, sizesOut = blob.Data[int32](ko), blob.Data[int32](so)
	}
	ds, db, dc := blob.Data[float32](outS), blob.Data[float32](outB), blob.Data[float32](outC)
	at, offset := 0, 0
	for b, nbox := range splits {
		sc := scores[offset*k : (offset+nbox)*k]
		bx := bd[offset*bc : (offset+nbox)*bc]
		start := at
		for j := 1; j < k; j++ {
			cls := float32(j)
			if !o.outBG {
				cls--
			}
			for _, i := range all[b].rows[j] {
				ds[at] = sc[i*k+o.scoreClass(j)]
				copy(db[at*o.dim:(at+1)*o.dim], bx[i*bc+o.boxClass(j)*o.dim:][:o.dim])
				dc[at] = cls
				at++
			}
		}
		if keepsOut != nil {
			q := start
			for j := range k {
				for _, i := range all[b].rows[j] {
					keepsOut[q] = int32(i)
					q++
				}
				sizesOut[b*k+j] = int32(len(all[b].rows[j]))
			}
		}
		offset += nbox
	}
	if o.NumOutputs() > 3 {
		sp := o.Output(3)
		if err := sp.Init(blob.Float32, len(splits)); err != nil {
			return o.Errorf("output %q: %v", o.OutputName(3), err)
		}
		for i, v := range total {
			blob.Data[float32](sp)[i] = float32(v)
		}
	}
	return nil
}

// batchSplits reads input i, a FLOAT or INT32 vector of per-image box
// counts that must sum to n.
func batchSplits(o *operators.Base, i, n int) ([]int, error) {
	t, err := o.Input(i)
	if err != nil {
		return nil, err
	}
	if t.NumDims() != 1 || (t.DataType() != blob.Float32 && t.DataType() != blob.Int32) {
		return nil, o.Errorf("input %d (%q) is %v %v; want a FLOAT or INT32 vector of box counts", i, o.InputName(i), t.DataType(), t.Dims())
	}
	v := t.AsFloat64s()
	out := make([]int, len(v))
	sum := 0
	for j, c := range v {
		if !(c >= 0 && c <= float64(n) && c == math.Trunc(c)) || sum+int(c) > n {
			return nil, o.Errorf("input %d (%q) holds box counts %v, which do not sum to the %d boxes", i, o.InputName(i), v, n)
		}
		out[j] = int(c)
		sum += out[j]
	}
	if sum != n {
		return nil, o.Errorf("input %d (%q) holds box counts %v, which do not sum to the %d boxes", i, o.InputName(i), v, n)
	}
	return out, nil
}
