package logic

import (
	"cmp"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/math"
)

// binOp selects the function of a two-input operator.
type binOp uint8

const (
	opEQ binOp = iota
	opNE
	opLT
	opLE
	opGT
	opGE
	opAnd
	opOr
	opXor
)

// isLogical reports whether op takes BOOL inputs only.
func (op binOp) isLogical() bool { return op >= opAnd }

func init() {
	for _, s := range []struct {
		typ string
		op  binOp
		doc string
	}{
		{"EQ", opEQ, "C = (A == B) elementwise, with broadcasting; C is BOOL."},
		{"NE", opNE, "C = (A != B) elementwise, with broadcasting; C is BOOL."},
		{"LT", opLT, "C = (A < B) elementwise, with broadcasting; C is BOOL."},
		{"LE", opLE, "C = (A <= B) elementwise, with broadcasting; C is BOOL."},
		{"GT", opGT, "C = (A > B) elementwise, with broadcasting; C is BOOL."},
		{"GE", opGE, "C = (A >= B) elementwise, with broadcasting; C is BOOL."},
		{"And", opAnd, "C = A and B elementwise for BOOL tensors, with broadcasting."},
		{"Or", opOr, "C = A or B elementwise for BOOL tensors, with broadcasting."},
		{"Xor", opXor, "C = A xor B elementwise for BOOL tensors, with broadcasting."},
	} {
		op := s.op
		var inplace func(in, out int) bool
		if op.isLogical() {
			inplace = operators.InplacePairs([2]int{0, 0}, [2]int{1, 0})
		}
		operators.MustRegisterCPU(operators.Schema{
			Type: s.typ, MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
			AllowInplace: inplace, Args: math.BroadcastArgs(), Doc: s.doc,
		}, func(b *operators.Base) (operators.Operator, error) {
			bc, err := math.NewBroadcaster(b)
			if err != nil {
				return nil, err
			}
			return &binaryOp{Base: b, op: op, bc: bc}, nil
		})
		operators.MustRegisterShapeFunc(s.typ, boolBroadcastShape)
		operators.MustRegisterGradientForbidden(s.typ)
	}

	operators.MustRegisterCPU(operators.Schema{
		Type: "Not", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		AllowInplace: operators.InplacePairs([2]int{0, 0}),
		Doc:          "Y = not X elementwise for a BOOL tensor.",
	}, func(b *operators.Base) (operators.Operator, error) { return &notOp{b}, nil })
	operators.MustRegisterShapeFunc("Not", operators.SameAsInput0)
	operators.MustRegisterGradientForbidden("Not")
}

// boolBroadcastShape is the broadcast shape with a BOOL element type.
func boolBroadcastShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	out, err := math.BroadcastShape(b, in)
	if err != nil || len(out) == 0 || out[0].Unknown {
		return out, err
	}
	return []operators.TensorShape{out[0].WithType(blob.Bool)}, nil
}

