package tensor

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "Expand", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Doc: "Expand(X, shape) -> Y: broadcasts X against the INT64 vector shape the NumPy way (aligned on the right, " +
			"each pair of dimensions equal or one of them 1); Y takes the larger of each pair.",
	}, func(b *operators.Base) (operators.Operator, error) { return &expandOp{Base: b}, nil })
	operators.MustRegisterCPU(operators.Schema{
		Type: "ExpandGradient", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Doc: "ExpandGradient(dY, X) -> dX: sums dY over the dimensions Expand broadcast X along.",
	}, func(b *operators.Base) (operators.Operator, error) { return &expandOp{Base: b, grad: true}, nil })
	operators.MustRegisterGradient("Expand", func(g *operators.GradientContext) error {
		g.Op("ExpandGradient", []string{g.GO(0), g.I(0)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterShapeFunc("Expand", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		x, s := in[0], in[1]
		if x.Unknown || s.Unknown || s.Rank() != 1 || s.Dims[0] < 0 {
			return nil, nil
		}
		dims, ok := operators.AnyDims(max(x.Rank(), s.Dims[0]))
		if !ok {
			return nil, nil
		}
		return []operators.TensorShape{operators.Shape(x.Type, dims...)}, nil
	})
	operators.MustRegisterShapeFunc("ExpandGradient", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		return []operators.TensorShape{in[1].WithType(in[0].Type)}, nil
	})

	operators.MustRegisterCPU(operators.Schema{
		Type: "NumpyTile", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Doc: "NumpyTile(X, repeats) -> Y: numpy.tile with an INT64 vector of one non-negative repeat count per dimension of X.",
	}, func(b *operators.Base) (operators.Operator, error) { return &numpyTileOp{Base: b}, nil })
	operators.MustRegisterShapeFunc("NumpyTile", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		if in[0].Unknown {
			return nil, nil
		}
		dims, _ := operators.AnyDims(in[0].Rank())
		return []operators.TensorShape{operators.Shape(in[0].Type, dims...)}, nil
	})
	operators.MustRegisterGradientNotImplemented("NumpyTile")
}

// int64Vector reads input i, an INT64 vector.
func int64Vector(b *operators.Base, i int) ([]int64, error) {
	t, err := b.InputOf(i, blob.Int64)
	if err != nil {
		return nil, err
	}
	if t.NumDims() != 1 {
		return nil, b.Errorf("input %d (%q) must be a vector, has shape %v", i, b.InputName(i), t.Dims())
	}
	return blob.Data[int64](t), nil
}

// expandOp is Expand, or ExpandGradient when grad is set.
type expandOp struct {
	*operators.Base
	grad          bool
	dims, st, pos []int
}

// strides sets o.st to the strides of a tensor of dims x aligned on the
// right within o.dims, 0 along the dimensions it is broadcast on.
func (o *expandOp) strides(x []int) {
	n := len(o.dims)
	o.st = append(o.st[:0], make([]int, n)...)
	s := 1
	for i := len(x) - 1; i >= 0; i-- {
		if x[i] != 1 {
			o.st[n-len(x)+i] = s
		}
		s *= x[i]
	}
	o.pos = append(o.pos[:0], make([]int, n)...)
}

// rows calls f for each row (last dimension) of a tensor of dims o.dims,
// in order, with its offset and the offset of its source row.
func (o *expandOp) rows(f func(off, src int)) {
	n := len(o.dims)
	if n == 0 {
		f(0, 0)
		return
	}
	inner := o.dims[n-1]
	total := 1
	for _, d := range o.dims {
		total *= d
	}
	clear(o.pos)
	src := 0
	for off := 0; off < total; off += inner {
		f(off, src)
		for k := n - 2; k >= 0; k-- {
			o.pos[k]++
			src += o.st[k]
			if o.pos[k] < o.dims[k] {
				break
			}
			src -= o.st[k] * o.dims[k]
			o.pos[k] = 0
		}
	}
}

func (o *expandOp) Run() error {
	if o.grad {
		return o.runGrad()
	}
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	shape, err := int64Vector(o.Base, 1)
	if err != nil {
		return err
	}
	xd := x.Dims()
	n := max(len(xd), len(shape))
	if _, ok := operators.AnyDims(n); !ok {
		return o.Errorf("shape (%q) has %d elements, too many dimensions", o.InputName(1), len(shape))
	}
	o.dims = append(o.dims[:0], make([]int, n)...)
	for i := 1; i <= n; i++ {
		dx, ds := 1, int64(1)
		if i <= len(xd) {
			dx = xd[len(xd)-i]
		}
		if i <= len(shape) {
			ds = shape[len(shape)-i]
		}
		if dx != 1 && ds != 1 && int64(dx) != ds {
			return o.Errorf("dimensions format invalid: X (%q) of shape %v does not broadcast to shape %v (%q)", o.InputName(0), xd, shape, o.InputName(1))
		}
		o.dims[n-i] = int(max(int64(dx), ds))
	}
	y := o.Output(0)
	if y == x {
		return o.Errorf("output %q is input 0: Expand cannot work in place", o.OutputName(0))
	}
	if err := y.Init(x.DataType(), o.dims...); err != nil {
		return o.Errorf("output %q of shape %v: %w", o.OutputName(0), o.dims, err)
	}
	if y.Size() == 0 {
		return nil
	}
	o.strides(xd)
	e := elemsOf(x.DataType())
	inner, step := 1, 0
	if n > 0 {
		inner, step = o.dims[n-1], o.st[n-1]
	}
	o.rows(func(off, src int) {
		if step == 1 {
			e.copyMatrix(y, off, inner, x, src, inner, 1, inner)
			return
		}
		e.copyMatrix(y, off, 1, x, src, 0, inner, 1)
	})
	return nil
}

