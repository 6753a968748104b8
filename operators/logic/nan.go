package logic

import (
	"fmt"
	"math"
	"strings"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// nanCheckShown is how many positions of NaN or infinity NanCheck's error
// lists.
const nanCheckShown = 10

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "IsNaN", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Doc: "Y[i] = 1 where X[i] is NaN, else 0; X is FLOAT or DOUBLE, Y is UINT8 of X's shape.",
	}, func(b *operators.Base) (operators.Operator, error) { return &isNaNOp{b}, nil })
	operators.MustRegisterShapeFunc("IsNaN", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		if in[0].Unknown {
			return nil, nil
		}
		return []operators.TensorShape{in[0].WithType(blob.Uint8)}, nil
	})
	operators.MustRegisterGradientForbidden("IsNaN")

	operators.MustRegisterCPU(operators.Schema{
		Type: "NanCheck", MinInputs: 1, MaxInputs: operators.Unbounded, MinOutputs: 1, MaxOutputs: 1,
		AllowInplace: operators.InplacePairs([2]int{0, 0}),
		Doc: "Copies input 0 to the output, failing when it holds NaN or an infinity; the other inputs " +
			"only appear in the error. Its gradient is NanCheck of the output gradient.",
	}, func(b *operators.Base) (operators.Operator, error) { return &nanCheckOp{Base: b}, nil })
	operators.MustRegisterShapeFunc("NanCheck", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		return in[:1], nil
	})
	operators.MustRegisterGradient("NanCheck", func(g *operators.GradientContext) error {
		g.Op("NanCheck", []string{g.GO(0)}, []string{g.GI(0)})
		return nil
	})

	operators.MustRegisterCPU(operators.Schema{
		Type: "ReplaceNaN", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		AllowInplace: operators.InplacePairs([2]int{0, 0}),
		Args:         []operators.ArgSpec{{Name: "value", Default: 0.0, Doc: "the value that replaces NaN"}},
		Doc:          "Y = X with every NaN replaced by value; X is FLOAT or DOUBLE.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &replaceNaNOp{Base: b, value: b.ArgFloat("value", 0)}, nil
	})
	operators.MustRegisterShapeFunc("ReplaceNaN", operators.SameAsInput0)
	operators.MustRegisterGradientForbidden("ReplaceNaN")
}

// isNaNOp is IsNaN.
type isNaNOp struct{ *operators.Base }

func (o *isNaNOp) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	y := o.Output(0)
	if err := y.Init(blob.Uint8, x.Dims()...); err != nil {
		return o.Errorf("output %q: %w", o.OutputName(0), err)
	}
	ys := blob.Data[uint8](y)
	if x.DataType() == blob.Float32 {
		for i, v := range blob.Data[float32](x) {
			ys[i] = b2u(v != v)
		}
	} else {
		for i, v := range blob.Data[float64](x) {
			ys[i] = b2u(v != v)
		}
	}
	return nil
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// nanCheckOp is NanCheck.
type nanCheckOp struct{ *operators.Base }

func (o *nanCheckOp) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	var bad []int
	if x.DataType() == blob.Float32 {
		bad = nonFinite(blob.Data[float32](x))
	} else {
		bad = nonFinite(blob.Data[float64](x))
	}
	if len(bad) > 0 {
		var sb strings.Builder
		for i, k := range bad {
			if i == nanCheckShown {
				sb.WriteString(" …")
				break
			}
			fmt.Fprintf(&sb, " %d", k)
		}
		return o.Errorf("tensor contained NaN or inf: input 0 (%q) of shape %v at flat positions%s", o.InputName(0), x.Dims(), sb.String())
	}
	y := o.Output(0)
	if y == x {
		return nil
	}
	if err := y.Init(x.DataType(), x.Dims()...); err != nil {
		return o.Errorf("output %q: %w", o.OutputName(0), err)
	}
	return y.CopyFrom(x)
}

// nonFinite returns the positions of NaN and infinities in v (at most one
// more than nanCheckShown).
func nonFinite[T float32 | float64](v []T) []int {
	var bad []int
	for i, x := range v {
		if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
			bad = append(bad, i)
			if len(bad) > nanCheckShown {
				break
			}
		}
	}
	return bad
}

// replaceNaNOp is ReplaceNaN.
type replaceNaNOp struct {
	*operators.Base
	value float32
}

func (o *replaceNaNOp) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	y := o.Output(0)
	if y != x {
		if err := y.Init(x.DataType(), x.Dims()...); err != nil {
			return o.Errorf("output %q: %w", o.OutputName(0), err)
		}
	}
	if x.DataType() == blob.Float32 {
		replaceNaN(blob.Data[float32](y), blob.Data[float32](x), o.value)
	} else {
		replaceNaN(blob.Data[float64](y), blob.Data[float64](x), float64(o.value))
	}
	return nil
}

func replaceNaN[T float32 | float64](y, x []T, value T) {
	y = y[:len(x)]
	for i, v := range x {
		if v != v {
			y[i] = value
		} else {
			y[i] = v
		}
	}
}
