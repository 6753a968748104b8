package loss

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// spatialCase is the PyTorch reference case of the spatial softmax tests:
// logits [2, 3, 1, 2], one pixel labelled −1 (ignored).
var (
	spatialX      = []float64{0.5, -1.0, 1.5, 0.25, -0.75, 2.0, 0.0, 1.0, -1.0, -2.0, 3.0, 0.5}
	spatialLabels = []int32{0, -1, 2, 1}
	spatialW      = []float64{2, 5, 0.5, 1}
)

// PyTorch 1.13 in float64: F.softmax(x, dim=1); F.cross_entropy(x, labels,
// ignore_index=-1) and its gradient (unweighted); the same with
// reduction='none' weighted by w over the labelled pixels, divided by their
// total weight, and its gradient.
var (
	torchSoftmax = []float64{0.2497011934862539, 0.040690303047394745, 0.67875821679822, 0.14202311267846238,
		0.07154058971552618, 0.8172865842741428, 0.0466126225779739, 0.6037488961486258, 0.01714782554552039,
		0.030058887569574023, 0.9362395518765058, 0.3661922162818002}
	torchLoss     = 1.652657036042304
	torchGrad     = []float64{-0.2500996021712487, 0, 0.22625273893274, 0, 0.02384686323850873, 0, 0.01553754085932463, 0.20124963204954194, 0.005715941848506796, -0.3233137041434753, -0.021253482707831412, 0.12206407209393341}
	torchLossW    = 1.8035769880786852
	torchGradW    = []float64{-0.42874217515071206, 0, 0.3878618381704114, 0, 0.040880336980300684, 0, 0.006658946082567698, 0.1724996846138931, 0.0024496893636457694, -0.2771260321229788, -0.009108635446213462, 0.10462634750908578}
	spatialShape  = []int{2, 3, 1, 2}
	spatialLShape = []int{2, 1, 2}
)

func floatTensor(dtype blob.DataType, v []float64, shape ...int) *blob.Tensor {
	if dtype == blob.Float64 {
		return blob.MustFromSlice(append([]float64(nil), v...), shape...)
	}
	return optest.F32(v, shape...)
}

func floatScalar(dtype blob.DataType, v float64) *blob.Tensor {
	if dtype == blob.Float64 {
		return blob.Scalar(v)
	}
	return blob.Scalar(float32(v))
}

func scaled(v []float64, s float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x * s
	}
	return out
}

// TestSpatialSoftmaxWithLossPyTorch compares the softmax, the loss and the
// logits' gradient with PyTorch's cross entropy (ignore_index=-1), with and
// without pixel weights, with scale and loss-gradient factors.
func TestSpatialSoftmaxWithLossPyTorch(t *testing.T) {
	for _, dtype := range []blob.DataType{blob.Float32, blob.Float64} {
		tol := map[blob.DataType]float64{blob.Float32: 1e-6, blob.Float64: 1e-14}[dtype]
		for _, weighted := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v weighted=%v", dtype, weighted), func(t *testing.T) {
				x := floatTensor(dtype, spatialX, spatialShape...)
				labels := i32(spatialLShape, spatialLabels...)
				in, inputs := []string{"X", "l"}, []*blob.Tensor{x, labels}
				wantLoss, wantGrad := torchLoss, torchGrad
				if weighted {
					in, inputs = append(in, "w"), append(inputs, floatTensor(dtype, spatialW, spatialLShape...))
					wantLoss, wantGrad = torchLossW, torchGradW
				}
				const scale, dloss = 0.5, 3.0
				def := op("SpatialSoftmaxWithLoss", in, []string{"P", "L"}, netdef.ArgFloat("scale", scale))
				out := optest.MustRunOp(t, def, inputs...)
				expectClose(t, "softmax", out[0], floatTensor(dtype, torchSoftmax, spatialShape...), tol)
				expectClose(t, "loss", out[1], floatScalar(dtype, scale*wantLoss), tol)

				gd, err := operators.GetGradientDefs(def, optest.DenseGradients(def))
				if err != nil {
					t.Fatal(err)
				}
				gin := append(append([]*blob.Tensor{}, inputs...), out[0], floatScalar(dtype, dloss))
				g := optest.MustRunOp(t, gd.Ops[0], gin...)
				expectClose(t, "dX", g[0], floatTensor(dtype, scaled(wantGrad, scale*dloss), spatialShape...), tol)
			})
		}
	}
}

// refSpatialLoss is scale·Σ w·(−log softmax[label])/Σ w over the pixels not
// labelled −1, the softmax taken over dimension 1 of x [n, d, hw].
func refSpatialLoss(x []float64, labels []int32, w []float64, n, d, hw int, scale float64) float64 {
	var sum, wsum float64
	for i := range n {
		for j := range hw {
			l := labels[i*hw+j]
			if l == -1 {
				continue
			}
			row := make([]float64, d)
			for c := range d {
				row[c] = x[(i*d+c)*hw+j]
			}
			wj := 1.0
			if w != nil {
				wj = w[i*hw+j]
			}
			sum -= wj * math.Log(optest.RefSoftmax(row, d)[l])
			wsum += wj
		}
	}
	if wsum == 0 {
		return 0
	}
	return scale * sum / wsum
}

