package convpool

import (
	"fmt"
	"github.com/caffe2go/caffe2go/operators/internal/convargs"
	"math"
	"unsafe"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/internal/parallel"
	"github.com/caffe2go/caffe2go/operators/internal/vec"
)

var poolArgSpecs = append(append([]operators.ArgSpec{}, convPoolArgSpecs...),
	operators.ArgSpec{Name: "count_include_pad", Default: false, Doc: "AveragePool: divide by the kernel size instead of the number of in-bounds elements"})

func init() {
	for _, base := range []string{"MaxPool", "AveragePool"} {
		for _, suffix := range []string{"", "1D", "2D", "3D"} {
			typ := base + suffix
			grad := typ + "Gradient"
			isMax := base == "MaxPool"
			what := "the maximum (padding ignored)"
			if !isMax {
				what = "the mean of the in-bounds elements (of the whole kernel with count_include_pad)"
			}
			operators.MustRegisterCPU(operators.Schema{
				Type: typ, MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1, Args: poolArgSpecs,
				Doc: typ + "(X) is, per channel and window (clipped to the input), " + what + "; global_pooling " +
					"takes the whole spatial extent. 1-D, 2-D and 3-D windows, NCHW or NHWC.",
			}, func(b *operators.Base) (operators.Operator, error) {
				return newPool(b, isMax, false)
			})
			operators.MustRegisterCPU(operators.Schema{
				Type: grad, MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1, Args: poolArgSpecs,
				Doc: grad + "(X, Y, dY) computes dX of " + typ + ".",
			}, func(b *operators.Base) (operators.Operator, error) {
				return newPoolGradient(b, isMax, false)
			})
			operators.MustRegisterGradient(typ, func(g *operators.GradientContext) error {
				g.Op(grad, []string{g.I(0), g.O(0), g.GO(0)}, []string{g.GI(0)})
				return nil
			})
		}
	}
	operators.MustRegisterCPU(operators.Schema{
		Type: "MaxPoolWithIndex", MinInputs: 1, MaxInputs: 1, MinOutputs: 2, MaxOutputs: 2, Args: poolArgSpecs,
		Doc: "MaxPoolWithIndex(X) → (Y, index) is a 2-D NCHW MaxPool that also outputs, for every element of Y, the " +
			"position h·W + w of its maximum in its input plane (the first one, -1 for an empty window) as INT32, flattened.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return newPool(b, true, true)
	})
	operators.MustRegisterCPU(operators.Schema{
		Type: "MaxPoolWithIndexGradient", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1, Args: poolArgSpecs,
		Doc: "MaxPoolWithIndexGradient(X, dY, index) adds each element of dY to the input position its index names.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return newPoolGradient(b, true, true)
	})
	operators.MustRegisterGradient("MaxPoolWithIndex", func(g *operators.GradientContext) error {
		g.Op("MaxPoolWithIndexGradient", []string{g.I(0), g.GO(0), g.O(1)}, []string{g.GI(0)})
		return nil
	})
}

// poolBase is what the pooling operators and their gradients share.
type poolBase struct {
	*operators.Base
	args      *convargs.Args
	isMax     bool
	withIndex bool // MaxPoolWithIndex: 2-D NCHW, with an index output
	countPad  bool // count_include_pad
	win       convargs.Window
	c         int
	shape, sp []int
	j32       poolJob[float32]
	j64       poolJob[float64]
}

func (o *poolBase) init(b *operators.Base, isMax, withIndex bool) error {
	a, err := convargs.Parse(b, convargs.KindPool)
	if err != nil {
		return err
	}
	if withIndex && a.Order != convargs.NCHW {
		return fmt.Errorf("MaxPoolWithIndex supports only the NCHW order")
	}
	o.Base, o.args, o.isMax, o.withIndex = b, a, isMax, withIndex
	o.countPad = b.ArgBool("count_include_pad", false)
	return nil
}

