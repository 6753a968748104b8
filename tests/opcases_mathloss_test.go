package tests

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

//go:generate sh -c "cd testdata/mathloss && /usr/bin/python3 gen_golden.py"

// Conformance cases of the math, activation, loss and optimizer operators
// of issue 14 (items 5 and 6); TestMathLossGolden holds the same operators
// to the golden files of testdata/mathloss/gen_golden.py.
func init() { caseSets = append(caseSets, mathLossCases) }

func mathLossCases(s *sampler) []optest.Case {
	op := cgParse
	ab, af, ai, as := netdef.ArgBool, netdef.ArgFloat, netdef.ArgInt, netdef.ArgString
	ais, afs := netdef.ArgInts, netdef.ArgFloats
	g0 := []int{0}
	labels := optest.F32([]float64{1, 0, 0.25, 1, 0, 0.5, 0.75, 1, 0, 1, 0.5, 0}, 3, 4)
	binary := optest.F32([]float64{1, 0, 0, 1, 0, 1, 1, 1, 0, 1, 0, 0}, 3, 4)
	return []optest.Case{
		{Op: op("SigmoidCrossEntropyWithLogits(X, T) -> L"), Inputs: ts(s.in(-3, 3, 3, 4), labels), Grad: g0},
		{Name: "log-D trick", Op: op("SigmoidCrossEntropyWithLogits(X, T) -> L", ab("log_D_trick", true)), Inputs: ts(s.in(-3, 3, 3, 4), binary), Grad: g0},
		{Name: "unjoined", Op: op("SigmoidCrossEntropyWithLogits(X, T) -> L", ab("unjoined_lr_loss", true)), Inputs: ts(s.in(-3, 3, 3, 4), binary), Grad: g0},
		{Op: op("WeightedSigmoidCrossEntropyWithLogits(X, T, W) -> L"), Inputs: ts(s.in(-3, 3, 2, 3), s.in(0, 1, 2, 3), s.pos(2, 3)), Grad: g0},
		{Op: op("CosineEmbeddingCriterion(S, Y) -> L", af("margin", 0.1)), Inputs: ts(s.x(2, 3), blob.MustFromSlice([]int32{1, -1, -1, 1, -1, -1}, 2, 3)), Grad: g0},
		{Op: op("MarginRankingCriterion(X1, X2, Y) -> L"), Inputs: ts(s.x(2, 3), s.in(-0.95, 1.05, 2, 3), blob.MustFromSlice([]int32{1, -1, -1, 1, 1, -1}, 2, 3)), Grad: []int{0, 1}},
		{Op: op("PairWiseLoss(X, label, lengths) -> Y"), Inputs: ts(s.x(6, 1), optest.F32([]float64{1, 0, 2, 1, 1, 0}, 6, 1), i32(2, 4)), Grad: g0},
		{Name: "one session", Op: op("PairWiseLoss(X, label) -> Y"), Inputs: ts(s.x(5), f32(0, 1, 2, 1, 3)), Grad: g0},
		{Op: op("BernoulliJSD(X, T) -> L"), Inputs: ts(s.in(0.1, 0.9, 5), s.in(0.1, 0.9, 5)), Grad: g0},
		// Only the loss is differentiated: the probabilities are for the
		// gradient operator.
		{Op: op("SoftmaxFocalLoss(X, label, norm) -> loss, P", ai("num_classes", 3), af("gamma", 2)), Inputs: ts(s.in(-2, 2, 1, 6, 2, 2), blob.MustFromSlice([]int32{0, 2, -1, 1, 1, 0, 2, 2}, 1, 2, 2, 2), f32(2)), Grad: g0, GradOutputs: g0},

		// Pointwise operators (operators/math/pointwise.go).
		{Op: op("Elu(X) -> Y", af("alpha", 0.7)), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Name: "double", Op: op("Elu(X) -> Y"), Inputs: ts(f64(s.x(3, 4))), Grad: g0},
		{Op: op("Selu(X) -> Y"), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Op: op("Gelu(X) -> Y"), Inputs: ts(s.in(-2, 2, 3, 4)), Grad: g0},
		{Name: "fast", Op: op("Gelu(X) -> Y", ab("fast_gelu", true)), Inputs: ts(s.in(-2, 2, 3, 4)), Grad: g0},
		{Op: op("Swish(X) -> Y"), Inputs: ts(s.in(-2, 2, 3, 4)), Grad: g0},
		{Op: op("Softplus(X) -> Y"), Inputs: ts(s.in(-2, 2, 3, 4)), Grad: g0},
		{Op: op("Softsign(X) -> Y"), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Op: op("HardSigmoid(X) -> Y", af("alpha", 0.4)), Inputs: ts(s.in(-2, 2, 3, 4)), Grad: g0},
		{Op: op("ReluN(X) -> Y", af("n", 0.5)), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Op: op("ThresholdedRelu(X) -> Y", af("alpha", 0.3)), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Op: op("Logit(X) -> Y"), Inputs: ts(s.in(0.1, 0.9, 3, 4)), Grad: g0},
		{Op: op("Mish(X) -> Y"), Inputs: ts(s.in(-2, 2, 3, 4)), Grad: g0},
		{Op: op("Sign(X) -> Y"), Inputs: ts(s.x(3, 4))},
		{Op: op("Floor(X) -> Y"), Inputs: ts(s.in(-3, 3, 3, 4))},
		{Op: op("Log1p(X) -> Y"), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Op: op("Sin(X) -> Y"), Inputs: ts(s.in(-3, 3, 3, 4)), Grad: g0},
		{Op: op("Cos(X) -> Y"), Inputs: ts(s.in(-3, 3, 3, 4)), Grad: g0},
		{Op: op("Tan(X) -> Y"), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Op: op("Asin(X) -> Y"), Inputs: ts(s.in(-0.9, 0.9, 3, 4)), Grad: g0},
		{Op: op("Acos(X) -> Y"), Inputs: ts(s.in(-0.9, 0.9, 3, 4)), Grad: g0},
		{Op: op("Atan(X) -> Y"), Inputs: ts(s.in(-2, 2, 3, 4)), Grad: g0},
		{Op: op("Sinh(X) -> Y"), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Op: op("Cosh(X) -> Y"), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Op: op("Rsqrt(X) -> Y"), Inputs: ts(s.pos(3, 4)), Grad: g0},
		{Op: op("Cbrt(X) -> Y"), Inputs: ts(s.pos(3, 4)), Grad: g0},
		{Op: op("Reciprocal(X) -> Y"), Inputs: ts(s.pos(3, 4)), Grad: g0},

		// Row-wise products, statistics and transforms.
		{Op: op("DotProduct(X, Y) -> Z"), Inputs: ts(s.x(3, 4), s.x(3, 4)), Grad: []int{0, 1}},
		{Op: op("CosineSimilarity(X, Y) -> Z"), Inputs: ts(s.x(3, 4), s.x(3, 4)), Grad: []int{0, 1}},
		{Op: op("SquareRootDivide(X, scale) -> Y"), Inputs: ts(s.x(3, 2), f32(4, 0, 2.5)), Grad: g0},
		{Name: "int scale", Op: op("SquareRootDivide(X, scale) -> Y"), Inputs: ts(s.x(3, 2), i64(4, 0, 2))},
		{Op: op("Moments(X) -> mean, var", ais("axes", 0, 2)), Inputs: ts(s.x(2, 3, 2)), Grad: g0},
		{Name: "all axes", Op: op("Moments(X) -> mean, var", ai("keepdims", 0)), Inputs: ts(s.x(2, 3)), Grad: g0},
		{Op: op("BatchMoments(X) -> mu, var"), Inputs: ts(s.x(2, 3, 2, 2)), Grad: g0},
		{Name: "NHWC", Op: op("BatchMoments(X) -> mu, var", as("order", "NHWC")), Inputs: ts(s.x(2, 2, 3)), Grad: g0},
		{Op: op("LpNorm(X) -> Z"), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Name: "L1 average", Op: op("LpNorm(X) -> Z", ai("p", 1), ab("average", true)), Inputs: ts(s.x(3, 4)), Grad: g0},
		{Op: op("Mod(X) -> Y", ai("divisor", 3)), Inputs: ts(i32(-7, -3, 0, 4, 11))},
		{Name: "sign follows divisor", Op: op("Mod(X) -> Y", ai("divisor", -4), ab("sign_follow_divisor", true)), Inputs: ts(i64(-7, -3, 0, 4, 11))},
		// No numeric check: the gradient is negated on purpose
		// (TestMathLossGradientDefs checks its maker).
		{Op: op("NegateGradient(X) -> Y"), Inputs: ts(s.x(3, 4))},
		{Op: op("BatchBoxCox(X, l1, l2) -> Y"), Inputs: ts(s.pos(3, 2), f32(0, 0.5), f32(0.5, 0.25))},
		{Op: op("PiecewiseLinearTransform(X) -> Y", afs("bounds", 0, 0.5, 1, -1, 0, 1), afs("slopes", 1, 2, 0.5, -1), afs("intercepts", 0, -0.5, 1, 0)), Inputs: ts(s.x(4, 2))},
		{Name: "binary, functions as inputs", Op: op("PiecewiseLinearTransform(X, b, s, c) -> Y", ab("binary", true)), Inputs: ts(s.in(0, 1, 4, 2), f32(0, 0.5, 1), f32(1, 2), f32(0, -0.5))},
		{Op: op("SinusoidPositionEncoding(P) -> Y", ai("embedding_size", 4)), Inputs: ts(blob.MustFromSlice([]int64{0, 1, 5, 2, 9, 3}, 3, 2))},
		{Op: op("ClipTensorByScaling(X, val) -> Y", af("threshold", 0.5)), Inputs: ts(s.x(3, 4), f32(2))},
		{Name: "threshold input", Op: op("ClipTensorByScaling(X, val, t) -> Y", af("threshold", 0.5)), Inputs: ts(s.x(3, 4), f32(2), f32(3))},

		// Per-feature layers.
		{Op: op("ElementwiseLinear(X, a, b) -> Y"), Inputs: ts(s.x(3, 4), s.x(4), s.x(4)), Grad: []int{0, 1, 2}},
		{Name: "axis 2", Op: op("ElementwiseLinear(X, a, b) -> Y", ai("axis", 2)), Inputs: ts(s.x(2, 2, 3), s.x(3), s.x(3)), Grad: []int{0, 1, 2}},
		{Op: op("AffineChannel(X, scale, bias) -> Y"), Inputs: ts(s.x(2, 3, 2, 2), s.x(3), s.x(3)), Grad: g0},
		{Name: "learnable NHWC", Op: op("AffineChannel(X, scale, bias) -> Y", ab("is_learnable", true), as("order", "NHWC")), Inputs: ts(s.x(2, 2, 3), s.x(3), s.x(3)), Grad: []int{0, 1, 2}},
		{Op: op("RMSNorm(X, gamma, beta) -> Y, rrms"), Inputs: ts(s.x(3, 4), s.x(4), s.x(4)), Grad: []int{0, 1, 2}, GradOutputs: g0},
		{Name: "axis 2, eps", Op: op("RMSNorm(X, gamma, beta) -> Y, rrms", ai("axis", 2), af("eps", 0.1)), Inputs: ts(s.x(2, 2, 3), s.x(3), s.x(3)), Grad: []int{0, 1, 2}, GradOutputs: g0},
		{Op: op("Glu(X) -> Y"), Inputs: ts(s.x(3, 4))},
		{Name: "dim 1", Op: op("Glu(X) -> Y", ai("dim", 1)), Inputs: ts(s.x(2, 4, 3))},

		// Optimizers.
		{Op: op("Adadelta(p, h, d, g, lr) -> p, h, d", af("decay", 0.9)), Inputs: ts(s.x(4), s.pos(4), s.pos(4), s.x(4), f32(-0.1))},
		{Op: op("SparseAdadelta(p, h, d, I, g, lr) -> p, h, d"), Inputs: ts(s.x(4, 2), s.pos(4, 2), s.pos(4, 2), i64(2, 0), s.x(2, 2), f32(-0.1))},
		{Op: op("Wngrad(p, b, g, lr) -> p_out, b_out, eff, update"), Inputs: ts(s.x(4), f32(0.8), s.x(4), f32(-0.1))},
		{Op: op("SparseWngrad(p, b, I, g, lr) -> p, b"), Inputs: ts(s.x(4, 2), f32(0.8), i32(3, 1), s.x(2, 2), f32(-0.1))},
		{Op: op("Ftrl(w, nz, g) -> w, nz", af("alpha", 0.1)), Inputs: ts(s.x(4), s.pos(4, 2), s.x(4))},
		{Name: "alpha input", Op: op("Ftrl(w, nz, g, alpha) -> w_out, nz_out"), Inputs: ts(s.x(4), s.pos(4, 2), s.x(4), f32(0.2))},
		{Op: op("LearningRateAdaption(lr, g, e) -> lr"), Inputs: ts(f32(-0.1), s.x(4), s.x(4))},
		{Name: "plain", Op: op("LearningRateAdaption(lr, g, e) -> lr_out", ab("normalized_lr_adaption", false)), Inputs: ts(f32(-0.1), s.x(4), s.x(4))},
		{Op: op("YellowFin(p, m, lr, mu, curv, g_avg, g2_avg, mem, g, iter) -> p, m, lr, mu, curv, g_avg, g2_avg, mem", ai("curv_win_width", 3)),
			Inputs: ts(s.x(2, 3), s.x(2, 3), f32(0.1), f32(0.2), f32(0.5, 0.7, 0.6), s.x(2, 3), s.pos(2, 3), f32(1, 1.2, 0.1, 0.9, 0.8), s.x(2, 3), i64(5))},
	}
}

