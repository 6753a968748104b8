package math

import (
	"errors"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

var broadcastArgSpecs = []operators.ArgSpec{
	{Name: "broadcast", Default: 0, Doc: "1 selects Caffe2's legacy broadcast of B over A; otherwise shapes broadcast the NumPy way"},
	{Name: "axis", Default: -1, Doc: "with broadcast=1, the dimension of A where B's shape starts (-1: B is aligned with A's last dimensions)"},
	{Name: "axis_str", Default: "", Doc: "with broadcast=1, the axis named by a letter of order"},
	{Name: "order", Default: "NCHW", Doc: "the layout that axis_str refers to"},
}

func init() {
	for _, s := range []struct {
		typ     string
		op      binOp
		inplace func(in, out int) bool
		doc     string
	}{
		{"Add", opAdd, operators.InplacePairs([2]int{0, 0}, [2]int{1, 0}), "C = A + B elementwise, with broadcasting."},
		{"Sub", opSub, operators.InplacePairs([2]int{0, 0}, [2]int{1, 0}), "C = A - B elementwise, with broadcasting."},
		{"Mul", opMul, operators.InplacePairs([2]int{0, 0}, [2]int{1, 0}), "C = A * B elementwise, with broadcasting."},
		{"Div", opDiv, operators.InplacePairs([2]int{0, 0}), "C = A / B elementwise, with broadcasting; an integer division by zero is an error."},
	} {
		op := s.op
		operators.MustRegisterCPU(operators.Schema{
			Type: s.typ, MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
			AllowInplace: s.inplace, Args: broadcastArgSpecs, Doc: s.doc,
		}, func(b *operators.Base) (operators.Operator, error) {
			args, err := parseBroadcastArgs(b)
			if err != nil {
				return nil, err
			}
			return &binaryOp{Base: b, op: op, args: args}, nil
		})
	}
	operators.MustRegisterGradient("Add", addGradient)
	operators.MustRegisterGradient("Sub", subGradient)
	operators.MustRegisterGradient("Mul", mulGradient)
	operators.MustRegisterGradient("Div", divGradient)

	operators.MustRegisterCPU(operators.Schema{
		Type: "DivGradient", MinInputs: 3, MaxInputs: 3, MinOutputs: 2, MaxOutputs: 2,
		AllowInplace: operators.InplacePairs([2]int{0, 0}),
		Doc:          "DivGradient(B, C, dC) -> (dA, dB) for C = A / B without broadcasting: dA = dC / B, dB = -dC * C / B.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &divGradOp{Base: b}, nil
	})
}

// binaryOp is Add, Sub, Mul, Div or the two-input Pow.
type binaryOp struct {
	*operators.Base
	op        binOp
	args      broadcastArgs
	floatOnly bool
	p         plan
}

func (o *binaryOp) Run() error {
	a, err := o.Input(0)
	if err != nil {
		return err
	}
	b, err := o.Input(1)
	if err != nil {
		return err
	}
	dt := a.DataType()
	switch {
	case dt == blob.Float32 || dt == blob.Float64:
	case (dt == blob.Int32 || dt == blob.Int64) && !o.floatOnly:
	default:
		return o.Errorf("input 0 (%q) has type %v, which %s does not support", o.InputName(0), dt, o.Type())
	}
	if b.DataType() != dt {
		return o.Errorf("input 1 (%q) has type %v, input 0 (%q) has type %v: they must match", o.InputName(1), b.DataType(), o.InputName(0), dt)
	}
	out, err := binaryShapes(o.Base, o.args, &o.p, a.Dims(), b.Dims(), b.Size())
	if err != nil {
		return err
	}
	if o.op == opDiv && ((dt == blob.Int32 && hasZero(blob.Data[int32](b))) || (dt == blob.Int64 && hasZero(blob.Data[int64](b)))) {
		return o.Errorf("integer division by zero: input 1 (%q) holds a zero", o.InputName(1))
	}
	c := o.Output(0)
	if err := c.Init(dt, out...); err != nil {
		return err
	}
	switch dt {
	case blob.Float32:
		binaryKernel(o.op, &o.p, blob.Data[float32](c), blob.Data[float32](a), blob.Data[float32](b))
	case blob.Float64:
		binaryKernel(o.op, &o.p, blob.Data[float64](c), blob.Data[float64](a), blob.Data[float64](b))
	case blob.Int32:
		binaryKernel(o.op, &o.p, blob.Data[int32](c), blob.Data[int32](a), blob.Data[int32](b))
	case blob.Int64:
		binaryKernel(o.op, &o.p, blob.Data[int64](c), blob.Data[int64](a), blob.Data[int64](b))
	}
	return nil
}

// divGradOp is DivGradient(B, C, dC) -> (dA, dB).
type divGradOp struct{ *operators.Base }

func (o *divGradOp) Run() error {
	y, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	z, err := o.Input(1)
	if err != nil {
		return err
	}
	dz, err := o.Input(2)
	if err != nil {
		return err
	}
	dt := y.DataType()
	for i, t := range [2]*blob.Tensor{z, dz} {
		if t.DataType() != dt || !equalDims(t.Dims(), y.Dims()) {
			return o.Errorf("input %d (%q) is %v, input 0 (%q) is %v: DivGradient needs equal types and shapes (no broadcasting)", i+1, o.InputName(i+1), t, o.InputName(0), y)
		}
	}
	dx, dy := o.Output(0), o.Output(1)
	if err := dx.Init(dt, y.Dims()...); err != nil {
		return err
	}
	if err := dy.Init(dt, y.Dims()...); err != nil {
		return err
	}
	if dt == blob.Float32 {
		divGradKernel(blob.Data[float32](dx), blob.Data[float32](dy), blob.Data[float32](y), blob.Data[float32](z), blob.Data[float32](dz))
	} else {
		divGradKernel(blob.Data[float64](dx), blob.Data[float64](dy), blob.Data[float64](y), blob.Data[float64](z), blob.Data[float64](dz))
	}
	return nil
}

func divGradKernel[T float](dx, dy, y, z, dz []T) {
	n := len(dx)
	dy, y, z, dz = dy[:n], y[:n], z[:n], dz[:n]
	for i := range dx {
		yv, zv, g := y[i], z[i], dz[i]
		dx[i] = g / yv
		dy[i] = -g * zv / yv
	}
}

// argOr returns a copy of the forward operator's argument, or def when it
// has none.
func argOr(g *operators.GradientContext, name string, def *netdef.Argument) *netdef.Argument {
	if a := g.Arg(name); a != nil {
		return proto.Clone(a).(*netdef.Argument)
	}
	return def
}

// reduceArgs returns the axis, axis_str and order arguments that Caffe2's
// makers give SumReduceLike: the forward operator's, or their defaults.
func reduceArgs(g *operators.GradientContext) []*netdef.Argument {
	return []*netdef.Argument{
		argOr(g, "axis", netdef.ArgInt("axis", -1)),
		argOr(g, "axis_str", netdef.ArgString("axis_str", "")),
		argOr(g, "order", netdef.ArgString("order", "NCHW")),
	}
}

func named(op *netdef.OperatorDef, name string) { op.Name = proto.String(name) }

// addGradient: without the broadcast argument both gradients are dC; with
// it, dB = SumReduceLike(dC, B) (the forward arguments copied).
func addGradient(g *operators.GradientContext) error {
	g.SetDense(0, g.GO(0))
	if !g.HasArg("broadcast") {
		g.SetDense(1, g.GO(0))
		return nil
	}
	g.Op("SumReduceLike", []string{g.GO(0), g.I(1)}, []string{g.GI(1)})
	return nil
}

// subGradient: dA = dC; dB = Negative(dC), reduced by SumReduceLike when
// the broadcast argument is present. No forward arguments are copied.
func subGradient(g *operators.GradientContext) error {
	g.CopyArguments = false
	g.SetDense(0, g.GO(0))
	if !g.HasArg("broadcast") {
		g.Op("Negative", []string{g.GO(0)}, []string{g.GI(1)})
		return nil
	}
	pre := g.GI(1) + "_autogen_pre_red"
	g.Op("Negative", []string{g.GO(0)}, []string{pre})
	g.Op("SumReduceLike", []string{pre, g.I(1)}, []string{g.GI(1)}, reduceArgs(g)...)
	return nil
}

// mulGradient: dA = Mul(dC, B), dB = Mul(dC, A), with Caffe2's three named
// operators (the last a SumReduceLike) when the broadcast argument is
// present. No forward arguments are copied; an in-place Mul is an error.
func mulGradient(g *operators.GradientContext) error {
	if g.I(0) == g.O(0) || g.I(1) == g.O(0) {
		return errors.New("gradient computation cannot be carried out if Mul uses in-place computation")
	}
	g.CopyArguments = false
	if !g.HasArg("broadcast") {
		g.Op("Mul", []string{g.GO(0), g.I(1)}, []string{g.GI(0)})
		g.Op("Mul", []string{g.GO(0), g.I(0)}, []string{g.GI(1)})
		return nil
	}
	red := reduceArgs(g)
	bcast := append([]*netdef.Argument{argOr(g, "broadcast", nil)}, reduceArgs(g)...)
	pre := g.GI(1) + "_autogen_pre_red"
	named(g.Op("Mul", []string{g.GO(0), g.I(1)}, []string{g.GI(0)}, bcast...), "mul_grad_1st_op")
	named(g.Op("Mul", []string{g.GO(0), g.I(0)}, []string{pre}), "mul_gradient_2nd_op")
	named(g.Op("SumReduceLike", []string{pre, g.I(1)}, []string{g.GI(1)}, red...), "mul_with_broadcast_grad_3")
	return nil
}

// divGradient: DivGradient(B, C, dC) -> (dA, dB); Caffe2 has no gradient
// for a Div with the broadcast argument.
func divGradient(g *operators.GradientContext) error {
	if g.HasArg("broadcast") {
		return errors.New("gradient not ready yet for Div with broadcasting")
	}
	g.Op("DivGradient", []string{g.I(1), g.O(0), g.GO(0)}, []string{g.GI(0), g.GI(1)})
	return nil
}