// setup computes the window of input x; it returns the batch size and Y's
// shape.
func (o *poolBase) setup(x *blob.Tensor) (int, []int, error) {
	if x.NumDims() < 3 {
		return 0, nil, o.Errorf("X (%q) has shape %v: want N, C and at least one spatial dimension", o.InputName(0), x.Dims())
	}
	if o.withIndex && x.NumDims() != 4 {
		return 0, nil, o.Errorf("X (%q) has shape %v: MaxPoolWithIndex supports only 4-D tensors", o.InputName(0), x.Dims())
	}
	n, c, sp := convargs.Spatial(x.Dims(), o.args.Order)
	win, err := o.args.Window(sp)
	if err != nil {
		return 0, nil, o.Errorf("X (%q) of shape %v: %v", o.InputName(0), x.Dims(), err)
	}
	o.win, o.c = win, c
	o.sp = o.sp[:0]
	if o.args.Global {
		for range sp {
			o.sp = append(o.sp, 1)
		}
	} else {
		o.sp = win.OutDims(o.sp)
	}
	o.shape = convargs.ImageShape(o.shape, o.args.Order, n, c, o.sp)
	return n, o.shape, nil
}

// poolJob is one run of a pooling operator or its gradient, split by units:
// channel planes (NCHW) or images (NHWC).
type poolJob[T blob.Float] struct {
	o        *poolBase
	grad     bool
	x, y, dy []T
	dx       []T
	index    []int32
}

// RunRange pools the NCHW planes or NHWC images [lo, hi).
func (j *poolJob[T]) RunRange(_, lo, hi int) {
	o := j.o
	w := &o.win
	if o.args.Order == convargs.NCHW {
		for p := lo; p < hi; p++ {
			x := j.x[p*w.InSize : (p+1)*w.InSize]
			var idx []int32
			if j.index != nil {
				idx = j.index[p*w.OutSize : (p+1)*w.OutSize]
			}
			switch {
			case j.grad && o.withIndex:
				indexGradPlane(w, j.dy[p*w.OutSize:(p+1)*w.OutSize], idx, j.dx[p*w.InSize:(p+1)*w.InSize])
			case j.grad:
				poolGradNHWC(w, 1, o.isMax, o.countPad, x, j.y[p*w.OutSize:(p+1)*w.OutSize], j.dy[p*w.OutSize:(p+1)*w.OutSize], j.dx[p*w.InSize:(p+1)*w.InSize])
			default:
				poolNHWC(w, 1, o.isMax, o.countPad, x, j.y[p*w.OutSize:(p+1)*w.OutSize], idx)
			}
		}
		return
	}
	c := o.c
	for n := lo; n < hi; n++ {
		x := j.x[n*w.InSize*c : (n+1)*w.InSize*c]
		y := j.y[n*w.OutSize*c : (n+1)*w.OutSize*c]
		if j.grad {
			poolGradNHWC(w, c, o.isMax, o.countPad, x, y, j.dy[n*w.OutSize*c:(n+1)*w.OutSize*c], j.dx[n*w.InSize*c:(n+1)*w.InSize*c])
		} else {
			poolNHWC(w, c, o.isMax, o.countPad, x, y, nil)
		}
	}
}

// run splits the job over its units.
func (j *poolJob[T]) run(n int) {
	o := j.o
	units, work := n*o.c, o.win.InSize+o.win.OutSize
	if o.args.Order == convargs.NHWC {
		units, work = n, (o.win.InSize+o.win.OutSize)*o.c
	}
	parallel.Run(j, units, parallel.Parts(o.Threads(), units, units*work))
	*j = poolJob[T]{}
}

// bounds returns the window of output position q along dimension i,
// clipped to the input: [lo, hi).
func bounds(w *convargs.Window, i, q int) (lo, hi int) {
	lo = q*w.S[i] - w.Pad[i]
	hi = min(lo+w.K[i], w.In[i])
	lo = min(max(lo, 0), w.In[i])
	return lo, max(lo, hi)
}

// lowest is the most negative finite value of T, the start of a maximum.
func lowest[T blob.Float]() T {
	var z T
	if unsafe.Sizeof(z) == 4 {
		return T(-math.MaxFloat32)
	}
	low := -math.MaxFloat64
	return T(low)
}

