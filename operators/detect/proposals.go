package detect

import (
	"cmp"
	"math"
	"slices"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	schema := operators.Schema{
		Type: "GenerateProposals", MinInputs: 4, MaxInputs: 4, MinOutputs: 2, MaxOutputs: 2,
		Args: append([]operators.ArgSpec{
			{Name: "spatial_scale", Default: 1.0 / 16, Doc: "scale of the feature map; anchors move by 1/spatial_scale pixels per cell"},
			{Name: "pre_nms_topN", Default: 6000, Doc: "best-scoring anchors transformed per image; ≤ 0: all"},
			{Name: "post_nms_topN", Default: 300, Doc: "proposals kept per image after NMS; ≤ 0: all"},
			{Name: "nms_thresh", Default: 0.7, Doc: "IoU above which NMS suppresses a proposal"},
			{Name: "min_size", Default: 16.0, Doc: "proposals narrower or lower than min_size·scale pixels are dropped"},
			legacyArg,
		}, angleArgs...),
		Doc: "GenerateProposals(scores, bbox_deltas, im_info, anchors) → (rois, rois_probs) turns RPN outputs " +
			"(scores (N, A, H, W), deltas (N, 4A, H, W)) into proposals for Faster R-CNN: per image the " +
			"pre_nms_topN best anchors (anchors (A, 4) shifted over the H×W grid) are transformed by their deltas, " +
			"clipped to im_info's [height, width], filtered by min_size and reduced by NMS to post_nms_topN. rois " +
			"are rows [image index, x1, y1, x2, y2], best first within each image. Rotated anchors (A, 5) [ctr_x, ctr_y, " +
			"w, h, angle°] take deltas (N, 5A, H, W) and give rows [image index, ctr_x, ctr_y, w, h, angle].",
	}
	factory := func(b *operators.Base) (operators.Operator, error) {
		s := b.ArgFloat("spatial_scale", 1.0/16)
		if !(s > 0) || math.IsInf(float64(s), 0) {
			return nil, b.Errorf("spatial_scale %v must be positive", s)
		}
		on, lo, hi, thresh, err := angleBounds(b)
		if err != nil {
			return nil, err
		}
		return &proposalsOp{Base: b, stride: float32(1.0 / float64(s)), angleOn: on, angleLo: lo, angleHi: hi, clipThresh: thresh,
			pre: int(max(min(b.ArgInt("pre_nms_topN", 6000), math.MaxInt32), -1)), post: int(max(min(b.ArgInt("post_nms_topN", 300), math.MaxInt32), -1)),
			thresh: b.ArgFloat("nms_thresh", 0.7), minSize: b.ArgFloat("min_size", 16), legacy: b.ArgBool("legacy_plus_one", true)}, nil
	}
	operators.MustRegisterCPU(schema, factory)
	schema.Type = "GenerateProposalsCPP"
	schema.Doc = "GenerateProposalsCPP is GenerateProposals under its former name."
	operators.MustRegisterCPU(schema, factory)
	for _, t := range []string{"GenerateProposals", "GenerateProposalsCPP"} {
		operators.MustRegisterNoGradient(t)
	}
	operators.MustRegisterShapeFunc("GenerateProposals", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		cols := operators.AnyDim
		if d := in[3].Dim(1); d >= 0 {
			cols = d + 1
		}
		return []operators.TensorShape{operators.Shape(blob.Float32, operators.AnyDim, cols), operators.Shape(blob.Float32, operators.AnyDim)}, nil
	}, "GenerateProposalsCPP")
}

type proposalsOp struct {
	*operators.Base
	stride, thresh, minSize float32
	pre, post               int
	legacy                  bool
	angleOn                 bool
	angleLo, angleHi        int
	clipThresh              float32
}