// goldenCase is one entry of testdata/mathloss/manifest.json.
type goldenCase struct {
	Name    string
	Op      string
	Args    []goldenArg
	Inputs  []string
	Outputs []string
	Tol     float64
	Inplace [][2]int // {input, output} pairs that are one blob
}

type goldenArg struct {
	Name   string
	I      *int64
	F      *float32
	S      *string
	Ints   []int64
	Floats []float32
}

func (a goldenArg) arg() *netdef.Argument {
	switch {
	case a.I != nil:
		return netdef.ArgInt(a.Name, *a.I)
	case a.F != nil:
		return netdef.ArgFloat(a.Name, *a.F)
	case a.S != nil:
		return netdef.ArgString(a.Name, *a.S)
	case a.Floats != nil:
		return netdef.ArgFloats(a.Name, a.Floats...)
	}
	return netdef.ArgInts(a.Name, a.Ints...)
}

// TestMathLossGolden runs every case of testdata/mathloss/manifest.json
// and compares its outputs with the reference's (PyTorch's, or Caffe2's
// formula written out in NumPy), element by element.
func TestMathLossGolden(t *testing.T) {
	dir := filepath.Join("testdata", "mathloss")
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			read := func(name string) *blob.Tensor {
				x, err := optest.ReadNPY(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				return x
			}
			var inputs []*blob.Tensor
			var in, out []string
			for k, f := range c.Inputs {
				inputs = append(inputs, read(f))
				in = append(in, "in"+string(rune('0'+k)))
			}
			for k := range c.Outputs {
				out = append(out, "out"+string(rune('0'+k)))
			}
			for _, p := range c.Inplace {
				out[p[1]] = in[p[0]]
			}
			var args []*netdef.Argument
			for _, a := range c.Args {
				args = append(args, a.arg())
			}
			got := optest.MustRunOp(t, netdef.NewOperator(c.Op, in, out, args...), inputs...)
			for k, f := range c.Outputs {
				want := read(f)
				// ReadNPY reads a 0-d array as [1].
				scalar := got[k].NumDims() == 0 && slices.Equal(want.Dims(), []int{1})
				if !scalar && !slices.Equal(got[k].Dims(), want.Dims()) {
					t.Fatalf("output %d has shape %v, want %v", k, got[k].Dims(), want.Dims())
				}
				optest.CheckClose(t, out[k], asFloat64s(t, got[k]), asFloat64s(t, want), c.Tol)
			}
		})
	}
}

