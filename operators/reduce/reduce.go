package reduce

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/internal/vec"
)

// number is the set of element types the reductions accept.
type number interface {
	int32 | int64 | float32 | float64
}

// reducer selects what a reduction computes.
type reducer int

const (
	sumR reducer = iota
	meanR
	maxR
	minR
	l1R
	l2R
)

// register records a schema and its CPU implementation.
func isFloat(dt blob.DataType) bool { return dt == blob.Float32 || dt == blob.Float64 }

func isNumber(dt blob.DataType) bool {
	return isFloat(dt) || dt == blob.Int32 || dt == blob.Int64
}

// checkType accepts the float types, and int32/int64 when ints is set.
func checkType(o *operators.Base, i int, dt blob.DataType, ints bool) error {
	if isFloat(dt) || (ints && isNumber(dt)) {
		return nil
	}
	want := "FLOAT or DOUBLE"
	if ints {
		want = "INT32, INT64, FLOAT or DOUBLE"
	}
	return o.Errorf("input %d (%q) has type %v, want %s", i, o.InputName(i), dt, want)
}

func init() {
	for _, r := range []struct {
		typ  string
		r    reducer
		ints bool
		doc  string
	}{
		{"ReduceSum", sumR, true, "sum"},
		{"ReduceMean", meanR, false, "mean"},
		{"ReduceMax", maxR, true, "maximum"},
		{"ReduceMin", minR, true, "minimum"},
		{"ReduceL1", l1R, false, "sum of absolute values"},
		{"ReduceL2", l2R, false, "Euclidean norm"},
	} {
		args := []operators.ArgSpec{
			{Name: "axes", Doc: "axes to reduce (negative counts from the end); all axes when absent"},
			{Name: "keepdims", Default: 1, Doc: "keep the reduced axes as size 1"},
		}
		operators.MustRegisterCPU(operators.Schema{
			Type:      r.typ,
			MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
			Args: args,
			Doc:  "Y is the " + r.doc + " of X over axes.",
		}, newReduce(r.r, r.ints))
		operators.MustRegisterCPU(operators.Schema{
			Type:      r.typ + "Gradient",
			MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
			Args: args,
			Doc:  "(dY, X, Y) → dX for " + r.typ + ".",
		}, newReduceGradient(r.r, r.ints))
		gradType := r.typ + "Gradient"
		operators.MustRegisterGradient(r.typ, func(g *operators.GradientContext) error {
			g.Op(gradType, []string{g.GO(0), g.I(0), g.O(0)}, []string{g.GI(0)})
			return nil
		})
	}
}

// axesReducer holds what ReduceX and ReduceXGradient share: the axes
// argument and per-run scratch.
type axesReducer struct {
	*operators.Base
	r       reducer
	ints    bool
	axes    []int64
	reduced []bool
	walk    walker
}

// markAxes sets o.reduced for an input of nd dimensions, checking the axes.
func (o *axesReducer) markAxes(nd int, input int) error {
	o.reduced = o.reduced[:0]
	for range nd {
		o.reduced = append(o.reduced, len(o.axes) == 0)
	}
	for _, a := range o.axes {
		ax := int(a)
		if ax < 0 {
			ax += nd
		}
		if ax < 0 || ax >= nd {
			return o.Errorf("axis %d is out of range for input %d (%q) with %d dimensions", a, input, o.InputName(input), nd)
		}
		if o.reduced[ax] {
			return o.Errorf("axis %d is listed twice in \"axes\"", a)
		}
		o.reduced[ax] = true
	}
	return nil
}

type reduceOp struct {
	axesReducer
	keepDims bool
	outDims  []int
}

func newReduce(r reducer, ints bool) operators.Factory {
	return func(b *operators.Base) (operators.Operator, error) {
		return &reduceOp{
			axesReducer: axesReducer{Base: b, r: r, ints: ints, axes: b.ArgInts("axes", nil)},
			keepDims:    b.ArgBool("keepdims", true),
		}, nil
	}
}

