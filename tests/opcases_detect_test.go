package tests

import (
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// The detection and image-resizing operators' conformance cases.
func init() {
	caseSets = append(caseSets, func(s *sampler) []optest.Case {
		op := cgParse
		af, as := netdef.ArgFloat, netdef.ArgString
		g0 := []int{0}
		return []optest.Case{
			{Op: op("ResizeNearest(X) -> Y", af("height_scale", 2), af("width_scale", 1.5)), Inputs: ts(s.x(2, 2, 3, 4)), Grad: g0},
			{Name: "NHWC scales input", Op: op("ResizeNearest(X, scales) -> Y", as("order", "NHWC")), Inputs: ts(s.x(1, 3, 2, 2), f32(0.7, 2)), Grad: g0},
			{Op: op("UpsampleBilinear(X) -> Y", af("height_scale", 2), af("width_scale", 1.5)), Inputs: ts(s.x(2, 2, 3, 4)), Grad: g0},
			{Name: "scales input", Op: op("UpsampleBilinear(X, scales) -> Y"), Inputs: ts(s.x(1, 2, 4, 3), f32(0.5, 2.5)), Grad: g0},
		}
	})
}
