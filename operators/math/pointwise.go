package math

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// pwParams are a pointwise operator's arguments, in the order of its
// spec's args.
type pwParams [2]float64

// gradInputs names the inputs of a pointwise gradient operator, in
// Caffe2's order: the forward input X, the forward output Y and the output
// gradient dY.
type gradInputs uint8

const (
	gradYdY  gradInputs = iota // (Y, dY)
	gradXdY                    // (X, dY)
	gradDYX                    // (dY, X)
	gradDYY                    // (dY, Y)
	gradXYdY                   // (X, Y, dY)
)

// names are the input names of the gradient operator's schema doc.
func (g gradInputs) names() string {
	return [...]string{"Y, dY", "X, dY", "dY, X", "dY, Y", "X, Y, dY"}[g]
}

// count is the number of inputs.
func (g gradInputs) count() int {
	if g == gradXYdY {
		return 3
	}
	return 2
}

// noGrad says what Caffe2 registers for an operator without a gradient.
type noGrad uint8

const (
	hasGrad noGrad = iota
	gradNotImplemented
	gradForbidden
)

// pointwiseSpec describes a float elementwise operator y = f(x) and its
// gradient operator, which computes dX = df(x, y, dy) from the inputs
// named by in (the others are 0).
type pointwiseSpec struct {
	typ  string
	args []operators.ArgSpec // float arguments (a bool is 0 or 1), read into pwParams
	f    func(x float64, p *pwParams) float64
	in   gradInputs
	df   func(x, y, dy float64, p *pwParams) float64
	none noGrad
	doc  string
}

const (
	seluAlpha = 1.6732632423543772848170429916717
	seluScale = 1.0507009873554804934193349852946
)

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// softplus is log(1 + exp(x)) without overflow.
func softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

const geluK = 0.044715 // the cubic coefficient of the fast GELU

