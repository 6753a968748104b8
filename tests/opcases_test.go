package tests

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	_ "github.com/caffe2go/caffe2go/devicescope/devicetest" // a device with memory of its own, for the AnyDevice copy operators
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
	_ "github.com/caffe2go/caffe2go/operators/std"
	"github.com/caffe2go/caffe2go/persist"
	_ "github.com/caffe2go/caffe2go/persist/badgerdb"
	_ "github.com/caffe2go/caffe2go/persist/minidb"
	_ "github.com/caffe2go/caffe2go/workspace"
)

// sampler draws the inputs of the conformance cases from one seeded stream,
// so every run of the table sees the same tensors.
type sampler struct {
	rng *rand.Rand
	// dir is a temporary directory, removed after the suite, for cases
	// that need a path.
	dir string
}

// in returns a float32 tensor of the given shape holding the n values
// lo + (hi − lo)·(k + ½)/n, k < n, in a shuffled order: evenly spaced, so no
// two inputs are within (hi − lo)/n of each other, and none is at lo or hi.
// With the ranges used here that keeps every input of max, ReLU, |x| and
// clipping well away from a kink (ties, 0, the clip bounds) compared with
// the finite-difference step.
func (s *sampler) in(lo, hi float64, shape ...int) *blob.Tensor {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float64, n)
	for k := range v {
		v[k] = lo + (hi-lo)*(float64(k)+0.5)/float64(n)
	}
	s.rng.Shuffle(n, func(i, j int) { v[i], v[j] = v[j], v[i] })
	return optest.F32(v, shape...)
}

// x returns values in (−1, 1), none of them 0.
func (s *sampler) x(shape ...int) *blob.Tensor { return s.in(-1, 1, shape...) }

// pos returns values in (0.5, 1.5): logarithms, roots, divisors, variances.
func (s *sampler) pos(shape ...int) *blob.Tensor { return s.in(0.5, 1.5, shape...) }

func ts(t ...*blob.Tensor) []*blob.Tensor { return t }

func f32(v ...float32) *blob.Tensor { return blob.MustFromSlice(v, len(v)) }

// f64 converts a sampled tensor to DOUBLE, for the kernels' float64 paths.
func f64(t *blob.Tensor) *blob.Tensor {
	v := make([]float64, t.Size())
	for i, x := range blob.Data[float32](t) {
		v[i] = float64(x)
	}
	return blob.MustFromSlice(v, t.Dims()...)
}

func i32(v ...int32) *blob.Tensor { return blob.MustFromSlice(v, len(v)) }

func i64(v ...int64) *blob.Tensor { return blob.MustFromSlice(v, len(v)) }

