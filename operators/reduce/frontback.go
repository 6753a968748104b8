package reduce

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/internal/vec"
)

func init() {
	for _, side := range []struct {
		name  string
		front bool
	}{{"Front", true}, {"Back", false}} {
		for _, k := range []struct {
			name string
			r    reducer
		}{{"Sum", sumR}, {"Mean", meanR}, {"Max", maxR}} {
			typ := "Reduce" + side.name + k.name
			gradType := typ + "Gradient"
			which, lengthsOf := "first", "D2·…·Dn"
			if !side.front {
				which, lengthsOf = "last", "D1·…·D(n−1)"
			}
			args := []operators.ArgSpec{{Name: "num_reduce_dim", Default: 1, Doc: "number of " + which + " dimensions to reduce"}}
			operators.MustRegisterCPU(operators.Schema{
				Type:      typ,
				MinInputs: 1, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
				Args: args,
				Doc: "Reduces the " + which + " num_reduce_dim dimensions of X by " + k.name + ". " +
					"The optional int32 lengths input (" + lengthsOf + " entries, num_reduce_dim 1) limits each " +
					"reduction to its first lengths[i] elements.",
			}, newFrontBack(side.front, k.r))
			minIn, gradIn := 2, "(dY, X[, lengths])"
			if k.r == maxR {
				minIn, gradIn = 3, "(dY, X, Y[, lengths])"
			}
			operators.MustRegisterCPU(operators.Schema{
				Type:      gradType,
				MinInputs: minIn, MaxInputs: minIn + 1, MinOutputs: 1, MaxOutputs: 1,
				Args: args,
				Doc:  gradIn + " → dX for " + typ + ".",
			}, newFrontBackGradient(side.front, k.r))
			r := k.r
			operators.MustRegisterGradient(typ, func(g *operators.GradientContext) error {
				in := []string{g.GO(0), g.I(0)}
				if r == maxR {
					in = append(in, g.O(0))
				}
				if g.NumInputs() == 2 {
					in = append(in, g.I(1))
				}
				g.Op(gradType, in, []string{g.GI(0)})
				return nil
			})
		}
	}
}

// frontBack holds what the front/back reductions and their gradients share.
type frontBack struct {
	*operators.Base
	front bool
	r     reducer
	n     int // num_reduce_dim
}

// split returns, for a tensor of dims, the row and column counts of its
// 2-D view (reduced dimensions as rows for front, as columns for back) and
// how long each reduction is.
func (o *frontBack) split(dims []int, name string, input int) (rows, cols, reduceLen int, err error) {
	if o.n < 0 || o.n > len(dims) {
		return 0, 0, 0, o.Errorf("num_reduce_dim %d is out of range for input %d (%q) with %d dimensions (want 0 to %d)",
			o.n, input, name, len(dims), len(dims))
	}
	k := o.n
	if !o.front {
		k = len(dims) - o.n
	}
	rows, cols = 1, 1
	for _, d := range dims[:k] {
		rows *= d
	}
	for _, d := range dims[k:] {
		cols *= d
	}
	if o.front {
		return rows, cols, rows, nil
	}
	return rows, cols, cols, nil
}

// lengths reads the optional lengths input i: int32, one entry per
// reduction (batch of them), each within [0, reduceLen].
func (o *frontBack) lengths(i, batch, reduceLen int) ([]int32, error) {
	if o.NumInputs() <= i {
		return nil, nil
	}
	t, err := o.InputOf(i, blob.Int32)
	if err != nil {
		return nil, err
	}
	if o.n != 1 {
		return nil, o.Errorf("given a lengths input (%q), num_reduce_dim must be 1, not %d", o.InputName(i), o.n)
	}
	if t.Size() != batch {
		return nil, o.Errorf("lengths input %q has %d entries, want %d (one per reduction)", o.InputName(i), t.Size(), batch)
	}
	l := blob.Data[int32](t)
	for j, v := range l {
		if v < 0 || int(v) > reduceLen {
			return nil, o.Errorf("lengths input %q: entry %d is %d, want 0 to %d", o.InputName(i), j, v, reduceLen)
		}
	}
	return l, nil
}

type frontBackOp struct {
	frontBack
	outDims []int
}

