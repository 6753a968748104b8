package convpool

import (
	"runtime"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

type allocCase struct {
	name string
	def  *netdef.OperatorDef
	in   []*blob.Tensor
}

func allocCases(n int) []allocCase {
	r := newRand(9)
	f := blob.Float32
	x := randTensor(r, f, n, 8, 12, 12)
	xh := toNHWC(x)
	x32 := randTensor(r, f, n, 32, 12, 12)
	k3 := ai("kernel", 3)
	nhwc := astr("order", "NHWC")
	return []allocCase{
		{"Conv", op("Conv", []string{"X", "W", "b"}, []string{"Y"}, k3, ai("pad", 1)), []*blob.Tensor{x, randTensor(r, f, 6, 8, 3, 3), randTensor(r, f, 6)}},
		{"Conv NHWC group", op("Conv", []string{"X", "W", "b"}, []string{"Y"}, k3, ai("group", 2), nhwc), []*blob.Tensor{xh, randTensor(r, f, 6, 3, 3, 4), randTensor(r, f, 6)}},
		{"Conv Winograd", op("Conv", []string{"X", "W", "b"}, []string{"Y"}, k3, ai("pad", 1)), []*blob.Tensor{x32, randTensor(r, f, 32, 32, 3, 3), randTensor(r, f, 32)}},
		{"ConvGradient Winograd", op("ConvGradient", []string{"X", "W", "dY"}, []string{"dW", "db", "dX"}, k3, ai("pad", 1)), []*blob.Tensor{x32, randTensor(r, f, 32, 32, 3, 3), randTensor(r, f, n, 32, 12, 12)}},
		{"Conv 1x1", op("Conv", []string{"X", "W"}, []string{"Y"}, ai("kernel", 1)), []*blob.Tensor{x, randTensor(r, f, 6, 8, 1, 1)}},
		{"Conv float64", op("Conv", []string{"X", "W", "b"}, []string{"Y"}, k3), []*blob.Tensor{as(x, blob.Float64), randTensor(r, blob.Float64, 6, 8, 3, 3), randTensor(r, blob.Float64, 6)}},
		{"ConvGradient", op("ConvGradient", []string{"X", "W", "dY"}, []string{"dW", "db", "dX"}, k3, ai("pad", 1)), []*blob.Tensor{x, randTensor(r, f, 6, 8, 3, 3), randTensor(r, f, n, 6, 12, 12)}},
		{"ConvGradient NHWC no bias", op("ConvGradient", []string{"X", "W", "dY"}, []string{"dW", "dX"}, k3, nhwc, ai("no_bias", 1)), []*blob.Tensor{xh, randTensor(r, f, 6, 3, 3, 8), randTensor(r, f, n, 10, 10, 6)}},
		{"ConvTranspose", op("ConvTranspose", []string{"X", "W", "b"}, []string{"Y"}, k3, ai("stride", 2)), []*blob.Tensor{x, randTensor(r, f, 8, 4, 3, 3), randTensor(r, f, 4)}},
		{"ConvTransposeGradient", op("ConvTransposeGradient", []string{"X", "W", "dY"}, []string{"dW", "db", "dX"}, k3, ai("stride", 2)), []*blob.Tensor{x, randTensor(r, f, 8, 4, 3, 3), randTensor(r, f, n, 4, 25, 25)}},
		{"MaxPool", op("MaxPool", []string{"X"}, []string{"Y"}, k3, ai("stride", 2)), []*blob.Tensor{x}},
		{"AveragePool NHWC", op("AveragePool", []string{"X"}, []string{"Y"}, k3, ai("pad", 1), nhwc), []*blob.Tensor{xh}},
		{"MaxPoolGradient", op("MaxPoolGradient", []string{"X", "Y", "dY"}, []string{"dX"}, k3, ai("stride", 3)), []*blob.Tensor{x, randTensor(r, f, n, 8, 4, 4), randTensor(r, f, n, 8, 4, 4)}},
		{"AveragePoolGradient global", op("AveragePoolGradient", []string{"X", "Y", "dY"}, []string{"dX"}, ai("global_pooling", 1)), []*blob.Tensor{x, randTensor(r, f, n, 8, 1, 1), randTensor(r, f, n, 8, 1, 1)}},
		{"MaxPoolWithIndex", op("MaxPoolWithIndex", []string{"X"}, []string{"Y", "I"}, k3, ai("stride", 2)), []*blob.Tensor{x}},
		{"PadImage", op("PadImage", []string{"X"}, []string{"Y"}, ai("pad", 2), astr("mode", "reflect")), []*blob.Tensor{x}},
		{"PadImageGradient", op("PadImageGradient", []string{"dY"}, []string{"dX"}, ai("pad", 2), astr("mode", "edge")), []*blob.Tensor{x}},
	}
}

// TestNoAllocs checks that every operator in steady state allocates
// nothing (testing.AllocsPerRun runs on one worker).
func TestNoAllocs(t *testing.T) {
	for _, c := range allocCases(2) {
		t.Run(c.name, func(t *testing.T) { optest.AssertNoAllocs(t, c.def, c.in...) })
	}
}

// TestNoAllocsParallel checks that runs split across several workers do
// not allocate per run either: the workers, their buffers and their tasks
// are kept. (The GEMM kernel's shared packing-buffer free list can still
// allocate a buffer now and then when concurrent products first reach a new
// peak, so the bound is less than one allocation per run, not zero.)
func TestNoAllocsParallel(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, c := range allocCases(8) {
		t.Run(c.name, func(t *testing.T) {
			o := optest.Steady(t, c.def, c.in...)
			for range 20 {
				if err := o.Run(); err != nil {
					t.Fatal(err)
				}
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			const runs = 50
			for range runs {
				if err := o.Run(); err != nil {
					t.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			if n := after.Mallocs - before.Mallocs; n >= runs/2 {
				t.Errorf("%d allocations in %d parallel runs, want none per run", n, runs)
			}
		})
	}
}