// poolNHWC pools one image of c interleaved channels (c = 1 for one NCHW
// plane). With idx (one channel only), it also records the position of
// each maximum: the first one, -1 for an empty window.
func poolNHWC[T blob.Float](w *convargs.Window, c int, isMax, countPad bool, x, y []T, idx []int32) {
	switch {
	case idx != nil:
		maxPlaneIndex(w, x, y, idx)
		return
	case c == 1 && isMax:
		maxPlane(w, x, y)
		return
	case c == 1:
		avgPlane(w, countPad, x, y)
		return
	}
	low := lowest[T]()
	q := 0
	for od := 0; od < w.Out[0]; od++ {
		d0, d1 := bounds(w, 0, od)
		for oh := 0; oh < w.Out[1]; oh++ {
			h0, h1 := bounds(w, 1, oh)
			for ow := 0; ow < w.Out[2]; ow++ {
				w0, w1 := bounds(w, 2, ow)
				ys := y[q*c : (q+1)*c]
				if isMax {
					for i := range ys {
						ys[i] = low
					}
				} else {
					clear(ys)
				}
				for d := d0; d < d1; d++ {
					for h := h0; h < h1; h++ {
						for v := w0; v < w1; v++ {
							p := (d*w.In[1]+h)*w.In[2] + v
							xs := x[p*c : (p+1)*c]
							if isMax {
								for i, xv := range xs {
									ys[i] = max(ys[i], xv)
								}
							} else {
								for i, xv := range xs {
									ys[i] += xv
								}
							}
						}
					}
				}
				if !isMax {
					if div := avgDivisor[T](w, countPad, d0, d1, h0, h1, w0, w1); div > 0 {
						scale := 1 / div
						for i := range ys {
							ys[i] *= scale
						}
					}
				}
				q++
			}
		}
	}
}

// avgDivisor returns what an average pool divides the sum of the window
// [d0, d1)×[h0, h1)×[w0, w1) by: the kernel size, or with countPad false
// the number of input positions in the window.
func avgDivisor[T blob.Float](w *convargs.Window, countPad bool, d0, d1, h0, h1, w0, w1 int) T {
	if countPad {
		return T(w.KSize)
	}
	return T((d1 - d0) * (h1 - h0) * (w1 - w0))
}

// avgPlane average-pools one NCHW plane, with the arithmetic of poolNHWC
// (the window summed in order from zero, then scaled by 1/divisor) but
// walking rows of the plane instead of channel slices of length one, which
// is much faster (the convnet benchmark's global AveragePool and its
// gradient).
func avgPlane[T blob.Float](w *convargs.Window, countPad bool, x, y []T) {
	ih, iw := w.In[1], w.In[2]
	q := 0
	for od := 0; od < w.Out[0]; od++ {
		d0, d1 := bounds(w, 0, od)
		for oh := 0; oh < w.Out[1]; oh++ {
			h0, h1 := bounds(w, 1, oh)
			for ow := 0; ow < w.Out[2]; ow++ {
				w0, w1 := bounds(w, 2, ow)
				var s T
				for d := d0; d < d1; d++ {
					for h := h0; h < h1; h++ {
						for _, xv := range x[(d*ih+h)*iw+w0 : (d*ih+h)*iw+w1] {
							s += xv
						}
					}
				}
				if div := avgDivisor[T](w, countPad, d0, d1, h0, h1, w0, w1); div > 0 {
					s *= 1 / div
				}
				y[q] = s
				q++
			}
		}
	}
}

// avgGradPlane is poolGradNHWC for the average of one NCHW plane (see
// avgPlane).
func avgGradPlane[T blob.Float](w *convargs.Window, countPad bool, dy, dx []T) {
	clear(dx)
	ih, iw := w.In[1], w.In[2]
	q := 0
	for od := 0; od < w.Out[0]; od++ {
		d0, d1 := bounds(w, 0, od)
		for oh := 0; oh < w.Out[1]; oh++ {
			h0, h1 := bounds(w, 1, oh)
			for ow := 0; ow < w.Out[2]; ow++ {
				w0, w1 := bounds(w, 2, ow)
				scale := T(0)
				if div := avgDivisor[T](w, countPad, d0, d1, h0, h1, w0, w1); div > 0 {
					scale = 1 / div
				}
				g := dy[q] * scale
				for d := d0; d < d1; d++ {
					for h := h0; h < h1; h++ {
						row := dx[(d*ih+h)*iw+w0 : (d*ih+h)*iw+w1]
						for i := range row {
							row[i] += g
						}
					}
				}
				q++
			}
		}
	}
}

