package detect

import (
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestSteadyNoAllocs holds the dense detection operators (the ones on a
// training or inference net's hot path, as opposed to the proposal and NMS
// bookkeeping) to the steady-state rule: a second run allocates nothing.
func TestSteadyNoAllocs(t *testing.T) {
	x := optest.F32(make([]float64, 2*4*16*16), 2, 4, 16, 16)
	rois := optest.F32([]float64{0, 0.3, 0.6, 12.1, 9.7, 1, 1.2, 0.4, 15.3, 14.9}, 2, 5)
	dy := optest.F32(make([]float64, 2*4*7*7), 2, 4, 7, 7)
	argmax := blob.MustFromSlice(make([]int32, 2*4*7*7), 2, 4, 7, 7)
	pool := []*blob.Tensor{x, rois}
	for _, c := range []struct {
		name   string
		op     string
		inputs []*blob.Tensor
	}{
		{"RoIAlign", "RoIAlign X R -> Y", pool},
		{"RoIAlignGradient", "RoIAlignGradient X R dY -> dX", []*blob.Tensor{x, rois, dy}},
		{"RoIPool", "RoIPool X R -> Y A", pool},
		{"RoIPoolGradient", "RoIPoolGradient X R A dY -> dX", []*blob.Tensor{x, rois, argmax, dy}},
		{"IntegralImage", "IntegralImage X -> Y", []*blob.Tensor{x}},
	} {
		lhs, out, _ := strings.Cut(c.op, " -> ")
		typ, in, _ := strings.Cut(lhs, " ")
		def := op(typ, in, out, ai("pooled_h", 7), ai("pooled_w", 7))
		t.Run(c.name, func(t *testing.T) { optest.AssertNoAllocs(t, def, c.inputs...) })
	}
}