var pointwiseSpecs = []pointwiseSpec{
	{typ: "Elu", args: []operators.ArgSpec{{Name: "alpha", Default: float32(1), Doc: "the scale of the negative part"}},
		f: func(x float64, p *pwParams) float64 {
			if x > 0 {
				return x
			}
			return p[0] * math.Expm1(x)
		},
		in: gradYdY, df: func(_, y, dy float64, p *pwParams) float64 {
			if y > 0 {
				return dy
			}
			return dy * (y + p[0])
		},
		doc: "Y = X for X > 0, alpha·(exp(X) − 1) otherwise."},
	{typ: "Selu", args: []operators.ArgSpec{
		{Name: "alpha", Default: float32(seluAlpha), Doc: "the scale of the negative part before scale"},
		{Name: "scale", Default: float32(seluScale), Doc: "the scale of the output"}},
		f: func(x float64, p *pwParams) float64 {
			if x > 0 {
				return p[1] * x
			}
			return p[1] * p[0] * math.Expm1(x)
		},
		in: gradYdY, df: func(_, y, dy float64, p *pwParams) float64 {
			if y > 0 {
				return p[1] * dy
			}
			return dy * (y + p[0]*p[1])
		},
		doc: "Y = scale·X for X > 0, scale·alpha·(exp(X) − 1) otherwise."},
	{typ: "Gelu", args: []operators.ArgSpec{{Name: "fast_gelu", Default: false, Doc: "use the tanh approximation"}},
		f: func(x float64, p *pwParams) float64 {
			if p[0] != 0 {
				return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+geluK*x*x*x)))
			}
			return 0.5 * x * (1 + math.Erf(x/math.Sqrt2))
		},
		in: gradDYX, df: func(x, _, dy float64, p *pwParams) float64 {
			if p[0] != 0 {
				k := math.Sqrt(2 / math.Pi)
				t := math.Tanh(k * (x + geluK*x*x*x))
				return dy * (0.5*(1+t) + 0.5*x*(1-t*t)*k*(1+3*geluK*x*x))
			}
			return dy * (0.5*(1+math.Erf(x/math.Sqrt2)) + x*math.Exp(-x*x/2)/math.Sqrt(2*math.Pi))
		},
		doc: "Y = X·Φ(X), Φ the standard normal CDF (with fast_gelu, 0.5·X·(1 + tanh(√(2/π)·(X + 0.044715·X³))))."},
	{typ: "Swish", f: func(x float64, _ *pwParams) float64 { return x * sigmoid(x) },
		in: gradXYdY, df: func(x, y, dy float64, _ *pwParams) float64 { return dy * (y + (1-y)*sigmoid(x)) },
		doc: "Y = X·σ(X)."},
	{typ: "Softplus", f: func(x float64, _ *pwParams) float64 { return softplus(x) },
		in: gradYdY, df: func(_, y, dy float64, _ *pwParams) float64 { return dy * -math.Expm1(-y) },
		doc: "Y = log(1 + exp(X))."},
	{typ: "Softsign", f: func(x float64, _ *pwParams) float64 { return x / (1 + math.Abs(x)) },
		in: gradXdY, df: func(x, _, dy float64, _ *pwParams) float64 {
			d := 1 + math.Abs(x)
			return dy / (d * d)
		},
		doc: "Y = X/(1 + |X|)."},
	{typ: "HardSigmoid", args: []operators.ArgSpec{
		{Name: "alpha", Default: float32(0.2), Doc: "the slope"},
		{Name: "beta", Default: float32(0.5), Doc: "the offset"}},
		f:  func(x float64, p *pwParams) float64 { return max(0, min(1, p[0]*x+p[1])) },
		in: gradYdY, df: func(_, y, dy float64, p *pwParams) float64 {
			if y > 0 && y < 1 {
				return dy * p[0]
			}
			return 0
		},
		doc: "Y = max(0, min(1, alpha·X + beta))."},
	{typ: "ReluN", args: []operators.ArgSpec{{Name: "n", Default: float32(6), Doc: "the upper bound"}},
		f:  func(x float64, p *pwParams) float64 { return min(max(x, 0), p[0]) },
		in: gradYdY, df: func(_, y, dy float64, p *pwParams) float64 {
			if y > 0 && y < p[0] {
				return dy
			}
			return 0
		},
		doc: "Y = min(max(X, 0), n)."},
	{typ: "ThresholdedRelu", args: []operators.ArgSpec{{Name: "alpha", Default: float32(1), Doc: "the threshold"}},
		f: func(x float64, p *pwParams) float64 {
			if x > p[0] {
				return x
			}
			return 0
		},
		in: gradYdY, df: func(_, y, dy float64, _ *pwParams) float64 {
			if y > 0 {
				return dy
			}
			return 0
		},
		doc: "Y = X for X > alpha, 0 otherwise."},
	{typ: "Logit", args: []operators.ArgSpec{{Name: "eps", Default: float32(1e-6), Doc: "X is clamped to [eps, 1 − eps]"}},
		f: func(x float64, p *pwParams) float64 {
			x = min(max(x, p[0]), 1-p[0])
			return math.Log(x / (1 - x))
		},
		in: gradXdY, df: func(x, _, dy float64, p *pwParams) float64 {
			if x < p[0] || x > 1-p[0] {
				return 0
			}
			return dy / (x * (1 - x))
		},
		doc: "Y = log(X/(1 − X)) of X clamped to [eps, 1 − eps]."},
	{typ: "Mish", f: func(x float64, _ *pwParams) float64 { return x * math.Tanh(softplus(x)) },
		in: gradXYdY, df: func(x, _, dy float64, _ *pwParams) float64 {
			t := math.Tanh(softplus(x))
			return dy * (t + x*(1-t*t)*sigmoid(x))
		},
		doc: "Y = X·tanh(log(1 + exp(X)))."},
	{typ: "Sign", f: func(x float64, _ *pwParams) float64 {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return 0
	}, none: gradForbidden, doc: "Y = sign(X): −1, 0 or 1."},
	{typ: "Floor", f: func(x float64, _ *pwParams) float64 { return math.Floor(x) }, none: gradNotImplemented,
		doc: "Y = ⌊X⌋."},
	{typ: "Log1p", f: func(x float64, _ *pwParams) float64 { return math.Log1p(x) },
		in: gradXdY, df: func(x, _, dy float64, _ *pwParams) float64 { return dy / (1 + x) },
		doc: "Y = log(1 + X)."},
	{typ: "Sin", f: func(x float64, _ *pwParams) float64 { return math.Sin(x) },
		in: gradXdY, df: func(x, _, dy float64, _ *pwParams) float64 { return dy * math.Cos(x) },
		doc: "Y = sin(X)."},
	{typ: "Cos", f: func(x float64, _ *pwParams) float64 { return math.Cos(x) },
		in: gradXdY, df: func(x, _, dy float64, _ *pwParams) float64 { return -dy * math.Sin(x) },
		doc: "Y = cos(X)."},
	{typ: "Tan", f: func(x float64, _ *pwParams) float64 { return math.Tan(x) },
		in: gradXdY, df: func(x, _, dy float64, _ *pwParams) float64 {
			c := math.Cos(x)
			return dy / (c * c)
		},
		doc: "Y = tan(X)."},
	{typ: "Asin", f: func(x float64, _ *pwParams) float64 { return math.Asin(x) },
		in: gradXdY, df: func(x, _, dy float64, _ *pwParams) float64 { return dy / math.Sqrt(1-x*x) },
		doc: "Y = arcsin(X)."},
	{typ: "Acos", f: func(x float64, _ *pwParams) float64 { return math.Acos(x) },
		in: gradXdY, df: func(x, _, dy float64, _ *pwParams) float64 { return -dy / math.Sqrt(1-x*x) },
		doc: "Y = arccos(X)."},
	{typ: "Atan", f: func(x float64, _ *pwParams) float64 { return math.Atan(x) },
		in: gradXdY, df: func(x, _, dy float64, _ *pwParams) float64 { return dy / (1 + x*x) },
		doc: "Y = arctan(X)."},
	{typ: "Sinh", f: func(x float64, _ *pwParams) float64 { return math.Sinh(x) },
		in: gradDYX, df: func(x, _, dy float64, _ *pwParams) float64 { return dy * math.Cosh(x) },
		doc: "Y = sinh(X)."},
	{typ: "Cosh", f: func(x float64, _ *pwParams) float64 { return math.Cosh(x) },
		in: gradDYX, df: func(x, _, dy float64, _ *pwParams) float64 { return dy * math.Sinh(x) },
		doc: "Y = cosh(X)."},
	{typ: "Rsqrt", f: func(x float64, _ *pwParams) float64 { return 1 / math.Sqrt(x) },
		in: gradDYY, df: func(_, y, dy float64, _ *pwParams) float64 { return -0.5 * dy * y * y * y },
		doc: "Y = 1/√X."},
	{typ: "Cbrt", f: func(x float64, _ *pwParams) float64 { return math.Cbrt(x) },
		in: gradDYY, df: func(_, y, dy float64, _ *pwParams) float64 { return dy / (3 * y * y) },
		doc: "Y = ∛X."},
	{typ: "Reciprocal", f: func(x float64, _ *pwParams) float64 { return 1 / x },
		in: gradYdY, df: func(_, y, dy float64, _ *pwParams) float64 { return -dy * y * y },
		doc: "Y = 1/X."},
}

