package math

import (
	"errors"
	"math"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "Pow", MinInputs: 1, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		AllowInplace: operators.InplacePairs([2]int{0, 0}, [2]int{1, 0}),
		Args: append([]operators.ArgSpec{
			{Name: "exponent", Default: float32(0), Doc: "the exponent of the one-input form"},
		}, broadcastArgSpecs...),
		Doc: "Y = X^exponent elementwise (FLOAT or DOUBLE). The exponent is the argument, or input 1, " +
			"which broadcasts as in Add.",
	}, func(b *operators.Base) (operators.Operator, error) {
		if b.NumInputs() == 1 {
			return &unaryOp{Base: b, kind: uPow, a: float64(b.ArgFloat("exponent", 0))}, nil
		}
		if b.HasArg("exponent") {
			return nil, b.Errorf("the exponent is given both as an argument and as input 1 (%q)", b.InputName(1))
		}
		args, err := parseBroadcastArgs(b)
		if err != nil {
			return nil, err
		}
		return &binaryOp{Base: b, op: opPow, args: args, floatOnly: true}, nil
	})
	operators.MustRegisterGradient("Pow", powGradient)
}

// powGradient is Caffe2's: for the exponent argument e,
// dX = Scale(Mul(Pow(X, e-1), dY), e); for an exponent tensor A,
// dX = dY·A·X^(A-1) and dA = dY·Y·ln X (reduced like A when the broadcast
// argument is present). No forward arguments are copied.
func powGradient(g *operators.GradientContext) error {
	g.CopyArguments = false
	if a := g.Arg("exponent"); a != nil || g.NumInputs() == 1 {
		var e float32
		switch {
		case a == nil:
		case a.F != nil:
			e = a.GetF()
		default:
			e = float32(a.GetI())
		}
		pe := e - 1
		if g.I(0) == g.O(0) {
			if math.Abs(float64(e)) <= 1e-12 {
				return errors.New("the gradient of an in-place Pow needs a non-zero exponent")
			}
			pe = (e - 1) / e
		}
		g.Op("Pow", []string{g.I(0)}, []string{g.GI(0)}, netdef.ArgFloat("exponent", pe))
		g.Op("Mul", []string{g.GI(0), g.GO(0)}, []string{g.GI(0)})
		g.Op("Scale", []string{g.GI(0)}, []string{g.GI(0)}, netdef.ArgFloat("scale", e))
		return nil
	}
	if g.I(0) == g.O(0) || g.I(1) == g.O(0) {
		return errors.New("gradient computation cannot be carried out if Pow uses in-place computation")
	}
	bflag := g.HasArg("broadcast")
	bargs := func() []*netdef.Argument {
		if !bflag {
			return nil
		}
		return append([]*netdef.Argument{argOr(g, "broadcast", nil)}, reduceArgs(g)...)
	}
	pre := g.GI(1) + "_autogen_pre_red"
	g.Op("ConstantFill", []string{g.I(1)}, []string{g.GI(1)}, netdef.ArgFloat("value", 1))
	g.Op("Sub", []string{g.I(1), g.GI(1)}, []string{g.GI(1)})
	g.Op("Pow", []string{g.I(0), g.GI(1)}, []string{g.GI(0)}, bargs()...)
	g.Op("Mul", []string{g.GI(0), g.GO(0)}, []string{g.GI(0)})
	g.Op("Mul", []string{g.GI(0), g.I(1)}, []string{g.GI(0)}, bargs()...)
	g.Op("Log", []string{g.I(0)}, []string{pre})
	g.Op("Mul", []string{pre, g.O(0)}, []string{pre})
	if bflag {
		g.Op("Mul", []string{pre, g.GO(0)}, []string{pre})
		g.Op("SumReduceLike", []string{pre, g.I(1)}, []string{g.GI(1)}, reduceArgs(g)...)
	} else {
		g.Op("Mul", []string{pre, g.GO(0)}, []string{g.GI(1)})
	}
	return nil
}
