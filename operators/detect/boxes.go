package detect

import (
	"math"
	"slices"
)

// bboxXformClip is Caffe2's BBOX_XFORM_CLIP_DEFAULT, log(1000/16): the
// largest log-scale a delta may grow a box by.
var bboxXformClip = float32(math.Log(1000.0 / 16.0))

// plusOne is Caffe2's legacy_plus_one as a number: a box [x1, x2] is
// x2 − x1 + 1 pixels wide when it is set.
func plusOne(legacy bool) float32 {
	if legacy {
		return 1
	}
	return 0
}

func expf(v float32) float32 { return float32(math.Exp(float64(v))) }

// transformBox applies regression deltas d (dx, dy, dw, dh, [da]) with
// weights to box b, upright [x1, y1, x2, y2] or rotated [ctr_x, ctr_y, w,
// h, angle°], writing the result to out (Caffe2's bbox_transform).
func transformBox(b, d, out []float32, weights []float32, legacy bool, angleOn bool, angleLo, angleHi int) {
	one := plusOne(legacy)
	dx, dy := d[0]/weights[0], d[1]/weights[1]
	dw, dh := min(d[2]/weights[2], bboxXformClip), min(d[3]/weights[3], bboxXformClip)
	if len(b) == 4 {
		w, h := b[2]-b[0]+one, b[3]-b[1]+one
		cx, cy := b[0]+0.5*w, b[1]+0.5*h
		px, py := dx*w+cx, dy*h+cy
		pw, ph := expf(dw)*w, expf(dh)*h
		out[0], out[1] = px-0.5*pw, py-0.5*ph
		out[2], out[3] = px+0.5*pw-one, py+0.5*ph-one
		return
	}
	da := float32(float64(d[4]) * 180.0 / math.Pi)
	out[0], out[1] = dx*b[2]+b[0], dy*b[3]+b[1]
	out[2], out[3] = expf(dw)*b[2], expf(dh)*b[3]
	out[4] = da + b[4]
	if angleOn {
		period := float32(angleHi - angleLo)
		if out[4] < float32(angleLo) {
			out[4] += period
		} else if out[4] > float32(angleHi) {
			out[4] -= period
		}
	}
}

// clipBox clips box b in place to an h×w image (Caffe2's clip_boxes): an
// upright box's corners into [0, w−1] × [0, h−1] (w, h with legacy
// plus-one, w−0 without); a rotated box only when it is within angleThresh
// degrees of upright, through its corner form.
func clipBox(b []float32, h, w int, angleThresh float32, legacy bool) {
	one := plusOne(legacy)
	clip := func(v float32, hi int) float32 { return max(min(v, float32(hi)-one), 0) }
	if len(b) == 4 {
		b[0], b[1], b[2], b[3] = clip(b[0], w), clip(b[1], h), clip(b[2], w), clip(b[3], h)
		return
	}
	if !(float32(math.Abs(float64(b[4]))) <= angleThresh) {
		return
	}
	x1, y1 := b[0]-(b[2]-one)/2, b[1]-(b[3]-one)/2
	x2, y2 := b[0]+(b[2]-one)/2, b[1]+(b[3]-one)/2
	x1, y1, x2, y2 = clip(x1, w), clip(y1, h), clip(x2, w), clip(y2, h)
	b[0], b[1] = (x1+x2)/2, (y1+y2)/2
	b[2], b[3] = x2-x1+one, y2-y1+one
}

// area is an upright box's area.
func area(b []float32, one float32) float32 { return (b[2] - b[0] + one) * (b[3] - b[1] + one) }

// iou is the intersection over union of upright boxes a and b.
func iou(a, b []float32, areaA, areaB, one float32) float32 {
	w := max(min(a[2], b[2])-max(a[0], b[0])+one, 0)
	h := max(min(a[3], b[3])-max(a[1], b[1])+one, 0)
	inter := w * h
	return inter / (areaA + areaB - inter)
}

