package math

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// unaryKind selects the function of a unary elementwise operator.
type unaryKind uint8

const (
	uNegative unaryKind = iota
	uExp
	uLog
	uSqrt
	uSqr
	uAbs
	uCeil
	uErf
	uScale
	uClip
	uPow
)

var inplace00 = operators.InplacePairs([2]int{0, 0})

func init() {
	for _, s := range []struct {
		typ     string
		kind    unaryKind
		inplace func(in, out int) bool
		doc     string
	}{
		{"Negative", uNegative, inplace00, "Y = -X elementwise (FLOAT, DOUBLE, INT32, INT64)."},
		{"Exp", uExp, inplace00, "Y = exp(X) elementwise."},
		{"Log", uLog, inplace00, "Y = ln(X) elementwise."},
		{"Sqrt", uSqrt, inplace00, "Y = √X elementwise."},
		{"Sqr", uSqr, inplace00, "Y = X² elementwise."},
		{"Abs", uAbs, nil, "Y = |X| elementwise."},
		{"Ceil", uCeil, inplace00, "Y = ⌈X⌉ elementwise."},
		{"Erf", uErf, inplace00, "Y = erf(X) elementwise."},
	} {
		kind := s.kind
		operators.MustRegisterCPU(operators.Schema{
			Type: s.typ, MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
			AllowInplace: s.inplace, Doc: s.doc + " FLOAT or DOUBLE unless noted.",
		}, func(b *operators.Base) (operators.Operator, error) {
			return &unaryOp{Base: b, kind: kind}, nil
		})
	}
	operators.MustRegisterCPU(operators.Schema{
		Type: "Scale", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		AllowInplace: inplace00,
		Args:         []operators.ArgSpec{{Name: "scale", Default: float32(1), Doc: "the factor"}},
		Doc:          "Y = scale·X elementwise (FLOAT or DOUBLE).",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &unaryOp{Base: b, kind: uScale, a: float64(b.ArgFloat("scale", 1))}, nil
	})
	operators.MustRegisterCPU(operators.Schema{
		Type: "Clip", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		AllowInplace: inplace00,
		Args:         clipArgSpecs,
		Doc:          "Y = min(max(X, min), max) elementwise (FLOAT or DOUBLE).",
	}, func(b *operators.Base) (operators.Operator, error) {
		o := &unaryOp{Base: b, kind: uClip}
		o.bounds = readClipBounds(b)
		return o, nil
	})

	operators.MustRegisterGradient("Negative", func(g *operators.GradientContext) error {
		g.Op("Negative", []string{g.GO(0)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterGradient("Exp", func(g *operators.GradientContext) error {
		g.Op("Mul", []string{g.O(0), g.GO(0)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterGradient("Log", func(g *operators.GradientContext) error {
		g.Op("Div", []string{g.GO(0), g.I(0)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterGradient("Sqrt", func(g *operators.GradientContext) error {
		g.Op("Scale", []string{g.GO(0)}, []string{g.GI(0)}, netdef.ArgFloat("scale", 0.5))
		g.Op("Div", []string{g.GI(0), g.O(0)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterGradient("Sqr", func(g *operators.GradientContext) error {
		g.Op("Scale", []string{g.GO(0)}, []string{g.GO(0)}, netdef.ArgFloat("scale", 2))
		g.Op("Mul", []string{g.GO(0), g.I(0)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterGradient("Abs", func(g *operators.GradientContext) error {
		g.Op("AbsGradient", []string{g.I(0), g.GO(0)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterGradientNotImplemented("Ceil")
	operators.MustRegisterGradient("Erf", func(g *operators.GradientContext) error {
		g.Op("ErfGradient", []string{g.I(0), g.GO(0)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterGradient("Scale", func(g *operators.GradientContext) error {
		g.Op("Scale", []string{g.GO(0)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterGradient("Clip", func(g *operators.GradientContext) error {
		g.Op("ClipGradient", []string{g.O(0), g.GO(0)}, []string{g.GI(0)})
		return nil
	})

	for _, s := range []struct {
		typ     string
		kind    unaryKind
		inplace func(in, out int) bool
		args    []operators.ArgSpec
		doc     string
	}{
		{"AbsGradient", uAbs, nil, nil, "AbsGradient(X, dY) -> dX = sign(X)·dY (0 where X is 0)."},
		{"ErfGradient", uErf, nil, nil, "ErfGradient(X, dY) -> dX = 2/√π·exp(-X²)·dY."},
		{"ClipGradient", uClip, operators.InplacePairs([2]int{1, 0}), clipArgSpecs, "ClipGradient(Y, dY) -> dX = dY where min < Y < max, else 0."},
	} {
		kind := s.kind
		operators.MustRegisterCPU(operators.Schema{
			Type: s.typ, MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
			AllowInplace: s.inplace, Args: s.args, Doc: s.doc + " FLOAT or DOUBLE; the inputs have one size.",
		}, func(b *operators.Base) (operators.Operator, error) {
			o := &unaryGradOp{Base: b, kind: kind}
			if kind == uClip {
				o.bounds = readClipBounds(b)
			}
			return o, nil
		})
	}
}

var clipArgSpecs = []operators.ArgSpec{
	{Name: "min", Doc: "the lower bound (default: the lowest finite value of the type)"},
	{Name: "max", Doc: "the upper bound (default: the largest finite value of the type)"},
}

// clipBounds are Clip's bounds; absent ones default to the type's limits.
type clipBounds struct {
	hasMin, hasMax bool
	min, max       float64
}

func readClipBounds(b *operators.Base) clipBounds {
	return clipBounds{
		hasMin: b.HasArg("min"), min: float64(b.ArgFloat("min", 0)),
		hasMax: b.HasArg("max"), max: float64(b.ArgFloat("max", 0)),
	}
}

// forType returns the bounds for elements of type dt.
func (c clipBounds) forType(dt blob.DataType) (lo, hi float64) {
	lim := math.MaxFloat64
	if dt == blob.Float32 {
		lim = math.MaxFloat32
	}
	lo, hi = -lim, lim
	if c.hasMin {
		lo = c.min
	}
	if c.hasMax {
		hi = c.max
	}
	return lo, hi
}

// unaryOp is a unary elementwise operator (also the one-input Pow).
type unaryOp struct {
	*operators.Base
	kind   unaryKind
	a      float64 // Scale's factor or Pow's exponent
	bounds clipBounds
}

func (o *unaryOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	dt := x.DataType()
	switch {
	case dt == blob.Float32 || dt == blob.Float64:
	case (dt == blob.Int32 || dt == blob.Int64) && o.kind == uNegative:
	default:
		return o.Errorf("input 0 (%q) has type %v, which %s does not support", o.InputName(0), dt, o.Type())
	}
	y := o.Output(0)
	if err := y.Init(dt, x.Dims()...); err != nil {
		return err
	}
	a, b := o.a, 0.0
	if o.kind == uClip {
		a, b = o.bounds.forType(dt)
	}
	switch dt {
	case blob.Float32:
		unaryKernel(o.kind, blob.Data[float32](y), blob.Data[float32](x), a, b)
	case blob.Float64:
		unaryKernel(o.kind, blob.Data[float64](y), blob.Data[float64](x), a, b)
	case blob.Int32:
		negate(blob.Data[int32](y), blob.Data[int32](x))
	case blob.Int64:
		negate(blob.Data[int64](y), blob.Data[int64](x))
	}
	return nil
}

func negate[T num](y, x []T) {
	x = x[:len(y)]
	for i, v := range x {
		y[i] = -v
	}
}

// unaryKernel computes y = f(x); a and b are Scale's factor, Pow's
// exponent or Clip's bounds. y may be x.
func unaryKernel[T float](kind unaryKind, y, x []T, a, b float64) {
	x = x[:len(y)]
	switch kind {
	case uNegative:
		negate(y, x)
	case uExp:
		for i, v := range x {
			y[i] = T(math.Exp(float64(v)))
		}
	case uLog:
		for i, v := range x {
			y[i] = T(math.Log(float64(v)))
		}
	case uSqrt:
		for i, v := range x {
			y[i] = T(math.Sqrt(float64(v)))
		}
	case uSqr:
		for i, v := range x {
			y[i] = v * v
		}
	case uAbs:
		for i, v := range x {
			y[i] = T(math.Abs(float64(v)))
		}
	case uCeil:
		for i, v := range x {
			y[i] = T(math.Ceil(float64(v)))
		}
	case uErf:
		for i, v := range x {
			y[i] = T(math.Erf(float64(v)))
		}
	case uScale:
		s := T(a)
		for i, v := range x {
			y[i] = s * v
		}
	case uClip:
		lo, hi := T(a), T(b)
		for i, v := range x {
			if v < lo {
				v = lo
			}
			if v > hi {
				v = hi
			}
			y[i] = v
		}
	case uPow:
		for i, v := range x {
			y[i] = T(math.Pow(float64(v), a))
		}
	}
}

// unaryGradOp is AbsGradient(X, dY), ErfGradient(X, dY) or
// ClipGradient(Y, dY).
type unaryGradOp struct {
	*operators.Base
	kind   unaryKind
	bounds clipBounds
}

func (o *unaryGradOp) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	dy, err := o.Input(1)
	if err != nil {
		return err
	}
	dt := x.DataType()
	if dy.DataType() != dt || dy.Size() != x.Size() {
		return o.Errorf("input 1 (%q) is %v, input 0 (%q) is %v: they must have one type and size", o.InputName(1), dy, o.InputName(0), x)
	}
	dx := o.Output(0)
	if err := dx.Init(dt, x.Dims()...); err != nil {
		return err
	}
	lo, hi := o.bounds.forType(dt)
	if dt == blob.Float32 {
		unaryGradKernel(o.kind, blob.Data[float32](dx), blob.Data[float32](x), blob.Data[float32](dy), lo, hi)
	} else {
		unaryGradKernel(o.kind, blob.Data[float64](dx), blob.Data[float64](x), blob.Data[float64](dy), lo, hi)
	}
	return nil
}

// unaryGradKernel computes dx from the forward input (output, for Clip) x
// and the output gradient g. dx may be g.
func unaryGradKernel[T float](kind unaryKind, dx, x, g []T, lo, hi float64) {
	x, g = x[:len(dx)], g[:len(dx)]
	switch kind {
	case uAbs:
		for i, v := range x {
			switch {
			case v > 0:
				dx[i] = g[i]
			case v < 0:
				dx[i] = -g[i]
			default:
				dx[i] = 0
			}
		}
	case uErf:
		const k = 2 / math.SqrtPi
		for i, v := range x {
			f := float64(v)
			dx[i] = T(k*math.Exp(-f*f)) * g[i]
		}
	case uClip:
		l, h := T(lo), T(hi)
		for i, v := range x {
			if v > l && v < h {
				dx[i] = g[i]
			} else {
				dx[i] = 0
			}
		}
	}
}