// TestSpatialSoftmaxWithLossReference checks larger cases against a naive
// per-pixel reference, including all pixels ignored (loss and gradient 0).
func TestSpatialSoftmaxWithLossReference(t *testing.T) {
	const n, d, h, w = 3, 5, 4, 3
	x := make([]float64, n*d*h*w)
	for i := range x {
		x[i] = 3 * math.Sin(float64(i)*1.7)
	}
	labels := make([]int32, n*h*w)
	weights := make([]float64, n*h*w)
	for i := range labels {
		labels[i] = int32(i*3%(d+1)) - 1
		weights[i] = 0.25 + float64(i%4)
	}
	allIgnored := make([]int32, n*h*w)
	for i := range allIgnored {
		allIgnored[i] = -1
	}
	for _, c := range []struct {
		name   string
		labels []int32
		w      []float64
	}{{"unweighted", labels, nil}, {"weighted", labels, weights}, {"all ignored", allIgnored, weights}} {
		t.Run(c.name, func(t *testing.T) {
			in, inputs := []string{"X", "l"}, []*blob.Tensor{optest.F32(x, n, d, h, w), i32(dims(n, h, w), c.labels...)}
			if c.w != nil {
				in, inputs = append(in, "w"), append(inputs, optest.F32(c.w, n, h, w))
			}
			out := optest.MustRunOp(t, op("SpatialSoftmaxWithLoss", in, []string{"P", "L"}, netdef.ArgFloat("scale", 2)), inputs...)
			// The reference sees the logits rounded to float32, as the operator does.
			want := refSpatialLoss(inputs[0].AsFloat64s(), c.labels, c.w, n, d, h*w, 2)
			expectClose(t, "loss", out[1], blob.Scalar(float32(want)), 1e-6)
			if c.name == "all ignored" {
				g := optest.MustRunOp(t, op("SpatialSoftmaxWithLossGradient", append(in, "P", "dL"), []string{"dX"}), append(inputs, out[0], blob.Scalar[float32](1))...)
				expectClose(t, "dX", g[0], optest.F32(make([]float64, len(x)), n, d, h, w), 0)
			}
		})
	}
}

