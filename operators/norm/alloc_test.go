package norm

import (
	"runtime"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

type steadyCase struct {
	name   string
	def    *netdef.OperatorDef
	inputs []*blob.Tensor
}

// steadyCases are every operator in both orders, on inputs large enough
// to be split over four goroutines.
func steadyCases() []steadyCase {
	r := newRand(13)
	x := func(lo, hi float64, shape ...int) *blob.Tensor { return randT(r, blob.Float32, lo, hi, shape...) }
	var cases []steadyCase
	add := func(name string, def *netdef.OperatorDef, in ...*blob.Tensor) {
		cases = append(cases, steadyCase{name, def, in})
	}
	for _, order := range []string{"NCHW", "NHWC"} {
		ord := argStr("order", order)
		shape := []int{8, 16, 32, 32}
		if order == "NHWC" {
			shape = []int{8, 32, 32, 16}
		}
		X, dY := x(-1, 2, shape...), x(-1, 1, shape...)
		c := func() *blob.Tensor { return x(0.5, 1.5, 16) }
		add("SpatialBN "+order, op("SpatialBN", []string{"X", "s", "b", "rm", "rv"}, []string{"Y", "rm", "rv", "sm", "siv"}, ord), X, c(), c(), c(), c())
		add("SpatialBN in place "+order, op("SpatialBN", []string{"X", "s", "b", "rm", "rv"}, []string{"X", "rm", "rv", "sm", "siv"}, ord), X, c(), c(), c(), c())
		add("SpatialBN test "+order, op("SpatialBN", []string{"X", "s", "b", "rm", "rv"}, []string{"Y"}, ord, argInt("is_test", 1)), X, c(), c(), c(), c())
		add("SpatialBN num_batches "+order, op("SpatialBN", []string{"X", "s", "b", "rm", "rv", "sums", "sumsq"}, []string{"Y", "rm", "rv", "sm", "siv"}, ord, argInt("num_batches", 2)),
			X, c(), c(), c(), c(), c(), x(900, 1000, 16))
		add("SpatialBNGradient "+order, op("SpatialBNGradient", []string{"X", "s", "dY", "sm", "siv"}, []string{"dX", "ds", "db"}, ord), X, c(), dY, c(), c())
		add("SpatialBNGradient num_batches "+order, op("SpatialBNGradient", []string{"X", "s", "dY", "sm", "siv", "ds", "db"}, []string{"dX", "ds", "db"}, ord, argInt("num_batches", 2)),
			X, c(), dY, c(), c(), c(), c())
		add("ChannelStats "+order, op("ChannelStats", []string{"X"}, []string{"s", "s2"}, ord), X)
		add("ChannelBackpropStats "+order, op("ChannelBackpropStats", []string{"X", "m", "r", "dY"}, []string{"ds", "db"}, ord), X, c(), c(), dY)
		add("InstanceNorm "+order, op("InstanceNorm", []string{"X", "s", "b"}, []string{"Y", "m", "r"}, ord), X, c(), c())
		add("InstanceNorm in place "+order, op("InstanceNorm", []string{"X", "s", "b"}, []string{"X"}, ord), X, c(), c())
		add("InstanceNormGradient "+order, op("InstanceNormGradient", []string{"X", "s", "b", "dY", "m", "r"}, []string{"dX", "ds", "db"}, ord), X, c(), c(), dY, x(0, 1, 8, 16), x(0.5, 1, 8, 16))
		add("InstanceNormGradient recomputed "+order, op("InstanceNormGradient", []string{"X", "s", "b", "dY"}, []string{"dX", "ds", "db"}, ord), X, c(), c(), dY)
		add("GroupNorm "+order, op("GroupNorm", []string{"X", "g", "b"}, []string{"Y", "m", "r"}, ord, argInt("group", 4)), X, c(), c())
		add("GroupNorm one output "+order, op("GroupNorm", []string{"X", "g", "b"}, []string{"Y"}, ord, argInt("group", 4)), X, c(), c())
		add("GroupNormGradient "+order, op("GroupNormGradient", []string{"dY", "X", "g", "b", "m", "r"}, []string{"dX", "dg", "db"}, ord, argInt("group", 4)), dY, X, c(), c(), x(0, 1, 8, 4), x(0.5, 1, 8, 4))
		add("LRN "+order, op("LRN", []string{"X"}, []string{"Y", "scale"}, ord, argInt("size", 5), argFloat("alpha", 1e-3), argFloat("beta", 0.75)), X)
		add("LRN one output "+order, op("LRN", []string{"X"}, []string{"Y"}, ord, argInt("size", 5), argFloat("alpha", 1e-3), argFloat("beta", 0.6)), X)
		add("LRNGradient "+order, op("LRNGradient", []string{"X", "Y", "dY"}, []string{"dX"}, ord, argInt("size", 5), argFloat("alpha", 1e-3), argFloat("beta", 0.75)), X, X, dY)
	}
	X, dY := x(-1, 2, 64, 1024), x(-1, 1, 64, 1024)
	add("LayerNorm", op("LayerNorm", []string{"X"}, []string{"Y", "m", "s"}), X)
	add("LayerNorm affine", op("LayerNorm", []string{"X", "g", "b"}, []string{"Y", "m", "s"}, argInt("elementwise_affine", 1)), X, x(0.5, 1, 1024), x(-1, 1, 1024))
	add("LayerNormGradient", op("LayerNormGradient", []string{"dY", "Y", "m", "s", "X"}, []string{"dX"}), dY, X, x(0, 1, 64, 1), x(0.5, 1, 64, 1), X)
	add("LayerNormGradient affine", op("LayerNormGradient", []string{"dY", "Y", "m", "s", "X", "g"}, []string{"dX", "dg", "db"}, argInt("elementwise_affine", 1)),
		dY, X, x(0, 1, 64, 1), x(0.5, 1, 64, 1), X, x(0.5, 1, 1024))
	return cases
}

// TestNoAllocationsInSteadyState checks that no operator allocates once it
// has run: outputs and scratch buffers are reused.
func TestNoAllocationsInSteadyState(t *testing.T) {
	for _, c := range steadyCases() {
		t.Run(c.name, func(t *testing.T) { optest.AssertNoAllocs(t, c.def, c.inputs...) })
	}
}

// TestNoAllocationsWhenParallel is TestNoAllocationsInSteadyState with four
// goroutines (testing.AllocsPerRun measures with one): handing parts to the
// worker pool must not allocate either. It counts the process's
// allocations, so it allows less than one per run for the runtime's own.
func TestNoAllocationsWhenParallel(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	const runs = 10
	for _, c := range steadyCases() {
		t.Run(c.name, func(t *testing.T) {
			o := optest.Steady(t, c.def, c.inputs...)
			if err := o.Run(); err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range runs {
				if err := o.Run(); err != nil {
					t.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			if n := after.Mallocs - before.Mallocs; n >= runs {
				t.Errorf("%d allocations in %d runs", n, runs)
			}
		})
	}
}

func BenchmarkOps(b *testing.B) {
	for _, c := range steadyCases() {
		b.Run(c.name, func(b *testing.B) { optest.Benchmark(b, optest.Steady(b, c.def, c.inputs...)) })
	}
}

// BenchmarkSpatialBNTrainingStep is SpatialBN forward and backward in
// training mode on [16, 64, 32, 32] float32, as one layer of a training
// step runs them.
func BenchmarkSpatialBNTrainingStep(b *testing.B) {
	for _, order := range []string{"NCHW", "NHWC"} {
		b.Run(order, func(b *testing.B) {
			r := newRand(17)
			shape := []int{16, 64, 32, 32}
			if order == "NHWC" {
				shape = []int{16, 32, 32, 64}
			}
			ws := optest.NewWorkspace()
			ws.Feed("X", randT(r, blob.Float32, -1, 2, shape...))
			ws.Feed("Y_grad", randT(r, blob.Float32, -1, 1, shape...))
			for _, name := range []string{"s", "b", "rm", "rv"} {
				ws.Feed(name, randT(r, blob.Float32, 0.5, 1.5, 64))
			}
			ord := argStr("order", order)
			fwd := op("SpatialBN", []string{"X", "s", "b", "rm", "rv"}, []string{"Y", "rm", "rv", "sm", "siv"}, ord)
			gd, err := operators.GetGradientDefs(fwd, optest.DenseGradients(fwd))
			if err != nil {
				b.Fatal(err)
			}
			var ops []operators.Operator
			for _, def := range []*netdef.OperatorDef{fwd, gd.Ops[0]} {
				o, err := operators.Create(def, ws, -1)
				if err != nil {
					b.Fatal(err)
				}
				ops = append(ops, o)
			}
			step := func() {
				for _, o := range ops {
					if err := o.Run(); err != nil {
						b.Fatal(err)
					}
				}
			}
			step()
			b.ReportAllocs()
			b.SetBytes(int64(4 * 16 * 64 * 32 * 32))
			b.ResetTimer()
			for range b.N {
				step()
			}
		})
	}
}
