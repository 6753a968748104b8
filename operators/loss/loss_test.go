package loss

import (
	"math"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

func f32(shape []int, v ...float32) *blob.Tensor { return blob.MustFromSlice(v, shape...) }
func f64(shape []int, v ...float64) *blob.Tensor { return blob.MustFromSlice(v, shape...) }
func i32(shape []int, v ...int32) *blob.Tensor   { return blob.MustFromSlice(v, shape...) }
func dims(d ...int) []int                        { return d }

func op(typ string, in, out []string, args ...*netdef.Argument) *netdef.OperatorDef {
	return netdef.NewOperator(typ, in, out, args...)
}

// refSoftmaxLoss is scale·Σ wᵢ·(−Σⱼ tᵢⱼ·log pᵢⱼ)/Σ wᵢ for targets t (one-hot
// or probabilities) and weights w (nil: all 1).
func refSoftmaxLoss(x, t, w []float64, d int, scale float64) float64 {
	p := optest.RefSoftmax(x, d)
	var sum, wsum float64
	for i := 0; i < len(x)/d; i++ {
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		for j := 0; j < d; j++ {
			sum -= wi * t[i*d+j] * math.Log(p[i*d+j])
		}
		wsum += wi
	}
	return scale * sum / wsum
}

func oneHot(labels []int32, d int) []float64 {
	t := make([]float64, len(labels)*d)
	for i, l := range labels {
		t[i*d+int(l)] = 1
	}
	return t
}

func scalar64(v float64) *blob.Tensor { return blob.Scalar(v) }

func TestForward(t *testing.T) {
	xentX := []float32{.01, .05, .02, .02, .9, .03, .1, .42, .05, .4}
	x64 := []float64{0.3, -1.2, 2.0, 0.7, 0.1, -0.4, 1.5, 0.2, -2.0, 0.9, 0.0, 0.5}
	w := []float64{0.5, 2, 1}
	probs := []float64{0.2, 0.3, 0.4, 0.1, 0, 0, 1, 0, 0.25, 0.25, 0.25, 0.25}
	tests := []struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
		want   []*blob.Tensor
		tol    float64
	}{
		// Caffe2's documented examples.
		{"LabelCrossEntropy", op("LabelCrossEntropy", []string{"X", "label"}, []string{"Y"}),
			[]*blob.Tensor{f32(dims(2, 5), xentX...), i32(dims(2), 4, 2)},
			[]*blob.Tensor{f32(dims(2), 0.10536055, 0.8675006)}, 1e-6},
		{"LabelCrossEntropy [N,1] labels, 4-D X", op("LabelCrossEntropy", []string{"X", "label"}, []string{"Y"}),
			[]*blob.Tensor{f32(dims(2, 5, 1, 1), xentX...), i32(dims(2, 1), 4, 2)},
			[]*blob.Tensor{f32(dims(2), 0.10536055, 0.8675006)}, 1e-6},
		{"LabelCrossEntropy 1-D X, zero probability", op("LabelCrossEntropy", []string{"X", "label"}, []string{"Y"}),
			[]*blob.Tensor{f64(dims(3), 0.5, 0, 0.5), i32(dims(1), 1)},
			[]*blob.Tensor{f64(dims(1), -math.Log(1e-20))}, 1e-9},
		{"CrossEntropy one-hot", op("CrossEntropy", []string{"X", "label"}, []string{"Y"}),
			[]*blob.Tensor{f32(dims(2, 5), xentX...), f32(dims(2, 5), 0, 0, 0, 0, 1, 0, 0, 1, 0, 0)},
			[]*blob.Tensor{f32(dims(2), 0.10536055, 0.8675006)}, 1e-6},
		{"CrossEntropy soft", op("CrossEntropy", []string{"X", "label"}, []string{"Y"}),
			[]*blob.Tensor{f64(dims(2, 2), 0.25, 0.75, 0.5, 0.5), f64(dims(2, 2), 0.5, 0.5, 0.1, 0.9)},
			[]*blob.Tensor{f64(dims(2), -(0.5*math.Log(0.25) + 0.5*math.Log(0.75)), -math.Log(0.5))}, 1e-12},
		{"SoftmaxWithLoss scale 5 (Caffe2 doc)", op("SoftmaxWithLoss", []string{"X", "label"}, []string{"P", "L"}, netdef.ArgFloat("scale", 5)),
			[]*blob.Tensor{f32(dims(1, 5), .1, .4, .7, 1.5, .2), i32(dims(1), 4)},
			[]*blob.Tensor{f32(dims(1, 5), 0.10715417, 0.144643, 0.19524762, 0.4345316, 0.11842369), blob.Scalar[float32](10.667433)}, 1e-5},
		{"SoftmaxWithLoss [N,1] labels", op("SoftmaxWithLoss", []string{"X", "label"}, []string{"P", "L"}),
			[]*blob.Tensor{f32(dims(1, 5), -0.3429451, -0.80375195, 0.23104447, 1.4569176, -0.5268362), i32(dims(1, 1), 4)},
			[]*blob.Tensor{f32(dims(1, 5), 0.09721052, 0.0613179, 0.17258129, 0.58800864, 0.0808817), blob.Scalar[float32](2.5147676)}, 1e-6},
		{"SoftmaxWithLoss weighted, double", op("SoftmaxWithLoss", []string{"X", "label", "w"}, []string{"P", "L"}, netdef.ArgFloat("scale", 0.5)),
			[]*blob.Tensor{f64(dims(3, 4), x64...), i32(dims(3), 3, 0, 2), f64(dims(3), w...)},
			[]*blob.Tensor{f64(dims(3, 4), optest.RefSoftmax(x64, 4)...), scalar64(refSoftmaxLoss(x64, oneHot([]int32{3, 0, 2}, 4), w, 4, 0.5))}, 1e-12},
		{"SoftmaxWithLoss label_prob", op("SoftmaxWithLoss", []string{"X", "label"}, []string{"P", "L"}, netdef.ArgInt("label_prob", 1)),
			[]*blob.Tensor{f64(dims(3, 4), x64...), f64(dims(3, 4), probs...)},
			[]*blob.Tensor{f64(dims(3, 4), optest.RefSoftmax(x64, 4)...), scalar64(refSoftmaxLoss(x64, probs, nil, 4, 1))}, 1e-12},
		{"SoftmaxWithLoss label_prob weighted", op("SoftmaxWithLoss", []string{"X", "label", "w"}, []string{"P", "L"}, netdef.ArgInt("label_prob", 1)),
			[]*blob.Tensor{f64(dims(3, 4), x64...), f64(dims(3, 4), probs...), f64(dims(3), w...)},
			[]*blob.Tensor{f64(dims(3, 4), optest.RefSoftmax(x64, 4)...), scalar64(refSoftmaxLoss(x64, probs, w, 4, 1))}, 1e-12},
		// axis 2 on [2, 3, 2]: N = 6 rows of D = 2; labels [2, 3].
		{"SoftmaxWithLoss axis 2", op("SoftmaxWithLoss", []string{"X", "label"}, []string{"P", "L"}, netdef.ArgInt("axis", 2)),
			[]*blob.Tensor{f64(dims(2, 3, 2), x64...), i32(dims(2, 3), 0, 1, 1, 0, 0, 1)},
			[]*blob.Tensor{f64(dims(2, 3, 2), optest.RefSoftmax(x64, 2)...), scalar64(refSoftmaxLoss(x64, oneHot([]int32{0, 1, 1, 0, 0, 1}, 2), nil, 2, 1))}, 1e-12},
		{"SoftmaxWithLoss axis -1", op("SoftmaxWithLoss", []string{"X", "label"}, []string{"P", "L"}, netdef.ArgInt("axis", -1)),
			[]*blob.Tensor{f64(dims(6, 2), x64...), i32(dims(6), 0, 1, 1, 0, 0, 1)},
			[]*blob.Tensor{f64(dims(6, 2), optest.RefSoftmax(x64, 2)...), scalar64(refSoftmaxLoss(x64, oneHot([]int32{0, 1, 1, 0, 0, 1}, 2), nil, 2, 1))}, 1e-12},
		{"SoftmaxWithLoss zero weights", op("SoftmaxWithLoss", []string{"X", "label", "w"}, []string{"P", "L"}),
			[]*blob.Tensor{f32(dims(1, 2), 1, 2), i32(dims(1), 0), f32(dims(1), 0)},
			[]*blob.Tensor{f32(dims(1, 2), float32(1/(1+math.E)), float32(math.E/(1+math.E))), blob.Scalar[float32](0)}, 1e-7},
		{"SquaredL2Distance", op("SquaredL2Distance", []string{"X", "Y"}, []string{"Z"}),
			[]*blob.Tensor{f32(dims(2, 2), 1, 2, 3, 4), f32(dims(2, 2), 0, 0, 1, 1)},
			[]*blob.Tensor{f32(dims(2), 2.5, 6.5)}, 0},
		{"SquaredL2Distance 1-D rows of one", op("SquaredL2Distance", []string{"X", "Y"}, []string{"Z"}),
			[]*blob.Tensor{f64(dims(3), 1, 2, 3), f64(dims(3), 3, 2, 0)},
			[]*blob.Tensor{f64(dims(3), 2, 0, 4.5)}, 0},
		{"SquaredL2Distance 3-D", op("SquaredL2Distance", []string{"X", "Y"}, []string{"Z"}),
			[]*blob.Tensor{f32(dims(1, 2, 2), 1, 1, 1, 1), f32(dims(1, 2, 2), 0, 0, 0, 3)},
			[]*blob.Tensor{f32(dims(1), 3.5)}, 0},
		{"SquaredL2Distance scalar", op("SquaredL2Distance", []string{"X", "Y"}, []string{"Z"}),
			[]*blob.Tensor{blob.Scalar[float32](3), blob.Scalar[float32](1)},
			[]*blob.Tensor{f32(dims(1), 2)}, 0},
		{"AveragedLoss", op("AveragedLoss", []string{"X"}, []string{"y"}),
			[]*blob.Tensor{f64(dims(2, 2), 1, 2, 3, 5)},
			[]*blob.Tensor{scalar64(2.75)}, 0},
		{"AveragedLoss empty", op("AveragedLoss", []string{"X"}, []string{"y"}),
			[]*blob.Tensor{f32(dims(0))},
			[]*blob.Tensor{blob.Scalar[float32](0)}, 0},
		// Row 0: label 1 is the best. Row 1: label 0 ties with class 2 and wins the tie.
		// Row 2: label 2 is second. Row 3: label 0 is third.
		{"Accuracy top 1", op("Accuracy", []string{"P", "label"}, []string{"acc"}),
			[]*blob.Tensor{f32(dims(4, 3), 0.1, 0.8, 0.1, 0.4, 0.2, 0.4, 0.5, 0.1, 0.4, 0.1, 0.5, 0.4), i32(dims(4), 1, 0, 2, 0)},
			[]*blob.Tensor{blob.Scalar[float32](0.5)}, 0},
		{"Accuracy top 2", op("Accuracy", []string{"P", "label"}, []string{"acc"}, netdef.ArgInt("top_k", 2)),
			[]*blob.Tensor{f64(dims(4, 3), 0.1, 0.8, 0.1, 0.4, 0.2, 0.4, 0.5, 0.1, 0.4, 0.1, 0.5, 0.4), i32(dims(4), 1, 2, 2, 0)},
			[]*blob.Tensor{blob.Scalar[float32](0.75)}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := optest.RunOp(tc.def, tc.inputs...)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range tc.want {
				expectClose(t, tc.def.Output[i], out[i], want, tc.tol)
			}
		})
	}
}