func (o *proposalsOp) Run() error {
	var in [4]*blob.Tensor
	for i := range in {
		t, err := o.InputOf(i, blob.Float32)
		if err != nil {
			return err
		}
		in[i] = t
	}
	scores, deltas, info, anchors := in[0], in[1], in[2], in[3]
	if scores.NumDims() != 4 {
		return o.Errorf("input 0 (%q) has shape %v; want (N, A, H, W)", o.InputName(0), scores.Dims())
	}
	n, a, h, w := scores.Dim(0), scores.Dim(1), scores.Dim(2), scores.Dim(3)
	if anchors.NumDims() != 2 || anchors.Dim(0) != a || (anchors.Dim(1) != 4 && anchors.Dim(1) != 5) {
		return o.Errorf("input 3 (%q) has shape %v; want (%d, 4), or (%d, 5) rotated", o.InputName(3), anchors.Dims(), a, a)
	}
	dim := anchors.Dim(1)
	if !sameDims(deltas.Dims(), []int{n, dim * a, h, w}) {
		return o.Errorf("input 1 (%q) has shape %v; want %v", o.InputName(1), deltas.Dims(), []int{n, dim * a, h, w})
	}
	if !sameDims(info.Dims(), []int{n, 3}) {
		return o.Errorf("input 2 (%q) has shape %v; want (%d, 3)", o.InputName(2), info.Dims(), n)
	}
	iv := blob.Data[float32](info)
	if !finite(iv) {
		return o.Errorf("input 2 (%q) holds a value that is not finite", o.InputName(2))
	}
	for i := range n {
		if math.Abs(float64(iv[i*3])) > maxRoICoord || math.Abs(float64(iv[i*3+1])) > maxRoICoord {
			return o.Errorf("input 2 (%q): image %d has size %v", o.InputName(2), i, iv[i*3:i*3+2])
		}
	}
	k := h * w
	per := a * k
	sv, dv, av := blob.Data[float32](scores), blob.Data[float32](deltas), blob.Data[float32](anchors)
	if scores.Size() == 0 {
		per = 0
	}
	var boxes [][]float32
	var probs [][]float32
	total := 0
	order := make([]int, 0, per)
	for img := range n {
		if per == 0 {
			boxes, probs = append(boxes, nil), append(probs, nil)
			continue
		}
		sc := sv[img*per : (img+1)*per]
		order = order[:0]
		for i := range per {
			order = append(order, i)
		}
		slices.SortStableFunc(order, func(p, q int) int { return cmp.Compare(sc[q], sc[p]) })
		if o.pre > 0 && o.pre < per {
			order = order[:o.pre]
		}
		props := make([]float32, dim*len(order))
		ds := dv[img*dim*per : (img+1)*dim*per]
		ih, iw, scale := iv[img*3], iv[img*3+1], iv[img*3+2]
		var d, anc [5]float32
		for r, idx := range order {
			an, cell := idx/k, idx%k
			sx, sy := float32(cell%w)*o.stride, float32(cell/w)*o.stride
			for j := range dim {
				d[j] = ds[(an*dim+j)*k+cell]
			}
			copy(anc[:], av[an*dim:(an+1)*dim])
			anc[0], anc[1] = anc[0]+sx, anc[1]+sy
			if dim == 4 {
				anc[2], anc[3] = anc[2]+sx, anc[3]+sy
			}
			p := props[r*dim : (r+1)*dim]
			transformBox(anc[:dim], d[:dim], p, []float32{1, 1, 1, 1}, o.legacy, o.angleOn, o.angleLo, o.angleHi)
			clipBox(p, int(ih), int(iw), o.clipThresh, o.legacy)
		}
		one := plusOne(o.legacy)
		minSize := float64(o.minSize) * float64(scale)
		var keep []int
		for r := range order {
			p := props[r*dim : (r+1)*dim]
			ws, hs, cx, cy := p[2]-p[0]+one, p[3]-p[1]+one, float32(0), float32(0)
			if dim == 4 {
				cx, cy = p[0]+ws/2, p[1]+hs/2
			} else {
				ws, hs, cx, cy = p[2], p[3], p[0], p[1]
			}
			if float64(ws) >= minSize && float64(hs) >= minSize && cx < iw && cy < ih {
				keep = append(keep, r)
			}
		}
		top := -1
		if o.post > 0 && o.post < len(keep) {
			top = o.post
		}
		keep = nms(props, dim, dim, keep, o.thresh, top, o.legacy)
		bs, ps := make([]float32, 0, dim*len(keep)), make([]float32, 0, len(keep))
		for _, r := range keep {
			bs = append(bs, props[r*dim:(r+1)*dim]...)
			ps = append(ps, sc[order[r]])
		}
		boxes, probs = append(boxes, bs), append(probs, ps)
		total += len(ps)
	}
	rois, rp := o.Output(0), o.Output(1)
	if err := rois.Init(blob.Float32, total, dim+1); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	if err := rp.Init(blob.Float32, total); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(1), err)
	}
	rd, pd := blob.Data[float32](rois), blob.Data[float32](rp)
	at := 0
	for img := range n {
		for q, p := range probs[img] {
			rd[at*(dim+1)] = float32(img)
			copy(rd[at*(dim+1)+1:(at+1)*(dim+1)], boxes[img][q*dim:(q+1)*dim])
			pd[at] = p
			at++
		}
	}
	return nil
}
