package logic

import (
	"slices"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "Where", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		AllowInplace: operators.InplacePairs([2]int{1, 0}, [2]int{2, 0}),
		Args: []operators.ArgSpec{
			{Name: "broadcast_on_rows", Default: false, Doc: "C is a vector with one condition per row (dimension 0) of X and Y"},
		},
		Doc: "Where(C, X, Y) -> Z: Z = C ? X : Y elementwise. C is BOOL of X's shape (or, with broadcast_on_rows, " +
			"a vector of X's first dimension); X and Y have one shape and element type.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &whereOp{Base: b, rows: b.ArgBool("broadcast_on_rows", false)}, nil
	})
	operators.MustRegisterShapeFunc("Where", whereShape)
	operators.MustRegisterGradientForbidden("Where")
}

// whereShape: Z is like X; X and Y agree, and C agrees with X (or with its
// first dimension).
func whereShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	c, x, y := in[0], in[1], in[2]
	if !x.Agrees(y) {
		return nil, b.InputShapeError(in, "X and Y must have one shape")
	}
	if x.Unknown {
		x = y
	}
	if !c.Unknown && !x.Unknown {
		if b.ArgBool("broadcast_on_rows", false) {
			if c.Rank() != 1 || x.Rank() < 1 || !operators.DimsAgree(c.Dims[0], x.Dims[0]) {
				return nil, b.InputShapeError(in, "with broadcast_on_rows, C must be a vector as long as X's first dimension")
			}
		} else if !c.Agrees(x.WithType(c.Type)) {
			return nil, b.InputShapeError(in, "C must have X's shape")
		}
	}
	return []operators.TensorShape{x}, nil
}

// whereOp is Where.
type whereOp struct {
	*operators.Base
	rows bool
}

func (o *whereOp) Run() error {
	c, err := o.InputOf(0, blob.Bool)
	if err != nil {
		return err
	}
	x, err := o.Input(1)
	if err != nil {
		return err
	}
	y, err := o.Input(2)
	if err != nil {
		return err
	}
	if x.DataType() != y.DataType() {
		return o.Errorf("X (%q) has type %v, Y (%q) has type %v: they must match", o.InputName(1), x.DataType(), o.InputName(2), y.DataType())
	}
	if !slices.Equal(x.Dims(), y.Dims()) {
		return o.Errorf("X (%q) has shape %v, Y (%q) has shape %v: they must match", o.InputName(1), x.Dims(), o.InputName(2), y.Dims())
	}
	block := 1
	if o.rows {
		if c.NumDims() != 1 || x.NumDims() < 1 || c.Dim(0) != x.Dim(0) {
			return o.Errorf("with broadcast_on_rows, C (%q) must be a vector as long as the first dimension of X (%q); they have shapes %v and %v",
				o.InputName(0), o.InputName(1), c.Dims(), x.Dims())
		}
		block = x.SizeFromDim(1)
	} else if !slices.Equal(c.Dims(), x.Dims()) {
		return o.Errorf("C (%q) has shape %v, X (%q) has shape %v: they must match", o.InputName(0), c.Dims(), o.InputName(1), x.Dims())
	}
	z := o.Output(0)
	if z != x && z != y {
		if err := z.Init(x.DataType(), x.Dims()...); err != nil {
			return o.Errorf("output %q: %w", o.OutputName(0), err)
		}
	}
	if z.Size() == 0 {
		return nil
	}
	sel := selectOf(x.DataType())
	if sel == nil {
		return o.Errorf("X (%q) has type %v, which Where does not support", o.InputName(1), x.DataType())
	}
	sel(z, x, y, blob.Data[bool](c), block)
	return nil
}

// selectOf returns the selection kernel for dt, or nil.
func selectOf(dt blob.DataType) func(z, x, y *blob.Tensor, c []bool, block int) {
	switch dt {
	case blob.Float32:
		return selectBlocks[float32]
	case blob.Float64:
		return selectBlocks[float64]
	case blob.Float16:
		return selectBlocks[blob.Half]
	case blob.Int8:
		return selectBlocks[int8]
	case blob.Int16:
		return selectBlocks[int16]
	case blob.Int32:
		return selectBlocks[int32]
	case blob.Int64:
		return selectBlocks[int64]
	case blob.Uint8:
		return selectBlocks[uint8]
	case blob.Uint16:
		return selectBlocks[uint16]
	case blob.Bool:
		return selectBlocks[bool]
	case blob.String:
		return selectBlocks[string]
	}
	return nil
}

// selectBlocks copies block i of z from x where c[i], else from y.
func selectBlocks[T blob.Element](z, x, y *blob.Tensor, c []bool, block int) {
	zs, xs, ys := blob.Data[T](z), blob.Data[T](x), blob.Data[T](y)
	if block == 1 {
		for i, v := range c {
			if v {
				zs[i] = xs[i]
			} else {
				zs[i] = ys[i]
			}
		}
		return
	}
	for i, v := range c {
		src := ys
		if v {
			src = xs
		}
		copy(zs[i*block:(i+1)*block], src[i*block:(i+1)*block])
	}
}