func (o *reduceOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	dt := x.DataType()
	if err := checkType(o.Base, 0, dt, o.ints); err != nil {
		return err
	}
	if err := o.markAxes(x.NumDims(), 0); err != nil {
		return err
	}
	o.outDims = o.outDims[:0]
	for i, d := range x.Dims() {
		switch {
		case !o.reduced[i]:
			o.outDims = append(o.outDims, d)
		case o.keepDims:
			o.outDims = append(o.outDims, 1)
		}
	}
	y := o.Output(0)
	if err := y.Init(dt, o.outDims...); err != nil {
		return err
	}
	o.walk.init(x.Dims(), o.reduced)
	switch dt {
	case blob.Float32:
		reduceForward(o.r, &o.walk, blob.Data[float32](x), blob.Data[float32](y))
	case blob.Float64:
		reduceForward(o.r, &o.walk, blob.Data[float64](x), blob.Data[float64](y))
	case blob.Int32:
		reduceForward(o.r, &o.walk, blob.Data[int32](x), blob.Data[int32](y))
	case blob.Int64:
		reduceForward(o.r, &o.walk, blob.Data[int64](x), blob.Data[int64](y))
	}
	return nil
}

type reduceGradientOp struct{ axesReducer }

func newReduceGradient(r reducer, ints bool) operators.Factory {
	return func(b *operators.Base) (operators.Operator, error) {
		return &reduceGradientOp{axesReducer{Base: b, r: r, ints: ints, axes: b.ArgInts("axes", nil)}}, nil
	}
}

func (o *reduceGradientOp) Run() error {
	dy, err := o.Input(0)
	if err != nil {
		return err
	}
	dt := dy.DataType()
	if err := checkType(o.Base, 0, dt, o.ints); err != nil {
		return err
	}
	x, err := o.InputOf(1, dt)
	if err != nil {
		return err
	}
	y, err := o.InputOf(2, dt)
	if err != nil {
		return err
	}
	if err := o.markAxes(x.NumDims(), 1); err != nil {
		return err
	}
	o.walk.init(x.Dims(), o.reduced)
	if dy.Size() != o.walk.ysize {
		return o.Errorf("gradient input %q has shape %v (%d elements); reducing %q (shape %v) gives %d", o.InputName(0), dy.Dims(), dy.Size(), o.InputName(1), x.Dims(), o.walk.ysize)
	}
	if usesY(o.r) && y.Size() != o.walk.ysize {
		return o.Errorf("input %q has shape %v (%d elements); reducing %q (shape %v) gives %d", o.InputName(2), y.Dims(), y.Size(), o.InputName(1), x.Dims(), o.walk.ysize)
	}
	dx := o.Output(0)
	if err := dx.Init(dt, x.Dims()...); err != nil {
		return err
	}
	switch dt {
	case blob.Float32:
		reduceBackward(o.r, &o.walk, blob.Data[float32](dy), blob.Data[float32](x), blob.Data[float32](y), blob.Data[float32](dx))
	case blob.Float64:
		reduceBackward(o.r, &o.walk, blob.Data[float64](dy), blob.Data[float64](x), blob.Data[float64](y), blob.Data[float64](dx))
	case blob.Int32:
		reduceBackward(o.r, &o.walk, blob.Data[int32](dy), blob.Data[int32](x), blob.Data[int32](y), blob.Data[int32](dx))
	case blob.Int64:
		reduceBackward(o.r, &o.walk, blob.Data[int64](dy), blob.Data[int64](x), blob.Data[int64](y), blob.Data[int64](dx))
	}
	return nil
}

// usesY reports whether the gradient of r reads the forward output.
func usesY(r reducer) bool { return r == maxR || r == minR || r == l2R }