func init() {
	for i := range pointwiseSpecs {
		registerPointwise(&pointwiseSpecs[i])
	}
}

func registerPointwise(s *pointwiseSpec) {
	operators.MustRegisterCPU(operators.Schema{
		Type: s.typ, MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		AllowInplace: inplace00, Args: s.args,
		Doc: s.doc + " Elementwise, FLOAT or DOUBLE.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &pointwiseOp{Base: b, spec: s, p: readPwParams(b, s.args)}, nil
	})
	operators.MustRegisterShapeFunc(s.typ, operators.SameAsInput0)
	switch s.none {
	case gradForbidden:
		operators.MustRegisterGradientForbidden(s.typ)
		return
	case gradNotImplemented:
		operators.MustRegisterGradientNotImplemented(s.typ)
		return
	}
	grad := s.typ + "Gradient"
	n := s.in.count()
	operators.MustRegisterCPU(operators.Schema{
		Type: grad, MinInputs: n, MaxInputs: n, MinOutputs: 1, MaxOutputs: 1,
		AllowInplace: operators.InplaceAny, Args: s.args,
		Doc: grad + "(" + s.in.names() + ") → dX, the gradient of " + s.typ + ". FLOAT or DOUBLE; the inputs have one shape.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &pointwiseGradOp{Base: b, spec: s, p: readPwParams(b, s.args)}, nil
	})
	same := []int{0, 1, 2}[:n]
	operators.MustRegisterShapeFunc(grad, operators.SameShapes(same, 0))
	in := s.in
	operators.MustRegisterGradient(s.typ, func(g *operators.GradientContext) error {
		var inputs []string
		switch in {
		case gradYdY:
			inputs = []string{g.O(0), g.GO(0)}
		case gradXdY:
			inputs = []string{g.I(0), g.GO(0)}
		case gradDYX:
			inputs = []string{g.GO(0), g.I(0)}
		case gradDYY:
			inputs = []string{g.GO(0), g.O(0)}
		case gradXYdY:
			inputs = []string{g.I(0), g.O(0), g.GO(0)}
		}
		g.Op(grad, inputs, []string{g.GI(0)})
		return nil
	})
}