// TestOperatorConformance holds every operator implementation registered in
// this binary (the standard operators, the persist operators, the copy
// operators on the test device) to the conformance suite: outputs that
// agree with shape inference, gradients that agree with finite
// differences, and every other device and engine agreeing with the CPU.
// An implementation without a case here fails the test.
func TestOperatorConformance(t *testing.T) {
	s := &sampler{rng: rand.New(rand.NewPCG(1, 2)), dir: t.TempDir()}
	op := cgParse // "Type(in, …) -> out, …"
	ai, af, as, ab := netdef.ArgInt, netdef.ArgFloat, netdef.ArgString, netdef.ArgBool
	ais := netdef.ArgInts
	g0, g01, g012 := []int{0}, []int{0, 1}, []int{0, 1, 2}

	dir := t.TempDir()
	dataset := filepath.Join(dir, "dataset")
	if _, err := persist.WriteTensorProtosDB("minidb", dataset, func(put func(string, ...*blob.Tensor) error) error {
		for k, key := range []string{"a", "b", "c"} {
			if err := put(key, s.x(2, 3), blob.Scalar(int32(k))); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	db := func(name string) *netdef.Argument { return as("db", filepath.Join(dir, name)) }
	minidb := as("db_type", "minidb")

	cases := []optest.Case{
		// Elementwise math.
		{Op: op("Abs(X) -> Y"), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Op: op("Negative(X) -> Y"), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Op: op("Exp(X) -> Y"), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Name: "double", Op: op("Exp(X) -> Y"), Inputs: ts(f64(s.x(3, 4))), Grad: g0},
		{Op: op("Log(X) -> Y"), Inputs: ts(s.pos(3, 4)), Grad: g0},
		{Op: op("Sqrt(X) -> Y"), Inputs: ts(s.pos(3, 4)), Grad: g0},
		{Op: op("Sqr(X) -> Y"), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Op: op("Erf(X) -> Y"), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Op: op("Ceil(X) -> Y"), Inputs: ts(s.in(-3, 3, 3, 4))}, // no gradient: Caffe2 has none
		{Op: op("Scale(X) -> Y", af("scale", -1.5)), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Op: op("Clip(X) -> Y", af("min", -0.5), af("max", 0.5)), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Op: op("Pow(X) -> Y", af("exponent", 2.5)), Inputs: ts(s.pos(3, 4)), Grad: g0},
		// The gradient makers are Caffe2's: only with the broadcast argument
		// present do they reduce B's gradient to B's shape (operators/math's
		// package comment), so the broadcasting cases set it.
		{Name: "exponent input", Op: op("Pow(X, E) -> Y", ai("broadcast", 0)), Inputs: ts(s.pos(3, 4), s.x(4)), Grad: g01},
		{Op: op("Add(A, B) -> C"), Inputs: ts(s.x(2, 3), s.x(2, 3)), Grad: g01},
		{Name: "double", Op: op("Add(A, B) -> C"), Inputs: ts(f64(s.x(2, 3)), f64(s.x(2, 3))), Grad: g01},
		{Name: "NumPy broadcast", Op: op("Add(A, B) -> C", ai("broadcast", 0)), Inputs: ts(s.x(2, 3, 4), s.x(3, 4)), Grad: g01},
		{Name: "legacy broadcast", Op: op("Add(A, B) -> C", ai("broadcast", 1), ai("axis", 1)), Inputs: ts(s.x(2, 3, 4), s.x(3)), Grad: g01},
		{Op: op("Sub(A, B) -> C"), Inputs: ts(s.x(2, 3), s.x(2, 3)), Grad: g01},
		{Name: "NumPy broadcast", Op: op("Sub(A, B) -> C", ai("broadcast", 0)), Inputs: ts(s.x(2, 3), s.x(3)), Grad: g01},
		{Op: op("Mul(A, B) -> C"), Inputs: ts(s.x(2, 3), s.x(2, 3)), Grad: g01},
		{Name: "NumPy broadcast", Op: op("Mul(A, B) -> C", ai("broadcast", 0)), Inputs: ts(s.x(2, 3, 2), s.x(3, 1)), Grad: g01},
		{Name: "legacy broadcast axis_str", Op: op("Mul(A, B) -> C", ai("broadcast", 1), as("axis_str", "C"), as("order", "NHWC")), Inputs: ts(s.x(2, 2, 2, 3), s.x(3)), Grad: g01},
		{Op: op("Div(A, B) -> C"), Inputs: ts(s.x(2, 3), s.pos(2, 3)), Grad: g01},
		// Caffe2 has no gradient for a broadcasting Div.
		{Name: "NumPy broadcast", Op: op("Div(A, B) -> C"), Inputs: ts(s.x(3, 2), s.pos(3, 1))},
		{Op: op("SumReduceLike(A, B) -> C"), Inputs: ts(s.x(2, 3, 4), s.x(3, 1))},
		{Op: op("Sum(A, B, C) -> Y"), Inputs: ts(s.x(2, 3), s.x(2, 3), s.x(2, 3)), Grad: g012},
		{Op: op("Mean(A, B, C) -> Y"), Inputs: ts(s.x(2, 3), s.x(2, 3), s.x(2, 3)), Grad: g012},
		// The inputs of Max and Min are shifted apart so that no two tie.
		{Op: op("Max(A, B, C) -> Y"), Inputs: ts(s.x(2, 3), s.in(-0.97, 1.03, 2, 3), s.in(-1.06, 0.94, 2, 3)), Grad: g012},
		{Op: op("Min(A, B, C) -> Y"), Inputs: ts(s.x(2, 3), s.in(-0.97, 1.03, 2, 3), s.in(-1.06, 0.94, 2, 3)), Grad: g012},
		{Op: op("WeightedSum(X0, w0, X1, w1) -> Y", ab("grad_on_w", true)), Inputs: ts(s.x(2, 3), f32(0.7), s.x(2, 3), f32(-1.3)), Grad: []int{0, 1, 2, 3}},
		{Name: "no weight gradients", Op: op("WeightedSum(X0, w0, X1, w1, X2, w2) -> Y"), Inputs: ts(s.x(3), f32(0.7), s.x(3), f32(-1.3), s.x(3), f32(2)), Grad: []int{0, 2, 4}},

		// Activations, dense layers and dropout.
		{Op: op("Relu(X) -> Y"), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Op: op("LeakyRelu(X) -> Y", af("alpha", 0.1)), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Op: op("Sigmoid(X) -> Y"), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Op: op("Tanh(X) -> Y"), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Op: op("Softmax(X) -> Y"), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Name: "axis 2", Op: op("Softmax(X) -> Y", ai("axis", 2)), Inputs: ts(f64(s.x(2, 3, 4))), Grad: g0},
		{Op: op("FC(X, W, b) -> Y"), Inputs: ts(s.x(3, 4), s.x(2, 4), s.x(2)), Grad: g012},
		{Name: "axis 2", Op: op("FC(X, W, b) -> Y", ai("axis", 2)), Inputs: ts(s.x(2, 3, 4), s.x(5, 4), s.x(5)), Grad: g012},
		{Op: op("FCTransposed(X, W, b) -> Y"), Inputs: ts(s.x(3, 4), s.x(4, 2), s.x(2)), Grad: g012},
		{Op: op("MatMul(A, B) -> Y"), Inputs: ts(s.x(3, 4), s.x(4, 2)), Grad: g01},
		{Name: "transposed", Op: op("MatMul(A, B) -> Y", ai("trans_a", 1), ai("trans_b", 1)), Inputs: ts(s.x(4, 3), s.x(2, 4)), Grad: g01},
		{Name: "flattened", Op: op("MatMul(A, B) -> Y", ai("axis_a", 2)), Inputs: ts(s.x(2, 3, 4), s.x(4, 2)), Grad: g01},
		{Op: op("BatchMatMul(A, B) -> Y"), Inputs: ts(s.x(2, 3, 4), s.x(2, 4, 2)), Grad: g01},
		{Name: "transposed", Op: op("BatchMatMul(A, B) -> Y", ai("trans_a", 1), ai("trans_b", 1)), Inputs: ts(s.x(2, 4, 3), s.x(2, 2, 4)), Grad: g01},
		// BatchMatMul has no gradient with broadcast=1.
		{Name: "broadcast", Op: op("BatchMatMul(A, B) -> Y", ai("broadcast", 1)), Inputs: ts(s.x(2, 1, 3, 4), s.x(3, 4, 2))},
		{Name: "test", Op: op("Dropout(X) -> Y", ai("is_test", 1)), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Name: "train", Op: optest.Seeded(op("Dropout(X) -> Y, mask", af("ratio", 0.3)), 7), Inputs: ts(s.x(3, 4)), Grad: g0, Random: true},

		// Convolution, pooling and padding.
		{Op: op("Conv(X, W, b) -> Y", ai("kernel", 3), ai("pad", 1)), Inputs: ts(s.x(1, 2, 4, 4), s.x(3, 2, 3, 3), s.x(3)), Grad: g012},
		{Name: "NHWC grouped strided", Op: op("Conv(X, W, b) -> Y", ai("kernel", 2), ai("stride", 2), ai("group", 2), as("order", "NHWC")), Inputs: ts(s.x(1, 4, 4, 4), s.x(2, 2, 2, 2), s.x(2)), Grad: g012},
		{Op: op("Conv1D(X, W, b) -> Y", ais("kernels", 3)), Inputs: ts(s.x(1, 2, 6), s.x(2, 2, 3), s.x(2)), Grad: g012},
		{Name: "dilated, padded", Op: op("Conv(X, W) -> Y", ai("kernel", 2), ai("dilation", 2), ai("pad_t", 1), ai("pad_l", 0), ai("pad_b", 0), ai("pad_r", 1)), Inputs: ts(s.x(2, 1, 4, 4), s.x(2, 1, 2, 2)), Grad: g01},
		{Op: op("Conv2D(X, W) -> Y", ai("kernel", 3), ai("stride", 2)), Inputs: ts(s.x(1, 2, 5, 5), s.x(2, 2, 3, 3)), Grad: g01},
		{Op: op("Conv3D(X, W, b) -> Y", ais("kernels", 2, 2, 2)), Inputs: ts(s.x(1, 1, 3, 3, 3), s.x(2, 1, 2, 2, 2), s.x(2)), Grad: g012},
		{Name: "NHWC", Op: op("Conv3D(X, W, b) -> Y", ais("kernels", 2, 2, 2), as("order", "NHWC")), Inputs: ts(s.x(1, 3, 3, 3, 1), s.x(2, 2, 2, 2, 1), s.x(2)), Grad: g012},
		{Op: op("ConvTranspose(X, W, b) -> Y", ai("kernel", 2), ai("stride", 2)), Inputs: ts(s.x(1, 2, 3, 3), s.x(2, 3, 2, 2), s.x(3)), Grad: g012},
		{Name: "NHWC padded", Op: op("ConvTranspose(X, W, b) -> Y", ai("kernel", 3), ai("stride", 2), ai("pad", 1), ai("adj", 1), as("order", "NHWC")), Inputs: ts(s.x(1, 2, 2, 2), s.x(2, 3, 3, 3), s.x(3)), Grad: g012},
		{Op: op("AveragePool(X) -> Y", ai("kernel", 2), ai("stride", 2)), Inputs: ts(s.x(1, 2, 4, 4)), Grad: g0},
		{Name: "padded, counting the padding", Op: op("AveragePool(X) -> Y", ai("kernel", 3), ai("stride", 2), ai("pad", 1), ab("count_include_pad", true)), Inputs: ts(s.x(1, 2, 5, 5)), Grad: g0},
		{Name: "global NHWC", Op: op("AveragePool(X) -> Y", ai("global_pooling", 1), as("order", "NHWC")), Inputs: ts(s.x(2, 3, 3, 2)), Grad: g0},
		{Op: op("AveragePool1D(X) -> Y", ais("kernels", 2), ais("strides", 2)), Inputs: ts(s.x(1, 2, 6)), Grad: g0},
		{Op: op("AveragePool2D(X) -> Y", ai("kernel", 3), ai("pad", 1)), Inputs: ts(s.x(1, 1, 4, 4)), Grad: g0},
		{Op: op("AveragePool3D(X) -> Y", ais("kernels", 2, 2, 2), ais("strides", 2, 2, 2)), Inputs: ts(s.x(1, 1, 2, 4, 4)), Grad: g0},
		{Op: op("MaxPool(X) -> Y", ai("kernel", 2), ai("stride", 2)), Inputs: ts(s.x(1, 2, 4, 4)), Grad: g0},
		{Name: "Caffe ceil mode", Op: op("MaxPool(X) -> Y", ai("kernel", 2), ai("stride", 2), ai("legacy_pad", 3)), Inputs: ts(s.x(1, 1, 5, 5)), Grad: g0},
		{Op: op("MaxPool1D(X) -> Y", ais("kernels", 2), ais("strides", 2)), Inputs: ts(s.x(1, 2, 6)), Grad: g0},
		{Op: op("MaxPool2D(X) -> Y", ai("kernel", 3), ai("pad", 1), as("order", "NHWC")), Inputs: ts(s.x(1, 4, 4, 2)), Grad: g0},
		{Op: op("MaxPool3D(X) -> Y", ais("kernels", 2, 2, 2), ais("strides", 2, 2, 2)), Inputs: ts(s.x(1, 1, 2, 4, 4)), Grad: g0},
		{Op: op("MaxPoolWithIndex(X) -> Y, index", ai("kernel", 2), ai("stride", 2)), Inputs: ts(s.x(1, 2, 4, 4)), Grad: g0},
		{Op: op("PadImage(X) -> Y", ai("pad", 1), as("mode", "reflect")), Inputs: ts(s.x(1, 2, 3, 3)), Grad: g0},
		{Name: "edge NHWC", Op: op("PadImage(X) -> Y", ai("pad_t", 2), ai("pad_l", 1), ai("pad_b", 0), ai("pad_r", 1), as("mode", "edge"), as("order", "NHWC")), Inputs: ts(s.x(1, 2, 3, 2)), Grad: g0},
		{Name: "constant", Op: op("PadImage(X) -> Y", ai("pad", 1), af("value", 0.5)), Inputs: ts(s.x(1, 1, 2, 3)), Grad: g0},

		// Image layout and channel operators.
		{Op: op("NCHW2NHWC(X) -> Y"), Inputs: ts(s.x(1, 2, 3, 2)), Grad: g0},
		{Name: "3-D images", Op: op("NCHW2NHWC(X) -> Y"), Inputs: ts(s.x(1, 2, 2, 3, 2)), Grad: g0},
		{Op: op("NHWC2NCHW(X) -> Y"), Inputs: ts(s.x(1, 3, 2, 2)), Grad: g0},
		{Op: op("ChannelShuffle(X) -> Y", ai("group", 2)), Inputs: ts(s.x(1, 6, 2, 2)), Grad: g0},
		{Name: "NHWC", Op: op("ChannelShuffle(X) -> Y", ai("group", 3), as("order", "NHWC")), Inputs: ts(s.x(2, 2, 6)), Grad: g0},
		{Op: op("PRelu(X, slope) -> Y"), Inputs: ts(s.x(1, 3, 2, 2), f32(0.25, -0.5, 0.1)), Grad: g01},
		{Name: "shared slope NHWC", Op: op("PRelu(X, slope) -> Y", as("order", "NHWC")), Inputs: ts(s.x(2, 2, 3), f32(0.25)), Grad: g01},
		{Op: optest.Seeded(op("PackedInt8BGRANHWCToNCHWCStylizerPreprocess(X, mean) -> Y", ai("noise_size", 7)), 3), Inputs: ts(blob.MustFromSlice([]uint8{
			10, 200, 30, 255, 40, 50, 60, 255, 70, 80, 90, 255, 100, 110, 120, 255,
		}, 1, 2, 2, 4), f32(100, 110, 120)), Random: true},
		{Op: op("BRGNCHWCToPackedInt8BGRAStylizerDeprocess(X, mean) -> Y"), Inputs: ts(s.in(-150.3, 200.7, 1, 3, 2, 2), f32(100, 110, 120))},

		// Losses and metrics.
		{Op: op("AveragedLoss(X) -> Y"), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Op: op("Accuracy(P, label) -> accuracy"), Inputs: ts(s.x(4, 3), i32(0, 2, 1, 2))},
		{Name: "top 2", Op: op("Accuracy(P, label) -> accuracy", ai("top_k", 2)), Inputs: ts(s.x(4, 3), i32(0, 2, 1, 2))},
		{Op: op("CrossEntropy(X, label) -> Y"), Inputs: ts(s.in(0.1, 0.9, 3, 4), s.in(0, 1, 3, 4)), Grad: g0},
		{Op: op("LabelCrossEntropy(X, label) -> Y"), Inputs: ts(s.in(0.1, 0.9, 3, 4), i32(0, 3, 1)), Grad: g0},
		{Op: op("SquaredL2Distance(X, Y) -> Z"), Inputs: ts(s.x(3, 4), s.x(3, 4)), Grad: g01},
		// The gradient operators differentiate the loss, not the softmax.
		{Op: op("SoftmaxWithLoss(X, label) -> P, loss"), Inputs: ts(s.x(3, 4), i32(1, 0, 3)), Grad: g0, GradOutputs: []int{1}},
		{Name: "weighted", Op: op("SoftmaxWithLoss(X, label, w) -> P, loss", af("scale", 0.5)), Inputs: ts(s.x(3, 4), i32(1, 0, 3), s.pos(3)), Grad: g0, GradOutputs: []int{1}},
		{Name: "probability labels", Op: op("SoftmaxWithLoss(X, label) -> P, loss", ai("label_prob", 1)), Inputs: ts(s.x(3, 4), optest.F32([]float64{0.1, 0.2, 0.3, 0.4, 1, 0, 0, 0, 0.25, 0.25, 0.25, 0.25}, 3, 4)), Grad: g0, GradOutputs: []int{1}},
		{Op: op("SpatialSoftmaxWithLoss(X, label) -> P, loss"), Inputs: ts(s.x(2, 3, 2, 2), blob.MustFromSlice([]int32{0, 2, 1, -1, 2, 2, 0, 1}, 2, 2, 2)), Grad: g0, GradOutputs: []int{1}},
		{Name: "weighted", Op: op("SpatialSoftmaxWithLoss(X, label, w) -> P, loss", af("scale", 2)), Inputs: ts(s.x(1, 3, 2, 2), blob.MustFromSlice([]int32{2, 0, 1, 1}, 1, 2, 2), s.pos(1, 2, 2)), Grad: g0, GradOutputs: []int{1}},

		// Normalization. Only Y is differentiated: the saved statistics
		// are for the gradient operators.
		{Op: op("SpatialBN(X, scale, bias, mean, var) -> Y, mean, var, saved_mean, saved_inv_var"), Inputs: ts(s.x(2, 3, 2, 2), s.pos(3), s.x(3), s.x(3), s.pos(3)), Grad: g012, GradOutputs: g0},
		{Name: "test", Op: op("SpatialBN(X, scale, bias, mean, var) -> Y", ai("is_test", 1), as("order", "NHWC")), Inputs: ts(s.x(2, 2, 2, 3), s.pos(3), s.x(3), s.x(3), s.pos(3)), Grad: g012},
		// With num_batches the statistics come from ChannelStats' sums over
		// the batches; the gradient then needs the summed parameter
		// gradients of all batches, which one operator cannot check.
		{Name: "multi-batch", Op: op("SpatialBN(X, scale, bias, mean, var, sums, sumsq) -> Y, mean, var, saved_mean, saved_inv_var", ai("num_batches", 2)), Inputs: ts(s.x(2, 3, 2, 2), s.pos(3), s.x(3), s.x(3), s.pos(3), f32(0.5, -1, 2), f32(6, 5, 7))},
		{Op: op("ChannelStats(X) -> sum, sumsq"), Inputs: ts(s.x(2, 3, 2, 2))},
		{Op: op("ChannelBackpropStats(X, mean, inv_std, dY) -> dscale, dbias"), Inputs: ts(s.x(2, 3, 2, 2), s.x(3), s.pos(3), s.x(2, 3, 2, 2))},
		{Op: op("GroupNorm(X, gamma, beta) -> Y, mean, inv_std", ai("group", 2), ai("is_test", 0)), Inputs: ts(s.x(2, 4, 2, 2), s.pos(4), s.x(4)), Grad: g012, GradOutputs: g0},
		{Name: "NHWC", Op: op("GroupNorm(X, gamma, beta) -> Y, mean, inv_std", ai("group", 3), ai("is_test", 0), as("order", "NHWC")), Inputs: ts(s.x(2, 2, 2, 6), s.pos(6), s.x(6)), Grad: g012, GradOutputs: g0},
		{Op: op("InstanceNorm(X, scale, bias) -> Y, mean, inv_std"), Inputs: ts(s.x(2, 3, 2, 2), s.pos(3), s.x(3)), Grad: g012, GradOutputs: g0},
		{Name: "without saved statistics", Op: op("InstanceNorm(X, scale, bias) -> Y", as("order", "NHWC")), Inputs: ts(s.x(2, 2, 2, 3), s.pos(3), s.x(3)), Grad: g012},
		{Op: op("LayerNorm(X, gamma, beta) -> Y, mean, std", ai("elementwise_affine", 1)), Inputs: ts(s.x(3, 4), s.pos(4), s.x(4)), Grad: g012, GradOutputs: g0},
		{Name: "plain", Op: op("LayerNorm(X) -> Y, mean, std", ai("axis", 2)), Inputs: ts(s.x(2, 2, 4)), Grad: g0, GradOutputs: g0},
		{Op: op("LRN(X) -> Y", ai("size", 3), af("alpha", 0.5), af("beta", 0.75)), Inputs: ts(s.x(1, 4, 2, 2)), Grad: g0},
		{Name: "NHWC with scale", Op: op("LRN(X) -> Y, scale", ai("size", 5), af("alpha", 0.3), af("beta", 0.5), af("bias", 2), as("order", "NHWC")), Inputs: ts(s.x(1, 2, 2, 6)), Grad: g0, GradOutputs: g0},

		// Reductions.
		{Op: op("ArgMax(X) -> i", ai("axis", 1)), Inputs: ts(s.x(3, 4))},
		{Op: op("ArgMin(X) -> i", ai("keepdims", 0)), Inputs: ts(s.x(3, 4))},
		{Op: op("ColwiseMax(X) -> Y"), Inputs: ts(s.x(2, 3, 4)), Grad: g0},
		{Op: op("RowwiseMax(X) -> Y"), Inputs: ts(s.x(2, 3, 4)), Grad: g0},
		{Op: op("ReduceFrontSum(X) -> Y"), Inputs: ts(s.x(3, 2, 2)), Grad: g0},
		{Name: "lengths", Op: op("ReduceFrontSum(X, lengths) -> Y"), Inputs: ts(s.x(3, 4), i32(3, 1, 2, 3)), Grad: g0},
		{Op: op("ReduceFrontMean(X) -> Y", ai("num_reduce_dim", 2)), Inputs: ts(s.x(3, 2, 2)), Grad: g0},
		{Op: op("ReduceFrontMax(X) -> Y"), Inputs: ts(s.x(3, 2, 2)), Grad: g0},
		{Name: "lengths", Op: op("ReduceFrontMax(X, lengths) -> Y"), Inputs: ts(s.x(3, 4), i32(3, 1, 2, 3)), Grad: g0},
		{Op: op("ReduceBackSum(X) -> Y"), Inputs: ts(s.x(3, 2, 2)), Grad: g0},
		{Op: op("ReduceBackMean(X, lengths) -> Y"), Inputs: ts(s.x(3, 4), i32(4, 1, 2)), Grad: g0},
		{Op: op("ReduceBackMax(X) -> Y", ai("num_reduce_dim", 2)), Inputs: ts(s.x(3, 2, 2)), Grad: g0},
		{Name: "lengths", Op: op("ReduceBackMax(X, lengths) -> Y"), Inputs: ts(s.x(3, 4), i32(4, 1, 2)), Grad: g0},
		{Op: op("ReduceSum(X) -> Y", ais("axes", 1), ai("keepdims", 0)), Inputs: ts(s.x(2, 3, 4)), Grad: g0},
		{Op: op("ReduceMean(X) -> Y", ais("axes", 0, 2)), Inputs: ts(s.x(2, 3, 4)), Grad: g0},
		{Op: op("ReduceMax(X) -> Y", ais("axes", -1)), Inputs: ts(s.x(2, 3, 4)), Grad: g0},
		{Op: op("ReduceMin(X) -> Y", ais("axes", 1)), Inputs: ts(s.x(2, 3, 4)), Grad: g0},
		{Op: op("ReduceL1(X) -> Y", ais("axes", 1)), Inputs: ts(s.x(2, 3, 4)), Grad: g0},
		{Op: op("ReduceL2(X) -> Y", ais("axes", 0), ai("keepdims", 0)), Inputs: ts(s.x(2, 3, 4)), Grad: g0},
		{Op: op("SumElements(X) -> Y"), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Name: "average", Op: op("SumElements(X) -> Y", ai("average", 1)), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Op: op("SumElementsInt(X) -> Y"), Inputs: ts(blob.MustFromSlice([]int32{3, -1, 4, 1, -5, 9}, 2, 3))},
		{Op: op("SumSqrElements(X) -> Y", ai("average", 1)), Inputs: ts(s.x(3, 4))},
		{Op: op("TopK(X) -> values, indices", ai("k", 2)), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Name: "flat indices", Op: op("TopK(X) -> values, indices, flat", ai("k", 2), ai("axis", 0)), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Name: "k past the axis", Op: op("TopK(X) -> values, indices", ai("k", 5)), Inputs: ts(s.x(2, 4)), Grad: g0},

		// Tensor shape, layout and element type.
		{Op: op("Cast(X) -> Y", ai("to", int64(netdef.TensorProto_DOUBLE)), ai("from_type", int64(netdef.TensorProto_FLOAT))), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Name: "to int", Op: op("Cast(X) -> Y", as("to", "INT32")), Inputs: ts(s.in(-5, 5, 3, 4))},
		{Op: op("Concat(A, B) -> Y, split_info", ai("axis", 1)), Inputs: ts(s.x(2, 3), s.x(2, 2)), Grad: g01},
		{Name: "new axis", Op: op("Concat(A, B) -> Y, split_info", ai("axis", 1), ai("add_axis", 1)), Inputs: ts(s.x(2, 3), s.x(2, 3)), Grad: g01},
		{Op: op("DepthConcat(A, B) -> Y, split_info"), Inputs: ts(s.x(1, 2, 2, 2), s.x(1, 3, 2, 2)), Grad: g01},
		{Op: op("Split(X) -> A, B", ai("axis", 1), ais("split", 1, 2)), Inputs: ts(s.x(2, 3)), Grad: g0},
		{Name: "lengths input, removing the axis", Op: op("Split(X, split) -> A, B", ai("axis", 0), ai("add_axis", 1)), Inputs: ts(s.x(2, 3), i32(1, 1)), Grad: g0},
		{Op: op("DepthSplit(X) -> A, B"), Inputs: ts(s.x(1, 4, 2, 2)), Grad: g0},
		{Op: op("Reshape(X) -> Y, old_shape", ais("shape", 4, -1)), Inputs: ts(s.x(2, 3, 2)), Grad: g0},
		{Name: "shape input", Op: op("Reshape(X, shape) -> Y, old_shape"), Inputs: ts(s.x(2, 3, 2), i64(0, -1)), Grad: g0},
		{Op: op("Flatten(X) -> Y"), Inputs: ts(s.x(2, 3, 2)), Grad: g0},
		{Op: op("FlattenToVec(X) -> Y"), Inputs: ts(s.x(2, 3, 2)), Grad: g0},
		{Op: op("ExpandDims(X) -> Y", ais("dims", 0, 2)), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Op: op("Squeeze(X) -> Y", ais("dims", 1)), Inputs: ts(s.x(3, 1, 4)), Grad: g0},
		{Op: op("ResizeLike(X, like) -> Y"), Inputs: ts(s.x(12), s.x(3, 4))},
		{Op: op("Shape(X) -> Y"), Inputs: ts(s.x(2, 3, 4))},
		{Op: op("Transpose(X) -> Y", ais("axes", 1, 2, 0)), Inputs: ts(s.x(2, 3, 4)), Grad: g0},
		{Name: "reversed", Op: op("Transpose(X) -> Y"), Inputs: ts(s.x(2, 3, 4)), Grad: g0},
		{Op: op("Tile(X) -> Y", ai("tiles", 3), ai("axis", 1)), Inputs: ts(s.x(2, 3)), Grad: g0},
		{Name: "tiles and axis inputs", Op: op("Tile(X, tiles, axis) -> Y"), Inputs: ts(s.x(2, 3), i32(2), i32(0)), Grad: g0},
		// Along axis 0 the gradient is a slice, which no operator computes.
		{Op: op("Gather(D, I) -> Y"), Inputs: ts(s.x(4, 3), i32(3, 0, 3))},
		{Name: "negative indices", Op: op("Gather(D, I) -> Y"), Inputs: ts(s.x(4, 3), blob.MustFromSlice([]int64{-1, 0, 2, -4}, 2, 2))},
		{Name: "axis 1", Op: op("Gather(D, I) -> Y", ai("axis", 1)), Inputs: ts(s.x(3, 4), i64(2, 0, 2)), Grad: g0},
		{Op: op("OneHot(I, K) -> Y"), Inputs: ts(i64(2, 0, 3), blob.Scalar(int64(4)))},
		{Op: op("Print(X) ->"), Inputs: ts(s.x(2, 3))},

		// Copies between devices.
		{Op: op("Copy(X) -> Y"), Inputs: ts(s.x(2, 3)), Grad: g0},
		{Op: op("CopyCPUToGPU(X) -> Y"), Inputs: ts(s.x(2, 3)), Grad: g0},
		{Op: op("CopyGPUToCPU(X) -> Y"), Inputs: ts(s.x(2, 3)), Grad: g0},
		{Op: op("CopyFromCPUInput(X) -> Y"), Inputs: ts(s.x(2, 3))},
		{Op: op("CopyOnDeviceLike(X, like) -> Y"), Inputs: ts(s.x(2, 3), s.x(1))},
		{Op: op("EnsureCPUOutput(X) -> Y"), Inputs: ts(s.x(2, 3))},
		{Op: op("StopGradient(X) -> Y"), Inputs: ts(s.x(2, 3))},
		{Op: op("Alias(X) -> Y"), Inputs: ts(s.x(2, 3)), Grad: g0},

		// Fillers.
		{Op: op("ConstantFill() -> Y", ais("shape", 2, 3), af("value", 1.5))},
		{Name: "shape input", Op: op("ConstantFill(shape) -> Y", ab("input_as_shape", true), ai("dtype", int64(netdef.TensorProto_BOOL)), ai("value", 1)), Inputs: ts(i64(2, 2))},
		{Name: "like an input", Op: op("ConstantFill(X) -> Y", ais("extra_shape", 2), ai("dtype", int64(netdef.TensorProto_INT64)), ai("value", 7)), Inputs: ts(s.x(2, 3))},
		{Op: op("RangeFill() -> Y", ais("shape", 2, 3))},
		{Op: op("GivenTensorFill() -> Y", ais("shape", 2, 2), netdef.ArgFloats("values", 1, -2, 3.5, 0.25))},
		{Op: op("GivenTensorDoubleFill() -> Y", ais("shape", 3), netdef.ArgFloats("values", 1, -2, 3.5))},
		{Op: op("GivenTensorIntFill() -> Y", ais("shape", 3), ais("values", 1, -2, 3))},
		{Op: op("GivenTensorInt64Fill() -> Y", ais("shape", 3), ais("values", 1, -2, 1<<40))},
		{Op: op("GivenTensorInt16Fill() -> Y", ais("shape", 3), ais("values", 1, -2, 300))},
		{Op: op("GivenTensorBoolFill() -> Y", ais("shape", 3), ais("values", 1, 0, 1))},
		{Op: op("GivenTensorStringFill() -> Y", ais("shape", 2), netdef.ArgStrings("values", "caffe", "go"))},
		{Op: optest.Seeded(op("GaussianFill() -> Y", ais("shape", 3, 4), af("mean", 1), af("std", 2)), 11), Random: true},
		{Op: optest.Seeded(op("UniformFill() -> Y", ais("shape", 3, 4), af("min", -1), af("max", 3)), 12), Random: true},
		{Name: "bounds inputs", Op: optest.Seeded(op("UniformFill(shape, min, max) -> Y", ab("input_as_shape", true)), 16), Inputs: ts(i64(3, 2), f32(-2), f32(2)), Random: true},
		{Op: optest.Seeded(op("UniformIntFill() -> Y", ais("shape", 3, 4), ai("min", -5), ai("max", 5)), 13), Random: true},
		{Op: optest.Seeded(op("MSRAFill() -> Y", ais("shape", 4, 3)), 14), Random: true},
		{Op: optest.Seeded(op("XavierFill(X) -> Y"), 15), Inputs: ts(s.x(4, 3)), Random: true},

		// Optimizers, learning rates and iteration counters.
		{Op: op("Iter(iter) -> iter"), Inputs: ts(i64(3))},
		{Op: op("CreateMutex() -> mutex")},
		{Op: op("AtomicIter(mutex, iter) -> iter"), Before: []*netdef.OperatorDef{
			op("CreateMutex() -> mutex"),
			op("ConstantFill() -> iter", ais("shape", 1), ai("dtype", int64(netdef.TensorProto_INT64)), ai("value", 3)),
		}},
		{Op: op("LearningRate(iter) -> lr", af("base_lr", -0.1), as("policy", "step"), ai("stepsize", 3), af("gamma", 0.5)), Inputs: ts(i64(7))},
		{Name: "inv", Op: op("LearningRate(iter) -> lr", af("base_lr", -0.1), as("policy", "inv"), af("gamma", 0.1), af("power", 0.75)), Inputs: ts(i64(7))},
		{Name: "linear warmup", Op: op("LearningRate(iter) -> lr", af("base_lr", -0.1), as("policy", "linearWarmup"), ai("num_iter", 10), af("start_multiplier", 0.1)), Inputs: ts(i64(4))},
		{Name: "cosine", Op: op("LearningRate(iter) -> lr", af("base_lr", -0.1), as("policy", "cosine"), af("max_lr", 0.5), af("min_lr", 0.1), ai("period", 10)), Inputs: ts(i64(13))},
		{Op: op("Lars(X, dX) -> rescale"), Inputs: ts(s.x(3, 4), s.x(3, 4))},
		{Name: "clamped", Op: op("Lars(X, dX, wd, trust, lr_max) -> rescale"), Inputs: ts(s.x(3, 4), s.x(3, 4), f32(0.01), f32(0.9), f32(1.5))},
		{Op: op("MomentumSGD(g, m, lr) -> g_out, m_out", af("momentum", 0.9)), Inputs: ts(s.x(4), s.x(4), f32(0.1))},
		{Name: "Nesterov", Op: op("MomentumSGD(g, m, lr) -> g, m", af("momentum", 0.9), ai("nesterov", 1)), Inputs: ts(s.x(4), s.x(4), f32(0.1))},
		{Op: op("MomentumSGDUpdate(g, m, lr, p) -> g, m, p", af("momentum", 0.9), ai("nesterov", 1)), Inputs: ts(s.x(4), s.x(4), f32(0.1), s.x(4))},
		{Op: op("Adagrad(p, m, g, lr) -> p, m"), Inputs: ts(s.x(4), s.pos(4), s.x(4), f32(-0.1))},
		{Name: "decay, all outputs", Op: op("Adagrad(p, m, g, lr) -> p_out, m_out, effective_lr, update", af("decay", 0.9)), Inputs: ts(s.x(4), s.pos(4), s.x(4), f32(-0.1))},
		{Op: op("Adam(p, m1, m2, g, lr, iter) -> p, m1, m2, effective_grad"), Inputs: ts(s.x(4), s.x(4), s.pos(4), s.x(4), f32(-0.01), i64(4))},
		{Op: op("RmsProp(g, ms, mom, lr) -> g_out, ms, mom", af("momentum", 0.5)), Inputs: ts(s.x(4), s.pos(4), s.x(4), f32(0.01))},
		{Op: op("ScatterWeightedSum(X0, w0, I, X1, w1) -> X0"), Inputs: ts(s.x(4, 2), f32(0.5), i32(3, 0), s.x(2, 2), f32(2))},
		{Op: op("SparseMomentumSGDUpdate(g, m, lr, p, I) -> g_out, m, p", af("momentum", 0.9)), Inputs: ts(s.x(2, 2), s.x(4, 2), f32(0.1), s.x(4, 2), i64(2, 0))},
		{Op: op("SparseAdagrad(p, m, I, g, lr) -> p, m"), Inputs: ts(s.x(4, 2), s.pos(4, 2), i64(2, 0), s.x(2, 2), f32(-0.1))},
		{Op: op("SparseAdam(p, m1, m2, I, g, lr, iter) -> p, m1, m2"), Inputs: ts(s.x(4, 2), s.x(4, 2), s.pos(4, 2), i32(3, 1), s.x(2, 2), f32(-0.01), i64(4))},

		// Collective communication.
		{Op: op("Allreduce(a, b, c) -> a, b, c"), Inputs: ts(s.x(2, 3), s.x(2, 3), s.x(2, 3))},

		// Persistence and datasets, on absolute paths: the root folder of
		// the suite's workspaces is the working directory.
		{Op: op("Save(W, b) ->", db("save"), minidb), Inputs: ts(s.x(2, 3), s.x(3))},
		{Name: "badger", Op: op("Save(W, b) ->", db("save.badger"), ai("chunk_size", 4)), Inputs: ts(s.x(2, 3), s.x(3))},
		{Op: op("Load() -> W", db("load"), minidb), Before: []*netdef.OperatorDef{
			op("GivenTensorFill() -> W", ais("shape", 2), netdef.ArgFloats("values", 1, 2)),
			op("Save(W) ->", db("load"), minidb),
		}},
		{Op: op("Checkpoint(iter, W) ->", db("checkpoint_%d"), ai("every", 2), minidb), Inputs: ts(i64(4), s.x(2, 3))},
		{Op: op("Snapshot(iter, W) ->", db("snapshot_%d"), minidb), Inputs: ts(i64(3), s.x(2, 3))},
		{Op: op("DBExists() -> exists", as("db_name", dataset), minidb)},
		{Op: op("CreateDB() -> reader", as("db", dataset), minidb)},
		{Op: op("TensorProtosDBInput(reader) -> X, label", ai("batch_size", 2)), Before: []*netdef.OperatorDef{
			op("CreateDB() -> reader", as("db", dataset), minidb),
		}},
	}
	for _, set := range caseSets {
		cases = append(cases, set(s)...)
	}
	optest.CheckRegistry(t, cases)
}

// caseSets are conformance cases kept in files of their own, one per
// operator family (opcases_<family>_test.go); each file appends its set in
// init, drawing its inputs from the suite's sampler.
var caseSets []func(s *sampler) []optest.Case