func newFrontBack(front bool, r reducer) operators.Factory {
	return func(b *operators.Base) (operators.Operator, error) {
		return &frontBackOp{frontBack: frontBack{Base: b, front: front, r: r, n: int(b.ArgInt("num_reduce_dim", 1))}}, nil
	}
}

func (o *frontBackOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	dt := x.DataType()
	if err := checkType(o.Base, 0, dt, o.r != maxR); err != nil {
		return err
	}
	rows, cols, reduceLen, err := o.split(x.Dims(), o.InputName(0), 0)
	if err != nil {
		return err
	}
	dims := x.Dims()
	if o.front {
		o.outDims = append(o.outDims[:0], dims[o.n:]...)
	} else {
		o.outDims = append(o.outDims[:0], dims[:len(dims)-o.n]...)
	}
	batch := cols
	if !o.front {
		batch = rows
	}
	lengths, err := o.lengths(1, batch, reduceLen)
	if err != nil {
		return err
	}
	y := o.Output(0)
	if err := y.Init(dt, o.outDims...); err != nil {
		return err
	}
	switch dt {
	case blob.Float32:
		frontBackForward(o.r, o.front, rows, cols, blob.Data[float32](x), lengths, blob.Data[float32](y))
	case blob.Float64:
		frontBackForward(o.r, o.front, rows, cols, blob.Data[float64](x), lengths, blob.Data[float64](y))
	case blob.Int32:
		frontBackForward(o.r, o.front, rows, cols, blob.Data[int32](x), lengths, blob.Data[int32](y))
	case blob.Int64:
		frontBackForward(o.r, o.front, rows, cols, blob.Data[int64](x), lengths, blob.Data[int64](y))
	}
	return nil
}

// frontBackForward reduces the rows×cols matrix x over its rows (front) or
// its columns (back) into y. With lengths, reduction i covers only its
// first lengths[i] elements; an empty reduction gives 0 (the lowest value
// for max).
func frontBackForward[T number](r reducer, front bool, rows, cols int, x []T, lengths []int32, y []T) {
	if rows == 0 || cols == 0 {
		clear(y)
		return
	}
	lo, _ := limits[T]()
	if !front {
		for i := range rows {
			n := cols
			if lengths != nil {
				n = int(lengths[i])
			}
			var acc T
			if r == maxR {
				acc = lo
			}
			acc = reduceRun(r, acc, x[i*cols:i*cols+n])
			if r == meanR && n > 0 {
				acc /= T(n)
			}
			y[i] = acc
		}
		return
	}
	// Front: row by row, so that x is read in order.
	for j := range y {
		switch {
		case lengths == nil || lengths[j] > 0:
			y[j] = x[j]
		case r == maxR:
			y[j] = lo
		default:
			y[j] = 0
		}
	}
	for i := 1; i < rows; i++ {
		xs := x[i*cols : (i+1)*cols]
		switch {
		case lengths != nil && r == maxR:
			for j, v := range xs {
				if i < int(lengths[j]) {
					y[j] = max(y[j], v)
				}
			}
		case lengths != nil:
			for j, v := range xs {
				if i < int(lengths[j]) {
					y[j] += v
				}
			}
		case r == maxR:
			for j, v := range xs {
				y[j] = max(y[j], v)
			}
		default:
			for j, v := range xs {
				y[j] += v
			}
		}
	}
	if r == meanR {
		for j := range y {
			n := rows
			if lengths != nil {
				n = int(lengths[j])
			}
			if n > 0 {
				y[j] /= T(n)
			}
		}
	}
}

type frontBackGradientOp struct {
	frontBack
	dxDims []int
}

func newFrontBackGradient(front bool, r reducer) operators.Factory {
	return func(b *operators.Base) (operators.Operator, error) {
		return &frontBackGradientOp{frontBack: frontBack{Base: b, front: front, r: r, n: int(b.ArgInt("num_reduce_dim", 1))}}, nil
	}
}

