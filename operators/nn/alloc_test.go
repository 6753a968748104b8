package nn

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

func steadyCases() []steadyCase {
	r := newRand(61)
	x := func(shape ...int) *blob.Tensor { return optest.F32(randVals(r, numel(shape), -1, 1), shape...) }
	mask := blob.MustFromSlice(make([]bool, 64*256), 64, 256)
	return []steadyCase{
		{"Relu", opDef("Relu", []string{"X"}, []string{"Y"}), []*blob.Tensor{x(64, 256)}},
		{"ReluInPlace", opDef("Relu", []string{"X"}, []string{"X"}), []*blob.Tensor{x(64, 256)}},
		{"ReluGradient", opDef("ReluGradient", []string{"Y", "dY"}, []string{"dX"}), []*blob.Tensor{x(64, 256), x(64, 256)}},
		// The convnet benchmark's first activation: 128 images of 32×32×32.
		{"ReluInPlaceConvnet", opDef("Relu", []string{"X"}, []string{"X"}), []*blob.Tensor{x(128, 32, 32, 32)}},
		{"ReluGradientConvnet", opDef("ReluGradient", []string{"Y", "dY"}, []string{"dY"}), []*blob.Tensor{x(128, 32, 32, 32), x(128, 32, 32, 32)}},
		{"LeakyRelu", opDef("LeakyRelu", []string{"X"}, []string{"Y"}), []*blob.Tensor{x(64, 256)}},
		{"LeakyReluGradient", opDef("LeakyReluGradient", []string{"Y", "dY"}, []string{"dX"}), []*blob.Tensor{x(64, 256), x(64, 256)}},
		{"Sigmoid", opDef("Sigmoid", []string{"X"}, []string{"Y"}), []*blob.Tensor{x(64, 256)}},
		{"SigmoidGradient", opDef("SigmoidGradient", []string{"Y", "dY"}, []string{"dX"}), []*blob.Tensor{x(64, 256), x(64, 256)}},
		{"Tanh", opDef("Tanh", []string{"X"}, []string{"Y"}), []*blob.Tensor{x(64, 256)}},
		{"TanhGradient", opDef("TanhGradient", []string{"Y", "dY"}, []string{"dX"}), []*blob.Tensor{x(64, 256), x(64, 256)}},
		{"Softmax", opDef("Softmax", []string{"X"}, []string{"Y"}), []*blob.Tensor{x(64, 1000)}},
		{"SoftmaxGradient", opDef("SoftmaxGradient", []string{"Y", "dY"}, []string{"dX"}), []*blob.Tensor{x(64, 1000), x(64, 1000)}},
		{"FC", opDef("FC", []string{"X", "W", "b"}, []string{"Y"}), []*blob.Tensor{x(64, 512), x(256, 512), x(256)}},
		{"FCAxis2", opDef("FC", []string{"X", "W", "b"}, []string{"Y"}, argInt("axis", 2)), []*blob.Tensor{x(4, 16, 32), x(8, 32), x(8)}},
		{"FCGradient", opDef("FCGradient", []string{"X", "W", "dY"}, []string{"dW", "db", "dX"}), []*blob.Tensor{x(64, 512), x(256, 512), x(64, 256)}},
		{"FCTransposed", opDef("FCTransposed", []string{"X", "W", "b"}, []string{"Y"}), []*blob.Tensor{x(64, 512), x(512, 256), x(256)}},
		{"FCTransposedGradient", opDef("FCTransposedGradient", []string{"X", "W", "dY"}, []string{"dW", "db", "dX"}), []*blob.Tensor{x(64, 512), x(512, 256), x(64, 256)}},
		{"MatMul", opDef("MatMul", []string{"A", "B"}, []string{"Y"}), []*blob.Tensor{x(256, 256), x(256, 256)}},
		{"MatMulShaped", opDef("MatMul", []string{"A", "B", "S"}, []string{"Y"}, argInt("trans_a", 1)), []*blob.Tensor{x(32, 16), x(32, 8), x(4, 4, 8)}},
		{"BatchMatMul", opDef("BatchMatMul", []string{"A", "B"}, []string{"Y"}), []*blob.Tensor{x(16, 64, 64), x(16, 64, 64)}},
		{"BatchMatMulBroadcast", opDef("BatchMatMul", []string{"A", "B"}, []string{"Y"}, argInt("broadcast", 1)), []*blob.Tensor{x(4, 1, 8, 8), x(3, 8, 8)}},
		{"BatchMatMulVector", opDef("BatchMatMul", []string{"A", "B"}, []string{"Y"}), []*blob.Tensor{x(8), x(4, 8, 8)}},
		{"Dropout", opDef("Dropout", []string{"X"}, []string{"Y", "mask"}), []*blob.Tensor{x(64, 256)}},
		{"DropoutTest", opDef("Dropout", []string{"X"}, []string{"Y"}, argInt("is_test", 1)), []*blob.Tensor{x(64, 256)}},
		{"DropoutGrad", opDef("DropoutGrad", []string{"dY", "mask"}, []string{"dX"}), []*blob.Tensor{x(64, 256), mask}},
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
