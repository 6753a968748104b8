package quant

import (
	"math/rand/v2"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestInt8SteadyStateAllocatesNothing: once an int8 operator has run, its
// output keeps its storage and its scratch, so later runs allocate nothing.
func TestInt8SteadyStateAllocatesNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	nhwc := netdef.ArgString("order", "NHWC")
	for _, c := range []struct {
		def *netdef.OperatorDef
		ins map[string]any
	}{
		{op("Int8Conv", []string{"X", "W", "B"}, []string{"Y"}, with(yq(0.5, 100), netdef.ArgInt("kernel", 3), netdef.ArgInt("pad", 1), nhwc)...),
			map[string]any{"X": randQ(rng, 0.1, 128, 2, 6, 6, 4), "W": randQ(rng, 0.05, 120, 8, 3, 3, 4), "B": &Int8Tensor{T: blob.MustFromSlice(make([]int32, 8)), Scale: 0.005}}},
		{op("Int8ConvRelu", []string{"X", "W", "B"}, []string{"Y"}, with(yq(0.5, 100), netdef.ArgInt("kernel", 3), netdef.ArgInt("group", 4), nhwc)...),
			map[string]any{"X": randQ(rng, 0.1, 128, 2, 6, 6, 4), "W": randQ(rng, 0.05, 120, 4, 3, 3, 1), "B": &Int8Tensor{T: blob.MustFromSlice(make([]int32, 4)), Scale: 0.005}}},
		{op("Int8FC", []string{"X", "W", "B"}, []string{"Y"}, yq(0.5, 100)...),
			map[string]any{"X": randQ(rng, 0.1, 128, 3, 8), "W": randQ(rng, 0.05, 120, 5, 8), "B": &Int8Tensor{T: blob.MustFromSlice(make([]int32, 5)), Scale: 0.005}}},
		{op("Int8MaxPool", []string{"X"}, []string{"Y"}, with(yq(0.1, 128), netdef.ArgInt("kernel", 2), nhwc)...), map[string]any{"X": randQ(rng, 0.1, 128, 2, 6, 6, 4)}},
		{op("Int8AveragePool", []string{"X"}, []string{"Y"}, with(yq(0.1, 128), netdef.ArgInt("global_pooling", 1), nhwc)...), map[string]any{"X": randQ(rng, 0.1, 128, 2, 6, 6, 4)}},
		{op("Int8Add", []string{"A", "B"}, []string{"Y"}, yq(0.2, 128)...), map[string]any{"A": randQ(rng, 0.1, 128, 3, 4), "B": randQ(rng, 0.05, 100, 3, 4)}},
		{op("Int8Concat", []string{"A", "B"}, []string{"Y", "split"}, yq(0.1, 128)...), map[string]any{"A": randQ(rng, 0.1, 128, 3, 4), "B": randQ(rng, 0.1, 128, 2, 4)}},
		{op("Int8Relu", []string{"X"}, []string{"Y"}, yq(0.1, 128)...), map[string]any{"X": randQ(rng, 0.1, 128, 3, 4)}},
		{op("Int8Softmax", []string{"X"}, []string{"Y"}, yq(1.0/256, 0)...), map[string]any{"X": randQ(rng, 0.1, 128, 3, 4)}},
		{op("Int8Sigmoid", []string{"X"}, []string{"Y"}, yq(1.0/256, 0)...), map[string]any{"X": randQ(rng, 0.1, 128, 3, 4)}},
		{op("Int8Quantize", []string{"X"}, []string{"Y"}, yq(0.1, 128)...), map[string]any{"X": blob.MustFromSlice([]float32{1, -2, 3})}},
		{op("Int8Dequantize", []string{"X"}, []string{"Y"}), map[string]any{"X": randQ(rng, 0.1, 128, 3, 4)}},
		{op("FloatToHalf", []string{"X"}, []string{"Y"}), map[string]any{"X": blob.MustFromSlice([]float32{1, -2, 3})}},
	} {
		w := optest.NewWorkspace()
		for name, v := range c.ins {
			w.CreateBlob(name).Set(v)
		}
		o, err := operators.Create(c.def, w, -1)
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Run(); err != nil {
			t.Fatalf("%s: %v", c.def.GetType(), err)
		}
		optest.AssertOpNoAllocs(t, o)
	}
}