func expectClose(t *testing.T, name string, got, want *blob.Tensor, tol float64) {
	t.Helper()
	if got.DataType() != want.DataType() || !slices.Equal(got.Dims(), want.Dims()) {
		t.Fatalf("%s: got %v, want %v", name, got, want)
	}
	g, w := got.AsFloat64s(), want.AsFloat64s()
	for k := range w {
		if math.Abs(g[k]-w[k]) > tol*math.Max(1, math.Abs(w[k])) {
			t.Fatalf("%s[%d] = %v, want %v (all: %v)", name, k, g[k], w[k], g)
		}
	}
}

// TestGradientOperators checks the gradient operators on hand-computed values.
func TestGradientOperators(t *testing.T) {
	x := []float64{0.2, 0.5, 0.3, 0.6, 0.1, 0.3}
	p := optest.RefSoftmax(x, 3)
	tests := []struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
		want   []*blob.Tensor
	}{
		{"LabelCrossEntropyGradient", op("LabelCrossEntropyGradient", []string{"X", "label", "dY"}, []string{"dX"}),
			[]*blob.Tensor{f64(dims(2, 3), x...), i32(dims(2), 1, 0), f64(dims(2), 2, -3)},
			[]*blob.Tensor{f64(dims(2, 3), 0, -2/0.5, 0, 3/0.6, 0, 0)}},
		{"CrossEntropyGradient", op("CrossEntropyGradient", []string{"X", "label", "dY"}, []string{"dX"}),
			[]*blob.Tensor{f64(dims(2, 3), x...), f64(dims(2, 3), 0.5, 0.5, 0, 0, 0, 1), f64(dims(2), 2, -3)},
			[]*blob.Tensor{f64(dims(2, 3), -2*0.5/0.2, -2*0.5/0.5, 0, 0, 0, 3/0.3)}},
		{"SoftmaxWithLossGradient", op("SoftmaxWithLossGradient", []string{"X", "label", "P", "dL"}, []string{"dX"}, netdef.ArgFloat("scale", 3)),
			[]*blob.Tensor{f64(dims(2, 3), x...), i32(dims(2), 2, 0), f64(dims(2, 3), p...), scalar64(0.5)},
			[]*blob.Tensor{f64(dims(2, 3), 0.75*p[0], 0.75*p[1], 0.75*(p[2]-1), 0.75*(p[3]-1), 0.75*p[4], 0.75*p[5])}},
		{"SoftmaxWithLossGradient weighted", op("SoftmaxWithLossGradient", []string{"X", "label", "w", "P", "dL"}, []string{"dX"}),
			[]*blob.Tensor{f64(dims(2, 3), x...), i32(dims(2), 2, 0), f64(dims(2), 1, 3), f64(dims(2, 3), p...), scalar64(2)},
			[]*blob.Tensor{f64(dims(2, 3), 0.5*p[0], 0.5*p[1], 0.5*(p[2]-1), 1.5*(p[3]-1), 1.5*p[4], 1.5*p[5])}},
		{"SoftmaxWithLossGradient label_prob", op("SoftmaxWithLossGradient", []string{"X", "label", "P", "dL"}, []string{"dX"}, netdef.ArgInt("label_prob", 1)),
			[]*blob.Tensor{f64(dims(2, 3), x...), f64(dims(2, 3), 0.5, 0.5, 0, 0, 0, 1), f64(dims(2, 3), p...), scalar64(1)},
			[]*blob.Tensor{f64(dims(2, 3), (p[0]-0.5)/2, (p[1]-0.5)/2, p[2]/2, p[3]/2, p[4]/2, (p[5]-1)/2)}},
		{"SoftmaxWithLossGradient zero weights", op("SoftmaxWithLossGradient", []string{"X", "label", "w", "P", "dL"}, []string{"dX"}),
			[]*blob.Tensor{f64(dims(2, 3), x...), i32(dims(2), 2, 0), f64(dims(2), 1, -1), f64(dims(2, 3), p...), scalar64(1)},
			[]*blob.Tensor{f64(dims(2, 3), 0, 0, 0, 0, 0, 0)}},
		{"SquaredL2DistanceGradient", op("SquaredL2DistanceGradient", []string{"X", "Y", "dZ"}, []string{"dX", "dY"}),
			[]*blob.Tensor{f32(dims(2, 2), 1, 2, 3, 4), f32(dims(2, 2), 0, 0, 1, 1), f32(dims(2), 2, -1)},
			[]*blob.Tensor{f32(dims(2, 2), 2, 4, -2, -3), f32(dims(2, 2), -2, -4, 2, 3)}},
		{"AveragedLossGradient", op("AveragedLossGradient", []string{"X", "dY"}, []string{"dX"}),
			[]*blob.Tensor{f32(dims(2, 2), 1, 2, 3, 4), blob.Scalar[float32](2)},
			[]*blob.Tensor{f32(dims(2, 2), 0.5, 0.5, 0.5, 0.5)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := optest.RunOp(tc.def, tc.inputs...)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range tc.want {
				expectClose(t, tc.def.Output[i], out[i], want, 1e-12)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	x := f32(dims(2, 3), 0.2, 0.3, 0.5, 0.1, 0.1, 0.8)
	tests := []struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
		want   string
	}{
		{"LCE label out of range", op("LabelCrossEntropy", []string{"X", "l"}, []string{"Y"}), []*blob.Tensor{x, i32(dims(2), 0, 3)}, "outside the supported range [0, 3)"},
		{"LCE negative label", op("LabelCrossEntropy", []string{"X", "l"}, []string{"Y"}), []*blob.Tensor{x, i32(dims(2), -1, 0)}, "outside"},
		{"LCE label count", op("LabelCrossEntropy", []string{"X", "l"}, []string{"Y"}), []*blob.Tensor{x, i32(dims(3), 0, 0, 0)}, "want [2] or [2, 1]"},
		{"LCE int64 labels", op("LabelCrossEntropy", []string{"X", "l"}, []string{"Y"}), []*blob.Tensor{x, blob.MustFromSlice([]int64{0, 1})}, "want INT32"},
		{"LCE int X", op("LabelCrossEntropy", []string{"X", "l"}, []string{"Y"}), []*blob.Tensor{i32(dims(2), 0, 1), i32(dims(2), 0, 1)}, "want FLOAT or DOUBLE"},
		{"LCE scalar X", op("LabelCrossEntropy", []string{"X", "l"}, []string{"Y"}), []*blob.Tensor{blob.Scalar[float32](1), i32(dims(1), 0)}, "at least 1 dimension"},
		{"LCE gradient dY shape", op("LabelCrossEntropyGradient", []string{"X", "l", "dY"}, []string{"dX"}), []*blob.Tensor{x, i32(dims(2), 0, 1), f32(dims(3), 1, 1, 1)}, "want [2]"},
		{"LCE gradient dY type", op("LabelCrossEntropyGradient", []string{"X", "l", "dY"}, []string{"dX"}), []*blob.Tensor{x, i32(dims(2), 0, 1), f64(dims(2), 1, 1)}, "want FLOAT"},
		{"CE not a probability", op("CrossEntropy", []string{"X", "l"}, []string{"Y"}), []*blob.Tensor{x, f32(dims(2, 3), 0, 2, 0, 0, 0, 1)}, "not a probability"},
		{"CE label shape", op("CrossEntropy", []string{"X", "l"}, []string{"Y"}), []*blob.Tensor{x, f32(dims(2, 2), 0, 1, 0, 1)}, "want [2, 3]"},
		{"CE label type", op("CrossEntropy", []string{"X", "l"}, []string{"Y"}), []*blob.Tensor{x, i32(dims(2, 3), 0, 1, 0, 0, 1, 0)}, "want FLOAT"},
		{"SWL label out of range", op("SoftmaxWithLoss", []string{"X", "l"}, []string{"P", "L"}), []*blob.Tensor{x, i32(dims(2), 0, 5)}, "outside the supported range"},
		{"SWL label count", op("SoftmaxWithLoss", []string{"X", "l"}, []string{"P", "L"}), []*blob.Tensor{x, i32(dims(1), 0)}, "want 2 labels"},
		{"SWL label [N,2]", op("SoftmaxWithLoss", []string{"X", "l"}, []string{"P", "L"}), []*blob.Tensor{x, i32(dims(2, 2), 0, 0, 0, 0)}, "want 2 labels"},
		{"SWL weight count", op("SoftmaxWithLoss", []string{"X", "l", "w"}, []string{"P", "L"}), []*blob.Tensor{x, i32(dims(2), 0, 1), f32(dims(3), 1, 1, 1)}, "want 2 elements"},
		{"SWL axis out of range", op("SoftmaxWithLoss", []string{"X", "l"}, []string{"P", "L"}, netdef.ArgInt("axis", 2)), []*blob.Tensor{x, i32(dims(2), 0, 1)}, "out of range"},
		{"SWL negative scale", op("SoftmaxWithLoss", []string{"X", "l"}, []string{"P", "L"}, netdef.ArgFloat("scale", -1)), []*blob.Tensor{x, i32(dims(2), 0, 1)}, "non-negative"},
		{"SWL NHWC", op("SoftmaxWithLoss", []string{"X", "l"}, []string{"P", "L"}, netdef.ArgString("order", "NHWC")), []*blob.Tensor{x, i32(dims(2), 0, 1)}, "NCHW"},
		{"SWL prob row sum", op("SoftmaxWithLoss", []string{"X", "l"}, []string{"P", "L"}, netdef.ArgInt("label_prob", 1)), []*blob.Tensor{x, f32(dims(2, 3), 0.5, 0.5, 0, 0.5, 0.4, 0)}, "sum to"},
		{"SWL prob negative", op("SoftmaxWithLoss", []string{"X", "l"}, []string{"P", "L"}, netdef.ArgInt("label_prob", 1)), []*blob.Tensor{x, f32(dims(2, 3), 1.5, -0.5, 0, 0, 0, 1)}, "non-negative"},
		{"SWL prob 1-D", op("SoftmaxWithLoss", []string{"X", "l"}, []string{"P", "L"}, netdef.ArgInt("label_prob", 1)), []*blob.Tensor{x, f32(dims(6), 1, 0, 0, 0, 0, 1)}, "want 2 rows of 3"},
		{"SWL one input", op("SoftmaxWithLoss", []string{"X"}, []string{"P", "L"}), []*blob.Tensor{x}, "takes 2 to 3 inputs"},
		{"SWL gradient softmax shape", op("SoftmaxWithLossGradient", []string{"X", "l", "P", "dL"}, []string{"dX"}), []*blob.Tensor{x, i32(dims(2), 0, 1), f32(dims(2), 1, 1), blob.Scalar[float32](1)}, "want the logits' shape"},
		{"SWL gradient dloss size", op("SoftmaxWithLossGradient", []string{"X", "l", "P", "dL"}, []string{"dX"}), []*blob.Tensor{x, i32(dims(2), 0, 1), x, f32(dims(2), 1, 1)}, "one element"},
		{"L2 shape mismatch", op("SquaredL2Distance", []string{"X", "Y"}, []string{"Z"}), []*blob.Tensor{x, f32(dims(3, 2), 1, 2, 3, 4, 5, 6)}, "same shape"},
		{"L2 type mismatch", op("SquaredL2Distance", []string{"X", "Y"}, []string{"Z"}), []*blob.Tensor{x, f64(dims(2, 3), 1, 2, 3, 4, 5, 6)}, "want FLOAT"},
		{"L2 gradient dZ shape", op("SquaredL2DistanceGradient", []string{"X", "Y", "dZ"}, []string{"dX", "dY"}), []*blob.Tensor{x, x, f32(dims(1, 2), 1, 1)}, "want [2]"},
		{"AveragedLoss int", op("AveragedLoss", []string{"X"}, []string{"Y"}), []*blob.Tensor{i32(dims(1), 1)}, "want FLOAT or DOUBLE"},
		{"AveragedLossGradient dY size", op("AveragedLossGradient", []string{"X", "dY"}, []string{"dX"}), []*blob.Tensor{x, f32(dims(2), 1, 1)}, "one element"},
		{"Accuracy 3-D", op("Accuracy", []string{"X", "l"}, []string{"A"}), []*blob.Tensor{f32(dims(1, 2, 3), 1, 2, 3, 4, 5, 6), i32(dims(1), 0)}, "2-D"},
		{"Accuracy label range", op("Accuracy", []string{"X", "l"}, []string{"A"}), []*blob.Tensor{x, i32(dims(2), 3, 0)}, "outside"},
		{"Accuracy label shape", op("Accuracy", []string{"X", "l"}, []string{"A"}), []*blob.Tensor{x, i32(dims(2, 1), 0, 0)}, "want [2]"},
		{"Accuracy top_k 0", op("Accuracy", []string{"X", "l"}, []string{"A"}, netdef.ArgInt("top_k", 0)), []*blob.Tensor{x, i32(dims(2), 0, 0)}, "top_k"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := optest.RunOp(tc.def, tc.inputs...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestGradientDefs checks the gradient operators against the definitions
// Caffe2 generates (its serialized operator tests cover AveragedLoss and
// SoftmaxWithLoss with only_loss; see tests/conformance_test.go).
func TestGradientDefs(t *testing.T) {
	gradDef := func(typ string, in, out []string, args ...*netdef.Argument) []*netdef.OperatorDef {
		return []*netdef.OperatorDef{optest.GradOp(typ, in, out, args...)}
	}
	tests := []struct {
		name string
		def  *netdef.OperatorDef
		want []*netdef.OperatorDef
	}{
		{"SoftmaxWithLoss weighted", op("SoftmaxWithLoss", []string{"X", "label", "w"}, []string{"P", "L"}, netdef.ArgFloat("scale", 2)),
			gradDef("SoftmaxWithLossGradient", []string{"X", "label", "w", "P", "L_grad"}, []string{"X_grad"}, netdef.ArgFloat("scale", 2))},
		{"LabelCrossEntropy", op("LabelCrossEntropy", []string{"X", "label"}, []string{"Y"}),
			gradDef("LabelCrossEntropyGradient", []string{"X", "label", "Y_grad"}, []string{"X_grad"})},
		{"CrossEntropy", op("CrossEntropy", []string{"X", "label"}, []string{"Y"}),
			gradDef("CrossEntropyGradient", []string{"X", "label", "Y_grad"}, []string{"X_grad"})},
		{"SquaredL2Distance", op("SquaredL2Distance", []string{"X", "Y"}, []string{"Z"}),
			gradDef("SquaredL2DistanceGradient", []string{"X", "Y", "Z_grad"}, []string{"X_grad", "Y_grad"})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gd, err := operators.GetGradientDefs(tc.def, optest.DenseGradients(tc.def))
			if err != nil {
				t.Fatal(err)
			}
			if len(gd.Ops) != len(tc.want) {
				t.Fatalf("%d gradient ops, want %d: %v", len(gd.Ops), len(tc.want), gd.Ops)
			}
			for i, want := range tc.want {
				if got := optest.SortedArgs(gd.Ops[i]); !proto.Equal(got, optest.SortedArgs(want)) {
					t.Errorf("gradient op %d:\n got %v\nwant %v", i, got, want)
				}
			}
			for i, in := range tc.def.Input {
				wantGrad := ""
				if slices.Contains(tc.want[0].Output, in+"_grad") {
					wantGrad = in + "_grad"
				}
				if gd.InputGrad[i].Dense != wantGrad {
					t.Errorf("input %q: gradient %+v, want %q", in, gd.InputGrad[i], wantGrad)
				}
			}
		})
	}
	if _, err := operators.GetGradientDefs(op("Accuracy", []string{"P", "l"}, []string{"a"}), []operators.Gradient{operators.Dense("a_grad")}); err == nil {
		t.Errorf("Accuracy: gradient allowed, want an error")
	}
}

// TestNumericGradients compares every gradient with central differences.
func TestNumericGradients(t *testing.T) {
	probs32 := f32(dims(3, 4), 0.1, 0.2, 0.3, 0.4, 0.25, 0.25, 0.4, 0.1, 0.7, 0.1, 0.1, 0.1)
	probs64 := f64(dims(3, 4), 0.1, 0.2, 0.3, 0.4, 0.25, 0.25, 0.4, 0.1, 0.7, 0.1, 0.1, 0.1)
	logits32 := f32(dims(3, 4), 0.3, -1.2, 2.0, 0.7, 0.1, -0.4, 1.5, 0.2, -2.0, 0.9, 0.0, 0.5)
	logits64 := f64(dims(3, 4), 0.3, -1.2, 2.0, 0.7, 0.1, -0.4, 1.5, 0.2, -2.0, 0.9, 0.0, 0.5)
	soft := f32(dims(3, 4), 0.5, 0.5, 0, 0, 0, 0, 1, 0, 0.2, 0.3, 0.1, 0.4)
	labels := i32(dims(3), 2, 0, 3)
	weights := f32(dims(3), 0.5, 2, 1)
	tests := []struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
		input  int
		outs   []int
	}{
		{"LabelCrossEntropy X", op("LabelCrossEntropy", []string{"X", "l"}, []string{"Y"}), []*blob.Tensor{probs32, labels}, 0, nil},
		{"LabelCrossEntropy X double", op("LabelCrossEntropy", []string{"X", "l"}, []string{"Y"}), []*blob.Tensor{probs64, labels}, 0, nil},
		{"CrossEntropy X", op("CrossEntropy", []string{"X", "l"}, []string{"Y"}), []*blob.Tensor{probs32, soft}, 0, nil},
		{"SoftmaxWithLoss logits", op("SoftmaxWithLoss", []string{"X", "l"}, []string{"P", "L"}), []*blob.Tensor{logits32, labels}, 0, []int{1}},
		{"SoftmaxWithLoss logits double", op("SoftmaxWithLoss", []string{"X", "l"}, []string{"P", "L"}, netdef.ArgFloat("scale", 3)), []*blob.Tensor{logits64, labels}, 0, []int{1}},
		{"SoftmaxWithLoss weighted logits", op("SoftmaxWithLoss", []string{"X", "l", "w"}, []string{"P", "L"}, netdef.ArgFloat("scale", 0.5)), []*blob.Tensor{logits32, labels, weights}, 0, []int{1}},
		{"SoftmaxWithLoss label_prob logits", op("SoftmaxWithLoss", []string{"X", "l"}, []string{"P", "L"}, netdef.ArgInt("label_prob", 1)), []*blob.Tensor{logits32, soft}, 0, []int{1}},
		{"SoftmaxWithLoss label_prob weighted logits", op("SoftmaxWithLoss", []string{"X", "l", "w"}, []string{"P", "L"}, netdef.ArgInt("label_prob", 1)), []*blob.Tensor{logits32, soft, weights}, 0, []int{1}},
		{"SoftmaxWithLoss axis 2 logits", op("SoftmaxWithLoss", []string{"X", "l"}, []string{"P", "L"}, netdef.ArgInt("axis", 2)), []*blob.Tensor{f32(dims(3, 2, 2), blob.Data[float32](logits32)...), i32(dims(3, 2), 0, 1, 1, 1, 0, 1)}, 0, []int{1}},
		{"SquaredL2Distance X", op("SquaredL2Distance", []string{"X", "Y"}, []string{"Z"}), []*blob.Tensor{logits32, probs32}, 0, nil},
		{"SquaredL2Distance Y", op("SquaredL2Distance", []string{"X", "Y"}, []string{"Z"}), []*blob.Tensor{logits32, probs32}, 1, nil},
		{"SquaredL2Distance Y double", op("SquaredL2Distance", []string{"X", "Y"}, []string{"Z"}), []*blob.Tensor{logits64, probs64}, 1, nil},
		{"AveragedLoss X", op("AveragedLoss", []string{"X"}, []string{"Y"}), []*blob.Tensor{logits32}, 0, nil},
		{"AveragedLoss X double", op("AveragedLoss", []string{"X"}, []string{"Y"}), []*blob.Tensor{logits64}, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			worst, err := optest.CheckGradient(tc.def, tc.inputs, tc.input, optest.GradientCheck{OutputsWithGrad: tc.outs})
			if err != nil {
				t.Fatalf("%v (worst %g)", err, worst)
			}
		})
	}
}

// TestSteadyStateAllocs checks that running an operator again on inputs of
// the same shape allocates nothing.
func TestSteadyStateAllocs(t *testing.T) {
	x := f32(dims(4, 3), 0.2, 0.3, 0.5, 0.1, 0.1, 0.8, 0.3, 0.3, 0.4, 0.6, 0.2, 0.2)
	labels := i32(dims(4), 2, 0, 1, 1)
	w := f32(dims(4), 1, 2, 3, 4)
	dy := f32(dims(4), 1, 2, 3, 4)
	one := blob.Scalar[float32](1)
	tests := []struct {
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
	}{
		{op("LabelCrossEntropy", []string{"X", "l"}, []string{"Y"}), []*blob.Tensor{x, labels}},
		{op("LabelCrossEntropyGradient", []string{"X", "l", "dY"}, []string{"dX"}), []*blob.Tensor{x, labels, dy}},
		{op("CrossEntropy", []string{"X", "l"}, []string{"Y"}), []*blob.Tensor{x, x}},
		{op("CrossEntropyGradient", []string{"X", "l", "dY"}, []string{"dX"}), []*blob.Tensor{x, x, dy}},
		{op("SoftmaxWithLoss", []string{"X", "l", "w"}, []string{"P", "L"}), []*blob.Tensor{x, labels, w}},
		{op("SoftmaxWithLoss", []string{"X", "l"}, []string{"P", "L"}, netdef.ArgInt("label_prob", 1)), []*blob.Tensor{x, x}},
		{op("SoftmaxWithLossGradient", []string{"X", "l", "w", "P", "dL"}, []string{"dX"}), []*blob.Tensor{x, labels, w, x, one}},
		{op("SquaredL2Distance", []string{"X", "Y"}, []string{"Z"}), []*blob.Tensor{x, x}},
		{op("SquaredL2DistanceGradient", []string{"X", "Y", "dZ"}, []string{"dX", "dY"}), []*blob.Tensor{x, x, dy}},
		{op("AveragedLoss", []string{"X"}, []string{"Y"}), []*blob.Tensor{x}},
		{op("AveragedLossGradient", []string{"X", "dY"}, []string{"dX"}), []*blob.Tensor{x, one}},
		{op("Accuracy", []string{"X", "l"}, []string{"A"}, netdef.ArgInt("top_k", 2)), []*blob.Tensor{x, labels}},
	}
	for _, tc := range tests {
		t.Run(tc.def.GetType(), func(t *testing.T) { optest.AssertNoAllocs(t, tc.def, tc.inputs...) })
	}
}

// softmaxBenchInputs are a batch of 64 rows of 1000 logits and their labels.
func softmaxBenchInputs() (x, labels, p *blob.Tensor) {
	const n, d = 64, 1000
	xs := make([]float32, n*d)
	for i := range xs {
		xs[i] = float32(math.Sin(float64(i)))
	}
	ls := make([]int32, n)
	for i := range ls {
		ls[i] = int32(i * 7 % d)
	}
	return blob.MustFromSlice(xs, n, d), blob.MustFromSlice(ls), blob.MustFromSlice(refSoftmax32(xs, d), n, d)
}

func refSoftmax32(x []float32, d int) []float32 {
	x64 := make([]float64, len(x))
	for i, v := range x {
		x64[i] = float64(v)
	}
	p := optest.RefSoftmax(x64, d)
	out := make([]float32, len(p))
	for i, v := range p {
		out[i] = float32(v)
	}
	return out
}

func BenchmarkSoftmaxWithLoss(b *testing.B) {
	x, labels, _ := softmaxBenchInputs()
	optest.Benchmark(b, optest.Steady(b, op("SoftmaxWithLoss", []string{"X", "l"}, []string{"P", "L"}), x, labels))
}

func BenchmarkSoftmaxWithLossGradient(b *testing.B) {
	x, labels, p := softmaxBenchInputs()
	optest.Benchmark(b, optest.Steady(b, op("SoftmaxWithLossGradient", []string{"X", "l", "P", "dL"}, []string{"dX"}), x, labels, p, blob.Scalar[float32](1)))
}

func BenchmarkLabelCrossEntropy(b *testing.B) {
	_, labels, p := softmaxBenchInputs()
	optest.Benchmark(b, optest.Steady(b, op("LabelCrossEntropy", []string{"X", "l"}, []string{"Y"}), p, labels))
}

func BenchmarkSquaredL2Distance(b *testing.B) {
	x, _, p := softmaxBenchInputs()
	optest.Benchmark(b, optest.Steady(b, op("SquaredL2Distance", []string{"X", "Y"}, []string{"Z"}), x, p))
}
