package image

import (
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

type steadyCase struct {
	name   string
	def    *netdef.OperatorDef
	inputs []*blob.Tensor
}

// steadyCases are the operators at the sizes of a style-transfer model's
// layers (32 channels of 128×128, batch 1) and of a 256×256 photo.
func steadyCases() []steadyCase {
	r := newRand(9)
	x := func(shape ...int) *blob.Tensor { return randF32(r, shape...) }
	nhwc := netdef.ArgString("order", "NHWC")
	pixels := make([]uint8, 256*256*4)
	for i := range pixels {
		pixels[i] = uint8(r.IntN(256))
	}
	mean := blob.MustFromSlice([]float32{103.939, 116.779, 123.68}, 3)
	return []steadyCase{
		{"NCHW2NHWC", netdef.NewOperator("NCHW2NHWC", []string{"X"}, []string{"Y"}), []*blob.Tensor{x(1, 32, 128, 128)}},
		{"NHWC2NCHW", netdef.NewOperator("NHWC2NCHW", []string{"X"}, []string{"Y"}), []*blob.Tensor{x(1, 128, 128, 32)}},
		{"ChannelShuffle", netdef.NewOperator("ChannelShuffle", []string{"X"}, []string{"Y"}, netdef.ArgInt("group", 4)), []*blob.Tensor{x(1, 32, 128, 128)}},
		{"ChannelShuffleNHWC", netdef.NewOperator("ChannelShuffle", []string{"X"}, []string{"Y"}, netdef.ArgInt("group", 4), nhwc), []*blob.Tensor{x(1, 128, 128, 32)}},
		{"ChannelShuffleGradient", netdef.NewOperator("ChannelShuffleGradient", []string{"dY"}, []string{"dX"}, netdef.ArgInt("group", 4)), []*blob.Tensor{x(1, 32, 128, 128)}},
		{"PRelu", netdef.NewOperator("PRelu", []string{"X", "slope"}, []string{"Y"}), []*blob.Tensor{x(1, 32, 128, 128), x(32)}},
		// Slope 1 keeps X as it is, run after run (smaller slopes would
		// drive it into subnormal numbers).
		{"PReluInPlace", netdef.NewOperator("PRelu", []string{"X", "slope"}, []string{"X"}), []*blob.Tensor{x(1, 32, 128, 128), optest.F32([]float64{1}, 1)}},
		{"PReluNHWC", netdef.NewOperator("PRelu", []string{"X", "slope"}, []string{"Y"}, nhwc), []*blob.Tensor{x(1, 128, 128, 32), x(32)}},
		{"PReluGradient", netdef.NewOperator("PReluGradient", []string{"Y", "dY", "X", "slope"}, []string{"dX", "dslope"}), []*blob.Tensor{x(1, 32, 128, 128), x(1, 32, 128, 128), x(1, 32, 128, 128), x(32)}},
		{"PReluGradientNHWC", netdef.NewOperator("PReluGradient", []string{"Y", "dY", "X", "slope"}, []string{"dX", "dslope"}, nhwc), []*blob.Tensor{x(1, 128, 128, 32), x(1, 128, 128, 32), x(1, 128, 128, 32), x(32)}},
		{"StylizerPreprocess", preprocessDef(), []*blob.Tensor{blob.MustFromSlice(pixels, 1, 256, 256, 4), mean}},
		{"StylizerDeprocess", deprocessDef(), []*blob.Tensor{x(1, 3, 256, 256), mean}},
	}
}

func TestNoAllocationsInSteadyState(t *testing.T) {
	for _, c := range steadyCases() {
		t.Run(c.name, func(t *testing.T) { optest.AssertNoAllocs(t, c.def, c.inputs...) })
	}
}

func BenchmarkOps(b *testing.B) {
	for _, c := range steadyCases() {
		b.Run(c.name, func(b *testing.B) { optest.Benchmark(b, optest.Steady(b, c.def, c.inputs...)) })
	}
}
