package image

import (
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestResizeSteadyNoAllocs holds the resizing and locally connected
// operators to the steady-state rule: a second run allocates nothing.
func TestResizeSteadyNoAllocs(t *testing.T) {
	r := newRand(17)
	x := func(shape ...int) *blob.Tensor { return randF32(r, shape...) }
	hs, ws := netdef.ArgFloat("height_scale", 2), netdef.ArgFloat("width_scale", 2)
	k := netdef.ArgInt("kernel", 3)
	for _, c := range []struct {
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
	}{
		{netdef.NewOperator("ResizeNearest", []string{"X"}, []string{"Y"}, hs, ws), []*blob.Tensor{x(1, 8, 32, 32)}},
		{netdef.NewOperator("ResizeNearestGradient", []string{"dY", "X"}, []string{"dX"}, hs, ws), []*blob.Tensor{x(1, 8, 64, 64), x(1, 8, 32, 32)}},
		{netdef.NewOperator("UpsampleBilinear", []string{"X", "s"}, []string{"Y"}), []*blob.Tensor{x(1, 8, 32, 32), blob.MustFromSlice([]float32{2, 1.5}, 2)}},
		{netdef.NewOperator("UpsampleBilinearGradient", []string{"dY", "X"}, []string{"dX"}, hs, ws), []*blob.Tensor{x(1, 8, 64, 64), x(1, 8, 32, 32)}},
		{netdef.NewOperator("LC", []string{"X", "W", "b"}, []string{"Y"}, k), []*blob.Tensor{x(2, 3, 8, 8), x(6, 6, 4, 3, 3, 3), x(6, 6, 4)}},
		{netdef.NewOperator("LCGradient", []string{"X", "W", "dY"}, []string{"dW", "db", "dX"}, k), []*blob.Tensor{x(2, 3, 8, 8), x(6, 6, 4, 3, 3, 3), x(2, 4, 6, 6)}},
	} {
		t.Run(c.def.GetType(), func(t *testing.T) { optest.AssertNoAllocs(t, c.def, c.inputs...) })
	}
}