func (o *frontBackGradientOp) Run() error {
	dy, err := o.Input(0)
	if err != nil {
		return err
	}
	dt := dy.DataType()
	if err := checkType(o.Base, 0, dt, o.r != maxR); err != nil {
		return err
	}
	shape, err := o.Input(1)
	if err != nil {
		return err
	}
	var x *blob.Tensor
	if shape.NumDims() == 1 && shape.DataType() == blob.Int64 && o.r != maxR {
		// Input 1 is the forward input's shape (older Caffe2 models). As in
		// Caffe2, a 1-D int64 X is taken for a shape too.
		o.dxDims = o.dxDims[:0]
		for _, d := range blob.Data[int64](shape) {
			if d < 0 {
				return o.Errorf("shape input %q holds a negative dimension %d", o.InputName(1), d)
			}
			o.dxDims = append(o.dxDims, int(d))
		}
	} else {
		if x, err = o.InputOf(1, dt); err != nil {
			return err
		}
		o.dxDims = append(o.dxDims[:0], x.Dims()...)
	}
	rows, cols, reduceLen, err := o.split(o.dxDims, o.InputName(1), 1)
	if err != nil {
		return err
	}
	batch := cols
	if !o.front {
		batch = rows
	}
	if dy.Size() != batch {
		return o.Errorf("gradient input %q has %d elements, want %d for %q of shape %v",
			o.InputName(0), dy.Size(), batch, o.InputName(1), o.dxDims)
	}
	var y *blob.Tensor
	lengthsInput := 2
	if o.r == maxR {
		if y, err = o.InputOf(2, dt); err != nil {
			return err
		}
		if y.Size() != batch {
			return o.Errorf("input %q has %d elements, want %d", o.InputName(2), y.Size(), batch)
		}
		lengthsInput = 3
	}
	lengths, err := o.lengths(lengthsInput, batch, reduceLen)
	if err != nil {
		return err
	}
	dx := o.Output(0)
	if err := dx.Init(dt, o.dxDims...); err != nil {
		return err
	}
	if dx.Size() == 0 {
		return nil // nothing to write, however many rows of no columns (or the reverse) there are
	}
	switch dt {
	case blob.Float32:
		frontBackBackward(o.r, o.front, rows, cols, blob.Data[float32](dy), tensorData[float32](x), tensorData[float32](y), lengths, blob.Data[float32](dx))
	case blob.Float64:
		frontBackBackward(o.r, o.front, rows, cols, blob.Data[float64](dy), tensorData[float64](x), tensorData[float64](y), lengths, blob.Data[float64](dx))
	case blob.Int32:
		frontBackBackward(o.r, o.front, rows, cols, blob.Data[int32](dy), nil, nil, lengths, blob.Data[int32](dx))
	case blob.Int64:
		frontBackBackward(o.r, o.front, rows, cols, blob.Data[int64](dy), nil, nil, lengths, blob.Data[int64](dx))
	}
	return nil
}

// tensorData returns t's elements, or nil when t is nil.
func tensorData[T number](t *blob.Tensor) []T {
	if t == nil {
		return nil
	}
	return blob.Data[T](t)
}

// frontBackBackward computes dX (rows×cols) for a front or back reduction:
// each element in its reduction's first length elements gets dY (divided by
// the length for mean; only where x equals y for max), the others 0.
func frontBackBackward[T number](r reducer, front bool, rows, cols int, dy, x, y []T, lengths []int32, dx []T) {
	if !front {
		for i := range rows {
			n := cols
			if lengths != nil {
				n = int(lengths[i])
			}
			dxs := dx[i*cols : (i+1)*cols]
			switch r {
			case sumR:
				vec.Fill(dxs[:n], dy[i])
			case meanR:
				if n > 0 {
					vec.Fill(dxs[:n], dy[i]/T(n))
				}
			case maxR:
				xs, yv := x[i*cols:i*cols+n], y[i]
				for j, v := range xs {
					if v == yv {
						dxs[j] = dy[i]
					} else {
						dxs[j] = 0
					}
				}
			}
			clear(dxs[n:])
		}
		return
	}
	for i := range rows {
		dxs := dx[i*cols : (i+1)*cols]
		switch {
		case r == maxR:
			xs := x[i*cols : (i+1)*cols]
			for j, v := range xs {
				if (lengths == nil || i < int(lengths[j])) && v == y[j] {
					dxs[j] = dy[j]
				} else {
					dxs[j] = 0
				}
			}
		case lengths != nil:
			for j := range dxs {
				switch n := int(lengths[j]); {
				case i >= n:
					dxs[j] = 0
				case r == meanR:
					dxs[j] = dy[j] / T(n)
				default:
					dxs[j] = dy[j]
				}
			}
		case r == meanR:
			for j := range dxs {
				dxs[j] = dy[j] / T(rows)
			}
		default:
			copy(dxs, dy[:cols])
		}
	}
}
