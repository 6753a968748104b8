package optim

import (
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

func TestLars(t *testing.T) {
	// ‖X‖ = 5 (3, 4), ‖dX‖ = 10 (6, 8): the ratio is 2.
	x := blob.MustFromSlice([]float32{3, 4})
	dx := blob.MustFromSlice([]float32{6, 8})
	zero := blob.MustFromSlice([]float32{0, 0})
	s := func(v float32) *blob.Tensor { return blob.MustFromSlice([]float32{v}) }
	lars := func(args ...*netdef.Argument) *netdef.OperatorDef {
		return netdef.NewOperator("Lars", []string{"x", "dx"}, []string{"scale"}, args...)
	}
	lars5 := func(args ...*netdef.Argument) *netdef.OperatorDef {
		return netdef.NewOperator("Lars", []string{"x", "dx", "wd", "trust", "lr_max"}, []string{"scale"}, args...)
	}
	for _, tc := range []struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
		want   float64
	}{
		{"default offset", lars(), []*blob.Tensor{x, dx}, 1 / 2.5},
		{"offset", lars(netdef.ArgFloat("offset", 2)), []*blob.Tensor{x, dx}, 0.25},
		{"zero param", lars(), []*blob.Tensor{zero, dx}, 1},
		{"five inputs", lars5(netdef.ArgFloat("offset", 1)), []*blob.Tensor{x, dx, s(1), s(8), s(100)}, 2},
		{"clamped above", lars5(netdef.ArgFloat("offset", 1)), []*blob.Tensor{x, dx, s(1), s(8), s(1.5)}, 1.5},
		{"clamped below", lars5(netdef.ArgFloat("offset", 1)), []*blob.Tensor{x, dx, s(1), s(0.01), s(100)}, 0.02},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := optest.MustRunOp(t, tc.def, tc.inputs...)
			if d := out[0].Dims(); len(d) != 1 || d[0] != 1 {
				t.Errorf("shape %v, want [1]", d)
			}
			optest.CheckClose(t, "scale", out[0].AsFloat64s(), []float64{float64(float32(tc.want))}, 1e-7)
		})
	}
	if _, err := optest.RunOp(lars(), x, blob.MustFromSlice([]float32{1, 2, 3})); err == nil || !strings.Contains(err.Error(), `"dx"`) {
		t.Errorf("size mismatch: error %v, want one naming \"dx\"", err)
	}
	bad := netdef.NewOperator("Lars", []string{"x", "dx", "wd"}, []string{"scale"})
	if _, err := optest.RunOp(bad, x, dx, s(1)); err == nil {
		t.Error("three inputs accepted")
	}
}
