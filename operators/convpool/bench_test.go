package convpool

import (
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// benchConv benchmarks a convolution operator (or its gradient) and reports
// GFLOP/s, counting 2 flops per multiply-add of the forward product (times
// two for a gradient that computes dW and dX).
func benchConv(b *testing.B, def *netdef.OperatorDef, flops float64, in ...*blob.Tensor) {
	o := optest.Steady(b, def, in...)
	optest.Benchmark(b, o)
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// The CNN benchmark shapes: a batch of 16 images of 64 channels, 32×32.
func benchInputs(order string, k int) []*blob.Tensor {
	r := newRand(1)
	f := blob.Float32
	x, w := randTensor(r, f, 16, 64, 32, 32), randTensor(r, f, 64, 64, k, k)
	if order == "NHWC" {
		x, w = toNHWC(x), toNHWC(w)
	}
	return []*blob.Tensor{x, w, randTensor(r, f, 64)}
}

const (
	flops3x3 = 2 * 16 * 64 * 32 * 32 * 64 * 9
	flops1x1 = 2 * 16 * 64 * 32 * 32 * 64
)

func BenchmarkConv3x3NCHW(b *testing.B) {
	def := op("Conv", []string{"X", "W", "b"}, []string{"Y"}, ai("kernel", 3), ai("pad", 1))
	benchConv(b, def, flops3x3, benchInputs("NCHW", 3)...)
}

func BenchmarkConv3x3NHWC(b *testing.B) {
	def := op("Conv", []string{"X", "W", "b"}, []string{"Y"}, ai("kernel", 3), ai("pad", 1), astr("order", "NHWC"))
	benchConv(b, def, flops3x3, benchInputs("NHWC", 3)...)
}

func BenchmarkConv1x1NCHW(b *testing.B) {
	def := op("Conv", []string{"X", "W", "b"}, []string{"Y"}, ai("kernel", 1))
	benchConv(b, def, flops1x1, benchInputs("NCHW", 1)...)
}

func BenchmarkConvGradient3x3NCHW(b *testing.B) {
	in := benchInputs("NCHW", 3)
	dy := randTensor(newRand(2), blob.Float32, 16, 64, 32, 32)
	def := op("ConvGradient", []string{"X", "W", "dY"}, []string{"dW", "db", "dX"}, ai("kernel", 3), ai("pad", 1))
	benchConv(b, def, 2*flops3x3, in[0], in[1], dy)
}

func BenchmarkMaxPool3x3s2NCHW(b *testing.B) {
	x := randTensor(newRand(3), blob.Float32, 16, 64, 32, 32)
	o := optest.Steady(b, op("MaxPool", []string{"X"}, []string{"Y"}, ai("kernel", 3), ai("stride", 2), ai("pad", 1)), x)
	optest.Benchmark(b, o)
	b.ReportMetric(float64(x.Size()*4)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

func BenchmarkMaxPoolGradient3x3s2NCHW(b *testing.B) {
	x := randTensor(newRand(3), blob.Float32, 16, 64, 32, 32)
	def := op("MaxPool", []string{"X"}, []string{"Y"}, ai("kernel", 3), ai("stride", 2), ai("pad", 1))
	y := optest.MustRunOp(b, def, x)[0]
	g := op("MaxPoolGradient", []string{"X", "Y", "dY"}, []string{"dX"}, ai("kernel", 3), ai("stride", 2), ai("pad", 1))
	optest.Benchmark(b, optest.Steady(b, g, x, y, y))
}

func BenchmarkAveragePool2x2s2NHWC(b *testing.B) {
	x := toNHWC(randTensor(newRand(4), blob.Float32, 16, 64, 32, 32))
	o := optest.Steady(b, op("AveragePool", []string{"X"}, []string{"Y"}, ai("kernel", 2), ai("stride", 2), astr("order", "NHWC")), x)
	optest.Benchmark(b, o)
}

// The convnet benchmark's first pooling layer: 2×2 stride 2 over 32
// channels of 32×32, batch 16.
func BenchmarkMaxPool2x2s2NCHW(b *testing.B) {
	x := randTensor(newRand(3), blob.Float32, 16, 32, 32, 32)
	o := optest.Steady(b, op("MaxPool", []string{"X"}, []string{"Y"}, ai("kernel", 2), ai("stride", 2)), x)
	optest.Benchmark(b, o)
	b.ReportMetric(float64(x.Size()*4)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

func BenchmarkMaxPoolGradient2x2s2NCHW(b *testing.B) {
	x := randTensor(newRand(3), blob.Float32, 16, 32, 32, 32)
	def := op("MaxPool", []string{"X"}, []string{"Y"}, ai("kernel", 2), ai("stride", 2))
	y := optest.MustRunOp(b, def, x)[0]
	g := op("MaxPoolGradient", []string{"X", "Y", "dY"}, []string{"dX"}, ai("kernel", 2), ai("stride", 2))
	optest.Benchmark(b, optest.Steady(b, g, x, y, y))
}