// asFloat64s returns the elements of a numeric tensor as float64s.
func asFloat64s(t *testing.T, x *blob.Tensor) []float64 {
	t.Helper()
	var v []float64
	switch x.DataType() {
	case blob.Float32:
		for _, e := range blob.Data[float32](x) {
			v = append(v, float64(e))
		}
	case blob.Float64:
		v = append(v, blob.Data[float64](x)...)
	case blob.Int32:
		for _, e := range blob.Data[int32](x) {
			v = append(v, float64(e))
		}
	case blob.Int64:
		for _, e := range blob.Data[int64](x) {
			v = append(v, float64(e))
		}
	default:
		t.Fatalf("output of type %v", x.DataType())
	}
	return v
}

// TestMathLossGradientDefs holds the gradient makers of these operators to
// Caffe2's: the gradient operators' types and their inputs and outputs, in
// Caffe2's order.
func TestMathLossGradientDefs(t *testing.T) {
	pw := func(typ, in string) [2]string {
		return [2]string{typ + "(X) -> Y", typ + "Gradient(" + in + ") -> X_grad"}
	}
	cases := [][2]string{
		{"SigmoidCrossEntropyWithLogits(X, T) -> L", "SigmoidCrossEntropyWithLogitsGradient(L_grad, X, T) -> X_grad"},
		{"WeightedSigmoidCrossEntropyWithLogits(X, T, W) -> L", "WeightedSigmoidCrossEntropyWithLogitsGradient(L_grad, X, T, W) -> X_grad"},
		{"CosineEmbeddingCriterion(S, Y) -> L", "CosineEmbeddingCriterionGradient(S, Y, L_grad) -> S_grad"},
		{"MarginRankingCriterion(A, B, Y) -> L", "MarginRankingCriterionGradient(A, B, Y, L_grad) -> A_grad, B_grad"},
		{"PairWiseLoss(X, T) -> L", "PairWiseLossGradient(X, T, L_grad) -> X_grad"},
		{"PairWiseLoss(X, T, n) -> L", "PairWiseLossGradient(X, T, L_grad, n) -> X_grad"},
		{"BernoulliJSD(X, T) -> L", "BernoulliJSDGradient(L_grad, X, T) -> X_grad"},
		{"SoftmaxFocalLoss(X, T, n) -> L, P", "SoftmaxFocalLossGradient(X, T, n, P, L_grad) -> X_grad"},
		pw("Elu", "Y, Y_grad"), pw("Selu", "Y, Y_grad"), pw("Gelu", "Y_grad, X"), pw("Swish", "X, Y, Y_grad"),
		pw("Softplus", "Y, Y_grad"), pw("Softsign", "X, Y_grad"), pw("HardSigmoid", "Y, Y_grad"),
		pw("ReluN", "Y, Y_grad"), pw("ThresholdedRelu", "Y, Y_grad"), pw("Logit", "X, Y_grad"),
		pw("Mish", "X, Y, Y_grad"), pw("Log1p", "X, Y_grad"), pw("Sin", "X, Y_grad"), pw("Cos", "X, Y_grad"),
		pw("Tan", "X, Y_grad"), pw("Asin", "X, Y_grad"), pw("Acos", "X, Y_grad"), pw("Atan", "X, Y_grad"),
		pw("Sinh", "Y_grad, X"), pw("Cosh", "Y_grad, X"), pw("Rsqrt", "Y_grad, Y"), pw("Cbrt", "Y_grad, Y"),
		pw("Reciprocal", "Y, Y_grad"),
		{"DotProduct(X, Y) -> Z", "DotProductGradient(X, Y, Z_grad) -> X_grad, Y_grad"},
		{"CosineSimilarity(X, Y) -> Z", "CosineSimilarityGradient(X, Y, Z_grad) -> X_grad, Y_grad"},
		{"SquareRootDivide(X, s) -> Y", "SquareRootDivide(Y_grad, s) -> X_grad"},
		{"Moments(X) -> m, v", "MomentsGradient(m_grad, v_grad, X, m) -> X_grad"},
		{"BatchMoments(X) -> m, v", "BatchMomentsGradient(m_grad, v_grad, X) -> X_grad"},
		{"LpNorm(X) -> Z", "LpNormGradient(X, Z_grad) -> X_grad"},
		{"NegateGradient(X) -> Y", "Negative(Y_grad) -> X_grad"},
		{"ElementwiseLinear(X, a, b) -> Y", "ElementwiseLinearGradient(Y_grad, X, a) -> X_grad, a_grad, b_grad"},
		{"AffineChannel(X, s, b) -> Y", "AffineChannelGradient(Y_grad, s) -> X_grad"},
		{"RMSNorm(X, g, b) -> Y, r", "RMSNormGradient(Y_grad, X, g, r) -> X_grad, g_grad, b_grad"},
	}
	for _, c := range cases {
		fwd, want := cgParse(c[0]), cgParse(c[1])
		t.Run(fwd.GetType(), func(t *testing.T) {
			var gradOut []operators.Gradient
			for _, o := range fwd.Output {
				gradOut = append(gradOut, operators.Dense(o+"_grad"))
			}
			defs, err := operators.GetGradientDefs(fwd, gradOut)
			if err != nil {
				t.Fatal(err)
			}
			if len(defs.Ops) != 1 {
				t.Fatalf("%d gradient operators, want 1", len(defs.Ops))
			}
			g := defs.Ops[0]
			if g.GetType() != want.GetType() || !slices.Equal(g.Input, want.Input) || !slices.Equal(g.Output, want.Output) {
				t.Errorf("gradient %s(%v) -> %v, want %s", g.GetType(), g.Input, g.Output, c[1])
			}
		})
	}
	learnable := cgParse("AffineChannel(X, s, b) -> Y", netdef.ArgBool("is_learnable", true))
	defs, err := operators.GetGradientDefs(learnable, []operators.Gradient{operators.Dense("Y_grad")})
	if err != nil {
		t.Fatal(err)
	}
	if g := defs.Ops[0]; !slices.Equal(g.Input, []string{"Y_grad", "X", "s"}) || !slices.Equal(g.Output, []string{"X_grad", "s_grad", "b_grad"}) {
		t.Errorf("learnable AffineChannel: gradient %s(%v) -> %v, want AffineChannelGradient(Y_grad, X, s) -> X_grad, s_grad, b_grad", g.GetType(), g.Input, g.Output)
	}
	for _, typ := range []string{"Sign", "Mod", "Ftrl", "Adadelta", "SparseAdadelta", "Wngrad", "SparseWngrad", "LearningRateAdaption", "ClipTensorByScaling", "YellowFin"} {
		if _, err := operators.GetGradientDefs(cgParse(typ+"(X) -> Y"), []operators.Gradient{operators.Dense("Y_grad")}); err == nil {
			t.Errorf("%s: a gradient, want none (Caffe2: SHOULD_NOT_DO_GRADIENT)", typ)
		}
	}
}

// TestMathLossSteadyState runs each conformance case of these operators
// twice more and fails on allocations: operators keep their outputs and
// scratch between runs.
func TestMathLossSteadyState(t *testing.T) {
	for _, c := range mathLossCases(&sampler{rng: rand.New(rand.NewPCG(1, 2))}) {
		t.Run(c.Op.GetType()+"/"+c.Name, func(t *testing.T) {
			optest.AssertNoAllocs(t, c.Op, c.Inputs...)
		})
	}
}