func readPwParams(b *operators.Base, args []operators.ArgSpec) (p pwParams) {
	for i, a := range args {
		switch d := a.Default.(type) {
		case float32:
			p[i] = float64(b.ArgFloat(a.Name, d))
		case bool:
			if b.ArgBool(a.Name, d) {
				p[i] = 1
			}
		}
	}
	return p
}

// pointwiseOp is a pointwiseSpec's operator.
type pointwiseOp struct {
	*operators.Base
	spec *pointwiseSpec
	p    pwParams
}

func (o *pointwiseOp) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	y := o.Output(0)
	if err := y.Init(x.DataType(), x.Dims()...); err != nil {
		return err
	}
	if x.DataType() == blob.Float32 {
		pointwise(o.spec.f, &o.p, blob.Data[float32](y), blob.Data[float32](x))
	} else {
		pointwise(o.spec.f, &o.p, blob.Data[float64](y), blob.Data[float64](x))
	}
	return nil
}

// pointwise computes y = f(x); y may be x.
func pointwise[T float](f func(float64, *pwParams) float64, p *pwParams, y, x []T) {
	x = x[:len(y)]
	for i, v := range x {
		y[i] = T(f(float64(v), p))
	}
}

// pointwiseGradOp is a pointwiseSpec's gradient operator.
type pointwiseGradOp struct {
	*operators.Base
	spec *pointwiseSpec
	p    pwParams
}

func (o *pointwiseGradOp) Run() error {
	first, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	dt := first.DataType()
	var x, y, dy *blob.Tensor
	for i := range o.NumInputs() {
		t, err := o.InputOf(i, dt)
		if err != nil {
			return err
		}
		if t.Size() != first.Size() {
			return o.Errorf("input %d (%q) has shape %v, input 0 (%q) %v: the inputs must have one size", i, o.InputName(i), t.Dims(), o.InputName(0), first.Dims())
		}
		switch role := o.role(i); role {
		case 'x':
			x = t
		case 'y':
			y = t
		default:
			dy = t
		}
	}
	dx := o.Output(0)
	if err := dx.Init(dt, dy.Dims()...); err != nil {
		return err
	}
	if dt == blob.Float32 {
		pointwiseGrad(o.spec.df, &o.p, blob.Data[float32](dx), dataOrNil[float32](x), dataOrNil[float32](y), blob.Data[float32](dy))
	} else {
		pointwiseGrad(o.spec.df, &o.p, blob.Data[float64](dx), dataOrNil[float64](x), dataOrNil[float64](y), blob.Data[float64](dy))
	}
	return nil
}

// role says which of X ('x'), Y ('y') or dY ('g') input i is.
func (o *pointwiseGradOp) role(i int) byte {
	return [...]string{"yg", "xg", "gx", "gy", "xyg"}[o.spec.in][i]
}

func dataOrNil[T float](t *blob.Tensor) []T {
	if t == nil {
		return nil
	}
	return blob.Data[T](t)
}

// pointwiseGrad computes dx = df(x, y, dy) elementwise; x or y is nil
// where the operator does not take it, and dx may be any input.
func pointwiseGrad[T float](df func(x, y, dy float64, p *pwParams) float64, p *pwParams, dx, x, y, dy []T) {
	dy = dy[:len(dx)]
	for i, g := range dy {
		var xv, yv float64
		if x != nil {
			xv = float64(x[i])
		}
		if y != nil {
			yv = float64(y[i])
		}
		dx[i] = T(df(xv, yv, float64(g), p))
	}
}