// walker visits X in contiguous runs along its innermost dimension (after
// dropping size-1 dimensions and merging neighbours that are both reduced or
// both kept), tracking the offset of the matching element of Y, whose shape
// is X's with the reduced dimensions set to 1.
type walker struct {
	dims    []int  // merged dimensions
	red     []bool // whether each merged dimension is reduced
	ystep   []int  // Y stride of each merged dimension (0 when reduced)
	idx     []int  // odometer over the outer merged dimensions
	inner   int    // run length: the innermost merged dimension
	istep   int    // Y step along a run: 1 when kept, 0 when reduced
	runs    int    // number of runs
	xsize   int    // elements of X
	ysize   int    // elements of Y
	run     int    // current run
	xoff    int    // offset of the current run in X
	yoff    int    // offset in Y of the current run's first element
	nOuter  int    // number of outer merged dimensions
	reduced bool   // whether the innermost merged dimension is reduced
}

// init prepares the walker for an X of shape dims reduced where reduced is
// set. It reuses the walker's storage.
func (w *walker) init(dims []int, reduced []bool) {
	w.dims, w.red, w.ystep = w.dims[:0], w.red[:0], w.ystep[:0]
	w.xsize, w.ysize = 1, 1
	for i, d := range dims {
		w.xsize *= d
		if !reduced[i] {
			w.ysize *= d
		}
		if d == 1 {
			continue
		}
		if n := len(w.dims); n > 0 && w.red[n-1] == reduced[i] {
			w.dims[n-1] *= d
			continue
		}
		w.dims = append(w.dims, d)
		w.red = append(w.red, reduced[i])
	}
	for range w.dims {
		w.ystep = append(w.ystep, 0)
	}
	step := 1
	for k := len(w.dims) - 1; k >= 0; k-- {
		if !w.red[k] {
			w.ystep[k] = step
			step *= w.dims[k]
		}
	}
	w.inner, w.istep, w.reduced = 1, 1, false
	if n := len(w.dims); n > 0 {
		w.inner, w.istep, w.reduced = w.dims[n-1], w.ystep[n-1], w.red[n-1]
	}
	w.nOuter = max(len(w.dims)-1, 0)
	w.runs = 0
	if w.inner > 0 {
		w.runs = w.xsize / w.inner
	}
	w.idx = w.idx[:0]
	for range w.nOuter {
		w.idx = append(w.idx, 0)
	}
}

// start positions the walker on the first run.
func (w *walker) start() {
	clear(w.idx)
	w.run, w.xoff, w.yoff = 0, 0, 0
}

// more reports whether the walker is on a run.
func (w *walker) more() bool { return w.run < w.runs }

// advance moves to the next run.
func (w *walker) advance() {
	w.run++
	w.xoff += w.inner
	for k := w.nOuter - 1; k >= 0; k-- {
		w.idx[k]++
		w.yoff += w.ystep[k]
		if w.idx[k] < w.dims[k] {
			return
		}
		w.yoff -= w.ystep[k] * w.dims[k]
		w.idx[k] = 0
	}
}

// limits returns the lowest and highest finite values of T.
func limits[T number]() (lo, hi T) {
	switch p := any(&hi).(type) {
	case *float32:
		*p = math.MaxFloat32
		lo = -hi
	case *float64:
		*p = math.MaxFloat64
		lo = -hi
	case *int32:
		*p = math.MaxInt32
		lo = -hi - 1
	case *int64:
		*p = math.MaxInt64
		lo = -hi - 1
	}
	return lo, hi
}

// sqrt is the square root in T's precision.
func sqrt[T number](v T) T { return T(math.Sqrt(float64(v))) }