// maxPlane max-pools one NCHW plane.
func maxPlane[T blob.Float](w *convargs.Window, x, y []T) {
	if pool2x2(w) {
		maxPlane2x2(w, x, y)
		return
	}
	low := lowest[T]()
	ih, iw := w.In[1], w.In[2]
	q := 0
	for od := 0; od < w.Out[0]; od++ {
		d0, d1 := bounds(w, 0, od)
		for oh := 0; oh < w.Out[1]; oh++ {
			h0, h1 := bounds(w, 1, oh)
			for ow := 0; ow < w.Out[2]; ow++ {
				w0, w1 := bounds(w, 2, ow)
				m := low
				for d := d0; d < d1; d++ {
					for h := h0; h < h1; h++ {
						for _, xv := range x[(d*ih+h)*iw+w0 : (d*ih+h)*iw+w1] {
							m = max(m, xv)
						}
					}
				}
				y[q] = m
				q++
			}
		}
	}
}

// maxGradPlane is poolGradNHWC for the max of one NCHW plane: walking rows
// of the plane directly instead of channel slices of length one makes the
// convnet benchmark's MaxPoolGradient much faster.
func maxGradPlane[T blob.Float](w *convargs.Window, x, y, dy, dx []T) {
	if pool2x2(w) {
		maxGradPlane2x2(w, x, y, dy, dx)
		return
	}
	clear(dx)
	ih, iw := w.In[1], w.In[2]
	q := 0
	for od := 0; od < w.Out[0]; od++ {
		d0, d1 := bounds(w, 0, od)
		for oh := 0; oh < w.Out[1]; oh++ {
			h0, h1 := bounds(w, 1, oh)
			for ow := 0; ow < w.Out[2]; ow++ {
				w0, w1 := bounds(w, 2, ow)
				m, g := y[q], dy[q]
				for d := d0; d < d1; d++ {
					for h := h0; h < h1; h++ {
						row := (d*ih+h)*iw + w0
						for i, xv := range x[row : row+w1-w0] {
							if xv == m {
								dx[row+i] += g
							}
						}
					}
				}
				q++
			}
		}
	}
}

// pool2x2 reports whether w is a 2-D 2×2 window of stride 2 with no
// padding whose windows all lie in the input: they then tile it, each
// output reading two adjacent values of two adjacent rows.
func pool2x2(w *convargs.Window) bool {
	return w.In[0] == 1 && w.Out[0] == 1 && w.K[0] == 1 && w.Pad[0] == 0 &&
		w.K[1] == 2 && w.K[2] == 2 && w.S[1] == 2 && w.S[2] == 2 && w.Pad[1] == 0 && w.Pad[2] == 0 &&
		2*w.Out[1] <= w.In[1] && 2*w.Out[2] <= w.In[2]
}

// maxPlane2x2 is maxPlane for a pool2x2 window: two input rows at a time,
// with no window bounds to compute.
func maxPlane2x2[T blob.Float](w *convargs.Window, x, y []T) {
	iw, ow := w.In[2], w.Out[2]
	for oh := range w.Out[1] {
		r0 := x[2*oh*iw : 2*oh*iw+2*ow]
		r1 := x[(2*oh+1)*iw : (2*oh+1)*iw+2*ow]
		ys := y[oh*ow : (oh+1)*ow]
		if y32, ok := any(ys).([]float32); ok {
			vec.MaxPairs32(any(r0).([]float32), any(r1).([]float32), y32)
			continue
		}
		for i := range ys {
			ys[i] = max(max(r0[2*i], r0[2*i+1]), max(r1[2*i], r1[2*i+1]))
		}
	}
}