// overlap measures the IoU of boxes of dim 4 (upright [x1, y1, x2, y2])
// or 5 (rotated [ctr_x, ctr_y, w, h, angle°], whose IoU needs no
// plus-one).
type overlap struct {
	dim int
	one float32
}

func newOverlap(dim int, legacy bool) overlap { return overlap{dim: dim, one: plusOne(legacy)} }

func (v overlap) area(b []float32) float32 {
	if v.dim == 5 {
		return b[2] * b[3]
	}
	return area(b, v.one)
}

func (v overlap) iou(a, b []float32, areaA, areaB float32) float32 {
	if v.dim == 5 {
		inter := rotatedIntersection(a, b)
		return inter / (areaA + areaB - inter)
	}
	return iou(a, b, areaA, areaB, v.one)
}

// nms is Caffe2's greedy non-maximum suppression over the boxes (rows of
// dim values at stride) listed in order, best first: it keeps the first
// remaining box and drops every later one whose IoU with it exceeds
// thresh, until topN are kept (topN < 0: no limit). It returns the kept
// rows in order.
func nms(boxes []float32, stride, dim int, order []int, thresh float32, topN int, legacy bool) []int {
	ov := newOverlap(dim, legacy)
	box := func(i int) []float32 { return boxes[i*stride : i*stride+dim] }
	pend := slices.Clone(order)
	pa := make([]float32, len(order))
	for k, i := range order {
		pa[k] = ov.area(box(i))
	}
	var keep []int
	for len(pend) > 0 {
		if topN >= 0 && len(keep) >= topN {
			break
		}
		i := pend[0]
		keep = append(keep, i)
		bi, ai := box(i), pa[0]
		n := 0
		for k := 1; k < len(pend); k++ {
			if ov.iou(bi, box(pend[k]), ai, pa[k]) <= thresh {
				pend[n], pa[n] = pend[k], pa[k]
				n++
			}
		}
		pend, pa = pend[:n], pa[:n]
	}
	return keep
}

// softNMS is Caffe2's soft non-maximum suppression over the boxes (rows
// of dim values at stride) listed in cand: it repeatedly keeps the
// remaining box of highest score (the first one on ties) and decays the
// scores of the others by their IoU with it (method 1 linear: 1−IoU above
// thresh; 2 Gaussian: exp(−IoU²/sigma)), dropping those that fall below
// minScore. scores (at sstride) is updated in place; it returns the kept
// rows in the order kept.
func softNMS(boxes []float32, stride, dim int, scores []float32, sstride int, cand []int, sigma, thresh, minScore float32, method int, legacy bool) []int {
	ov := newOverlap(dim, legacy)
	box := func(i int) []float32 { return boxes[i*stride : i*stride+dim] }
	score := func(i int) *float32 { return &scores[i*sstride] }
	pend := slices.Clone(cand)
	var keep []int
	for len(pend) > 0 {
		best := 0
		for k := 1; k < len(pend); k++ {
			if *score(pend[k]) > *score(pend[best]) {
				best = k
			}
		}
		i := pend[best]
		keep = append(keep, i)
		pend[0], pend[best] = pend[best], pend[0]
		bi, ai := box(i), ov.area(box(i))
		rest := pend[1:]
		n := 0
		for _, j := range rest {
			o := ov.iou(bi, box(j), ai, ov.area(box(j)))
			var wgt float32
			switch method {
			case 1:
				wgt = 1
				if o > thresh {
					wgt = 1 - o
				}
			case 2:
				wgt = float32(math.Exp(-1.0 * float64(o) * float64(o) / float64(sigma)))
			default:
				wgt = 1
				if o > thresh {
					wgt = 0
				}
			}
			*score(j) *= wgt
			if *score(j) >= minScore {
				rest[n] = j
				n++
			}
		}
		pend = rest[:n]
	}
	return keep
}
