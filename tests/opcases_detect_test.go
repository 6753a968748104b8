package tests

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// The detection and image-resizing operators' conformance cases.
func init() {
	caseSets = append(caseSets, func(s *sampler) []optest.Case {
		op := cgParse
		af, as, ai, ab := netdef.ArgFloat, netdef.ArgString, netdef.ArgInt, netdef.ArgBool
		g0 := []int{0}
		// RoIs whose sampling points stay off pixel boundaries, where the
		// bilinear weights have kinks.
		rois := f32(0, 0.3, 0.6, 4.1, 3.7, 1, 1.2, 0.4, 5.3, 4.9)
		_ = rois.Reshape(2, 5)
		rois4 := f32(0.3, 0.6, 4.1, 3.7)
		_ = rois4.Reshape(1, 4)
		// Well-separated pixel values keep RoIPool's maxima unique.
		boxes := f32(10, 12, 50, 60, 0, 0, 30, 40, 5, 5, 40, 20, 20, 30, 60, 70)
		_ = boxes.Reshape(4, 4)
		deltas := s.in(-0.5, 0.5, 4, 8)
		info := f32(80, 100, 1)
		_ = info.Reshape(1, 3)
		nmsScores := f32(0.1, 0.9, 0.3, 0.2, 0.8, 0.6, 0.3, 0.7, 0.5, 0.4, 0.2, 0.95)
		_ = nmsScores.Reshape(4, 3)
		nmsBoxes := f32(0, 0, 9, 9, 0, 0, 9, 9, 0, 0, 9, 9,
			1, 1, 10, 10, 1, 1, 10, 10, 1, 1, 10, 10,
			30, 30, 40, 45, 30, 30, 40, 45, 30, 30, 40, 45,
			0, 4, 9, 14, 0, 4, 9, 14, 0, 4, 9, 14)
		_ = nmsBoxes.Reshape(4, 12)
		anchors := f32(-8, -8, 7, 7, -16, -8, 15, 7)
		_ = anchors.Reshape(2, 4)
		rotScores := f32(0.2, 0.9, 0.4, 0.8, 0.1, 0.7)
		_ = rotScores.Reshape(3, 2)
		rotBoxes := f32(0, 0, 0, 0, 0, 10, 10, 8, 4, 30, 0, 0, 0, 0, 0, 11, 10, 8, 4, 40, 0, 0, 0, 0, 0, 40, 40, 6, 6, -20)
		_ = rotBoxes.Reshape(3, 10)
		rotRoIs := f32(20, 30, 10, 8, 80, 50, 40, 12, 6, 0.5)
		_ = rotRoIs.Reshape(2, 5)
		rotAnchors := f32(4, 4, 8, 4, 30, 4, 4, 6, 6, 0.5)
		_ = rotAnchors.Reshape(2, 5)
		level := func(xs ...float32) []*blob.Tensor {
			r := f32(xs...)
			_ = r.Reshape(len(xs)/5, 5)
			sc := s.pos(len(xs) / 5)
			return ts(r, sc)
		}
		l0, l1 := level(0, 0, 0, 30, 40, 0, 10, 10, 200, 300), level(0, 5, 5, 500, 600, 0, 1, 2, 60, 80, 0, 3, 3, 900, 900)
		return []optest.Case{
			{Op: op("LC(X, W, b) -> Y", ai("kernel", 2), ai("pad", 1), ai("stride", 2)), Inputs: ts(s.x(2, 2, 3, 3), s.x(2, 2, 3, 2, 2, 2), s.x(2, 2, 3)), Grad: []int{0, 1, 2}},
			{Name: "NHWC", Op: op("LC(X, W, b) -> Y", ai("kernel", 2), as("order", "NHWC")), Inputs: ts(s.x(1, 3, 3, 2), s.x(2, 2, 2, 2, 2, 2), s.x(2, 2, 2)), Grad: []int{0, 1, 2}},
			{Op: op("LC1D(X, W) -> Y", netdef.ArgInts("kernels", 2)), Inputs: ts(s.x(2, 2, 4), s.x(3, 2, 2, 2)), Grad: []int{0, 1}},
			{Name: "groups", Op: op("LC2D(X, W, b) -> Y", ai("kernel", 2), ai("group", 2)), Inputs: ts(s.x(1, 4, 3, 3), s.x(2, 2, 2, 2, 2, 2), s.x(2, 2, 2)), Grad: []int{0, 1, 2}},
			{Op: op("LC3D(X, W, b) -> Y", netdef.ArgInts("kernels", 1, 2, 2)), Inputs: ts(s.x(1, 2, 2, 3, 3), s.x(2, 2, 2, 2, 2, 1, 2, 2), s.x(2, 2, 2, 2)), Grad: []int{0, 1, 2}},
			{Op: op("RoIAlign(X, R) -> Y", ai("pooled_h", 2), ai("pooled_w", 2)), Inputs: ts(s.x(2, 2, 6, 6), rois), Grad: g0},
			{Name: "NHWC aligned 4 columns", Op: op("RoIAlign(X, R) -> Y", ai("pooled_h", 2), ai("pooled_w", 3), ai("sampling_ratio", 2), ab("aligned", true), as("order", "NHWC")), Inputs: ts(s.x(1, 6, 6, 2), rois4), Grad: g0},
			{Op: op("RoIPool(X, R) -> Y, argmaxes", ai("pooled_h", 2), ai("pooled_w", 2)), Inputs: ts(s.x(2, 2, 6, 6), rois), Grad: g0, GradOutputs: g0},
			{Name: "test", Op: op("RoIPool(X, R) -> Y", ai("pooled_h", 3), ai("pooled_w", 2), ab("is_test", true), af("spatial_scale", 0.5)), Inputs: ts(s.x(2, 2, 6, 6), rois)},
			{Op: op("IntegralImage(X) -> Y"), Inputs: ts(s.x(2, 2, 3, 4)), Grad: g0},
			{Op: op("BBoxTransform(rois, deltas, im_info) -> boxes, splits"), Inputs: ts(boxes, deltas, info)},
			{Op: op("BoxWithNMSLimit(scores, boxes) -> s, b, c, splits, keeps, keeps_size", af("nms", 0.4)), Inputs: ts(nmsScores, nmsBoxes)},
			{Name: "soft", Op: op("BoxWithNMSLimit(scores, boxes, splits) -> s, b, c", ab("soft_nms_enabled", true), ai("detections_per_im", 3)), Inputs: ts(nmsScores, nmsBoxes, f32(1, 3))},
			{Op: op("GenerateProposals(scores, deltas, im_info, anchors) -> rois, probs", ai("pre_nms_topN", 10), ai("post_nms_topN", 5), af("min_size", 2)),
				Inputs: ts(s.pos(1, 2, 3, 3), s.in(-0.2, 0.2, 1, 8, 3, 3), info, anchors)},
			{Name: "rotated", Op: op("BoxWithNMSLimit(scores, boxes) -> s, b, c", ab("rotated", true)), Inputs: ts(rotScores, rotBoxes)},
			{Name: "rotated", Op: op("BBoxTransform(rois, deltas, im_info) -> boxes", ab("rotated", true)), Inputs: ts(rotRoIs, s.in(-0.5, 0.5, 2, 10), info)},
			{Name: "rotated", Op: op("GenerateProposals(scores, deltas, im_info, anchors) -> rois, probs", ai("pre_nms_topN", 10), af("min_size", 2), af("spatial_scale", 0.25)),
				Inputs: ts(s.pos(1, 2, 3, 3), s.in(-0.2, 0.2, 1, 10, 3, 3), info, rotAnchors)},
			{Op: op("GenerateProposalsCPP(scores, deltas, im_info, anchors) -> rois, probs"), Inputs: ts(s.pos(1, 2, 3, 3), s.in(-0.2, 0.2, 1, 8, 3, 3), info, anchors)},
			{Op: op("CollectAndDistributeFpnRpnProposals(r2, r3, s2, s3) -> rois, l2, l3, l4, l5, restore", ai("rpn_min_level", 2), ai("rpn_max_level", 3)), Inputs: ts(l0[0], l1[0], l0[1], l1[1])},
			{Op: op("CollectRpnProposals(r2, r3, s2, s3) -> rois", ai("rpn_min_level", 2), ai("rpn_max_level", 3), ai("rpn_post_nms_topN", 3)), Inputs: ts(l0[0], l1[0], l0[1], l1[1])},
			{Op: op("DistributeFpnProposals(rois) -> l2, l3, l4, l5, restore"), Inputs: ts(l1[0])},
			{Op: op("ResizeNearest(X) -> Y", af("height_scale", 2), af("width_scale", 1.5)), Inputs: ts(s.x(2, 2, 3, 4)), Grad: g0},
			{Name: "NHWC scales input", Op: op("ResizeNearest(X, scales) -> Y", as("order", "NHWC")), Inputs: ts(s.x(1, 3, 2, 2), f32(0.7, 2)), Grad: g0},
			{Op: op("UpsampleBilinear(X) -> Y", af("height_scale", 2), af("width_scale", 1.5)), Inputs: ts(s.x(2, 2, 3, 4)), Grad: g0},
			{Name: "scales input", Op: op("UpsampleBilinear(X, scales) -> Y"), Inputs: ts(s.x(1, 2, 4, 3), f32(0.5, 2.5)), Grad: g0},
		}
	})
}