// maxGradPlane2x2 is maxGradPlane for a pool2x2 window, two input rows at
// a time. The windows do not overlap, so each input's gradient is set, not
// added: dy where it equals its window's maximum, else zero (only the rows
// and columns no window covers need clearing). float32 rows go to
// vec.MaxPairsGrad32: branchless (each input's gradient is dy's bits masked
// by whether it equals the maximum, where the branches, random for random
// data, are mispredicted often), and eight outputs per step with AVX2.
func maxGradPlane2x2[T blob.Float](w *convargs.Window, x, y, dy, dx []T) {
	ih, iw, ow := w.In[1], w.In[2], w.Out[2]
	for oh := range w.Out[1] {
		x0 := x[2*oh*iw : 2*oh*iw+2*ow]
		x1 := x[(2*oh+1)*iw : (2*oh+1)*iw+2*ow]
		d0 := dx[2*oh*iw : 2*oh*iw+2*ow]
		d1 := dx[(2*oh+1)*iw : (2*oh+1)*iw+2*ow]
		ys, gs := y[oh*ow:(oh+1)*ow], dy[oh*ow:(oh+1)*ow]
		if y32, ok := any(ys).([]float32); ok {
			vec.MaxPairsGrad32(any(x0).([]float32), any(x1).([]float32), y32, any(gs).([]float32), any(d0).([]float32), any(d1).([]float32))
			continue
		}
		for i, m := range ys {
			g := gs[i]
			d0[2*i], d0[2*i+1], d1[2*i], d1[2*i+1] = 0, 0, 0, 0
			if x0[2*i] == m {
				d0[2*i] = g
			}
			if x0[2*i+1] == m {
				d0[2*i+1] = g
			}
			if x1[2*i] == m {
				d1[2*i] = g
			}
			if x1[2*i+1] == m {
				d1[2*i+1] = g
			}
		}
	}
	if iw > 2*ow {
		for h := range 2 * w.Out[1] {
			clear(dx[h*iw+2*ow : (h+1)*iw])
		}
	}
	clear(dx[2*w.Out[1]*iw : ih*iw])
}

// maxPlaneIndex max-pools one NCHW plane and records where each maximum
// is.
func maxPlaneIndex[T blob.Float](w *convargs.Window, x, y []T, idx []int32) {
	low := lowest[T]()
	ih, iw := w.In[1], w.In[2]
	q := 0
	for od := 0; od < w.Out[0]; od++ {
		d0, d1 := bounds(w, 0, od)
		for oh := 0; oh < w.Out[1]; oh++ {
			h0, h1 := bounds(w, 1, oh)
			for ow := 0; ow < w.Out[2]; ow++ {
				w0, w1 := bounds(w, 2, ow)
				m, best := low, -1
				for d := d0; d < d1; d++ {
					for h := h0; h < h1; h++ {
						for v := w0; v < w1; v++ {
							if p := (d*ih+h)*iw + v; x[p] > m {
								m, best = x[p], p
							}
						}
					}
				}
				y[q], idx[q] = m, int32(best)
				q++
			}
		}
	}
}

// poolGradNHWC adds the gradient of one image of c interleaved channels to
// dx (zeroed here): a maximum's gradient goes to every input equal to it, as
// in Caffe2; an average's is spread over its window.
func poolGradNHWC[T blob.Float](w *convargs.Window, c int, isMax, countPad bool, x, y, dy, dx []T) {
	if c == 1 && isMax {
		maxGradPlane(w, x, y, dy, dx)
		return
	}
	if c == 1 {
		avgGradPlane(w, countPad, dy, dx)
		return
	}
	clear(dx)
	q := 0
	for od := 0; od < w.Out[0]; od++ {
		d0, d1 := bounds(w, 0, od)
		for oh := 0; oh < w.Out[1]; oh++ {
			h0, h1 := bounds(w, 1, oh)
			for ow := 0; ow < w.Out[2]; ow++ {
				w0, w1 := bounds(w, 2, ow)
				gs := dy[q*c : (q+1)*c]
				ys := y[q*c : (q+1)*c]
				scale := T(0)
				if !isMax {
					if div := avgDivisor[T](w, countPad, d0, d1, h0, h1, w0, w1); div > 0 {
						scale = 1 / div
					}
				}
				for d := d0; d < d1; d++ {
					for h := h0; h < h1; h++ {
						for v := w0; v < w1; v++ {
							p := (d*w.In[1]+h)*w.In[2] + v
							dst := dx[p*c : (p+1)*c]
							if isMax {
								for i, xv := range x[p*c : (p+1)*c] {
									if xv == ys[i] {
										dst[i] += gs[i]
									}
								}
								continue
							}
							for i, g := range gs {
								dst[i] += g * scale
							}
						}
					}
				}
				q++
			}
		}
	}
}

