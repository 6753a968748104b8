package math

import (
	"fmt"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

func TestSteadyStateDoesNotAllocate(t *testing.T) {
	r := newRand()
	a, b := randAway(r, -2, 2, 0.5, 4, 3, 5), randAway(r, -2, 2, 0.5, 4, 3, 5)
	bc := netdef.ArgInt("broadcast", 1)
	w1 := f32([]int{1}, 0.5)
	cases := []struct {
		def *netdef.OperatorDef
		in  []*blob.Tensor
	}{
		{op("Add", abc[0], abc[1]), []*blob.Tensor{a, b}},
		{op("Sub", abc[0], abc[1], bc, netdef.ArgInt("axis", 1)), []*blob.Tensor{a, randT(r, 0, 1, 3)}},
		{op("Mul", abc[0], abc[1]), []*blob.Tensor{randT(r, 0, 1, 4, 1, 5), randT(r, 0, 1, 3, 1)}},
		{op("Div", abc[0], abc[1]), []*blob.Tensor{blob.MustFromSlice([]int32{4, 5, 6}), blob.MustFromSlice([]int32{1, 2, 3})}},
		{op("Add", []string{"A", "B"}, []string{"A"}, bc), []*blob.Tensor{a, blob.Scalar[float32](1)}},
		{op("DivGradient", []string{"B", "C", "dC"}, []string{"dA", "dB"}), []*blob.Tensor{b, a, a}},
		{op("SumReduceLike", abc[0], abc[1]), []*blob.Tensor{a, randT(r, 0, 1, 3, 1)}},
		{op("SumReduceLike", abc[0], abc[1], netdef.ArgInt("axis", 0)), []*blob.Tensor{a, randT(r, 0, 1, 4)}},
		{op("Pow", []string{"X", "E"}, xy[1]), []*blob.Tensor{a, b}},
		{op("Sum", []string{"X0", "X1", "X2"}, []string{"X0"}), []*blob.Tensor{a, b, a}},
		{op("Sum", []string{"X0", "X1"}, xy[1]), []*blob.Tensor{blob.MustFromSlice([]int64{1, 2}), blob.MustFromSlice([]int64{3, 4})}},
		{op("Mean", []string{"X0", "X1"}, xy[1]), []*blob.Tensor{a, b}},
		{op("Max", []string{"X0", "X1"}, xy[1]), []*blob.Tensor{a, b}},
		{op("MaxGradient", []string{"Y", "dY", "X0", "X1"}, []string{"dX0", "dX1"}), []*blob.Tensor{a, b, a, b}},
		{op("MeanGradient", []string{"dY"}, []string{"dY", "dX1"}), []*blob.Tensor{a}},
		{op("WeightedSum", []string{"X0", "w0", "X1", "w1"}, []string{"X0"}), []*blob.Tensor{a, w1, b, w1}},
		{op("WeightedSumGradient", []string{"dY", "X0", "w0", "X1", "w1"}, []string{"a", "b", "c", "d"}, netdef.ArgInt("grad_on_w", 1)), []*blob.Tensor{a, a, w1, b, w1}},
		{op("Exp", xy[0], xy[1]), []*blob.Tensor{a}},
		{op("Negative", xy[0], xy[0]), []*blob.Tensor{blob.MustFromSlice([]int32{1, 2})}},
		{op("Clip", xy[0], xy[1], netdef.ArgFloat("min", 0)), []*blob.Tensor{a}},
		{op("Pow", xy[0], xy[1], netdef.ArgFloat("exponent", 2)), []*blob.Tensor{a}},
		{op("ClipGradient", []string{"Y", "dY"}, []string{"dY"}), []*blob.Tensor{a, b}},
		{op("ErfGradient", []string{"X", "dY"}, []string{"dX"}), []*blob.Tensor{a, b}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s%v", c.def.GetType(), c.def.Input), func(t *testing.T) { optest.AssertNoAllocs(t, c.def, c.in...) })
	}
}

func benchOp(b *testing.B, def *netdef.OperatorDef, in ...*blob.Tensor) {
	o := optest.Steady(b, def, in...)
	b.SetBytes(int64(in[0].NBytes()))
	optest.Benchmark(b, o)
}

func BenchmarkAdd(b *testing.B) {
	r := newRand()
	benchOp(b, op("Add", abc[0], abc[1]), randT(r, 0, 1, 1<<20), randT(r, 0, 1, 1<<20))
}

func BenchmarkAddBiasNCHW(b *testing.B) {
	r := newRand()
	benchOp(b, op("Add", abc[0], abc[1], netdef.ArgInt("broadcast", 1), netdef.ArgInt("axis", 1)), randT(r, 0, 1, 32, 64, 16, 16), randT(r, 0, 1, 64))
}

func BenchmarkMulNumpyOuter(b *testing.B) {
	r := newRand()
	benchOp(b, op("Mul", abc[0], abc[1]), randT(r, 0, 1, 1024, 1), randT(r, 0, 1, 1, 1024))
}

func BenchmarkSumReduceLikeBiasNCHW(b *testing.B) {
	r := newRand()
	benchOp(b, op("SumReduceLike", abc[0], abc[1], netdef.ArgInt("axis", 1)), randT(r, 0, 1, 32, 64, 16, 16), randT(r, 0, 1, 64))
}

func BenchmarkSum4(b *testing.B) {
	r := newRand()
	benchOp(b, op("Sum", []string{"X0", "X1", "X2", "X3"}, []string{"X0"}),
		randT(r, 0, 1, 1<<18), randT(r, 0, 1, 1<<18), randT(r, 0, 1, 1<<18), randT(r, 0, 1, 1<<18))
}

func BenchmarkWeightedSum(b *testing.B) {
	r := newRand()
	benchOp(b, op("WeightedSum", []string{"X0", "w0", "X1", "w1"}, []string{"X0"}),
		randT(r, 0, 1, 1<<20), f32([]int{1}, 0.9), randT(r, 0, 1, 1<<20), f32([]int{1}, -0.1))
}

func BenchmarkExp(b *testing.B) {
	r := newRand()
	benchOp(b, op("Exp", xy[0], xy[1]), randT(r, -1, 1, 1<<18))
}

func BenchmarkScaleInPlace(b *testing.B) {
	r := newRand()
	benchOp(b, op("Scale", xy[0], xy[0], netdef.ArgFloat("scale", 0.5)), randT(r, -1, 1, 1<<20))
}