func (o *expandOp) runGrad() error {
	dy, err := o.Input(0)
	if err != nil {
		return err
	}
	x, err := o.Input(1)
	if err != nil {
		return err
	}
	if arithOf(dy.DataType()) == nil {
		return o.Errorf("dY (%q) has type %v; ExpandGradient needs a numeric type", o.InputName(0), dy.DataType())
	}
	xd := x.Dims()
	o.dims = append(o.dims[:0], dy.Dims()...)
	if len(xd) > len(o.dims) {
		return o.Errorf("X (%q) of shape %v has more dimensions than dY (%q) of shape %v", o.InputName(1), xd, o.InputName(0), o.dims)
	}
	for i := 1; i <= len(xd); i++ {
		if d := xd[len(xd)-i]; d != 1 && d != o.dims[len(o.dims)-i] {
			return o.Errorf("X (%q) of shape %v does not broadcast to dY (%q) of shape %v", o.InputName(1), xd, o.InputName(0), o.dims)
		}
	}
	dx := o.Output(0)
	if dx == dy {
		return o.Errorf("output %q is input 0: ExpandGradient cannot work in place", o.OutputName(0))
	}
	if err := dx.Init(dy.DataType(), xd...); err != nil {
		return o.Errorf("output %q: %w", o.OutputName(0), err)
	}
	if dx.Size() == 0 {
		return nil
	}
	zeroTensor(dx)
	if dy.Size() == 0 {
		return nil
	}
	o.strides(xd)
	n := len(o.dims)
	inner, step := 1, 0
	if n > 0 {
		inner, step = o.dims[n-1], o.st[n-1]
	}
	o.rows(func(off, src int) { addRow(dx, src, step, dy, off, inner) })
	return nil
}

// addRow adds n consecutive elements of src from sOff into dst at dOff,
// dOff+step, … (step 0 sums them into one element); the type is one
// arithOf accepts.
func addRow(dst *blob.Tensor, dOff, step int, src *blob.Tensor, sOff, n int) {
	switch dst.DataType() {
	case blob.Float32:
		addStrided(blob.Data[float32](dst), dOff, step, blob.Data[float32](src)[sOff:sOff+n])
	case blob.Float64:
		addStrided(blob.Data[float64](dst), dOff, step, blob.Data[float64](src)[sOff:sOff+n])
	case blob.Int8:
		addStrided(blob.Data[int8](dst), dOff, step, blob.Data[int8](src)[sOff:sOff+n])
	case blob.Int16:
		addStrided(blob.Data[int16](dst), dOff, step, blob.Data[int16](src)[sOff:sOff+n])
	case blob.Int32:
		addStrided(blob.Data[int32](dst), dOff, step, blob.Data[int32](src)[sOff:sOff+n])
	case blob.Int64:
		addStrided(blob.Data[int64](dst), dOff, step, blob.Data[int64](src)[sOff:sOff+n])
	case blob.Uint8:
		addStrided(blob.Data[uint8](dst), dOff, step, blob.Data[uint8](src)[sOff:sOff+n])
	case blob.Uint16:
		addStrided(blob.Data[uint16](dst), dOff, step, blob.Data[uint16](src)[sOff:sOff+n])
	}
}

func addStrided[T blob.Number](d []T, off, step int, s []T) {
	for _, v := range s {
		d[off] += v
		off += step
	}
}

// numpyTileOp is NumpyTile.
type numpyTileOp struct {
	*operators.Base
	dims, cur []int
	buf       [2]*blob.Tensor
}

func (o *numpyTileOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	reps, err := int64Vector(o.Base, 1)
	if err != nil {
		return err
	}
	if len(reps) != x.NumDims() {
		return o.Errorf("repeats (%q) must have one element per dimension of input 0 (%q) of shape %v, has %d", o.InputName(1), o.InputName(0), x.Dims(), len(reps))
	}
	o.dims = append(o.dims[:0], x.Dims()...)
	for i, r := range reps {
		if r < 0 {
			return o.Errorf("repeats (%q) has a negative entry: %v", o.InputName(1), reps)
		}
		if r > 0 && int64(o.dims[i]) > (1<<62)/r {
			return o.Errorf("tiling input 0 (%q) of shape %v by %v is too large", o.InputName(0), x.Dims(), reps)
		}
		o.dims[i] *= int(r)
	}
	y := o.Output(0)
	if y == x {
		return o.Errorf("output %q is input 0: NumpyTile cannot work in place", o.OutputName(0))
	}
	if err := y.Init(x.DataType(), o.dims...); err != nil {
		return o.Errorf("output %q of shape %v: %w", o.OutputName(0), o.dims, err)
	}
	if y.Size() == 0 {
		return nil
	}
	// Tile one axis at a time, as numpy.tile does, through two buffers;
	// every intermediate is at most as large as Y.
	e := elemsOf(x.DataType())
	src := x
	o.cur = append(o.cur[:0], x.Dims()...)
	cur := o.cur
	for i, r := range reps {
		if r == 1 {
			continue
		}
		if o.buf[0] == nil {
			o.buf[0], o.buf[1] = new(blob.Tensor), new(blob.Tensor)
		}
		dst := o.buf[0]
		if src == o.buf[0] {
			dst = o.buf[1]
		}
		outer, inner := src.SizeToDim(i), src.SizeFromDim(i)
		cur[i] *= int(r)
		if err := dst.Init(x.DataType(), cur...); err != nil {
			return o.Errorf("scratch of shape %v: %w", cur, err)
		}
		e.tile(dst, src, outer, inner, int(r))
		src = dst
	}
	return y.CopyFrom(src)
}