// indexGradPlane adds each element of dy to the input position idx names
// (dx zeroed here; -1 names none).
func indexGradPlane[T blob.Float](w *convargs.Window, dy []T, idx []int32, dx []T) {
	clear(dx)
	for q, g := range dy {
		if p := idx[q]; p >= 0 && int(p) < w.InSize {
			dx[p] += g
		}
	}
}

// poolOp is MaxPool, AveragePool (and their 1-D, 2-D, 3-D names) and
// MaxPoolWithIndex.
type poolOp struct{ poolBase }

func newPool(b *operators.Base, isMax, withIndex bool) (operators.Operator, error) {
	o := &poolOp{}
	if err := o.init(b, isMax, withIndex); err != nil {
		return nil, err
	}
	return o, nil
}

func (o *poolOp) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	n, shape, err := o.setup(x)
	if err != nil {
		return err
	}
	y := o.Output(0)
	if err := y.Init(x.DataType(), shape...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	var index []int32
	if o.withIndex {
		ind := o.Output(1)
		if err := ind.Init(blob.Int32, y.Size()); err != nil {
			return o.Errorf("output %q: %v", o.OutputName(1), err)
		}
		index = blob.Data[int32](ind)
	}
	if x.DataType() == blob.Float32 {
		o.j32 = poolJob[float32]{o: &o.poolBase, x: blob.Data[float32](x), y: blob.Data[float32](y), index: index}
		o.j32.run(n)
	} else {
		o.j64 = poolJob[float64]{o: &o.poolBase, x: blob.Data[float64](x), y: blob.Data[float64](y), index: index}
		o.j64.run(n)
	}
	return nil
}

// poolGradOp is MaxPoolGradient, AveragePoolGradient (and their 1-D, 2-D,
// 3-D names) and MaxPoolWithIndexGradient.
type poolGradOp struct {
	poolBase
	in [3]*blob.Tensor
}

func newPoolGradient(b *operators.Base, isMax, withIndex bool) (operators.Operator, error) {
	o := &poolGradOp{}
	if err := o.init(b, isMax, withIndex); err != nil {
		return nil, err
	}
	return o, nil
}

func (o *poolGradOp) Run() error {
	var x, y, dy *blob.Tensor
	var index []int32
	if o.withIndex {
		// (X, dY, index)
		in, err := floatInputs(o.Base, o.in[:0], 2)
		if err != nil {
			return err
		}
		x, dy = in[0], in[1]
		ind, err := o.InputOf(2, blob.Int32)
		if err != nil {
			return err
		}
		if ind.Size() != dy.Size() {
			return o.Errorf("index (%q) has shape %v, but dY (%q) has shape %v", o.InputName(2), ind.Dims(), o.InputName(1), dy.Dims())
		}
		index = blob.Data[int32](ind)
	} else {
		// (X, Y, dY)
		in, err := floatInputs(o.Base, o.in[:0], 3)
		if err != nil {
			return err
		}
		x, y, dy = in[0], in[1], in[2]
	}
	n, shape, err := o.setup(x)
	if err != nil {
		return err
	}
	if y != nil && !sameDims(y.Dims(), shape) {
		return o.Errorf("Y (%q) has shape %v, want %v for X (%q) of shape %v", o.InputName(1), y.Dims(), shape, o.InputName(0), x.Dims())
	}
	if !sameDims(dy.Dims(), shape) {
		i := 2
		if o.withIndex {
			i = 1
		}
		return o.Errorf("dY (%q) has shape %v, want %v for X (%q) of shape %v", o.InputName(i), dy.Dims(), shape, o.InputName(0), x.Dims())
	}
	dx := o.Output(0)
	if err := dx.Init(x.DataType(), x.Dims()...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	if x.DataType() == blob.Float32 {
		o.j32 = poolJob[float32]{o: &o.poolBase, grad: true, x: blob.Data[float32](x), y: data[float32](y), dy: blob.Data[float32](dy), dx: blob.Data[float32](dx), index: index}
		o.j32.run(n)
	} else {
		o.j64 = poolJob[float64]{o: &o.poolBase, grad: true, x: blob.Data[float64](x), y: data[float64](y), dy: blob.Data[float64](dy), dx: blob.Data[float64](dx), index: index}
		o.j64.run(n)
	}
	return nil
}