func TestSpatialSoftmaxWithLossNumericGradient(t *testing.T) {
	x := optest.F32([]float64{0.3, -1.2, 2.0, 0.7, 0.1, -0.4, 1.5, 0.2, -2.0, 0.9, 0.0, 0.5, 1.1, -0.3, 0.8, 0.6, -1.0, 0.4}, 1, 3, 2, 3)
	x64 := blob.MustFromSlice(x.AsFloat64s(), 1, 3, 2, 3)
	labels := i32(dims(1, 2, 3), 2, -1, 0, 1, 1, 0)
	w := optest.F32([]float64{0.5, 2, 1, 3, 0.25, 1}, 1, 2, 3)
	for _, c := range []struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
	}{
		{"unweighted", op("SpatialSoftmaxWithLoss", []string{"X", "l"}, []string{"P", "L"}), []*blob.Tensor{x, labels}},
		{"unweighted double scale", op("SpatialSoftmaxWithLoss", []string{"X", "l"}, []string{"P", "L"}, netdef.ArgFloat("scale", 2.5)), []*blob.Tensor{x64, labels}},
		{"weighted scale", op("SpatialSoftmaxWithLoss", []string{"X", "l", "w"}, []string{"P", "L"}, netdef.ArgFloat("scale", 0.5)), []*blob.Tensor{x, labels, w}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := optest.CheckGradient(c.def, c.inputs, 0, optest.GradientCheck{OutputsWithGrad: []int{1}}); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestSpatialSoftmaxWithLossGradientDefs(t *testing.T) {
	for _, weighted := range []bool{false, true} {
		in, gin := []string{"X", "l"}, []string{"X", "l", "P", "L_grad"}
		if weighted {
			in, gin = []string{"X", "l", "w"}, []string{"X", "l", "w", "P", "L_grad"}
		}
		def := op("SpatialSoftmaxWithLoss", in, []string{"P", "L"}, netdef.ArgFloat("scale", 2))
		gd, err := operators.GetGradientDefs(def, optest.DenseGradients(def))
		if err != nil {
			t.Fatal(err)
		}
		want := optest.GradOp("SpatialSoftmaxWithLossGradient", gin, []string{"X_grad"}, netdef.ArgFloat("scale", 2))
		if len(gd.Ops) != 1 || !proto.Equal(gd.Ops[0], want) {
			t.Errorf("weighted=%v: gradient ops %v, want %v", weighted, gd.Ops, want)
		}
		if gd.InputGrad[0] != operators.Dense("X_grad") || !gd.InputGrad[1].IsNone() {
			t.Errorf("weighted=%v: input gradients %+v", weighted, gd.InputGrad)
		}
	}
}

func TestSpatialSoftmaxWithLossErrors(t *testing.T) {
	x := optest.F32(make([]float64, 12), 2, 3, 1, 2)
	labels := i32(dims(2, 1, 2), 0, 1, 2, -1)
	p, dl := optest.F32(make([]float64, 12), 2, 3, 1, 2), blob.Scalar[float32](1)
	in, out := []string{"X", "l"}, []string{"P", "L"}
	for _, c := range []struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
		frag   string
	}{
		{"3-D logits", op("SpatialSoftmaxWithLoss", in, out), []*blob.Tensor{optest.F32(make([]float64, 6), 2, 3, 1), labels}, "4-D"},
		{"label shape", op("SpatialSoftmaxWithLoss", in, out), []*blob.Tensor{x, i32(dims(2, 2), 0, 1, 2, 0)}, "want [2, 1, 2]"},
		{"label type", op("SpatialSoftmaxWithLoss", in, out), []*blob.Tensor{x, x}, "INT32"},
		{"label range", op("SpatialSoftmaxWithLoss", in, out), []*blob.Tensor{x, i32(dims(2, 1, 2), 0, 3, 1, 1)}, "outside [0, 3)"},
		{"label -2", op("SpatialSoftmaxWithLoss", in, out), []*blob.Tensor{x, i32(dims(2, 1, 2), 0, -2, 1, 1)}, "outside [0, 3)"},
		{"weights size", op("SpatialSoftmaxWithLoss", []string{"X", "l", "w"}, out), []*blob.Tensor{x, labels, optest.F32([]float64{1, 2}, 2)}, "one per pixel"},
		{"order", op("SpatialSoftmaxWithLoss", in, out, netdef.ArgString("order", "NHWC")), []*blob.Tensor{x, labels}, "NCHW"},
		{"scale", op("SpatialSoftmaxWithLoss", in, out, netdef.ArgFloat("scale", -1)), []*blob.Tensor{x, labels}, "non-negative"},
		{"gradient softmax", op("SpatialSoftmaxWithLossGradient", []string{"X", "l", "P", "dL"}, []string{"dX"}), []*blob.Tensor{x, labels, dl, dl}, "softmax"},
		{"gradient dloss", op("SpatialSoftmaxWithLossGradient", []string{"X", "l", "P", "dL"}, []string{"dX"}), []*blob.Tensor{x, labels, p, p}, "one element"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := optest.RunOp(c.def, c.inputs...)
			if err == nil || !strings.Contains(err.Error(), c.frag) {
				t.Errorf("error %v, want one containing %q", err, c.frag)
			}
		})
	}
}

// spatialBenchInputs are n images of 21 classes at 64×64 pixels, some
// pixels ignored, with weights.
func spatialBenchInputs(n int) (x, labels, w, p *blob.Tensor) {
	const d, hw = 21, 64 * 64
	xs := make([]float32, n*d*hw)
	for i := range xs {
		xs[i] = float32(math.Sin(float64(i)))
	}
	ls := make([]int32, n*hw)
	ws := make([]float32, n*hw)
	for i := range ls {
		ls[i] = int32(i*7%(d+1)) - 1
		ws[i] = float32(1 + i%3)
	}
	return blob.MustFromSlice(xs, n, d, 64, 64), blob.MustFromSlice(ls, n, 64, 64), blob.MustFromSlice(ws, n, 64, 64),
		blob.MustFromSlice(make([]float32, n*d*hw), n, d, 64, 64)
}

func TestSpatialSoftmaxWithLossSteadyState(t *testing.T) {
	x, labels, w, p := spatialBenchInputs(1)
	optest.AssertNoAllocs(t, op("SpatialSoftmaxWithLoss", []string{"X", "l", "w"}, []string{"P", "L"}), x, labels, w)
	optest.AssertNoAllocs(t, op("SpatialSoftmaxWithLossGradient", []string{"X", "l", "w", "P", "dL"}, []string{"dX"}), x, labels, w, p, blob.Scalar[float32](1))
}

func BenchmarkSpatialSoftmaxWithLoss(b *testing.B) {
	x, labels, w, _ := spatialBenchInputs(16)
	optest.Benchmark(b, optest.Steady(b, op("SpatialSoftmaxWithLoss", []string{"X", "l", "w"}, []string{"P", "L"}), x, labels, w))
}

func BenchmarkSpatialSoftmaxWithLossGradient(b *testing.B) {
	x, labels, w, p := spatialBenchInputs(16)
	optest.Benchmark(b, optest.Steady(b, op("SpatialSoftmaxWithLossGradient", []string{"X", "l", "w", "P", "dL"}, []string{"dX"}), x, labels, w, p, blob.Scalar[float32](1)))
}