// reduceForward computes Y = r(X) over the walker's reduced dimensions.
func reduceForward[T number](r reducer, w *walker, x, y []T) {
	lo, hi := limits[T]()
	switch r {
	case maxR:
		vec.Fill(y, lo)
	case minR:
		vec.Fill(y, hi)
	default:
		clear(y)
	}
	for w.start(); w.more(); w.advance() {
		xs := x[w.xoff : w.xoff+w.inner]
		if w.reduced {
			y[w.yoff] = reduceRun(r, y[w.yoff], xs)
			continue
		}
		ys := y[w.yoff : w.yoff+w.inner]
		switch r {
		case sumR, meanR:
			for j, v := range xs {
				ys[j] += v
			}
		case maxR:
			for j, v := range xs {
				ys[j] = max(ys[j], v)
			}
		case minR:
			for j, v := range xs {
				ys[j] = min(ys[j], v)
			}
		case l1R:
			for j, v := range xs {
				if v < 0 {
					v = -v
				}
				ys[j] += v
			}
		case l2R:
			for j, v := range xs {
				ys[j] += v * v
			}
		}
	}
	switch r {
	case meanR:
		if w.xsize > 0 {
			scale := T(w.ysize) / T(w.xsize)
			for i := range y {
				y[i] *= scale
			}
		}
	case l2R:
		for i, v := range y {
			y[i] = sqrt(v)
		}
	}
}

// reduceRun folds the run xs into acc.
func reduceRun[T number](r reducer, acc T, xs []T) T {
	switch r {
	case sumR, meanR:
		return acc + sumRun(xs, false)
	case l2R:
		return acc + sumRun(xs, true)
	case maxR:
		for _, v := range xs {
			acc = max(acc, v)
		}
	case minR:
		for _, v := range xs {
			acc = min(acc, v)
		}
	case l1R:
		for _, v := range xs {
			if v < 0 {
				v = -v
			}
			acc += v
		}
	}
	return acc
}

// sumRun returns Σx (Σx² with squares), accumulated in four independent
// partial sums so that the additions do not wait on each other.
func sumRun[T number](xs []T, squares bool) T {
	var s0, s1, s2, s3 T
	i := 0
	if squares {
		for ; i+4 <= len(xs); i += 4 {
			a, b, c, d := xs[i], xs[i+1], xs[i+2], xs[i+3]
			s0, s1, s2, s3 = s0+a*a, s1+b*b, s2+c*c, s3+d*d
		}
		for ; i < len(xs); i++ {
			s0 += xs[i] * xs[i]
		}
	} else {
		for ; i+4 <= len(xs); i += 4 {
			s0, s1, s2, s3 = s0+xs[i], s1+xs[i+1], s2+xs[i+2], s3+xs[i+3]
		}
		for ; i < len(xs); i++ {
			s0 += xs[i]
		}
	}
	return (s0 + s1) + (s2 + s3)
}

// reduceBackward computes dX for Y = r(X) from dY, X and Y, as Caffe2 does:
// sum broadcasts dY, mean scales it by |Y|/|X|, max and min route it to
// every element equal to Y, L1 multiplies it by sign(x) (0 within 1e-12 of
// 0), L2 by x/y (or passes it through where y < 1e-12).
func reduceBackward[T number](r reducer, w *walker, dy, x, y, dx []T) {
	var scale T = 1
	if r == meanR && w.xsize > 0 {
		scale = T(w.ysize) / T(w.xsize)
	}
	const eps = 1e-12
	step := w.istep
	for w.start(); w.more(); w.advance() {
		xs := x[w.xoff : w.xoff+w.inner]
		dxs := dx[w.xoff : w.xoff+w.inner]
		yi := w.yoff
		switch r {
		case sumR, meanR:
			for j := range dxs {
				dxs[j] = dy[yi] * scale
				yi += step
			}
		case maxR, minR:
			for j, v := range xs {
				if v == y[yi] {
					dxs[j] = dy[yi]
				} else {
					dxs[j] = 0
				}
				yi += step
			}
		case l1R:
			for j, v := range xs {
				switch {
				case float64(v) < -eps:
					dxs[j] = -dy[yi]
				case float64(v) > eps:
					dxs[j] = dy[yi]
				default:
					dxs[j] = 0
				}
				yi += step
			}
		case l2R:
			for j, v := range xs {
				if n := y[yi]; float64(n) < eps {
					dxs[j] = dy[yi]
				} else {
					dxs[j] = dy[yi] * v / n
				}
				yi += step
			}
		}
	}
}