// binaryOp is a comparison or a logical And, Or or Xor.
type binaryOp struct {
	*operators.Base
	op binOp
	bc *math.Broadcaster
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
	case dt == blob.Bool:
	case o.op.isLogical():
		return o.Errorf("input 0 (%q) has type %v; %s takes BOOL tensors", o.InputName(0), dt, o.Type())
	case dt == blob.Int32 || dt == blob.Int64 || dt == blob.Float32 || dt == blob.Float64:
	default:
		return o.Errorf("input 0 (%q) has type %v; %s takes BOOL, INT32, INT64, FLOAT or DOUBLE tensors", o.InputName(0), dt, o.Type())
	}
	if b.DataType() != dt {
		return o.Errorf("input 1 (%q) has type %v, input 0 (%q) has type %v: they must match", o.InputName(1), b.DataType(), o.InputName(0), dt)
	}
	dims, err := o.bc.Shape(o.Base, a, b)
	if err != nil {
		return err
	}
	c := o.Output(0)
	if c == a || c == b {
		// In place (logical operators only): the rows read each element
		// before writing it, and the output has the shape of the input it
		// overwrites (Shape checked that).
		if err := c.Reshape(dims...); err != nil {
			return o.Errorf("output %q: %v", o.OutputName(0), err)
		}
	} else if err := c.Init(blob.Bool, dims...); err != nil {
		return o.Errorf("output %q of shape %v: %w", o.OutputName(0), dims, err)
	}
	out := blob.Data[bool](c)
	switch dt {
	case blob.Bool:
		rowsBool(o.bc, o.op, out, blob.Data[bool](a), blob.Data[bool](b))
	case blob.Int32:
		rowsOrdered(o.bc, o.op, out, blob.Data[int32](a), blob.Data[int32](b))
	case blob.Int64:
		rowsOrdered(o.bc, o.op, out, blob.Data[int64](a), blob.Data[int64](b))
	case blob.Float32:
		rowsOrdered(o.bc, o.op, out, blob.Data[float32](a), blob.Data[float32](b))
	case blob.Float64:
		rowsOrdered(o.bc, o.op, out, blob.Data[float64](a), blob.Data[float64](b))
	}
	return nil
}

// rowsOrdered compares numbers row by row. The comparisons are Go's, which
// are IEEE's for floats: any comparison with NaN is false but NE.
func rowsOrdered[T cmp.Ordered](bc *math.Broadcaster, op binOp, c []bool, a, b []T) {
	bc.Rows(func(off, offA, offB, n, sa, sb int) {
		row := c[off : off+n]
		ia, ib := offA, offB
		switch op {
		case opEQ:
			for i := range row {
				row[i] = a[ia] == b[ib]
				ia, ib = ia+sa, ib+sb
			}
		case opNE:
			for i := range row {
				row[i] = a[ia] != b[ib]
				ia, ib = ia+sa, ib+sb
			}
		case opLT:
			for i := range row {
				row[i] = a[ia] < b[ib]
				ia, ib = ia+sa, ib+sb
			}
		case opLE:
			for i := range row {
				row[i] = a[ia] <= b[ib]
				ia, ib = ia+sa, ib+sb
			}
		case opGT:
			for i := range row {
				row[i] = a[ia] > b[ib]
				ia, ib = ia+sa, ib+sb
			}
		case opGE:
			for i := range row {
				row[i] = a[ia] >= b[ib]
				ia, ib = ia+sa, ib+sb
			}
		}
	})
}

// rowsBool applies op to booleans row by row; false < true, as in C++.
// c may be a or b (in place): each element is read before it is written.
func rowsBool(bc *math.Broadcaster, op binOp, c, a, b []bool) {
	bc.Rows(func(off, offA, offB, n, sa, sb int) {
		ia, ib := offA, offB
		for i := off; i < off+n; i++ {
			x, y := a[ia], b[ib]
			var r bool
			switch op {
			case opEQ:
				r = x == y
			case opNE, opXor:
				r = x != y
			case opLT:
				r = !x && y
			case opLE:
				r = !x || y
			case opGT:
				r = x && !y
			case opGE:
				r = x || !y
			case opAnd:
				r = x && y
			case opOr:
				r = x || y
			}
			c[i] = r
			ia, ib = ia+sa, ib+sb
		}
	})
}

// notOp is Not.
type notOp struct{ *operators.Base }

func (o *notOp) Run() error {
	x, err := o.InputOf(0, blob.Bool)
	if err != nil {
		return o.Errorf("%v: Not takes a BOOL tensor", err)
	}
	y := o.Output(0)
	if y != x {
		if err := y.Init(blob.Bool, x.Dims()...); err != nil {
			return o.Errorf("output %q: %w", o.OutputName(0), err)
		}
	}
	xs, ys := blob.Data[bool](x), blob.Data[bool](y)
	for i, v := range xs {
		ys[i] = !v
	}
	return nil
}
